//! The fast tier against its documented bound, and the FMA and portable
//! builds of the accurate kernel against each other, bit for bit.

mod common;

use common::*;
use segdist::{Region, Segment};

/// `|d̃ − d| <= c·u·(M + d)` with `c = 12` (2D) or `16` (3D), as documented on
/// `Segment::closest_point_fast`.
fn check_fast<const D: usize>(family: &str, n: usize) -> f64 {
    let c = if D == 2 { 12.0 } else { 16.0 };
    let u = f64::EPSILON / 2.0;
    let mut worst: f64 = 0.0;
    for (a, b, p) in generate::<D>(family, 99, n) {
        let r = Segment::new(a, b).closest_point_fast(p);
        assert!(r.distance_squared >= 0.0, "negative d² for {a:?} {b:?} {p:?}");
        match r.region {
            Region::Start => assert_eq!((r.point, r.t), (a, 0.0)),
            Region::End => assert_eq!((r.point, r.t), (b, 1.0)),
            _ => {}
        }
        let ex = exact(a, b, p, false);
        let d = to_f64_approx(&ex.d2).sqrt();
        let m = a.iter().chain(&b).chain(&p).fold(0.0f64, |m, x| m.max(x.abs()));
        let err = (r.distance - d).abs() / (u * (m + d));
        assert!(err <= c, "{family}: error {err:.2}·u·(M + d) above {c} for {a:?} {b:?} {p:?}");
        worst = worst.max(err);
    }
    worst
}

#[test]
fn fast_tier_stays_within_documented_bound() {
    // Families inside the fast tier's range (no overflow or underflow).
    for fam in ["uniform", "utm", "near_degenerate", "collinear_beyond", "near_interior", "on_segment", "one_ulp_off"] {
        let w2 = check_fast::<2>(fam, 2000);
        let w3 = check_fast::<3>(fam, 2000);
        eprintln!("fast tier worst error on {fam}: 2D {w2:.2}, 3D {w3:.2} (units of u·(M + d))");
    }
}

#[test]
fn fast_tier_zero_length_segment_is_start() {
    let r = Segment::new([2.0f32, 3.0], [2.0, 3.0]).closest_point_fast([5.0, 7.0]);
    assert_eq!((r.point, r.t, r.distance, r.region), ([2.0, 3.0], 0.0, 5.0, Region::Start));
}

#[test]
fn fast_tier_nan_in_nan_out() {
    let r = Segment::new([0.0, 0.0], [1.0, 0.0]).closest_point_fast([f64::NAN, 0.0]);
    assert!(r.distance.is_nan() && r.t.is_nan() && r.point.iter().all(|x| x.is_nan()));
    assert_eq!(r.region, Region::Undefined);
}

#[test]
fn fma_and_portable_builds_are_bit_identical() {
    use segdist::__testing::{segment_dispatched, segment_portable};
    let bits2 = |r: ([f64; 2], f64, f64, f64, Region)| {
        (r.0.map(f64::to_bits), r.1.to_bits(), r.2.to_bits(), r.3.to_bits(), r.4)
    };
    let bits3 = |r: ([f64; 3], f64, f64, f64, Region)| {
        (r.0.map(f64::to_bits), r.1.to_bits(), r.2.to_bits(), r.3.to_bits(), r.4)
    };
    for fam in FAMILIES {
        for (a, b, p) in generate::<2>(fam, 4242, 400) {
            assert_eq!(
                bits2(segment_portable(&a, &b, &p)),
                bits2(segment_dispatched(&a, &b, &p)),
                "{fam} {a:?} {b:?} {p:?}"
            );
        }
        for (a, b, p) in generate::<3>(fam, 4242, 400) {
            assert_eq!(
                bits3(segment_portable(&a, &b, &p)),
                bits3(segment_dispatched(&a, &b, &p)),
                "{fam} {a:?} {b:?} {p:?}"
            );
        }
    }
}
