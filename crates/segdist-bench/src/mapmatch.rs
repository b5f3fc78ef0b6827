//! Map matching on the Helsinki roads: simulated traces with known truth
//! (`segdist_match::simulate`), matched by segdist-match and by
//! nearest-road snapping; the share of fixes put on the true line and the
//! fixes per second, per noise level and interval between fixes. Also the
//! share of fixes next to a line change (the last fix before the vehicle
//! passes from one line to the next, or the first after) and segdist's
//! share right there and elsewhere: where the wrong fixes are.
//!
//! `match --city` does the same on a synthetic city ([`city`], 37,104
//! segments) in lon/lat and in metres, where the Helsinki roads are a
//! district's 2,000.
//!
//! `match-data DIR [TRACES] [--city]` writes the same traces and roads for
//! the peers' script (`crates/segdist-match/bench/bench.py`, which runs FMM
//! on them).

use std::fmt::Write as _;
use std::time::Instant;

use rayon::prelude::*;
use segdist_match::simulate::{simulate, SimFix, SimOptions};
use segdist_match::{Direction, Fix, GraphBuilder, MatchOptions, Matcher, RoadGraph, Space};

/// The Helsinki roads a car drives (the file's footways, steps, cycleways,
/// platforms and paths left out: central Helsinki maps most sidewalks as
/// footways a few metres beside the street): lines, one-way directions,
/// and a simulated car's speed on each (m/s).
pub fn helsinki() -> (Vec<Vec<[f64; 2]>>, Vec<Direction>, Vec<f64>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/helsinki/roads.geojson");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        // A checkout without ../shared beside it: say so, not a panic.
        eprintln!("segdist-bench: cannot read {path}: {e} (the Helsinki roads; --city needs none)");
        std::process::exit(2)
    });
    let v: serde_json::Value = serde_json::from_str(&text).expect("GeoJSON");
    let (mut lines, mut dirs, mut speeds) = (Vec::new(), Vec::new(), Vec::new());
    for f in v["features"].as_array().expect("features") {
        let c = f["geometry"]["coordinates"].as_array().expect("a LineString");
        let kmh = match f["properties"]["highway"].as_str().unwrap_or("") {
            "primary" | "primary_link" => 50.0,
            "secondary" => 40.0,
            "tertiary" | "tertiary_link" => 35.0,
            "unclassified" | "residential" => 30.0,
            "service" => 15.0,
            _ => continue,
        };
        lines.push(c.iter().map(|p| [p[0].as_f64().unwrap(), p[1].as_f64().unwrap()]).collect());
        dirs.push(Direction::from_oneway(f["properties"]["oneway"].as_str().unwrap_or("")));
        speeds.push(kmh / 3.6);
    }
    (lines, dirs, speeds)
}

pub fn graph(lines: &[Vec<[f64; 2]>], dirs: &[Direction]) -> RoadGraph {
    graph_in(Space::Geographic, lines, dirs)
}

fn graph_in(space: Space, lines: &[Vec<[f64; 2]>], dirs: &[Direction]) -> RoadGraph {
    let mut b = GraphBuilder::new(space);
    for (l, d) in lines.iter().zip(dirs) {
        b.push_line(vec![l.clone()], *d);
    }
    b.build().expect("the Helsinki roads")
}

/// (shares, seconds) for the matcher.
fn run_matcher(m: &Matcher, traces: &[Vec<SimFix>]) -> (Shares, f64) {
    let t = Instant::now();
    let results: Vec<Vec<Option<usize>>> = traces
        .par_iter()
        .map(|tr| {
            let fixes: Vec<Fix> = tr.iter().map(|f| f.fix).collect();
            let r = m.match_trace(&fixes, false).expect("times in order");
            r.fixes.iter().map(|f| f.candidate.map(|c| c.line)).collect()
        })
        .collect();
    let secs = t.elapsed().as_secs_f64();
    (share(traces, &results), secs)
}

/// How a matcher's lines compare with the truth.
#[derive(Clone, Copy, Debug)]
struct Shares {
    /// The share of fixes on the true line.
    right: f64,
    /// The share of fixes next to a line change: the fix before or after
    /// the vehicle passes from one line to the next (its true line differs
    /// from the fix before's or the fix after's), where a fix's noise along
    /// the road puts it past the junction as often as not.
    at_change: f64,
    /// The share of the fixes next to a line change on the true line.
    right_at_change: f64,
    /// The share of the other fixes on the true line (`None`: every fix
    /// is next to a change, as at 30 s between fixes).
    right_elsewhere: Option<f64>,
}

fn share(traces: &[Vec<SimFix>], results: &[Vec<Option<usize>>]) -> Shares {
    let (mut right, mut all, mut at_change, mut right_at_change) = (0usize, 0usize, 0usize, 0usize);
    for (tr, r) in traces.iter().zip(results) {
        for (i, (f, m)) in tr.iter().zip(r).enumerate() {
            let change = (i > 0 && tr[i - 1].line != f.line) || tr.get(i + 1).is_some_and(|n| n.line != f.line);
            let ok = *m == Some(f.line);
            all += 1;
            right += usize::from(ok);
            at_change += usize::from(change);
            right_at_change += usize::from(ok && change);
        }
    }
    Shares {
        right: right as f64 / all.max(1) as f64,
        at_change: at_change as f64 / all.max(1) as f64,
        right_at_change: right_at_change as f64 / at_change.max(1) as f64,
        right_elsewhere: (all > at_change).then(|| (right - right_at_change) as f64 / (all - at_change) as f64),
    }
}

pub fn run(quick: bool, city: bool) {
    let (lines, dirs, speeds) = helsinki();
    let t = Instant::now();
    let g = graph(&lines, &dirs);
    let build = t.elapsed().as_secs_f64();
    eprintln!("graph: {} nodes, {} arcs, built in {build:.3} s", g.nodes(), g.arcs());
    // Building a 100,800-segment network: a 224 × 224 grid of 100 m
    // blocks, each block side a line, planar and in lon/lat.
    for space in [Space::Planar, Space::Geographic] {
        let t = Instant::now();
        let mut b = GraphBuilder::new(space);
        let scale = if space == Space::Planar { [100.0, 100.0] } else { [0.0018, 0.0009] };
        let at = |i: usize, j: usize| {
            [
                24.0 * f64::from(u8::from(space == Space::Geographic)) + i as f64 * scale[0],
                60.0 * f64::from(u8::from(space == Space::Geographic)) + j as f64 * scale[1],
            ]
        };
        for i in 0..=224 {
            for j in 0..224 {
                b.push_line(vec![vec![at(i, j), at(i, j + 1)]], Direction::Both);
                b.push_line(vec![vec![at(j, i), at(j + 1, i)]], Direction::Both);
            }
        }
        let g = b.build().expect("a grid");
        eprintln!(
            "graph of 100,800 segments ({space:?}): {} nodes, {} arcs, built in {:.3} s",
            g.nodes(),
            g.arcs(),
            t.elapsed().as_secs_f64()
        );
        // A planar matcher lays its candidate grid for the radius.
        let t = Instant::now();
        let m = Matcher::new(&g, MatchOptions { radius: 50.0, ..MatchOptions::default() }).expect("options");
        eprintln!("  its matcher (radius 50 m) made in {:.3} s", t.elapsed().as_secs_f64());
        drop(m);
    }
    // The Helsinki roads in lon/lat; with --city, the synthetic city in
    // lon/lat and in metres.
    let networks = if city {
        vec![("city lon/lat", self::city(Space::Geographic)), ("city planar", self::city(Space::Planar))]
    } else {
        vec![("helsinki", (lines, dirs, speeds))]
    };
    let n = if quick {
        20
    } else if city {
        100
    } else {
        200
    };
    let mut md = String::from(
        "| network | noise | interval | fixes | segdist-match | nearest road | fixes next to a line change | segdist-match there | segdist-match elsewhere | segdist-match fixes/s (2 threads) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (name, (lines, dirs, speeds)) in &networks {
        let space = if name.ends_with("planar") { Space::Planar } else { Space::Geographic };
        let g = graph_in(space, lines, dirs);
        // The nearest road, the baseline, in lon/lat only.
        let index =
            (space == Space::Geographic).then(|| segdist_geo::GeoIndex::from_polylines(lines).expect("lon/lat"));
        for noise in [5.0, 10.0, 20.0] {
            for interval in [1.0, 5.0, 30.0] {
                let o = SimOptions { interval, noise, legs: 3, seed: 1 };
                let traces = simulate(&g, speeds, n, &o);
                let fixes: usize = traces.iter().map(Vec::len).sum();
                let opts = MatchOptions {
                    sigma: noise,
                    radius: segdist_match::default_radius(noise),
                    ..MatchOptions::default()
                };
                let m = Matcher::new(&g, opts).expect("options");
                let (acc, secs) = run_matcher(&m, &traces);
                let near = index.as_ref().map(|index| {
                    let nearest: Vec<Vec<Option<usize>>> = traces
                        .par_iter()
                        .map(|tr| tr.iter().map(|f| index.nearest(f.fix.point).map(|h| h.feature)).collect())
                        .collect();
                    share(&traces, &nearest).right
                });
                println!(
                    "{{\"workload\":\"match {name}\",\"noise_m\":{noise},\"interval_s\":{interval},\"fixes\":{fixes},\"segdist_match\":{:.4},\"nearest\":{},\"at_change\":{:.4},\"right_at_change\":{:.4},\"right_elsewhere\":{},\"fixes_per_s\":{:.0}}}",
                    acc.right,
                    near.map_or("null".to_string(), |v| format!("{v:.4}")),
                    acc.at_change,
                    acc.right_at_change,
                    acc.right_elsewhere.map_or("null".to_string(), |v| format!("{v:.4}")),
                    fixes as f64 / secs
                );
                let _ = writeln!(
                    md,
                    "| {name} | {noise} m | {interval} s | {fixes} | {:.1} % | {} | {:.1} % | {:.1} % | {} | {:.2} M |",
                    100.0 * acc.right,
                    near.map_or("–".to_string(), |v| format!("{:.1} %", 100.0 * v)),
                    100.0 * acc.at_change,
                    100.0 * acc.right_at_change,
                    acc.right_elsewhere.map_or("–".to_string(), |v| format!("{:.1} %", 100.0 * v)),
                    fixes as f64 / secs / 1e6
                );
            }
        }
    }
    eprint!("{md}");
}

/// A synthetic city of Helsinki's latitude, for a network the size of a
/// city's where the Helsinki file is a district's: a 100 × 100 lattice of
/// junctions 100 m apart (10 km square), each moved up to 15 m at random,
/// a line per block side with a middle vertex moved up to 5 m (two
/// segments). Every 10th street is an artery (50 km/h), every 5th a main
/// street (40 km/h), the rest residential (30 km/h); 8 % of residential
/// block sides are missing and a fifth of the residential streets are
/// one-way, alternating in direction. 19,800 block sides less the missing:
/// about 18,700 lines, 37,400 segments. The same every time (seeded).
/// In `Space::Planar` the coordinates are metres from its south-west
/// corner.
pub fn city(space: Space) -> (Vec<Vec<[f64; 2]>>, Vec<Direction>, Vec<f64>) {
    use rand::{Rng, SeedableRng};
    const N: usize = 100;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
    // Metres to degrees at 60.2° N (WGS84 radii of curvature, as
    // `simulate`'s noise).
    let (lat0, lon0) = (60.2f64, 24.8f64);
    let (phi, e2) = (lat0.to_radians(), 0.006_694_379_990_14);
    let w = (1.0 - e2 * phi.sin() * phi.sin()).sqrt();
    let (n_r, m_r) = (6_378_137.0 / w, 6_378_137.0 * (1.0 - e2) / (w * w * w));
    let deg = |x: f64, y: f64| match space {
        Space::Planar => [x, y],
        Space::Geographic => [lon0 + (x / (n_r * phi.cos())).to_degrees(), lat0 + (y / m_r).to_degrees()],
    };
    let jitter = |rng: &mut rand_chacha::ChaCha8Rng, r: f64| [rng.gen_range(-r..r), rng.gen_range(-r..r)];
    let node: Vec<[f64; 2]> = (0..N * N)
        .map(|k| {
            let j = jitter(&mut rng, 15.0);
            [(k % N) as f64 * 100.0 + j[0], (k / N) as f64 * 100.0 + j[1]]
        })
        .collect();
    let class = |street: usize| {
        if street.is_multiple_of(10) {
            50.0
        } else if street.is_multiple_of(5) {
            40.0
        } else {
            30.0
        }
    };
    let (mut lines, mut dirs, mut speeds) = (Vec::new(), Vec::new(), Vec::new());
    for street in 0..N {
        let kmh = class(street);
        let one_way = kmh == 30.0 && street % 5 == 2;
        for step in 0..N - 1 {
            for across in [false, true] {
                // Along row `street` (x grows), or along column `street`.
                let (a, b) = if across {
                    (node[step * N + street], node[(step + 1) * N + street])
                } else {
                    (node[street * N + step], node[street * N + step + 1])
                };
                if kmh == 30.0 && rng.gen_bool(0.08) {
                    continue;
                }
                let j = jitter(&mut rng, 5.0);
                let mid = [(a[0] + b[0]) / 2.0 + j[0], (a[1] + b[1]) / 2.0 + j[1]];
                let (a, b) = if one_way && street % 2 == 1 { (b, a) } else { (a, b) };
                lines.push(vec![deg(a[0], a[1]), deg(mid[0], mid[1]), deg(b[0], b[1])]);
                dirs.push(if one_way { Direction::Forward } else { Direction::Both });
                speeds.push(kmh / 3.6);
            }
        }
    }
    (lines, dirs, speeds)
}

/// Writes `DIR/roads.geojson` (the driven Helsinki roads, or with `city`
/// the synthetic [`city`], with `oneway`) and
/// `DIR/traces_{noise}m_{interval}s.csv` (trace, time, lon, lat and the
/// true line) for the peers' script and the CLI.
pub fn data(args: &[&str], city: bool) {
    let dir = std::path::Path::new(args.first().copied().unwrap_or("match-data"));
    std::fs::create_dir_all(dir).expect("the output folder");
    let (lines, dirs, speeds) = if city { self::city(Space::Geographic) } else { helsinki() };
    let g = graph(&lines, &dirs);
    let mut gj = String::from("{\"type\":\"FeatureCollection\",\"features\":[");
    for (i, (l, d)) in lines.iter().zip(&dirs).enumerate() {
        let coords: Vec<String> = l.iter().map(|p| format!("[{:?},{:?}]", p[0], p[1])).collect();
        let oneway = if *d == Direction::Forward { "yes" } else { "no" };
        let _ = write!(
            gj,
            "{}\n{{\"type\":\"Feature\",\"id\":{i},\"properties\":{{\"oneway\":\"{oneway}\"}},\"geometry\":{{\"type\":\"LineString\",\"coordinates\":[{}]}}}}",
            if i == 0 { "" } else { "," },
            coords.join(",")
        );
    }
    gj.push_str("]}\n");
    std::fs::write(dir.join("roads.geojson"), gj).expect("roads.geojson");
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    for noise in [5.0, 10.0, 20.0] {
        for interval in [1.0, 5.0, 30.0] {
            let traces = simulate(&g, &speeds, n, &SimOptions { interval, noise, legs: 3, seed: 1 });
            let mut csv = String::from("trace,time,lon,lat,true_line,true_lon,true_lat\n");
            for (t, tr) in traces.iter().enumerate() {
                for f in tr {
                    let _ = writeln!(
                        csv,
                        "{t},{},{:?},{:?},{},{:?},{:?}",
                        f.fix.time.unwrap_or(0.0),
                        f.fix.point[0],
                        f.fix.point[1],
                        f.line,
                        f.truth[0],
                        f.truth[1]
                    );
                }
            }
            std::fs::write(dir.join(format!("traces_{noise}m_{interval}s.csv")), csv).expect("traces");
        }
    }
    if city {
        eprintln!("wrote {} (a synthetic city: {} lines)", dir.display(), lines.len());
    } else {
        eprintln!("wrote {} (OpenStreetMap roads © OpenStreetMap contributors, ODbL)", dir.display());
    }
}
