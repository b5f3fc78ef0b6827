//! Great-circle arcs on a sphere: closed form with unit vectors.

use crate::vec3::{cross, dot, norm, V};
use crate::{valid, GeoProjection};

/// The mean radius of the Earth, `(2a + b) / 3` of WGS84, in metres (the IUGG
/// value most haversine code uses).
pub const MEAN_EARTH_RADIUS: f64 = 6_371_008.771_415;

fn unit(p: &[f64; 2]) -> V {
    let (lon, lat) = (p[0].to_radians(), p[1].to_radians());
    [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
}

/// `unit(b) − unit(a)`, accurate to the last bits of its own size even
/// for vertices a metre apart (the plain difference of two rounded unit
/// vectors keeps only `1e-16 / |b − a|` of it): sum-to-product forms of
/// the coordinate differences, from the longitude difference taken the
/// short way round.
fn chord(a: &[f64; 2], b: &[f64; 2]) -> V {
    let mut dlon = b[0] - a[0];
    if dlon > 180.0 {
        dlon -= 360.0;
    } else if dlon < -180.0 {
        dlon += 360.0;
    }
    let dlat = b[1] - a[1];
    let (lon_a, lat_a) = (a[0].to_radians(), a[1].to_radians());
    let (hl, hp) = ((dlon / 2.0).to_radians(), (dlat / 2.0).to_radians());
    let (mid_lon, mid_lat) = (lon_a + hl, lat_a + hp);
    let (s_hl, s_hp) = (hl.sin(), hp.sin());
    let (cos_lon_diff, sin_lon_diff) = (-2.0 * mid_lon.sin() * s_hl, 2.0 * mid_lon.cos() * s_hl);
    let (cos_lat_diff, sin_lat_diff) = (-2.0 * mid_lat.sin() * s_hp, 2.0 * mid_lat.cos() * s_hp);
    let cos_lat_b = b[1].to_radians().cos();
    let (s_la, c_la) = lon_a.sin_cos();
    [cos_lat_b * cos_lon_diff + cos_lat_diff * c_la, cos_lat_b * sin_lon_diff + cos_lat_diff * s_la, sin_lat_diff]
}

/// The angle between two unit vectors, accurate at every size (atan2 of
/// sine and cosine, not acos).
fn angle(a: &V, b: &V) -> f64 {
    norm(&cross(a, b)).atan2(dot(a, b))
}

fn lonlat(v: &V) -> [f64; 2] {
    [v[1].atan2(v[0]).to_degrees(), v[2].atan2(v[0].hypot(v[1])).to_degrees()]
}

/// The closest point to `p` of the shorter great-circle arc from `a` to
/// `b` on a sphere of radius `radius` metres; `None` for invalid input (see
/// the crate docs).
///
/// ```
/// use segdist_geo::{sphere, MEAN_EARTH_RADIUS};
///
/// // Along the equator, a point 1° north of its middle.
/// let r = sphere([0.0, 0.0], [10.0, 0.0], [5.0, 1.0], MEAN_EARTH_RADIUS).unwrap();
/// assert!((r.point[0] - 5.0).abs() < 1e-12 && r.point[1].abs() < 1e-12);
/// assert!((r.t - 0.5).abs() < 1e-12);
/// assert!((r.distance - MEAN_EARTH_RADIUS * 1f64.to_radians()).abs() < 1e-6);
/// ```
#[must_use]
pub fn sphere(a: [f64; 2], b: [f64; 2], p: [f64; 2], radius: f64) -> Option<GeoProjection> {
    if !(valid(&a) && valid(&b) && valid(&p) && radius > 0.0 && radius.is_finite()) {
        return None;
    }
    let (va, vb, vp) = (unit(&a), unit(&b), unit(&p));
    let ab = angle(&va, &vb);
    // a × b = a × (b − a), with b − a accurate: the plane of a short arc
    // to full precision.
    let n = cross(&va, &chord(&a, &b));
    let nn = norm(&n);
    let at =
        |q: &V, t: f64| GeoProjection { point: lonlat(q), t, along: radius * t * ab, distance: radius * angle(&vp, q) };
    if ab == 0.0 {
        return Some(at(&va, 0.0));
    }
    if nn < 1e-15 {
        // Antipodal vertices: every half great circle joins them; take the
        // one through p (distance 0), or any if p is a vertex's antipode.
        let pa = angle(&va, &vp);
        return Some(GeoProjection { point: p, t: pa / ab, along: radius * pa, distance: 0.0 });
    }
    let n = n.map(|c| c / nn);
    // p projected onto the plane of the great circle.
    let h = dot(&vp, &n);
    let q = [vp[0] - h * n[0], vp[1] - h * n[1], vp[2] - h * n[2]];
    let qn = norm(&q);
    if qn > 0.0 {
        let q = q.map(|c| c / qn);
        // Between a and b: on the same side of both end planes.
        if dot(&cross(&va, &q), &n) >= 0.0 && dot(&cross(&q, &vb), &n) >= 0.0 {
            let t = (angle(&va, &q) / ab).clamp(0.0, 1.0);
            return Some(at(&q, t));
        }
    }
    // The nearer vertex (the first on a tie).
    if angle(&vp, &va) <= angle(&vp, &vb) {
        Some(at(&va, 0.0))
    } else {
        Some(at(&vb, 1.0))
    }
}
