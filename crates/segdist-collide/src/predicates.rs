//! The exact predicates every query rests on, each a float estimate with
//! a stated error bound first and an exact decision when too close to call:
//!
//! - [`cmp_point`]: a point's distance to a segment against `r`
//!   (segdist's fast tier and its bound, then `Segment::cmp_distance`);
//! - [`path_meets`]: does a circle of radius `r` moved in a straight line
//!   from `c` to `p` overlap a wall on the way (`r = 0`: touch it)? Two
//!   segments are within `r` of each other exactly when they cross, or one
//!   of the four endpoints is within `r` of the other segment;
//! - [`behind`]: is a point strictly on a one-sided wall's back (Shewchuk's
//!   adaptive orientation, exact).
//!
//! And one estimate, [`entry`]: where along a move a circle first reaches a
//! wall, which the cast then makes safe by checking it with `path_meets`.

use core::cmp::Ordering;

use segdist::Segment2;

use crate::walls::Wall;

/// The unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

#[inline]
fn max_abs(v: &[[f64; 2]]) -> f64 {
    v.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The distance from `p` to `[a, b]` compared with `r >= 0`, exactly
/// (finite input).
#[inline]
pub(crate) fn cmp_point(a: [f64; 2], b: [f64; 2], p: [f64; 2], r: f64) -> Ordering {
    let s = Segment2::new(a, b);
    let m = max_abs(&[a, b, p]);
    if m < 1e150 {
        // segdist's stated bound for the fast tier is 12·u·(M + d); 16
        // covers the rounding of this test and d in place of the exact one.
        let d = s.distance_fast(p);
        let beta = 16.0 * U * (m + d) + 1e-290;
        if d + beta < r {
            return Ordering::Less;
        }
        if d - beta > r {
            return Ordering::Greater;
        }
    }
    s.cmp_distance(p, r).unwrap_or(Ordering::Greater)
}

#[inline]
fn orient(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    robust::orient2d(
        robust::Coord { x: a[0], y: a[1] },
        robust::Coord { x: b[0], y: b[1] },
        robust::Coord { x: c[0], y: c[1] },
    )
}

/// Is `p` strictly on the right of `a → b` (the back of a one-sided wall)?
/// A zero-length wall has no back.
#[inline]
pub(crate) fn behind(w: &Wall, p: [f64; 2]) -> bool {
    w.one_sided && orient(w.a, w.b, p) < 0.0
}

/// Do the segments `[c, p]` and `[a, b]` cross at a point interior to both
/// (exact)? Touching cases put an endpoint on the other segment, at
/// distance zero, which [`path_meets`] sees through the endpoints.
#[inline]
fn crosses(c: [f64; 2], p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> bool {
    let (o1, o2) = (orient(a, b, c), orient(a, b, p));
    if !((o1 < 0.0 && o2 > 0.0) || (o1 > 0.0 && o2 < 0.0)) {
        return false;
    }
    let (o3, o4) = (orient(c, p, a), orient(c, p, b));
    (o3 < 0.0 && o4 > 0.0) || (o3 > 0.0 && o4 < 0.0)
}

/// Is the segment `[c, p]` certainly farther than `r` from the wall
/// `[a, b]` along one of the wall's own axes: both ends on the same side of
/// its line, or both beyond the same end, by more than `r`? A filter with
/// a stated error bound (`false` decides nothing): with `ab = b − a`,
/// `q − a` and the products rounded, the cross product `ab × (q − a)` and
/// the dot product `ab·(q − a)` are within `8u·S` of their exact values (`S`
/// the sum of the absolute products, `u = 2^-53`), and `L = |ab|²` within
/// `8u·L`; the margin `2^-40` on the squares covers the rest.
#[inline]
fn apart(c: [f64; 2], p: [f64; 2], a: [f64; 2], b: [f64; 2], r: f64) -> bool {
    const E: f64 = 8.0 * U;
    let ab = [b[0] - a[0], b[1] - a[1]];
    let l = ab[0] * ab[0] + ab[1] * ab[1];
    let need = r * r * l * (1.0 + 1.0 / (1u64 << 40) as f64) + 1e-290;
    let (ac, ap) = ([c[0] - a[0], c[1] - a[1]], [p[0] - a[0], p[1] - a[1]]);
    // The side of the line: |cross| less its error, squared, against r²·L.
    let side = |q: [f64; 2]| {
        let (x, y) = (ab[0] * q[1], ab[1] * q[0]);
        let cr = x - y;
        let t = cr.abs() - E * (x.abs() + y.abs());
        (t > 0.0 && t * t > need, cr > 0.0)
    };
    let ((fc, sc), (fp, sp)) = (side(ac), side(ap));
    if fc && fp && sc == sp {
        return true;
    }
    // Beyond the start (dot < 0) or the end (dot > L) by more than r.
    let along = |q: [f64; 2]| {
        let (x, y) = (ab[0] * q[0], ab[1] * q[1]);
        (x + y, E * (x.abs() + y.abs()))
    };
    let ((dc, ec), (dp, ep)) = (along(ac), along(ap));
    let before = |d: f64, e: f64| {
        let t = -d - e;
        t > 0.0 && t * t > need
    };
    if before(dc, ec) && before(dp, ep) {
        return true;
    }
    let lmax = l * (1.0 + E);
    let after = |d: f64, e: f64| {
        let t = d - e - lmax;
        t > 0.0 && t * t > need
    };
    after(dc, ec) && after(dp, ep)
}

/// Does a circle of radius `r` moved straight from `c` to `p` overlap the
/// wall `[a, b]` at some point on the way (distance `< r`; for `r = 0`,
/// distance `0`)? Exact for finite input.
#[inline]
pub(crate) fn path_meets(c: [f64; 2], p: [f64; 2], a: [f64; 2], b: [f64; 2], r: f64) -> bool {
    // Boxes apart by more than r: rounding is monotone, so a computed gap
    // above r is a true gap above r.
    if a[0].min(b[0]) - c[0].max(p[0]) > r
        || c[0].min(p[0]) - a[0].max(b[0]) > r
        || a[1].min(b[1]) - c[1].max(p[1]) > r
        || c[1].min(p[1]) - a[1].max(b[1]) > r
    {
        return false;
    }
    if a != b && max_abs(&[a, b, c, p]) < 1e140 && apart(c, p, a, b, r) {
        return false;
    }
    let hit = |o: Ordering| if r == 0.0 { o != Ordering::Greater } else { o == Ordering::Less };
    hit(cmp_point(a, b, c, r))
        || (p != c && hit(cmp_point(a, b, p, r)))
        || hit(cmp_point(c, p, a, r))
        || (b != a && hit(cmp_point(c, p, b, r)))
        || crosses(c, p, a, b)
}

/// An estimate of the first fraction `s` in `[0, 1]` of the move `c → c + d`
/// at which a circle of radius `r` reaches the wall `[a, b]` (the boundary
/// of the capsule around it), or, where rounding finds no entry (a grazing
/// move the exact test called a hit), the fraction of closest approach.
pub(crate) fn entry(c: [f64; 2], d: [f64; 2], a: [f64; 2], b: [f64; 2], r: f64) -> f64 {
    let dd = d[0] * d[0] + d[1] * d[1];
    if dd == 0.0 {
        return 0.0;
    }
    let mut best = f64::INFINITY;
    let mut closest = (f64::INFINITY, 0.0);
    // The end discs.
    for v in [a, b] {
        let w = [c[0] - v[0], c[1] - v[1]];
        let bq = w[0] * d[0] + w[1] * d[1];
        let cq = (w[0] * w[0] + w[1] * w[1]) - r * r;
        let s_near = (-bq / dd).clamp(0.0, 1.0);
        let gap = (w[0] + s_near * d[0]).hypot(w[1] + s_near * d[1]);
        if gap < closest.0 {
            closest = (gap, s_near);
        }
        if cq <= 0.0 {
            best = 0.0;
            continue;
        }
        if bq >= 0.0 {
            continue;
        }
        let disc = bq * bq - dd * cq;
        if disc < 0.0 {
            continue;
        }
        let s = cq / (-bq + disc.sqrt());
        if s <= 1.0 {
            best = best.min(s);
        }
    }
    // The sides: the band |n·(x − a)| <= r over t in [0, 1].
    let ab = [b[0] - a[0], b[1] - a[1]];
    let len = ab[0].hypot(ab[1]);
    if len > 0.0 {
        let n = [-ab[1] / len, ab[0] / len];
        let h0 = n[0] * (c[0] - a[0]) + n[1] * (c[1] - a[1]);
        let hv = n[0] * d[0] + n[1] * d[1];
        // Where the band's entry is at a vertex, rounding may put it a hair
        // outside [0, 1]: accept it there (its estimate is far better than
        // the disc's near-tangent root; the cast checks either exactly).
        let along = |s: f64| ((c[0] + s * d[0] - a[0]) * ab[0] + (c[1] + s * d[1] - a[1]) * ab[1]) / (len * len);
        const ON: core::ops::RangeInclusive<f64> = -1e-9..=1.0 + 1e-9;
        if h0.abs() <= r {
            if ON.contains(&along(0.0)) {
                best = 0.0;
            }
        } else if h0 * hv < 0.0 {
            let s = (h0.abs() - r) / hv.abs();
            if s <= 1.0 && ON.contains(&along(s)) {
                best = best.min(s);
            }
        }
        if hv != 0.0 {
            let s = (-h0 / hv).clamp(0.0, 1.0);
            if ON.contains(&along(s)) {
                let gap = (h0 + s * hv).abs();
                if gap < closest.0 {
                    closest = (gap, s);
                }
            }
        }
    }
    if best.is_finite() {
        best
    } else {
        closest.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_meets_sees_a_crossing_with_far_endpoints() {
        assert!(path_meets([-10.0, 0.0], [10.0, 0.0], [0.0, -10.0], [0.0, 10.0], 0.5));
        assert!(path_meets([-10.0, 0.0], [10.0, 0.0], [0.0, -10.0], [0.0, 10.0], 0.0));
        assert!(!path_meets([-10.0, 0.0], [-1.0, 0.0], [0.0, -10.0], [0.0, 10.0], 0.5));
        // Exactly touching is not an overlap (r > 0) ...
        assert!(!path_meets([-10.0, 0.0], [-1.0, 0.0], [0.0, -10.0], [0.0, 10.0], 1.0));
        // ... but for a point it is.
        assert!(path_meets([-10.0, 0.0], [0.0, 0.0], [0.0, -10.0], [0.0, 10.0], 0.0));
    }

    #[test]
    fn entry_finds_the_side_and_the_disc() {
        let s = entry([0.0, 5.0], [0.0, -10.0], [-1.0, 0.0], [1.0, 0.0], 1.0);
        assert!((s - 0.4).abs() < 1e-15);
        let s = entry([3.0, 0.0], [-10.0, 0.0], [-1.0, 0.0], [1.0, 0.0], 1.0);
        assert!((s - 0.1).abs() < 1e-15);
    }
}
