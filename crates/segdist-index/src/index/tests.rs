//! The index against brute force: nearest, k, radius and ties, in 2D and 3D.

use super::*;
use rand::{Rng, SeedableRng};

/// The box test's two forms agree lane for lane, on boxes and on
/// segments, padding (empty boxes) and touching edges included.
#[test]
fn both_forms_of_the_box_test_agree() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(22);
    #[cfg(target_arch = "x86_64")]
    let (avx512, avx2) = (std::is_x86_feature_detected!("avx512f"), std::is_x86_feature_detected!("avx2"));
    #[cfg(not(target_arch = "x86_64"))]
    let (avx512, avx2) = (false, false);
    let mut hits = 0;
    for round in 0..2000 {
        let mut b = Block::<3>::EMPTY;
        for c in 0..(round % 9) {
            for k in 0..3 {
                // On a coarse grid, so that edges touch exactly.
                let (x, y) = (f64::from(r.gen_range(0..8u8)), f64::from(r.gen_range(0..8u8)));
                (b.lo[k][c], b.hi[k][c]) = if round % 2 == 0 { (x.min(y), x.max(y)) } else { (x, y) };
            }
        }
        let q: [f64; 3] = std::array::from_fn(|_| f64::from(r.gen_range(0..8u8)));
        let w: [f64; 3] = std::array::from_fn(|_| f64::from(r.gen_range(0..3u8)));
        let qhi = std::array::from_fn(|k| q[k] + w[k]);
        for segments in [false, true] {
            let want = (0..B)
                .filter(|&c| {
                    (0..3).all(|k| {
                        let (x, y) = (b.lo[k][c], b.hi[k][c]);
                        let (x, y) = if segments { (x.min(y), x.max(y)) } else { (x, y) };
                        x <= qhi[k] && y >= q[k]
                    })
                })
                .fold(0u32, |m, c| m | 1 << c);
            assert_eq!(b.meets::<PORTABLE>(&q, &qhi, segments), want, "round {round}");
            if avx512 {
                assert_eq!(b.meets::<AVX512>(&q, &qhi, segments), want, "round {round}");
            }
            if avx2 {
                assert_eq!(b.meets::<AVX2>(&q, &qhi, segments), want, "round {round}");
            }
            hits += want.count_ones();
        }
    }
    assert!(hits > 1000);
}

/// The group's cut on squared distances, taken without a square root,
/// is never below the cut of the bound it stands for (`cut2` of
/// `(√best + K·(m + √best) + floor)·(1 + S)`, or of the limit if that
/// is smaller): every lane that bound admits passes. Over scales from
/// underflow to `FAST_RANGE`, with `best` from zero to far beyond `m`.
#[test]
fn the_cut_without_a_square_root_admits_all_the_bound_does() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(22);
    let mut g = Group::<2>::default();
    for round in 0..200_000 {
        g.m = 10f64.powf(r.gen_range(-300.0..149.0));
        let best = match round % 4 {
            0 => 0.0,
            1 => (g.m * 10f64.powf(r.gen_range(-20.0..2.0))).powi(2),
            2 => f64::from_bits(r.gen_range(0..1u64 << 52)),
            _ => r.r#gen::<f64>() * g.m * g.m,
        };
        let limit = if round % 3 == 0 { f64::INFINITY } else { best.sqrt() * r.gen_range(0.5..2.0) };
        let d = best.sqrt();
        let bound = fmin((d + K_GROUP * (g.m + d) + E_FLOOR) * (1.0 + SLACK), limit);
        let want = cut2(bound, g.m);
        let got = g.cut2(best, limit);
        assert!(got >= want, "m {} best {best:e} limit {limit:e}: {got:e} < {want:e}", g.m);
        // Looser by little: a relative 2^-19 and a constant far below
        // the scan's own error (above the scales where the absolute
        // floor dominates both, as the floor's note says).
        if g.m > 1e-100 && best > (1e-6 * g.m).powi(2) && limit == f64::INFINITY {
            assert!(got <= want * (1.0 + 1e-5), "m {} best {best:e}: {got:e} against {want:e}", g.m);
        }
    }
}

/// A sift of the whole group at once, a point a lane.
#[cfg(target_arch = "x86_64")]
type SiftPoints = unsafe fn(&Index<2>, &Group<2>, &[[f64; 2]], f64) -> Sifted;
/// The reach's farthest point, a point a lane.
#[cfg(target_arch = "x86_64")]
type Farthest = unsafe fn(&Index<2>, &[u32], &[[f64; 2]]) -> (f64, f64);
/// A point's scan of a group's columns.
#[cfg(target_arch = "x86_64")]
type Scan = unsafe fn(&mut Group<2>, &[f64; 2]) -> f64;

/// The group sift with a point a lane (AVX-512, and AVX2 with FMA: each
/// where the CPU has it), reading the candidates from the leaves, tells
/// every point what the point-by-point sift on the columns `fill` makes
/// tells it, bit for bit, and the reach's farthest point is the
/// point-by-point one, by the same form's scan: on groups of 0 to 16
/// points (some not finite) against 1 to 40 candidates with repeats
/// (exact ties), zero lengths, and limits that cut some points off. (The
/// point-by-point sift is the CPU's own, AVX-512 where it has it: the two
/// vector forms' squared distances are the same bits.)
#[test]
fn every_form_of_the_points_sift_agrees_with_the_point_by_point_sift() {
    #[cfg(target_arch = "x86_64")]
    {
        let mut forms: Vec<(&str, SiftPoints, Farthest, Scan)> = Vec::new();
        if std::is_x86_feature_detected!("avx512f") {
            forms.push(("AVX-512", sift_points_avx512::<2>, farthest_avx512::<2>, scan_avx512::<2>));
        }
        if has_avx2_fma() {
            forms.push(("AVX2", sift_points_avx2::<2>, farthest_avx2::<2>, scan_avx2::<2>));
        }
        for (form, sift_points, farthest, scan) in forms {
            points_sift_agrees(form, sift_points, farthest, scan);
        }
    }
}

/// [`every_form_of_the_points_sift_agrees_with_the_point_by_point_sift`]
/// for one form, which the CPU must have.
#[cfg(target_arch = "x86_64")]
fn points_sift_agrees(form: &str, sift_points: SiftPoints, farthest: Farthest, scan: Scan) {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(23);
    let (mut ones, mut manys, mut nones, mut fars) = (0, 0, 0, 0);
    for round in 0..2000 {
        let n = 1 + round % 40;
        let mut segs: Vec<[[f64; 2]; 2]> = Vec::new();
        for i in 0..n {
            let s = if i > 0 && r.gen_bool(0.1) {
                segs[r.gen_range(0..i)]
            } else {
                let a = [r.r#gen::<f64>(), r.r#gen::<f64>()];
                let len = [0.0, 1e-3, 0.05, 0.5][i % 4];
                [a, [a[0] + len * r.r#gen::<f64>(), a[1] - len * r.r#gen::<f64>()]]
            };
            segs.push(s);
        }
        let index = Index::<2>::from_segments(&segs).expect("finite");
        // Every segment a candidate: a box around them all.
        let leaves: Vec<u32> = (0..index.leaves.len() as u32).collect();
        let mut picked = Group::<2>::default();
        assert!(index.gather::<PORTABLE>(&[-1.0, -1.0], &[2.0, 2.0], &leaves, 64, &mut picked));
        assert_eq!((picked.count, picked.filled), (n, false));
        let mut filled = Group::<2>::default();
        assert!(index.gather::<PORTABLE>(&[-1.0, -1.0], &[2.0, 2.0], &leaves, 64, &mut filled));
        index.fill(&mut filled);
        assert_eq!(filled.slot.len(), n);
        let len = round % (SIFT_POINTS + 1);
        let points: Vec<[f64; 2]> = (0..len)
            .map(|i| match (round + i) % 23 {
                0 => [f64::NAN, 0.5],
                1 => [0.5, f64::INFINITY],
                // On a segment's end: a distance of zero, maybe tied.
                2 => segs[i % n][0],
                _ => [r.r#gen::<f64>(), r.r#gen::<f64>()],
            })
            .collect();
        let limit = [f64::INFINITY, 0.05, 0.0][round % 3];
        // One round in two with a guessed reach: the points whose
        // least d² is above its `trust2` are told to search alone.
        filled.trust2 = f64::INFINITY;
        if round % 2 == 1 {
            filled.reach = r.gen_range(0.0..0.3);
            filled.trust_within();
        }
        picked.trust2 = filled.trust2;
        let want = filled.sift_points(&points, limit);
        // SAFETY (all the calls of the form's kernels below): the CPU has
        // the form (the caller's contract).
        let got = unsafe { sift_points(&index, &picked, &points, limit) };
        assert_eq!((got.one, got.many, got.far), (want.one, want.many, want.far), "{form}, round {round}");
        assert_eq!(got.far2.to_bits(), want.far2.to_bits(), "{form}, round {round}");
        for (i, p) in points.iter().enumerate().filter(|(_, p)| p.iter().all(|c| c.is_finite())) {
            let least = unsafe { scan(&mut filled, p) };
            assert_eq!(want.far >> i & 1 != 0, least > filled.trust2, "{form}, round {round}, point {i}");
            fars += want.far >> i & 1;
        }
        for i in (0..len).filter(|i| want.one >> i & 1 != 0) {
            assert_eq!(got.slot[i], want.slot[i], "{form}, round {round}, point {i}");
        }
        ones += want.one.count_ones();
        manys += want.many.count_ones();
        nones += len as u32 - (want.one | want.many).count_ones();
        // The farthest point by point, through the same arithmetic
        // (fused: the portable form's differs in the last bits).
        let far = points
            .iter()
            .filter(|p| p.iter().all(|c| c.is_finite()))
            .fold(0.0, |far, p| fmax(far, unsafe { scan(&mut filled, p) }));
        let (got, m) = unsafe { farthest(&index, &filled.slot, &points) };
        assert_eq!(got.to_bits(), far.to_bits(), "{form}, round {round}");
        let want = segs.iter().flatten().flatten().fold(0.0, |m: f64, c| m.max(c.abs()));
        assert_eq!(m, want, "{form}, round {round}");
    }
    assert!(ones > 1000 && manys > 100 && nones > 1000 && fars > 1000, "{form}: {ones} {manys} {nones} {fars}");
}

/// A guessed reach's `trust2` (`Group::trust_within`) keeps its promise: a
/// scanned `d²` at most `trust2` is that of a segment whose exact distance
/// is at most the reach, for reaches within a relative `1e-10` either side
/// of the distance (and any where the scan's error is all there is), over
/// scales from `1e-200` to `1e100`. And every point of a group with no
/// candidate within its guessed reach is told to search alone.
#[test]
fn a_guessed_reach_trusts_only_distances_within_it() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(24);
    let (mut trusted, mut untrusted) = (0, 0);
    for round in 0..100_000 {
        let scale = 10f64.powf(r.gen_range(-200.0..100.0));
        let a = [r.r#gen::<f64>() * scale, r.r#gen::<f64>() * scale];
        let len = [0.0, 1e-3, 0.3][round % 3];
        let b = [a[0] + len * scale * r.r#gen::<f64>(), a[1] - len * scale * r.r#gen::<f64>()];
        let p = [r.r#gen::<f64>() * scale, r.r#gen::<f64>() * scale];
        let d = Segment::new(a, b).closest_point(p).distance;
        let mut g = Group::<2>::default();
        let m = g.add(a, b, 0);
        g.count = 1;
        g.m = fmax(m, fmax(p[0].abs(), p[1].abs()));
        g.reach = match round % 4 {
            0 => d * (1.0 + 1e-10 * r.gen_range(-1.0..1.0)),
            1 => d * (1.0 + 10f64.powf(r.gen_range(-16.0..-10.0))),
            2 => d * (1.0 - 10f64.powf(r.gen_range(-16.0..-10.0))),
            _ => K_GROUP * g.m * r.gen_range(0.0..100.0),
        };
        if !g.trust_within() {
            continue;
        }
        let least = g.scan(&p);
        if least <= g.trust2 {
            assert!(d <= g.reach, "round {round}: {d:e} beyond the reach {:e}", g.reach);
            trusted += 1;
        } else {
            untrusted += 1;
        }
    }
    assert!(trusted > 10_000 && untrusted > 10_000, "{trusted} {untrusted}");
    // No candidate at all within the guess: every finite point alone.
    let index = Index::<2>::from_segments(&[[[0.0, 0.0], [1.0, 0.0]]]).expect("finite");
    let mut g = Group::<2>::default();
    assert!(index.gather::<PORTABLE>(&[5.0, 5.0], &[6.0, 6.0], &[0], 64, &mut g));
    assert_eq!(g.count, 0);
    g.reach = 0.5;
    assert!(g.trust_within());
    let points = [[5.5, 5.5], [f64::NAN, 5.0], [6.0, 5.0]];
    let sifted = sift_points_group(&index, &mut g, &points, f64::INFINITY);
    assert_eq!((sifted.one, sifted.many, sifted.far), (0, 0, 0b101));
    assert!(matches!(index.nearest_in_group(&points[0], f64::INFINITY, &mut g, false), Pick::Alone));
    g.trust2 = f64::INFINITY;
    let sifted = sift_points_group(&index, &mut g, &points, f64::INFINITY);
    assert_eq!((sifted.one, sifted.many, sifted.far), (0, 0, 0));
}

type Sift = fn(&mut Group<2>, &[f64; 2], f64) -> (f64, bool, usize);

/// Every form of the group sift (the portable loops and, where the CPU
/// has them, AVX-512 and AVX2) keeps the nearest segment: alone when it is
/// the only lane that passes, among those that pass otherwise.
#[test]
fn every_form_of_the_group_sift_keeps_the_nearest_segment() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(21);
    let mut alone = 0;
    for round in 0..300 {
        let n = 1 + round % 37;
        let mut g = Group::<2>::default();
        let mut segs = Vec::new();
        for slot in 0..n {
            let a = [r.r#gen::<f64>(), r.r#gen::<f64>()];
            // Some of zero length, some long.
            let len = [0.0, 1e-3, 0.05, 0.5][slot % 4];
            let b = [a[0] + len * r.r#gen::<f64>(), a[1] - len * r.r#gen::<f64>()];
            let ab = [b[0] - a[0], b[1] - a[1]];
            let l = ab[0] * ab[0] + ab[1] * ab[1];
            g.push(a, ab, if l > 0.0 { 1.0 / l } else { 0.0 }, slot as u32);
            segs.push(Segment::new(a, b));
        }
        g.count = n;
        g.m = 2.0;
        let p = [r.r#gen::<f64>(), r.r#gen::<f64>()];
        let d: Vec<f64> = segs.iter().map(|s| s.closest_point(p).distance).collect();
        let nearest = (0..n).fold(0, |b, i| if d[i] < d[b] { i } else { b });
        // The portable scan as the default build compiles it, the
        // dispatched one, and AVX-512 and AVX2 by hand.
        let portable: Sift = |g, p, limit| {
            let best = g.scan(p);
            g.sift_scanned(best, limit)
        };
        let mut forms: Vec<Sift> = vec![portable, Group::sift];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            forms.push(|g, p, limit| unsafe { sift_avx512(g, p, limit) });
        }
        #[cfg(target_arch = "x86_64")]
        if has_avx2_fma() {
            // SAFETY: the CPU has AVX2 and FMA, checked just above.
            forms.push(|g, p, limit| unsafe { sift_avx2(g, p, limit) });
        }
        for sift in forms {
            let (cut2, many, first) = sift(&mut g, &p, f64::INFINITY);
            if many {
                assert!(g.d2[nearest / B][nearest % B] <= cut2, "round {round}");
            } else {
                assert_eq!(first, nearest, "round {round}");
                alone += 1;
            }
        }
    }
    assert!(alone > 300, "the one-survivor case was met only {alone} times");
}

/// The lanes' two forms (`lanes`: portable and AVX2) give the same bits:
/// box distances, the leaf's bounds, masks and least, over magnitudes
/// from underflow to overflow, padding boxes and lanes, zero-length
/// segments and bounds that do not hold (overflow) included.
#[test]
fn both_forms_of_the_lanes_agree() {
    #[cfg(target_arch = "x86_64")]
    if !std::is_x86_feature_detected!("avx2") {
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    return;
    fn check<const D: usize>(r: &mut rand_chacha::ChaCha8Rng) -> usize {
        let scale = 10f64.powf(r.gen_range(-300.0..300.0));
        let coordinate = |r: &mut rand_chacha::ChaCha8Rng| (r.r#gen::<f64>() - 0.5) * scale;
        let (mut boxes, mut leaf) = (Block::<D>::EMPTY, Block::<D>::ZERO);
        let real = r.gen_range(1..=B);
        for c in 0..real {
            for k in 0..D {
                let (x, y) = (coordinate(r), coordinate(r));
                (boxes.lo[k][c], boxes.hi[k][c]) = (x.min(y), x.max(y));
                // One lane in four a point (zero length).
                (leaf.lo[k][c], leaf.hi[k][c]) = (x, if c % 4 == 3 { x } else { y });
            }
        }
        let inv: [f64; B] = std::array::from_fn(|c| {
            let a = std::array::from_fn(|k| leaf.lo[k][c]);
            let b = std::array::from_fn(|k| leaf.hi[k][c]);
            inv_length2::<D>(&a, &b)
        });
        let p: [f64; D] = std::array::from_fn(|_| coordinate(r));
        let mp = p.iter().fold(0.0f64, |m, c| m.max(c.abs()));
        let bits = |x: [f64; B]| x.map(f64::to_bits);
        let (d2, d2v) = (lanes::box_d2::<D, false>(&boxes, &p), lanes::box_d2::<D, true>(&boxes, &p));
        assert_eq!(bits(d2), bits(d2v), "{boxes:?} {p:?}");
        let ((lo, up), (lov, upv)) =
            (lanes::leaf_bounds::<D, false>(&leaf, &inv, &p, mp), lanes::leaf_bounds::<D, true>(&leaf, &inv, &p, mp));
        assert_eq!((bits(lo), bits(up)), (bits(lov), bits(upv)), "{leaf:?} {p:?}");
        for x in [d2, lo, up] {
            let y = x[r.gen_range(0..B)] * r.gen_range(0.5..2.0);
            assert_eq!(lanes::at_most::<false>(&x, 1.0 - SLACK, y), lanes::at_most::<true>(&x, 1.0 - SLACK, y));
            assert_eq!(lanes::below::<false>(&x, y), lanes::below::<true>(&x, y));
            assert_eq!(lanes::least::<false>(&x).to_bits(), lanes::least::<true>(&x).to_bits());
        }
        up.iter().filter(|u| u.is_infinite()).count()
    }
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(27);
    let mut untrusted = 0;
    for _ in 0..20_000 {
        untrusted += check::<2>(&mut r) + check::<3>(&mut r);
    }
    // Both the trusted and the overflowing lanes were seen.
    assert!(untrusted > 1000 && untrusted < 200_000, "{untrusted}");
}

/// One query at a time through each form of the walk (the default
/// build's and AVX2's, where the CPU has it) gives brute force's nearest,
/// k nearest and radius answers: same segments, same bits, ties to the
/// lowest id (duplicates and a coarse grid make exact ties).
#[test]
fn single_queries_in_both_forms_match_brute_force() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(28);
    let mut segments = Vec::new();
    for _ in 0..3000 {
        let a = [f64::from(r.gen_range(0..200u8)), f64::from(r.gen_range(0..200u8))];
        let b = [a[0] + f64::from(r.gen_range(0..6u8)), a[1] + f64::from(r.gen_range(0..6u8))];
        segments.push([a, b]);
        if r.gen_range(0..10) == 0 {
            segments.push([a, b]);
        }
    }
    let index = Index::<2>::from_segments(&segments).expect("finite");
    #[cfg(target_arch = "x86_64")]
    let forms: &[bool] = if std::is_x86_feature_detected!("avx2") { &[false, true] } else { &[false] };
    #[cfg(not(target_arch = "x86_64"))]
    let forms: &[bool] = &[false];
    let mut s = Scratch::default();
    for _ in 0..500 {
        let p = [r.gen_range(-10.0..210.0), r.gen_range(-10.0..210.0)];
        let mut all: Vec<Found<2>> = (0..index.segs.len() as u32).map(|slot| index.evaluate(&p, slot)).collect();
        all.sort_by(|x, y| x.proj.distance.total_cmp(&y.proj.distance).then(x.id.cmp(&y.id)));
        let key = |f: &Found<2>| (f.id, f.proj.distance.to_bits(), f.proj.t.to_bits());
        for &avx2 in forms {
            let walk = |want, limit, s: &mut Scratch| {
                if avx2 {
                    index.walk::<true>(&p, want, limit, None, s)
                } else {
                    index.walk::<false>(&p, want, limit, None, s)
                }
            };
            let st = walk(Want::Nearest(1), f64::INFINITY, &mut s).expect("a finite point");
            let best = index.pick(&p, &st, f64::INFINITY, &mut s).expect("segments");
            assert_eq!(key(&best), key(&all[0]), "{p:?} avx2 {avx2}");
            // (Both forms of `State::tighten`: in place up to k = 32, by
            // `Vec::insert` past it.)
            for k in [2, 5, 32, 33] {
                let st = walk(Want::Nearest(k), f64::INFINITY, &mut s).expect("a finite point");
                let got: Vec<_> =
                    index.rank(&p, Want::Nearest(k), f64::INFINITY, st.bound, &mut s).iter().map(key).collect();
                assert_eq!(got, all[..k].iter().map(key).collect::<Vec<_>>(), "{p:?} avx2 {avx2} k {k}");
            }
            let radius = 3.0;
            let st = walk(Want::All, radius, &mut s).expect("a finite point");
            let near: Vec<_> = index.rank(&p, Want::All, radius, st.bound, &mut s).iter().map(key).collect();
            let want: Vec<_> = all.iter().take_while(|f| f.proj.distance <= radius).map(key).collect();
            assert_eq!(near, want, "{p:?} avx2 {avx2}");
        }
    }
}

#[test]
fn tighten_keeps_the_k_least_upper_bounds_in_both_forms() {
    // The in-place insertion (k up to 32) and `Vec::insert` (past it) keep
    // the k least of the bounds offered, ascending, and set the bound to
    // the k-th: against a sort of all of them, with many equal values.
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(29);
    let p = [0.0, 0.0];
    for k in [1, 2, 5, 31, 32, 33, 40] {
        for _ in 0..50 {
            let mut s = Scratch::default();
            let mut st = State::<2> { p: &p, mp: 0.0, bound: f64::INFINITY, want: Want::Nearest(k), skip: u32::MAX };
            let offered: Vec<f64> = (0..r.gen_range(0..80)).map(|_| f64::from(r.gen_range(0..20u8))).collect();
            for &u in &offered {
                st.tighten(&mut s, k, u);
            }
            let mut want = offered.clone();
            want.sort_by(f64::total_cmp);
            want.truncate(k);
            assert_eq!(s.uppers, want, "k {k}");
            let bound = if want.len() == k { want[k - 1] } else { f64::INFINITY };
            assert_eq!(st.bound, bound, "k {k}");
        }
    }
}

/// `kth_of` finds the k-th smallest in every form: the count for whatever
/// the build targets, with AVX-512 and AVX2 where the CPU has them, and the sorted
/// list past `KTH_BY_COUNT` values; against a sort, with many equal values
/// and infinities, for every k.
#[test]
fn kth_of_finds_the_kth_smallest_in_every_form() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(31);
    #[cfg(target_arch = "x86_64")]
    let (avx512, avx2) = (std::is_x86_feature_detected!("avx512f"), has_avx2_fma());
    let mut least = Vec::new();
    for round in 0..3000 {
        let n = 1 + round % 45;
        let v: Vec<f64> = (0..n)
            .map(|_| match r.gen_range(0..10) {
                0 => f64::INFINITY,
                1..=4 => f64::from(r.gen_range(0..6u8)),
                _ => r.r#gen::<f64>(),
            })
            .collect();
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        for k in 1..=n {
            let want = sorted[k - 1].to_bits();
            for form in [PORTABLE, AVX2, AVX512] {
                assert_eq!(kth_of(&v, k, &mut least, form).to_bits(), want, "{v:?} k {k} form {form}");
            }
            if n <= KTH_BY_COUNT {
                let mut w = [f64::NAN; KTH_BY_COUNT];
                w[..n].copy_from_slice(&v);
                assert_eq!(kth_count(&w, n, k).to_bits(), want, "{v:?} k {k}");
                #[cfg(target_arch = "x86_64")]
                if avx512 {
                    // SAFETY: the CPU has AVX-512F, checked above.
                    assert_eq!(unsafe { kth_avx512(&w, n, k) }.to_bits(), want, "{v:?} k {k}");
                }
                #[cfg(target_arch = "x86_64")]
                if avx2 {
                    // SAFETY: the CPU has AVX2, checked above.
                    assert_eq!(unsafe { kth_avx2(&w, n, k) }.to_bits(), want, "{v:?} k {k}");
                }
            }
        }
    }
}

/// The ranking's places by counting are the places of a sort by
/// (distance, id), in every form the CPU has: many equal distances, every
/// count of survivors up to `RANK_BY_COUNT`.
#[test]
fn places_rank_by_distance_then_id_in_every_form() {
    use super::single::{places_count, RANK_BY_COUNT};
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(37);
    #[cfg(target_arch = "x86_64")]
    let avx512 = std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("popcnt");
    for round in 0..2000 {
        let n = 1 + round % RANK_BY_COUNT;
        let (mut d, mut id) = ([i64::MAX as u64; RANK_BY_COUNT], [i64::MAX as u64; RANK_BY_COUNT]);
        let mut ids: Vec<u64> = (0..1000).collect();
        for i in 0..n {
            d[i] = if r.gen_range(0..3) == 0 { r.gen_range(0..4u64) } else { r.gen_range(0..1u64 << 62) };
            id[i] = ids.swap_remove(r.gen_range(0..ids.len()));
        }
        let mut want: Vec<u32> = (0..n as u32).collect();
        want.sort_by_key(|&i| (d[i as usize], id[i as usize]));
        assert_eq!(places_count(&d, &id, n)[..n], want[..], "n {n}");
        #[cfg(target_arch = "x86_64")]
        if avx512 {
            // SAFETY: the CPU has AVX-512F and POPCNT, checked above.
            assert_eq!(unsafe { super::simd::places_avx512(&d, &id, n) }[..n], want[..], "n {n}");
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            assert_eq!(unsafe { super::avx2::places_avx2(&d, &id, n) }[..n], want[..], "n {n}");
        }
    }
}

/// The scan that lists the lanes at most a threshold lists exactly those,
/// in order, and never a padding lane (at +inf, even under a threshold of
/// +inf), in every form, each against its own squared distances.
#[test]
fn the_listing_scan_lists_exactly_the_lanes_at_most_its_threshold() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(32);
    #[cfg(target_arch = "x86_64")]
    let (avx512, avx2) = (std::is_x86_feature_detected!("avx512f"), has_avx2_fma());
    let (mut listed, mut listed_avx2) = (0, 0);
    for round in 0..500 {
        let n = 1 + round % 37;
        let segs: Vec<[[f64; 2]; 2]> = (0..n)
            .map(|_| {
                let a = [r.r#gen::<f64>(), r.r#gen::<f64>()];
                [a, [a[0] + 0.1 * r.r#gen::<f64>(), a[1] - 0.1 * r.r#gen::<f64>()]]
            })
            .collect();
        let index = Index::<2>::from_segments(&segs).expect("finite");
        let leaves: Vec<u32> = (0..index.leaves.len() as u32).collect();
        let mut g = Group::<2>::default();
        assert!(index.gather::<PORTABLE>(&[-1.0, -1.0], &[2.0, 2.0], &leaves, 64, &mut g));
        index.fill(&mut g);
        let p = [r.r#gen::<f64>(), r.r#gen::<f64>()];
        let thr = [f64::INFINITY, 0.0, f64::NAN, r.gen_range(0.0..0.5)][round % 4];
        let check = |g: &Group<2>, form: &str| {
            let want: Vec<u64> = (0..g.count).filter(|&j| g.d2[j / B][j % B] <= thr).map(|j| j as u64).collect();
            assert_eq!(g.below, want, "round {round}, {form}");
            let d2: Vec<u64> = want.iter().map(|&j| g.d2[j as usize / B][j as usize % B].to_bits()).collect();
            assert_eq!(g.below_d2.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), d2, "round {round}, {form}");
        };
        g.scan_below(&p, thr);
        check(&g, "portable");
        listed += g.below.len();
        #[cfg(target_arch = "x86_64")]
        if avx512 {
            // SAFETY: the CPU has AVX-512F, checked above.
            unsafe { scan_below_avx512(&mut g, &p, thr) };
            check(&g, "AVX-512");
        }
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the CPU has AVX2 and FMA, checked above.
            unsafe { scan_below_avx2(&mut g, &p, thr) };
            check(&g, "AVX2");
            listed_avx2 += g.below.len();
        }
    }
    assert!(listed > 2000, "{listed}");
    #[cfg(target_arch = "x86_64")]
    assert!(!avx2 || listed_avx2 > 2000, "{listed_avx2}");
}

/// k-nearest and radius batches whose points keep more than `KTH_BY_COUNT`
/// lanes (the k-th found by the sorted list) or rank more than 32
/// survivors (by sorting) answer as the single queries, bit for bit.
#[test]
fn batches_with_many_survivors_match_single_queries() {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(33);
    let segs: Vec<[[f64; 2]; 2]> = (0..3000)
        .map(|_| {
            let a = [r.r#gen::<f64>(), r.r#gen::<f64>()];
            [a, [a[0] + 0.01 * r.r#gen::<f64>(), a[1] + 0.01 * r.r#gen::<f64>()]]
        })
        .collect();
    let index = Index::<2>::from_segments(&segs).expect("finite");
    let pts: Vec<[f64; 2]> = (0..2000).map(|_| [r.r#gen::<f64>(), r.r#gen::<f64>()]).collect();
    let opts = crate::QueryOptions { threads: 1, ..Default::default() };
    for k in [33, 60] {
        let many = index.k_nearest_many(&pts, k, &opts);
        for (p, got) in pts.iter().zip(&many) {
            assert_eq!(got, &index.k_nearest(*p, k), "{p:?} k {k}");
        }
    }
    let many = index.within_many(&pts, 0.08, &opts);
    assert!(many.iter().filter(|l| l.len() > 32).count() > 1000);
    for (p, got) in pts.iter().zip(&many) {
        assert_eq!(got, &index.within(*p, 0.08), "{p:?}");
    }
}
