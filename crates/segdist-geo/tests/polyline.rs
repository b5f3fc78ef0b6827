//! `GeoPolyline` against a scan of every segment with `geodesic`, and
//! `point_at` against `locate`.

use geographiclib_rs::{Geodesic, InverseGeodesic};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist_geo::{geodesic, geodesic_lengths, GeoBuildError, GeoPolyline};

fn dist(p: [f64; 2], q: [f64; 2]) -> f64 {
    Geodesic::wgs84().inverse(p[1], p[0], q[1], q[0])
}

/// A random walk of `n` steps of up to `step` degrees from `start`.
fn walk(r: &mut ChaCha8Rng, start: [f64; 2], n: usize, step: f64) -> Vec<[f64; 2]> {
    let mut v = vec![start];
    for _ in 0..n {
        let last = v[v.len() - 1];
        v.push([last[0] + r.gen_range(-step..step), (last[1] + r.gen_range(-step..step)).clamp(-89.0, 89.0)]);
    }
    v
}

fn check_line(line: &[[f64; 2]], points: &[[f64; 2]]) {
    let poly = GeoPolyline::new(line).unwrap();
    let cum = geodesic_lengths(line);
    assert_eq!(poly.length(), cum[cum.len() - 1]);
    let many = poly.locate_many(points, f64::INFINITY);
    for (p, from_many) in points.iter().zip(many) {
        // The scan: least distance, then lowest segment.
        let (i, best) = line
            .windows(2)
            .enumerate()
            .map(|(i, w)| (i, geodesic(w[0], w[1], *p).unwrap()))
            .min_by(|x, y| x.1.distance.total_cmp(&y.1.distance).then(x.0.cmp(&y.0)))
            .unwrap();
        let at = poly.locate(*p).unwrap();
        assert_eq!(Some(at), from_many);
        assert_eq!((at.segment, at.distance, at.point), (i, best.distance, best.point), "{p:?}");
        let along = if best.t == 1.0 { cum[i + 1] } else { (cum[i] + best.along).min(cum[i + 1]) };
        assert_eq!(at.along, along);
        assert!((at.fraction - along / poly.length()).abs() <= 1e-12);
        // And back: the point at that distance is the closest point.
        let back = poly.point_at(at.along).unwrap();
        assert!(dist(back, at.point) < 1e-3, "point_at({}) is {} m off", at.along, dist(back, at.point));
    }
    // The vertices are where their distances say.
    for (v, s) in line.iter().zip(&cum) {
        assert!(dist(poly.point_at(*s).unwrap(), *v) < 1e-3);
    }
}

#[test]
fn streets_in_a_city_equal_the_scan() {
    let mut r = ChaCha8Rng::seed_from_u64(21);
    for _ in 0..5 {
        let line = walk(&mut r, [24.9, 60.17], 200, 0.003);
        let points: Vec<[f64; 2]> =
            (0..300).map(|_| [24.9 + r.gen_range(-0.1..0.1), 60.17 + r.gen_range(-0.05..0.05)]).collect();
        check_line(&line, &points);
    }
}

#[test]
fn long_lines_across_the_antimeridian_equal_the_scan() {
    // Steps of up to 3° (the interception path) crossing 180°.
    let mut r = ChaCha8Rng::seed_from_u64(22);
    let line = walk(&mut r, [178.0, -30.0], 40, 3.0);
    let points: Vec<[f64; 2]> = (0..100).map(|_| [r.gen_range(160.0..200.0), r.gen_range(-60.0..0.0)]).collect();
    check_line(&line, &points);
}

#[test]
fn edge_cases_are_decided() {
    let line = GeoPolyline::new(&[[0.0, 0.0], [0.0, 0.0], [0.01, 0.0]]).unwrap(); // a repeated vertex
    let at = line.locate([0.0, 0.001]).unwrap();
    assert_eq!((at.segment, at.along, at.fraction), (0, 0.0, 0.0)); // ties to the first segment
    assert_eq!(line.point_at(f64::NAN), None);
    assert_eq!(line.point_at_fraction(f64::NAN), None);
    assert_eq!(line.point_at_fraction(2.0), Some([0.01, 0.0]));
    assert!(line.locate([f64::NAN, 0.0]).is_none());
    assert!(line.locate_many(&[[0.005, 0.5]], 10.0)[0].is_none());
    // A zero-length line: everything is its one point.
    let dot = GeoPolyline::new(&[[5.0, 5.0], [5.0, 5.0]]).unwrap();
    assert_eq!(dot.length(), 0.0);
    let at = dot.locate([5.0, 5.001]).unwrap();
    assert_eq!((at.along, at.fraction, at.point), (0.0, 0.0, [5.0, 5.0]));
    assert_eq!(dot.point_at_fraction(0.5), Some([5.0, 5.0]));
    // Bad vertices are named.
    match GeoPolyline::new(&[[0.0, 0.0], [1.0, 1.0], [2.0, -95.0]]) {
        Err(GeoBuildError::NotLonLat { feature: 0, part: 0, vertex: 2 }) => {}
        other => panic!("{:?}", other.err()),
    }
    assert!(matches!(GeoPolyline::new(&[[0.0, 0.0]]), Err(GeoBuildError::Index(_))));
}
