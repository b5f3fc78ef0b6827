//! Signed distance to a plane in 3D: [`Plane`].

use crate::eft::{cross_dd, dot_dd, two_diff, Dd, Dekker};
use crate::kernel;
use crate::scalar::{narrow, widen, Scalar};

/// A plane `n·x − offset = 0` in 3D (the seeds' `ax + by + cz − d = 0`),
/// with a non-zero, finite normal `n` that need not be unit length.
///
/// # Example
///
/// ```
/// use segdist::Plane;
///
/// // z = 2, normal not normalised.
/// let floor = Plane::new([0.0, 0.0, 4.0], 8.0).expect("non-zero normal");
/// assert_eq!(floor.signed_distance([1.0, 2.0, 5.0]), 3.0);
/// assert_eq!(floor.signed_distance([1.0, 2.0, -1.0]), -3.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane<T> {
    normal: [T; 3],
    offset: T,
}

impl<T: Scalar> Plane<T> {
    /// The plane of points `x` with `normal·x = offset`. `None` when the
    /// normal is zero or any input is NaN or infinite.
    ///
    /// ```
    /// assert!(segdist::Plane::new([0.0, 0.0, 0.0], 1.0).is_none());
    /// assert!(segdist::Plane::new([1.0, 0.0, 0.0], 1.0).is_some());
    /// ```
    #[must_use]
    pub fn new(normal: [T; 3], offset: T) -> Option<Self> {
        let finite = normal.iter().all(|x| x.is_finite()) && offset.is_finite();
        let zero = normal.iter().all(|x| *x == T::ZERO);
        (finite && !zero).then_some(Plane { normal, offset })
    }

    /// The plane through three points, oriented so that its normal is
    /// `(b − a) × (c − a)` (counter-clockwise `a, b, c` seen from the
    /// positive side). `None` when the points are collinear or not finite.
    ///
    /// The normal and offset are each rounded once from their exact values;
    /// distances are then faithful with respect to that stored plane.
    ///
    /// ```
    /// let p = segdist::Plane::from_points([0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]).unwrap();
    /// assert_eq!(p.normal(), [0.0, 0.0, 1.0]);
    /// assert_eq!(p.signed_distance([5.0, 5.0, 4.0]), 3.0);
    /// assert!(segdist::Plane::from_points([0.0; 3], [1.0; 3], [2.0; 3]).is_none());
    /// ```
    #[must_use]
    pub fn from_points(a: [T; 3], b: [T; 3], c: [T; 3]) -> Option<Self> {
        let (a, b, c) = (widen(&a), widen(&b), widen(&c));
        if !a.iter().chain(&b).chain(&c).all(|x| x.is_finite()) {
            return None;
        }
        let d = |x: &[f64; 3]| -> [Dd; 3] {
            [0, 1, 2].map(|i| {
                let (h, l) = two_diff(x[i], a[i]);
                Dd::new(h, l)
            })
        };
        let (ab, ac) = (d(&b), d(&c));
        // Double-double cross products, rounded once. Exact only inside the
        // kernel window; outside it the normal is still within a few ulps.
        let n = [(1, 2), (2, 0), (0, 1)].map(|(i, j)| {
            let (c, _) = cross_dd::<Dekker>(ab[i], ab[j], ac[i], ac[j]);
            c.hi + c.lo
        });
        let (off, _) = dot_dd::<Dekker, 3>(&n.map(|x| Dd::new(x, 0.0)), &a.map(|x| Dd::new(x, 0.0)));
        let n: [T; 3] = narrow(n);
        Plane::new(n, T::from_f64(off.hi + off.lo))
    }

    /// The normal `n` (not necessarily unit length).
    ///
    /// ```
    /// assert_eq!(segdist::Plane::new([0.0, 2.0, 0.0], 1.0).unwrap().normal(), [0.0, 2.0, 0.0]);
    /// ```
    #[must_use]
    pub fn normal(&self) -> [T; 3] {
        self.normal
    }

    /// The offset: the plane is `n·x = offset`.
    ///
    /// ```
    /// assert_eq!(segdist::Plane::new([0.0, 2.0, 0.0], 1.0).unwrap().offset(), 1.0);
    /// ```
    #[must_use]
    pub fn offset(&self) -> T {
        self.offset
    }

    /// `(n·p − offset)/|n|`: positive on the side the normal points to,
    /// faithfully rounded, sign always exact. NaN for non-finite `p`.
    ///
    /// ```
    /// let p = segdist::Plane::new([1.0, 1.0, 0.0], 0.0).unwrap();
    /// assert_eq!(p.signed_distance([1.0, 1.0, 7.0]), 2f64.sqrt());
    /// ```
    #[must_use]
    pub fn signed_distance(&self, p: [T; 3]) -> T {
        T::from_f64(kernel::plane_signed(&widen(&self.normal), self.offset.to_f64(), &widen(&p)))
    }

    /// `|signed_distance(p)|`.
    ///
    /// ```
    /// let p = segdist::Plane::new([0.0, 0.0, 1.0], 0.0).unwrap();
    /// assert_eq!(p.distance([0.0, 0.0, -2.0]), 2.0);
    /// ```
    #[must_use]
    pub fn distance(&self, p: [T; 3]) -> T {
        let d = self.signed_distance(p);
        if d < T::ZERO {
            -d
        } else {
            d
        }
    }
}
