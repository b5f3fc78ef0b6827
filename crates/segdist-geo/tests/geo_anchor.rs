//! The sphere against the anchor the geographic issue names for it: geo's
//! `haversine_closest_point` (great-circle cross-track formulas), on geo's
//! sphere (radius 6,371,008.8 m). Both work on a sphere, so they agree
//! wherever geo's formulas hold; where they differ, segdist's point is the
//! nearer (it is the minimum over the arc), and the test says by how much
//! geo misses.

use geo::{Closest, Distance, Haversine, HaversineClosestPoint, Line, Point};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist_geo::sphere;

/// geo's `Haversine` radius (the IUGG mean radius to 0.1 m; segdist's
/// `MEAN_EARTH_RADIUS` is `(2a + b)/3` exactly, 6,371,008.771 m, which by
/// itself moves 1000 km by 4 mm).
const R_GEO: f64 = 6_371_008.8;

#[test]
fn sphere_agrees_with_geo_haversine_closest_point_or_is_nearer() {
    let mut r = ChaCha8Rng::seed_from_u64(31);
    let (mut agree, mut worst_agree, mut geo_misses, mut worst_miss, mut geo_off) = (0, 0.0f64, 0, 0.0f64, 0);
    for i in 0..2000 {
        let a = [r.gen_range(-180.0..180.0), r.gen_range(-80.0..80.0)];
        // Roads (1 m to 2 km) and long lines (up to ~2000 km).
        let len = if i % 2 == 0 { 10f64.powf(r.gen_range(-5.0..-1.7)) } else { r.gen_range(0.5..20.0) };
        let b = [a[0] + len * r.gen_range(-1.0..1.0), (a[1] + len * r.gen_range(-1.0..1.0)).clamp(-85.0, 85.0)];
        let p = [
            a[0] + (b[0] - a[0]) * r.gen_range(-0.2..1.2) + len * r.gen_range(-0.3..0.3),
            a[1] + (b[1] - a[1]) * r.gen_range(-0.2..1.2) + len * r.gen_range(-0.3..0.3),
        ];
        if p[1].abs() > 89.0 {
            continue;
        }
        let ours = sphere(a, b, p, R_GEO).unwrap();
        let line = Line::new(Point::new(a[0], a[1]), Point::new(b[0], b[1]));
        let theirs = match line.haversine_closest_point(&Point::new(p[0], p[1])) {
            Closest::SinglePoint(q) | Closest::Intersection(q) => q,
            Closest::Indeterminate => continue,
        };
        let to_theirs = sphere([theirs.x(), theirs.y()], [theirs.x(), theirs.y()], p, R_GEO).unwrap().distance;
        // geo's answer off the segment (past an end, on the great circle's
        // continuation): nearer than any point of the arc, and wrong.
        if sphere(a, b, [theirs.x(), theirs.y()], R_GEO).unwrap().distance > 1e-3 {
            assert!(to_theirs < ours.distance, "case {i}: geo off the arc and no nearer");
            geo_off += 1;
            continue;
        }
        // On the arc, geo's point is never nearer than ours.
        assert!(ours.distance <= to_theirs + 1e-6, "case {i}: ours {} m, geo's point {to_theirs} m", ours.distance);
        // geo's own distance to its point, against ours to ours.
        let diff = (Haversine.distance(Point::new(p[0], p[1]), theirs) - ours.distance).abs();
        if diff <= 1e-3 {
            agree += 1;
            worst_agree = worst_agree.max(diff);
        } else {
            geo_misses += 1;
            worst_miss = worst_miss.max(to_theirs - ours.distance);
        }
    }
    eprintln!(
        "geo anchor: {agree} cases agree within {worst_agree:.1e} m; geo misses by up to {worst_miss:.1} m in \
         {geo_misses} (a vertex for an interior foot, or short-range cancellation) and leaves the segment in {geo_off}"
    );
    assert!(agree >= 1900, "only {agree} agree");
}
