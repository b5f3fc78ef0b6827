//! Circles among walls: segdist-collide's move-and-slide, cast and resolve
//! against parry 0.31 (`cast_shapes` of a ball against a `Polyline`, and a
//! push-out loop on its `contact`) and rapier 0.36's
//! `KinematicCharacterController`, on the same generated maze.
//!
//! Every implementation's result is judged by the same independent check
//! (segdist-index's exact nearest wall for penetration, Shewchuk's
//! orientation for crossings): `max_penetration` is the most any agent's
//! circle reached into a wall after a step (radius minus the exact
//! distance), `crossings` the steps whose straight path crossed a wall.

use std::time::Instant;

use parry2d_f64::math::{Pose, Vector as PVec};
use parry2d_f64::query::{self as pq, ShapeCastOptions};
use parry2d_f64::shape::{Ball, Polyline};
use rapier2d_f64::control::{CharacterLength, KinematicCharacterController};
use rapier2d_f64::prelude as rp;
use segdist_collide::__testing::{maze, Crowd};
use segdist_collide::{MoveOptions, WallSet};
use segdist_index::{Index, QueryOptions};

type Seg = [[f64; 2]; 2];

fn orient(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    robust::orient2d(
        robust::Coord { x: a[0], y: a[1] },
        robust::Coord { x: b[0], y: b[1] },
        robust::Coord { x: c[0], y: c[1] },
    )
}

/// The independent judge of a step: (penetration, crossed).
struct Judge<'a> {
    index: Index<2>,
    segs: &'a [Seg],
}

impl Judge<'_> {
    fn step(&self, from: &[[f64; 2]], to: &[[f64; 2]], radii: &[f64]) -> (f64, usize) {
        let mut worst = 0.0f64;
        for (hit, r) in self.index.nearest_many(to, &QueryOptions::default()).iter().zip(radii) {
            worst = worst.max(r - hit.map_or(f64::INFINITY, |h| h.distance));
        }
        let mut crossed = 0;
        for (p, q) in from.iter().zip(to) {
            let len = (q[0] - p[0]).hypot(q[1] - p[1]);
            crossed += self
                .index
                .within(*p, len)
                .iter()
                .filter(|h| {
                    let [a, b] = self.segs[h.feature];
                    orient(a, b, *p) * orient(a, b, *q) < 0.0 && orient(*p, *q, a) * orient(*p, *q, b) < 0.0
                })
                .count();
        }
        (worst, crossed)
    }
}

fn polyline(segs: &[Seg]) -> Polyline {
    let v: Vec<PVec> = segs.iter().flat_map(|s| [PVec::new(s[0][0], s[0][1]), PVec::new(s[1][0], s[1][1])]).collect();
    let idx: Vec<[u32; 2]> = (0..segs.len() as u32).map(|i| [2 * i, 2 * i + 1]).collect();
    Polyline::new(v, Some(idx))
}

fn line(workload: &str, imp: &str, walls: usize, agents: usize, threads: usize, ns: f64, pen: f64, crossings: usize) {
    println!(
        "{{\"workload\":\"{workload}\",\"impl\":\"{imp}\",\"walls\":{walls},\"agents\":{agents},\"threads\":{threads},\"ns_per_agent_step\":{ns:.1},\"max_penetration\":{pen:e},\"crossings\":{crossings}}}"
    );
}

/// Runs `frames` frames of a crowd with `step` (which moves every agent
/// and applies the moves), returning the judge's verdict over them.
fn judged(crowd: &mut Crowd, frames: usize, judge: &Judge, mut step: impl FnMut(&mut Crowd)) -> (f64, usize) {
    let radii: Vec<f64> = crowd.agents.iter().map(|a| a.radius).collect();
    let (mut pen, mut crossed) = (0.0f64, 0);
    for _ in 0..frames {
        let before: Vec<[f64; 2]> = crowd.agents.iter().map(|a| a.position).collect();
        step(crowd);
        let after: Vec<[f64; 2]> = crowd.agents.iter().map(|a| a.position).collect();
        let (p, c) = judge.step(&before, &after, &radii);
        pen = pen.max(p);
        crossed += c;
    }
    (pen, crossed)
}

/// A rapier world holding the maze as one polyline collider, and the
/// character controller set up for a top-down game (no gravity, no slopes,
/// no snapping to a floor; sliding on).
struct Rapier {
    bodies: rp::RigidBodySet,
    colliders: rp::ColliderSet,
    broad: rp::BroadPhaseBvh,
    kcc: KinematicCharacterController,
}

impl Rapier {
    fn new(segs: &[Seg]) -> Rapier {
        let bodies = rp::RigidBodySet::new();
        let mut colliders = rp::ColliderSet::new();
        let h = colliders.insert(rp::ColliderBuilder::new(rp::SharedShape::new(polyline(segs))).build());
        let mut broad = rp::BroadPhaseBvh::new();
        broad.set_aabb(&rp::IntegrationParameters::default(), h, colliders[h].compute_aabb());
        let kcc = KinematicCharacterController {
            offset: CharacterLength::Relative(1.0 / 32.0),
            slide: true,
            autostep: None,
            max_slope_climb_angle: std::f64::consts::FRAC_PI_2,
            min_slope_slide_angle: std::f64::consts::FRAC_PI_2,
            snap_to_ground: None,
            ..KinematicCharacterController::default()
        };
        Rapier { bodies, colliders, broad, kcc }
    }

    /// Every agent's move: its new position and the normal of the last
    /// wall it met (towards the agent).
    fn step(&self, agents: &[segdist_collide::Agent<[f64; 2]>]) -> Vec<([f64; 2], Option<[f64; 2]>)> {
        let qp = self.broad.as_query_pipeline(
            &parry2d_f64::query::DefaultQueryDispatcher,
            &self.bodies,
            &self.colliders,
            rp::QueryFilter::default(),
        );
        agents
            .iter()
            .map(|a| {
                let ball = Ball::new(a.radius);
                let mut normal = None;
                let m = self.kcc.move_shape(
                    1.0 / 60.0,
                    &qp,
                    &ball,
                    &Pose::translation(a.position[0], a.position[1]),
                    PVec::new(a.motion[0], a.motion[1]),
                    |c| normal = Some([-c.hit.normal1.x, -c.hit.normal1.y]),
                );
                ([a.position[0] + m.translation.x, a.position[1] + m.translation.y], normal)
            })
            .collect()
    }
}

pub fn run(quick: bool) {
    let (size, agents, frames) = if quick { (120, 2_000, 10) } else { (377, 10_000, 30) };
    let segs = maze(size, size, 0.3, 7, 0.0);
    let n = segs.len();
    let mut b = WallSet::builder();
    for [p, q] in &segs {
        b.push_segment(*p, *q);
    }
    let walls = b.build().expect("finite");
    let judge = Judge { index: Index::from_segments(&segs).expect("finite"), segs: &segs };
    let opts = MoveOptions::default();
    let start = Crowd::new(&walls, size, size, agents, 0.05, 11, 0.0);
    eprintln!("collide: {n} walls ({size}×{size} maze), {agents} agents, {frames} frames");

    // move_and_slide: segdist on one and two threads. Only the moves are
    // timed (steering and applying them are the game's), each
    // implementation from the same start, turns interleaved.
    let pools: Vec<rayon::ThreadPool> =
        [1, 2].iter().map(|&t| rayon::ThreadPoolBuilder::new().num_threads(t).build().expect("pool")).collect();
    let run_with = |pool: &rayon::ThreadPool| {
        let mut crowd = start.clone();
        let mut moves = Vec::new();
        let mut secs = 0.0;
        for _ in 0..frames {
            crowd.steer();
            let t = Instant::now();
            pool.install(|| walls.move_and_slide_many_into(&crowd.agents, &opts, &mut moves));
            secs += t.elapsed().as_secs_f64();
            crowd.apply(&moves);
        }
        secs
    };
    let times = medians(if quick { 2 } else { 5 }, &mut [&mut || run_with(&pools[0]), &mut || run_with(&pools[1])]);
    let (pen, crossed) = judged(&mut start.clone(), frames, &judge, |c| {
        let mut moves = Vec::new();
        c.step(&walls, &opts, &mut moves);
    });
    let steps = (agents * frames) as f64;
    for (t, threads) in times.iter().zip([1, 2]) {
        line("move_and_slide", "segdist-collide", n, agents, threads, t * 1e9 / steps, pen.max(0.0), crossed);
        eprintln!(
            "  move_and_slide segdist-collide, {threads} thread(s): {:.1} ns per agent step, {:.3} ms a frame",
            t * 1e9 / steps,
            t * 1e3 / frames as f64
        );
    }

    // rapier's character controller, one thread, fewer frames (it is slow),
    // timed the same way.
    let rapier = Rapier::new(&segs);
    let rframes = (frames / 5).max(2);
    let mut crowd = start.clone();
    let mut secs = 0.0;
    for _ in 0..rframes {
        crowd.steer();
        let t = Instant::now();
        let moved = rapier.step(&crowd.agents);
        secs += t.elapsed().as_secs_f64();
        for (i, (p, nrm)) in moved.into_iter().enumerate() {
            crowd.apply_one(i, p, nrm);
        }
    }
    let (rpen, rcross) = judged(&mut start.clone(), rframes, &judge, |c| {
        c.steer();
        for (i, (p, nrm)) in rapier.step(&c.agents).into_iter().enumerate() {
            c.apply_one(i, p, nrm);
        }
    });
    let rns = secs * 1e9 / (agents * rframes) as f64;
    line("move_and_slide", "rapier KinematicCharacterController", n, agents, 1, rns, rpen.max(0.0), rcross);
    eprintln!(
        "  move_and_slide rapier 0.36 KinematicCharacterController, 1 thread: {rns:.1} ns per agent step ({:.1}× segdist-collide's one thread); max penetration {rpen:.3e}, crossings {rcross}",
        rns / (times[0] * 1e9 / steps)
    );
}

/// The median over `reps` interleaved turns of what each closure reports
/// (its own timed seconds).
fn medians(reps: usize, fns: &mut [&mut dyn FnMut() -> f64]) -> Vec<f64> {
    let mut all = vec![Vec::new(); fns.len()];
    for f in fns.iter_mut() {
        f();
    }
    for _ in 0..reps {
        for (i, f) in fns.iter_mut().enumerate() {
            std::thread::sleep(std::time::Duration::from_millis(10));
            all[i].push(f());
        }
    }
    all.into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect()
}
