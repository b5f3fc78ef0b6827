//! The accuracy contract, checked against exact rational arithmetic over
//! every adversarial family, in 2D and 3D, f64 and f32, segment and line.
//!
//! `SEGDIST_SWEEP=N` multiplies the number of cases per family (the default
//! keeps the suite to a few seconds); `SEGDIST_SEED` changes the seed.

mod common;

use common::*;
use segdist::{Line, Region, Scalar, Segment};

fn cases_per_family() -> usize {
    let k: usize = std::env::var("SEGDIST_SWEEP").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    600 * k
}

fn seed() -> u64 {
    std::env::var("SEGDIST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20261122)
}

fn fmt<T: std::fmt::Debug, const D: usize>(a: &[T; D], b: &[T; D], p: &[T; D]) -> String {
    format!("a={a:?} b={b:?} p={p:?}")
}

/// Checks one segment query in type `T` against the exact projection of the
/// (exactly widened) inputs.
fn check_segment<T: Scalar + F, const D: usize>(a: [T; D], b: [T; D], p: [T; D]) -> Result<(), String> {
    let w = |x: [T; D]| x.map(|v| v.to_f64());
    let ex = exact(w(a), w(b), w(p), false);
    let s = Segment::new(a, b);
    let r = s.closest_point(p);
    let ctx = || fmt(&a, &b, &p);
    if r.region != ex.region {
        return Err(format!("region {:?} != {:?}: {}", r.region, ex.region, ctx()));
    }
    if !faithful(r.t, &ex.t) {
        return Err(format!("t {:?} not faithful ({}): {}", r.t, to_f64_approx(&ex.t), ctx()));
    }
    for i in 0..D {
        if !faithful(r.point[i], &ex.point[i]) {
            return Err(format!("q[{i}] {:?} not faithful ({}): {}", r.point[i], to_f64_approx(&ex.point[i]), ctx()));
        }
    }
    match ex.region {
        Region::Start if r.point != a || r.t != T::ZERO => {
            return Err(format!("start vertex not bit-exact: {}", ctx()));
        }
        Region::End if r.point != b || r.t != T::ONE => {
            return Err(format!("end vertex not bit-exact: {}", ctx()));
        }
        _ => {}
    }
    if !faithful(r.distance_squared, &ex.d2) {
        return Err(format!("d2 {:?} not faithful ({}): {}", r.distance_squared, to_f64_approx(&ex.d2), ctx()));
    }
    if !faithful_sqrt(r.distance, &ex.d2) {
        return Err(format!("d {:?} not faithful: {}", r.distance, ctx()));
    }
    // The distance-only entry points agree with the full projection.
    if s.distance(p) != r.distance || s.distance_squared(p) != r.distance_squared {
        return Err(format!("distance-only calls disagree with closest_point: {}", ctx()));
    }
    Ok(())
}

fn check_line<T: Scalar + F, const D: usize>(a: [T; D], b: [T; D], p: [T; D]) -> Result<(), String> {
    let w = |x: [T; D]| x.map(|v| v.to_f64());
    let ex = exact(w(a), w(b), w(p), true);
    let l = Line::new(a, b);
    let r = l.closest_point(p);
    let ctx = || fmt(&a, &b, &p);
    if !faithful(r.t, &ex.t) {
        return Err(format!("line t {:?} not faithful ({}): {}", r.t, to_f64_approx(&ex.t), ctx()));
    }
    for i in 0..D {
        if !faithful(r.point[i], &ex.point[i]) {
            return Err(format!("line q[{i}] {:?} not faithful: {}", r.point[i], ctx()));
        }
    }
    if !faithful(r.distance_squared, &ex.d2) || !faithful_sqrt(r.distance, &ex.d2) {
        return Err(format!("line d/d2 {:?}/{:?} not faithful: {}", r.distance, r.distance_squared, ctx()));
    }
    if l.distance(p) != r.distance || l.distance_squared(p) != r.distance_squared {
        return Err(format!("line distance-only calls disagree: {}", ctx()));
    }
    Ok(())
}

fn run_families<const D: usize>(f32_too: bool) {
    let n = cases_per_family();
    let mut failures = Vec::new();
    for fam in FAMILIES {
        for (a, b, p) in generate::<D>(fam, seed(), n) {
            for res in [check_segment(a, b, p), check_line(a, b, p)] {
                if let Err(e) = res {
                    failures.push(format!("[{fam} f64 {D}D] {e}"));
                }
            }
            if f32_too {
                let (a, b, p) = to_f32(&(a, b, p));
                for res in [check_segment(a, b, p), check_line(a, b, p)] {
                    if let Err(e) = res {
                        failures.push(format!("[{fam} f32 {D}D] {e}"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures, first ones:\n{}",
        failures.len(),
        failures.iter().take(12).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn faithful_on_every_family_2d() {
    run_families::<2>(true);
}

#[test]
fn faithful_on_every_family_3d() {
    run_families::<3>(true);
}

/// Distances are the rounded square root of a rounded `d²` (or, in the 2D
/// interior, one rounded quotient): faithful next to powers of two too,
/// where the ulp changes, on both sides and at them.
#[test]
fn faithful_next_to_powers_of_two() {
    fn run<const D: usize>() -> Vec<String> {
        let mut failures = Vec::new();
        for (a, b, p) in binade_edges::<D>() {
            for res in [check_segment(a, b, p), check_line(a, b, p)] {
                if let Err(e) = res {
                    failures.push(format!("[{D}D] {e}"));
                }
            }
        }
        failures
    }
    let failures = [run::<2>(), run::<3>()].concat();
    assert!(
        failures.is_empty(),
        "{} failures, first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(12)].join("\n")
    );
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    fn finite() -> impl Strategy<Value = f64> {
        prop_oneof![
            (-1e3f64..1e3),
            any::<f64>().prop_filter("finite", |x| x.is_finite()),
            (-3i32..3).prop_map(|x| x as f64),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn segment_2d_faithful(a in [finite(), finite()], b in [finite(), finite()], p in [finite(), finite()]) {
            prop_assert_eq!(check_segment(a, b, p), Ok(()));
        }

        #[test]
        fn segment_3d_faithful(a in [finite(), finite(), finite()], b in [finite(), finite(), finite()], p in [finite(), finite(), finite()]) {
            prop_assert_eq!(check_segment(a, b, p), Ok(()));
        }

        #[test]
        fn invariants_hold(a in [finite(), finite()], b in [finite(), finite()], p in [finite(), finite()]) {
            let r = Segment::new(a, b).closest_point(p);
            prop_assert!(r.distance_squared >= 0.0 && r.distance >= 0.0);
            prop_assert!(!r.distance.is_nan() && !r.t.is_nan() && r.distance.is_finite());
            prop_assert!((0.0..=1.0).contains(&r.t));
            for i in 0..2 {
                prop_assert!(r.point[i] >= a[i].min(b[i]) && r.point[i] <= a[i].max(b[i]));
            }
            // f32 and f64 agree up to the f32 rounding of the f64 answer's inputs.
            let a32 = a.map(|x| x as f32);
            let b32 = b.map(|x| x as f32);
            let p32 = p.map(|x| x as f32);
            if [a32, b32, p32].iter().flatten().all(|x| x.is_finite()) {
                let r32 = Segment::new(a32, b32).closest_point(p32);
                let r64 = Segment::new(a32.map(f64::from), b32.map(f64::from)).closest_point(p32.map(f64::from));
                prop_assert_eq!(r32.region, r64.region);
                prop_assert!(faithful(r32.distance, &q(r64.distance)) || r32.distance == r64.distance as f32);
            }
        }
    }
}
