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
//! the interception: 180 ns a query against 2.9 µs.

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
fn arc(c: f64) -> f64 {
    c + c * c * c / (24.0 * R * R)
}

/// `[lon, lat]` (degrees) of the point of the ellipsoid whose normal passes
/// through `x`, a point within centimetres of the surface: the latitude by
/// fixed-point iteration from the surface's own formula (each round gains
/// a factor `e²`; two rounds from an 8 cm offset leave nanometres; none
/// leaves 40 µm, which the accuracy test catches).
fn lift(x: &[f64; 3]) -> [f64; 2] {
    let e2 = F * (2.0 - F);
    let p = x[0].hypot(x[1]);
    let mut lat = x[2].atan2(p * (1.0 - e2));
    for _ in 0..2 {
        let s = lat.sin();
        let n = A / (1.0 - e2 * s * s).sqrt();
        lat = (x[2] + e2 * n * s).atan2(p);
    }
    [x[1].atan2(x[0]).to_degrees(), lat.to_degrees()]
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
        let q = lift(&foot);
        (q, ecef(&q))
    };
    let along = if t == 1.0 { len } else { arc(norm(&sub(&xq, &xa))).min(len) };
    let t = if len > 0.0 { (along / len).clamp(0.0, 1.0) } else { 0.0 };
    Some(GeoProjection { point, t, along, distance: arc(norm(&sub(&xp, &xq))) })
}
