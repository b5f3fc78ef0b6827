//! Point–segment queries: [`Segment`] and its result, [`Projection`].

use core::cmp::Ordering;

use crate::scalar::{narrow, widen, Dim, Scalar};
use crate::{exact, fast, kernel, Line, Region};

/// A line segment from `a` to `b` in `D` dimensions (2 or 3), with
/// coordinates of type `T` (`f32` or `f64`).
///
/// The accurate queries ([`closest_point`](Self::closest_point),
/// [`distance`](Self::distance), …) are faithfully rounded for every finite
/// input; the `_fast` ones are the textbook formula with a stated error
/// bound. See the crate documentation for the full contract.
///
/// # Example
///
/// ```
/// use segdist::{Region, Segment2};
///
/// let wall = Segment2::new([1.0, 1.0], [5.0, 2.0]);
/// let hit = wall.closest_point([3.0, 3.0]);
/// assert_eq!(hit.region, Region::Interior);
/// assert_eq!(hit.t, 10.0 / 17.0);
/// // The seed's example: 36/17 ≈ 2.117647.
/// assert_eq!(hit.distance_squared, 36.0 / 17.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment<T, const D: usize> {
    /// The start vertex (`t = 0`).
    pub a: [T; D],
    /// The end vertex (`t = 1`).
    pub b: [T; D],
}

/// A 2D segment, `f64` unless said otherwise.
pub type Segment2<T = f64> = Segment<T, 2>;
/// A 3D segment, `f64` unless said otherwise.
pub type Segment3<T = f64> = Segment<T, 3>;

/// Everything about the point of a segment closest to a query point.
///
/// For finite input every field is finite except `distance_squared`, which is
/// `+inf` only when the exact value exceeds the type's maximum. For non-finite
/// input every number is NaN and `region` is [`Region::Undefined`].
///
/// # Example
///
/// ```
/// use segdist::{Region, Segment3};
///
/// let s = Segment3::new([0.0, 0.0, 0.0], [0.0, 0.0, 10.0]);
/// let r = s.closest_point([3.0, 4.0, 2.5]);
/// assert_eq!(r.point, [0.0, 0.0, 2.5]);
/// assert_eq!((r.t, r.distance, r.distance_squared), (0.25, 5.0, 25.0));
/// assert_eq!(r.region, Region::Interior);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Projection<T, const D: usize> {
    /// The closest point `q` on the segment.
    pub point: [T; D],
    /// Where `q` lies: `q = a + t·(b − a)`, `t` in `[0, 1]`; exactly `0` or
    /// `1` when `q` is a vertex.
    pub t: T,
    /// `|p − q|`.
    pub distance: T,
    /// `|p − q|²` (never negative).
    pub distance_squared: T,
    /// Start vertex, interior or end vertex.
    pub region: Region,
}

impl<T: Scalar, const D: usize> Segment<T, D> {
    /// The segment from `a` to `b`.
    ///
    /// ```
    /// let s = segdist::Segment2::new([0.0, 0.0], [1.0, 0.0]);
    /// assert_eq!(s.b, [1.0, 0.0]);
    /// ```
    #[must_use]
    pub const fn new(a: [T; D], b: [T; D]) -> Self {
        Segment { a, b }
    }

    /// The infinite line through `a` and `b`.
    ///
    /// ```
    /// let s = segdist::Segment2::new([0.0, 0.0], [1.0, 0.0]);
    /// assert_eq!(s.line().distance([5.0, 2.0]), 2.0);
    /// ```
    #[must_use]
    pub const fn line(&self) -> Line<T, D> {
        Line::new(self.a, self.b)
    }

    /// The closest point on the segment to `p`, with `t`, the distance, the
    /// squared distance and the region: all faithfully rounded.
    ///
    /// Edge cases: `a == b` gives `t = 0`, `q = a`, region
    /// [`Region::Start`]; a clamped result is the vertex itself, bit for bit,
    /// with `t` exactly `0` or `1`; any NaN or infinite input makes every
    /// number NaN and the region [`Region::Undefined`]. Never panics.
    ///
    /// ```
    /// use segdist::{Region, Segment2};
    ///
    /// let s = Segment2::new([0.1, 0.2], [0.7, 0.3]);
    /// let r = s.closest_point([2.0, 2.0]); // beyond b
    /// assert_eq!((r.point, r.t, r.region), ([0.7, 0.3], 1.0, Region::End));
    ///
    /// let dot = Segment2::new([1.0, 1.0], [1.0, 1.0]);
    /// let r = dot.closest_point([4.0, 5.0]);
    /// assert_eq!((r.point, r.t, r.distance), ([1.0, 1.0], 0.0, 5.0));
    /// ```
    #[must_use]
    #[inline]
    pub fn closest_point(&self, p: [T; D]) -> Projection<T, D> {
        let () = Dim::<D>::CHECK;
        let r = kernel::segment(&widen(&self.a), &widen(&self.b), &widen(&p));
        Projection {
            point: narrow(r.point),
            t: T::from_f64(r.t),
            distance: T::from_f64(r.d),
            distance_squared: T::from_f64(r.d2),
            region: r.region,
        }
    }

    /// The distance from `p` to the segment, faithfully rounded. Cheaper than
    /// [`closest_point`](Self::closest_point): neither `t` nor the point is
    /// formed. NaN for non-finite input.
    ///
    /// ```
    /// let s = segdist::Segment2::new([0.0, 0.0], [4.0, 0.0]);
    /// assert_eq!(s.distance([2.0, -3.0]), 3.0);
    /// ```
    #[must_use]
    #[inline]
    pub fn distance(&self, p: [T; D]) -> T {
        let () = Dim::<D>::CHECK;
        T::from_f64(kernel::segment_distance(&widen(&self.a), &widen(&self.b), &widen(&p)).d)
    }

    /// The squared distance from `p` to the segment, faithfully rounded and
    /// never negative (`+inf` only when the exact value overflows). NaN for
    /// non-finite input.
    ///
    /// ```
    /// let s = segdist::Segment2::new([0.0, 0.0], [4.0, 0.0]);
    /// assert_eq!(s.distance_squared([6.0, 0.0]), 4.0);
    /// ```
    #[must_use]
    #[inline]
    pub fn distance_squared(&self, p: [T; D]) -> T {
        let () = Dim::<D>::CHECK;
        T::from_f64(kernel::segment_distance(&widen(&self.a), &widen(&self.b), &widen(&p)).d2)
    }

    /// The fast tier of [`closest_point`](Self::closest_point): the textbook
    /// clamped projection computed in `T`, branch-free.
    ///
    /// Guarantees: `distance_squared >= 0`; a clamped result is the vertex
    /// itself with `t` exactly `0` or `1`; `a == b` gives `t = 0`, `q = a`;
    /// NaN in, all NaN out. Accuracy: with `M` the largest coordinate
    /// magnitude among `a`, `b`, `p`, `u` the unit roundoff of `T` and `d` the
    /// exact distance, `|distance − d| <= 12·u·(M + d)` (2D) and
    /// `16·u·(M + d)` (3D), provided no intermediate overflows (coordinates
    /// below about `1e150` for `f64`, `1e18` for `f32`). Points near the
    /// segment can therefore get a relative error far above one ulp; use the
    /// accurate tier where that matters.
    ///
    /// ```
    /// let s = segdist::Segment2::new([0.0, 0.0], [4.0, 0.0]);
    /// let r = s.closest_point_fast([1.0, 2.0]);
    /// assert_eq!((r.point, r.t, r.distance), ([1.0, 0.0], 0.25, 2.0));
    /// ```
    #[must_use]
    #[inline]
    pub fn closest_point_fast(&self, p: [T; D]) -> Projection<T, D> {
        let (point, t, d2, region) = fast::segment(&self.a, &self.b, &p);
        Projection { point, t, distance: d2.sqrt(), distance_squared: d2, region }
    }

    /// The fast tier of [`distance`](Self::distance) (error bound as in
    /// [`closest_point_fast`](Self::closest_point_fast)).
    ///
    /// ```
    /// let s = segdist::Segment2::new([0.0f32, 0.0], [4.0, 0.0]);
    /// assert_eq!(s.distance_fast([2.0, 3.0]), 3.0);
    /// ```
    #[must_use]
    #[inline]
    pub fn distance_fast(&self, p: [T; D]) -> T {
        fast::segment(&self.a, &self.b, &p).2.sqrt()
    }

    /// The fast tier of [`distance_squared`](Self::distance_squared).
    ///
    /// ```
    /// let s = segdist::Segment2::new([0.0, 0.0], [4.0, 0.0]);
    /// assert_eq!(s.distance_squared_fast([2.0, 3.0]), 9.0);
    /// ```
    #[must_use]
    #[inline]
    pub fn distance_squared_fast(&self, p: [T; D]) -> T {
        fast::segment(&self.a, &self.b, &p).2
    }

    /// Does the closed ball of radius `r` around `center` (a circle in 2D, a
    /// sphere in 3D) touch the segment? Decided exactly (`d² <= r²` on the
    /// exact values, so tangent contact counts as touching); `r < 0`, NaN or
    /// any non-finite input gives `false`.
    ///
    /// ```
    /// let wall = segdist::Segment2::new([0.0, 0.0], [10.0, 0.0]);
    /// assert!(wall.intersects_ball([5.0, 1.0], 1.0)); // tangent
    /// assert!(!wall.intersects_ball([5.0, 1.0], 0.999));
    /// ```
    #[doc(alias = "intersects_circle")]
    #[doc(alias = "intersects_sphere")]
    #[must_use]
    pub fn intersects_ball(&self, center: [T; D], r: T) -> bool {
        let () = Dim::<D>::CHECK;
        if r.to_f64().is_infinite() {
            return false;
        }
        compare(&widen(&self.a), &widen(&self.b), &widen(&center), r.to_f64()).is_some_and(|o| o.is_le())
    }

    /// The exact comparison of the distance from `p` to the segment with
    /// `r`: `Less` when the point is strictly closer than `r`, `Equal` when
    /// exactly at `r`, `Greater` when farther. The predicate under
    /// collision detection: `Less` is an overlap of a ball of radius `r`,
    /// `Equal` a touch.
    ///
    /// Edge cases: `r < 0` gives `Greater` (a distance is never negative);
    /// `r = +inf` gives `Less` for any finite input; NaN or any non-finite
    /// coordinate gives `None`. Never panics.
    ///
    /// ```
    /// use std::cmp::Ordering;
    /// let wall = segdist::Segment2::new([0.0, 0.0], [10.0, 0.0]);
    /// assert_eq!(wall.cmp_distance([5.0, 1.0], 1.0), Some(Ordering::Equal));
    /// // 0.1 + 0.2 is not 0.3 in binary: decided on the values given, exactly.
    /// assert_eq!(wall.cmp_distance([3.0, 0.1 + 0.2], 0.3), Some(Ordering::Greater));
    /// assert_eq!(wall.cmp_distance([f64::NAN, 0.0], 1.0), None);
    /// ```
    #[must_use]
    pub fn cmp_distance(&self, p: [T; D], r: T) -> Option<Ordering> {
        let () = Dim::<D>::CHECK;
        let (a, b, p) = (widen(&self.a), widen(&self.b), widen(&p));
        if !a.iter().chain(&b).chain(&p).all(|x| x.is_finite()) {
            return None;
        }
        compare(&a, &b, &p, r.to_f64())
    }

    /// The fast tier of [`intersects_ball`](Self::intersects_ball): Ericson's
    /// test in `T`, with no division and no square root (may misjudge
    /// contacts within the fast tier's error bound).
    ///
    /// ```
    /// let wall = segdist::Segment2::new([0.0, 0.0], [10.0, 0.0]);
    /// assert!(wall.intersects_ball_fast([5.0, 0.5], 1.0));
    /// assert!(!wall.intersects_ball_fast([12.0, 0.0], 1.0));
    /// ```
    #[must_use]
    #[inline]
    pub fn intersects_ball_fast(&self, center: [T; D], r: T) -> bool {
        fast::touches(&self.a, &self.b, &center, r)
    }

    /// The shortest translation that moves a ball of radius `r` centred at
    /// `center` off the segment (so that it only just touches it), or `None`
    /// if the ball does not overlap the segment (`distance >= r`, `r` NaN or
    /// any input non-finite).
    ///
    /// The push points from the closest point towards the centre and has
    /// length `r − distance`. When the centre lies exactly on the segment the
    /// direction is, in 2D, the left normal of `a → b`; in 3D, the unit vector
    /// `(b − a) × e_k` for the axis `e_k` along which `b − a` is smallest; for
    /// a zero-length segment, `+x`. Its accuracy is a few ulps of the
    /// coordinates' magnitude (it is not part of the faithful-rounding
    /// contract).
    ///
    /// ```
    /// let wall = segdist::Segment2::new([0.0, 0.0], [10.0, 0.0]);
    /// assert_eq!(wall.push_out([5.0, 0.25], 1.0), Some([0.0, 0.75]));
    /// assert_eq!(wall.push_out([5.0, 0.0], 1.0), Some([0.0, 1.0])); // on the wall
    /// assert_eq!(wall.push_out([5.0, 2.0], 1.0), None);
    /// ```
    #[must_use]
    pub fn push_out(&self, center: [T; D], r: T) -> Option<[T; D]> {
        let () = Dim::<D>::CHECK;
        let (a, b, p, r) = (widen(&self.a), widen(&self.b), widen(&center), r.to_f64());
        let proj = kernel::segment(&a, &b, &p);
        if proj.d.is_nan() || proj.d >= r || r.is_nan() {
            return None;
        }
        let mut v = [0.0; D];
        for i in 0..D {
            v[i] = p[i] - proj.point[i];
        }
        let mut len = norm(&v);
        if len == 0.0 {
            v = fallback_normal(&a, &b);
            len = 1.0;
        }
        let s = (r - proj.d) / len;
        Some(narrow(v.map(|x| x * s)))
    }
}

impl<T: Scalar> Segment<T, 2> {
    /// 2D name for [`intersects_ball`](Self::intersects_ball).
    ///
    /// ```
    /// let s = segdist::Segment2::new([0.0, 0.0], [10.0, 0.0]);
    /// assert!(s.intersects_circle([10.5, 0.0], 0.5));
    /// ```
    #[must_use]
    pub fn intersects_circle(&self, center: [T; 2], r: T) -> bool {
        self.intersects_ball(center, r)
    }
}

impl<T: Scalar> Segment<T, 3> {
    /// 3D name for [`intersects_ball`](Self::intersects_ball).
    ///
    /// ```
    /// let s = segdist::Segment3::new([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]);
    /// assert!(s.intersects_sphere([0.0, 2.0, 0.5], 2.0));
    /// ```
    #[must_use]
    pub fn intersects_sphere(&self, center: [T; 3], r: T) -> bool {
        self.intersects_ball(center, r)
    }
}

fn norm<const D: usize>(v: &[f64; D]) -> f64 {
    // Scaled so that neither overflow nor underflow loses the direction.
    let m = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if m == 0.0 || !m.is_finite() {
        return m;
    }
    m * v.iter().map(|x| (x / m) * (x / m)).sum::<f64>().sqrt()
}

fn fallback_normal<const D: usize>(a: &[f64; D], b: &[f64; D]) -> [f64; D] {
    let mut ab = [0.0; D];
    for i in 0..D {
        ab[i] = b[i] - a[i];
    }
    let mut n = [0.0; D];
    if ab.iter().all(|x| *x == 0.0) || !ab.iter().all(|x| x.is_finite()) {
        n[0] = 1.0;
        return n;
    }
    if D == 2 {
        n[0] = -ab[1];
        n[1] = ab[0];
    } else {
        // (b − a) × e_k, k the axis where |b − a| is smallest.
        let k = (0..3).min_by(|&i, &j| ab[i].abs().total_cmp(&ab[j].abs())).unwrap_or(0);
        let (i, j) = ((k + 1) % 3, (k + 2) % 3);
        n[i] = ab[j];
        n[j] = -ab[i];
    }
    let len = norm(&n);
    n.map(|x| x / len)
}

/// Exact comparison of `dist(p, [a, b])` with `r` (`None` for NaN or
/// non-finite input), decided in floating point with a margin and in
/// integers when too close to call.
fn compare<const D: usize>(a: &[f64; D], b: &[f64; D], p: &[f64; D], r: f64) -> Option<Ordering> {
    if r.is_nan() {
        return None;
    }
    let d2 = kernel::segment_distance(a, b, p).d2;
    if d2.is_nan() {
        return None;
    }
    if r < 0.0 {
        return Some(Ordering::Greater);
    }
    if r == f64::INFINITY {
        return Some(Ordering::Less);
    }
    let rr = r * r;
    const LO: f64 = 1e-290;
    const HI: f64 = 1e290;
    if (LO..HI).contains(&d2) && (LO..HI).contains(&rr) {
        // d2 is within one ulp of the exact value, rr within half an ulp.
        const M: f64 = 1.0 / (1u64 << 50) as f64;
        if d2 * (1.0 + M) < rr * (1.0 - M) {
            return Some(Ordering::Less);
        }
        if d2 * (1.0 - M) > rr * (1.0 + M) {
            return Some(Ordering::Greater);
        }
    }
    Some(exact::segment_cmp(a, b, p, r))
}
