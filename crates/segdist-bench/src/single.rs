//! `single`: one query at a time, as game loops and interactive tools ask
//! them: segdist-index's `nearest`, `k_nearest` (k = 5) and `within`
//! against rstar's `nearest_neighbor`, `nearest_neighbor_iter().take(5)` and
//! `locate_within_distance`, at every size from 10,000 to 10,000,000
//! segments (issue 27's target: at least 2× rstar at each).
//!
//! The segments are the `nearest` bench's (length 0.001–0.01, uniform),
//! their square grown with their number so that the density, and so the
//! work a query does near its answer, stays that of 100,000 in the unit
//! square; 100,000 uniform query points (20,000 with `--quick`) in random
//! order, so every query starts cold in the tree as a lone query does.
//!
//! Beside them, at each size, the batch: `nearest_many_into` on one thread
//! over 1,000,000 uniform points (200,000 with `--quick`) of the same
//! square, against rstar's `nearest_neighbor` one by one (rstar has no batch
//! query): issue 27's batch targets (15× at 1 M segments, 10× at 10 M).
//! With the points fewer than the segments, neighbouring points lie
//! farther apart than the segments do: the sparse case.

use std::hint::black_box;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rstar::primitives::{GeomWithData, Line as RLine};
use rstar::{PointDistance, RTree};
use segdist_index::{Index2, QueryOptions};

use crate::report::{interleaved_sustained, Record};

type RItem = GeomWithData<RLine<[f64; 2]>, usize>;

/// The radius of the `within` queries: about 13 segments each, as in the
/// `nearest` bench.
const RADIUS: f64 = 0.005;

/// `m` segments at the density of 100,000 in the unit square, and `n`
/// points over the same square.
fn data(m: usize, n: usize, seed: u64) -> (Vec<[[f64; 2]; 2]>, Vec<[f64; 2]>) {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let side = (m as f64 / 100_000.0).sqrt();
    let segs = (0..m)
        .map(|_| {
            let a = [r.gen::<f64>() * side, r.gen::<f64>() * side];
            let len = 0.001 + 0.009 * r.gen::<f64>();
            let th = r.gen::<f64>() * std::f64::consts::TAU;
            [a, [a[0] + len * th.cos(), a[1] + len * th.sin()]]
        })
        .collect();
    let pts = (0..n).map(|_| [r.gen::<f64>() * side, r.gen::<f64>() * side]).collect();
    (segs, pts)
}

/// `n` uniform points over the square of `m` segments (see [`data`]).
fn points(m: usize, n: usize, seed: u64) -> Vec<[f64; 2]> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let side = (m as f64 / 100_000.0).sqrt();
    (0..n).map(|_| [r.gen::<f64>() * side, r.gen::<f64>() * side]).collect()
}

/// Runs the workload and prints JSON lines (stdout) and a table (stderr).
pub fn run(quick: bool) {
    let sizes: &[usize] = if quick { &[10_000, 100_000] } else { &[10_000, 100_000, 1_000_000, 10_000_000] };
    let n = if quick { 20_000 } else { 100_000 };
    let (reps, turn) = if quick { (3, 0.1) } else { (3, 0.5) };
    let mut rows = Vec::new();
    for &m in sizes {
        let (segs, pts) = data(m, n, 27);
        let nb = if quick { 200_000 } else { 1_000_000 };
        let bpts = points(m, nb, 28);
        let one = QueryOptions { threads: 1, isa: crate::report::index_isa(), ..QueryOptions::default() };
        let mut answers = Vec::new();
        let index = Index2::from_segments(&segs).expect("finite");
        let tree: RTree<RItem> = RTree::bulk_load(
            segs.iter().enumerate().map(|(i, s)| GeomWithData::new(RLine::new(s[0], s[1]), i)).collect(),
        );
        // The same answers first: the nearest distance (rstar's, from the
        // textbook formula, off by up to some 1e-16 of the coordinates).
        let side = (m as f64 / 100_000.0).sqrt().max(1.0);
        for p in pts.iter().take(1000) {
            let ours = index.nearest(*p).expect("a segment").distance;
            let theirs = tree.nearest_neighbor(p).expect("a segment").distance_2(p).sqrt();
            assert!((ours - theirs).abs() <= 1e-12 * side, "{m}: {ours} against rstar's {theirs}");
        }
        // The batch's answers are the single queries', bit for bit.
        index.nearest_many_into(&bpts[..1000], &one, &mut answers);
        for (p, a) in bpts.iter().zip(&answers) {
            assert_eq!(*a, index.nearest(*p), "{m}: the batch and the single query differ at {p:?}");
        }
        let times = interleaved_sustained(
            reps,
            turn,
            &mut [
                &mut || {
                    for p in &pts {
                        black_box(index.nearest(*p));
                    }
                },
                &mut || {
                    for p in &pts {
                        black_box(tree.nearest_neighbor(p));
                    }
                },
                &mut || {
                    for p in &pts {
                        black_box(index.k_nearest(*p, 5));
                    }
                },
                &mut || {
                    for p in &pts {
                        black_box(tree.nearest_neighbor_iter(p).take(5).count());
                    }
                },
                &mut || {
                    for p in &pts {
                        black_box(index.within(*p, RADIUS));
                    }
                },
                &mut || {
                    for p in &pts {
                        black_box(tree.locate_within_distance(*p, RADIUS * RADIUS).count());
                    }
                },
                &mut || {
                    index.nearest_many_into(&bpts, &one, &mut answers);
                    black_box(&answers);
                },
            ],
        );
        for (i, (query, imp)) in [
            ("nearest", "segdist-index"),
            ("nearest", "rstar"),
            ("k5", "segdist-index"),
            ("k5", "rstar"),
            ("within", "segdist-index"),
            ("within", "rstar"),
        ]
        .into_iter()
        .enumerate()
        {
            let ns = times[i] * 1e9 / n as f64;
            let rec = Record {
                workload: format!("single_{query}_{m}"),
                imp,
                n,
                threads: 1,
                ns_per_query: ns,
                extra: vec![("segments".to_string(), m.to_string())],
            };
            rec.print();
            rows.push((m, query, imp, ns));
        }
        // The batch, per query, against rstar's single `nearest` (times[1]).
        let ns = times[6] * 1e9 / nb as f64;
        Record {
            workload: format!("batch_nearest_{m}"),
            imp: "segdist-index",
            n: nb,
            threads: 1,
            ns_per_query: ns,
            extra: vec![("segments".to_string(), m.to_string())],
        }
        .print();
        rows.push((m, "nearest_many_into, 1 thread", "segdist-index", ns));
        rows.push((m, "nearest_many_into, 1 thread", "rstar", times[1] * 1e9 / n as f64));
    }
    eprintln!("\n| segments | query | segdist-index | rstar 0.12 | × rstar |");
    eprintln!("|---:|---|---:|---:|---:|");
    for pair in rows.chunks(2) {
        let ((m, query, _, ours), (_, _, _, theirs)) = (pair[0], pair[1]);
        eprintln!("| {m} | {query} | {ours:.0} ns | {theirs:.0} ns | {:.2} |", theirs / ours);
    }
}
