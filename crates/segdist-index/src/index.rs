//! The static index and its single-point queries.
//!
//! # How a query stays exact
//!
//! The tree is searched with the *fast* kernel and a certified error bound,
//! and only the few segments that could still be (or tie with) the answer are
//! evaluated with the *accurate* kernel:
//!
//! - For each segment met, the fast distance `d̃` and its bound `e` give
//!   `d̃ − e <= d <= d̃ + e` for the exact distance `d` (the fast tier's stated
//!   bound `16·u·(M + d)`, taken twice over).
//! - `bound` is an upper bound on the exact distance of the answer (the k-th
//!   smallest `d̃ + e`, or the caller's limit). A box or a segment whose lower
//!   bound exceeds `bound` (plus a relative slack covering one rounding of the
//!   accurate result) can neither beat nor tie the answer, so is skipped.
//! - The rest, usually one or two segments, are evaluated with
//!   [`segdist::Segment::closest_point`] and ranked by `(distance, id)`.
//!
//! So the answer is bit for bit the one a brute-force scan with the accurate
//! kernel gives, at the cost of a fast-kernel scan of a few leaves.

use segdist::{Projection, Segment};

use crate::hilbert::Curve;

/// Segments per leaf and children per node. Eight `f64` lanes fill one
/// AVX-512 register or two AVX2 ones.
pub(crate) const B: usize = 8;

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;
/// The fast tier's bound is `12·u·(M + d)` in 2D and `16·u·(M + d)` in 3D;
/// the filter uses twice the larger.
const K_FAST: f64 = 32.0 * U;
/// The group scan's bound (see `Index::nearest_in_group`).
const K_GROUP: f64 = 64.0 * U;
/// Relative slack on every comparison with `bound`: covers the rounding of
/// box distances (a few `u`), of the accurate result (one ulp) and of the
/// bound arithmetic itself, with room to spare.
const SLACK: f64 = 1.0 / (1u64 << 46) as f64;
/// Absolute floor under squared box distances, for their underflow.
const TINY: f64 = f64::MIN_POSITIVE * 16.0;
/// Absolute floor under the fast distance's error bound. The stated bound
/// assumes no underflow; below it the fast kernel's `|b − a|²` and `d²` lose
/// their relative accuracy, which moves its result by at most `|b − a|`
/// (< 2^-484 when `|b − a|²` underflows) plus `√(3·2^-1074)` (< 2^-536) from
/// `d²` itself. Data at scales below ~1e-130 therefore sees many candidates:
/// slower, never wrong.
const E_FLOOR: f64 =
    1.0 / (1u128 << 115) as f64 / (1u128 << 115) as f64 / (1u128 << 115) as f64 / (1u128 << 115) as f64; // 2^-460
/// Beyond this coordinate magnitude the fast kernel may overflow, so its
/// results are not trusted and every segment met is a candidate.
const FAST_RANGE: f64 = 1e150;

/// Compile-time check that `D` is 2 or 3.
pub(crate) struct Dim<const D: usize>;

impl<const D: usize> Dim<D> {
    pub(crate) const CHECK: () = assert!(D == 2 || D == 3, "segdist-index supports 2D and 3D only");
}

/// A static index over the segments of many features (segments, polylines,
/// multi-polylines) for exact nearest-segment, k-nearest and radius queries.
///
/// Built with [`IndexBuilder`](crate::IndexBuilder) or the shortcuts
/// [`from_segments`](Self::from_segments) and
/// [`from_polylines`](Self::from_polylines). Every distance is that of
/// segdist's accurate kernel (faithfully rounded), so results are exactly
/// those of a brute-force scan: same feature, same bits.
///
/// **Ties** between exactly equal distances go to the lowest id, ordering by
/// `(feature, part, segment)`.
///
/// **Memory**: about 85 bytes per segment in 2D and 119 in 3D for
/// polylines (both endpoints' coordinates twice: in columns for the search,
/// with `1/|b − a|²`, and in one record with a 4-byte segment number and a
/// 4-byte feature id for reading answers; the tree of boxes), plus 4 bytes
/// per part and per feature (so 93 and 127 for an index of plain
/// segments); see [`memory_bytes`](Self::memory_bytes). Ten million road
/// segments take about 850 MB. A batch query uses, beyond its answers,
/// about 44 bytes a 2D point of internal buffers (52 in 3D, 16 more with
/// runner-up bounds), which stay with the calling thread for its next
/// batch, up to 256 MB (see [`nearest_many`](Self::nearest_many)).
///
/// # Example
///
/// ```
/// use segdist_index::Index;
///
/// let index = Index::<2>::from_segments(&[
///     [[0.0, 0.0], [10.0, 0.0]],
///     [[0.0, 5.0], [10.0, 5.0]],
/// ])?;
/// let hit = index.nearest([3.0, 1.0]).unwrap();
/// assert_eq!((hit.feature, hit.point, hit.distance, hit.t), (0, [3.0, 0.0], 1.0, 0.3));
///
/// let two = index.k_nearest([3.0, 4.0], 2);
/// assert_eq!(two.iter().map(|h| h.feature).collect::<Vec<_>>(), [1, 0]);
/// # Ok::<(), segdist_index::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Index<const D: usize> {
    /// The segments in tree order, eight to a leaf, each leaf's coordinates
    /// in columns and contiguous (padding lanes at the end of the last).
    leaves: Vec<Block<D>>,
    /// `1/|b − a|²` of each leaf lane's segment (0 for zero length or
    /// padding), as [`Group::add`] computes it: the gather copies it.
    inv: Vec<[f64; B]>,
    /// Levels of node boxes, leaves (boxes over segments) first, the root's
    /// level (one node) last; empty for an empty index.
    levels: Vec<Level<D>>,
    /// Every segment in tree order, ends and ids in one record.
    segs: Vec<Seg<D>>,
    topology: Topology,
    curve: Curve<D>,
}

/// A segment's ends and ids in one record (in the leaves its coordinates
/// lie in 2·D columns, a cache line each): what is read of an answer. A
/// batch reads them in input order, so at random: one or two cache misses
/// an answer where the columns cost 2·D + 2 (1M points, 100k segments, one
/// thread: together with keeping only the segment during the search, 140
/// → 110 ns a query).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seg<const D: usize> {
    pub(crate) a: [f64; D],
    pub(crate) b: [f64; D],
    /// The feature, [`MULTI_PART`] set for features of several parts (the
    /// rest need no lookup).
    pub(crate) feature: u32,
    /// The segment's number within its feature, counting across parts.
    /// `(feature, local)` orders segments as `(feature, part, segment)` do:
    /// the id of the tie rule.
    pub(crate) local: u32,
}

impl<const D: usize> Seg<D> {
    /// `(feature, local)` as one number: the id of the tie rule.
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        u64::from(self.feature & !MULTI_PART) << 32 | u64::from(self.local)
    }
}

/// A 2D index.
pub type Index2 = Index<2>;
/// A 3D index.
pub type Index3 = Index<3>;

/// Eight lanes of two points each, in columns: a leaf's segments (`lo` the
/// start vertices, `hi` the ends) or the boxes of a node's eight children
/// (`lo`, `hi` corners). Contiguous, so that visiting a node or a leaf
/// reads a few adjacent cache lines instead of one per column of a level.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Block<const D: usize> {
    pub(crate) lo: [[f64; B]; D],
    pub(crate) hi: [[f64; B]; D],
}

impl<const D: usize> Block<D> {
    /// Which of the eight lanes meet the box `[qlo, qhi]` (a bit each): as
    /// boxes (`lo`, `hi` corners), or (`segments`) as the boxes of the
    /// segments from `lo` to `hi`. `AVX512`: with AVX-512 intrinsics, which
    /// the caller must be compiled for (LLVM made two lanes at a time and
    /// scalar compares of the portable loops).
    #[inline(always)]
    pub(crate) fn meets<const AVX512: bool>(&self, qlo: &[f64; D], qhi: &[f64; D], segments: bool) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if AVX512 {
            // SAFETY: the caller runs this only where the CPU has AVX-512F.
            return unsafe { self.meets_avx512(qlo, qhi, segments) };
        }
        let mut mask = 0u32;
        for c in 0..B {
            let mut meets = true;
            for k in 0..D {
                let (x, y) = (self.lo[k][c], self.hi[k][c]);
                let (x, y) = if segments { (fmin(x, y), fmax(x, y)) } else { (x, y) };
                // Padding boxes (lo = +inf, hi = -inf) never meet.
                meets &= (x <= qhi[k]) & (y >= qlo[k]);
            }
            mask |= u32::from(meets) << c;
        }
        mask
    }

    /// [`meets`](Self::meets) with AVX-512F.
    ///
    /// # Safety
    /// The CPU must have AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn meets_avx512(&self, qlo: &[f64; D], qhi: &[f64; D], segments: bool) -> u32 {
        use std::arch::x86_64::*;
        // The compares side by side, then combined (a chain of masked
        // compares waited on each other: a tree walk is a chain of these).
        let mut mask: __mmask8 = 0xff;
        for k in 0..D {
            // SAFETY: each column holds B = 8 numbers.
            let (mut x, mut y) =
                unsafe { (_mm512_loadu_pd(self.lo[k].as_ptr()), _mm512_loadu_pd(self.hi[k].as_ptr())) };
            if segments {
                (x, y) = (_mm512_min_pd(x, y), _mm512_max_pd(x, y));
            }
            mask &= _mm512_cmp_pd_mask::<_CMP_LE_OQ>(x, _mm512_set1_pd(qhi[k]))
                & _mm512_cmp_pd_mask::<_CMP_GE_OQ>(y, _mm512_set1_pd(qlo[k]));
        }
        u32::from(mask)
    }

    /// Empty boxes (`lo = +inf`, `hi = -inf`) that no query can enter.
    pub(crate) const EMPTY: Self = Block { lo: [[f64::INFINITY; B]; D], hi: [[f64::NEG_INFINITY; B]; D] };
    /// Padding segments (at the origin; their lanes are never read).
    pub(crate) const ZERO: Self = Block { lo: [[0.0; B]; D], hi: [[0.0; B]; D] };
}

/// One level of boxes, in blocks of eight (the children of one node of the
/// level above), padded with empty boxes.
#[derive(Clone, Debug)]
pub(crate) struct Level<const D: usize> {
    pub(crate) blocks: Vec<Block<D>>,
}

impl<const D: usize> Level<D> {
    /// Room for `len` boxes, all empty.
    pub(crate) fn empty(len: usize) -> Self {
        Level { blocks: vec![Block::EMPTY; len.div_ceil(B)] }
    }

    pub(crate) fn lo(&self, k: usize, j: usize) -> f64 {
        self.blocks[j / B].lo[k][j % B]
    }

    pub(crate) fn hi(&self, k: usize, j: usize) -> f64 {
        self.blocks[j / B].hi[k][j % B]
    }

    pub(crate) fn set(&mut self, k: usize, j: usize, lo: f64, hi: f64) {
        let b = &mut self.blocks[j / B];
        b.lo[k][j % B] = lo;
        b.hi[k][j % B] = hi;
    }
}

/// Set in [`Seg::feature`] for a feature of several parts.
pub(crate) const MULTI_PART: u32 = 1 << 31;

/// Where the parts of the features start: the part and segment of a
/// feature's segment, from its number within the feature.
#[derive(Clone, Debug)]
pub(crate) struct Topology {
    /// First vertex of every part, then the number of vertices.
    pub(crate) part_start: Vec<u32>,
    /// First part of every feature, then the number of parts.
    pub(crate) feature_start: Vec<u32>,
}

impl Topology {
    /// `(feature, part within feature, segment within part)` of a segment
    /// known by its flagged feature and its number within the feature.
    #[inline]
    fn locate(&self, feature: u32, local: u32) -> (usize, usize, usize) {
        let f = (feature & !MULTI_PART) as usize;
        if feature & MULTI_PART == 0 {
            return (f, 0, local as usize);
        }
        // Part q's first segment has global number part_start[q] − q.
        let (first, end) = (self.feature_start[f] as usize, self.feature_start[f + 1] as usize);
        let seg0 = |q: usize| self.part_start[q] as usize - q;
        let g = seg0(first) + local as usize;
        // The last part of the feature starting at or before g.
        let (mut q, mut hi) = (first, end);
        while hi - q > 1 {
            let mid = (q + hi) / 2;
            if seg0(mid) <= g {
                q = mid;
            } else {
                hi = mid;
            }
        }
        (f, q - first, g - seg0(q))
    }
}

/// A segment found by a query: which one, and the accurate projection of
/// the query point onto it.
///
/// ```
/// use segdist_index::Index;
///
/// let index = Index::<2>::from_polylines(&[vec![[0.0, 0.0], [4.0, 0.0], [4.0, 4.0]]])?;
/// let hit = index.nearest([5.0, 1.0]).unwrap();
/// assert_eq!((hit.feature, hit.part, hit.segment), (0, 0, 1));
/// assert_eq!((hit.point, hit.t, hit.distance, hit.distance_squared), ([4.0, 1.0], 0.25, 1.0, 1.0));
/// # Ok::<(), segdist_index::BuildError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit<const D: usize> {
    /// The feature's id (push order).
    pub feature: usize,
    /// The part within the feature (0 for segments and polylines).
    pub part: usize,
    /// The segment within the part: from vertex `segment` to `segment + 1`.
    pub segment: usize,
    /// Where the closest point lies on the segment, in `[0, 1]`.
    pub t: f64,
    /// The closest point.
    pub point: [f64; D],
    /// The distance, faithfully rounded.
    pub distance: f64,
    /// The squared distance, faithfully rounded.
    pub distance_squared: f64,
}

/// What a [`Hit`] carries of the accurate projection of a query onto a
/// segment: not the region, which no answer of the index has (the batch
/// kernel left without it: 0.973 of a batch's time, 1M points, one
/// thread).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Proj<const D: usize> {
    pub(crate) point: [f64; D],
    pub(crate) t: f64,
    pub(crate) distance: f64,
    pub(crate) distance_squared: f64,
}

impl<const D: usize> From<Projection<f64, D>> for Proj<D> {
    fn from(p: Projection<f64, D>) -> Self {
        Proj { point: p.point, t: p.t, distance: p.distance, distance_squared: p.distance_squared }
    }
}

/// A candidate found by the search: its slot in tree order and its
/// accurate projection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Found<const D: usize> {
    pub(crate) slot: u32,
    /// `(feature, local)` as one number: the id of the tie rule.
    pub(crate) id: u64,
    pub(crate) proj: Proj<D>,
    /// A lower bound on the distance from the query to every other segment
    /// (`0` where none was established).
    pub(crate) runner_up: f64,
}

impl<const D: usize> Found<D> {
    /// The ranking of results: distance, then id.
    #[inline]
    fn before(&self, other: &Self) -> bool {
        (self.proj.distance, self.id) < (other.proj.distance, other.id)
    }
}

/// Room on the stack of nodes to visit: at most `B` per level of a tree
/// of at most 2^32 segments (11 levels of 8), with room to spare.
const STACK: usize = 16 * B;

/// Reusable buffers of one search.
pub(crate) struct Scratch {
    /// `(level, node, squared box distance)` still to visit; the live part
    /// is `..top`, so that pushes can be written without a branch.
    stack: Box<[(u32, u32, f64); STACK]>,
    top: usize,
    /// `(lower bound, slot)` of segments that may be in the answer.
    cands: Vec<(f64, u32)>,
    /// The smallest upper bounds seen, ascending (at most k); in a group
    /// search, the smallest scanned d² (see `kth_least`).
    uppers: Vec<f64>,
    /// Buffers of the batch evaluation (an [`Evals`] of the index's
    /// dimension; `Any` since one thread's scratch serves both).
    evals: Option<Box<dyn std::any::Any>>,
}

/// A scratch's evaluation buffers for dimension `D` (see `Scratch::evals`).
fn evals_of<const D: usize>(evals: &mut Option<Box<dyn std::any::Any>>) -> &mut Evals<D> {
    if !evals.as_ref().is_some_and(|e| e.is::<Evals<D>>()) {
        *evals = Some(Box::new(Evals::<D>::default()));
    }
    evals.as_mut().and_then(|e| e.downcast_mut()).expect("set just above")
}

/// Candidates in the batch kernel's layout, and its outputs.
#[derive(Default)]
struct Evals<const D: usize> {
    a: Vec<[f64; D]>,
    b: Vec<[f64; D]>,
    p: Vec<[f64; D]>,
    out: segdist::batch::Projections<f64, D>,
    /// The ranking of a k-nearest or radius search: `(distance, id, j)`
    /// of the evaluated pairs, the distance by its bits (distances are
    /// never negative nor NaN, so the bits order as the numbers: integer
    /// compares), then the answers in order, kept between queries (no
    /// allocation per query).
    ranks: Vec<(u64, u64, u32)>,
    found: Vec<Found<D>>,
}

impl<const D: usize> Evals<D> {
    /// The accurate projection of `p` onto every candidate, into `out`.
    fn project(&mut self, index: &Index<D>, p: &[f64; D], cands: &[(f64, u32)]) {
        self.clear();
        for &(_, slot) in cands {
            self.push(index, p, slot);
        }
        self.run();
    }

    fn clear(&mut self) {
        self.a.clear();
        self.b.clear();
        self.p.clear();
    }

    /// One more pair to project: `p` onto the segment in `slot`.
    fn push(&mut self, index: &Index<D>, p: &[f64; D], slot: u32) {
        let (a, b) = index.ends(slot as usize);
        self.push_pair(a, b, p);
    }

    /// One more pair to project: `p` onto the segment from `a` to `b`.
    fn push_pair(&mut self, a: [f64; D], b: [f64; D], p: &[f64; D]) {
        self.a.push(a);
        self.b.push(b);
        self.p.push(*p);
    }

    /// The accurate projection of every pair pushed, into `out`.
    fn run(&mut self) {
        let n = self.p.len();
        let r = &mut self.out;
        r.distance.resize(n, 0.0);
        r.distance_squared.resize(n, 0.0);
        r.t.resize(n, 0.0);
        r.point.resize(n, [0.0; D]);
        let out = segdist::batch::Outputs {
            distance: Some(&mut r.distance[..n]),
            distance_squared: Some(&mut r.distance_squared[..n]),
            t: Some(&mut r.t[..n]),
            point: Some(&mut r.point[..n]),
            region: None,
        };
        let opts = segdist::batch::Options { threads: Some(1), ..Default::default() };
        // Same lengths, one thread, the CPU's own instruction set: nothing
        // here can make the call fail.
        segdist::batch::pairs(&self.a[..], &self.b[..], &self.p[..], out, &opts).expect("a valid batch");
    }

    /// The `j`-th projection of the last run.
    fn get(&self, j: usize) -> Proj<D> {
        let r = &self.out;
        Proj { point: r.point[j], t: r.t[j], distance: r.distance[j], distance_squared: r.distance_squared[j] }
    }
}

/// The answers of a nearest batch, made in input order from each point's
/// segment (all the search keeps): [`RESOLVE`] points at a time go through
/// the batch kernel (the scalar kernel's bits at a fraction of its time:
/// one projection is a long chain of dependent operations, the batch
/// kernel runs several side by side), then each becomes a [`Found`].
#[derive(Default)]
pub(crate) struct Resolver<const D: usize> {
    evals: Evals<D>,
}

/// Points a [`Resolver`] evaluates at once: enough to keep the batch
/// kernel's lanes busy, few enough to stay in the first-level cache.
const RESOLVE: usize = 128;

/// How far ahead the resolver asks for a segment.
const AHEAD: usize = 64;

/// No segment: the search found nothing for the point (see [`Resolver`]).
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// What a [`Resolver`] reads: the points, the segment the search chose
/// for each (or [`NO_SLOT`]), the runner-up bounds (empty: none), the
/// distance limit and the caller's map.
pub(crate) struct Chosen<'a, const D: usize, M> {
    pub(crate) index: &'a Index<D>,
    pub(crate) points: &'a [[f64; D]],
    pub(crate) slots: &'a [u32],
    pub(crate) runner_up: &'a [f64],
    pub(crate) limit: f64,
    pub(crate) map: &'a M,
}

impl<const D: usize> Resolver<D> {
    /// The answers for points `range`, in order, handed to `put`: each
    /// point's segment's accurate projection, mapped, or `None` where there
    /// is none or it lies beyond the limit.
    pub(crate) fn resolve<R, M: Fn(Found<D>) -> R>(
        &mut self,
        c: &Chosen<'_, D, M>,
        range: std::ops::Range<usize>,
        mut put: impl FnMut(Option<R>),
    ) {
        let n = range.end.min(c.points.len());
        let mut i = range.start;
        while i < n {
            let end = (i + RESOLVE).min(n);
            self.evals.clear();
            for j in i..end {
                // A segment further on asked for now: in input order they
                // lie anywhere in the index.
                if let Some(&ahead) = c.slots.get(j + AHEAD) {
                    c.index.prefetch_segment(ahead);
                }
                if let Some(s) = c.index.segs.get(c.slots[j] as usize) {
                    self.evals.push_pair(s.a, s.b, &c.points[j]);
                }
            }
            self.evals.run();
            let mut k = 0;
            for j in i..end {
                let slot = c.slots[j];
                let Some(s) = c.index.segs.get(slot as usize) else {
                    put(None);
                    continue;
                };
                let runner_up = c.runner_up.get(j).copied().unwrap_or(0.0);
                let f = Found { slot, id: s.id(), proj: self.evals.get(k), runner_up };
                k += 1;
                put((f.proj.distance <= c.limit).then(|| (c.map)(f)));
            }
            i = end;
        }
    }
}

/// A group search's answer for one query (see
/// [`Index::nearest_in_group`]).
pub(crate) enum Pick<const D: usize> {
    /// The answer (`None`: nothing within the limit).
    Done(Option<Found<D>>),
    /// The one candidate left: the answer if its accurate distance is
    /// within the limit; not evaluated yet (see [`Resolver`]).
    Only { slot: u32, runner_up: f64 },
}

thread_local! {
    /// The buffers of single-point queries, kept between calls on a thread.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch buffers (fresh ones if they are in
/// use further up the stack).
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut Scratch::default()),
    })
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch { stack: Box::new([(0, 0, 0.0); STACK]), top: 0, cands: Vec::new(), uppers: Vec::new(), evals: None }
    }
}

/// Eight candidate segments of a group, in columns.
#[derive(Clone, Copy)]
pub(crate) struct Chunk<const D: usize> {
    a: [[f64; B]; D],
    ab: [[f64; B]; D],
    /// `1/|b − a|²` (0 for a zero-length segment).
    inv: [f64; B],
}

/// `1/|b − a|²`, or 0 where that is zero: what the group scan multiplies
/// by to find `t`.
#[inline(always)]
fn inv_length2<const D: usize>(a: &[f64; D], b: &[f64; D]) -> f64 {
    let l: f64 = (0..D).map(|k| (b[k] - a[k]) * (b[k] - a[k])).sum();
    if l > 0.0 {
        1.0 / l
    } else {
        0.0
    }
}

/// Appends a candidate to a group's columns (`chunks`, padded with lanes
/// far away) and its slot to `slots`.
#[inline(always)]
fn push_lane<const D: usize>(
    chunks: &mut Vec<Chunk<D>>,
    slots: &mut Vec<u32>,
    a: [f64; D],
    ab: [f64; D],
    inv: f64,
    slot: u32,
) {
    let c = slots.len() % B;
    if c == 0 {
        chunks.push(Chunk { a: [[f64::MAX; B]; D], ab: [[0.0; B]; D], inv: [0.0; B] });
    }
    let ch = chunks.last_mut().expect("pushed above");
    for k in 0..D {
        ch.a[k][c] = a[k];
        ch.ab[k][c] = ab[k];
    }
    ch.inv[c] = inv;
    slots.push(slot);
}

/// The candidate segments of a group of neighbouring queries, padded to a
/// multiple of `B` with lanes far away (their d² is +inf).
pub(crate) struct Group<const D: usize> {
    /// What [`Index::gather`] found: each leaf with candidates, and which
    /// of its lanes (a bit each). The batch's sift reads the candidates
    /// from the leaves themselves; `chunks` and `slot` are filled from
    /// these only where a search needs them (see [`Index::fill`]).
    picked: Vec<(u32, u32)>,
    /// Whether `chunks` and `slot` hold the candidates.
    filled: bool,
    chunks: Vec<Chunk<D>>,
    slot: Vec<u32>,
    /// Real candidates (before padding).
    count: usize,
    /// At least the largest coordinate magnitude of the candidates and the
    /// group box (after `gather`, that of their leaves' boxes).
    m: f64,
    /// Per-query squared distances.
    d2: Vec<[f64; B]>,
    /// Every segment left out is farther than this from every point of the
    /// group's box (the padding of the box the candidates were gathered
    /// from).
    pub(crate) reach: f64,
}

impl<const D: usize> Default for Group<D> {
    fn default() -> Self {
        Group {
            picked: Vec::new(),
            filled: true,
            chunks: Vec::new(),
            slot: Vec::new(),
            count: 0,
            m: 0.0,
            d2: Vec::new(),
            reach: 0.0,
        }
    }
}

impl<const D: usize> Group<D> {
    /// Adds the segment from `a` to `b` (in `slot`) with what the scan
    /// needs precomputed; returns its largest coordinate magnitude (the
    /// index's coordinates are finite: never NaN).
    #[inline(always)]
    fn add(&mut self, a: [f64; D], b: [f64; D], slot: u32) -> f64 {
        self.add_with(a, b, inv_length2(&a, &b), slot)
    }

    /// [`add`](Self::add) given `inv = inv_length2(a, b)`.
    #[inline(always)]
    fn add_with(&mut self, a: [f64; D], b: [f64; D], inv: f64, slot: u32) -> f64 {
        let ab: [f64; D] = std::array::from_fn(|k| b[k] - a[k]);
        self.push(a, ab, inv, slot);
        (0..D).fold(0.0, |m, k| fmax(fmax(m, a[k].abs()), b[k].abs()))
    }

    fn push(&mut self, a: [f64; D], ab: [f64; D], inv: f64, slot: u32) {
        push_lane(&mut self.chunks, &mut self.slot, a, ab, inv, slot);
    }

    /// Fills `d2` with the scan's squared distances from `p`; returns the
    /// smallest.
    #[inline(always)]
    fn scan(&mut self, p: &[f64; D]) -> f64 {
        self.d2.clear();
        let mut least = [f64::INFINITY; B];
        for ch in &self.chunks {
            let d2 = ch.distances(p);
            for c in 0..B {
                least[c] = fmin(least[c], d2[c]);
            }
            self.d2.push(d2);
        }
        least.iter().fold(f64::INFINITY, |m, &d| fmin(m, d))
    }
}

impl<const D: usize> Group<D> {
    /// The largest over `points` (those with finite coordinates) of the
    /// least squared distance to a candidate, by the scan's arithmetic.
    #[inline(always)]
    fn farthest(&self, points: &[[f64; D]]) -> f64 {
        let mut far = 0.0f64;
        for p in points {
            if !p.iter().all(|c| c.is_finite()) {
                continue;
            }
            let mut least = [f64::INFINITY; B];
            for ch in &self.chunks {
                let d2 = ch.distances(p);
                for c in 0..B {
                    least[c] = fmin(least[c], d2[c]);
                }
            }
            far = fmax(far, least.iter().fold(f64::INFINITY, |m, &d| fmin(m, d)));
        }
        far
    }
}

impl<const D: usize> Chunk<D> {
    /// The fast squared distances from `p` to the chunk's segments.
    #[inline(always)]
    fn distances(&self, p: &[f64; D]) -> [f64; B] {
        let mut dot = [0.0; B];
        for k in 0..D {
            for c in 0..B {
                dot[c] += (p[k] - self.a[k][c]) * self.ab[k][c];
            }
        }
        let mut t = [0.0; B];
        for c in 0..B {
            // NaN (0·inf) clamps to 1: t stays in [0, 1] whatever
            // happens (`clamp` would pass the NaN on).
            #[allow(clippy::manual_clamp)]
            let tc = (dot[c] * self.inv[c]).min(1.0).max(0.0);
            t[c] = tc;
        }
        let mut d2 = [0.0; B];
        for k in 0..D {
            for c in 0..B {
                let v = (p[k] - self.a[k][c]) - t[c] * self.ab[k][c];
                d2[c] += v * v;
            }
        }
        d2
    }
}

impl<const D: usize> Group<D> {
    /// The scan of `p` ([`scan`](Self::scan)), then the cut on its squared
    /// distances that every segment within the answer's bound passes (see
    /// [`Index::nearest_in_group`]): the cut, whether more than one lane
    /// passes, and the first that does (`usize::MAX` if none).
    #[inline(always)]
    fn sift(&mut self, p: &[f64; D], limit: f64) -> (f64, bool, usize) {
        let best = scan_group(self, p);
        self.sift_scanned(best, limit)
    }

    /// [`sift`](Self::sift) after the scan (`d2` filled, `best` its least).
    #[inline(always)]
    fn sift_scanned(&self, best: f64, limit: f64) -> (f64, bool, usize) {
        let cut2 = self.cut2(best, limit);
        // Whether one or more pass, not how many, without a branch (which
        // lane passes is unpredictable; that one does is not; and the
        // default build has no popcount instruction).
        let (mut many, mut first) = (false, usize::MAX);
        for (i, d2) in self.d2.iter().enumerate() {
            let mask = passing(d2, cut2);
            (many, first) = tally(mask, i, many, first);
        }
        (cut2, many, first)
    }

    /// The cut on squared distances for a scan whose least is `best` (see
    /// [`Index::nearest_in_group`]). Padding lanes give +inf; real ones are
    /// finite (no overflow below `FAST_RANGE`, checked by `gather`).
    ///
    /// That cut is `(α·d + β)²` with `d = √best`: the bound
    /// `(d + K·(m + d) + floor)·(1 + S)` through [`cut2`]. Since
    /// `2·α·β·d <= ε·α²·d² + β²/ε` for any `ε > 0`, it is at most
    /// `(1 + ε)·α²·best + (1 + 1/ε)·β²`, used instead: a little looser (with
    /// `ε = 2^-20`, `d²` a relative `1e-6` more, plus a negligible constant),
    /// so that no square root and no chain of roundings stands between a
    /// query's scan and its compares (the batch's longest chain of
    /// dependent operations a query; 1M points, 100k segments, one thread:
    /// medians of seven alternating runs, 96.1 → 92.1 ns a query). Where
    /// `limit` is the smaller, [`cut2`] of it.
    #[inline(always)]
    fn cut2(&self, best: f64, limit: f64) -> f64 {
        let (a, c, limit_cut) = self.cut_terms(limit);
        // (best = +inf, no scanned lane: the limit's cut.)
        fmin(a * best + c, limit_cut)
    }

    /// The numbers of [`cut2`](Self::cut2), which is
    /// `fmin(a·best + c, limit_cut)`: `(a, c, limit_cut)`.
    #[inline(always)]
    fn cut_terms(&self, limit: f64) -> (f64, f64, f64) {
        const EPS: f64 = 1.0 / (1u64 << 20) as f64;
        const S1: f64 = 1.0 + SLACK;
        // α, and everything rounded here with room: (1 + S)² more.
        const ALPHA: f64 = (1.0 + K_GROUP) * S1 * S1 * S1 * (1.0 + 2.0 * K_GROUP);
        const A: f64 = ALPHA * ALPHA * (1.0 + EPS) * S1 * S1;
        // β = (K·m + floor)·(1 + 2K)·(1 + S)·((1 + S)² + 1).
        let beta = (K_GROUP * self.m + E_FLOOR) * (1.0 + 2.0 * K_GROUP) * S1 * (2.0 + 3.0 * SLACK);
        let c = (1.0 + 1.0 / EPS) * beta * beta * S1 * S1;
        (A, c, cut2(limit, self.m))
    }

    /// [`sift`](Self::sift) for each of `points` (at most [`SIFT_POINTS`]),
    /// told as a [`Sifted`]: point by point, the portable form of
    /// [`sift_points_group`].
    fn sift_points(&mut self, points: &[[f64; D]], limit: f64) -> Sifted {
        let mut out = Sifted { one: 0, many: 0, slot: [0; SIFT_POINTS] };
        if self.count == 0 {
            return out;
        }
        for (i, p) in points.iter().enumerate().take(SIFT_POINTS) {
            if !p.iter().all(|c| c.is_finite()) {
                continue;
            }
            let (_, many, first) = sift_group(self, p, limit);
            if many {
                out.many |= 1 << i;
            } else if first < self.count {
                out.one |= 1 << i;
                out.slot[i] = self.slot[first];
            }
        }
        out
    }
}

/// The most points [`sift_points_group`] takes at once.
pub(crate) const SIFT_POINTS: usize = 2 * B;

/// What the group sift ([`Group::sift`]) leaves of each of a group's
/// points, bit `i` for point `i`: in neither mask, no candidate passes
/// (or the point is not finite, or there are no candidates): no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sifted {
    /// One candidate passes, segment `slot[i]`: the answer if within the
    /// limit.
    pub(crate) one: u32,
    /// More than one passes: the point is searched alone
    /// ([`Index::nearest_in_group`]).
    pub(crate) many: u32,
    /// The segment that passes, where one does.
    pub(crate) slot: [u32; SIFT_POINTS],
}

/// The lanes of a chunk of scanned d² that pass the cut `cut2`, a bit each.
#[inline(always)]
fn passing(d2: &[f64; B], cut2: f64) -> u32 {
    let mut mask = 0u32;
    for c in 0..B {
        mask |= u32::from(d2[c] <= cut2) << c;
    }
    mask
}

/// One chunk's lanes that pass (`mask`, chunk `i`) added to the tally of
/// [`Group::sift`].
#[inline(always)]
fn tally(mask: u32, i: usize, many: bool, first: usize) -> (bool, usize) {
    let lane = i * B + mask.trailing_zeros() as usize;
    let many = many | (mask & mask.wrapping_sub(1) != 0) | (first != usize::MAX && mask != 0);
    (many, if first == usize::MAX && mask != 0 { lane } else { first })
}

/// [`Group::sift`] for the CPU: by hand with AVX-512 (half the
/// instructions of what LLVM makes of the portable loops; the fused
/// multiply-adds only remove roundings, so the scan's error bound holds),
/// else the portable code.
fn sift_group<const D: usize>(g: &mut Group<D>, p: &[f64; D], limit: f64) -> (f64, bool, usize) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F, checked just above.
        return unsafe { sift_avx512(g, p, limit) };
    }
    g.sift(p, limit)
}

/// The fast squared distances from `p` (each coordinate in all lanes of
/// `pv`) to a chunk's segments: [`Chunk::distances`] with AVX-512F, the
/// multiply-adds fused (which only removes roundings).
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn chunk_d2_avx512<const D: usize>(
    ch: &Chunk<D>,
    pv: &[std::arch::x86_64::__m512d; D],
) -> std::arch::x86_64::__m512d {
    use std::arch::x86_64::*;
    const { assert!(B == 8) };
    // SAFETY: each array of the chunk holds B = 8 numbers.
    let load = |x: &[f64; B]| unsafe { _mm512_loadu_pd(x.as_ptr()) };
    let a: [__m512d; D] = std::array::from_fn(|k| load(&ch.a[k]));
    let ab: [__m512d; D] = std::array::from_fn(|k| load(&ch.ab[k]));
    // SAFETY: the CPU has AVX-512F (this function's contract).
    unsafe { lanes_d2_avx512(pv, &a, &ab, load(&ch.inv)) }
}

/// [`Index::reach_of`]'s farthest point with AVX-512F, a point a lane,
/// the segments `slots` read from the index (no [`Group`]): the largest
/// over the finite points of the least scanned `d²` to those segments (the
/// arithmetic of [`Group::farthest`] as [`chunk_d2_avx512`] does it; min
/// and max are exact, so the order changes nothing), and the segments'
/// largest coordinate magnitude.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn farthest_avx512<const D: usize>(index: &Index<D>, slots: &[u32], points: &[[f64; D]]) -> (f64, f64) {
    use std::arch::x86_64::*;
    const H: usize = SIFT_POINTS / B;
    let mut m = 0.0f64;
    for &slot in slots {
        let (a, b) = index.ends(slot as usize);
        for k in 0..D {
            m = fmax(fmax(m, a[k].abs()), b[k].abs());
        }
    }
    let mut far = 0.0f64;
    for points in points.chunks(SIFT_POINTS) {
        // SAFETY (both): the CPU has AVX-512F (this function's contract).
        let (pv, finite) = unsafe { points_in_lanes(points) };
        let mut least = [_mm512_set1_pd(f64::INFINITY); H];
        for &slot in slots {
            let slot = slot as usize;
            let (a, b) = index.ends(slot);
            let av: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(a[k]));
            let ab: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(b[k] - a[k]));
            let inv = _mm512_set1_pd(index.inv[slot / B][slot % B]);
            for h in 0..H {
                least[h] = _mm512_min_pd(least[h], unsafe { lanes_d2_avx512(&pv[h], &av, &ab, inv) });
            }
        }
        for h in 0..H {
            if finite[h] != 0 {
                far = fmax(far, _mm512_mask_reduce_max_pd(finite[h], least[h]));
            }
        }
    }
    (far, m)
}

/// [`Group::sift`] with AVX-512F intrinsics: eight lanes a chunk.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sift_avx512<const D: usize>(g: &mut Group<D>, p: &[f64; D], limit: f64) -> (f64, bool, usize) {
    use std::arch::x86_64::*;
    // SAFETY: the CPU has AVX-512F (this function's contract).
    let best = unsafe { scan_avx512(g, p) };
    let cut2 = g.cut2(best, limit);
    let cv = _mm512_set1_pd(cut2);
    // SAFETY: a chunk of `d2` holds eight numbers.
    let pass = |d2: &[f64; B]| unsafe { _mm512_cmp_pd_mask::<_CMP_LE_OQ>(_mm512_loadu_pd(d2.as_ptr()), cv) };
    if g.d2.len() <= 8 {
        // Up to 64 lanes: every chunk's mask in one word, so that "more
        // than one" and "the first" are one test each (no per-chunk tally).
        let mut all = 0u64;
        for (i, d2) in g.d2.iter().enumerate() {
            all |= u64::from(pass(d2)) << (8 * i);
        }
        let first = if all == 0 { usize::MAX } else { all.trailing_zeros() as usize };
        return (cut2, all & all.wrapping_sub(1) != 0, first);
    }
    let (mut many, mut first) = (false, usize::MAX);
    for (i, d2) in g.d2.iter().enumerate() {
        (many, first) = tally(u32::from(pass(d2)), i, many, first);
    }
    (cut2, many, first)
}

/// [`Group::sift_points`] for the CPU: with AVX-512, the points in the
/// lanes (eight a vector) and the candidates one after the other, so that
/// no query waits on a reduction across lanes and a group's sixteen
/// queries run side by side; else point by point.
pub(crate) fn sift_points_group<const D: usize>(
    index: &Index<D>,
    g: &mut Group<D>,
    points: &[[f64; D]],
    limit: f64,
) -> Sifted {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F, checked just above.
        return unsafe { sift_points_avx512(index, g, points, limit) };
    }
    index.fill(g);
    g.sift_points(points, limit)
}

/// Up to [`SIFT_POINTS`] points' coordinates, eight points a vector (lane
/// `i` of vector `h` is point `8h + i`), and which lanes hold a finite
/// point.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn points_in_lanes<const D: usize>(
    points: &[[f64; D]],
) -> ([[std::arch::x86_64::__m512d; D]; SIFT_POINTS / B], [u8; SIFT_POINTS / B]) {
    use std::arch::x86_64::*;
    const H: usize = SIFT_POINTS / B;
    let len = points.len().min(SIFT_POINTS);
    let mut pv = [[_mm512_setzero_pd(); D]; H];
    let mut finite = [0u8; H];
    let inf = _mm512_set1_pd(f64::INFINITY);
    let base = points.as_ptr().cast::<f64>();
    for h in 0..H {
        let lanes = len.saturating_sub(h * B).min(B);
        let mut ok = ((1u32 << lanes) - 1) as u8;
        for k in 0..D {
            // Lane i: number (8h + i)·D + k of the points' coordinates.
            let at: [i64; B] = std::array::from_fn(|i| ((h * B + i) * D + k) as i64);
            // SAFETY: `at` holds eight numbers; the lanes gathered (`ok`)
            // are coordinates of points < len.
            let v = unsafe {
                _mm512_mask_i64gather_pd::<8>(_mm512_setzero_pd(), ok, _mm512_loadu_si512(at.as_ptr().cast()), base)
            };
            ok &= _mm512_cmp_pd_mask::<_CMP_LT_OQ>(_mm512_abs_pd(v), inf);
            pv[h][k] = v;
        }
        finite[h] = ok;
    }
    (pv, finite)
}

/// The fast squared distances, lane by lane, from points `pv` to segments
/// (`a`, `b − a`, `1/|b − a|²`): one point against eight segments
/// ([`chunk_d2_avx512`]) or eight points against one segment (its numbers
/// in every lane), the same arithmetic either way, so the same bits.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn lanes_d2_avx512<const D: usize>(
    pv: &[std::arch::x86_64::__m512d; D],
    a: &[std::arch::x86_64::__m512d; D],
    ab: &[std::arch::x86_64::__m512d; D],
    inv: std::arch::x86_64::__m512d,
) -> std::arch::x86_64::__m512d {
    use std::arch::x86_64::*;
    let (one, zero) = (_mm512_set1_pd(1.0), _mm512_setzero_pd());
    let pa: [__m512d; D] = std::array::from_fn(|k| _mm512_sub_pd(pv[k], a[k]));
    let mut dot = zero;
    for k in 0..D {
        dot = _mm512_fmadd_pd(pa[k], ab[k], dot);
    }
    // min(NaN, 1) is 1, as in the portable code: t stays in [0, 1].
    let t = _mm512_max_pd(_mm512_min_pd(_mm512_mul_pd(dot, inv), one), zero);
    let mut d2 = zero;
    for k in 0..D {
        let v = _mm512_fnmadd_pd(t, ab[k], pa[k]);
        d2 = _mm512_fmadd_pd(v, v, d2);
    }
    d2
}

/// [`Group::sift_points`] with AVX-512F, a point a lane. One pass keeps,
/// lane by lane, the least scanned `d²`, its candidate (the first of the
/// least) and the second least (of the multiset: a tie for least makes it
/// the least). The least is what the cut is made of, and it passes the
/// cut whenever anything does; more than one passes exactly when the
/// second least does. So the masks and lanes are those of the
/// point-by-point sift, whose `d²` these are bit for bit.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn sift_points_avx512<const D: usize>(
    index: &Index<D>,
    g: &Group<D>,
    points: &[[f64; D]],
    limit: f64,
) -> Sifted {
    use std::arch::x86_64::*;
    const H: usize = SIFT_POINTS / B;
    let mut out = Sifted { one: 0, many: 0, slot: [0; SIFT_POINTS] };
    if g.count == 0 {
        return out;
    }
    // SAFETY (all the calls below): the CPU has AVX-512F (this function's
    // contract).
    let (pv, finite) = unsafe { points_in_lanes(points) };
    let inf = _mm512_set1_pd(f64::INFINITY);
    // (`first` is written by the first candidate in every finite lane.)
    let (mut least, mut second, mut first) = ([inf; H], [inf; H], [_mm512_setzero_si512(); H]);
    let mut each = |slot: usize, a: &[__m512d; D], ab: &[__m512d; D], inv: __m512d| {
        let sv = _mm512_set1_epi64(slot as i64);
        for h in 0..H {
            // SAFETY: as above.
            let d2 = unsafe { lanes_d2_avx512(&pv[h], a, ab, inv) };
            second[h] = _mm512_min_pd(second[h], _mm512_max_pd(least[h], d2));
            first[h] = _mm512_mask_mov_epi64(first[h], _mm512_cmp_pd_mask::<_CMP_LT_OQ>(d2, least[h]), sv);
            least[h] = _mm512_min_pd(least[h], d2);
        }
    };
    // Straight from the leaves (what `gather` picked; `fill` leaves it):
    // `b − a` as `fill` computes it.
    for &(j, mut mask) in &g.picked {
        let (leaf, inv) = (&index.leaves[j as usize], &index.inv[j as usize]);
        while mask != 0 {
            let c = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let a: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(leaf.lo[k][c]));
            let ab: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(leaf.hi[k][c] - leaf.lo[k][c]));
            each(j as usize * B + c, &a, &ab, _mm512_set1_pd(inv[c]));
        }
    }
    let (a, c, limit_cut) = g.cut_terms(limit);
    for h in 0..H {
        // `cut2`'s arithmetic, lane by lane.
        let cut = _mm512_min_pd(
            _mm512_add_pd(_mm512_mul_pd(_mm512_set1_pd(a), least[h]), _mm512_set1_pd(c)),
            _mm512_set1_pd(limit_cut),
        );
        let any = _mm512_cmp_pd_mask::<_CMP_LE_OQ>(least[h], cut) & finite[h];
        let many = _mm512_cmp_pd_mask::<_CMP_LE_OQ>(second[h], cut) & finite[h];
        out.many |= u32::from(many) << (h * B);
        out.one |= u32::from(any & !many) << (h * B);
        let mut slots = [0i64; B];
        // SAFETY: `slots` holds eight numbers.
        unsafe { _mm512_storeu_si512(slots.as_mut_ptr().cast(), first[h]) };
        for i in 0..B {
            out.slot[h * B + i] = slots[i] as u32;
        }
    }
    out
}

/// [`Group::scan`] with AVX-512F: [`chunk_d2_avx512`] on every chunk.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn scan_avx512<const D: usize>(g: &mut Group<D>, p: &[f64; D]) -> f64 {
    use std::arch::x86_64::*;
    const { assert!(B == 8) };
    let n = g.chunks.len();
    g.d2.clear();
    g.d2.reserve(n);
    let out = g.d2.as_mut_ptr().cast::<f64>();
    let pv: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(p[k]));
    let mut least = _mm512_set1_pd(f64::INFINITY);
    for (i, ch) in g.chunks.iter().enumerate() {
        // SAFETY: the CPU has AVX-512F (this function's contract); `out`
        // has room for n chunks of eight.
        unsafe {
            let d2 = chunk_d2_avx512(ch, &pv);
            _mm512_storeu_pd(out.add(i * B), d2);
            least = _mm512_min_pd(least, d2);
        }
    }
    // SAFETY: the n chunks were written just above.
    unsafe { g.d2.set_len(n) };
    _mm512_reduce_min_pd(least)
}

/// [`Group::farthest`] compiled for AVX2 where the CPU has it (with
/// AVX-512, [`Index::reach_of`] does without the group).
fn farthest_group<const D: usize>(g: &Group<D>, points: &[[f64; D]]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<const D: usize>(g: &Group<D>, points: &[[f64; D]]) -> f64 {
            g.farthest(points)
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { avx2(g, points) };
        }
    }
    g.farthest(points)
}

/// [`Group::scan`] for the CPU: by hand with AVX-512, else compiled for
/// AVX2 where the CPU has it (chosen at run time; the default build
/// targets SSE2 only).
fn scan_group<const D: usize>(g: &mut Group<D>, p: &[f64; D]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<const D: usize>(g: &mut Group<D>, p: &[f64; D]) -> f64 {
            g.scan(p)
        }
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            return unsafe { scan_avx512(g, p) };
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { avx2(g, p) };
        }
    }
    g.scan(p)
}

/// `max(a, b)` for numbers that are never NaN, as one instruction (the
/// NaN-aware `f64::max` costs three).
#[inline(always)]
fn fmax(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// `min(a, b)` likewise.
#[inline(always)]
fn fmin(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

/// What a search looks for.
#[derive(Clone, Copy)]
pub(crate) enum Want {
    /// The `k` nearest within the limit.
    Nearest(usize),
    /// Everything within the limit.
    All,
}

impl<const D: usize> Index<D> {
    pub(crate) fn from_parts(
        leaves: Vec<Block<D>>,
        levels: Vec<Level<D>>,
        segs: Vec<Seg<D>>,
        topology: Topology,
        curve: Curve<D>,
    ) -> Self {
        let inv = leaves
            .iter()
            .map(|leaf| {
                std::array::from_fn(|c| {
                    let a: [f64; D] = std::array::from_fn(|k| leaf.lo[k][c]);
                    let b: [f64; D] = std::array::from_fn(|k| leaf.hi[k][c]);
                    inv_length2(&a, &b)
                })
            })
            .collect();
        Index { leaves, inv, levels, segs, topology, curve }
    }

    /// An index over plain segments, feature `i` being `segments[i]`.
    ///
    /// # Errors
    /// As [`IndexBuilder::build`](crate::IndexBuilder::build).
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_segments(&[[[0.0f32, 0.0], [1.0, 0.0]]])?;
    /// assert_eq!(index.nearest([0.5, 2.0]).unwrap().distance, 2.0);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub fn from_segments<T: Copy + Into<f64>>(segments: &[[[T; D]; 2]]) -> Result<Self, crate::BuildError> {
        let mut b = crate::IndexBuilder::with_capacity(2 * segments.len(), segments.len());
        for s in segments {
            b.push_segment(s[0], s[1]);
        }
        b.build()
    }

    /// An index over polylines, feature `i` being `polylines[i]`.
    ///
    /// # Errors
    /// As [`IndexBuilder::build`](crate::IndexBuilder::build).
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_polylines(&[&[[0.0, 0.0], [1.0, 0.0], [2.0, 1.0]][..]])?;
    /// assert_eq!(index.len(), 2);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub fn from_polylines<T: Copy + Into<f64>, P: AsRef<[[T; D]]>>(polylines: &[P]) -> Result<Self, crate::BuildError> {
        let vertices = polylines.iter().map(|p| p.as_ref().len()).sum();
        let mut b = crate::IndexBuilder::with_capacity(vertices, polylines.len());
        for p in polylines {
            b.push_polyline(p.as_ref());
        }
        b.build()
    }

    /// The number of segments.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_polylines(&[vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]])?;
    /// assert_eq!(index.len(), 2);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.segs.len()
    }

    /// Whether the index holds no segment (every query then finds nothing).
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_segments::<f64>(&[])?;
    /// assert!(index.is_empty() && index.k_nearest([0.0, 0.0], 3).is_empty());
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// The heap memory the index holds, in bytes.
    ///
    /// ```
    /// let segs: Vec<[[f64; 2]; 2]> = (0..1000).map(|i| [[i as f64, 0.0], [i as f64, 1.0]]).collect();
    /// let index = segdist_index::Index::<2>::from_segments(&segs)?;
    /// assert!(index.memory_bytes() < 100 * 1000); // about 93 bytes a segment
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        let block = std::mem::size_of::<Block<D>>();
        let levels: usize = self.levels.iter().map(|l| l.blocks.capacity() * block).sum();
        self.leaves.capacity() * block
            + self.inv.capacity() * std::mem::size_of::<[f64; B]>()
            + levels
            + self.segs.capacity() * std::mem::size_of::<Seg<D>>()
            + (self.topology.part_start.capacity() + self.topology.feature_start.capacity()) * 4
    }

    /// The ends of the segment in `slot`, from its leaf's columns (in cache
    /// where the search has just scanned the leaf; its record in `segs` is
    /// for reading answers in another order).
    #[inline]
    fn ends(&self, slot: usize) -> ([f64; D], [f64; D]) {
        let leaf = &self.leaves[slot / B];
        (std::array::from_fn(|k| leaf.lo[k][slot % B]), std::array::from_fn(|k| leaf.hi[k][slot % B]))
    }

    /// Asks for the cache lines of the segment in `slot` (its record) ahead
    /// of a read: a hint (nothing where the CPU has no such instruction, or
    /// for [`NO_SLOT`]).
    #[inline(always)]
    pub(crate) fn prefetch_segment(&self, slot: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(s) = self.segs.get(slot as usize) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let p = (s as *const Seg<D>).cast::<i8>();
            // SAFETY: a prefetch never faults; both addresses lie within `s`.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(p);
                _mm_prefetch::<_MM_HINT_T0>(p.add(std::mem::size_of::<Seg<D>>() - 1));
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// The segment nearest to `p`, or `None` when the index is empty or `p`
    /// has a NaN or infinite coordinate. Ties go to the lowest id.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_segments(&[
    ///     [[0.0, 1.0], [2.0, 1.0]],
    ///     [[0.0, -1.0], [2.0, -1.0]],
    /// ])?;
    /// // Equidistant: the lower feature id wins.
    /// assert_eq!(index.nearest([1.0, 0.0]).unwrap().feature, 0);
    /// assert!(index.nearest([f64::NAN, 0.0]).is_none());
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn nearest(&self, p: [f64; D]) -> Option<Hit<D>> {
        self.nearest_within(p, f64::INFINITY)
    }

    /// The nearest segment at distance `<= max_distance`, or `None`. The
    /// limit prunes the search, so a small one makes the query cheaper.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_segments(&[[[0.0, 0.0], [1.0, 0.0]]])?;
    /// assert!(index.nearest_within([0.5, 2.0], 1.5).is_none());
    /// assert_eq!(index.nearest_within([0.5, 2.0], 2.0).unwrap().distance, 2.0);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn nearest_within(&self, p: [f64; D], max_distance: f64) -> Option<Hit<D>> {
        with_scratch(|s| self.nearest_found(&p, max_distance, None, s)).map(|f| self.hit(&f))
    }

    /// The `k` nearest segments, nearest first (ties by lowest id); fewer
    /// when the index holds fewer, none for a non-finite `p`.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_polylines(&[
    ///     vec![[0.0, 0.0], [10.0, 0.0]],
    ///     vec![[0.0, 3.0], [10.0, 3.0]],
    ///     vec![[0.0, 7.0], [10.0, 7.0]],
    /// ])?;
    /// let hits = index.k_nearest([5.0, 4.0], 2);
    /// assert_eq!(hits.iter().map(|h| (h.feature, h.distance)).collect::<Vec<_>>(), [(1, 1.0), (2, 3.0)]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn k_nearest(&self, p: [f64; D], k: usize) -> Vec<Hit<D>> {
        self.k_nearest_within(p, k, f64::INFINITY)
    }

    /// The `k` nearest segments at distance `<= max_distance`, nearest first.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_segments(&[
    ///     [[0.0, 0.0], [1.0, 0.0]],
    ///     [[0.0, 5.0], [1.0, 5.0]],
    /// ])?;
    /// assert_eq!(index.k_nearest_within([0.5, 1.0], 2, 2.0).len(), 1);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn k_nearest_within(&self, p: [f64; D], k: usize, max_distance: f64) -> Vec<Hit<D>> {
        if k == 0 {
            return Vec::new();
        }
        with_scratch(|s| self.search(&p, Want::Nearest(k), max_distance, s).iter().map(|f| self.hit(f)).collect())
    }

    /// Every segment at distance `<= radius` from `p` (the exact distance,
    /// faithfully rounded, compared with `radius`), nearest first, ties by
    /// lowest id.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_segments(&[
    ///     [[0.0, 0.0], [1.0, 0.0]],
    ///     [[0.0, 1.0], [1.0, 1.0]],
    ///     [[0.0, 9.0], [1.0, 9.0]],
    /// ])?;
    /// let near = index.within([0.5, 0.5], 0.5);
    /// assert_eq!(near.iter().map(|h| h.feature).collect::<Vec<_>>(), [0, 1]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn within(&self, p: [f64; D], radius: f64) -> Vec<Hit<D>> {
        with_scratch(|s| self.search(&p, Want::All, radius, s).iter().map(|f| self.hit(f)).collect())
    }

    /// The public form of a search result.
    pub(crate) fn hit(&self, f: &Found<D>) -> Hit<D> {
        let t = &self.topology;
        let s = &self.segs[f.slot as usize];
        let (feature, part, segment) = t.locate(s.feature, s.local);
        Hit {
            feature,
            part,
            segment,
            t: f.proj.t,
            point: f.proj.point,
            distance: f.proj.distance,
            distance_squared: f.proj.distance_squared,
        }
    }

    /// The curve that orders query batches.
    pub(crate) fn curve(&self) -> &Curve<D> {
        &self.curve
    }

    /// Nearest segment, starting from the segment in slot `hint` (a good
    /// guess, such as the previous query's answer in a coherent batch).
    #[inline]
    pub(crate) fn nearest_found(
        &self,
        p: &[f64; D],
        limit: f64,
        hint: Option<u32>,
        s: &mut Scratch,
    ) -> Option<Found<D>> {
        let st = self.traverse(p, Want::Nearest(1), limit, hint, s)?;
        self.pick(p, &st, limit, s)
    }

    /// Gathers into `g` every segment of `leaves` whose own box meets
    /// `[lo, hi]` (as leaves and lanes: [`fill`](Self::fill) makes them
    /// columns); `false` if there are more than `cap` or their magnitudes
    /// are beyond the fast kernel's trusted range.
    #[inline(always)]
    pub(crate) fn gather<const AVX512: bool>(
        &self,
        lo: &[f64; D],
        hi: &[f64; D],
        leaves: &[u32],
        cap: usize,
        g: &mut Group<D>,
    ) -> bool {
        g.picked.clear();
        g.chunks.clear();
        g.slot.clear();
        g.filled = false;
        let mut m = lo.iter().chain(hi).fold(0.0f64, |m, c| m.max(c.abs()));
        let mut count = 0;
        for &j in leaves {
            let base = j as usize * B;
            let leaf = &self.leaves[j as usize];
            // Which of the leaf's segments have a box meeting `[lo, hi]`: all
            // eight lanes at once, branch-free (most fail, unpredictably);
            // not the padding lanes past the last segment.
            let real = if self.segs.len() - base >= B { u32::MAX } else { (1 << (self.segs.len() - base)) - 1 };
            let mask = leaf.meets::<AVX512>(lo, hi, true) & real;
            if mask != 0 {
                count += mask.count_ones() as usize;
                if count > cap {
                    return false;
                }
                g.picked.push((j, mask));
                // (The leaf's box bounds its segments' coordinates: a
                // little looser than the lanes picked, and cheaper.)
                let level = &self.levels[0];
                for k in 0..D {
                    m = fmax(m, fmax(level.lo(k, j as usize).abs(), level.hi(k, j as usize).abs()));
                }
            }
        }
        g.m = m;
        g.count = count;
        m < FAST_RANGE
    }

    /// Makes the columns of `g`'s candidates (`chunks`, `slot`) from what
    /// [`gather`](Self::gather) picked, if not made yet: the scans of one
    /// point at a time read those.
    pub(crate) fn fill(&self, g: &mut Group<D>) {
        if g.filled {
            return;
        }
        g.filled = true;
        for &(j, mut mask) in &g.picked {
            let (j, leaf) = (j as usize, &self.leaves[j as usize]);
            while mask != 0 {
                let c = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let a: [f64; D] = std::array::from_fn(|k| leaf.lo[k][c]);
                let ab: [f64; D] = std::array::from_fn(|k| leaf.hi[k][c] - a[k]);
                let slot = (j * B + c) as u32;
                // (`push` is the chunks' and the slots' own: the same
                // order as the lanes of `picked`.)
                push_lane(&mut g.chunks, &mut g.slot, a, ab, self.inv[j][c], slot);
            }
        }
    }

    /// An upper bound on the distance from each of `points` (those with
    /// finite coordinates, all inside `bbox`) to its nearest segment: the
    /// largest over the points of the distance to the nearest of `slots`
    /// (the previous group's answers), by the group scan with its error
    /// bound (see [`nearest_in_group`](Self::nearest_in_group)); `+inf`
    /// beyond the scan's trusted range. `g`: room for those segments, where
    /// the CPU has no AVX-512 (with it, a point a lane, they are read from
    /// the index).
    pub(crate) fn reach_of(
        &self,
        points: &[[f64; D]],
        bbox: &([f64; D], [f64; D]),
        slots: &[u32],
        g: &mut Group<D>,
    ) -> f64 {
        let mut m = bbox.0.iter().chain(&bbox.1).fold(0.0f64, |m, c| m.max(c.abs()));
        let far = 'far: {
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F, checked just above.
                let (far, ms) = unsafe { farthest_avx512(self, slots, points) };
                m = fmax(m, ms);
                break 'far far;
            }
            g.picked.clear();
            g.chunks.clear();
            g.slot.clear();
            g.filled = true;
            for &slot in slots {
                if !g.slot.contains(&slot) {
                    let (a, b) = self.ends(slot as usize);
                    m = fmax(m, g.add(a, b, slot));
                }
            }
            g.count = g.slot.len();
            g.m = m;
            farthest_group(g, points)
        };
        if slots.is_empty() || m >= FAST_RANGE {
            return f64::INFINITY;
        }
        let d = far.sqrt();
        (d + K_GROUP * (m + d) + E_FLOOR) * (1.0 + SLACK)
    }

    /// Nearest segment to `p` among the group's candidates, which must hold
    /// every segment within the group bound of `p` (see `gather`). Where
    /// the scan leaves one candidate it is the answer if within `limit`,
    /// and is returned unevaluated ([`Pick::Only`]).
    ///
    /// The scan is the clamped projection with `b − a` and `1/|b − a|²`
    /// precomputed, over all candidates at once. Its error: `t̃` lies in
    /// `[0, 1]` whatever the rounding, so the point `a + t̃·(b − a)` is on the
    /// segment and the computed distance to it exceeds `d` by at most the
    /// evaluation error (about `15·u·(M + d)` in 2D, `17·u·(M + d)` in 3D)
    /// plus `|t̃ − t|·|b − a|` (at most `16·u·M`, or `|b − a| < 2^-484` where
    /// `|b − a|²` underflows). `K_GROUP = 64·u` covers both with room.
    #[inline]
    pub(crate) fn nearest_in_group(&self, p: &[f64; D], limit: f64, g: &mut Group<D>, runner_up: bool) -> Pick<D> {
        self.fill(g);
        if g.count == 0 || p.iter().any(|c| !c.is_finite()) {
            return Pick::Done(None);
        }
        // Which lanes pass: one that passes alone is the answer, evaluated
        // later in a batch.
        let (cut2, many, first) = sift_group(g, p, limit);
        // (A padding lane never passes: its d² is +inf.)
        let mut found: Option<(Found<D>, usize)> = None;
        if many {
            for (i, d2) in g.d2.iter().enumerate() {
                let mut mask = passing(d2, cut2);
                while mask != 0 {
                    let c = i * B + mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    let f = self.evaluate(p, g.slot[c]);
                    if f.proj.distance <= limit && found.as_ref().is_none_or(|(b, _)| f.before(b)) {
                        found = Some((f, c));
                    }
                }
            }
        }
        let only = !many && first < g.count;
        let mut bound = |lane| if runner_up { runner_up_bound(g, lane) } else { 0.0 };
        if only {
            let runner_up = bound(first);
            return Pick::Only { slot: g.slot[first], runner_up };
        }
        Pick::Done(found.map(|(mut f, lane)| {
            f.runner_up = bound(lane);
            f
        }))
    }
}

/// The largest scanned d² of a segment that may lie within `bound`, for a
/// scan whose magnitudes are at most `m` (see
/// [`Index::nearest_in_group`]): its lower bound `d̃ − K(m + d̃) − floor` is
/// at most `bound` exactly when `d̃ <= (bound + K·m + floor) / (1 − K)`.
/// Dividing by `1 − K` is multiplying by at most `1 + 2K` (`K < 1/2`),
/// which is cheaper; the rounding of all this is far inside `SLACK`.
#[inline(always)]
fn cut2(bound: f64, m: f64) -> f64 {
    let cut = (bound * (1.0 + SLACK) + K_GROUP * m + E_FLOOR) * (1.0 + 2.0 * K_GROUP) * (1.0 + SLACK);
    cut * cut * (1.0 + SLACK)
}

/// The `k`-th smallest of the group's scanned d² if at least `k` lie below
/// `below` (`least` is the working list of the smallest, sorted).
fn kth_least<const D: usize>(g: &Group<D>, k: usize, below: f64, least: &mut Vec<f64>) -> Option<f64> {
    least.clear();
    let mut kth = below;
    for (i, d2) in g.d2.iter().enumerate() {
        for (c, &d2) in d2.iter().enumerate() {
            if d2 < kth && i * B + c < g.count {
                let at = least.partition_point(|&u| u <= d2);
                least.insert(at, d2);
                least.truncate(k);
                if least.len() == k {
                    kth = least[k - 1];
                }
            }
        }
    }
    (least.len() == k).then_some(kth)
}

/// A lower bound on the distance from the query just scanned to every
/// segment of the index but the one in `lane`: the least of the other
/// candidates' lower bounds (the fast distance less its error bound) and
/// the group's reach (segments not gathered are farther).
fn runner_up_bound<const D: usize>(g: &mut Group<D>, lane: usize) -> f64 {
    // The winner's lane out of the way, then a lane-wise minimum.
    let saved = std::mem::replace(&mut g.d2[lane / B][lane % B], f64::INFINITY);
    let mut least = [f64::INFINITY; B];
    for d2 in &g.d2 {
        for c in 0..B {
            least[c] = fmin(least[c], d2[c]);
        }
    }
    g.d2[lane / B][lane % B] = saved;
    let d = least.iter().fold(f64::INFINITY, |a, &b| fmin(a, b)).sqrt();
    let lower = if d.is_finite() { d - K_GROUP * (g.m + d) - E_FLOOR } else { f64::INFINITY };
    (lower.min(g.reach) * (1.0 - SLACK)).max(0.0)
}

impl<const D: usize> Index<D> {
    /// An upper bound on the exact distance from `p` to the segment in
    /// `slot` (`+inf` where the fast kernel's bound is not trusted).
    #[inline]
    pub(crate) fn upper_bound(&self, p: &[f64; D], slot: u32) -> f64 {
        let st = State {
            p,
            mp: p.iter().fold(0.0f64, |m, c| m.max(c.abs())),
            bound: f64::INFINITY,
            want: Want::Nearest(1),
            skip: u32::MAX,
        };
        self.fast_bounds(slot as usize, slot as usize / B, &st).1
    }

    /// Every leaf whose box meets the box `[lo, hi]`, into `out`; `false`
    /// (and `out` incomplete) if there are more than `cap`.
    #[inline(always)]
    pub(crate) fn group_leaves<const AVX512: bool>(
        &self,
        lo: &[f64; D],
        hi: &[f64; D],
        out: &mut Vec<u32>,
        cap: usize,
        s: &mut Scratch,
    ) -> bool {
        out.clear();
        if self.segs.is_empty() {
            return true;
        }
        let top = self.levels.len() - 1;
        s.stack[0] = (top as u32, 0, 0.0);
        s.top = 1;
        while s.top > 0 {
            s.top -= 1;
            let (l, j, _) = s.stack[s.top];
            if l == 0 {
                if out.len() == cap {
                    return false;
                }
                out.push(j);
                continue;
            }
            let block = &self.levels[l as usize - 1].blocks[j as usize];
            let base = j as usize * B;
            let mut mask = block.meets::<AVX512>(lo, hi, false);
            while mask != 0 {
                let c = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                s.stack[s.top] = (l - 1, (base + c) as u32, 0.0);
                s.top += 1;
            }
        }
        true
    }

    /// The candidate with the least `(distance, id)`: candidates in
    /// ascending order of lower bound, stopping as soon as none can tie.
    #[inline]
    fn pick(&self, p: &[f64; D], st: &State<'_, D>, limit: f64, s: &mut Scratch) -> Option<Found<D>> {
        let cut = st.bound * (1.0 + SLACK);
        if s.cands.len() > 1 {
            s.cands.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        }
        let mut best: Option<Found<D>> = None;
        for &(lower, slot) in &s.cands {
            if lower > cut {
                continue;
            }
            if let Some(b) = &best {
                if lower * (1.0 - SLACK) > b.proj.distance {
                    break;
                }
            }
            let f = self.evaluate(p, slot);
            if f.proj.distance <= limit && best.as_ref().is_none_or(|b| f.before(b)) {
                best = Some(f);
            }
        }
        best
    }

    /// The accurate projection onto the segment in `slot`.
    #[inline]
    fn evaluate(&self, p: &[f64; D], slot: u32) -> Found<D> {
        let i = slot as usize;
        let (a, b) = self.ends(i);
        let seg = Segment::new(a, b);
        self.found(slot, seg.closest_point(*p).into())
    }

    /// The segment in `slot` found with projection `proj`, with the id of
    /// the tie rule.
    #[inline]
    fn found(&self, slot: u32, proj: Proj<D>) -> Found<D> {
        Found { slot, id: self.id(slot), proj, runner_up: 0.0 }
    }

    /// The id of the tie rule of the segment in `slot`: `(feature, local)`
    /// as one number.
    #[inline]
    fn id(&self, slot: u32) -> u64 {
        self.segs[slot as usize].id()
    }

    /// The k-nearest and radius searches: every candidate that survives the
    /// final bound, evaluated and ranked.
    pub(crate) fn search<'s>(&self, p: &[f64; D], want: Want, limit: f64, s: &'s mut Scratch) -> &'s [Found<D>] {
        let Some(st) = self.traverse(p, want, limit, None, s) else {
            return &[];
        };
        self.rank(p, want, limit, st.bound, s)
    }

    /// [`search`](Self::search) among a group's candidates, which must hold
    /// every segment that can be in the answer (see `gather`): for `k`
    /// nearest, every segment within the group's reach of `p`, and at least
    /// `k` of them; for a radius, every segment within it. `near` (k nearest
    /// only) is a guess at the k-th distance that saves work when right. The
    /// fast scan of all candidates at once stands in for the walk down the
    /// tree.
    pub(crate) fn search_in_group<'s>(
        &self,
        p: &[f64; D],
        want: Want,
        limit: f64,
        near: f64,
        g: &mut Group<D>,
        s: &'s mut Scratch,
    ) -> &'s [Found<D>] {
        if g.count == 0 || p.iter().any(|c| !c.is_finite()) || limit.is_nan() || limit < 0.0 {
            return &[];
        }
        self.fill(g);
        scan_group(g, p);
        let m = g.m;
        s.cands.clear();
        let mut bound = limit;
        if let Want::Nearest(k) = want {
            // The bound is the upper bound of the k-th smallest scanned d².
            // A guess at where it lies (the group's reach and `near` each
            // bound the distance of k segments from `p`) lets most lanes be
            // rejected by one compare; a guess too low is caught (fewer than
            // k below it) and the scan redone without it.
            let r = fmin(g.reach, near);
            let guess = ((r + K_GROUP * (m + r) + E_FLOOR) * (1.0 + SLACK)).powi(2) * (1.0 + SLACK);
            let kth = kth_least(g, k, guess, &mut s.uppers).or_else(|| kth_least(g, k, f64::INFINITY, &mut s.uppers));
            if let Some(kth) = kth {
                let d = kth.sqrt();
                bound = fmin(bound, (d + K_GROUP * (m + d) + E_FLOOR) * (1.0 + SLACK));
            }
        }
        let cut2 = cut2(bound, m);
        for (i, d2) in g.d2.iter().enumerate() {
            let mut mask = passing(d2, cut2);
            while mask != 0 {
                let c = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                // (Padding lanes have d² = +inf and never pass.)
                if let Some(&slot) = g.slot.get(i * B + c) {
                    let d = d2[c].sqrt();
                    s.cands.push((d - K_GROUP * (m + d) - E_FLOOR, slot));
                }
            }
        }
        self.rank(p, want, limit, bound, s)
    }

    /// The end of a k-nearest or radius search: the candidates in `s.cands`
    /// (with a lower bound on their distance each; every segment that may be
    /// in the answer among them) and `bound` (no answer is farther),
    /// evaluated and ranked.
    /// The answers are left in this thread's scratch buffers: the caller
    /// converts them (a `Vec` of them a query was a third of a radius
    /// batch, with the sort moving whole answers and the allocations).
    fn rank<'s>(&self, p: &[f64; D], want: Want, limit: f64, bound: f64, s: &'s mut Scratch) -> &'s [Found<D>] {
        let cut = bound * (1.0 + SLACK);
        s.cands.retain(|c| c.0 <= cut);
        let keep = match want {
            Want::Nearest(k) => k,
            Want::All => usize::MAX,
        };
        // Every survivor is evaluated, by the batch kernel (the scalar
        // kernel's bits, several at a time), then ranked by (distance, id):
        // ids are unique, so the order is total.
        let ev = evals_of::<D>(&mut s.evals);
        ev.project(self, p, &s.cands);
        ev.ranks.clear();
        for (j, &(_, slot)) in s.cands.iter().enumerate() {
            let d = ev.out.distance[j];
            // (Never NaN: the query point is finite.)
            if d <= limit {
                // (`+ 0.0` makes a zero positive, should one be -0.)
                ev.ranks.push(((d + 0.0).to_bits(), self.id(slot), j as u32));
            }
        }
        ev.ranks.sort_unstable();
        ev.ranks.truncate(keep);
        ev.found.clear();
        for &(_, id, j) in &ev.ranks {
            let (slot, proj) = (s.cands[j as usize].1, ev.get(j as usize));
            ev.found.push(Found { slot, id, proj, runner_up: 0.0 });
        }
        &ev.found
    }

    /// Walks the tree, leaving in `s.cands` every segment that may be in the
    /// answer; returns the final state, or `None` when nothing can be found.
    #[inline]
    fn traverse<'p>(
        &self,
        p: &'p [f64; D],
        want: Want,
        limit: f64,
        hint: Option<u32>,
        s: &mut Scratch,
    ) -> Option<State<'p, D>> {
        let mut st = self.start(p, want, limit, hint, s)?;
        let top = self.levels.len() - 1;
        s.stack[0] = (top as u32, 0, 0.0);
        s.top = 1;
        while s.top > 0 {
            s.top -= 1;
            let (l, j, bd2) = s.stack[s.top];
            if bd2 * (1.0 - SLACK) > st.bound2() {
                continue;
            }
            if l == 0 {
                self.scan_leaf(j as usize, &mut st, s);
            } else {
                self.push_children(l as usize - 1, j as usize, &st, s);
            }
        }
        Some(st)
    }

    /// Checks the query and sets up a search, the `hint` offered first.
    #[inline]
    fn start<'p>(
        &self,
        p: &'p [f64; D],
        want: Want,
        limit: f64,
        hint: Option<u32>,
        s: &mut Scratch,
    ) -> Option<State<'p, D>> {
        if self.segs.is_empty() || p.iter().any(|c| !c.is_finite()) || limit.is_nan() || limit < 0.0 {
            return None;
        }
        s.top = 0;
        s.cands.clear();
        s.uppers.clear();
        let mut st = State { p, mp: p.iter().fold(0.0f64, |m, c| m.max(c.abs())), bound: limit, want, skip: u32::MAX };
        if let Some(h) = hint {
            st.skip = h;
            let (lower, upper) = self.fast_bounds(h as usize, h as usize / B, &st);
            st.offer(s, lower, upper, h);
        }
        Some(st)
    }

    /// Largest coordinate magnitude in leaf `j`'s box.
    #[inline]
    fn leaf_m(&self, j: usize) -> f64 {
        let boxes = &self.levels[0];
        (0..D).fold(0.0f64, |m, k| m.max(boxes.lo(k, j).abs()).max(boxes.hi(k, j).abs()))
    }

    /// `(lower, upper)` bounds on the exact distance to the segment in
    /// `slot` (of leaf `j`), from the fast kernel and its error bound.
    #[inline]
    fn fast_bounds(&self, slot: usize, j: usize, st: &State<'_, D>) -> (f64, f64) {
        let (a, b) = self.ends(slot);
        let seg = Segment::new(a, b);
        let d2 = seg.distance_squared_fast(*st.p);
        let m = self.leaf_m(j).max(st.mp);
        if !(d2 < f64::INFINITY && m < FAST_RANGE) {
            // Overflow, or magnitudes where the bound is not trusted.
            return (0.0, f64::INFINITY);
        }
        let d = d2.sqrt();
        let e = K_FAST * (m + d) + E_FLOOR;
        (d - e, (d + e) * (1.0 + SLACK))
    }

    /// Offers the segments of leaf `j` to the search. Each segment's own
    /// bounding box is tested first, eight lanes at once (no division, no
    /// square root, so it vectorises); the fast kernel runs only on the few
    /// whose box is within the bound.
    #[inline]
    fn scan_leaf(&self, j: usize, st: &mut State<'_, D>, s: &mut Scratch) {
        let base = j * B;
        let p = st.p;
        let mut d2 = [0.0; B];
        for k in 0..D {
            let (a, b) = (&self.leaves[j].lo[k], &self.leaves[j].hi[k]);
            for c in 0..B {
                let (lo, hi) = (fmin(a[c], b[c]), fmax(a[c], b[c]));
                let v = fmax(fmax(lo - p[k], p[k] - hi), 0.0);
                d2[c] += v * v;
            }
        }
        let count = (self.segs.len() - base).min(B);
        for (c, &d) in d2.iter().enumerate().take(count) {
            // The bound shrinks as segments are offered: re-read it.
            if d * (1.0 - SLACK) <= st.bound2() {
                let slot = base + c;
                if slot as u32 != st.skip {
                    let (lower, upper) = self.fast_bounds(slot, j, st);
                    st.offer(s, lower, upper, slot as u32);
                }
            }
        }
    }

    /// Pushes the children of node `j` of level `l + 1` (nodes `j·B…` of
    /// level `l`) that may hold a result, the nearest on top. Branch-free
    /// but for the loop: which children pass is not predictable.
    #[inline]
    fn push_children(&self, l: usize, j: usize, st: &State<'_, D>, s: &mut Scratch) {
        let level = &self.levels[l];
        let base = j * B;
        let mut d2 = [0.0; B];
        for k in 0..D {
            let (lo, hi) = (&level.blocks[j].lo[k], &level.blocks[j].hi[k]);
            for c in 0..B {
                let v = fmax(fmax(lo[c] - st.p[k], st.p[k] - hi[c]), 0.0);
                d2[c] += v * v;
            }
        }
        let bound2 = st.bound2();
        let (lo0, hi0) = (&level.blocks[j].lo[0], &level.blocks[j].hi[0]);
        let mut mask = 0u32;
        for c in 0..B {
            // Padding boxes (lo > hi) are never entered.
            let pass = d2[c] * (1.0 - SLACK) <= bound2 && lo0[c] <= hi0[c];
            mask |= u32::from(pass) << c;
        }
        let first = s.top;
        let mut top = first;
        while mask != 0 {
            let c = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            s.stack[top] = (l as u32, (base + c) as u32, d2[c]);
            // Keep the nearest on top.
            if top > first && d2[c] > s.stack[top - 1].2 {
                s.stack.swap(top, top - 1);
            }
            top += 1;
        }
        s.top = top;
    }
}

/// The state of one search: the query, what is wanted and the current bound.
struct State<'p, const D: usize> {
    p: &'p [f64; D],
    /// Largest coordinate magnitude of `p`.
    mp: f64,
    /// Upper bound on the exact distance of the last wanted result.
    bound: f64,
    want: Want,
    /// A slot already offered (the hint).
    skip: u32,
}

impl<const D: usize> State<'_, D> {
    /// `bound²`, rounded up, never below the underflow floor.
    #[inline]
    fn bound2(&self) -> f64 {
        self.bound * self.bound * (1.0 + SLACK) + TINY
    }

    /// Records a segment: a candidate if it may be in the answer, and its
    /// upper bound may tighten `bound`.
    #[inline]
    fn offer(&mut self, s: &mut Scratch, lower: f64, upper: f64, slot: u32) {
        if lower > self.bound * (1.0 + SLACK) {
            return;
        }
        s.cands.push((lower, slot));
        if let Want::Nearest(k) = self.want {
            if upper < self.bound {
                if k == 1 {
                    self.bound = upper;
                } else {
                    let at = s.uppers.partition_point(|&u| u <= upper);
                    if at < k {
                        s.uppers.insert(at, upper);
                        s.uppers.truncate(k);
                        if s.uppers.len() == k {
                            self.bound = self.bound.min(s.uppers[k - 1]);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The box test's two forms agree lane for lane, on boxes and on
    /// segments, padding (empty boxes) and touching edges included.
    #[test]
    fn both_forms_of_the_box_test_agree() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(22);
        #[cfg(target_arch = "x86_64")]
        let avx512 = std::is_x86_feature_detected!("avx512f");
        #[cfg(not(target_arch = "x86_64"))]
        let avx512 = false;
        let mut hits = 0;
        for round in 0..2000 {
            let mut b = Block::<3>::EMPTY;
            for c in 0..(round % 9) {
                for k in 0..3 {
                    // On a coarse grid, so that edges touch exactly.
                    let (x, y) = (f64::from(r.gen_range(0..8u8)), f64::from(r.gen_range(0..8u8)));
                    (b.lo[k][c], b.hi[k][c]) = if round % 2 == 0 { (x.min(y), x.max(y)) } else { (x, y) };
                }
            }
            let q: [f64; 3] = std::array::from_fn(|_| f64::from(r.gen_range(0..8u8)));
            let w: [f64; 3] = std::array::from_fn(|_| f64::from(r.gen_range(0..3u8)));
            let qhi = std::array::from_fn(|k| q[k] + w[k]);
            for segments in [false, true] {
                let want = (0..B)
                    .filter(|&c| {
                        (0..3).all(|k| {
                            let (x, y) = (b.lo[k][c], b.hi[k][c]);
                            let (x, y) = if segments { (x.min(y), x.max(y)) } else { (x, y) };
                            x <= qhi[k] && y >= q[k]
                        })
                    })
                    .fold(0u32, |m, c| m | 1 << c);
                assert_eq!(b.meets::<false>(&q, &qhi, segments), want, "round {round}");
                if avx512 {
                    assert_eq!(b.meets::<true>(&q, &qhi, segments), want, "round {round}");
                }
                hits += want.count_ones();
            }
        }
        assert!(hits > 1000);
    }

    /// The group's cut on squared distances, taken without a square root,
    /// is never below the cut of the bound it stands for (`cut2` of
    /// `(√best + K·(m + √best) + floor)·(1 + S)`, or of the limit if that
    /// is smaller): every lane that bound admits passes. Over scales from
    /// underflow to `FAST_RANGE`, with `best` from zero to far beyond `m`.
    #[test]
    fn the_cut_without_a_square_root_admits_all_the_bound_does() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(22);
        let mut g = Group::<2>::default();
        for round in 0..200_000 {
            g.m = 10f64.powf(r.gen_range(-300.0..149.0));
            let best = match round % 4 {
                0 => 0.0,
                1 => (g.m * 10f64.powf(r.gen_range(-20.0..2.0))).powi(2),
                2 => f64::from_bits(r.gen_range(0..1u64 << 52)),
                _ => r.gen::<f64>() * g.m * g.m,
            };
            let limit = if round % 3 == 0 { f64::INFINITY } else { best.sqrt() * r.gen_range(0.5..2.0) };
            let d = best.sqrt();
            let bound = fmin((d + K_GROUP * (g.m + d) + E_FLOOR) * (1.0 + SLACK), limit);
            let want = cut2(bound, g.m);
            let got = g.cut2(best, limit);
            assert!(got >= want, "m {} best {best:e} limit {limit:e}: {got:e} < {want:e}", g.m);
            // Looser by little: a relative 2^-19 and a constant far below
            // the scan's own error (above the scales where the absolute
            // floor dominates both, as the floor's note says).
            if g.m > 1e-100 && best > (1e-6 * g.m).powi(2) && limit == f64::INFINITY {
                assert!(got <= want * (1.0 + 1e-5), "m {} best {best:e}: {got:e} against {want:e}", g.m);
            }
        }
    }

    /// The group sift with a point a lane (AVX-512), reading the
    /// candidates from the leaves, tells every point what the
    /// point-by-point sift on the columns `fill` makes tells it, bit for bit, and
    /// the reach's farthest point is the point-by-point one: on groups of 0
    /// to 16 points (some not finite) against 1 to 40 candidates with
    /// repeats (exact ties), zero lengths, and limits that cut some points
    /// off.
    #[test]
    fn both_forms_of_the_points_sift_agree() {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") {
            let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(23);
            let (mut ones, mut manys, mut nones) = (0, 0, 0);
            for round in 0..2000 {
                let n = 1 + round % 40;
                let mut segs: Vec<[[f64; 2]; 2]> = Vec::new();
                for i in 0..n {
                    let s = if i > 0 && r.gen_bool(0.1) {
                        segs[r.gen_range(0..i)]
                    } else {
                        let a = [r.gen::<f64>(), r.gen::<f64>()];
                        let len = [0.0, 1e-3, 0.05, 0.5][i % 4];
                        [a, [a[0] + len * r.gen::<f64>(), a[1] - len * r.gen::<f64>()]]
                    };
                    segs.push(s);
                }
                let index = Index::<2>::from_segments(&segs).expect("finite");
                // Every segment a candidate: a box around them all.
                let leaves: Vec<u32> = (0..index.leaves.len() as u32).collect();
                let mut picked = Group::<2>::default();
                assert!(index.gather::<true>(&[-1.0, -1.0], &[2.0, 2.0], &leaves, 64, &mut picked));
                assert_eq!((picked.count, picked.filled), (n, false));
                // The portable gather picks the same, of the same magnitude.
                let mut filled = Group::<2>::default();
                assert!(index.gather::<false>(&[-1.0, -1.0], &[2.0, 2.0], &leaves, 64, &mut filled));
                assert_eq!((&filled.picked, filled.m.to_bits()), (&picked.picked, picked.m.to_bits()));
                index.fill(&mut filled);
                assert_eq!(filled.slot.len(), n);
                let len = round % (SIFT_POINTS + 1);
                let points: Vec<[f64; 2]> = (0..len)
                    .map(|i| match (round + i) % 23 {
                        0 => [f64::NAN, 0.5],
                        1 => [0.5, f64::INFINITY],
                        // On a segment's end: a distance of zero, maybe tied.
                        2 => segs[i % n][0],
                        _ => [r.gen::<f64>(), r.gen::<f64>()],
                    })
                    .collect();
                let limit = [f64::INFINITY, 0.05, 0.0][round % 3];
                let want = filled.sift_points(&points, limit);
                // SAFETY (both): the CPU has AVX-512F, checked above.
                let got = unsafe { sift_points_avx512(&index, &picked, &points, limit) };
                assert_eq!((got.one, got.many), (want.one, want.many), "round {round}");
                for i in (0..len).filter(|i| want.one >> i & 1 != 0) {
                    assert_eq!(got.slot[i], want.slot[i], "round {round}, point {i}");
                }
                ones += want.one.count_ones();
                manys += want.many.count_ones();
                nones += len as u32 - (want.one | want.many).count_ones();
                // The farthest point by point, through the same arithmetic
                // (fused: the portable form's differs in the last bits).
                let far = points
                    .iter()
                    .filter(|p| p.iter().all(|c| c.is_finite()))
                    // SAFETY: as above.
                    .fold(0.0, |far, p| fmax(far, unsafe { scan_avx512(&mut filled, p) }));
                // SAFETY: as above.
                let (got, m) = unsafe { farthest_avx512(&index, &filled.slot, &points) };
                assert_eq!(got.to_bits(), far.to_bits(), "round {round}");
                let want = segs.iter().flatten().flatten().fold(0.0, |m: f64, c| m.max(c.abs()));
                assert_eq!(m, want, "round {round}");
            }
            assert!(ones > 1000 && manys > 100 && nones > 1000, "{ones} {manys} {nones}");
        }
    }

    type Sift = fn(&mut Group<2>, &[f64; 2], f64) -> (f64, bool, usize);

    /// Both forms of the group sift (the portable loops and, where the CPU
    /// has it, AVX-512) keep the nearest segment: alone when it is the only
    /// lane that passes, among those that pass otherwise.
    #[test]
    fn every_form_of_the_group_sift_keeps_the_nearest_segment() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(21);
        let mut alone = 0;
        for round in 0..300 {
            let n = 1 + round % 37;
            let mut g = Group::<2>::default();
            let mut segs = Vec::new();
            for slot in 0..n {
                let a = [r.gen::<f64>(), r.gen::<f64>()];
                // Some of zero length, some long.
                let len = [0.0, 1e-3, 0.05, 0.5][slot % 4];
                let b = [a[0] + len * r.gen::<f64>(), a[1] - len * r.gen::<f64>()];
                let ab = [b[0] - a[0], b[1] - a[1]];
                let l = ab[0] * ab[0] + ab[1] * ab[1];
                g.push(a, ab, if l > 0.0 { 1.0 / l } else { 0.0 }, slot as u32);
                segs.push(Segment::new(a, b));
            }
            g.count = n;
            g.m = 2.0;
            let p = [r.gen::<f64>(), r.gen::<f64>()];
            let d: Vec<f64> = segs.iter().map(|s| s.closest_point(p).distance).collect();
            let nearest = (0..n).fold(0, |b, i| if d[i] < d[b] { i } else { b });
            // The portable scan as the default build compiles it, the
            // dispatched one, and AVX-512 by hand.
            let portable: Sift = |g, p, limit| {
                let best = g.scan(p);
                g.sift_scanned(best, limit)
            };
            let mut forms: Vec<Sift> = vec![portable, Group::sift];
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F, checked just above.
                forms.push(|g, p, limit| unsafe { sift_avx512(g, p, limit) });
            }
            for sift in forms {
                let (cut2, many, first) = sift(&mut g, &p, f64::INFINITY);
                if many {
                    assert!(g.d2[nearest / B][nearest % B] <= cut2, "round {round}");
                } else {
                    assert_eq!(first, nearest, "round {round}");
                    alone += 1;
                }
            }
        }
        assert!(alone > 300, "the one-survivor case was met only {alone} times");
    }
}
