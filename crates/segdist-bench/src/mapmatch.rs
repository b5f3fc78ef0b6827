//! Map matching on the Helsinki roads: simulated traces with known truth
//! (`segdist_match::simulate`), matched by segdist-match and by
//! nearest-road snapping; the share of fixes put on the true line and the
//! fixes per second, per noise level and interval between fixes.
//!
//! `match-data DIR` writes the same traces and roads for the peers' script
//! (`crates/segdist-match/bench/bench.py`, which runs FMM on them).

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
    let text = std::fs::read_to_string(path).expect("../shared/data/helsinki/roads.geojson");
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
    let mut b = GraphBuilder::new(Space::Geographic);
    for (l, d) in lines.iter().zip(dirs) {
        b.push_line(vec![l.clone()], *d);
    }
    b.build().expect("the Helsinki roads")
}

/// (share of fixes on the true line, seconds) for the matcher.
fn run_matcher(m: &Matcher, traces: &[Vec<SimFix>]) -> (f64, f64) {
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

fn share(traces: &[Vec<SimFix>], results: &[Vec<Option<usize>>]) -> f64 {
    let (mut right, mut all) = (0usize, 0usize);
    for (tr, r) in traces.iter().zip(results) {
        for (f, m) in tr.iter().zip(r) {
            all += 1;
            right += usize::from(*m == Some(f.line));
        }
    }
    right as f64 / all.max(1) as f64
}

pub fn run(quick: bool) {
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
    let index = segdist_geo::GeoIndex::from_polylines(&lines).expect("lon/lat");
    let n = if quick { 20 } else { 200 };
    let mut md = String::from(
        "| noise | interval | segdist-match | nearest road | segdist-match fixes/s |\n|---:|---:|---:|---:|---:|\n",
    );
    for noise in [5.0, 10.0, 20.0] {
        for interval in [1.0, 5.0, 30.0] {
            let o = SimOptions { interval, noise, legs: 3, seed: 1 };
            let traces = simulate(&g, &speeds, n, &o);
            let fixes: usize = traces.iter().map(Vec::len).sum();
            let opts = MatchOptions { sigma: noise, radius: (4.0 * noise).max(50.0), ..MatchOptions::default() };
            let m = Matcher::new(&g, opts).expect("options");
            let (acc, secs) = run_matcher(&m, &traces);
            let nearest: Vec<Vec<Option<usize>>> = traces
                .par_iter()
                .map(|tr| tr.iter().map(|f| index.nearest(f.fix.point).map(|h| h.feature)).collect())
                .collect();
            let near = share(&traces, &nearest);
            println!(
                "{{\"workload\":\"match helsinki\",\"noise_m\":{noise},\"interval_s\":{interval},\"fixes\":{fixes},\"segdist_match\":{acc:.4},\"nearest\":{near:.4},\"fixes_per_s\":{:.0}}}",
                fixes as f64 / secs
            );
            let _ = writeln!(
                md,
                "| {noise} m | {interval} s | {:.1} % | {:.1} % | {:.2} M |",
                100.0 * acc,
                100.0 * near,
                fixes as f64 / secs / 1e6
            );
        }
    }
    eprint!("{md}");
}

/// Writes `DIR/roads.geojson` (the driven Helsinki roads, with `oneway`)
/// and `DIR/traces_{noise}m_{interval}s.csv` (trace, time, lon, lat and the
/// true line) for the peers' script and the CLI.
pub fn data(args: &[&str]) {
    let dir = std::path::Path::new(args.first().copied().unwrap_or("match-data"));
    std::fs::create_dir_all(dir).expect("the output folder");
    let (lines, dirs, speeds) = helsinki();
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
    eprintln!("wrote {} (OpenStreetMap roads © OpenStreetMap contributors, ODbL)", dir.display());
}
