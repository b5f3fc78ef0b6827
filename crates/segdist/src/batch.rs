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

use crate::kernel::{self, Raw, Region};
use crate::lanes::Lanes;
use crate::scalar::{Dim, Scalar};
use crate::{batch_kernel, fast};

/// Queries handed to the kernels at a time (a multiple of every lane count).
const BLOCK: usize = 256;
#[cfg(target_arch = "x86_64")]
const _: () = assert!(BLOCK == crate::routed::BLOCK);
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

// ------------------------------------------------------------------ driver

/// Where the segments' vertices come from.
#[derive(Clone, Copy)]
enum Src<'a, T, const D: usize> {
    Fixed([T; D]),
    Points(Points<'a, T, D>),
}

impl<'a, T: Copy, const D: usize> Src<'a, T, D> {
    fn slice(&self, start: usize, end: usize) -> Self {
        match self {
            Src::Fixed(x) => Src::Fixed(*x),
            Src::Points(p) => Src::Points(p.slice(start, end)),
        }
    }
}

fn run<T: Scalar, const D: usize>(
    a: Src<'_, T, D>,
    b: Src<'_, T, D>,
    p: Points<'_, T, D>,
    n: usize,
    out: Outputs<'_, T, D>,
    opts: &Options,
) -> Result<(), BatchError> {
    let () = Dim::<D>::CHECK;
    out.check(n)?;
    let isa = match opts.isa {
        Isa::Auto => Isa::detect(),
        isa if isa.is_available() => isa,
        isa => return Err(BatchError::IsaUnavailable(isa)),
    };
    let job = Job { a, b, p, isa, tier: opts.tier, line: opts.line, full: out.needs_t_or_point() };
    match opts.threads {
        Some(1) => job.serial(out),
        _ if n < PAR_MIN => job.serial(out),
        None => job.parallel(out, n),
        Some(k) => pool(k)?.install(|| job.parallel(out, n)),
    }
    Ok(())
}

/// A rayon pool of `k` threads, built once per `k` and kept (building one per
/// call costs more than a small batch).
fn pool(k: usize) -> Result<std::sync::Arc<rayon::ThreadPool>, BatchError> {
    use std::sync::{Arc, Mutex};
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == k) {
        return Ok(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new().num_threads(k).build().map_err(|e| BatchError::ThreadPool(e.to_string()))?,
    );
    pools.push((k, p.clone()));
    Ok(p)
}

struct Job<'a, T, const D: usize> {
    a: Src<'a, T, D>,
    b: Src<'a, T, D>,
    p: Points<'a, T, D>,
    isa: Isa,
    tier: Tier,
    line: bool,
    full: bool,
}

impl<T: Scalar, const D: usize> Job<'_, T, D> {
    fn parallel(&self, out: Outputs<'_, T, D>, n: usize) {
        // Halve until pieces are small enough for every thread to get several.
        let grain = (n / (4 * rayon::current_num_threads())).max(PAR_MIN / 4);
        self.split(out, 0, n, grain);
    }

    fn split(&self, out: Outputs<'_, T, D>, start: usize, end: usize, grain: usize) {
        if end - start <= grain {
            return self.range(out, start, end);
        }
        // Split on a block boundary so the pieces match a serial run's blocks.
        let mid = start + ((end - start) / 2).div_ceil(BLOCK) * BLOCK;
        let (lo, hi) = out.split_at(mid - start);
        rayon::join(|| self.split(lo, start, mid, grain), || self.split(hi, mid, end, grain));
    }

    fn serial(&self, out: Outputs<'_, T, D>) {
        self.range(out, 0, self.p.len());
    }

    /// Queries `start..end`, block by block.
    fn range(&self, mut out: Outputs<'_, T, D>, start: usize, end: usize) {
        if self.tier == Tier::Fast
            && !self.full
            && out.region.is_none()
            && let Points::Rows(p) = self.p
        {
            let p = &p[start..end];
            match (self.a, self.b) {
                (Src::Fixed(a), Src::Fixed(b)) => return fast_direct(Ends::One(a, b), p, self.line, out, self.isa),
                (Src::Points(Points::Rows(a)), Src::Points(Points::Rows(b))) => {
                    return fast_direct(Ends::Many(&a[start..end], &b[start..end]), p, self.line, out, self.isa);
                }
                _ => {}
            }
        }
        let (a, b, p) = (self.a.slice(start, end), self.b.slice(start, end), self.p.slice(start, end));
        with_block::<D>(|blk| {
            blk.wants_d2 = out.distance_squared.is_some();
            blk.wants_code = out.region.is_some();
            blk.stream = self.p.len() >= STREAM_MIN;
            // The copies into and out of the block are compiled for the
            // instruction set too (as SSE2 they were a sixth of a routed
            // batch's time).
            match self.isa {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `run` resolved `isa` to one this CPU supports.
                Isa::Avx512 => unsafe { self.blocks_avx512(blk, &a, &b, &p, &mut out, end - start) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: as above.
                Isa::Avx2 => unsafe { self.blocks_avx2(blk, &a, &b, &p, &mut out, end - start) },
                _ => self.blocks(blk, &a, &b, &p, &mut out, end - start),
            }
        });
    }

    /// Queries `0..n` of the (already sliced) inputs, block by block.
    #[inline(always)]
    fn blocks(
        &self,
        blk: &mut Block<D>,
        a: &Src<'_, T, D>,
        b: &Src<'_, T, D>,
        p: &Points<'_, T, D>,
        out: &mut Outputs<'_, T, D>,
        n: usize,
    ) {
        let mut i = 0;
        while i < n {
            #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
            let mut m = (n - i).min(BLOCK);
            #[cfg(target_arch = "x86_64")]
            {
                blk.direct = None;
                // (Taken afresh from `out` for every block: the pointer is
                // used only until `out` is next written through.)
                if let Some(dc) = self.direct_column(blk, out) {
                    // SAFETY: `i < n`, the column's length.
                    let at = unsafe { dc.at.add(i) };
                    let misaligned = (at as usize % 64) / 8;
                    if misaligned != 0 {
                        // A short block through the columns, up to the
                        // next 64-byte boundary of the output.
                        m = m.min(8 - misaligned);
                    } else if m == BLOCK {
                        blk.direct = Some(crate::routed::Direct { at, d2: dc.d2 });
                    }
                }
            }
            #[cfg(target_arch = "x86_64")]
            let offered = blk.direct.is_some();
            #[cfg(not(target_arch = "x86_64"))]
            let offered = false;
            blk.fill(a, b, p, i, m);
            self.block(blk, m);
            // The sweep takes the column it writes (a segment it cannot
            // take leaves it): only then is there nothing to copy out.
            #[cfg(target_arch = "x86_64")]
            let written = offered && blk.direct.is_none();
            #[cfg(not(target_arch = "x86_64"))]
            let written = offered;
            if !written {
                blk.write(out, i, m);
            }
            i += m;
        }
        #[cfg(target_arch = "x86_64")]
        {
            blk.direct = None;
        }
        #[cfg(target_arch = "x86_64")]
        if blk.stream {
            // Non-temporal stores are weakly ordered: done before anyone
            // reads the results.
            // SAFETY: SSE is part of x86-64.
            unsafe { core::arch::x86_64::_mm_sfence() };
        }
    }

    /// The caller's output column the AVX-512 sweep writes into directly,
    /// if this call allows it: accurate tier, one segment, AVX-512, a
    /// streaming-sized call, `f64` results, and only `d` or only `d²`
    /// asked for (the other outputs go through the block's columns). Full
    /// blocks whose output starts on a 64-byte boundary then skip the
    /// block's column and its copy; a short first block reaches that
    /// boundary.
    #[cfg(target_arch = "x86_64")]
    fn direct_column(&self, blk: &Block<D>, out: &mut Outputs<'_, T, D>) -> Option<crate::routed::Direct> {
        let one_segment = matches!((&self.a, &self.b), (Src::Fixed(_), Src::Fixed(_)));
        let f64_out = core::any::TypeId::of::<T>() == core::any::TypeId::of::<f64>();
        if !(self.isa == Isa::Avx512
            && self.tier == Tier::Accurate
            && !self.line
            && !self.full
            && one_segment
            && blk.stream
            && f64_out
            && out.t.is_none()
            && out.point.is_none()
            && out.region.is_none())
        {
            return None;
        }
        let (col, d2) = match (out.distance.as_deref_mut(), out.distance_squared.as_deref_mut()) {
            (Some(c), None) => (c, false),
            (None, Some(c)) => (c, true),
            _ => return None,
        };
        // (`T` is `f64`: checked above.)
        Some(crate::routed::Direct { at: col.as_mut_ptr().cast::<f64>(), d2 })
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,popcnt")]
    unsafe fn blocks_avx512(
        &self,
        blk: &mut Block<D>,
        a: &Src<'_, T, D>,
        b: &Src<'_, T, D>,
        p: &Points<'_, T, D>,
        out: &mut Outputs<'_, T, D>,
        n: usize,
    ) {
        self.blocks(blk, a, b, p, out, n);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn blocks_avx2(
        &self,
        blk: &mut Block<D>,
        a: &Src<'_, T, D>,
        b: &Src<'_, T, D>,
        p: &Points<'_, T, D>,
        out: &mut Outputs<'_, T, D>,
        n: usize,
    ) {
        self.blocks(blk, a, b, p, out, n);
    }

    fn block(&self, blk: &mut Block<D>, m: usize) {
        match (self.tier, self.line, self.full) {
            (Tier::Accurate, false, true) => accurate_block::<D, false, true>(blk, m, self.isa),
            (Tier::Accurate, false, false) => accurate_block::<D, false, false>(blk, m, self.isa),
            (Tier::Accurate, true, true) => accurate_block::<D, true, true>(blk, m, self.isa),
            (Tier::Accurate, true, false) => accurate_block::<D, true, false>(blk, m, self.isa),
            (Tier::Fast, line, _) => fast_block::<T, D>(blk, m, self.isa, line),
        }
    }
}

/// Runs `f` on this thread's spare block of dimension `D` (a new one the
/// first time): a block is about 50–65 KB, and allocating and zeroing one per
/// call cost more than the kernels on calls of a few dozen queries (the
/// index evaluates its candidates this way). Lanes past a block's queries
/// hold the last call's numbers, whose results are never read.
fn with_block<const D: usize>(f: impl FnOnce(&mut Block<D>)) {
    use std::any::Any;
    use std::cell::RefCell;
    thread_local! {
        static SPARE: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
    }
    let spare = SPARE.with(|s| {
        let mut s = s.borrow_mut();
        let i = s.iter().position(|b| b.is::<Block<D>>())?;
        s.swap_remove(i).downcast::<Block<D>>().ok()
    });
    let mut blk = spare.unwrap_or_else(Block::new);
    f(&mut blk);
    SPARE.with(|s| s.borrow_mut().push(blk));
}

/// Inputs and outputs of up to [`BLOCK`] queries, as `f64` columns (exact for
/// `f32` too). `fixed_a`/`fixed_b` hold the shared vertices of one-to-many
/// batches, which are never copied per query.
struct Block<const D: usize> {
    a: [[f64; BLOCK]; D],
    b: [[f64; BLOCK]; D],
    p: [[f64; BLOCK]; D],
    fixed_a: Option<[f64; D]>,
    fixed_b: Option<[f64; D]>,
    d: [f64; BLOCK],
    d2: [f64; BLOCK],
    t: [f64; BLOCK],
    q: [[f64; BLOCK]; D],
    /// Region per query as the lane kernels give it: 0 start, 1 interior,
    /// 2 end, 3 undefined (converted only if the caller wants regions).
    code: [f64; BLOCK],
    /// Which of `d2` and `code` the caller reads (the routed pass skips the
    /// others).
    wants_d2: bool,
    wants_code: bool,
    /// Write results with non-temporal stores (see [`STREAM_MIN`]).
    stream: bool,
    /// The caller's column the AVX-512 sweep may write straight into (see
    /// [`Job::direct_column`]); the sweep takes it when it does (then the
    /// block's columns hold nothing to copy out).
    #[cfg(target_arch = "x86_64")]
    direct: Option<crate::routed::Direct>,
    /// The routed pass's columns (one segment, AVX2).
    #[cfg(target_arch = "x86_64")]
    routed: crate::routed::Scratch<D>,
}

impl<const D: usize> Block<D> {
    fn new() -> Box<Self> {
        Box::new(Block {
            a: [[0.0; BLOCK]; D],
            b: [[0.0; BLOCK]; D],
            p: [[0.0; BLOCK]; D],
            fixed_a: None,
            fixed_b: None,
            d: [0.0; BLOCK],
            d2: [0.0; BLOCK],
            t: [0.0; BLOCK],
            q: [[0.0; BLOCK]; D],
            code: [0.0; BLOCK],
            wants_d2: true,
            wants_code: true,
            stream: false,
            #[cfg(target_arch = "x86_64")]
            direct: None,
            #[cfg(target_arch = "x86_64")]
            routed: crate::routed::Scratch::new(),
        })
    }

    #[inline(always)]
    fn fill<T: Scalar>(&mut self, a: &Src<'_, T, D>, b: &Src<'_, T, D>, p: &Points<'_, T, D>, i: usize, m: usize) {
        // Inlined, so that it takes the caller's target features (the block
        // loops run inside the AVX2 / AVX-512 wrappers).
        #[inline(always)]
        fn cols<T: Scalar, const D: usize>(dst: &mut [[f64; BLOCK]; D], src: &Points<'_, T, D>, i: usize, m: usize) {
            match src {
                Points::Rows(r) => {
                    for (j, row) in r[i..i + m].iter().enumerate() {
                        for k in 0..D {
                            dst[k][j] = row[k].to_f64();
                        }
                    }
                }
                Points::Columns(c) => {
                    for k in 0..D {
                        for (x, v) in dst[k][..m].iter_mut().zip(&c[k][i..i + m]) {
                            *x = v.to_f64();
                        }
                    }
                }
            }
        }
        // Both set on every fill: a reused block may hold the last call's.
        self.fixed_a = match a {
            Src::Fixed(v) => Some(v.map(T::to_f64)),
            Src::Points(pts) => {
                cols(&mut self.a, pts, i, m);
                None
            }
        };
        self.fixed_b = match b {
            Src::Fixed(v) => Some(v.map(T::to_f64)),
            Src::Points(pts) => {
                cols(&mut self.b, pts, i, m);
                None
            }
        };
        cols(&mut self.p, p, i, m);
    }

    #[inline(always)]
    fn vertex(&self, fixed: Option<[f64; D]>, cols: &[[f64; BLOCK]; D], j: usize) -> [f64; D] {
        match fixed {
            Some(v) => v,
            None => core::array::from_fn(|k| cols[k][j]),
        }
    }

    #[inline(always)]
    fn query(&self, j: usize) -> ([f64; D], [f64; D], [f64; D]) {
        (
            self.vertex(self.fixed_a, &self.a, j),
            self.vertex(self.fixed_b, &self.b, j),
            core::array::from_fn(|k| self.p[k][j]),
        )
    }

    #[inline(always)]
    fn put(&mut self, j: usize, r: &Raw<D>) {
        self.d[j] = r.d;
        self.d2[j] = r.d2;
        self.t[j] = r.t;
        for k in 0..D {
            self.q[k][j] = r.point[k];
        }
        self.code[j] = region_code(r.region);
    }

    #[inline(always)]
    fn write<T: Scalar>(&self, out: &mut Outputs<'_, T, D>, i: usize, m: usize) {
        if let Some(o) = out.distance.as_deref_mut() {
            put_col(&mut o[i..i + m], &self.d[..m], self.stream);
        }
        if let Some(o) = out.distance_squared.as_deref_mut() {
            put_col(&mut o[i..i + m], &self.d2[..m], self.stream);
        }
        if let Some(o) = out.t.as_deref_mut() {
            put_col(&mut o[i..i + m], &self.t[..m], self.stream);
        }
        if let Some(o) = out.point.as_deref_mut() {
            for (j, x) in o[i..i + m].iter_mut().enumerate() {
                *x = core::array::from_fn(|k| T::from_f64(self.q[k][j]));
            }
        }
        if let Some(o) = out.region.as_deref_mut() {
            for (x, c) in o[i..i + m].iter_mut().zip(&self.code) {
                *x = match *c as u8 {
                    0 => Region::Start,
                    1 => Region::Interior,
                    2 => Region::End,
                    _ => Region::Undefined,
                };
            }
        }
    }
}

/// Calls with at least this many queries write their `f64` result columns
/// (distance, squared distance, `t`) with non-temporal stores: at 8 MB a
/// column and up, the results would push the inputs (and everything else)
/// out of the cache, and skipping the read of each destination line before
/// writing it saves memory traffic. One segment, 10M points, one thread:
/// 2.90 → 2.54 ns a query (two threads: 1.59 → 1.32).
const STREAM_MIN: usize = 1 << 20;

/// `dst[j] = src[j]` in the caller's type; for `f64` with `stream`, by
/// non-temporal stores.
#[inline(always)]
fn put_col<T: Scalar>(dst: &mut [T], src: &[f64], stream: bool) {
    #[cfg(target_arch = "x86_64")]
    if stream && core::any::TypeId::of::<T>() == core::any::TypeId::of::<f64>() {
        // SAFETY: `T` is `f64`.
        let dst = unsafe { core::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<f64>(), dst.len()) };
        stream_f64(dst, src);
        return;
    }
    let _ = stream;
    for (x, v) in dst.iter_mut().zip(src) {
        *x = T::from_f64(*v);
    }
}

/// `dst.copy_from_slice(src)` by 16-byte non-temporal stores (SSE2, so any
/// x86-64; the callers fence once the call's blocks are done).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stream_f64(dst: &mut [f64], src: &[f64]) {
    use core::arch::x86_64::{_mm_loadu_pd, _mm_stream_pd};
    let n = dst.len().min(src.len());
    let mut j = 0;
    if n > 0 && !(dst.as_ptr() as usize).is_multiple_of(16) {
        dst[0] = src[0];
        j = 1;
    }
    while j + 2 <= n {
        // SAFETY: SSE2 is part of x86-64; `dst[j..j + 2]` is in bounds and
        // 16-byte aligned (an `f64` slice is 8-byte aligned, and `j` moved
        // it onto 16), `src[j..j + 2]` in bounds.
        unsafe { _mm_stream_pd(dst.as_mut_ptr().add(j), _mm_loadu_pd(src.as_ptr().add(j))) };
        j += 2;
    }
    if j < n {
        dst[j] = src[j];
    }
}

#[inline(always)]
fn region_code(r: Region) -> f64 {
    match r {
        Region::Start => 0.0,
        Region::Interior => 1.0,
        Region::End => 2.0,
        Region::Undefined => 3.0,
    }
}

// ------------------------------------------------------------ accurate tier

fn accurate_block<const D: usize, const LINE: bool, const FULL: bool>(blk: &mut Block<D>, m: usize, isa: Isa) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `run` resolved `isa` to one this CPU supports.
        Isa::Avx512 => unsafe { accurate_avx512::<D, LINE, FULL>(blk, m) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { accurate_avx2::<D, LINE, FULL>(blk, m) },
        #[cfg(target_arch = "x86_64")]
        Isa::Sse2 => accurate_shared_or_not::<crate::lanes::Sse2, D, LINE, FULL>(blk, m),
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => accurate_shared_or_not::<crate::lanes::Neon, D, LINE, FULL>(blk, m),
        _ => {
            for j in 0..m {
                let (a, b, p) = blk.query(j);
                blk.put(j, &scalar_accurate::<D, LINE, FULL>(&a, &b, &p));
            }
        }
    }
}

#[inline(always)]
fn scalar_accurate<const D: usize, const LINE: bool, const FULL: bool>(
    a: &[f64; D],
    b: &[f64; D],
    p: &[f64; D],
) -> Raw<D> {
    match (LINE, FULL) {
        (false, true) => kernel::segment(a, b, p),
        (false, false) => kernel::segment_distance(a, b, p),
        (true, true) => kernel::line(a, b, p),
        (true, false) => kernel::line_distance_only(a, b, p),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,popcnt")]
unsafe fn accurate_avx512<const D: usize, const LINE: bool, const FULL: bool>(blk: &mut Block<D>, m: usize) {
    // SAFETY: this function's features include AVX-512 F, VL, DQ and BW, and POPCNT.
    if !LINE && unsafe { one_segment_block::<D, FULL, true>(blk, m) } {
        return;
    }
    // Sixteen lanes, two interleaved chains of eight (`Z16`): pairs 4.7 ->
    // 3.3 G cycles on 200k (3D: 9.5 -> 8.5) against one register a vector.
    accurate_shared_or_not::<crate::lanes::Avx512, D, LINE, FULL>(blk, m);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn accurate_avx2<const D: usize, const LINE: bool, const FULL: bool>(blk: &mut Block<D>, m: usize) {
    // SAFETY: this function's features include AVX2 and FMA.
    if !LINE && unsafe { one_segment_block::<D, FULL, false>(blk, m) } {
        return;
    }
    accurate_shared_or_not::<crate::lanes::Avx2, D, LINE, FULL>(blk, m);
}

/// One segment: the branch-free sweep ([`crate::sweep`], AVX-512) or the
/// routed pass ([`crate::routed`], AVX2), if the segment allows it
/// (`false`: the caller runs the lane kernel).
///
/// # Safety
///
/// AVX2 and FMA, and AVX-512 F, VL, DQ and BW if `AVX512` (inlined into
/// the `#[target_feature]` callers above).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn one_segment_block<const D: usize, const FULL: bool, const AVX512: bool>(
    blk: &mut Block<D>,
    m: usize,
) -> bool {
    let (Some(a), Some(b)) = (blk.fixed_a, blk.fixed_b) else { return false };
    let Some(seg) = batch_kernel::Shared::<crate::lanes::Avx2, D>::new(&a, &b) else { return false };
    let wants = crate::routed::Wants { d2: blk.wants_d2, code: blk.wants_code };
    // Taken, so that the caller sees the column was written (see `blocks`).
    let direct = if AVX512 { blk.direct.take() } else { None };
    let out = crate::routed::Outs {
        d: &mut blk.d,
        d2: &mut blk.d2,
        code: &mut blk.code,
        t: &mut blk.t,
        q: &mut blk.q,
        direct,
    };
    // SAFETY: as this function.
    let rest = unsafe {
        if AVX512 {
            crate::sweep::run_avx512::<D, FULL>(&seg, &blk.p, m, out, wants)
        } else {
            crate::routed::run_avx2::<D, FULL>(&seg, &mut blk.routed, &blk.p, m, out, wants)
        }
    };
    if direct.is_some() && rest.iter().any(|&w| w != 0) {
        // The non-temporal stores first: the fixes below go to the same
        // lines.
        // SAFETY: SSE is part of x86-64.
        unsafe { core::arch::x86_64::_mm_sfence() };
    }
    for (w, mut bits) in rest.into_iter().enumerate() {
        while bits != 0 {
            let j = w * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (a, b, p) = blk.query(j);
            let r = scalar_accurate::<D, false, FULL>(&a, &b, &p);
            match direct {
                // SAFETY: `j < BLOCK`, within the column (see `Direct`).
                Some(dc) => unsafe { dc.at.add(j).write(if dc.d2 { r.d2 } else { r.d }) },
                None => blk.put(j, &r),
            }
        }
    }
    true
}

/// One segment for the whole block (`SHARED`) or one per query: as a
/// constant, so that with one segment everything that depends on it alone
/// (b − a, |ab|², its window test, 1/L) is hoisted out of the lane loop.
#[inline(always)]
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
fn accurate_shared_or_not<V: Lanes, const D: usize, const LINE: bool, const FULL: bool>(blk: &mut Block<D>, m: usize) {
    if blk.fixed_a.is_some() && blk.fixed_b.is_some() {
        accurate_lanes::<V, D, LINE, FULL, true>(blk, m);
    } else {
        accurate_lanes::<V, D, LINE, FULL, false>(blk, m);
    }
}

/// The lane kernel over a block; flagged lanes are redone by the scalar
/// kernel, which is what makes every lane the scalar kernel's bits.
#[inline(always)]
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
fn accurate_lanes<V: Lanes, const D: usize, const LINE: bool, const FULL: bool, const SHARED: bool>(
    blk: &mut Block<D>,
    m: usize,
) {
    // Loops, not closures, between the lanes and the kernel (see
    // `lanes::Z8`).
    let (fa, fb) = (blk.fixed_a.unwrap_or([0.0; D]), blk.fixed_b.unwrap_or([0.0; D]));
    let (mut shared_a, mut shared_b) = ([V::splat(0.0); D], [V::splat(0.0); D]);
    for k in 0..D {
        shared_a[k] = V::splat(fa[k]);
        shared_b[k] = V::splat(fb[k]);
    }
    let mut j = 0;
    while j < m {
        let (mut a, mut b, mut p) = (shared_a, shared_b, [V::splat(0.0); D]);
        for k in 0..D {
            if !SHARED {
                a[k] = V::load(&blk.a[k][j..]);
                b[k] = V::load(&blk.b[k][j..]);
            }
            p[k] = V::load(&blk.p[k][j..]);
        }
        let r = batch_kernel::accurate::<V, D, LINE, FULL>(&a, &b, &p);
        r.d.store(&mut blk.d[j..]);
        r.d2.store(&mut blk.d2[j..]);
        r.region.store(&mut blk.code[j..]);
        if FULL {
            r.t.store(&mut blk.t[j..]);
            for k in 0..D {
                r.q[k].store(&mut blk.q[k][j..]);
            }
        }
        let mut bits = V::bits(r.fallback);
        while bits != 0 {
            let l = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if j + l < m {
                let (a, b, p) = blk.query(j + l);
                blk.put(j + l, &scalar_accurate::<D, LINE, FULL>(&a, &b, &p));
            }
        }
        j += V::N;
    }
}

// ---------------------------------------------------------------- fast tier

fn fast_block<T: Scalar, const D: usize>(blk: &mut Block<D>, m: usize, isa: Isa, line: bool) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `run` resolved `isa` to one this CPU supports.
        Isa::Avx512 => unsafe { fast_avx512::<T, D>(blk, m, line) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { fast_avx2::<T, D>(blk, m, line) },
        _ => fast_loop::<T, D>(blk, m, line),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn fast_avx512<T: Scalar, const D: usize>(blk: &mut Block<D>, m: usize, line: bool) {
    fast_loop::<T, D>(blk, m, line);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fast_avx2<T: Scalar, const D: usize>(blk: &mut Block<D>, m: usize, line: bool) {
    fast_loop::<T, D>(blk, m, line);
}

/// The segments of a direct fast loop: one for all points, or one per point.
#[derive(Clone, Copy)]
enum Ends<'a, T, const D: usize> {
    One([T; D], [T; D]),
    Many(&'a [[T; D]], &'a [[T; D]]),
}

/// The fast tier's common cases, rows in and distances out: straight from the
/// caller's slices into the caller's outputs, vectorised for the instruction
/// set (no block copies).
fn fast_direct<T: Scalar, const D: usize>(
    ends: Ends<'_, T, D>,
    p: &[[T; D]],
    line: bool,
    out: Outputs<'_, T, D>,
    isa: Isa,
) {
    let (d, d2) = (out.distance, out.distance_squared);
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `run` resolved `isa` to one this CPU supports.
        Isa::Avx512 => unsafe { fast_direct_avx512(ends, p, line, d, d2) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { fast_direct_avx2(ends, p, line, d, d2) },
        _ => fast_direct_loop(ends, p, line, d, d2),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn fast_direct_avx512<T: Scalar, const D: usize>(
    ends: Ends<'_, T, D>,
    p: &[[T; D]],
    line: bool,
    d: Option<&mut [T]>,
    d2: Option<&mut [T]>,
) {
    fast_direct_loop(ends, p, line, d, d2);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fast_direct_avx2<T: Scalar, const D: usize>(
    ends: Ends<'_, T, D>,
    p: &[[T; D]],
    line: bool,
    d: Option<&mut [T]>,
    d2: Option<&mut [T]>,
) {
    fast_direct_loop(ends, p, line, d, d2);
}

#[inline(always)]
fn fast_direct_loop<T: Scalar, const D: usize>(
    ends: Ends<'_, T, D>,
    p: &[[T; D]],
    line: bool,
    d: Option<&mut [T]>,
    d2: Option<&mut [T]>,
) {
    // Segment or line as a constant, so no loop carries the choice.
    if line {
        fast_direct_loop_of::<T, D, true>(ends, p, d, d2);
    } else {
        fast_direct_loop_of::<T, D, false>(ends, p, d, d2);
    }
}

#[inline(always)]
fn fast_direct_loop_of<T: Scalar, const D: usize, const LINE: bool>(
    ends: Ends<'_, T, D>,
    p: &[[T; D]],
    mut d: Option<&mut [T]>,
    mut d2: Option<&mut [T]>,
) {
    let line = LINE;
    let sq = |a: &[T; D], b: &[T; D], pt: &[T; D]| {
        if LINE {
            fast::line_unchecked(a, b, pt).2
        } else {
            fast::segment_unchecked(a, b, pt).2
        }
    };
    // One pass over the points, writing every requested output in it (a
    // second pass over the outputs costs as much memory traffic as the
    // kernel), and noting whether any d² came out non-finite: inside the
    // loop for one segment; for pairs in a scan after it, since the flag kept
    // the four-way loop from vectorising (5.7 against 2.4 ns per query).
    let mut finite = true;
    match (&mut d, &mut d2, ends) {
        (Some(o), None, Ends::One(a, b)) => {
            for (x, pt) in o.iter_mut().zip(p) {
                let v = sq(&a, &b, pt);
                finite &= v.is_finite();
                *x = v.sqrt();
            }
        }
        (None, Some(o), Ends::One(a, b)) => {
            for (x, pt) in o.iter_mut().zip(p) {
                let v = sq(&a, &b, pt);
                finite &= v.is_finite();
                *x = v;
            }
        }
        (Some(o), Some(o2), Ends::One(a, b)) => {
            for ((x, y), pt) in o.iter_mut().zip(o2.iter_mut()).zip(p) {
                let v = sq(&a, &b, pt);
                finite &= v.is_finite();
                *x = v.sqrt();
                *y = v;
            }
        }
        (Some(o), None, Ends::Many(a, b)) => {
            for (((x, pt), a), b) in o.iter_mut().zip(p).zip(a).zip(b) {
                *x = sq(a, b, pt).sqrt();
            }
            finite = o.iter().all(|x| x.is_finite());
        }
        (None, Some(o), Ends::Many(a, b)) => {
            for (((x, pt), a), b) in o.iter_mut().zip(p).zip(a).zip(b) {
                *x = sq(a, b, pt);
            }
            finite = o.iter().all(|x| x.is_finite());
        }
        (Some(o), Some(o2), Ends::Many(a, b)) => {
            for ((((x, y), pt), a), b) in o.iter_mut().zip(o2.iter_mut()).zip(p).zip(a).zip(b) {
                let v = sq(a, b, pt);
                *x = v.sqrt();
                *y = v;
            }
            finite = o2.iter().all(|x| x.is_finite());
        }
        (None, None, _) => return,
    }
    if finite {
        return;
    }
    // Non-finite results: redo with the checked scalar kernel (NaN input
    // must give NaN, exactly as the scalar API does).
    for (i, pt) in p.iter().enumerate() {
        let (a, b) = match ends {
            Ends::One(a, b) => (a, b),
            Ends::Many(a, b) => (a[i], b[i]),
        };
        let v = sq(&a, &b, pt);
        if !v.is_finite() {
            let v = if line { fast::line(&a, &b, pt).2 } else { fast::segment(&a, &b, pt).2 };
            if let Some(o) = d.as_deref_mut() {
                o[i] = v.sqrt();
            }
            if let Some(o) = d2.as_deref_mut() {
                o[i] = v;
            }
        }
    }
}

/// The fast kernel over a block, as a loop the compiler vectorises for the
/// enclosing target features (no FMA is ever used, so every instruction set
/// gives the same bits). Non-finite d² is re-checked afterwards with the
/// scalar kernel, exactly as the scalar API does inline.
#[inline(always)]
fn fast_loop<T: Scalar, const D: usize>(blk: &mut Block<D>, m: usize, line: bool) {
    if line {
        fast_loop_of::<T, D, true>(blk, m);
    } else {
        fast_loop_of::<T, D, false>(blk, m);
    }
}

#[inline(always)]
fn fast_loop_of<T: Scalar, const D: usize, const LINE: bool>(blk: &mut Block<D>, m: usize) {
    for j in 0..m {
        let (a, b, p) = blk.query(j);
        let (a, b, p) = (a.map(T::from_f64), b.map(T::from_f64), p.map(T::from_f64));
        let (q, t, d2) = if LINE {
            fast::line_unchecked(&a, &b, &p)
        } else {
            let (q, t, d2, _) = fast::segment_unchecked(&a, &b, &p);
            (q, t, d2)
        };
        // The region as arithmetic, not as the scalar kernel's if-chain
        // (which compiles to a branch): t = 0 → 0, 0 < t < 1 → 1, t = 1 → 2;
        // on a line, 1 (0 on a degenerate one).
        let code = if LINE {
            let mut same = true;
            for k in 0..D {
                same &= a[k] == b[k];
            }
            1.0 - (same as u8 as f64)
        } else {
            (t > T::ZERO) as u8 as f64 + (t >= T::ONE) as u8 as f64
        };
        blk.d[j] = d2.sqrt().to_f64();
        blk.d2[j] = d2.to_f64();
        blk.t[j] = t.to_f64();
        for (col, x) in blk.q.iter_mut().zip(q) {
            col[j] = x.to_f64();
        }
        blk.code[j] = code;
    }
    for j in 0..m {
        if !blk.d2[j].is_finite() {
            let (a, b, p) = blk.query(j);
            let (a, b, p) = (a.map(T::from_f64), b.map(T::from_f64), p.map(T::from_f64));
            let (q, t, d2, region) = if LINE {
                let (q, t, d2) = fast::line(&a, &b, &p);
                let region = if d2.to_f64().is_nan() {
                    Region::Undefined
                } else if a == b {
                    Region::Start
                } else {
                    Region::Interior
                };
                (q, t, d2, region)
            } else {
                fast::segment(&a, &b, &p)
            };
            let raw = Raw { point: q.map(T::to_f64), t: t.to_f64(), d: d2.sqrt().to_f64(), d2: d2.to_f64(), region };
            blk.put(j, &raw);
        }
    }
}
