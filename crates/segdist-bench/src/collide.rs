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

/// One JSON line; `verdict` is the judge's (max penetration, crossings).
fn line(workload: &str, imp: &str, walls: usize, agents: usize, threads: usize, ns: f64, verdict: (f64, usize)) {
    let (pen, crossings) = verdict;
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

    // move_and_slide: segdist on one and two threads, rapier on one (fewer
    // frames: it is slow). Only the moves are timed (steering and applying
    // them are the game's), each implementation from the same start, turns
    // interleaved, the median of each.
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
        secs / (agents * frames) as f64
    };
    let rapier = Rapier::new(&segs);
    let rframes = (frames / 5).max(2);
    let run_rapier = || {
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
        secs / (agents * rframes) as f64
    };
    let reps = if quick { 3 } else { 5 };
    let times = medians(reps, &mut [&mut || run_with(&pools[0]), &mut || run_with(&pools[1]), &mut || run_rapier()]);
    let (pen, crossed) = judged(&mut start.clone(), frames, &judge, |c| {
        let mut moves = Vec::new();
        c.step(&walls, &opts, &mut moves);
    });
    let (rpen, rcross) = judged(&mut start.clone(), rframes, &judge, |c| {
        c.steer();
        for (i, (p, nrm)) in rapier.step(&c.agents).into_iter().enumerate() {
            c.apply_one(i, p, nrm);
        }
    });
    for (t, threads) in times[..2].iter().zip([1, 2]) {
        line("move_and_slide", "segdist-collide", n, agents, threads, t * 1e9, (pen.max(0.0), crossed));
        eprintln!(
            "  move_and_slide segdist-collide, {threads} thread(s): {:.1} ns per agent step, {:.3} ms a frame",
            t * 1e9,
            t * 1e3 * agents as f64
        );
    }
    line(
        "move_and_slide",
        "rapier KinematicCharacterController",
        n,
        agents,
        1,
        times[2] * 1e9,
        (rpen.max(0.0), rcross),
    );
    eprintln!(
        "  move_and_slide rapier 0.36 KinematicCharacterController, 1 thread: {:.1} ns per agent step ({:.1}× segdist-collide's one thread); max penetration {rpen:.3e}, crossings {rcross}",
        times[2] * 1e9,
        times[2] / times[0]
    );

    // cast and resolve alone, one thread: at the level's origin and 1e7
    // away, against parry's ball cast against the maze as one Polyline and
    // a push-out loop on parry's contact.
    for off in [0.0, 1e7] {
        alone(&segs, &start, off, if quick { 20_000 } else { 200_000 }, reps);
    }
}

/// `cast` and `resolve`, one by one on one thread, segdist against parry,
/// with the level moved by `off`.
fn alone(segs: &[Seg], start: &Crowd, off: f64, n: usize, reps: usize) {
    let segs: Vec<Seg> = segs.iter().map(|s| s.map(|v| [v[0] + off, v[1] + off])).collect();
    let walls = {
        let mut b = WallSet::builder();
        for [p, q] in &segs {
            b.push_segment(*p, *q);
        }
        b.build().expect("finite")
    };
    let judge = Judge { index: Index::from_segments(&segs).expect("finite"), segs: &segs };
    let poly = polyline(&segs);
    let mut rng = segdist_collide::__testing::Rng::new(5);
    // Casts: from the crowd's free starts, 0.05 to 3 units in any direction.
    let casts: Vec<([f64; 2], f64, [f64; 2])> = (0..n)
        .map(|i| {
            let a = start.agents[i % start.agents.len()];
            let (ang, len) = (rng.unit() * std::f64::consts::TAU, 0.05 + 3.0 * rng.unit());
            ([a.position[0] + off, a.position[1] + off], a.radius, [len * ang.cos(), len * ang.sin()])
        })
        .collect();
    // Overlaps: each start moved towards its nearest wall until it is 30 to
    // 90 % of its radius deep.
    let deep: Vec<([f64; 2], f64)> = casts
        .iter()
        .map(|&(c, r, _)| {
            let h = judge.index.nearest(c).expect("walls");
            let (q, d) = (h.point, h.distance);
            let want = r * (0.1 + 0.6 * rng.unit());
            let k = want / d;
            ([q[0] + (c[0] - q[0]) * k, q[1] + (c[1] - q[1]) * k], r)
        })
        .collect();
    let sd_cast = || {
        let t = Instant::now();
        let ends: Vec<[f64; 2]> = casts
            .iter()
            .map(|&(c, r, d)| walls.cast(c, r, d).map_or([c[0] + d[0], c[1] + d[1]], |h| h.position))
            .collect();
        (t.elapsed().as_secs_f64() / n as f64, ends)
    };
    let parry_cast = || {
        let t = Instant::now();
        let ends: Vec<[f64; 2]> = casts
            .iter()
            .map(|&(c, r, d)| {
                let hit = pq::cast_shapes(
                    &Pose::translation(c[0], c[1]),
                    PVec::new(d[0], d[1]),
                    &Ball::new(r),
                    &Pose::IDENTITY,
                    PVec::ZERO,
                    &poly,
                    ShapeCastOptions::with_max_time_of_impact(1.0),
                );
                let s = hit.ok().flatten().map_or(1.0, |h| h.time_of_impact);
                [c[0] + s * d[0], c[1] + s * d[1]]
            })
            .collect();
        (t.elapsed().as_secs_f64() / n as f64, ends)
    };
    let sd_resolve = || {
        let t = Instant::now();
        let ends: Vec<[f64; 2]> = deep.iter().map(|&(c, r)| walls.resolve(c, r).position).collect();
        (t.elapsed().as_secs_f64() / n as f64, ends)
    };
    let parry_resolve = || {
        let t = Instant::now();
        let ends: Vec<[f64; 2]> = deep
            .iter()
            .map(|&(c, r)| {
                let (mut p, ball) = (c, Ball::new(r));
                for _ in 0..8 {
                    match pq::contact(&Pose::translation(p[0], p[1]), &ball, &Pose::IDENTITY, &poly, 0.0) {
                        Ok(Some(k)) if k.dist < 0.0 => p = [p[0] + k.normal1.x * k.dist, p[1] + k.normal1.y * k.dist],
                        _ => break,
                    }
                }
                p
            })
            .collect();
        (t.elapsed().as_secs_f64() / n as f64, ends)
    };
    let mut results: Vec<(f64, Vec<[f64; 2]>)> = vec![(0.0, Vec::new()); 4];
    let mut fns: [&dyn Fn() -> (f64, Vec<[f64; 2]>); 4] = [&sd_cast, &parry_cast, &sd_resolve, &parry_resolve];
    let mut all: Vec<Vec<f64>> = vec![Vec::new(); 4];
    for _ in 0..reps {
        for (k, f) in fns.iter_mut().enumerate() {
            std::thread::sleep(std::time::Duration::from_millis(10));
            let (t, ends) = f();
            all[k].push(t);
            results[k].1 = ends;
        }
    }
    let radii: Vec<f64> = casts.iter().map(|c| c.1).collect();
    let names = [
        ("cast", "segdist-collide"),
        ("cast", "parry cast_shapes"),
        ("resolve", "segdist-collide"),
        ("resolve", "parry contact loop"),
    ];
    let mut med = [0.0; 4];
    for k in 0..4 {
        all[k].sort_by(f64::total_cmp);
        med[k] = all[k][all[k].len() / 2];
        let from: Vec<[f64; 2]> =
            if k < 2 { casts.iter().map(|c| c.0).collect() } else { deep.iter().map(|c| c.0).collect() };
        // A resolve's "crossing" is a push that jumps through a wall.
        let (pen, crossed) = judge.step(&from, &results[k].1, &radii);
        let workload = if off == 0.0 { names[k].0.to_string() } else { format!("{}_at_1e7", names[k].0) };
        line(&workload, names[k].1, segs.len(), n, 1, med[k] * 1e9, (pen.max(0.0), crossed));
        eprintln!(
            "  {workload} {}: {:.1} ns each{}; max penetration {:.3e}, crossings {crossed}",
            names[k].1,
            med[k] * 1e9,
            if k % 2 == 1 { format!(" ({:.1}× segdist-collide)", med[k] / med[k - 1]) } else { String::new() },
            pen.max(0.0)
        );
    }
}

/// The median over `reps` interleaved turns of what each closure reports
/// (its own timed seconds per step), each turn repeating its closure until
/// it has run for at least a second: a short turn after a peer's long one
/// ran at another clock on this machine (see `report::interleaved_sustained`).
fn medians(reps: usize, fns: &mut [&mut dyn FnMut() -> f64]) -> Vec<f64> {
    let mut all = vec![Vec::new(); fns.len()];
    for f in fns.iter_mut() {
        f();
    }
    for _ in 0..reps {
        for (i, f) in fns.iter_mut().enumerate() {
            std::thread::sleep(std::time::Duration::from_millis(10));
            let t = Instant::now();
            let (mut sum, mut calls) = (0.0, 0.0);
            while calls == 0.0 || t.elapsed().as_secs_f64() < 1.0 {
                sum += f();
                calls += 1.0;
            }
            all[i].push(sum / calls);
        }
    }
    all.into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect()
}
