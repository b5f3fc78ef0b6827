//! Point–line queries on the infinite line through two points: [`Line`].

use crate::scalar::{narrow, widen, Dim, Scalar};
use crate::{fast, kernel};

/// The infinite line through `a` and `b` in `D` dimensions (2 or 3).
///
/// The parameter `t` of [`LineProjection`] is unclamped:
/// `q = a + t·(b − a)` for any real `t`.
///
/// # Example
///
/// ```
/// use segdist::Line3;
///
/// // The visual unit test's line, and one of its points.
/// let line = Line3::new([-3.0, -2.0, -1.0], [1.0, 2.0, 3.0]);
/// let r = line.closest_point([7.0, -2.0, -1.0]);
/// assert_eq!(r.t, 10.0 / 12.0);
/// assert_eq!(r.point, [1.0 / 3.0, 4.0 / 3.0, 7.0 / 3.0]);
/// assert_eq!(r.distance_squared, 200.0 / 3.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line<T, const D: usize> {
    /// A point on the line (`t = 0`).
    pub a: [T; D],
    /// A second point on the line (`t = 1`).
    pub b: [T; D],
}

/// A 2D line, `f64` unless said otherwise.
pub type Line2<T = f64> = Line<T, 2>;
/// A 3D line, `f64` unless said otherwise.
pub type Line3<T = f64> = Line<T, 3>;

/// The point of a line closest to a query point.
///
/// For finite input every field is finite except `distance_squared` and `t`,
/// which overflow to infinity only when their exact values exceed the type's
/// maximum. For non-finite input every field is NaN.
///
/// # Example
///
/// ```
/// let r = segdist::Line2::new([0.0, 0.0], [1.0, 0.0]).closest_point([-3.0, 4.0]);
/// assert_eq!((r.point, r.t, r.distance), ([-3.0, 0.0], -3.0, 4.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineProjection<T, const D: usize> {
    /// The closest point `q` on the line.
    pub point: [T; D],
    /// `q = a + t·(b − a)`, unclamped.
    pub t: T,
    /// `|p − q|`.
    pub distance: T,
    /// `|p − q|²` (never negative).
    pub distance_squared: T,
}

impl<T: Scalar, const D: usize> Line<T, D> {
    /// The line through `a` and `b`. When `a == b` the line is degenerate
    /// and every query treats it as the single point `a` (`t = 0`).
    ///
    /// ```
    /// let l = segdist::Line2::new([0.0, 0.0], [0.0, 0.0]);
    /// assert_eq!(l.distance([3.0, 4.0]), 5.0);
    /// ```
    #[must_use]
    pub const fn new(a: [T; D], b: [T; D]) -> Self {
        Line { a, b }
    }

    /// The closest point on the line to `p`, with the unclamped `t`, the
    /// distance and the squared distance: all faithfully rounded. `a == b`
    /// gives `t = 0` and `q = a`; non-finite input gives all NaN.
    ///
    /// ```
    /// let l = segdist::Line2::new([0.0, 0.0], [2.0, 2.0]);
    /// let r = l.closest_point([4.0, 0.0]);
    /// assert_eq!((r.point, r.t, r.distance_squared), ([2.0, 2.0], 1.0, 8.0));
    /// ```
    #[must_use]
    #[inline]
    pub fn closest_point(&self, p: [T; D]) -> LineProjection<T, D> {
        let () = Dim::<D>::CHECK;
        let r = kernel::line(&widen(&self.a), &widen(&self.b), &widen(&p));
        LineProjection {
            point: narrow(r.point),
            t: T::from_f64(r.t),
            distance: T::from_f64(r.d),
            distance_squared: T::from_f64(r.d2),
        }
    }

    /// The distance from `p` to the line, faithfully rounded.
    ///
    /// ```
    /// let l = segdist::Line2::new([1.0, 1.0], [5.0, 2.0]);
    /// assert_eq!(l.distance_squared([3.0, 3.0]), 36.0 / 17.0);
    /// ```
    #[must_use]
    #[inline]
    pub fn distance(&self, p: [T; D]) -> T {
        let () = Dim::<D>::CHECK;
        T::from_f64(kernel::line_distance_only(&widen(&self.a), &widen(&self.b), &widen(&p)).d)
    }

    /// The squared distance from `p` to the line, faithfully rounded, never
    /// negative.
    ///
    /// ```
    /// let l = segdist::Line2::new([0.0, 0.0], [1.0, 0.0]);
    /// assert_eq!(l.distance_squared([100.0, -3.0]), 9.0);
    /// ```
    #[must_use]
    #[inline]
    pub fn distance_squared(&self, p: [T; D]) -> T {
        let () = Dim::<D>::CHECK;
        T::from_f64(kernel::line_distance_only(&widen(&self.a), &widen(&self.b), &widen(&p)).d2)
    }

    /// The fast tier of [`closest_point`](Self::closest_point): the textbook
    /// projection in `T` (error bound as for
    /// [`Segment::closest_point_fast`](crate::Segment::closest_point_fast),
    /// with `M` also covering `|q|`). `a == b` gives `t = 0`, `q = a`.
    ///
    /// ```
    /// let l = segdist::Line2::new([0.0, 0.0], [1.0, 0.0]);
    /// assert_eq!(l.closest_point_fast([5.0, 1.0]).t, 5.0);
    /// ```
    #[must_use]
    #[inline]
    pub fn closest_point_fast(&self, p: [T; D]) -> LineProjection<T, D> {
        let (point, t, d2) = fast::line(&self.a, &self.b, &p);
        LineProjection { point, t, distance: d2.sqrt(), distance_squared: d2 }
    }

    /// The fast tier of [`distance`](Self::distance).
    ///
    /// ```
    /// let l = segdist::Line2::new([0.0, 0.0], [1.0, 0.0]);
    /// assert_eq!(l.distance_fast([5.0, -2.0]), 2.0);
    /// ```
    #[must_use]
    #[inline]
    pub fn distance_fast(&self, p: [T; D]) -> T {
        fast::line(&self.a, &self.b, &p).2.sqrt()
    }
}

impl<T: Scalar> Line<T, 2> {
    /// The signed distance from `p` to the line: positive on the left of
    /// `a → b`, negative on the right, zero on it; faithfully rounded, with the
    /// sign always exact. A degenerate line (`a == b`) gives `|p − a|`; any
    /// non-finite input gives NaN.
    ///
    /// ```
    /// let l = segdist::Line2::new([0.0, 0.0], [1.0, 0.0]);
    /// assert_eq!(l.signed_distance([3.0, 2.0]), 2.0);
    /// assert_eq!(l.signed_distance([3.0, -2.0]), -2.0);
    /// ```
    #[must_use]
    pub fn signed_distance(&self, p: [T; 2]) -> T {
        T::from_f64(kernel::line_signed(&widen(&self.a), &widen(&self.b), &widen(&p)))
    }
}
