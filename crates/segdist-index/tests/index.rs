//! The index against brute force: every query answered by a scan of all
//! segments with segdist's accurate kernel, ranked by (distance, id), must
//! give the same feature, part, segment and the same bits. Linear
//! referencing (`index/polyline.rs`) and the `geo-types` inputs
//! (`index/geo_types.rs`) are tested in this binary too: each test binary
//! compiles the index's generic search again (a minute of CI each).

mod common;
#[path = "index/geo_types.rs"]
mod geo_types;
#[path = "index/polyline.rs"]
mod polyline;

use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist::Segment;
use segdist_index::{BuildError, Hit, HitLists, Index, IndexBuilder, QueryOptions};

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

fn point<const D: usize>(r: &mut ChaCha8Rng, scale: f64) -> [f64; D] {
    std::array::from_fn(|_| r.r#gen::<f64>() * scale)
}

/// Random segments of length up to `len` in a box of side `scale`.
fn uniform_segments<const D: usize>(r: &mut ChaCha8Rng, n: usize, scale: f64, len: f64) -> Features<D> {
    (0..n)
        .map(|_| {
            let a: [f64; D] = point(r, scale);
            let b: [f64; D] = std::array::from_fn(|k| a[k] + (r.r#gen::<f64>() - 0.5) * len);
            vec![vec![a, b]]
        })
        .collect()
}

/// Query points: uniform, near a segment, exactly on a vertex, on a segment.
fn queries<const D: usize>(r: &mut ChaCha8Rng, features: &Features<D>, n: usize, scale: f64) -> Vec<[f64; D]> {
    let mut q = Vec::new();
    for i in 0..n {
        let f = &features[r.gen_range(0..features.len())];
        let v = &f[r.gen_range(0..f.len())];
        let s = r.gen_range(0..v.len() - 1);
        let (a, b) = (v[s], v[s + 1]);
        let t: f64 = r.r#gen();
        q.push(match i % 4 {
            0 => point(r, scale),
            1 => std::array::from_fn(|k| a[k] + t * (b[k] - a[k]) + (r.r#gen::<f64>() - 0.5) * scale * 1e-9),
            2 => a,
            _ => std::array::from_fn(|k| a[k] + t * (b[k] - a[k])),
        });
    }
    q
}

#[test]
fn uniform_segments_2d_match_brute_force() {
    let mut r = rng(1);
    let features = uniform_segments::<2>(&mut r, 3000, 1.0, 0.02);
    let q = queries(&mut r, &features, 400, 1.0);
    check(&features, &q, 0.01);
}

#[test]
fn uniform_segments_3d_match_brute_force() {
    let mut r = rng(2);
    let features = uniform_segments::<3>(&mut r, 2000, 1.0, 0.05);
    let q = queries(&mut r, &features, 300, 1.0);
    check(&features, &q, 0.03);
}

/// `nearest` walks on from its descent's path (the other children of the
/// nodes on it, nearest on top over all levels): trees of one to six
/// levels, with the first leaf full or partly padding, and points inside
/// every box, on segments and far outside all of them.
#[test]
fn nearest_from_the_descent_path_matches_brute_force_at_every_depth() {
    let mut r = rng(27);
    for n in [1, 7, 8, 9, 63, 64, 65, 511, 513, 4095, 4097, 40_000] {
        let features = uniform_segments::<2>(&mut r, n, 1.0, 0.05);
        let index = build(&features);
        let mut q = queries(&mut r, &features, 120, 1.0);
        q.extend([[-5.0, -5.0], [7.0, 0.5], [0.5, 1e6]]);
        for p in q {
            let all = all_hits(&features, p);
            let got: Vec<Hit<2>> = index.nearest(p).into_iter().collect();
            same(&got, &all[..1], &format!("nearest, {n} segments"), p);
        }
    }
}

/// Road-network-like: random-walk polylines of many short segments, some
/// long, a dense junction where many lines meet, multi-part features, at
/// UTM-sized coordinates.
fn roads(r: &mut ChaCha8Rng) -> Features<2> {
    let origin = [385_000.0, 6_672_000.0];
    let mut features = Vec::new();
    let junction = [origin[0] + 500.0, origin[1] + 500.0];
    for f in 0..150 {
        let mut parts = Vec::new();
        for _ in 0..1 + f % 3 {
            let mut v = if f % 5 == 0 {
                junction
            } else {
                [origin[0] + r.r#gen::<f64>() * 1000.0, origin[1] + r.r#gen::<f64>() * 1000.0]
            };
            let mut heading: f64 = r.r#gen::<f64>() * std::f64::consts::TAU;
            let mut line = vec![v];
            let n = if f % 7 == 0 { 200 } else { r.gen_range(1..20) };
            for _ in 0..n {
                heading += (r.r#gen::<f64>() - 0.5) * 0.8;
                let step = if r.gen_bool(0.1) { 0.0 } else { r.r#gen::<f64>() * 15.0 };
                v = [v[0] + step * heading.cos(), v[1] + step * heading.sin()];
                line.push(v);
            }
            parts.push(line);
        }
        features.push(parts);
    }
    features
}

#[test]
fn road_network_matches_brute_force() {
    let mut r = rng(3);
    let features = roads(&mut r);
    let mut q = queries(&mut r, &features, 400, 1.0);
    // Around the junction, where many segments are nearly equidistant.
    for _ in 0..100 {
        q.push([385_500.0 + (r.r#gen::<f64>() - 0.5) * 1e-6, 6_672_500.0 + (r.r#gen::<f64>() - 0.5) * 1e-6]);
    }
    for p in q.iter_mut().step_by(4) {
        p[0] = 385_000.0 + p[0] * 1000.0;
        p[1] = 6_672_000.0 + p[1] * 1000.0;
    }
    check(&features, &q, 20.0);
}

#[test]
fn duplicate_and_zero_length_segments_and_exact_ties_go_to_the_lowest_id() {
    let mut features: Features<2> = Vec::new();
    // Parallel unit segments at integer heights, each twice, plus points
    // (zero-length segments) on the half-integer lines.
    for i in 0..20 {
        let y = f64::from(i);
        features.push(vec![vec![[0.0, y], [10.0, y]]]);
        features.push(vec![vec![[0.0, y], [10.0, y]]]);
        features.push(vec![vec![[5.0, y + 0.5], [5.0, y + 0.5]]]);
        features.push(vec![vec![[10.0, y], [0.0, y]]]); // reversed
    }
    // One polyline that runs over the same ground again.
    features.push(vec![vec![[0.0, 3.0], [10.0, 3.0], [0.0, 3.0], [0.0, 3.0]]]);
    let mut q = Vec::new();
    for i in 0..20 {
        for x in [0.0, 2.5, 5.0, 10.0, 12.0] {
            q.push([x, f64::from(i) + 0.5]); // equidistant between two heights
            q.push([x, f64::from(i)]);
        }
    }
    let index = build(&features);
    // Exactly between heights 0 and 1: feature 0 (not 1, 3, 4 or 7) wins.
    let hit = index.nearest([2.5, 0.5]).unwrap();
    assert_eq!((hit.feature, hit.distance), (0, 0.5));
    check(&features, &q, 0.5);
}

/// Near ties the fast kernel cannot resolve: overlapping, nearly collinear
/// segments at UTM-sized coordinates, a few ulps apart, with queries within
/// nanometres of them. Every search shortcut that trusts the fast distance
/// beyond its error bound picks a wrong segment here.
#[test]
fn near_ties_at_utm_coordinates_match_brute_force() {
    let mut r = rng(9);
    let o = [500_000.123, 6_700_000.456];
    let ulp = 1.0 / f64::from(1 << 30); // 2^-30 ≈ 0.93e-9, the ulp of 6.7e6
    let mut features: Features<2> = Vec::new();
    for i in 0..300 {
        let x0 = o[0] + f64::from(i % 60) * 3.0 + r.r#gen::<f64>();
        let len = 5.0 + r.r#gen::<f64>() * 20.0;
        let y0 = o[1] + f64::from(r.gen_range(-4i32..=4)) * ulp;
        let y1 = o[1] + f64::from(r.gen_range(-4i32..=4)) * ulp;
        features.push(vec![vec![[x0, y0], [x0 + len, y1]]]);
    }
    let q: Vec<[f64; 2]> =
        (0..2000).map(|_| [o[0] + r.r#gen::<f64>() * 200.0, o[1] + f64::from(r.gen_range(-6i32..=6)) * ulp]).collect();
    check(&features, &q, 3.0 * ulp);
}

#[test]
fn extreme_magnitudes_match_brute_force() {
    let mut r = rng(4);
    for scale in [1e-300, 1e-160, 1e160, 1e300] {
        let features = uniform_segments::<2>(&mut r, 300, scale, 0.05 * scale);
        let q = queries(&mut r, &features, 100, scale);
        check(&features, &q, 0.01 * scale);
    }
    // Mixed: tiny segments near the origin and huge ones far away.
    let mut features = uniform_segments::<2>(&mut r, 200, 1e-200, 1e-202);
    features.extend(uniform_segments::<2>(&mut r, 200, 1e250, 1e248));
    let q = queries(&mut r, &features, 200, 1e-200);
    check(&features, &q, 1e-201);
}

#[test]
fn runner_up_bounds_are_useful_where_answers_are_clear() {
    // Uniform queries over uniform segments: most answers win by a clear
    // margin, and the bound says so for most of them.
    let mut r = rng(12);
    let features = uniform_segments::<2>(&mut r, 20_000, 1.0, 0.01);
    let index = build(&features);
    let q: Vec<[f64; 2]> = (0..20_000).map(|_| point(&mut r, 1.0)).collect();
    let with = index.nearest_many_with_runner_up(&q, &QueryOptions::default());
    let clear = with.iter().flatten().filter(|(h, up)| *up > h.distance).count();
    assert!(clear * 10 >= q.len() * 7, "only {clear} of {} certified", q.len());
}

#[test]
fn batches_match_single_queries_over_several_chunks() {
    let mut r = rng(5);
    let features = uniform_segments::<2>(&mut r, 5000, 1.0, 0.01);
    let q: Vec<[f64; 2]> = (0..6000).map(|_| point(&mut r, 1.2)).collect();
    let index = build(&features);
    let want: Vec<Option<Hit<2>>> = q.iter().map(|&p| index.nearest_within(p, 0.02)).collect();
    for (isa, threads) in isas().into_iter().flat_map(|isa| [(isa, 1), (isa, 2), (isa, 3)]) {
        let got = index.nearest_many(&q, &QueryOptions { threads, max_distance: 0.02, isa });
        assert_eq!(
            got.iter().map(|h| h.map(|h| bits(&h))).collect::<Vec<_>>(),
            want.iter().map(|h| h.map(|h| bits(&h))).collect::<Vec<_>>(),
            "{isa:?}, {threads} threads"
        );
    }
    assert!(want.iter().any(Option::is_none) && want.iter().any(Option::is_some));
}

/// Ten segments to a point: neighbouring points lie too far apart for
/// groups of several to share their candidates: groups fail, their points
/// are searched alone, and the groups shrink and grow again. Every point
/// must still get the single query's answer, in its place.
#[test]
fn sparse_batches_whose_groups_fail_match_single_queries() {
    let mut r = rng(27);
    let features = uniform_segments::<2>(&mut r, 40_000, 0.63, 0.01);
    let q: Vec<[f64; 2]> = (0..4000).map(|_| point(&mut r, 0.63)).collect();
    let index = build(&features);
    let want: Vec<Option<Hit<2>>> = q.iter().map(|&p| index.nearest(p)).collect();
    for (isa, threads) in isas().into_iter().flat_map(|isa| [(isa, 1), (isa, 2)]) {
        let got = index.nearest_many(&q, &QueryOptions { threads, isa, ..QueryOptions::default() });
        assert_eq!(
            got.iter().map(|h| h.map(|h| bits(&h))).collect::<Vec<_>>(),
            want.iter().map(|h| h.map(|h| bits(&h))).collect::<Vec<_>>(),
            "{isa:?}, {threads} threads"
        );
    }
}

/// Where a group's candidates are gathered within a guess from the last
/// group (how far its points lay from their segments), a point whose
/// answer may lie beyond it is searched alone. Clusters of short segments
/// with empty country between, and points that run from on the segments
/// (a guess of almost nothing) out into the empty country (no candidate
/// within the guess, or only some): every point the single query's
/// answer, with and without a limit.
#[test]
fn batches_with_guessed_reaches_match_single_queries() {
    let mut r = rng(28);
    let mut features: Features<2> = Vec::new();
    for cluster in 0..6 {
        let c = [0.2 + 0.3 * f64::from(cluster % 3), 0.3 + 0.4 * f64::from(cluster / 3)];
        features.extend(
            uniform_segments::<2>(&mut r, 3000, 0.05, 0.002)
                .into_iter()
                .map(|f| f.into_iter().map(|v| v.into_iter().map(|p| [p[0] + c[0], p[1] + c[1]]).collect()).collect()),
        );
    }
    let index = build(&features);
    let mut q: Vec<[f64; 2]> = Vec::new();
    for i in 0..12_000 {
        q.push(match i % 3 {
            // On a segment's end: distance zero.
            0 => features[r.gen_range(0..features.len())][0][0],
            1 => point(&mut r, 1.0),
            _ => {
                let f = &features[r.gen_range(0..features.len())][0];
                std::array::from_fn(|k| f[0][k] + (r.r#gen::<f64>() - 0.5) * 0.01)
            }
        });
    }
    for limit in [f64::INFINITY, 0.05] {
        let want: Vec<Option<Hit<2>>> = q.iter().map(|&p| index.nearest_within(p, limit)).collect();
        for (isa, threads) in isas().into_iter().flat_map(|isa| [(isa, 1), (isa, 2)]) {
            let got = index.nearest_many(&q, &QueryOptions { threads, max_distance: limit, isa });
            assert_eq!(
                got.iter().map(|h| h.map(|h| bits(&h))).collect::<Vec<_>>(),
                want.iter().map(|h| h.map(|h| bits(&h))).collect::<Vec<_>>(),
                "limit {limit}, {isa:?}, {threads} threads"
            );
        }
    }
    // The k-nearest batches gather within a guess too (twice the farthest
    // k-th distance of the group before), a point whose k-th candidate is
    // not surely within it searched alone: the single queries' lists, bit
    // for bit. (Counted in a scratch copy, over the six batches: 3,159
    // groups gathered within a guess, 2,179 points searched alone for a
    // k-th beyond it; a point with no candidate within the guess at all,
    // answered with none, was the bug this caught.)
    for (k, limit) in [(1, f64::INFINITY), (5, f64::INFINITY), (5, 0.05)] {
        let want: Vec<Vec<_>> =
            q.iter().map(|&p| index.k_nearest_within(p, k, limit).iter().map(bits).collect()).collect();
        for (isa, threads) in isas().into_iter().flat_map(|isa| [(isa, 1), (isa, 2)]) {
            let got = index.k_nearest_many(&q, k, &QueryOptions { threads, max_distance: limit, isa });
            let got: Vec<Vec<_>> = got.iter().map(|l| l.iter().map(bits).collect()).collect();
            if let Some(i) = (0..q.len()).find(|&i| got[i] != want[i]) {
                panic!(
                    "k {k}, limit {limit}, {isa:?}, {threads} threads: at {:?}, {:?} against {:?}",
                    q[i], got[i], want[i]
                );
            }
        }
    }
    // With runner-up bounds (the group scanned point by point, within the
    // reach, never a guess: a guess caps the bounds, and where points lie on
    // their segments it is almost nothing): the same answers, each bound at
    // most the second-nearest distance, and most of them above the answer.
    let with = index.nearest_many_with_runner_up(&q, &QueryOptions::default());
    let mut bounded = 0;
    for (p, w) in q.iter().zip(&with) {
        let two = index.k_nearest(*p, 2);
        let (hit, up) = w.expect("a nearest segment");
        assert_eq!(bits(&hit), bits(&two[0]), "at {p:?}");
        assert!(up >= 0.0 && up <= two[1].distance, "runner-up {up} > {} at {p:?}", two[1].distance);
        bounded += usize::from(up > hit.distance);
    }
    assert!(bounded * 2 > q.len(), "only {bounded} bounds above the answer");
}

/// The last leaf's unused lanes hold padding segments at the origin: with
/// the real segments away from it and the queries around it, a search that
/// let one in would answer with a segment that does not exist.
#[test]
fn padding_lanes_are_never_answers() {
    // 11 segments: the second leaf of eight has five padding lanes.
    let features: Features<2> = (0..11).map(|i| vec![vec![[-1.0, 1.0 + 0.01 * i as f64], [1.0, 1.0]]]).collect();
    let index = build(&features);
    let q: Vec<[f64; 2]> = (0..400).map(|i| [0.01 * (i % 20) as f64 - 0.1, 0.01 * (i / 20) as f64 - 0.1]).collect();
    for threads in [1, 2] {
        let got = index.nearest_many(&q, &QueryOptions { threads, ..Default::default() });
        for (p, h) in q.iter().zip(&got) {
            let want = all_hits(&features, *p)[0];
            assert_eq!(h.map(|h| bits(&h)), Some(bits(&want)), "at {p:?}");
        }
    }
}

/// A node whose only real child is the last leaf: the rest of its lanes
/// are padding boxes at `+inf`, never to be taken for leaves (the single
/// query's descent asks for the next nearest leaf ahead of its scan: never
/// one of them, past the last leaf).
#[test]
fn a_last_node_with_one_real_leaf_is_searched_without_its_padding() {
    // 64 segments in a unit square and one far away, at a corner of the
    // whole box (one of them last on the curve): nine leaves, the far one
    // alone in the last, the second node of the leaves' level holding it
    // and seven padding boxes; queries about the far segment descend there.
    let mut r = ChaCha8Rng::seed_from_u64(31);
    let near: Vec<[[f64; 2]; 2]> = (0..64)
        .map(|_| {
            let a = [r.gen_range(0.0..1.0), r.gen_range(0.0..1.0)];
            [a, [a[0] + 0.01, a[1]]]
        })
        .collect();
    for far in [[100.0, 0.0], [100.0, 1.0], [0.0, 100.0], [1.0, 100.0], [100.0, 100.0]] {
        let features: Features<2> =
            near.iter().map(|s| vec![s.to_vec()]).chain([vec![vec![far, [far[0] + 0.5, far[1]]]]]).collect();
        let index = build(&features);
        for q in 0..20 {
            let p = [far[0] + 0.05 * f64::from(q) - 0.3, far[1] + 0.1];
            let all = all_hits(&features, p);
            assert_eq!(index.nearest(p).map(|h| bits(&h)), Some(bits(&all[0])), "{far:?} at {p:?}");
            let two: Vec<_> = index.k_nearest(p, 2).iter().map(bits).collect();
            assert_eq!(two, all[..2].iter().map(bits).collect::<Vec<_>>(), "{far:?} at {p:?}");
        }
    }
}

#[test]
fn non_finite_input_is_rejected_with_its_position() {
    let mut b = IndexBuilder::<3>::new();
    b.push_segment([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]);
    b.push_multi_polyline([
        &[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]][..],
        &[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, f64::NEG_INFINITY, 0.0]][..],
    ]);
    assert_eq!(b.build().unwrap_err(), BuildError::NonFinite { feature: 1, part: 1, vertex: 2 });

    let mut b = IndexBuilder::<2>::new();
    b.push_polyline::<f64>(&[]);
    assert_eq!(b.build().unwrap_err(), BuildError::TooFewVertices { feature: 0, part: 0, vertices: 0 });
    assert_eq!(
        BuildError::NonFinite { feature: 1, part: 1, vertex: 2 }.to_string(),
        "feature 1, part 1, vertex 2: a coordinate is not finite"
    );
}

#[test]
fn empty_index_and_empty_features_find_nothing() {
    let index = IndexBuilder::<2>::new().build().unwrap();
    assert!(index.is_empty());
    assert!(index.nearest([0.0, 0.0]).is_none());
    assert!(index.k_nearest([0.0, 0.0], 4).is_empty());
    assert!(index.within([0.0, 0.0], f64::INFINITY).is_empty());
    assert_eq!(index.nearest_many(&[[0.0, 0.0]], &QueryOptions::default()), vec![None]);
    let many = vec![[0.5, 0.5]; 50];
    assert!(index.k_nearest_many(&many, 3, &QueryOptions::default()).iter().all(Vec::is_empty));
    assert!(index.within_many(&many, 1.0, &QueryOptions::default()).iter().all(Vec::is_empty));
    assert!(index.within_many(&[], 1.0, &QueryOptions::default()).is_empty());

    // A feature without parts takes an id but is never found.
    let mut b = IndexBuilder::<2>::new();
    let none = b.push_multi_polyline(Vec::<Vec<[f64; 2]>>::new());
    let one = b.push_segment([0.0, 0.0], [1.0, 0.0]);
    let index = b.build().unwrap();
    assert_eq!((none, one, index.len()), (0, 1, 1));
    assert_eq!(index.nearest([0.0, 5.0]).unwrap().feature, 1);
}

#[test]
fn bad_query_arguments_find_nothing() {
    let index = Index::<2>::from_segments(&[[[0.0, 0.0], [1.0, 0.0]]]).unwrap();
    for p in [[f64::NAN, 0.0], [0.0, f64::INFINITY], [f64::NEG_INFINITY, 1.0]] {
        assert!(index.nearest(p).is_none());
        assert!(index.k_nearest(p, 2).is_empty());
        assert!(index.within(p, 1.0).is_empty());
    }
    assert!(index.nearest_within([0.0, 0.0], -1.0).is_none());
    assert!(index.nearest_within([0.0, 0.0], f64::NAN).is_none());
    assert!(index.within([0.0, 0.0], f64::NAN).is_empty());
    assert!(index.k_nearest([0.0, 0.0], 0).is_empty());
    // Radius zero: only segments through the point.
    assert_eq!(index.within([0.5, 0.0], 0.0).len(), 1);
    assert!(index.within([0.5, 1e-300], 0.0).is_empty());

    // The batch forms, with the same arguments (and enough points to form
    // groups), answer as the single calls.
    let opts = QueryOptions::default();
    let mut pts: Vec<[f64; 2]> = (0..100).map(|i| [0.01 * f64::from(i), 0.5]).collect();
    pts.extend([[f64::NAN, 0.0], [0.0, f64::INFINITY], [0.5, 0.0], [0.5, 1e-300]]);
    let mut none: Vec<Option<segdist_index::Hit<2>>> = Vec::new();
    index.nearest_many_to(&[], &opts, Answers(&mut none[..]));
    index.nearest_many_to(&pts, &opts, Answers(&mut none[..]));
    for radius in [-1.0, f64::NAN, 0.0, 0.3, f64::INFINITY] {
        let want: Vec<Vec<_>> = pts.iter().map(|p| index.within(*p, radius).iter().map(bits).collect()).collect();
        let got: Vec<Vec<_>> =
            index.within_many(&pts, radius, &opts).iter().map(|h| h.iter().map(bits).collect()).collect();
        assert_eq!(got, want, "radius {radius}");
    }
    for (k, max) in [(0, f64::INFINITY), (2, f64::INFINITY), (2, -1.0), (2, f64::NAN), (3, 0.3)] {
        let want: Vec<Vec<_>> =
            pts.iter().map(|p| index.k_nearest_within(*p, k, max).iter().map(bits).collect()).collect();
        let opts = QueryOptions { max_distance: max, ..opts };
        let got: Vec<Vec<_>> =
            index.k_nearest_many(&pts, k, &opts).iter().map(|h| h.iter().map(bits).collect()).collect();
        assert_eq!(got, want, "k {k} within {max}");
        let mut flat = HitLists::new();
        index.k_nearest_many_into(&pts, k, &opts, &mut flat);
        let got: Vec<Vec<_>> = flat.iter().map(|h| h.iter().map(bits).collect()).collect();
        assert_eq!(got, want, "k {k} within {max}, flat");
    }
    for radius in [-1.0, f64::NAN, 0.0, 0.3, f64::INFINITY] {
        let want: Vec<Vec<_>> = pts.iter().map(|p| index.within(*p, radius).iter().map(bits).collect()).collect();
        let mut flat = HitLists::new();
        index.within_many_into(&pts, radius, &opts, &mut flat);
        let got: Vec<Vec<_>> = flat.iter().map(|h| h.iter().map(bits).collect()).collect();
        assert_eq!(got, want, "radius {radius}, flat");
    }
    let mut flat = HitLists::new();
    index.within_many_into(&pts, 1.0, &opts, &mut flat);
    index.within_many_into(&[], 1.0, &opts, &mut flat);
    assert!(flat.is_empty() && flat.hits().is_empty() && flat.offsets() == [0]);
}

/// The flat lists are gathered from runs of points along the curve, a few a
/// worker: on any number of workers, and with more runs than workers, each
/// point's list is the `Vec` form's, in input order.
#[test]
fn flat_lists_answer_as_the_vec_lists_on_every_number_of_workers() {
    let mut r = rng(61);
    let segs: Vec<[[f64; 2]; 2]> = (0..3_000)
        .map(|_| {
            let a = [r.r#gen::<f64>(), r.r#gen::<f64>()];
            [a, [a[0] + 0.02 * r.r#gen::<f64>(), a[1] + 0.02 * r.r#gen::<f64>()]]
        })
        .collect();
    let index = Index::<2>::from_segments(&segs).unwrap();
    // 20,000 points in runs of 4,096 or so: several a worker, the last short.
    let pts: Vec<[f64; 2]> = (0..20_000).map(|_| [r.r#gen::<f64>(), r.r#gen::<f64>()]).collect();
    let want_k = index.k_nearest_many(&pts, 4, &QueryOptions { threads: 1, ..Default::default() });
    let want_r = index.within_many(&pts, 0.02, &QueryOptions { threads: 1, ..Default::default() });
    assert!(want_r.iter().map(Vec::len).sum::<usize>() > 20_000);
    let mut flat = HitLists::new();
    for threads in [1, 2, 3, 0] {
        let opts = QueryOptions { threads, ..Default::default() };
        index.k_nearest_many_into(&pts, 4, &opts, &mut flat);
        assert!(flat.len() == pts.len() && flat.iter().zip(&want_k).all(|(f, w)| f == &w[..]), "{threads}");
        index.within_many_into(&pts, 0.02, &opts, &mut flat);
        assert!(flat.len() == pts.len() && flat.iter().zip(&want_r).all(|(f, w)| f == &w[..]), "{threads}");
    }
}

#[test]
fn f32_input_is_widened_exactly() {
    let a = [0.1f32, 0.2];
    let b = [0.7f32, 0.3];
    let index = Index::<2>::from_segments(&[[a, b]]).unwrap();
    let p = [0.5, 0.9];
    let want = Segment::new(a.map(f64::from), b.map(f64::from)).closest_point(p);
    assert_eq!(index.nearest(p).unwrap().distance, want.distance);
}

#[test]
fn memory_per_segment_is_as_documented() {
    let mut r = rng(6);
    let lines: Vec<Vec<[f64; 2]>> = (0..100).map(|_| (0..1001).map(|_| point(&mut r, 1.0)).collect()).collect();
    let index = Index::<2>::from_polylines(&lines).unwrap();
    let per = index.memory_bytes() as f64 / index.len() as f64;
    assert!((82.0..=87.0).contains(&per), "{per} bytes per segment in 2D");
    let lines: Vec<Vec<[f64; 3]>> = (0..100).map(|_| (0..1001).map(|_| point(&mut r, 1.0)).collect()).collect();
    let index = Index::<3>::from_polylines(&lines).unwrap();
    let per = index.memory_bytes() as f64 / index.len() as f64;
    assert!((116.0..=122.0).contains(&per), "{per} bytes per segment in 3D");
}

/// Where every point has exactly k answers (finite points, no limit, at
/// least k segments), the k-nearest lists are written straight to their
/// places in input order; elsewhere (a NaN point, a limit, fewer segments
/// than k) they take the general way. Both give the single queries'
/// answers, bit for bit, in 2D and 3D (answers of 64 and 72 bytes), on one
/// worker and on all, into lists used again and into fresh ones.
#[test]
fn k_nearest_lists_in_place_match_single_queries_in_2d_and_3d() {
    fn check<const D: usize>(seed: u64) {
        let mut r = rng(seed);
        let features = uniform_segments::<D>(&mut r, 2_000, 1.0, 0.05);
        let index = build(&features);
        let mut pts: Vec<[f64; D]> = (0..5_000).map(|_| point(&mut r, 1.0)).collect();
        let mut flat = HitLists::new();
        for (k, max, nan) in
            [(1, f64::INFINITY, false), (5, f64::INFINITY, false), (7, 0.05, false), (5, f64::INFINITY, true)]
        {
            if nan {
                pts[1234][0] = f64::NAN;
            }
            let want: Vec<Vec<_>> =
                pts.iter().map(|p| index.k_nearest_within(*p, k, max).iter().map(bits).collect()).collect();
            for threads in [1, 0] {
                let opts = QueryOptions { threads, max_distance: max, ..Default::default() };
                for mut lists in [HitLists::new(), std::mem::take(&mut flat)] {
                    index.k_nearest_many_into(&pts, k, &opts, &mut lists);
                    let got: Vec<Vec<_>> = lists.iter().map(|h| h.iter().map(bits).collect()).collect();
                    assert_eq!(got, want, "{D}D k {k} within {max}, NaN {nan}, {threads} threads");
                    assert_eq!(lists.hits().len(), lists.offsets()[pts.len()]);
                    flat = lists;
                }
            }
        }
        // Fewer segments than k: every list holds them all.
        let two = build(&features[..2].to_vec());
        two.k_nearest_many_into(&pts[..100], 3, &QueryOptions::default(), &mut flat);
        assert!(flat.len() == 100 && flat.iter().all(|l| l.len() == 2));
        for (i, l) in flat.iter().enumerate() {
            assert_eq!(
                l.iter().map(bits).collect::<Vec<_>>(),
                two.k_nearest(pts[i], 3).iter().map(bits).collect::<Vec<_>>()
            );
        }
    }
    check::<2>(71);
    check::<3>(72);
}
