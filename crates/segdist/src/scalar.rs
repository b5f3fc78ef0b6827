//! The coordinate types segdist accepts: `f32` and `f64`, in one build.

use core::fmt::Debug;
use core::ops::{Add, Div, Mul, Neg, Sub};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A floating-point coordinate type: implemented for `f32` and `f64` only.
///
/// Accurate queries on `f32` are computed in `f64` from the exact widened
/// inputs and rounded once, so they are faithfully rounded in `f32`; fast
/// queries run natively in the type itself.
///
/// # Example
///
/// ```
/// use segdist::{Scalar, Segment2};
///
/// fn dist<T: Scalar>(s: &Segment2<T>, p: [T; 2]) -> T {
///     s.distance(p)
/// }
/// assert_eq!(dist(&Segment2::new([0.0f32, 0.0], [4.0, 0.0]), [1.0, 3.0]), 3.0);
/// ```
pub trait Scalar:
    sealed::Sealed
    + Copy
    + Debug
    + Default
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// `0`.
    const ZERO: Self;
    /// `1`.
    const ONE: Self;
    /// A quiet NaN.
    const NAN: Self;
    /// Widens exactly to `f64`.
    fn to_f64(self) -> f64;
    /// Rounds an `f64` to the nearest value of this type.
    fn from_f64(x: f64) -> Self;
    /// The square root.
    fn sqrt(self) -> Self;
    /// `true` unless NaN or infinite.
    fn is_finite(self) -> bool;
    /// The larger of two values; the non-NaN one if one is NaN.
    fn max(self, other: Self) -> Self;
    /// The smaller of two values; the non-NaN one if one is NaN.
    fn min(self, other: Self) -> Self;
}

macro_rules! impl_scalar {
    ($t:ty) => {
        impl Scalar for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NAN: Self = <$t>::NAN;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
        }
    };
}

impl_scalar!(f32);
impl_scalar!(f64);

#[inline(always)]
pub(crate) fn widen<T: Scalar, const D: usize>(x: &[T; D]) -> [f64; D] {
    x.map(T::to_f64)
}

#[inline(always)]
pub(crate) fn narrow<T: Scalar, const D: usize>(x: [f64; D]) -> [T; D] {
    x.map(T::from_f64)
}

/// Compile-time guard: segdist's queries are defined in 2 and 3 dimensions.
pub(crate) struct Dim<const D: usize>;

impl<const D: usize> Dim<D> {
    pub(crate) const CHECK: () = assert!(D == 2 || D == 3, "segdist supports 2D and 3D only");
}
