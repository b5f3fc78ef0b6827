//! Against an independent reference: a direct minimisation of the distance
//! along the segment (dense samples, then golden-section refinement), with
//! GeographicLib's direct and inverse problems for the ellipsoid and slerp
//! for the sphere. Tolerance: 1 mm, as the crate promises.

use geographiclib_rs::{DirectGeodesic, Geodesic, InverseGeodesic};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist_geo::{geodesic, sphere, GeoProjection, MEAN_EARTH_RADIUS};

const MM: f64 = 1e-3;

fn g() -> Geodesic {
    Geodesic::wgs84()
}

fn dist(g: &Geodesic, p: [f64; 2], q: [f64; 2]) -> f64 {
    g.inverse(p[1], p[0], q[1], q[0])
}

/// Minimises `f` over `[0, len]`: 4000 samples, then golden section around
/// the best. Returns `(s, f(s))`.
fn minimise(len: f64, f: impl Fn(f64) -> f64) -> (f64, f64) {
    let n = 4000;
    let mut best = (0.0, f(0.0));
    for i in 1..=n {
        let s = len * f64::from(i) / f64::from(n);
        let d = f(s);
        if d < best.1 {
            best = (s, d);
        }
    }
    let h = len / f64::from(n);
    let (mut lo, mut hi) = ((best.0 - h).max(0.0), (best.0 + h).min(len));
    let r = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..200 {
        let (x1, x2) = (hi - r * (hi - lo), lo + r * (hi - lo));
        if f(x1) <= f(x2) {
            hi = x2;
        } else {
            lo = x1;
        }
    }
    let s = (lo + hi) / 2.0;
    if f(s) < best.1 {
        (s, f(s))
    } else {
        best
    }
}

/// The reference closest point, located precisely: where the distance is
/// least, its derivative along the segment, `-cos` of the angle between the
/// segment and the geodesic to `p`, changes sign (bisection to a
/// nanometre; minimising the distance itself only fixes the point to about
/// `sqrt(2·d·ε)`).
fn foot(a: [f64; 2], b: [f64; 2], p: [f64; 2]) -> [f64; 2] {
    let g = g();
    let (len, azi, _, _): (f64, f64, f64, f64) = g.inverse(a[1], a[0], b[1], b[0]);
    let at = |s: f64| -> [f64; 2] {
        let (lat, lon): (f64, f64) = g.direct(a[1], a[0], azi, s);
        [lon, lat]
    };
    // Positive where moving along the segment brings the point nearer.
    let slope = |s: f64| -> f64 {
        let (lat, lon, azi2): (f64, f64, f64) = g.direct(a[1], a[0], azi, s);
        let (_, azi_p, _, _): (f64, f64, f64, f64) = g.inverse(lat, lon, p[1], p[0]);
        (azi_p - azi2).to_radians().cos()
    };
    let (_, s0) = reference(a, b, p);
    let h = (len * 1e-3).max(1e-6);
    let (mut lo, mut hi) = ((s0 - h).max(0.0), (s0 + h).min(len));
    if slope(lo) <= 0.0 {
        return at(lo);
    }
    if slope(hi) >= 0.0 {
        return at(hi);
    }
    while hi - lo > 1e-9 {
        let m = 0.5 * (lo + hi);
        if slope(m) > 0.0 {
            lo = m;
        } else {
            hi = m;
        }
    }
    at(0.5 * (lo + hi))
}

/// The reference on the ellipsoid: `(distance, along)`.
fn reference(a: [f64; 2], b: [f64; 2], p: [f64; 2]) -> (f64, f64) {
    let g = g();
    let (len, azi, _, _): (f64, f64, f64, f64) = g.inverse(a[1], a[0], b[1], b[0]);
    let (s, d) = minimise(len, |s| {
        let (lat, lon): (f64, f64) = g.direct(a[1], a[0], azi, s);
        dist(&g, p, [lon, lat])
    });
    (d, s)
}

/// Checks one case: the distance within 1 mm of the reference, the point
/// on the segment at the reported `along`, and the reported distance the
/// distance to the reported point.
fn check(a: [f64; 2], b: [f64; 2], p: [f64; 2], what: &str) -> GeoProjection {
    check_err(a, b, p, what).0
}

/// [`check`], also returning the distance error against the reference.
fn check_err(a: [f64; 2], b: [f64; 2], p: [f64; 2], what: &str) -> (GeoProjection, f64) {
    let g = g();
    let r = geodesic(a, b, p).unwrap_or_else(|| panic!("{what}: None for {a:?} {b:?} {p:?}"));
    let (d, _) = reference(a, b, p);
    assert!((r.distance - d).abs() <= MM, "{what}: {} vs reference {d} for {a:?} {b:?} {p:?}", r.distance);
    let (len, azi, _, _): (f64, f64, f64, f64) = g.inverse(a[1], a[0], b[1], b[0]);
    let (lat, lon): (f64, f64) = g.direct(a[1], a[0], azi, r.along);
    assert!(dist(&g, [lon, lat], r.point) <= MM, "{what}: point off the segment at along {}", r.along);
    assert!((dist(&g, p, r.point) - r.distance).abs() <= 1e-6, "{what}: distance is not to the point");
    assert!((0.0..=1.0).contains(&r.t) && (r.t * len - r.along).abs() <= MM.max(1e-9 * len), "{what}: t {}", r.t);
    (r, (r.distance - d).abs())
}

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

fn lonlat(r: &mut ChaCha8Rng, max_lat: f64) -> [f64; 2] {
    [r.gen_range(-180.0..180.0), r.gen_range(-max_lat..max_lat)]
}

/// `p` moved by `d` metres at azimuth `azi`.
fn offset(p: [f64; 2], azi: f64, d: f64) -> [f64; 2] {
    let (lat, lon): (f64, f64) = g().direct(p[1], p[0], azi, d);
    [lon, lat]
}

#[test]
fn short_roads_anywhere_match_the_reference() {
    let mut r = rng(1);
    let mut worst = 0.0f64;
    for i in 0..150 {
        let a = lonlat(&mut r, 85.0);
        let b = offset(a, r.gen_range(0.0..360.0), 10f64.powf(r.gen_range(0.0..4.7)));
        let mid = offset(a, r.gen_range(0.0..360.0), r.gen_range(0.0..2000.0));
        let p = offset(mid, r.gen_range(0.0..360.0), 10f64.powf(r.gen_range(-2.0..4.0)));
        worst = worst.max(check_err(a, b, p, &format!("short #{i}")).1);
    }
    // `cargo test -p segdist-geo -- --nocapture` shows it.
    eprintln!("short roads: worst distance error {worst:.3e} m");
}

#[test]
fn the_short_path_is_within_micrometres() {
    // Segments and points within 2 km (the chord path, no GeographicLib):
    // every latitude, the antimeridian, the poles; lengths from 1 mm.
    let mut r = rng(3);
    let g = g();
    let (mut worst_d, mut worst_q) = (0.0f64, 0.0f64);
    for i in 0..400 {
        let a = if i % 10 == 0 { [r.gen_range(-180.0..180.0), r.gen_range(89.99..90.0)] } else { lonlat(&mut r, 90.0) };
        let b = offset(a, r.gen_range(0.0..360.0), 10f64.powf(r.gen_range(-3.0..3.3)));
        let mid = offset(a, r.gen_range(0.0..360.0), r.gen_range(0.0..500.0));
        let p = offset(mid, r.gen_range(0.0..360.0), 10f64.powf(r.gen_range(-3.0..3.18)));
        let (got, err) = check_err(a, b, p, &format!("short path #{i}"));
        worst_d = worst_d.max(err);
        // The point against the reference foot.
        let q = foot(a, b, p);
        worst_q = worst_q.max(dist(&g, q, got.point));
    }
    eprintln!("short path: worst distance error {worst_d:.3e} m, worst point error {worst_q:.3e} m");
    assert!(worst_d < 1e-5 && worst_q < 1e-4, "distance error {worst_d} m, point error {worst_q} m");
}

#[test]
fn long_segments_and_far_points_match_the_reference() {
    let mut r = rng(2);
    let mut worst = 0.0f64;
    for i in 0..40 {
        let a = lonlat(&mut r, 80.0);
        let b = offset(a, r.gen_range(0.0..360.0), r.gen_range(1e6..1.5e7));
        let p = lonlat(&mut r, 89.0);
        worst = worst.max(check_err(a, b, p, &format!("long #{i}")).1);
    }
    eprintln!("long segments: worst distance error {worst:.3e} m");
}

#[test]
fn the_antimeridian_and_the_poles_need_nothing_special() {
    // Crossing 180°: the short way, 0.2° of longitude.
    let r = check([179.9, 10.0], [-179.9, 10.0], [180.0, 10.01], "antimeridian");
    assert!(r.distance < 1200.0 && (r.t - 0.5).abs() < 0.01, "{r:?}");
    // Longitudes out of range mean the same places.
    let same = geodesic([539.9, 10.0], [-539.9, 10.0], [-180.0, 10.01]).unwrap();
    assert!((same.distance - r.distance).abs() < 1e-6);
    // Over the north pole, and a point near it.
    check([0.0, 89.5], [180.0, 89.5], [90.0, 89.99], "over the pole");
    check([10.0, 89.9], [100.0, 89.9], [-170.0, 90.0], "at the pole");
    check([-45.0, -89.0], [135.0, -89.5], [45.0, -89.7], "south pole");
}

#[test]
fn edge_cases_are_decided() {
    // Zero length: the vertex, t = 0.
    let r = geodesic([10.0, 50.0], [10.0, 50.0], [10.0, 50.001]).unwrap();
    assert_eq!((r.point, r.t, r.along), ([10.0, 50.0], 0.0, 0.0));
    assert!((r.distance - 111.2).abs() < 0.5);
    // Points on the segment: distance 0 to within the accuracy.
    let (a, b) = ([2.35, 48.85], [13.40, 52.52]);
    let (len, azi, _, _): (f64, f64, f64, f64) = g().inverse(a[1], a[0], b[1], b[0]);
    for f in [0.0, 0.25, 0.5, 0.999] {
        let (lat, lon): (f64, f64) = g().direct(a[1], a[0], azi, f * len);
        let r = geodesic(a, b, [lon, lat]).unwrap();
        assert!(r.distance <= MM, "{f}: {}", r.distance);
        assert!((r.t - f).abs() * len <= MM, "{f}: t {}", r.t);
    }
    // Endpoints: beyond a vertex the vertex itself.
    let r = geodesic(a, b, [0.0, 48.0]).unwrap();
    assert_eq!((r.point, r.t), (a, 0.0));
    // Invalid input: None, never a panic or a NaN.
    for bad in [[f64::NAN, 0.0], [0.0, 91.0], [f64::INFINITY, 1.0]] {
        assert!(geodesic(bad, b, [0.0, 0.0]).is_none());
        assert!(geodesic(a, b, bad).is_none());
        assert!(sphere(a, bad, [0.0, 0.0], MEAN_EARTH_RADIUS).is_none());
    }
    assert!(sphere(a, b, [0.0, 0.0], -1.0).is_none());
    // Nearly antipodal vertices: a geodesic exists; the result is finite.
    let r = geodesic([0.0, 0.0], [179.5, 0.0], [90.0, 10.0]).unwrap();
    assert!(r.distance.is_finite() && r.point.iter().all(|c| c.is_finite()));
}

/// The sphere against slerp sampling.
#[test]
fn sphere_matches_its_reference() {
    let mut r = rng(3);
    let unit = |p: [f64; 2]| {
        let (lon, lat) = (p[0].to_radians(), p[1].to_radians());
        [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
    };
    let ang = |u: [f64; 3], v: [f64; 3]| {
        let c = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
        (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt().atan2(u[0] * v[0] + u[1] * v[1] + u[2] * v[2])
    };
    for i in 0..200 {
        let a = lonlat(&mut r, 89.0);
        let b =
            if i % 2 == 0 { lonlat(&mut r, 89.0) } else { offset(a, r.gen_range(0.0..360.0), r.gen_range(1.0..5e4)) };
        let p =
            if i % 3 == 0 { lonlat(&mut r, 89.0) } else { offset(a, r.gen_range(0.0..360.0), r.gen_range(1.0..2e4)) };
        let (ua, ub, up) = (unit(a), unit(b), unit(p));
        let th = ang(ua, ub);
        let at = |s: f64| {
            let (w1, w2) = (((1.0 - s) * th).sin() / th.sin(), (s * th).sin() / th.sin());
            [w1 * ua[0] + w2 * ub[0], w1 * ua[1] + w2 * ub[1], w1 * ua[2] + w2 * ub[2]]
        };
        let (_, d) = minimise(1.0, |s| MEAN_EARTH_RADIUS * ang(up, at(s)));
        let got = sphere(a, b, p, MEAN_EARTH_RADIUS).unwrap();
        assert!((got.distance - d).abs() <= 1e-6 * MEAN_EARTH_RADIUS.max(1.0) * 1e-3, "#{i}: {} vs {d}", got.distance);
    }
}
