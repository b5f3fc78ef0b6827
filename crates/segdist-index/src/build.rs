//! Building an [`Index`]: [`IndexBuilder`] collects features into flat
//! arrays, validates them, orders the segments along a space-filling curve
//! and packs a tree of boxes over them.

use std::fmt;

use rayon::slice::ParallelSliceMut;

use crate::hilbert::Curve;
use crate::index::{Block, Index, Level, Seg, Topology, B, MULTI_PART};

/// Collects segments, polylines and multi-polylines into flat arrays (no
/// allocation per feature) and builds an [`Index`] over them.
///
/// Every `push_*` returns the new feature's id: 0, 1, 2, … in push order.
/// Coordinates may be `f32` or `f64` (`f32` is widened exactly). Validation
/// happens in [`build`](Self::build), so pushing never fails.
///
/// # Example
///
/// ```
/// use segdist_index::IndexBuilder;
///
/// let mut b = IndexBuilder::<2>::new();
/// let road = b.push_polyline(&[[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]]);
/// let wall = b.push_segment([20.0, 0.0], [20.0, 5.0]);
/// let index = b.build()?;
///
/// let hit = index.nearest([12.0, 4.0]).unwrap();
/// assert_eq!((hit.feature, hit.segment, hit.point), (road, 1, [10.0, 4.0]));
/// assert_eq!(index.nearest([19.0, 1.0]).unwrap().feature, wall);
/// # Ok::<(), segdist_index::BuildError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct IndexBuilder<const D: usize> {
    vertices: Vec<[f64; D]>,
    /// First vertex of every part (no trailing total).
    part_start: Vec<usize>,
    /// First part of every feature (no trailing total).
    feature_start: Vec<usize>,
}

impl<const D: usize> IndexBuilder<D> {
    /// An empty builder.
    ///
    /// ```
    /// let index = segdist_index::IndexBuilder::<3>::new().build().unwrap();
    /// assert!(index.is_empty());
    /// assert!(index.nearest([0.0, 0.0, 0.0]).is_none());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        let () = crate::index::Dim::<D>::CHECK;
        IndexBuilder { vertices: Vec::new(), part_start: Vec::new(), feature_start: Vec::new() }
    }

    /// An empty builder with room for `vertices` vertices in `parts` parts,
    /// so that pushing allocates nothing.
    ///
    /// ```
    /// let mut b = segdist_index::IndexBuilder::<2>::with_capacity(4, 2);
    /// b.push_segment([0.0, 0.0], [1.0, 0.0]);
    /// b.push_segment([0.0, 1.0], [1.0, 1.0]);
    /// assert_eq!(b.build().unwrap().len(), 2);
    /// ```
    #[must_use]
    pub fn with_capacity(vertices: usize, parts: usize) -> Self {
        let mut b = Self::new();
        b.vertices.reserve(vertices);
        b.part_start.reserve(parts);
        b.feature_start.reserve(parts);
        b
    }

    /// Adds one segment as a feature of one part with two vertices; its hits
    /// have `part = 0`, `segment = 0`.
    ///
    /// ```
    /// let mut b = segdist_index::IndexBuilder::<2>::new();
    /// assert_eq!(b.push_segment([0.0, 0.0], [1.0, 0.0]), 0);
    /// assert_eq!(b.push_segment([0.0f32, 1.0], [1.0, 1.0]), 1);
    /// ```
    pub fn push_segment<T: Copy + Into<f64>>(&mut self, a: [T; D], b: [T; D]) -> usize {
        self.push_multi_polyline([[a, b]])
    }

    /// Adds a polyline (linestring) of at least two vertices as a feature of
    /// one part; its segment `i` runs from vertex `i` to vertex `i + 1`.
    ///
    /// ```
    /// let mut b = segdist_index::IndexBuilder::<3>::new();
    /// let id = b.push_polyline(&[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]);
    /// let index = b.build().unwrap();
    /// let hit = index.nearest([2.0, 0.5, 0.0]).unwrap();
    /// assert_eq!((hit.feature, hit.part, hit.segment), (id, 0, 1));
    /// ```
    pub fn push_polyline<T: Copy + Into<f64>>(&mut self, vertices: &[[T; D]]) -> usize {
        self.push_multi_polyline([vertices])
    }

    /// Adds a multi-polyline (multi-linestring): a feature of several parts,
    /// each a polyline of at least two vertices. A feature with no parts is
    /// allowed and is never a hit.
    ///
    /// ```
    /// let mut b = segdist_index::IndexBuilder::<2>::new();
    /// let parts: [&[[f64; 2]]; 2] = [&[[0.0, 0.0], [1.0, 0.0]], &[[5.0, 0.0], [5.0, 1.0], [6.0, 1.0]]];
    /// let id = b.push_multi_polyline(parts);
    /// let hit = b.build().unwrap().nearest([6.0, 2.0]).unwrap();
    /// assert_eq!((hit.feature, hit.part, hit.segment), (id, 1, 1));
    /// ```
    pub fn push_multi_polyline<T, P, I>(&mut self, parts: I) -> usize
    where
        T: Copy + Into<f64>,
        P: AsRef<[[T; D]]>,
        I: IntoIterator<Item = P>,
    {
        let id = self.feature_start.len();
        self.feature_start.push(self.part_start.len());
        for part in parts {
            self.part_start.push(self.vertices.len());
            self.vertices.extend(part.as_ref().iter().map(|v| v.map(Into::into)));
        }
        id
    }

    /// [`build`](Self::build), and with the index the cumulative length of
    /// every vertex within its part, in push order (what
    /// [`along`](crate::along) and [`fraction`](crate::fraction) take, one
    /// part's run at a time): linear referencing for callers that keep their
    /// features in flat arrays, as the CLI and SQL's `segdist_snap` do.
    ///
    /// # Errors
    /// As [`build`](Self::build).
    ///
    /// ```
    /// let mut b = segdist_index::IndexBuilder::<2>::new();
    /// b.push_polyline(&[[0.0, 0.0], [3.0, 4.0], [3.0, 6.0]]);
    /// b.push_segment([10.0, 0.0], [11.0, 0.0]);
    /// let (index, cum) = b.build_with_lengths().unwrap();
    /// assert_eq!(cum, [0.0, 5.0, 7.0, 0.0, 1.0]);
    /// let hit = index.nearest([4.0, 5.0]).unwrap();
    /// assert_eq!(segdist_index::along(&cum[..3], hit.segment, hit.t), 6.0);
    /// ```
    pub fn build_with_lengths(self) -> Result<(Index<D>, Vec<f64>), BuildError> {
        let mut cum = Vec::with_capacity(self.vertices.len());
        for (i, &start) in self.part_start.iter().enumerate() {
            let end = self.part_start.get(i + 1).copied().unwrap_or(self.vertices.len());
            cum.extend(crate::cumulative_lengths(&self.vertices[start..end]));
        }
        Ok((self.build()?, cum))
    }

    /// Validates the input and builds the index in `O(n log n)`: segments are
    /// sorted along a Hilbert curve (Morton in 3D) and packed into a static
    /// tree of bounding boxes, `8` per node.
    ///
    /// # Errors
    /// [`BuildError::NonFinite`] for a NaN or infinite coordinate,
    /// [`BuildError::TooFewVertices`] for a part with fewer than two
    /// vertices, [`BuildError::TooLarge`] beyond `u32::MAX - 1` vertices. The
    /// first error in push order is reported.
    ///
    /// ```
    /// use segdist_index::{BuildError, IndexBuilder};
    ///
    /// let mut b = IndexBuilder::<2>::new();
    /// b.push_polyline(&[[0.0, 0.0], [1.0, 0.0]]);
    /// b.push_polyline(&[[0.0, 0.0], [1.0, 0.0], [f64::NAN, 2.0]]);
    /// assert_eq!(b.build().unwrap_err(), BuildError::NonFinite { feature: 1, part: 0, vertex: 2 });
    /// ```
    pub fn build(self) -> Result<Index<D>, BuildError> {
        let IndexBuilder { vertices, mut part_start, mut feature_start } = self;
        if vertices.len() >= u32::MAX as usize
            || part_start.len() >= u32::MAX as usize
            || feature_start.len() >= MULTI_PART as usize
        {
            return Err(BuildError::TooLarge { vertices: vertices.len() });
        }
        part_start.push(vertices.len());
        feature_start.push(part_start.len() - 1);
        validate(&vertices, &part_start, &feature_start)?;

        // Every segment, named by its start vertex.
        let parts = part_start.len() - 1;
        let mut order: Vec<u64> = Vec::with_capacity(vertices.len().saturating_sub(parts));
        let (mut lo, mut hi) = ([f64::INFINITY; D], [f64::NEG_INFINITY; D]);
        for v in &vertices {
            for k in 0..D {
                lo[k] = lo[k].min(v[k]);
                hi[k] = hi[k].max(v[k]);
            }
        }
        let curve = Curve::new(lo, hi);
        // The feature (flagged if it has several parts) and the segment
        // number within the feature of every segment's start vertex, while
        // segments are reordered.
        let mut feature_of = vec![0u32; vertices.len()];
        let mut local_of = vec![0u32; vertices.len()];
        for (f, w) in feature_start.windows(2).enumerate() {
            let flag = if w[1] - w[0] > 1 { MULTI_PART } else { 0 };
            let mut local = 0u32;
            for q in w[0]..w[1] {
                for g in part_start[q]..part_start[q + 1] - 1 {
                    feature_of[g] = f as u32 | flag;
                    local_of[g] = local;
                    local += 1;
                }
            }
        }
        for w in part_start.windows(2) {
            for g in w[0]..w[1] - 1 {
                let (a, b) = (&vertices[g], &vertices[g + 1]);
                let mid: [f64; D] = std::array::from_fn(|k| 0.5 * a[k] + 0.5 * b[k]);
                // Key in the high 32 bits, the vertex (unique) in the low:
                // one u64 sort, deterministic.
                order.push(((curve.key(&mid) >> key_shift::<D>()) << 32) | g as u64);
            }
        }
        order.par_sort_unstable();

        let n = order.len();
        // Padding lanes (at the origin) are computed with the real ones and
        // ignored.
        let mut leaves = vec![Block::<D>::ZERO; n.div_ceil(B)];
        let mut segs = Vec::with_capacity(n);
        for (i, &o) in order.iter().enumerate() {
            let g = (o & 0xffff_ffff) as usize;
            segs.push(Seg { a: vertices[g], b: vertices[g + 1], feature: feature_of[g], local: local_of[g] });
            for k in 0..D {
                leaves[i / B].lo[k][i % B] = vertices[g][k];
                leaves[i / B].hi[k][i % B] = vertices[g + 1][k];
            }
        }
        drop((order, vertices, feature_of, local_of));

        let mut levels = Vec::new();
        if n > 0 {
            let mut level = leaf_level(&leaves, n);
            let mut count = n.div_ceil(B);
            while count > 1 {
                let next = parent_level(&level, count);
                levels.push(level);
                level = next;
                count = count.div_ceil(B);
            }
            levels.push(level);
        }
        let topology = Topology {
            part_start: part_start.into_iter().map(|s| s as u32).collect(),
            feature_start: feature_start.into_iter().map(|s| s as u32).collect(),
        };
        Ok(Index::from_parts(leaves, levels, segs, topology, curve))
    }
}

/// Bits the curve key is shifted right by so that it fits in 32 bits.
const fn key_shift<const D: usize>() -> u32 {
    if D == 2 {
        0
    } else {
        31
    }
}

/// Reports the first non-finite vertex or short part, in push order.
fn validate<const D: usize>(
    vertices: &[[f64; D]],
    part_start: &[usize],
    feature_start: &[usize],
) -> Result<(), BuildError> {
    for f in 0..feature_start.len() - 1 {
        for p in feature_start[f]..feature_start[f + 1] {
            let part = &vertices[part_start[p]..part_start[p + 1]];
            if part.len() < 2 {
                return Err(BuildError::TooFewVertices {
                    feature: f,
                    part: p - feature_start[f],
                    vertices: part.len(),
                });
            }
            if let Some(v) = part.iter().position(|v| v.iter().any(|c| !c.is_finite())) {
                return Err(BuildError::NonFinite { feature: f, part: p - feature_start[f], vertex: v });
            }
        }
    }
    Ok(())
}

/// Boxes over the leaves (`B` consecutive segments each; `n` in all).
fn leaf_level<const D: usize>(leaves: &[Block<D>], n: usize) -> Level<D> {
    let mut level = Level::empty(leaves.len());
    for (j, leaf) in leaves.iter().enumerate() {
        let count = (n - j * B).min(B);
        for k in 0..D {
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for c in 0..count {
                lo = lo.min(leaf.lo[k][c]).min(leaf.hi[k][c]);
                hi = hi.max(leaf.lo[k][c]).max(leaf.hi[k][c]);
            }
            level.set(k, j, lo, hi);
        }
    }
    level
}

/// Boxes over groups of `B` consecutive nodes of `child` (which has `count`
/// real nodes).
fn parent_level<const D: usize>(child: &Level<D>, count: usize) -> Level<D> {
    let nodes = count.div_ceil(B);
    let mut level = Level::empty(nodes);
    for j in 0..nodes {
        for k in 0..D {
            // Empty (padding) boxes leave min and max alone.
            let block = &child.blocks[j];
            let lo = block.lo[k].iter().fold(f64::INFINITY, |m, &x| m.min(x));
            let hi = block.hi[k].iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x));
            level.set(k, j, lo, hi);
        }
    }
    level
}

/// Why an index could not be built. Positions count from 0 within the
/// feature (`part`) and the part (`vertex`).
///
/// ```
/// use segdist_index::{BuildError, IndexBuilder};
///
/// let mut b = IndexBuilder::<2>::new();
/// b.push_multi_polyline([&[[0.0, 0.0], [1.0, 1.0]][..], &[[2.0, 2.0]][..]]);
/// let e = b.build().unwrap_err();
/// assert_eq!(e, BuildError::TooFewVertices { feature: 0, part: 1, vertices: 1 });
/// assert_eq!(e.to_string(), "feature 0, part 1: a part needs at least 2 vertices, it has 1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// A coordinate is NaN or infinite.
    NonFinite {
        /// The feature's id (push order).
        feature: usize,
        /// The part within the feature.
        part: usize,
        /// The vertex within the part.
        vertex: usize,
    },
    /// A part has fewer than two vertices, so no segment.
    TooFewVertices {
        /// The feature's id (push order).
        feature: usize,
        /// The part within the feature.
        part: usize,
        /// How many vertices it has.
        vertices: usize,
    },
    /// More vertices or parts than an index holds (`u32::MAX - 1`), or
    /// more than 2^31 features.
    TooLarge {
        /// How many vertices were pushed.
        vertices: usize,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BuildError::NonFinite { feature, part, vertex } => {
                write!(f, "feature {feature}, part {part}, vertex {vertex}: a coordinate is not finite")
            }
            BuildError::TooFewVertices { feature, part, vertices } => {
                write!(f, "feature {feature}, part {part}: a part needs at least 2 vertices, it has {vertices}")
            }
            BuildError::TooLarge { vertices } => {
                write!(f, "{vertices} vertices: an index holds at most {}", u32::MAX - 1)
            }
        }
    }
}

impl std::error::Error for BuildError {}
