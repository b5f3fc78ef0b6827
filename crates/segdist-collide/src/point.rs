//! The 2D vector types the queries take and give back: `[T; 2]` always,
//! glam's `Vec2` / `DVec2` with the `glam` feature, mint's `Vector2` /
//! `Point2` with the `mint` feature. Everything inside is `f64`.

use segdist::Scalar;

/// A 2D point or vector the collision queries accept and return: a pair of
/// `f32` or `f64` coordinates.
///
/// Implemented for `[T; 2]` (`T` = `f32` or `f64`), for `glam::Vec2` and
/// `glam::DVec2` (feature `glam`) and for `mint::Vector2<T>` and
/// `mint::Point2<T>` (feature `mint`). A query answers in the type it was
/// given: `Vec2` in, `Vec2` out. Implement it for your own vector type in
/// two lines.
///
/// # Example
///
/// ```
/// use segdist_collide::Point;
///
/// #[derive(Clone, Copy)]
/// struct V(f32, f32);
/// impl Point for V {
///     type Scalar = f32;
///     fn to_array(self) -> [f32; 2] { [self.0, self.1] }
///     fn from_array([x, y]: [f32; 2]) -> Self { V(x, y) }
/// }
/// assert_eq!(V::from_array([1.0, 2.0]).to_array(), [1.0, 2.0]);
/// ```
pub trait Point: Copy + Send + Sync {
    /// The coordinate type, `f32` or `f64`: positions are rounded to it,
    /// and every guarantee holds for the rounded values.
    type Scalar: Scalar;
    /// The coordinates `[x, y]`.
    fn to_array(self) -> [Self::Scalar; 2];
    /// The point with coordinates `[x, y]`.
    fn from_array(xy: [Self::Scalar; 2]) -> Self;
}

impl<T: Scalar> Point for [T; 2] {
    type Scalar = T;
    #[inline]
    fn to_array(self) -> [T; 2] {
        self
    }
    #[inline]
    fn from_array(xy: [T; 2]) -> Self {
        xy
    }
}

#[cfg(feature = "glam")]
impl Point for glam::Vec2 {
    type Scalar = f32;
    #[inline]
    fn to_array(self) -> [f32; 2] {
        [self.x, self.y]
    }
    #[inline]
    fn from_array([x, y]: [f32; 2]) -> Self {
        glam::Vec2::new(x, y)
    }
}

#[cfg(feature = "glam")]
impl Point for glam::DVec2 {
    type Scalar = f64;
    #[inline]
    fn to_array(self) -> [f64; 2] {
        [self.x, self.y]
    }
    #[inline]
    fn from_array([x, y]: [f64; 2]) -> Self {
        glam::DVec2::new(x, y)
    }
}

#[cfg(feature = "mint")]
impl<T: Scalar> Point for mint::Vector2<T> {
    type Scalar = T;
    #[inline]
    fn to_array(self) -> [T; 2] {
        [self.x, self.y]
    }
    #[inline]
    fn from_array([x, y]: [T; 2]) -> Self {
        mint::Vector2 { x, y }
    }
}

#[cfg(feature = "mint")]
impl<T: Scalar> Point for mint::Point2<T> {
    type Scalar = T;
    #[inline]
    fn to_array(self) -> [T; 2] {
        [self.x, self.y]
    }
    #[inline]
    fn from_array([x, y]: [T; 2]) -> Self {
        mint::Point2 { x, y }
    }
}

/// `p` widened exactly to `f64`.
#[inline]
pub(crate) fn wide<P: Point>(p: P) -> [f64; 2] {
    p.to_array().map(Scalar::to_f64)
}

/// The one check every query makes of its input: finite coordinates and a
/// finite radius of at least zero.
#[inline]
pub(crate) fn valid(points: &[[f64; 2]], r: f64) -> bool {
    points.iter().flatten().all(|x| x.is_finite()) && r >= 0.0 && r.is_finite()
}

/// `x` rounded to `P`'s coordinate type.
#[inline]
pub(crate) fn narrow<P: Point>(x: [f64; 2]) -> P {
    P::from_array(x.map(P::Scalar::from_f64))
}

/// `x` rounded to `P`'s coordinate type, kept in `f64` (exactly).
#[inline]
pub(crate) fn round<P: Point>(x: [f64; 2]) -> [f64; 2] {
    x.map(|v| P::Scalar::from_f64(v).to_f64())
}

/// The unit roundoff of `P`'s coordinate type (`2^-24` or `2^-53`).
#[inline]
pub(crate) fn unit<P: Point>() -> f64 {
    if core::mem::size_of::<P::Scalar>() == 4 {
        f64::from(f32::EPSILON) / 2.0
    } else {
        f64::EPSILON / 2.0
    }
}
