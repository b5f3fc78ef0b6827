//! Each edge case decided once, tested by name.

mod common;

use common::*;
use segdist::{Line2, Plane, Region, Segment2, Segment3};

#[test]
fn zero_length_segment_returns_start() {
    let s = Segment2::new([1.5, -2.0], [1.5, -2.0]);
    let r = s.closest_point([4.5, 2.0]);
    assert_eq!((r.point, r.t, r.region), ([1.5, -2.0], 0.0, Region::Start));
    assert_eq!((r.distance, r.distance_squared), (5.0, 25.0));
    let r = Segment2::new([0.0, 0.0], [-0.0, 0.0]).closest_point([0.0, 0.0]);
    assert_eq!((r.distance, r.t), (0.0, 0.0));
}

#[test]
fn ab_squared_underflow_is_not_degenerate() {
    // |ab|² ≈ 1e-340 underflows to zero in plain arithmetic; the segment is real.
    let s = Segment2::new([0.0, 0.0], [1e-170, 0.0]);
    let r = s.closest_point([0.5e-170, 1e-170]);
    assert_eq!(r.region, Region::Interior);
    assert_eq!(r.t, 0.5);
    assert_eq!(r.point, [0.5e-170, 0.0]);
    assert_eq!(r.distance, 1e-170);
    // The exact d² (1e-340) is below the smallest subnormal: 0 is its rounding.
    assert_eq!(r.distance_squared, 0.0);
}

#[test]
fn nan_anywhere_gives_all_nan() {
    let s = Segment2::new([0.0, 0.0], [1.0, 0.0]);
    for p in [[f64::NAN, 0.0], [0.0, f64::NAN]] {
        let r = s.closest_point(p);
        assert!(
            r.point.iter().all(|x| x.is_nan()) && r.t.is_nan() && r.distance.is_nan() && r.distance_squared.is_nan()
        );
        assert_eq!(r.region, Region::Undefined);
        assert!(s.distance(p).is_nan());
    }
    let r = Segment2::new([f64::NAN, 0.0], [f64::NAN, 0.0]).closest_point([0.0, 0.0]);
    assert!(r.distance.is_nan() && r.point[1].is_nan());
}

#[test]
fn infinity_gives_all_nan() {
    let s = Segment3::new([0.0, 0.0, 0.0], [f64::INFINITY, 0.0, 0.0]);
    let r = s.closest_point([1.0, 1.0, 1.0]);
    assert!(r.distance.is_nan() && r.t.is_nan() && r.point.iter().all(|x| x.is_nan()));
    assert!(Line2::new([0.0, 0.0], [1.0, 0.0]).closest_point([f64::NEG_INFINITY, 0.0]).t.is_nan());
    assert!(Segment2::new([0.0f32, 0.0], [1.0, 0.0]).distance([f32::INFINITY, 0.0]).is_nan());
}

#[test]
fn huge_coordinates_do_not_overflow() {
    // Textbook: |ab|² = inf, t = NaN. Here every field is right.
    let s = Segment2::new([-1e300, 1e300], [1e300, 1e300]);
    let r = s.closest_point([0.5e300, 0.0]);
    assert_eq!(r.region, Region::Interior);
    assert_eq!(r.t, 0.75);
    assert_eq!(r.point, [0.5e300, 1e300]);
    assert_eq!(r.distance, 1e300);
    assert_eq!(r.distance_squared, f64::INFINITY); // exact 1e600 > f64::MAX
    let r = Segment2::new([-f64::MAX, 0.0], [f64::MAX, 0.0]).closest_point([0.0, 5e-324]);
    assert_eq!((r.t, r.point, r.distance), (0.5, [0.0, 0.0], 5e-324));
}

#[test]
fn tiny_coordinates_keep_full_precision() {
    let s = Segment2::new([1e-300, 0.0], [3e-300, 0.0]);
    let r = s.closest_point([2e-300, 1e-300]);
    assert_eq!((r.point, r.distance), ([2e-300, 0.0], 1e-300));
    let r = Segment2::new([0.0, 0.0], [4e-323, 0.0]).closest_point([2e-323, 1e-323]);
    assert_eq!((r.t, r.distance, r.region), (0.5, 1e-323, Region::Interior));
}

#[test]
fn point_on_segment_has_zero_distance() {
    let s = Segment2::new([-3.0, 7.0], [5.0, -1.0]);
    let r = s.closest_point([1.0, 3.0]);
    assert_eq!((r.point, r.t, r.distance, r.distance_squared), ([1.0, 3.0], 0.5, 0.0, 0.0));
    let r = Segment3::new([0.0, 0.0, 0.0], [2.0, 4.0, 6.0]).closest_point([0.5, 1.0, 1.5]);
    assert_eq!((r.t, r.distance), (0.25, 0.0));
}

#[test]
fn point_one_ulp_off_segment_has_tiny_exact_distance() {
    // p is one ulp above the segment y = x; the exact distance is ulp/√2.
    let x = 0.3;
    let y = f64::from_bits(0.3f64.to_bits() + 1);
    let r = Segment2::new([0.0, 0.0], [1.0, 1.0]).closest_point([x, y]);
    let ex = exact([0.0, 0.0], [1.0, 1.0], [x, y], false);
    assert!(r.distance > 0.0);
    assert!(faithful(r.distance_squared, &ex.d2) && faithful_sqrt(r.distance, &ex.d2));
    assert!(faithful(r.point[0], &ex.point[0]) && faithful(r.t, &ex.t));
}

#[test]
fn clamped_endpoint_is_bit_exact() {
    // a + 1·(b − a) is not b in floating point; the result must be b itself.
    let (a, b) = ([0.1, 0.7], [0.30000000000000004, 1e-17]);
    let r = Segment2::new(a, b).closest_point([5.0, -5.0]);
    assert_eq!((r.point, r.t, r.region), (b, 1.0, Region::End));
    let r = Segment2::new(a, b).closest_point([-5.0, 5.0]);
    assert_eq!((r.point, r.t, r.region), (a, 0.0, Region::Start));
}

#[test]
fn perpendicular_exactly_at_vertex_is_that_vertex() {
    let s = Segment2::new([0.0, 0.0], [3.0, 1.0]);
    let r = s.closest_point([-1.0, 3.0]); // ap·ab = 0
    assert_eq!((r.region, r.t), (Region::Start, 0.0));
    let r = s.closest_point([2.0, 4.0]); // bp·ab = 0
    assert_eq!((r.region, r.t, r.point), (Region::End, 1.0, [3.0, 1.0]));
}

#[test]
fn utm_near_segment_is_faithful_where_textbook_is_not() {
    let a = [500_000.1, 6_700_000.3];
    let b = [500_010.7, 6_700_004.9];
    let t = 0.37;
    let p = [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]) + 1e-9];
    let r = Segment2::new(a, b).closest_point(p);
    let ex = exact(a, b, p, false);
    assert!(faithful_sqrt(r.distance, &ex.d2));
    assert!(faithful(r.point[0], &ex.point[0]) && faithful(r.point[1], &ex.point[1]));
    let fast = Segment2::new(a, b).closest_point_fast(p);
    assert!(!faithful_sqrt(fast.distance, &ex.d2), "the textbook formula should be visibly off here");
}

#[test]
fn f32_results_are_rounded_once_from_exact() {
    let s = Segment2::new([0.1f32, 0.2], [0.7, 0.9]);
    let p = [0.5f32, 0.1];
    let r = s.closest_point(p);
    let ex =
        exact([0.1f32 as f64, 0.2f32 as f64], [0.7f32 as f64, 0.9f32 as f64], [0.5f32 as f64, 0.1f32 as f64], false);
    assert!(faithful(r.t, &ex.t) && faithful(r.distance_squared, &ex.d2) && faithful_sqrt(r.distance, &ex.d2));
}

#[test]
fn seed_example_squared_distance_to_line() {
    // ../shared/seeds/000: segment (1,1)–(5,2), point (3,3): 36/17 ≈ 2.117647.
    let d2 = Line2::new([1.0, 1.0], [5.0, 2.0]).distance_squared([3.0, 3.0]);
    assert_eq!(d2, 36.0 / 17.0);
    assert_eq!(format!("{d2:.6}"), "2.117647");
    assert_eq!(Segment2::new([1.0f32, 1.0], [5.0, 2.0]).distance_squared([3.0, 3.0]), 36.0f32 / 17.0);
}

#[test]
fn visual_unit_test_points_match_exact_projection() {
    // ../shared/seeds/004: line (−3,−2,−1)–(1,2,3) and its eight test points.
    let (a, b) = ([-3.0, -2.0, -1.0], [1.0, 2.0, 3.0]);
    let pts = [
        [7.0, -2.0, -1.0],
        [-4.0, -7.0, -8.0],
        [7.0, 8.0, 5.0],
        [1.0, 5.0, -5.0],
        [-6.0, 5.0, 7.0],
        [1.0, 6.0, 8.0],
        [-7.0, -10.0, -4.0],
        [5.0, 5.0, 3.0],
    ];
    let regions: Vec<Region> = pts.iter().map(|&p| Segment3::new(a, b).closest_point(p).region).collect();
    assert_eq!(
        regions,
        [
            Region::Interior,
            Region::Start,
            Region::End,
            Region::Interior,
            Region::End, // ap·ab = 48 = |ab|²: exactly the end vertex
            Region::End,
            Region::Start,
            Region::End
        ]
    );
    for p in pts {
        let r = Segment3::new(a, b).closest_point(p);
        let ex = exact(a, b, p, false);
        assert!(faithful(r.t, &ex.t));
        for i in 0..3 {
            assert!(faithful(r.point[i], &ex.point[i]));
        }
        assert!(faithful_sqrt(r.distance, &ex.d2));
    }
}

#[test]
fn signed_distance_sign_is_exact_next_to_the_line() {
    let l = Line2::new([0.1, 0.1], [0.7, 0.7]);
    let above = f64::from_bits(0.4f64.to_bits() + 1);
    let below = f64::from_bits(0.4f64.to_bits() - 1);
    assert!(l.signed_distance([0.4, above]) > 0.0);
    assert!(l.signed_distance([0.4, below]) < 0.0);
    assert_eq!(l.signed_distance([0.4, 0.4]), 0.0);
    assert_eq!(Line2::new([1.0, 1.0], [1.0, 1.0]).signed_distance([4.0, 5.0]), 5.0);
    assert!(l.signed_distance([f64::NAN, 0.0]).is_nan());
}

#[test]
fn signed_distance_is_faithful() {
    let mut r = rng(5);
    for fam in ["uniform", "utm", "near_interior", "huge", "tiny", "mixed_magnitudes"] {
        for (a, b, p) in generate::<2>(fam, 11, 300) {
            let _ = &mut r;
            if a == b {
                continue;
            }
            let s = Line2::new(a, b).signed_distance(p);
            let ex = exact(a, b, p, true);
            assert!(faithful_sqrt(s.abs(), &ex.d2), "{fam}: {a:?} {b:?} {p:?}");
            let cross = (q(b[0]) - q(a[0])) * (q(p[1]) - q(a[1])) - (q(b[1]) - q(a[1])) * (q(p[0]) - q(a[0]));
            let sign_ok = match cross.cmp(&Q::from_integer(0.into())) {
                std::cmp::Ordering::Greater => s > 0.0,
                std::cmp::Ordering::Less => s < 0.0,
                std::cmp::Ordering::Equal => s == 0.0,
            };
            assert!(
                sign_ok || s == 0.0 && ex.d2 < q(f64::from_bits(1)),
                "{fam}: sign of {s} wrong for {a:?} {b:?} {p:?}"
            );
        }
    }
}

#[test]
fn plane_signed_distance_is_faithful() {
    let mut r = rng(9);
    use rand::Rng;
    for _ in 0..2000 {
        let n: [f64; 3] = std::array::from_fn(|_| r.gen_range(-10.0..10.0));
        let p: [f64; 3] = std::array::from_fn(|_| r.gen_range(-1e3..1e3));
        // Offsets that put p near or on the plane, and random ones.
        let on = n[0] * p[0] + n[1] * p[1] + n[2] * p[2];
        let off = if r.r#gen::<bool>() { on } else { r.gen_range(-1e4..1e4) };
        let plane = Plane::new(n, off).unwrap();
        let s = plane.signed_distance(p);
        let num = q(n[0]) * q(p[0]) + q(n[1]) * q(p[1]) + q(n[2]) * q(p[2]) - q(off);
        let nn = q(n[0]) * q(n[0]) + q(n[1]) * q(n[1]) + q(n[2]) * q(n[2]);
        let d2 = &num * &num / nn;
        assert!(faithful_sqrt(s.abs(), &d2), "{n:?} {off} {p:?}: {s}");
        assert_eq!(s > 0.0, num > Q::from_integer(0.into()), "{n:?} {off} {p:?}");
    }
}

#[test]
fn ball_contact_is_decided_exactly() {
    let s = Segment2::new([0.0, 0.0], [10.0, 0.0]);
    // Tangent: exactly touching counts.
    assert!(s.intersects_circle([5.0, 1.0], 1.0));
    let just_out = f64::from_bits(1.0f64.to_bits() + 1);
    assert!(!s.intersects_circle([5.0, just_out], 1.0));
    assert!(s.intersects_circle([11.0, 0.0], 1.0));
    assert!(!s.intersects_circle([11.0, 0.0], f64::from_bits(1.0f64.to_bits() - 1)));
    assert!(!s.intersects_circle([5.0, 0.0], -1.0));
    assert!(!s.intersects_circle([5.0, 0.0], f64::NAN));
    assert!(s.intersects_circle([5.0, 0.0], 0.0)); // a point on the segment touches
    let s3 = Segment3::new([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]);
    assert!(s3.intersects_sphere([3.0, 4.0, 0.5], 5.0));
    assert!(!s3.intersects_sphere([3.0, 4.0, 0.5], 4.999999999999999));
    // Against the reference on random near-tangent cases.
    for (a, b, p) in generate::<2>("near_interior", 3, 500) {
        let ex = exact(a, b, p, false);
        let d = to_f64_approx(&ex.d2).sqrt();
        for r in [d, f64::from_bits(d.to_bits() + 1), f64::from_bits(d.to_bits().saturating_sub(1))] {
            let want = ex.d2 <= q(r) * q(r);
            assert_eq!(Segment2::new(a, b).intersects_ball(p, r), want, "{a:?} {b:?} {p:?} r={r}");
        }
    }
}

#[test]
fn cmp_distance_is_exact_at_the_boundary() {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let s: Segment2 = Segment2::new([0.0, 0.0], [10.0, 0.0]);
    assert_eq!(s.cmp_distance([5.0, 1.0], 1.0), Some(Equal));
    assert_eq!(s.cmp_distance([5.0, 1.0], f64::from_bits(1.0f64.to_bits() + 1)), Some(Less));
    assert_eq!(s.cmp_distance([5.0, 1.0], f64::from_bits(1.0f64.to_bits() - 1)), Some(Greater));
    assert_eq!(s.cmp_distance([5.0, 0.0], 0.0), Some(Equal)); // on the segment
    assert_eq!(s.cmp_distance([5.0, 0.0], -1.0), Some(Greater));
    assert_eq!(s.cmp_distance([5.0, 7.0], f64::INFINITY), Some(Less));
    assert_eq!(s.cmp_distance([5.0, 7.0], f64::NAN), None);
    assert_eq!(s.cmp_distance([f64::INFINITY, 7.0], 1.0), None);
    // Against the reference on random near-tangent cases, both dimensions' kernels.
    for (a, b, p) in generate::<2>("near_interior", 4, 500) {
        let ex = exact(a, b, p, false);
        let d = to_f64_approx(&ex.d2).sqrt();
        for r in [d, f64::from_bits(d.to_bits() + 1), f64::from_bits(d.to_bits().saturating_sub(1))] {
            let want = ex.d2.cmp(&(q(r) * q(r)));
            assert_eq!(Segment2::new(a, b).cmp_distance(p, r), Some(want), "{a:?} {b:?} {p:?} r={r}");
        }
    }
}

#[test]
fn push_out_moves_ball_to_contact() {
    let wall: Segment2 = Segment2::new([0.0, 0.0], [10.0, 0.0]);
    assert_eq!(wall.push_out([5.0, -0.5], 2.0), Some([0.0, -1.5]));
    assert_eq!(wall.push_out([-1.0, 0.0], 2.0), Some([-1.0, 0.0]));
    assert_eq!(wall.push_out([5.0, 0.0], 2.0), Some([0.0, 2.0])); // left normal of a→b
    assert_eq!(wall.push_out([5.0, 3.0], 2.0), None);
    assert_eq!(wall.push_out([5.0, 2.0], 2.0), None); // touching, not overlapping
    assert_eq!(Segment2::new([1.0, 1.0], [1.0, 1.0]).push_out([1.0, 1.0], 0.5), Some([0.5, 0.0]));
    let s3: Segment3 = Segment3::new([0.0, 0.0, 0.0], [0.0, 0.0, 4.0]);
    let v = s3.push_out([0.0, 0.0, 2.0], 1.0).unwrap();
    assert!((v[0] * v[0] + v[1] * v[1] - 1.0).abs() < 1e-15 && v[2] == 0.0);
    // After the push the ball only touches.
    let c = [3.0, 0.25];
    let v = wall.push_out(c, 1.0).unwrap();
    assert!((wall.distance([c[0] + v[0], c[1] + v[1]]) - 1.0).abs() < 1e-15);
}

#[test]
fn degenerate_planes_are_rejected() {
    assert!(Plane::new([0.0, 0.0, 0.0], 1.0).is_none());
    assert!(Plane::new([f64::NAN, 1.0, 0.0], 1.0).is_none());
    assert!(Plane::new([1.0, 1.0, 0.0], f64::INFINITY).is_none());
    assert!(Plane::from_points([0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [3.0, 3.0, 3.0]).is_none());
    assert!(Plane::new([1.0, 0.0, 0.0], 0.0).unwrap().signed_distance([f64::NAN, 0.0, 0.0]).is_nan());
}

#[test]
fn distance_agrees_with_closest_point_when_t_needs_the_exact_path() {
    // Found by proptest: q's cancellation sends t and q to the exact path;
    // the distance must stay the one distance() returns.
    let (a, b, p): ([f64; 3], [f64; 3], [f64; 3]) =
        ([0.0, -2.1621322282710016e77, 0.0], [-375.4397014075493, 0.0, -3.0], [583.3382453616524, 0.0, -3.0]);
    let s = Segment3::new(a, b);
    let r = s.closest_point(p);
    assert_eq!(r.distance.to_bits(), s.distance(p).to_bits());
    assert_eq!(r.distance_squared.to_bits(), s.distance_squared(p).to_bits());
    let ex = exact(a, b, p, false);
    assert!(faithful_sqrt(r.distance, &ex.d2) && faithful(r.t, &ex.t));
}
