//! Short segments and near points without GeographicLib: the geometry of
//! the chords in Earth-centred coordinates, lifted back onto the ellipsoid.
//!
//! For a segment at most [`SHORT`] long (chord) and a point at most
//! [`SHORT`] from its chord, the geodesic answer is within micrometres of
//! plane geometry in 3D:
//!
//! - the foot of the perpendicular from the point to the chord lies, along
//!   the chord, within micrometres of the geodesic foot (chord, arc and
//!   point are within the sag `L²/8R` ≈ 8 cm of one plane, and the foot
//!   moves by that times the tilt `L/R`);
//! - that foot lifted along the ellipsoid's normal onto the surface lies on
//!   the geodesic to within micrometres (for a sphere exactly: the normal
//!   projection of a chord is its great-circle arc; the ellipsoid bends it
//!   by a fraction of `e²` of the sag);
//! - a geodesic distance `s` and the chord `c` between its ends differ by
//!   `c³/(24ρ²)` (8 µm at 2 km), which is added with the mean radius for
//!   `ρ`.
//!
//! Measured against a direct minimisation along GeographicLib's geodesic
//! (tests/accuracy.rs, `the_short_path_is_within_micrometres`): distances
//! within 1e-7 m, closest points within 4e-6 m. It costs a few sines,
//! cosines and arctangents instead of the seven or so geodesic problems of
//! the interception: 140 ns a query against 2.9 µs.

use crate::vec3::{dot, norm, sub};
use crate::{ecef, GeoProjection, A, F};

/// The largest chord (m) of a segment, and distance (m) of a point from
/// it, that the short path answers.
pub(crate) const SHORT: f64 = 2_000.0;

/// The mean radius, for the chord-to-arc correction (whose own size is
/// micrometres here, so the radius's 1% spread over the ellipsoid does not
/// show).
const R: f64 = crate::MEAN_EARTH_RADIUS;

/// The geodesic length of a chord `c` of at most a few kilometres.
pub(crate) fn arc(c: f64) -> f64 {
    c + c * c * c / (24.0 * R * R)
}

/// The point of the ellipsoid whose normal passes through `x`, a point
/// within centimetres of the surface: `[lon, lat]` (degrees) and its
/// Earth-centred coordinates. The latitude by fixed-point iteration from
/// the surface's own formula (each round gains a factor `e²`; two rounds
/// from an 8 cm offset leave nanometres; none leaves 40 µm, which the
/// accuracy test catches), carried as its tangent, a numerator over `p`:
/// the sines and cosines are then square roots and divisions, the surface
/// point is built from them, and only the reported degrees need
/// arctangents. (Through the angles, four arctangents, two sines and the
/// surface point's sines and cosines again: `geodesic` 0.18 → 0.14 µs a
/// query in the `geo` bench, a lon/lat match 10 % fewer instructions;
/// PERFORMANCE-NOTES.md, "Map matching".)
fn lift(x: &[f64; 3]) -> ([f64; 2], [f64; 3]) {
    let e2 = F * (2.0 - F);
    // Square roots of sums: `hypot` guards against an overflow that
    // Earth-sized coordinates cannot reach, and glibc's took 4 % of a
    // lon/lat match's time (perf).
    let p = (x[0] * x[0] + x[1] * x[1]).sqrt();
    if p == 0.0 {
        // On the axis: a pole, longitude 0.
        let q = [0.0, if x[2] < 0.0 { -90.0 } else { 90.0 }];
        return (q, ecef(&q));
    }
    // tan(lat) = num / p, first for a point on the surface.
    let mut num = x[2] / (1.0 - e2);
    let (mut s, mut c) = (0.0, 0.0);
    for round in 0..3 {
        let h = (num * num + p * p).sqrt();
        (s, c) = (num / h, p / h);
        if round == 2 {
            break;
        }
        let n = A / (1.0 - e2 * s * s).sqrt();
        num = x[2] + e2 * n * s;
    }
    let n = A / (1.0 - e2 * s * s).sqrt();
    let (clon, slon) = (x[0] / p, x[1] / p);
    let q = [x[1].atan2(x[0]).to_degrees(), num.atan2(p).to_degrees()];
    (q, [n * c * clon, n * c * slon, n * (1.0 - e2) * s])
}

/// The closest point of the geodesic `a → b` to `p` (all valid, longitudes
/// in [-180, 180]), or `None` when the segment or the point is too far for
/// this path (the caller then iterates with GeographicLib).
pub(crate) fn short(a: &[f64; 2], b: &[f64; 2], p: &[f64; 2]) -> Option<GeoProjection> {
    // A distance between two points is asked as the segment `a → a`: its
    // end computed once (the same bits).
    let xa = ecef(a);
    let xb = if a[0].to_bits() == b[0].to_bits() && a[1].to_bits() == b[1].to_bits() { xa } else { ecef(b) };
    short_from(a, b, &xa, &xb, &ecef(p))
}

/// [`short`] given `ecef` of `a`, `b` and the point.
pub(crate) fn short_from(
    a: &[f64; 2],
    b: &[f64; 2],
    xa: &[f64; 3],
    xb: &[f64; 3],
    xp: &[f64; 3],
) -> Option<GeoProjection> {
    let (xa, xb, xp) = (*xa, *xb, *xp);
    let ab = sub(&xb, &xa);
    let l2 = dot(&ab, &ab);
    if l2 > SHORT * SHORT {
        return None;
    }
    let ap = sub(&xp, &xa);
    let t = if l2 > 0.0 { (dot(&ap, &ab) / l2).clamp(0.0, 1.0) } else { 0.0 };
    let foot = [xa[0] + t * ab[0], xa[1] + t * ab[1], xa[2] + t * ab[2]];
    if norm(&sub(&xp, &foot)) > SHORT {
        return None;
    }
    let len = arc(l2.sqrt());
    // The vertices themselves where the foot is clamped.
    let (point, xq) = if t == 0.0 {
        (*a, xa)
    } else if t == 1.0 {
        (*b, xb)
    } else {
        lift(&foot)
    };
    let along = if t == 1.0 { len } else { arc(norm(&sub(&xq, &xa))).min(len) };
    let t = if len > 0.0 { (along / len).clamp(0.0, 1.0) } else { 0.0 };
    Some(GeoProjection { point, t, along, distance: arc(norm(&sub(&xp, &xq))) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The formula `lift` replaced: the latitude's angle iterated, then
    /// the surface point from its sines and cosines.
    fn lift_through_angles(x: &[f64; 3]) -> ([f64; 2], [f64; 3]) {
        let e2 = F * (2.0 - F);
        let p = x[0].hypot(x[1]);
        let mut lat = x[2].atan2(p * (1.0 - e2));
        for _ in 0..2 {
            let s = lat.sin();
            let n = A / (1.0 - e2 * s * s).sqrt();
            lat = (x[2] + e2 * n * s).atan2(p);
        }
        let q = [x[1].atan2(x[0]).to_degrees(), lat.to_degrees()];
        (q, ecef(&q))
    }

    /// The same surface point and degrees as through the angles, to within
    /// nanometres, from the equator to the poles and a few centimetres
    /// above or below the surface; on the axis, the pole.
    #[test]
    fn lift_from_square_roots_is_lift_through_angles() {
        let mut worst = (0.0f64, 0.0f64);
        for i in 0..20_000u32 {
            // A deterministic spread of places and heights.
            let lon = f64::from(i) * 0.618_033_988_749 % 1.0 * 360.0 - 180.0;
            let lat = (f64::from(i) * 0.414_213_562_373 % 1.0 * 180.0 - 90.0).clamp(-90.0, 90.0);
            let h = (f64::from(i % 17) - 8.0) * 0.01;
            let s = ecef(&[lon, lat]);
            let up = [
                lat.to_radians().cos() * lon.to_radians().cos(),
                lat.to_radians().cos() * lon.to_radians().sin(),
                lat.to_radians().sin(),
            ];
            let x = [s[0] + h * up[0], s[1] + h * up[1], s[2] + h * up[2]];
            let (q, xq) = lift(&x);
            let (r, xr) = lift_through_angles(&x);
            worst.0 = worst.0.max(norm(&sub(&xq, &xr)));
            worst.1 = worst.1.max((q[1] - r[1]).abs()).max(if r[1].abs() < 89.9 { (q[0] - r[0]).abs() } else { 0.0 });
            assert!(q.iter().chain(&xq).all(|v| v.is_finite()), "{x:?}");
        }
        assert!(worst.0 < 1e-8 && worst.1 < 1e-12, "{worst:?}");
        for z in [6_356_752.314_245, -6_356_752.314_245] {
            let (q, xq) = lift(&[0.0, 0.0, z]);
            assert_eq!(q, [0.0, 90.0f64.copysign(z)]);
            assert!((xq[2] - z).abs() < 1e-6, "{xq:?}");
        }
    }
}
