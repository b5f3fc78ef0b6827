//! 10,000 agents wandering a generated maze of about 11,000 walls for 1,000
//! frames with `move_and_slide_many`, checked every frame by an independent
//! judge (segdist-index's exact nearest wall for penetration, Shewchuk's
//! orientation for crossings); prints frame-time percentiles, the largest
//! penetration and the crossings (both must be 0), and draws the level
//! with some agents' trails as SVG.
//!
//! ```text
//! cargo run --release -p segdist-collide --example crowd [-- --agents N --frames N --size CELLS --out crowd.svg]
//! ```
//!
//! Exits with 1 if any agent ever overlaps or crosses a wall.

use std::fmt::Write as _;
use std::time::Instant;

use rayon::prelude::*;

use segdist_collide::__testing::{maze, Crowd};
use segdist_collide::{MoveOptions, WallSet};
use segdist_index::{Index, QueryOptions};

struct Args {
    agents: usize,
    frames: usize,
    size: usize,
    out: String,
}

fn args() -> Result<Args, String> {
    let mut a = Args { agents: 10_000, frames: 1_000, size: 125, out: "crowd.svg".into() };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let number = || value.parse::<usize>().map_err(|_| format!("{flag}: not a count: {value}"));
        match flag.as_str() {
            "--agents" => a.agents = number()?,
            "--frames" => a.frames = number()?,
            "--size" => a.size = number()?.max(2),
            "--out" => a.out = value.clone(),
            _ => return Err(format!("unknown option {flag} (--agents, --frames, --size, --out)")),
        }
    }
    Ok(a)
}

fn orient(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    robust::orient2d(
        robust::Coord { x: a[0], y: a[1] },
        robust::Coord { x: b[0], y: b[1] },
        robust::Coord { x: c[0], y: c[1] },
    )
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("crowd: {e}");
            std::process::exit(2);
        }
    };
    let segments = maze(a.size, a.size, 0.3, 7, 0.0);
    let mut b = WallSet::builder();
    for [p, q] in &segments {
        b.push_segment(*p, *q);
    }
    let t = Instant::now();
    let walls = b.build().expect("finite coordinates");
    let build = t.elapsed();
    // The judge: an exact nearest-segment index over the same walls.
    let judge = Index::from_segments(&segments).expect("finite coordinates");
    let mut crowd = Crowd::new(&walls, a.size, a.size, a.agents, 0.05, 11, 0.0);
    let opts = MoveOptions::default();
    println!(
        "level: {} walls ({}×{} maze, built in {:.1} ms, cell {}), {} agents of radius 0.2–0.3, {} frames",
        walls.len(),
        a.size,
        a.size,
        build.as_secs_f64() * 1e3,
        walls.cell_size(),
        a.agents,
        a.frames
    );
    let trail_every = (a.agents / 150).max(1);
    let mut trails: Vec<Vec<[f64; 2]>> = crowd.agents.iter().step_by(trail_every).map(|g| vec![g.position]).collect();
    let mut moves = Vec::new();
    let mut times = Vec::with_capacity(a.frames);
    let (mut worst, mut crossings, mut contacts) = (0.0f64, 0usize, 0usize);
    let q = QueryOptions::default();
    for frame in 0..a.frames {
        let before: Vec<[f64; 2]> = crowd.agents.iter().map(|g| g.position).collect();
        // Timed: the moves alone (steering the crowd is the game's).
        crowd.steer();
        let t = Instant::now();
        walls.move_and_slide_many_into(&crowd.agents, &opts, &mut moves);
        times.push(t.elapsed().as_secs_f64());
        crowd.apply(&moves);
        contacts += moves.iter().filter(|m| m.hits > 0).count();
        // The judge, untimed: the exact distance to the nearest wall ...
        let after: Vec<[f64; 2]> = crowd.agents.iter().map(|g| g.position).collect();
        for (hit, g) in judge.nearest_many(&after, &q).iter().zip(&crowd.agents) {
            let d = hit.map_or(f64::INFINITY, |h| h.distance);
            worst = worst.max(g.radius - d);
        }
        // ... and every wall near each step, for a proper crossing (on all
        // cores, as the moves are: a judge on one thread left the pool's
        // workers asleep and the caches cold for the next frame).
        let segs = &segments;
        let crossed: Vec<(usize, usize)> = before
            .par_iter()
            .zip(&after)
            .enumerate()
            .flat_map_iter(|(i, (p, r))| {
                let step = (r[0] - p[0]).hypot(r[1] - p[1]);
                judge.within(*p, step).into_iter().filter_map(move |h| {
                    let [s, e] = segs[h.feature];
                    let crosses =
                        orient(s, e, *p) * orient(s, e, *r) < 0.0 && orient(*p, *r, s) * orient(*p, *r, e) < 0.0;
                    crosses.then_some((i, h.feature))
                })
            })
            .collect();
        for (i, w) in crossed {
            crossings += 1;
            eprintln!("frame {frame}: agent {i} crossed wall {w} from {:?} to {:?}", before[i], after[i]);
        }
        for (t, g) in trails.iter_mut().zip(crowd.agents.iter().step_by(trail_every)) {
            if frame % 2 == 1 {
                t.push(g.position);
            }
        }
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize] * 1e3;
    println!(
        "frame time (move_and_slide_many, {} threads): p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms; {:.0} ns per agent step at the median",
        rayon::current_num_threads(),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0),
        pct(0.5) * 1e6 / a.agents as f64
    );
    println!("moves that met a wall: {contacts} of {}", a.agents * a.frames);
    println!(
        "largest penetration: {} (radius minus the exact distance to the nearest wall; 0 or less is none)",
        worst.max(0.0)
    );
    println!("wall crossings: {crossings}");
    let mut svg = String::new();
    let (w, h) = (a.size as f64, a.size as f64);
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="-1 -1 {} {}" width="1000" height="1000"><g transform="matrix(1 0 0 -1 0 {h})"><rect x="-1" y="-1" width="{}" height="{}" fill="white"/><path stroke="black" stroke-width="0.08" fill="none" d=""#,
        w + 2.0,
        h + 2.0,
        w + 2.0,
        h + 2.0
    );
    for [p, q] in &segments {
        let _ = write!(svg, "M{} {}L{} {}", p[0], p[1], q[0], q[1]);
    }
    svg.push_str("\"/>");
    let radii: Vec<f64> = crowd.agents.iter().step_by(trail_every).map(|g| g.radius).collect();
    for (k, (t, r)) in trails.iter().zip(&radii).enumerate() {
        let hue = (k * 137) % 360;
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="hsl({hue},80%,45%)" stroke-width="0.05" stroke-linejoin="round" points=""#
        );
        for p in t {
            let _ = write!(svg, "{:.3},{:.3} ", p[0], p[1]);
        }
        svg.push_str("\"/>");
        if let Some(p) = t.last() {
            let _ = write!(
                svg,
                r#"<circle cx="{:.3}" cy="{:.3}" r="{r:.3}" fill="hsl({hue},80%,45%)" fill-opacity="0.6"/>"#,
                p[0], p[1]
            );
        }
    }
    svg.push_str("</g></svg>\n");
    let tmp = format!("{}.tmp", a.out);
    if let Err(e) = std::fs::write(&tmp, svg).and_then(|()| std::fs::rename(&tmp, &a.out)) {
        eprintln!("crowd: {}: {e}", a.out);
        std::process::exit(2);
    }
    println!("picture: {} ({} walls, {} agents' trails)", a.out, walls.len(), trails.len());
    if worst > 0.0 || crossings > 0 {
        std::process::exit(1);
    }
}
