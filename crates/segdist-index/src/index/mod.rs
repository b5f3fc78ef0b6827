//! The static index: its tree of boxes over segments sorted along a curve.
//! Its queries live in the submodules: one at a time in `single`, batches
//! in `group` (with `simd`), their answers in `answer`, their working
//! memory in `scratch`.
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

mod answer;
#[cfg(target_arch = "x86_64")]
mod avx2;
mod group;
mod lanes;
mod listed;
mod scratch;
mod simd;
mod single;
#[cfg(test)]
mod tests;

pub use answer::Hit;
#[cfg(target_arch = "x86_64")]
use avx2::*;
// (The vector kernels' and the tests' use.)
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_imports))]
use listed::*;
pub(crate) use {answer::*, group::*, scratch::*, simd::*, single::*};

/// Which form a loop over eight lanes takes, as a const parameter (see
/// [`Block::meets`]): the portable loops, or AVX2 or AVX-512 intrinsics,
/// which the caller must be compiled for.
pub(crate) type Form = u8;
/// The portable loops, for whatever the build targets.
pub(crate) const PORTABLE: Form = 0;
/// AVX2 intrinsics.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) const AVX2: Form = 1;
/// AVX-512F intrinsics.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) const AVX512: Form = 2;

/// The best form this CPU runs: AVX-512 where it has AVX-512F, AVX2 where
/// it has AVX2, FMA and POPCNT, else the portable loops.
pub(crate) fn best_form() -> Form {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            return AVX512;
        }
        if has_avx2_fma() {
            return AVX2;
        }
    }
    PORTABLE
}

/// The form a batch's kernels take for [`QueryOptions::isa`](crate::QueryOptions::isa):
/// `Avx512` and `Avx2` theirs where the CPU has them, the other sets the
/// portable loops, and `Auto` (or a set the CPU lacks) [`best_form`]. (The
/// dispatchers check the CPU again before they run a form's kernels.)
pub(crate) fn form_of(isa: segdist::batch::Isa) -> Form {
    use segdist::batch::Isa;
    match isa {
        Isa::Auto => best_form(),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 if std::is_x86_feature_detected!("avx512f") => AVX512,
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 if has_avx2_fma() => AVX2,
        Isa::Avx512 | Isa::Avx2 => best_form(),
        _ => PORTABLE,
    }
}

/// The instruction set a batch's accurate evaluations run in for
/// [`QueryOptions::isa`](crate::QueryOptions::isa): itself where the CPU
/// has it, else `Auto` (so that the evaluation cannot fail).
pub(crate) fn kernel_isa(isa: segdist::batch::Isa) -> segdist::batch::Isa {
    if isa.is_available() {
        isa
    } else {
        segdist::batch::Isa::Auto
    }
}

/// Segments per leaf and children per node. Eight `f64` lanes fill one
/// AVX-512 register or two AVX2 ones.
pub(crate) const B: usize = 8;
/// All `B` lanes, a bit each.
const FULL: u32 = (1 << B) - 1;

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
    /// segments from `lo` to `hi`. `V` ([`Form`]): with AVX-512 or AVX2
    /// intrinsics, which the caller must be compiled for (LLVM made two
    /// lanes at a time and scalar compares of the portable loops), or the
    /// portable loops; the same mask in every form.
    #[inline(always)]
    pub(crate) fn meets<const V: Form>(&self, qlo: &[f64; D], qhi: &[f64; D], segments: bool) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if V == AVX512 {
            // SAFETY: the caller runs this only where the CPU has AVX-512F.
            return unsafe { self.meets_avx512(qlo, qhi, segments) };
        }
        #[cfg(target_arch = "x86_64")]
        if V == AVX2 {
            // SAFETY: the caller runs this only where the CPU has AVX2.
            return unsafe { self.meets_avx2(qlo, qhi, segments) };
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

    /// [`meets`](Self::meets) with AVX2: two halves of four lanes.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn meets_avx2(&self, qlo: &[f64; D], qhi: &[f64; D], segments: bool) -> u32 {
        use std::arch::x86_64::*;
        let mut mask = 0u32;
        for h in 0..2 {
            let mut m = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
            for k in 0..D {
                // SAFETY: each column holds B = 8 numbers, of which lanes
                // `4h..4h + 4` are read.
                let (mut x, mut y) = unsafe {
                    (_mm256_loadu_pd(self.lo[k].as_ptr().add(4 * h)), _mm256_loadu_pd(self.hi[k].as_ptr().add(4 * h)))
                };
                if segments {
                    // (`min_pd(x, y)` is `if x < y { x } else { y }`, as
                    // `fmin`; likewise `max_pd`.)
                    (x, y) = (_mm256_min_pd(x, y), _mm256_max_pd(x, y));
                }
                let inside = _mm256_and_pd(
                    _mm256_cmp_pd::<_CMP_LE_OQ>(x, _mm256_set1_pd(qhi[k])),
                    _mm256_cmp_pd::<_CMP_GE_OQ>(y, _mm256_set1_pd(qlo[k])),
                );
                m = _mm256_and_pd(m, inside);
            }
            mask |= (_mm256_movemask_pd(m) as u32) << (4 * h);
        }
        mask
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
        Level { blocks: crate::mem::big_vec_of(Block::EMPTY, len.div_ceil(B)) }
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
    // Inlined, its single-part case without a call: returned from a call
    // through memory, written a field at a time and read back two at a
    // time, the triple stalled its reader (a failed store forwarding, the
    // hottest load of a `within` query's answers).
    #[inline(always)]
    fn locate(&self, feature: u32, local: u32) -> (usize, usize, usize) {
        let f = (feature & !MULTI_PART) as usize;
        if feature & MULTI_PART == 0 {
            return (f, 0, local as usize);
        }
        self.locate_in_parts(f, local)
    }

    /// [`locate`](Self::locate) for a feature of several parts.
    #[inline(never)]
    fn locate_in_parts(&self, f: usize, local: u32) -> (usize, usize, usize) {
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

impl<const D: usize> Index<D> {
    /// The index over its tree (built by [`IndexBuilder::build`](crate::IndexBuilder::build)),
    /// with each lane's `1/|b − a|²` worked out (on all the workers where `par`).
    pub(crate) fn from_parts(
        leaves: Vec<Block<D>>,
        levels: Vec<Level<D>>,
        segs: Vec<Seg<D>>,
        topology: Topology,
        curve: Curve<D>,
        par: bool,
    ) -> Self {
        let inv = |leaf: &Block<D>| {
            std::array::from_fn(|c| {
                let a: [f64; D] = std::array::from_fn(|k| leaf.lo[k][c]);
                let b: [f64; D] = std::array::from_fn(|k| leaf.hi[k][c]);
                inv_length2(&a, &b)
            })
        };
        let mut inv_column = crate::mem::big_vec(leaves.len());
        if par {
            use rayon::prelude::*;
            inv_column.par_extend(leaves.par_iter().with_min_len(1 << 10).map(inv));
        } else {
            inv_column.extend(leaves.iter().map(inv));
        }
        let inv = inv_column;
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

    /// Asks for the cache lines of a node's or leaf's block ahead of a
    /// read: a hint, as [`prefetch_segment`](Self::prefetch_segment).
    #[inline(always)]
    pub(crate) fn prefetch_block(block: &Block<D>) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let p = (block as *const Block<D>).cast::<i8>();
            // SAFETY: a prefetch never faults; every address lies within
            // `block`.
            for line in (0..std::mem::size_of::<Block<D>>()).step_by(64) {
                unsafe { _mm_prefetch::<_MM_HINT_T0>(p.add(line)) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = block;
    }

    /// Asks for leaf `j`'s `1/|b − a|²` line, which its scan reads beside
    /// the leaf's block: a hint, as [`prefetch_segment`](Self::prefetch_segment).
    #[inline(always)]
    pub(crate) fn prefetch_inv(&self, j: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(inv) = self.inv.get(j) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch never faults; both addresses lie in `inv`.
            let p = inv.as_ptr().cast::<i8>();
            // (64 bytes, not aligned to a line: both ends.)
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(p);
                _mm_prefetch::<_MM_HINT_T0>(p.add(63));
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = j;
    }

    /// The curve that orders query batches.
    pub(crate) fn curve(&self) -> &Curve<D> {
        &self.curve
    }
}
