//! The batch layer against the scalar methods, bit for bit: every
//! instruction set this CPU has, both tiers, segment and line, all outputs or
//! distance only, 2D and 3D, f64 and f32, every adversarial family; and the
//! same results whatever the thread count or input layout.

// Tests index several parallel arrays by query number.
#![allow(clippy::needless_range_loop)]

mod common;

use common::*;
use segdist::batch::{self, BatchError, Options, Outputs, Points, Tier};
use segdist::{Line, Region, Segment};

/// A family's name and its queries as three columns of vertices and points.
type Family<const D: usize> = (&'static str, Vec<[f64; D]>, Vec<[f64; D]>, Vec<[f64; D]>);

fn families<const D: usize>(n: usize) -> Vec<Family<D>> {
    FAMILIES
        .iter()
        .map(|f| {
            let seed = std::env::var("SEGDIST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(31337);
            let cases = generate::<D>(f, seed, n);
            (
                *f,
                cases.iter().map(|c| c.0).collect(),
                cases.iter().map(|c| c.1).collect(),
                cases.iter().map(|c| c.2).collect(),
            )
        })
        .collect()
}

fn bit_identical<const D: usize>() {
    // SEGDIST_SWEEP=N multiplies the cases, SEGDIST_SEED changes them.
    let k: usize = std::env::var("SEGDIST_SWEEP").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let fams = families::<D>(300 * k);
    for isa in isas() {
        for tier in [Tier::Accurate, Tier::Fast] {
            for line in [false, true] {
                let opts = Options { line, tier, threads: Some(1), isa };
                for (fam, a, b, p) in &fams {
                    check_pairs(a, b, p, &opts, fam);
                    let a32: Vec<[f32; D]> = a.iter().map(|v| v.map(|x| x as f32)).collect();
                    let b32: Vec<[f32; D]> = b.iter().map(|v| v.map(|x| x as f32)).collect();
                    let p32: Vec<[f32; D]> = p.iter().map(|v| v.map(|x| x as f32)).collect();
                    check_pairs(&a32, &b32, &p32, &opts, fam);
                }
            }
        }
    }
}

#[test]
fn every_isa_matches_scalar_bit_for_bit_2d() {
    bit_identical::<2>();
}

#[test]
fn every_isa_matches_scalar_bit_for_bit_3d() {
    bit_identical::<3>();
}

/// Calls of one to nine pairs (the index's few candidates of one query;
/// up to eight go through one AVX-512 register, not two): every family in
/// such calls, every instruction set, both tiers, segment and line, 2D and
/// 3D, against the scalar methods bit for bit.
#[test]
fn short_calls_match_scalar_bit_for_bit() {
    fn short<const D: usize>() {
        for isa in isas() {
            for tier in [Tier::Accurate, Tier::Fast] {
                for line in [false, true] {
                    let opts = Options { line, tier, threads: Some(1), isa };
                    for (fam, a, b, p) in &families::<D>(90) {
                        let (mut at, mut len) = (0, 1);
                        while at < p.len() {
                            let end = (at + len).min(p.len());
                            check_pairs(&a[at..end], &b[at..end], &p[at..end], &opts, fam);
                            (at, len) = (end, len % 9 + 1);
                        }
                    }
                }
            }
        }
    }
    short::<2>();
    short::<3>();
}

#[test]
fn one_to_many_matches_pairs() {
    for isa in isas() {
        for (fam, a, b, p) in families::<2>(200) {
            let opts = Options { isa, threads: Some(1), ..Options::default() };
            for s in 0..3 {
                let r = batch::project(a[s], b[s], &p, &opts).unwrap();
                for i in 0..p.len() {
                    let e = Segment::new(a[s], b[s]).closest_point(p[i]);
                    assert!(same(r.distance[i], e.distance) && same(r.t[i], e.t), "{fam} {isa:?}");
                    assert_eq!(r.region[i], e.region);
                }
            }
        }
    }
}

#[test]
fn threads_and_layouts_do_not_change_results() {
    let cases = generate::<2>("uniform", 5, 100_003);
    let p: Vec<[f64; 2]> = cases.iter().map(|c| c.2).collect();
    let xs: Vec<f64> = p.iter().map(|v| v[0]).collect();
    let ys: Vec<f64> = p.iter().map(|v| v[1]).collect();
    let (a, b) = ([0.25, 0.5], [0.75, 0.625]);
    let run = |threads: Option<usize>, cols: bool| {
        let mut d = vec![0.0; p.len()];
        let mut q = vec![[0.0; 2]; p.len()];
        let out = Outputs { distance: Some(&mut d), point: Some(&mut q), ..Outputs::default() };
        let opts = Options { threads, ..Options::default() };
        if cols {
            batch::one_to_many(a, b, [&xs[..], &ys[..]], out, &opts).unwrap();
        } else {
            batch::one_to_many(a, b, &p, out, &opts).unwrap();
        }
        (d, q)
    };
    let one = run(Some(1), false);
    assert_eq!(one, run(None, false));
    assert_eq!(one, run(Some(2), false));
    assert_eq!(one, run(Some(3), true));
    for (i, pt) in p.iter().enumerate().step_by(997) {
        assert_eq!(one.0[i], Segment::new(a, b).distance(*pt));
    }
}

/// Calls of 2^20 queries and more write their `f64` columns with
/// non-temporal stores: the same numbers as smaller calls, into outputs at
/// any 8-byte alignment, on one thread or several.
#[test]
fn large_calls_stream_the_same_results() {
    let n = (1 << 20) + 5;
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let (a, b) = ([0.25, 0.4], [0.75, 0.6]);
    // Now and then a point the vector kernels leave to the scalar one: on
    // the perpendicular at a vertex (no margin for the region estimate),
    // or with a coordinate below their range.
    let p: Vec<[f64; 2]> = (0..n)
        .map(|i| match i % 997 {
            0 => {
                let s = next();
                [0.25 - 0.2 * s, 0.4 + 0.5 * s]
            }
            1 => [0.75 - 0.02, 0.6 + 0.05],
            2 => [1e-300, next()],
            _ => [next(), next()],
        })
        .collect();
    // Expected: small calls (below the streaming size).
    let (mut d, mut d2, mut t) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for k in (0..n).step_by(100_000) {
        let e = (k + 100_000).min(n);
        let out = Outputs {
            distance: Some(&mut d[k..e]),
            distance_squared: Some(&mut d2[k..e]),
            t: Some(&mut t[k..e]),
            ..Outputs::default()
        };
        batch::one_to_many(a, b, &p[k..e], out, &Options::default()).unwrap();
    }
    for threads in [Some(1), Some(2)] {
        for offset in [0, 1] {
            let (mut gd, mut gd2, mut gt) = (vec![0.0; n + 1], vec![0.0; n + 1], vec![0.0; n + 1]);
            let out = Outputs {
                distance: Some(&mut gd[offset..offset + n]),
                distance_squared: Some(&mut gd2[offset..offset + n]),
                t: Some(&mut gt[offset..offset + n]),
                ..Outputs::default()
            };
            batch::one_to_many(a, b, &p, out, &Options { threads, ..Options::default() }).unwrap();
            assert!(gd[offset..offset + n] == d[..], "{threads:?} {offset}");
            assert!(gd2[offset..offset + n] == d2[..] && gt[offset..offset + n] == t[..], "{threads:?} {offset}");
        }
    }
    // Distances only, or squared distances only (written straight from
    // the AVX-512 or AVX2 pass where it runs), at every 8-byte alignment,
    // on every instruction set this CPU has.
    for isa in isas() {
        for threads in [Some(1), Some(2)] {
            for offset in 0..8 {
                let opts = Options { threads, isa, ..Options::default() };
                let mut gd = vec![0.0; n + 8];
                let out = Outputs { distance: Some(&mut gd[offset..offset + n]), ..Outputs::default() };
                batch::one_to_many(a, b, &p, out, &opts).unwrap();
                assert!(gd[offset..offset + n] == d[..], "distances {isa:?} {threads:?} {offset}");
                let out = Outputs { distance_squared: Some(&mut gd[offset..offset + n]), ..Outputs::default() };
                batch::one_to_many(a, b, &p, out, &opts).unwrap();
                assert!(gd[offset..offset + n] == d2[..], "squared distances {isa:?} {threads:?} {offset}");
            }
        }
    }
    let s = Segment::new(a, b);
    for (i, pt) in p.iter().enumerate().filter(|(i, _)| i % 997 < 3 || i % 9973 == 0) {
        assert_eq!((d[i], d2[i]), (s.distance(*pt), s.distance_squared(*pt)), "{pt:?}");
    }
}

#[test]
fn length_mismatches_are_errors_and_write_nothing() {
    let p = [[1.0, 2.0], [3.0, 4.0]];
    let mut d = [7.0; 3];
    let err = batch::one_to_many(
        [0.0, 0.0],
        [1.0, 0.0],
        &p,
        Outputs { distance: Some(&mut d), ..Outputs::default() },
        &Options::default(),
    );
    assert_eq!(err, Err(BatchError::LengthMismatch { what: "distance", expected: 2, got: 3 }));
    assert_eq!(d, [7.0; 3]);
    let xs = [1.0, 2.0];
    let ys = [1.0];
    let err = batch::distances([0.0, 0.0], [1.0, 0.0], Points::Columns([&xs[..], &ys[..]]));
    assert_eq!(err, Err(BatchError::LengthMismatch { what: "points", expected: 2, got: 1 }));
    let err = batch::pairs(&p, &p[..1], &p, Outputs::<f64, 2>::default(), &Options::default());
    assert_eq!(err, Err(BatchError::LengthMismatch { what: "b", expected: 2, got: 1 }));
    assert_eq!(err.unwrap_err().to_string(), "b has length 1, expected 2");
}

#[test]
fn empty_input_is_fine() {
    let p: [[f64; 3]; 0] = [];
    assert_eq!(batch::distances([0.0; 3], [1.0; 3], &p).unwrap(), Vec::<f64>::new());
}

#[test]
fn unavailable_isa_is_an_error() {
    for isa in ISAS {
        let r = batch::distances([0.0, 0.0], [1.0, 0.0], &[[0.0, 1.0]]);
        assert!(r.is_ok());
        let opts = Options { isa, ..Options::default() };
        let res = batch::one_to_many([0.0, 0.0], [1.0, 0.0], &[[0.0, 1.0]], Outputs::default(), &opts);
        assert_eq!(res.is_ok(), isa.is_available(), "{isa:?}");
    }
}

#[test]
fn nan_queries_come_out_nan_in_a_batch() {
    let p = [[f64::NAN, 0.0], [1.0, 1.0], [f64::INFINITY, 0.0]];
    for isa in isas() {
        for tier in [Tier::Accurate, Tier::Fast] {
            let opts = Options { isa, tier, ..Options::default() };
            let mut d = [0.0; 3];
            let mut r = [Region::Start; 3];
            batch::one_to_many(
                [0.0, 0.0],
                [2.0, 0.0],
                &p,
                Outputs { distance: Some(&mut d), region: Some(&mut r), ..Outputs::default() },
                &opts,
            )
            .unwrap();
            assert!(d[0].is_nan() && d[2].is_nan() && d[1] == 1.0, "{isa:?} {tier:?}: {d:?}");
            assert_eq!(r, [Region::Undefined, Region::Interior, Region::Undefined]);
        }
    }
}

/// Distances next to powers of two, mixed with ordinary ones in the same
/// vectors: bit for bit the scalar kernel's, through `pairs` and through
/// `one_to_many`'s one-segment pass, in both dimensions.
#[test]
fn powers_of_two_distances_match_scalar_on_every_isa() {
    fn run<const D: usize>() {
        let cases = binade_edges::<D>();
        // Ordinary points in between, so that the edge lanes share vectors
        // with lanes that take the plain square root.
        let mut r = rng(5);
        let mut p: Vec<[f64; D]> = Vec::new();
        for c in &cases {
            p.push(c.2);
            p.push(std::array::from_fn(|_| rand::Rng::gen_range(&mut r, -2.0..3.0)));
        }
        let a: Vec<[f64; D]> = cases.iter().flat_map(|c| [c.0, c.0]).collect();
        let b: Vec<[f64; D]> = cases.iter().flat_map(|c| [c.1, c.1]).collect();
        for isa in isas() {
            for line in [false, true] {
                let opts = Options { line, tier: Tier::Accurate, threads: Some(1), isa };
                check_pairs(&a, &b, &p, &opts, "binade edges");
                // The axis-aligned segment, then the slanted one.
                for s in [0, 2] {
                    let mut d = vec![0.0; p.len()];
                    let mut d2 = vec![0.0; p.len()];
                    let out = Outputs { distance: Some(&mut d), distance_squared: Some(&mut d2), ..Outputs::default() };
                    batch::one_to_many(a[s], b[s], &p, out, &opts).unwrap();
                    let mut d_only = vec![0.0; p.len()];
                    let out = Outputs { distance: Some(&mut d_only), ..Outputs::default() };
                    batch::one_to_many(a[s], b[s], &p, out, &opts).unwrap();
                    for i in 0..p.len() {
                        let (sd, sd2, _, _, _) = scalar(a[s], b[s], p[i], Tier::Accurate, line);
                        assert!(same(d[i], sd) && same(d2[i], sd2), "{opts:?} {:?}: {} vs {sd}", p[i], d[i]);
                        assert!(same(d_only[i], sd), "{opts:?} {:?}: {} vs {sd}", p[i], d_only[i]);
                    }
                }
            }
        }
    }
    run::<2>();
    run::<3>();
}

#[test]
fn distance_only_one_to_many_matches_scalar_on_every_isa() {
    for isa in isas() {
        for tier in [Tier::Accurate, Tier::Fast] {
            for line in [false, true] {
                for (fam, a, b, p) in families::<3>(150) {
                    let opts = Options { isa, tier, line, threads: Some(1) };
                    let mut d = vec![0.0; p.len()];
                    let mut d2 = vec![0.0; p.len()];
                    batch::one_to_many(a[0], b[0], &p, Outputs { distance: Some(&mut d), ..Outputs::default() }, &opts)
                        .unwrap();
                    batch::one_to_many(
                        a[1],
                        b[1],
                        &p,
                        Outputs { distance_squared: Some(&mut d2), ..Outputs::default() },
                        &opts,
                    )
                    .unwrap();
                    for i in 0..p.len() {
                        let (sd, _, _, _, _) = scalar(a[0], b[0], p[i], tier, line);
                        let (_, sd2, _, _, _) = scalar(a[1], b[1], p[i], tier, line);
                        assert!(
                            same(d[i], sd) && same(d2[i], sd2),
                            "{fam} {opts:?} {i}: {} vs {sd}, {} vs {sd2}",
                            d[i],
                            d2[i]
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn fast_tier_threads_do_not_change_results() {
    let n = 200_003;
    let cases = generate::<2>("uniform", 77, n);
    let (a, b, p): (Vec<_>, Vec<_>, Vec<_>) =
        (cases.iter().map(|c| c.0).collect(), cases.iter().map(|c| c.1).collect(), cases.iter().map(|c| c.2).collect());
    for line in [false, true] {
        let run = |threads: Option<usize>, pairs: bool| {
            let mut d = vec![0.0; n];
            let mut d2 = vec![0.0; n];
            let out = Outputs { distance: Some(&mut d), distance_squared: Some(&mut d2), ..Outputs::default() };
            let opts = Options { tier: Tier::Fast, threads, line, ..Options::default() };
            if pairs {
                batch::pairs(&a, &b, &p, out, &opts).unwrap();
            } else {
                batch::one_to_many(a[0], b[0], &p, out, &opts).unwrap();
            }
            (d, d2)
        };
        for pairs in [false, true] {
            let one = run(Some(1), pairs);
            assert_eq!(one, run(Some(2), pairs));
            assert_eq!(one, run(None, pairs));
            for i in (0..n).step_by(1009) {
                let (s, t) = if pairs { (a[i], b[i]) } else { (a[0], b[0]) };
                let want = if line {
                    Line::new(s, t).closest_point_fast(p[i]).distance
                } else {
                    Segment::new(s, t).distance_fast(p[i])
                };
                assert_eq!(one.0[i].to_bits(), want.to_bits());
            }
        }
    }
}

/// Blocks are reused from call to call on a thread: a call with one shared
/// segment, then one with a segment per query, must not see the first
/// call's segment.
#[test]
fn a_reused_block_forgets_the_last_calls_segment() {
    for isa in isas() {
        let opts = Options { threads: Some(1), isa, ..Options::default() };
        let p: Vec<[f64; 2]> = (0..40).map(|i| [f64::from(i), 1.0]).collect();
        let mut d = vec![0.0; p.len()];
        batch::one_to_many([0.0, 0.0], [1.0, 0.0], &p, Outputs { distance: Some(&mut d), ..Outputs::default() }, &opts)
            .unwrap();
        let a: Vec<[f64; 2]> = (0..40).map(|i| [f64::from(i), 5.0]).collect();
        let b: Vec<[f64; 2]> = (0..40).map(|i| [f64::from(i) + 1.0, 5.0]).collect();
        batch::pairs(&a, &b, &p, Outputs { distance: Some(&mut d), ..Outputs::default() }, &opts).unwrap();
        assert!(d.iter().all(|&x| x == 4.0), "{isa:?}: {d:?}");
    }
}

/// Points on and next to the two boundaries between regions of one
/// segment (the perpendiculars through its vertices), on and next to the
/// segment, at the vertices, and out of the sweep's range, for each
/// of several segments.
fn boundary_points<const D: usize>(a: [f64; D], b: [f64; D], seed: u64) -> Vec<[f64; D]> {
    use rand::Rng;
    let mut r = rng(seed);
    let ab: [f64; D] = core::array::from_fn(|i| b[i] - a[i]);
    let len = ab.iter().map(|x| x * x).sum::<f64>().sqrt();
    let _ = len;
    // Perpendicular to the segment (exactly, before rounding): points
    // `base + side·across` lie within rounding of a region boundary.
    let mut across = [0.0; D];
    across[0] = -ab[1];
    across[1] = ab[0];
    let mut v = Vec::new();
    for _ in 0..400 {
        let base = if r.r#gen::<bool>() { a } else { b };
        let side =
            [0.0, 1e-300, 1e-17, 1e-9, 1e-3, 1.0, 1e3][r.gen_range(0..7)] * if r.r#gen::<bool>() { 1.0 } else { -1.0 };
        let along = [0.0, 1e-300, 2e-16, 1e-16, 1e-15, 1e-12, 1e-8, 0.5, 1.0, 3.0][r.gen_range(0..10)]
            * if r.r#gen::<bool>() { 1.0 } else { -1.0 };
        let mut p: [f64; D] = core::array::from_fn(|i| base[i] + side * across[i] + along * ab[i]);
        // Nudge a coordinate by a few ulps now and then.
        if r.r#gen::<bool>() {
            let i = r.gen_range(0..D);
            let k = r.gen_range(-3i64..=3);
            p[i] = f64::from_bits((p[i].to_bits() as i64 + k) as u64);
        }
        v.push(p);
    }
    v.push(a);
    v.push(b);
    for s in [0.25, 0.5, 0.75] {
        v.push(core::array::from_fn(|i| a[i] + s * ab[i]));
    }
    let mut odd = a;
    odd[0] = 0.0;
    v.push(odd);
    // Just inside the start (a tiny t), and off the segment where it
    // crosses x = 0 (a closest point whose x cancels to near 0): both left
    // to the exact path by the scalar kernel.
    for delta in [1e-40, 1e-20, 1e-17, -3e-16] {
        let mut p = a;
        p[0] += delta;
        p[1] += 1.0;
        v.push(p);
    }
    let t0 = -a[0] / ab[0];
    if t0 > 0.0 && t0 < 1.0 {
        for k in 0..40 {
            let side = [0.3, -1.7, 2.9e-3, 11.0][k % 4] * (1.0 + k as f64 * 0.013);
            let mut p: [f64; D] = core::array::from_fn(|i| a[i] + t0 * ab[i] + side * across[i]);
            p[0] = f64::from_bits((p[0].to_bits() as i64 + (k as i64 % 5 - 2)) as u64);
            v.push(p);
        }
    }
    for x in [f64::NAN, f64::INFINITY, 1e-310, 1e-200, 1e250, -1e300, 0.0] {
        let mut p = b;
        p[D - 1] = x;
        v.push(p);
    }
    v
}

/// With one segment, the batch layer gives each query its region from a
/// plain-`f64` estimate before any exact work (one branch-free sweep, with
/// AVX-512 or AVX2): points on the region boundaries, on the
/// segment and out of range must still come out as the scalar kernel's
/// bits, with every mix of outputs (with and without `t` and the point).
fn one_segment_pass_matches_scalar<const D: usize>(segments: &[([f64; D], [f64; D])]) {
    for isa in isas() {
        for (s, &(a, b)) in segments.iter().enumerate() {
            check_one_to_many(a, b, &boundary_points(a, b, 100 + s as u64), isa);
        }
    }
}

#[test]
fn one_segment_pass_matches_scalar_near_every_boundary_2d() {
    one_segment_pass_matches_scalar::<2>(&[
        ([0.25, 0.4], [0.75, 0.6]),
        ([0.0, 0.0], [1.0, 0.0]),
        ([3.5e6, 6.7e6], [3.5e6 + 7.0, 6.7e6 + 3.0]),
        ([1e-100, -2e-100], [3e-100, 5e-100]),
        ([1e150, 1e150], [1.0000001e150, 0.9999999e150]),
        ([-1.0, 2.0], [-1.0 + 1e-12, 2.0]),
        ([-1.0, 1.0], [1.0, 1.0]),
        ([-1.1, 0.3], [1.7, 0.9]),
        ([-3.7e5, 6.1e6], [2.9e5, 6.1e6 + 44.0]),
        ([0.0, 0.0], [4e59, 0.0]),
    ]);
}

#[test]
fn one_segment_pass_matches_scalar_near_every_boundary_3d() {
    one_segment_pass_matches_scalar::<3>(&[
        ([0.25, 0.4, 0.1], [0.75, 0.6, 0.9]),
        ([3.5e6, 6.7e6, 100.0], [3.5e6 + 7.0, 6.7e6 + 3.0, 101.0]),
        ([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
    ]);
}
