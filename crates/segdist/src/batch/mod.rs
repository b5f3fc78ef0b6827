//! Many queries per call: one segment (or line) against many points, or many
//! (segment, point) pairs, with SIMD chosen at run time and all cores.
//!
//! Results are **bit-identical** to the scalar methods of the same tier
//! ([`Segment::closest_point`](crate::Segment::closest_point),
//! [`Segment::closest_point_fast`](crate::Segment::closest_point_fast), …) for
//! every input, whichever instruction set or thread count runs them.
//!
//! - Inputs: rows (`&[[T; D]]`) or coordinate columns (`[xs, ys]`,
//!   `[xs, ys, zs]`, the layout of numpy, Arrow and Parquet), `f32` or `f64`.
//! - Outputs: any of distance, squared distance, `t`, closest point and region,
//!   written into slices the caller provides ([`Outputs`]); what is not asked
//!   for is not computed where that saves work (no `t` or point: a cheaper
//!   kernel). [`project`] and [`distances`] allocate for you.
//! - [`Options`]: tier, segment or line, threads, and (for tests and
//!   benchmarks) the instruction set.
//! - Calls of 2^20 queries or more write their `f64` distance, squared
//!   distance and `t` columns with non-temporal stores (x86-64): results of
//!   8 MB and up would not stay in the cache anyway, and this saves memory
//!   traffic. Reading them back right after the call then comes from memory.
//!
//! # Example
//!
//! ```
//! use segdist::batch::{self, Options, Outputs};
//!
//! let points = vec![[0.0, 1.0], [2.0, -1.0], [5.0, 0.5]];
//! let mut d = vec![0.0; points.len()];
//! let mut t = vec![0.0; points.len()];
//! let out = Outputs { distance: Some(&mut d), t: Some(&mut t), ..Outputs::default() };
//! batch::one_to_many([0.0, 0.0], [4.0, 0.0], &points, out, &Options::default())?;
//! assert_eq!(d, [1.0, 1.0, 1.118033988749895]);
//! assert_eq!(t, [0.0, 0.5, 1.0]);
//! # Ok::<(), segdist::batch::BatchError>(())
//! ```

use core::fmt;

use crate::kernel::Region;
use crate::scalar::Scalar;

/// Queries handed to the kernels at a time (a multiple of every lane count).
const BLOCK: usize = 256;
#[cfg(target_arch = "x86_64")]
const _: () = assert!(BLOCK == crate::sweep::BLOCK);
/// Below this many queries, no other thread is asked to help.
const PAR_MIN: usize = 1 << 15;

/// Points as rows or as coordinate columns.
///
/// ```
/// use segdist::batch::Points;
///
/// let rows = [[1.0, 2.0], [3.0, 4.0]];
/// let xs = [1.0, 3.0];
/// let ys = [2.0, 4.0];
/// assert_eq!(Points::from(&rows[..]).len(), 2);
/// assert_eq!(Points::Columns([&xs[..], &ys[..]]).len(), 2);
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Points<'a, T, const D: usize> {
    /// One `[x, y(, z)]` per point.
    Rows(&'a [[T; D]]),
    /// One slice per coordinate, all of the same length.
    Columns([&'a [T]; D]),
}

impl<'a, T, const D: usize> Points<'a, T, D> {
    /// The number of points (of the first column, for columns).
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Points::Rows(r) => r.len(),
            Points::Columns(c) => c.first().map_or(0, |c| c.len()),
        }
    }

    /// `true` when there are no points.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check(&self, what: &'static str) -> Result<usize, BatchError> {
        let n = self.len();
        if let Points::Columns(c) = self {
            for col in c.iter() {
                if col.len() != n {
                    return Err(BatchError::LengthMismatch { what, expected: n, got: col.len() });
                }
            }
        }
        Ok(n)
    }

    fn slice(&self, start: usize, end: usize) -> Points<'a, T, D> {
        match *self {
            Points::Rows(r) => Points::Rows(&r[start..end]),
            Points::Columns(c) => Points::Columns(c.map(|c| &c[start..end])),
        }
    }
}

impl<'a, T, const D: usize> From<&'a [[T; D]]> for Points<'a, T, D> {
    fn from(r: &'a [[T; D]]) -> Self {
        Points::Rows(r)
    }
}

impl<'a, T, const D: usize> From<&'a Vec<[T; D]>> for Points<'a, T, D> {
    fn from(r: &'a Vec<[T; D]>) -> Self {
        Points::Rows(r)
    }
}

impl<'a, T, const D: usize, const N: usize> From<&'a [[T; D]; N]> for Points<'a, T, D> {
    fn from(r: &'a [[T; D]; N]) -> Self {
        Points::Rows(r)
    }
}

impl<'a, T, const D: usize> From<[&'a [T]; D]> for Points<'a, T, D> {
    fn from(c: [&'a [T]; D]) -> Self {
        Points::Columns(c)
    }
}

/// Where results go: one optional slice per output, each as long as the
/// input. `None` outputs are not written (and, for `t` and `point`, not
/// computed).
///
/// ```
/// use segdist::batch::Outputs;
///
/// let mut d2 = vec![0.0f64; 10];
/// let out: Outputs<f64, 2> = Outputs { distance_squared: Some(&mut d2), ..Outputs::default() };
/// ```
#[derive(Debug)]
pub struct Outputs<'a, T, const D: usize> {
    /// Distances.
    pub distance: Option<&'a mut [T]>,
    /// Squared distances.
    pub distance_squared: Option<&'a mut [T]>,
    /// Parameters `t` (clamped to `[0, 1]` for segments).
    pub t: Option<&'a mut [T]>,
    /// Closest points.
    pub point: Option<&'a mut [[T; D]]>,
    /// Regions ([`Region::Interior`] for every finite query on a line, but
    /// [`Region::Start`] on a degenerate one).
    pub region: Option<&'a mut [Region]>,
}

impl<T, const D: usize> Default for Outputs<'_, T, D> {
    fn default() -> Self {
        Outputs { distance: None, distance_squared: None, t: None, point: None, region: None }
    }
}

impl<'a, T, const D: usize> Outputs<'a, T, D> {
    fn check(&self, n: usize) -> Result<(), BatchError> {
        let lens = [
            ("distance", self.distance.as_ref().map(|s| s.len())),
            ("distance_squared", self.distance_squared.as_ref().map(|s| s.len())),
            ("t", self.t.as_ref().map(|s| s.len())),
            ("point", self.point.as_ref().map(|s| s.len())),
            ("region", self.region.as_ref().map(|s| s.len())),
        ];
        for (what, len) in lens {
            if let Some(got) = len
                && got != n
            {
                return Err(BatchError::LengthMismatch { what, expected: n, got });
            }
        }
        Ok(())
    }

    fn needs_t_or_point(&self) -> bool {
        self.t.is_some() || self.point.is_some()
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        fn split<X>(s: Option<&mut [X]>, mid: usize) -> (Option<&mut [X]>, Option<&mut [X]>) {
            match s {
                Some(s) => {
                    let (l, r) = s.split_at_mut(mid);
                    (Some(l), Some(r))
                }
                None => (None, None),
            }
        }
        let (d1, d2) = split(self.distance, mid);
        let (s1, s2) = split(self.distance_squared, mid);
        let (t1, t2) = split(self.t, mid);
        let (p1, p2) = split(self.point, mid);
        let (r1, r2) = split(self.region, mid);
        (
            Outputs { distance: d1, distance_squared: s1, t: t1, point: p1, region: r1 },
            Outputs { distance: d2, distance_squared: s2, t: t2, point: p2, region: r2 },
        )
    }
}

/// Accurate (faithfully rounded) or fast (textbook) kernels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Tier {
    /// The accurate tier: every output faithfully rounded.
    #[default]
    Accurate,
    /// The fast tier: the textbook formula, made total.
    Fast,
}

/// The instruction set the batch kernels run on.
///
/// `Auto` (the default) picks the best the CPU has at run time. The others
/// force one path, for tests and benchmarks; asking for one the CPU lacks is
/// an error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Isa {
    /// The best available.
    #[default]
    Auto,
    /// The scalar kernels, one query at a time.
    Scalar,
    /// SSE2, 2 lanes (x86-64 only; exact products without FMA).
    Sse2,
    /// AVX2 with FMA, 4 lanes (x86-64).
    Avx2,
    /// AVX-512 F, VL, DQ and BW, and POPCNT (x86-64): the accurate kernels
    /// sixteen lanes at a time (the fast tier's loops compiled for AVX-512).
    Avx512,
    /// NEON (AArch64, where it is always present): the accurate kernels two
    /// lanes at a time with fused multiply-adds; the fast tier's loops as
    /// the compiler vectorises them for the baseline.
    Neon,
}

impl Isa {
    /// Whether this CPU can run it (`Auto` and `Scalar` always can).
    ///
    /// ```
    /// assert!(segdist::batch::Isa::Scalar.is_available());
    /// ```
    #[must_use]
    pub fn is_available(self) -> bool {
        match self {
            Isa::Auto | Isa::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Sse2 => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512vl")
                    && std::is_x86_feature_detected!("avx512dq")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("popcnt")
            }
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// The instruction set `Auto` resolves to on this CPU.
    ///
    /// ```
    /// let isa = segdist::batch::Isa::detect();
    /// assert!(isa.is_available() && isa != segdist::batch::Isa::Auto);
    /// ```
    #[must_use]
    pub fn detect() -> Isa {
        [Isa::Avx512, Isa::Avx2, Isa::Sse2, Isa::Neon].into_iter().find(|i| i.is_available()).unwrap_or(Isa::Scalar)
    }
}

/// How a batch runs.
///
/// ```
/// use segdist::batch::{Options, Tier};
///
/// let opts = Options { tier: Tier::Fast, threads: Some(1), ..Options::default() };
/// assert!(!opts.line);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// Project onto the infinite line through `a` and `b` (unclamped `t`).
    pub line: bool,
    /// Accurate (default) or fast.
    pub tier: Tier,
    /// `None`: all cores (rayon's global pool) for batches of 32k queries or
    /// more; `Some(1)`: the calling thread only; `Some(k)`: a pool of `k`.
    /// Results do not depend on it.
    pub threads: Option<usize>,
    /// The instruction set (default: the best available).
    pub isa: Isa,
}

/// Why a batch call was refused (nothing is written then).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchError {
    /// An input or output slice does not have the expected length.
    LengthMismatch {
        /// Which slice.
        what: &'static str,
        /// The number of queries.
        expected: usize,
        /// Its length.
        got: usize,
    },
    /// [`Options::isa`] names an instruction set this CPU does not have.
    IsaUnavailable(Isa),
    /// The thread pool for [`Options::threads`] could not be built.
    ThreadPool(String),
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::LengthMismatch { what, expected, got } => {
                write!(f, "{what} has length {got}, expected {expected}")
            }
            BatchError::IsaUnavailable(isa) => write!(f, "this CPU cannot run {isa:?}"),
            BatchError::ThreadPool(e) => write!(f, "cannot build the thread pool: {e}"),
        }
    }
}

impl std::error::Error for BatchError {}

/// One segment (or, with [`Options::line`], line) `a → b` against many
/// points.
///
/// # Errors
///
/// [`BatchError::LengthMismatch`] when an output (or a column) is not as long
/// as the points; [`BatchError::IsaUnavailable`], [`BatchError::ThreadPool`]
/// for options this machine cannot honour. Nothing is written then.
///
/// # Example
///
/// ```
/// use segdist::batch::{self, Options, Outputs};
///
/// let xs = [0.0f32, 1.0, 2.0];
/// let ys = [1.0f32, 1.0, 1.0];
/// let mut d2 = [0.0f32; 3];
/// let out = Outputs { distance_squared: Some(&mut d2), ..Outputs::default() };
/// batch::one_to_many([0.0, 0.0], [1.0, 0.0], [&xs[..], &ys[..]], out, &Options::default())?;
/// assert_eq!(d2, [1.0, 1.0, 2.0]);
/// # Ok::<(), segdist::batch::BatchError>(())
/// ```
pub fn one_to_many<'p, T: Scalar, const D: usize>(
    a: [T; D],
    b: [T; D],
    points: impl Into<Points<'p, T, D>>,
    out: Outputs<'_, T, D>,
    opts: &Options,
) -> Result<(), BatchError> {
    let points = points.into();
    let n = points.check("points")?;
    run(Src::Fixed(a), Src::Fixed(b), points, n, out, opts)
}

/// Many (segment, point) pairs: query `i` is point `p[i]` against segment
/// `a[i] → b[i]` (or the line through them, with [`Options::line`]).
///
/// # Errors
///
/// As [`one_to_many`], and [`BatchError::LengthMismatch`] when `a`, `b` and
/// `p` differ in length.
///
/// # Example
///
/// ```
/// use segdist::batch::{self, Options, Outputs};
///
/// let a = [[0.0, 0.0], [1.0, 1.0]];
/// let b = [[2.0, 0.0], [1.0, 1.0]];
/// let p = [[1.0, 3.0], [4.0, 5.0]];
/// let mut d = [0.0; 2];
/// batch::pairs(&a, &b, &p, Outputs { distance: Some(&mut d), ..Outputs::default() }, &Options::default())?;
/// assert_eq!(d, [3.0, 5.0]);
/// # Ok::<(), segdist::batch::BatchError>(())
/// ```
pub fn pairs<'p, T: Scalar, const D: usize>(
    a: impl Into<Points<'p, T, D>>,
    b: impl Into<Points<'p, T, D>>,
    p: impl Into<Points<'p, T, D>>,
    out: Outputs<'_, T, D>,
    opts: &Options,
) -> Result<(), BatchError> {
    let (a, b, p) = (a.into(), b.into(), p.into());
    let n = p.check("p")?;
    for (what, x) in [("a", &a), ("b", &b)] {
        let len = x.check(what)?;
        if len != n {
            return Err(BatchError::LengthMismatch { what, expected: n, got: len });
        }
    }
    run(Src::Points(a), Src::Points(b), p, n, out, opts)
}

/// Every output for one segment against many points, allocated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Projections<T, const D: usize> {
    /// Distances.
    pub distance: Vec<T>,
    /// Squared distances.
    pub distance_squared: Vec<T>,
    /// Parameters `t`.
    pub t: Vec<T>,
    /// Closest points.
    pub point: Vec<[T; D]>,
    /// Regions.
    pub region: Vec<Region>,
}

/// [`one_to_many`] with every output, allocated.
///
/// # Errors
///
/// As [`one_to_many`].
///
/// ```
/// use segdist::{batch, Region};
///
/// let r = batch::project([0.0, 0.0], [2.0, 0.0], &[[1.0, 1.0], [3.0, 0.0]], &Default::default())?;
/// assert_eq!(r.point, [[1.0, 0.0], [2.0, 0.0]]);
/// assert_eq!(r.region, [Region::Interior, Region::End]);
/// # Ok::<(), segdist::batch::BatchError>(())
/// ```
pub fn project<'p, T: Scalar, const D: usize>(
    a: [T; D],
    b: [T; D],
    points: impl Into<Points<'p, T, D>>,
    opts: &Options,
) -> Result<Projections<T, D>, BatchError> {
    let points = points.into();
    let n = points.check("points")?;
    let mut r = Projections {
        distance: vec![T::ZERO; n],
        distance_squared: vec![T::ZERO; n],
        t: vec![T::ZERO; n],
        point: vec![[T::ZERO; D]; n],
        region: vec![Region::Start; n],
    };
    let out = Outputs {
        distance: Some(&mut r.distance),
        distance_squared: Some(&mut r.distance_squared),
        t: Some(&mut r.t),
        point: Some(&mut r.point),
        region: Some(&mut r.region),
    };
    one_to_many(a, b, points, out, opts)?;
    Ok(r)
}

/// Accurate distances from one segment to many points, on all cores.
///
/// # Errors
///
/// [`BatchError::LengthMismatch`] for columns of different lengths.
///
/// ```
/// let d = segdist::batch::distances([0.0, 0.0], [4.0, 0.0], &[[2.0, 3.0], [7.0, 4.0]])?;
/// assert_eq!(d, [3.0, 5.0]);
/// # Ok::<(), segdist::batch::BatchError>(())
/// ```
pub fn distances<'p, T: Scalar, const D: usize>(
    a: [T; D],
    b: [T; D],
    points: impl Into<Points<'p, T, D>>,
) -> Result<Vec<T>, BatchError> {
    let points = points.into();
    let mut d = vec![T::ZERO; points.check("points")?];
    one_to_many(a, b, points, Outputs { distance: Some(&mut d), ..Outputs::default() }, &Options::default())?;
    Ok(d)
}

mod driver;
use driver::{run, Src};
