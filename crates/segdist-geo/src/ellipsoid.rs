//! Geodesic segments on the WGS84 ellipsoid: Karney's interception by
//! iterated ellipsoidal gnomonic projection.

use std::sync::OnceLock;

use geographiclib_rs::{DirectGeodesic, Geodesic, InverseGeodesic};

use crate::{valid, GeoProjection};

fn wgs84() -> &'static Geodesic {
    static G: OnceLock<Geodesic> = OnceLock::new();
    G.get_or_init(Geodesic::wgs84)
}

/// Segments longer than this (metres) are split at their midpoint, so that
/// every point of a piece lies well inside the hemisphere a gnomonic
/// projection about a point of it can reach.
const SPLIT: f64 = 4_000_000.0;
/// The interception stops when the foot moves less than this (metres):
/// convergence is quadratic, so the point is then within about
/// `moved²/R`, nanometres, of the answer.
const TOLERANCE: f64 = 1e-4;
/// Below this size (metres) a segment and point are started from a local
/// tangent plane scaled by the ellipsoid's radii of curvature, which is
/// within micrometres, so that one round usually suffices.
const LOCAL: f64 = 20_000.0;

/// The ellipsoidal gnomonic projection about `(lat0, lon0)`: geodesics
/// through the centre are straight lines, and azimuths at the centre true.
struct Gnomonic {
    lat0: f64,
    lon0: f64,
}

impl Gnomonic {
    /// Plane coordinates (metres) of `[lon, lat]`; `None` beyond the
    /// projection's horizon.
    fn forward(&self, p: &[f64; 2]) -> Option<[f64; 2]> {
        let (_s12, azi1, _azi2, m12, mm12, _mm21, _a12): (f64, f64, f64, f64, f64, f64, f64) =
            wgs84().inverse(self.lat0, self.lon0, p[1], p[0]);
        if mm12 <= 0.0 {
            return None;
        }
        let rho = m12 / mm12;
        let (s, c) = azi1.to_radians().sin_cos();
        Some([rho * s, rho * c])
    }

    /// `[lon, lat]` of plane point `q`: Newton's method on the distance
    /// along the geodesic from the centre in `q`'s direction.
    fn reverse(&self, q: &[f64; 2]) -> Option<[f64; 2]> {
        let g = wgs84();
        let azi0 = q[0].atan2(q[1]).to_degrees();
        let rho = q[0].hypot(q[1]);
        let mut s = g.a * (rho / g.a).atan();
        for _ in 0..20 {
            let (lat, lon, _azi2, m, mm, _mm21): (f64, f64, f64, f64, f64, f64) =
                g.direct(self.lat0, self.lon0, azi0, s);
            if mm <= 0.0 {
                return None;
            }
            // d(m/M)/ds = 1/M²; Newton converges quadratically, so a step
            // under a micrometre leaves an error far below it.
            let ds = (m / mm - rho) * mm * mm;
            if ds.abs() < 1e-9 {
                // This point is within a nanometre: no further call.
                return Some([lon, lat]);
            }
            s -= ds;
            if ds.abs() < 1e-6 {
                break;
            }
        }
        let (lat, lon): (f64, f64) = g.direct(self.lat0, self.lon0, azi0, s);
        Some([lon, lat])
    }
}

/// The point `s` metres from `a` along the geodesic to `b` (`[lon, lat]`).
pub(crate) fn point_along(a: [f64; 2], b: [f64; 2], s: f64) -> [f64; 2] {
    let g = wgs84();
    let (_s12, azi1, _azi2, _a12): (f64, f64, f64, f64) = g.inverse(a[1], a[0], b[1], b[0]);
    let (lat, lon): (f64, f64) = g.direct(a[1], a[0], azi1, s);
    wrap([lon, lat])
}

/// Distance (metres) between two `[lon, lat]` points.
fn dist(p: &[f64; 2], q: &[f64; 2]) -> f64 {
    wgs84().inverse(p[1], p[0], q[1], q[0])
}

/// Longitude into [-180, 180].
fn wrap(p: [f64; 2]) -> [f64; 2] {
    // Already there: `%` would give it back unchanged, at the cost of a
    // software `fmod` (2.6 % of a lon/lat match's instructions).
    if (-180.0..=180.0).contains(&p[0]) {
        return p;
    }
    let mut lon = p[0] % 360.0;
    if lon > 180.0 {
        lon -= 360.0;
    } else if lon < -180.0 {
        lon += 360.0;
    }
    [lon, p[1]]
}

/// The closest point to `p` of the geodesic from `a` to `b` on the WGS84
/// ellipsoid, with the distance in metres; `None` for invalid input (see the
/// crate docs).
///
/// Accuracy: distance and closest point within 1 mm of the ellipsoidal
/// truth (tested against a direct minimisation along GeographicLib's
/// geodesic; typically within a micrometre).
///
/// ```
/// // The equator from 0° to 2°, and a point 0.01° north of 1°E.
/// let r = segdist_geo::geodesic([0.0, 0.0], [2.0, 0.0], [1.0, 0.01]).unwrap();
/// assert!((r.point[0] - 1.0).abs() < 1e-9 && r.point[1].abs() < 1e-9);
/// assert!((r.t - 0.5).abs() < 1e-9);
/// assert!((r.distance - 1105.7427).abs() < 1e-3);
/// ```
#[must_use]
pub fn geodesic(a: [f64; 2], b: [f64; 2], p: [f64; 2]) -> Option<GeoProjection> {
    geodesic_from(a, b, p, None)
}

/// [`geodesic`], given with `x` the Earth-centred coordinates of `a`, `b`
/// and `p` as `ecef` computes them (an index keeps its vertices', a query
/// computes its point's once): the same answer, bit for bit, for fewer
/// sines and cosines. Used only where a point's longitude is already in
/// [-180, 180] (else `ecef` of the wrapped point could differ in the last
/// bit).
pub(crate) fn geodesic_from(a: [f64; 2], b: [f64; 2], p: [f64; 2], x: Option<[&[f64; 3]; 3]>) -> Option<GeoProjection> {
    if !(valid(&a) && valid(&b) && valid(&p)) {
        return None;
    }
    let (wa, wb, wp) = (wrap(a), wrap(b), wrap(p));
    let same = |u: [f64; 2], w: [f64; 2]| u[0].to_bits() == w[0].to_bits() && u[1].to_bits() == w[1].to_bits();
    let short = match x {
        Some([xa, xb, xp]) if same(a, wa) && same(b, wb) && same(p, wp) => {
            crate::short::short_from(&wa, &wb, xa, xb, xp)
        }
        _ => crate::short::short(&wa, &wb, &wp),
    };
    if let Some(r) = short {
        return Some(r);
    }
    let (a, b, p) = (wa, wb, wp);
    let g = wgs84();
    let (s_ab, azi_a, _azi_b, _a12): (f64, f64, f64, f64) = g.inverse(a[1], a[0], b[1], b[0]);
    if s_ab == 0.0 {
        return Some(GeoProjection { point: a, t: 0.0, along: 0.0, distance: dist(&p, &a) });
    }
    if s_ab > SPLIT {
        // Sub-arcs of a shortest geodesic are shortest geodesics.
        let (lat, lon): (f64, f64) = g.direct(a[1], a[0], azi_a, s_ab / 2.0);
        let m = wrap([lon, lat]);
        let first = geodesic(a, m, p)?;
        let second = geodesic(m, b, p)?;
        let (mut r, offset) = if first.distance <= second.distance { (first, 0.0) } else { (second, s_ab / 2.0) };
        r.along += offset;
        r.t = (r.along / s_ab).clamp(0.0, 1.0);
        return Some(r);
    }
    Some(intercept(a, b, p, s_ab).unwrap_or_else(|| scan(a, b, p, s_ab, azi_a)))
}

/// Karney's interception: project about the current estimate, take the
/// planar foot of the perpendicular (clamped to the segment), project it
/// back, repeat. `None` if a point falls beyond the projection's horizon.
fn intercept(a: [f64; 2], b: [f64; 2], p: [f64; 2], s_ab: f64) -> Option<GeoProjection> {
    let mut c = start(&a, &b, &p, s_ab);
    let mut t = 0.0;
    for _ in 0..30 {
        let gn = Gnomonic { lat0: c[1], lon0: c[0] };
        let (fa, fb, fp) = (gn.forward(&a)?, gn.forward(&b)?, gn.forward(&p)?);
        let ab = [fb[0] - fa[0], fb[1] - fa[1]];
        let l = ab[0] * ab[0] + ab[1] * ab[1];
        t = if l > 0.0 { (((fp[0] - fa[0]) * ab[0] + (fp[1] - fa[1]) * ab[1]) / l).clamp(0.0, 1.0) } else { 0.0 };
        let q = [fa[0] + t * ab[0], fa[1] + t * ab[1]];
        let moved = q[0].hypot(q[1]);
        c = if t == 0.0 {
            a
        } else if t == 1.0 {
            b
        } else {
            wrap(gn.reverse(&q)?)
        };
        if moved < TOLERANCE {
            // Converged: the next round would move the point by about
            // moved²/R. The distances are measured to the point itself.
            break;
        }
    }
    let along = if t == 0.0 {
        0.0
    } else if t == 1.0 {
        s_ab
    } else {
        dist(&a, &c)
    };
    Some(GeoProjection { point: c, t: (along / s_ab).clamp(0.0, 1.0), along, distance: dist(&p, &c) })
}

/// A first estimate: a local tangent plane for small cases, else the
/// sphere (within metres).
fn start(a: &[f64; 2], b: &[f64; 2], p: &[f64; 2], s_ab: f64) -> [f64; 2] {
    let sphere = || crate::sphere(*a, *b, *p, crate::MEAN_EARTH_RADIUS).map_or(*a, |r| r.point);
    if s_ab > LOCAL || a[1].abs() > 89.0 {
        return sphere();
    }
    // Longitude differences the short way round.
    let dlon = |x: f64| {
        let d = (x - a[0]) % 360.0;
        if d > 180.0 {
            d - 360.0
        } else if d < -180.0 {
            d + 360.0
        } else {
            d
        }
    };
    let g = wgs84();
    let e2 = g.f * (2.0 - g.f);
    let lat0 = ((a[1] + b[1]) / 2.0).to_radians();
    let w = 1.0 - e2 * lat0.sin() * lat0.sin();
    let n = g.a / w.sqrt(); // prime vertical radius
    let m = g.a * (1.0 - e2) / (w * w.sqrt()); // meridional radius
    let (kx, ky) = (n * lat0.cos() * 1f64.to_radians(), m * 1f64.to_radians());
    let (bx, by) = (dlon(b[0]) * kx, (b[1] - a[1]) * ky);
    let (px, py) = (dlon(p[0]) * kx, (p[1] - a[1]) * ky);
    if px.hypot(py) > 2.0 * LOCAL {
        return sphere();
    }
    let l = bx * bx + by * by;
    let t = if l > 0.0 { ((px * bx + py * by) / l).clamp(0.0, 1.0) } else { 0.0 };
    wrap([a[0] + t * dlon(b[0]), a[1] + t * (b[1] - a[1])])
}

/// The fallback for a point too far for the projection (more than a
/// quarter of the Earth away): sample the segment, then refine the best
/// sample by golden-section search.
fn scan(a: [f64; 2], _b: [f64; 2], p: [f64; 2], s_ab: f64, azi_a: f64) -> GeoProjection {
    let g = wgs84();
    let at = |s: f64| -> [f64; 2] {
        let (lat, lon): (f64, f64) = g.direct(a[1], a[0], azi_a, s);
        wrap([lon, lat])
    };
    let f = |s: f64| dist(&p, &at(s));
    const N: usize = 64;
    let mut best = (0.0, f(0.0));
    for i in 1..=N {
        let s = s_ab * i as f64 / N as f64;
        let d = f(s);
        if d < best.1 {
            best = (s, d);
        }
    }
    let h = s_ab / N as f64;
    let (mut lo, mut hi) = ((best.0 - h).max(0.0), (best.0 + h).min(s_ab));
    let r = (5f64.sqrt() - 1.0) / 2.0;
    while hi - lo > TOLERANCE {
        let (x1, x2) = (hi - r * (hi - lo), lo + r * (hi - lo));
        if f(x1) <= f(x2) {
            hi = x2;
        } else {
            lo = x1;
        }
    }
    let s = (lo + hi) / 2.0;
    let (s, d) = if best.1 < f(s) { best } else { (s, f(s)) };
    GeoProjection { point: at(s), t: (s / s_ab).clamp(0.0, 1.0), along: s, distance: d }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecef;

    /// The index's evaluations, given the vertices' and the point's
    /// Earth-centred coordinates, answer as `geodesic`, bit for bit: short
    /// segments and long ones, points near and far, longitudes past ±180
    /// (where the given coordinates are not used).
    #[test]
    fn given_coordinates_answer_as_geodesic_bit_for_bit() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for i in 0..20_000 {
            let lon = -200.0 + 400.0 * rnd();
            let lat = -89.0 + 178.0 * rnd();
            let scale = [1e-5, 1e-3, 0.05, 3.0][i % 4];
            let a = [lon, lat];
            let b = [lon + scale * (rnd() - 0.5), (lat + scale * (rnd() - 0.5)).clamp(-90.0, 90.0)];
            let p = [lon + scale * (rnd() - 0.5), (lat + scale * (rnd() - 0.5)).clamp(-90.0, 90.0)];
            let want = geodesic(a, b, p);
            let got = geodesic_from(a, b, p, Some([&ecef(&a), &ecef(&b), &ecef(&p)]));
            let bits = |r: Option<GeoProjection>| {
                r.map(|r| [r.point[0], r.point[1], r.t, r.along, r.distance].map(f64::to_bits))
            };
            assert_eq!(bits(got), bits(want), "{a:?} {b:?} {p:?}");
        }
    }
}
