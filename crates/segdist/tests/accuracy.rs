//! The accuracy contract, checked against exact rational arithmetic over
//! every adversarial family, in 2D and 3D, f64 and f32, segment and line.
//!
//! `SEGDIST_SWEEP=N` multiplies the number of cases per family (the default
//! keeps the suite to a few seconds); `SEGDIST_SEED` changes the seed.

mod common;

use common::*;
use segdist::Segment;

fn cases_per_family() -> usize {
    let k: usize = std::env::var("SEGDIST_SWEEP").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    600 * k
}

fn seed() -> u64 {
    std::env::var("SEGDIST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20261122)
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
