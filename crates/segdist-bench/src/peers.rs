//! The textbook formula and the peers, each as a point–segment distance on
//! plain arrays, used exactly as their documentation shows.

use geo::{Distance, Euclidean};
use kurbo::ParamCurveNearest;
use parry2d_f64::query::PointQuery as _;
use parry3d_f64::query::PointQuery as _;

/// The textbook clamped projection (Ericson / the seeds), `sqrt(d²)`.
#[inline(always)]
pub fn textbook<const D: usize, T: Num>(a: &[T; D], b: &[T; D], p: &[T; D]) -> T {
    let z = T::ZERO;
    let mut l = z;
    let mut n = z;
    for i in 0..D {
        let ab = b[i] - a[i];
        l = l + ab * ab;
        n = n + (p[i] - a[i]) * ab;
    }
    // clamp as max(0, min(1, t)), the branch-free form of the seeds.
    let t = if l > z { n / l } else { z };
    let t = if t < T::ONE { t } else { T::ONE };
    let t = if t > z { t } else { z };
    let mut d2 = z;
    for i in 0..D {
        let v = p[i] - (a[i] + t * (b[i] - a[i]));
        d2 = d2 + v * v;
    }
    d2.sqrt()
}

/// What the textbook formula needs of a number type (`f32`, `f64`).
pub trait Num:
    Copy
    + Default
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + Sqrt
{
}

impl<T> Num for T where
    T: Copy
        + Default
        + PartialOrd
        + std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>
        + Sqrt
{
}

pub trait Sqrt {
    const ZERO: Self;
    const ONE: Self;
    fn sqrt(self) -> Self;
}

impl Sqrt for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
}

impl Sqrt for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
}

/// geo 0.33: `Euclidean.distance(&Point, &Line)`.
#[inline(always)]
pub fn geo(a: &[f64; 2], b: &[f64; 2], p: &[f64; 2]) -> f64 {
    let line = geo::Line::new(geo::coord! { x: a[0], y: a[1] }, geo::coord! { x: b[0], y: b[1] });
    Euclidean.distance(&geo::Point::new(p[0], p[1]), &line)
}

/// parry2d-f64 0.31: `Segment::distance_to_local_point(pt, solid = true)`.
#[inline(always)]
pub fn parry2(a: &[f64; 2], b: &[f64; 2], p: &[f64; 2]) -> f64 {
    use parry2d_f64::math::Vector;
    let s = parry2d_f64::shape::Segment::new(Vector::new(a[0], a[1]), Vector::new(b[0], b[1]));
    s.distance_to_local_point(Vector::new(p[0], p[1]), true)
}

/// parry3d-f64 0.31: `Segment::distance_to_local_point(pt, solid = true)`.
#[inline(always)]
pub fn parry3(a: &[f64; 3], b: &[f64; 3], p: &[f64; 3]) -> f64 {
    use parry3d_f64::math::Vector;
    let s = parry3d_f64::shape::Segment::new(Vector::new(a[0], a[1], a[2]), Vector::new(b[0], b[1], b[2]));
    s.distance_to_local_point(Vector::new(p[0], p[1], p[2]), true)
}

/// kurbo 0.13: `Line::nearest(p, accuracy).distance_sq`, square-rooted.
#[inline(always)]
pub fn kurbo(a: &[f64; 2], b: &[f64; 2], p: &[f64; 2]) -> f64 {
    let line = kurbo::Line::new((a[0], a[1]), (b[0], b[1]));
    line.nearest(kurbo::Point::new(p[0], p[1]), 1e-9).distance_sq.sqrt()
}
