//! `nearest`: nearest-segment search and linear referencing, segdist-index
//! against rstar, parry and a brute-force scan, on the workloads of
//! `../shared/PEERS.md`.
//!
//! Every record carries `build_ms` (median build time, where an index is
//! built) and `queries_per_s` besides `ns_per_query`.

use std::hint::black_box;
use std::time::Instant;

use parry2d_f64::math::Vector as PVec;
use parry2d_f64::query::PointQueryWithLocation as _;
use parry2d_f64::shape::Polyline as ParryPolyline;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rstar::primitives::{GeomWithData, Line as RLine};
use rstar::RTree;
use segdist::Segment2;
use segdist_index::{HitLists, Index2, IndexBuilder, Polyline, QueryOptions};

use crate::report::{interleaved_sustained, median, Record};

type Seg = [[f64; 2]; 2];

type RItem = GeomWithData<RLine<[f64; 2]>, usize>;

/// M random segments of length 0.001–0.01 in the unit square.
fn uniform_segments(m: usize, seed: u64) -> Vec<Seg> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..m)
        .map(|_| {
            let a = [r.gen::<f64>(), r.gen::<f64>()];
            let len = 0.001 + 0.009 * r.gen::<f64>();
            let th = r.gen::<f64>() * std::f64::consts::TAU;
            [a, [a[0] + len * th.cos(), a[1] + len * th.sin()]]
        })
        .collect()
}

fn uniform_points(n: usize, seed: u64) -> Vec<[f64; 2]> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| [r.gen::<f64>(), r.gen::<f64>()]).collect()
}

/// A road-like network: 40 towns, each with random-walk streets of short
/// segments meeting at a few junctions, plus long roads between towns; in
/// metres at UTM-sized coordinates.
fn roads(seed: u64) -> Vec<Vec<[f64; 2]>> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let origin = [300_000.0, 6_600_000.0];
    let towns: Vec<[f64; 2]> =
        (0..40).map(|_| [origin[0] + r.gen::<f64>() * 100_000.0, origin[1] + r.gen::<f64>() * 100_000.0]).collect();
    let mut lines = Vec::new();
    for t in &towns {
        let junctions: Vec<[f64; 2]> =
            (0..8).map(|_| [t[0] + (r.gen::<f64>() - 0.5) * 3000.0, t[1] + (r.gen::<f64>() - 0.5) * 3000.0]).collect();
        for s in 0..250 {
            let mut v = if s % 3 == 0 {
                junctions[s % junctions.len()]
            } else {
                [t[0] + (r.gen::<f64>() - 0.5) * 4000.0, t[1] + (r.gen::<f64>() - 0.5) * 4000.0]
            };
            let mut heading = r.gen::<f64>() * std::f64::consts::TAU;
            let mut line = vec![v];
            for _ in 0..r.gen_range(2..40) {
                heading += (r.gen::<f64>() - 0.5) * 0.6;
                let step = 5.0 + r.gen::<f64>() * 25.0;
                v = [v[0] + step * heading.cos(), v[1] + step * heading.sin()];
                line.push(v);
            }
            lines.push(line);
        }
    }
    for w in towns.windows(2) {
        let n = 400;
        lines.push(
            (0..=n)
                .map(|i| {
                    let f = f64::from(i) / f64::from(n);
                    [w[0][0] + f * (w[1][0] - w[0][0]) + (f * 40.0).sin() * 200.0, w[0][1] + f * (w[1][1] - w[0][1])]
                })
                .collect(),
        );
    }
    lines
}

/// GPS-like fixes: a point on a random road segment plus up to 20 m noise.
fn fixes_near(lines: &[Vec<[f64; 2]>], n: usize, seed: u64) -> Vec<[f64; 2]> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let l = &lines[r.gen_range(0..lines.len())];
            let i = r.gen_range(0..l.len() - 1);
            let t = r.gen::<f64>();
            let (a, b) = (l[i], l[i + 1]);
            [
                a[0] + t * (b[0] - a[0]) + (r.gen::<f64>() - 0.5) * 40.0,
                a[1] + t * (b[1] - a[1]) + (r.gen::<f64>() - 0.5) * 40.0,
            ]
        })
        .collect()
}

fn segments_of(lines: &[Vec<[f64; 2]>]) -> Vec<Seg> {
    lines.iter().flat_map(|l| l.windows(2).map(|w| [w[0], w[1]])).collect()
}

fn rstar_tree(segs: &[Seg]) -> RTree<RItem> {
    RTree::bulk_load(segs.iter().enumerate().map(|(i, s)| GeomWithData::new(RLine::new(s[0], s[1]), i)).collect())
}

fn parry_polyline(segs: &[Seg]) -> ParryPolyline {
    let vertices: Vec<PVec> =
        segs.iter().flat_map(|s| [PVec::new(s[0][0], s[0][1]), PVec::new(s[1][0], s[1][1])]).collect();
    let indices: Vec<[u32; 2]> = (0..segs.len() as u32).map(|i| [2 * i, 2 * i + 1]).collect();
    ParryPolyline::new(vertices, Some(indices))
}

/// The accurate kernel over every segment; lowest index wins ties.
fn brute_force(segs: &[Seg], p: [f64; 2]) -> (usize, f64) {
    let mut best = (usize::MAX, f64::INFINITY);
    for (i, s) in segs.iter().enumerate() {
        let d = Segment2::new(s[0], s[1]).distance(p);
        if d < best.1 {
            best = (i, d);
        }
    }
    best
}

/// Median build time in ms over `reps` builds.
fn build_ms<T>(reps: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            black_box(f());
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    median(&mut t)
}

fn record(workload: &str, imp: &'static str, n: usize, threads: usize, secs: f64, build: Option<f64>) -> Record {
    let ns = secs * 1e9 / n as f64;
    let mut extra = vec![("queries_per_s".to_string(), format!("{:.0}", 1e9 / ns))];
    if let Some(b) = build {
        extra.push(("build_ms".to_string(), format!("{b:.2}")));
    }
    Record { workload: workload.to_string(), imp, n, threads, ns_per_query: ns, extra }
}

/// Nearest segment over `segs` for `pts`: segdist-index (1 thread and all
/// cores), rstar, parry, and brute force on a sample.
fn nearest_workload(name: &str, segs: &[Seg], pts: &[[f64; 2]], (reps, turn): (usize, f64), out: &mut Vec<Record>) {
    let n = pts.len();
    let cores = rayon::current_num_threads();
    let b_ours = build_ms(reps, || Index2::from_segments(segs).expect("finite"));
    let b_rstar = build_ms(reps, || rstar_tree(segs));
    let b_parry = build_ms(reps, || parry_polyline(segs));
    let index = Index2::from_segments(segs).expect("finite");
    let tree = rstar_tree(segs);
    let parry = parry_polyline(segs);

    // Agreement with the exact answer, on a sample (a distance-tie aside,
    // the peers' own rounding picks a different segment only when two are
    // within an ulp or so).
    let sample = &pts[..n.min(200)];
    let exact: Vec<(usize, f64)> = sample.iter().map(|&p| brute_force(segs, p)).collect();
    let ours_ok = sample.iter().zip(&exact).filter(|(&p, e)| index.nearest(p).map(|h| h.feature) == Some(e.0)).count();
    let rstar_ok =
        sample.iter().zip(&exact).filter(|(p, e)| tree.nearest_neighbor(*p).map(|h| h.data) == Some(e.0)).count();
    assert_eq!(ours_ok, sample.len(), "segdist-index disagrees with brute force");
    eprintln!("{name}: segdist-index agrees with brute force on {ours_ok}/{}, rstar on {rstar_ok}", sample.len());

    let isa = crate::report::index_isa();
    let one = QueryOptions { threads: 1, isa, ..Default::default() };
    let all = QueryOptions { threads: cores, isa, ..Default::default() };
    let bf_n = if n >= 100_000 { 40 } else { 10 };
    // The batch answers into a buffer of the caller's, used again call
    // after call, as a stream of points in chunks is answered (the CLI);
    // `-fresh`, into a new vector a call, which the system zeroes first.
    let (mut buf_one, mut buf_all) = (Vec::new(), Vec::new());
    let times = interleaved_sustained(
        reps,
        turn,
        &mut [
            &mut || {
                index.nearest_many_into(pts, &one, &mut buf_one);
                black_box(&buf_one);
            },
            &mut || {
                index.nearest_many_into(pts, &all, &mut buf_all);
                black_box(&buf_all);
            },
            &mut || {
                black_box(index.nearest_many(pts, &one));
            },
            &mut || {
                for p in pts {
                    black_box(index.nearest(*p));
                }
            },
            &mut || {
                for p in pts {
                    black_box(tree.nearest_neighbor(p));
                }
            },
            &mut || {
                for p in pts {
                    black_box(parry.project_local_point_and_get_location(PVec::new(p[0], p[1]), true));
                }
            },
            &mut || {
                for p in &pts[..bf_n] {
                    black_box(brute_force(segs, *p));
                }
            },
        ],
    );
    out.push(record(name, "segdist-index", n, 1, times[0], Some(b_ours)));
    out.push(record(name, "segdist-index", n, cores, times[1], Some(b_ours)));
    out.push(record(name, "segdist-index-fresh", n, 1, times[2], Some(b_ours)));
    out.push(record(name, "segdist-index-unordered", n, 1, times[3], Some(b_ours)));
    out.push(record(name, "rstar", n, 1, times[4], Some(b_rstar)));
    out.push(record(name, "parry", n, 1, times[5], Some(b_parry)));
    out.push(record(name, "brute-force", bf_n, 1, times[6], None));
}

/// k = 5 nearest and radius queries: segdist-index against rstar.
fn knn_and_radius(segs: &[Seg], pts: &[[f64; 2]], radius: f64, (reps, turn): (usize, f64), out: &mut Vec<Record>) {
    let n = pts.len();
    let index = Index2::from_segments(segs).expect("finite");
    let tree = rstar_tree(segs);
    let r2 = radius * radius;
    let cores = rayon::current_num_threads();
    let isa = crate::report::index_isa();
    let one = QueryOptions { threads: 1, isa, ..Default::default() };
    let all = QueryOptions { threads: cores, isa, ..Default::default() };
    // One buffer of lists for the flat forms, kept from call to call.
    let lists = std::cell::RefCell::new(HitLists::new());
    let times = interleaved_sustained(
        reps,
        turn,
        &mut [
            &mut || {
                for p in pts {
                    black_box(index.k_nearest(*p, 5));
                }
            },
            &mut || {
                black_box(index.k_nearest_many(pts, 5, &one));
            },
            &mut || {
                black_box(index.k_nearest_many(pts, 5, &all));
            },
            &mut || {
                black_box(index.within_many(pts, radius, &one));
            },
            &mut || {
                black_box(index.within_many(pts, radius, &all));
            },
            &mut || {
                for p in pts {
                    black_box(tree.nearest_neighbor_iter(p).take(5).count());
                }
            },
            &mut || {
                for p in pts {
                    black_box(index.within(*p, radius));
                }
            },
            &mut || {
                for p in pts {
                    black_box(tree.locate_within_distance(*p, r2).count());
                }
            },
            &mut || {
                index.k_nearest_many_into(pts, 5, &one, &mut lists.borrow_mut());
            },
            &mut || {
                index.k_nearest_many_into(pts, 5, &all, &mut lists.borrow_mut());
            },
            &mut || {
                index.within_many_into(pts, radius, &one, &mut lists.borrow_mut());
            },
            &mut || {
                index.within_many_into(pts, radius, &all, &mut lists.borrow_mut());
            },
        ],
    );
    // The flat lists are the Vec lists, bit for bit.
    let mut lists = lists.into_inner();
    let k5 = index.k_nearest_many(pts, 5, &one);
    index.k_nearest_many_into(pts, 5, &all, &mut lists);
    assert!(lists.iter().zip(&k5).all(|(f, v)| f == &v[..]) && lists.len() == n, "k = 5 flat lists");
    let within = index.within_many(pts, radius, &one);
    index.within_many_into(pts, radius, &one, &mut lists);
    assert!(lists.iter().zip(&within).all(|(f, v)| f == &v[..]) && lists.len() == n, "radius flat lists");
    out.push(record("k5_uniform", "segdist-index-unordered", n, 1, times[0], None));
    out.push(record("k5_uniform", "segdist-index", n, 1, times[1], None));
    out.push(record("k5_uniform", "segdist-index", n, cores, times[2], None));
    out.push(record("k5_uniform", "rstar", n, 1, times[5], None));
    out.push(record("radius_uniform", "segdist-index-unordered", n, 1, times[6], None));
    out.push(record("radius_uniform", "segdist-index", n, 1, times[3], None));
    out.push(record("radius_uniform", "segdist-index", n, cores, times[4], None));
    out.push(record("radius_uniform", "rstar", n, 1, times[7], None));
    out.push(record("k5_uniform", "segdist-index-into", n, 1, times[8], None));
    out.push(record("k5_uniform", "segdist-index-into", n, cores, times[9], None));
    out.push(record("radius_uniform", "segdist-index-into", n, 1, times[10], None));
    out.push(record("radius_uniform", "segdist-index-into", n, cores, times[11], None));
}

/// Linear referencing on one long polyline: segdist's `Polyline` against
/// the scan of every segment that shapely's `line_locate_point` does.
fn locate_workload(vertices: usize, n: usize, (reps, turn): (usize, f64), out: &mut Vec<Record>) {
    let mut r = ChaCha8Rng::seed_from_u64(41);
    let mut v = [0.0, 0.0];
    let mut heading = 0.0f64;
    let line: Vec<[f64; 2]> = (0..vertices)
        .map(|_| {
            heading += (r.gen::<f64>() - 0.5) * 0.5;
            v = [v[0] + heading.cos() * 10.0, v[1] + heading.sin() * 10.0];
            v
        })
        .collect();
    let pts = fixes_near(std::slice::from_ref(&line), n, 42);
    let b = build_ms(reps, || Polyline::new(&line).expect("finite"));
    let route = Polyline::new(&line).expect("finite");
    let one = QueryOptions { threads: 1, isa: crate::report::index_isa(), ..Default::default() };
    let scan_n = 20;
    // The scan: nearest segment by brute force, then the length up to it.
    let scan = |p: [f64; 2]| {
        let mut best = (0, f64::INFINITY, 0.0);
        for (i, w) in line.windows(2).enumerate() {
            let pr = Segment2::new(w[0], w[1]).closest_point(p);
            if pr.distance < best.1 {
                best = (i, pr.distance, pr.t);
            }
        }
        let along: f64 = line[..=best.0].windows(2).map(|w| Segment2::new(w[0], w[0]).distance(w[1])).sum();
        along + best.2 * Segment2::new(line[best.0], line[best.0]).distance(line[best.0 + 1])
    };
    let times = interleaved_sustained(
        reps,
        turn,
        &mut [
            &mut || {
                black_box(route.locate_many(&pts, &one));
            },
            &mut || {
                for p in &pts {
                    black_box(route.locate(*p));
                }
            },
            &mut || {
                for p in &pts[..scan_n] {
                    black_box(scan(*p));
                }
            },
            &mut || {
                for (i, _) in pts.iter().enumerate() {
                    black_box(route.point_at(i as f64 * 0.37));
                }
            },
        ],
    );
    let w = "locate_polyline_100k";
    out.push(record(w, "segdist-index", n, 1, times[0], Some(b)));
    out.push(record(w, "segdist-index-unordered", n, 1, times[1], Some(b)));
    out.push(record(w, "brute-force", scan_n, 1, times[2], None));
    out.push(record("point_at_polyline_100k", "segdist-index", n, 1, times[3], None));
}

pub fn run(quick: bool) {
    // Repetitions, and the least time each implementation's turn lasts
    // (see `interleaved_sustained`).
    let (m, n, reps) = if quick { (100_000, 100_000, (1, 0.05)) } else { (100_000, 1_000_000, (3, 1.0)) };
    let mut out = Vec::new();

    let segs = uniform_segments(m, 1);
    let pts = uniform_points(n, 2);
    nearest_workload("nearest_uniform", &segs, &pts, reps, &mut out);

    let lines = roads(3);
    let road_segs = segments_of(&lines);
    let fixes = fixes_near(&lines, n, 4);
    nearest_workload("nearest_roads", &road_segs, &fixes, reps, &mut out);

    knn_and_radius(&segs, &pts[..n.min(200_000)], 0.005, reps, &mut out);
    locate_workload(100_000, n, reps, &mut out);

    // Builder sanity: a polyline index is what the road workload would use.
    let mut b = IndexBuilder::<2>::new();
    for l in &lines {
        b.push_polyline(l);
    }
    black_box(b.build().expect("finite"));

    for r in &out {
        r.print();
    }
    table(&out);
}

/// Markdown: queries/s and the ratio to rstar per workload.
fn table(out: &[Record]) {
    eprintln!("\n| workload | impl | threads | build ms | ns/query | queries/s | × rstar throughput |");
    eprintln!("|---|---|---:|---:|---:|---:|---:|");
    for r in out {
        let base = out.iter().find(|b| b.workload == r.workload && b.imp == "rstar").map(|b| b.ns_per_query);
        let ratio = base.map_or("—".to_string(), |b| format!("{:.1}", b / r.ns_per_query));
        let build = r.extra.iter().find(|(k, _)| k == "build_ms").map_or("—".to_string(), |(_, v)| v.clone());
        eprintln!(
            "| {} | {} | {} | {} | {:.1} | {:.2} M | {} |",
            r.workload,
            r.imp,
            r.threads,
            build,
            r.ns_per_query,
            1e3 / r.ns_per_query,
            ratio
        );
    }
}

/// Peak resident memory of this process, in MB (Linux; 0 elsewhere).
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}

/// `nearest-scale`: 10 M segments, 100 M query points streamed through in
/// batches of 1 M on all cores; prints build time, index memory, throughput
/// and the peak resident memory of the whole run.
pub fn run_scale(quick: bool) {
    let (m, batches) = if quick { (1_000_000, 5) } else { (10_000_000, 100) };
    let batch = 1_000_000;
    // Segments of the uniform workload, scaled to keep its density.
    let side = (m as f64 / 100_000.0).sqrt();
    let segs: Vec<Seg> = uniform_segments(m, 11).into_iter().map(|s| s.map(|p| p.map(|c| c * side))).collect();
    let t = Instant::now();
    let index = Index2::from_segments(&segs).expect("finite");
    let build_ms = t.elapsed().as_secs_f64() * 1e3;
    drop(segs);
    let opts = QueryOptions { isa: crate::report::index_isa(), ..QueryOptions::default() };
    let mut r = ChaCha8Rng::seed_from_u64(12);
    let mut pts = vec![[0.0; 2]; batch];
    let mut found = 0usize;
    let mut query_s = 0.0;
    let mut hits = Vec::new();
    for _ in 0..batches {
        for p in &mut pts {
            *p = [r.gen::<f64>() * side, r.gen::<f64>() * side];
        }
        let t = Instant::now();
        index.nearest_many_into(&pts, &opts, &mut hits);
        query_s += t.elapsed().as_secs_f64();
        found += hits.iter().filter(|h| h.is_some()).count();
    }
    let n = batch * batches;
    assert_eq!(found, n, "every point has a nearest segment");
    let rec = Record {
        workload: "nearest_scale".to_string(),
        imp: "segdist-index",
        n,
        threads: rayon::current_num_threads(),
        ns_per_query: query_s * 1e9 / n as f64,
        extra: vec![
            ("segments".to_string(), m.to_string()),
            ("build_ms".to_string(), format!("{build_ms:.0}")),
            ("queries_per_s".to_string(), format!("{:.0}", n as f64 / query_s)),
            ("index_mb".to_string(), format!("{:.0}", index.memory_bytes() as f64 / 1e6)),
            ("bytes_per_segment".to_string(), format!("{:.1}", index.memory_bytes() as f64 / m as f64)),
            ("peak_rss_mb".to_string(), format!("{:.0}", peak_rss_mb())),
        ],
    };
    rec.print();
    eprintln!(
        "nearest_scale: {m} segments built in {build_ms:.0} ms ({:.0} MB, {:.1} B/segment); {n} points in batches of {batch}: {:.2} M queries/s; peak RSS {:.0} MB",
        index.memory_bytes() as f64 / 1e6,
        index.memory_bytes() as f64 / m as f64,
        n as f64 / query_s / 1e6,
        peak_rss_mb()
    );
}

/// `snap-data DIR [POINTS] [SEGMENTS]`: the files of the end-to-end snap
/// comparison (`scripts/snap_e2e.sh`): `points.csv` (id,x,y, uniform in the
/// unit square) and `lines.wkt` (one two-point LINESTRING per segment, the
/// `nearest_uniform` segments).
pub fn snap_data(args: &[&str]) {
    use std::io::Write;
    let dir = std::path::Path::new(args.first().copied().unwrap_or("target/snap-e2e"));
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let m: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    std::fs::create_dir_all(dir).expect("output directory");
    let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("lines.wkt")).expect("lines.wkt"));
    for s in uniform_segments(m, 1) {
        writeln!(w, "LINESTRING ({:?} {:?}, {:?} {:?})", s[0][0], s[0][1], s[1][0], s[1][1]).expect("write");
    }
    let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("points.csv")).expect("points.csv"));
    writeln!(w, "id,x,y").expect("write");
    for (i, p) in uniform_points(n, 2).iter().enumerate() {
        writeln!(w, "{i},{:?},{:?}", p[0], p[1]).expect("write");
    }
    eprintln!(
        "wrote {} ({n} points) and {} ({m} segments)",
        dir.join("points.csv").display(),
        dir.join("lines.wkt").display()
    );
}
