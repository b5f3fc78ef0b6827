//! Building an [`Index`]: [`IndexBuilder`] collects features into flat
//! arrays, validates them, orders the segments along a space-filling curve
//! and packs a tree of boxes over them.

use std::fmt;

use rayon::prelude::*;

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
        let segments = self.vertices.len().saturating_sub(self.part_start.len());
        self.build_on(segments >= PAR_MIN)
    }

    /// [`build`](Self::build) on all the workers (`par`) or on the calling
    /// thread: the same index either way.
    fn build_on(self, par: bool) -> Result<Index<D>, BuildError> {
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

        // Every segment's curve key, and where it comes from, in push
        // order; then sorted by key. Large inputs on all the workers: the
        // index is the same on any number (the order is the keys', ties
        // broken by push order).
        let n = vertices.len() - (part_start.len() - 1);
        let (lo, hi) = bounds(&vertices, par);
        let curve = Curve::new(lo, hi);
        let layout = Layout { vertices: &vertices, part_start: &part_start, feature_start: &feature_start, curve };
        let mut keys = vec![0u64; n];
        let mut from = vec![Origin { vertex: 0, feature: 0, local: 0 }; n];
        layout.keys(0..feature_start.len() - 1, &mut keys, &mut from, par);
        crate::batch::radix_sort_high(&mut keys, 32, par);

        // The segments in key order, and the leaves' boxes over them.
        // Padding lanes (at the origin) are computed with the real ones and
        // ignored.
        let seg = |&key: &u64| {
            let f = from[(key & 0xffff_ffff) as usize];
            let g = f.vertex as usize;
            Seg { a: vertices[g], b: vertices[g + 1], feature: f.feature, local: f.local }
        };
        // The index's arrays are read at random by queries: in huge pages
        // where the system allows (see `mem`), a query's reads miss the TLB
        // far less.
        let mut segs: Vec<Seg<D>> = crate::mem::big_vec(n);
        if par {
            segs.par_extend(keys.par_iter().with_min_len(1 << 12).map(seg));
        } else {
            segs.extend(keys.iter().map(seg));
        }
        drop((keys, from, vertices));
        let mut leaves = crate::mem::big_vec_of(Block::<D>::ZERO, n.div_ceil(B));
        let fill = |(leaf, segs): (&mut Block<D>, &[Seg<D>])| {
            for (i, s) in segs.iter().enumerate() {
                for k in 0..D {
                    leaf.lo[k][i] = s.a[k];
                    leaf.hi[k][i] = s.b[k];
                }
            }
        };
        if par {
            leaves.par_iter_mut().zip(segs.par_chunks(B)).with_min_len(1 << 9).for_each(fill);
        } else {
            leaves.iter_mut().zip(segs.chunks(B)).for_each(fill);
        }

        let mut levels = Vec::new();
        if n > 0 {
            let mut level = leaf_level(&leaves, n, par);
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
        Ok(Index::from_parts(leaves, levels, segs, topology, curve, par))
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

/// At least this many segments are built on all the workers (below, the
/// threads cost more than they save).
const PAR_MIN: usize = 1 << 14;

/// Segments' keys per task of the parallel build: at least this many.
const KEYS_GRAIN: usize = 1 << 13;

/// Where a segment comes from: its start vertex, its feature (with
/// [`MULTI_PART`] for several parts) and its number within the feature.
#[derive(Clone, Copy)]
struct Origin {
    vertex: u32,
    feature: u32,
    local: u32,
}

/// The pushed features, as [`IndexBuilder::build`] reads them (offsets with
/// their trailing totals).
struct Layout<'a, const D: usize> {
    vertices: &'a [[f64; D]],
    part_start: &'a [usize],
    feature_start: &'a [usize],
    curve: Curve<D>,
}

impl<const D: usize> Layout<'_, D> {
    /// The number, in push order, of the first segment of feature `f`.
    fn first_segment(&self, f: usize) -> usize {
        let p = self.feature_start[f];
        self.part_start[p] - p
    }

    /// The keys (the curve key of the segment's midpoint in the high 32
    /// bits, its number in push order in the low) and origins of the
    /// segments of `features`, into `keys` and `from` (theirs exactly);
    /// halves on two workers where `par`.
    fn keys(&self, features: std::ops::Range<usize>, keys: &mut [u64], from: &mut [Origin], par: bool) {
        if par && features.len() > 1 && keys.len() > KEYS_GRAIN {
            let mid = features.start + features.len() / 2;
            let at = self.first_segment(mid) - self.first_segment(features.start);
            let (k0, k1) = keys.split_at_mut(at);
            let (f0, f1) = from.split_at_mut(at);
            rayon::join(|| self.keys(features.start..mid, k0, f0, true), || self.keys(mid..features.end, k1, f1, true));
            return;
        }
        let mut s = 0;
        let first = self.first_segment(features.start);
        for f in features {
            let (p0, p1) = (self.feature_start[f], self.feature_start[f + 1]);
            let flag = if p1 - p0 > 1 { MULTI_PART } else { 0 };
            let mut local = 0u32;
            for p in p0..p1 {
                for g in self.part_start[p]..self.part_start[p + 1] - 1 {
                    let (a, b) = (&self.vertices[g], &self.vertices[g + 1]);
                    let mid: [f64; D] = std::array::from_fn(|k| 0.5 * a[k] + 0.5 * b[k]);
                    keys[s] = ((self.curve.key(&mid) >> key_shift::<D>()) << 32) | (first + s) as u64;
                    from[s] = Origin { vertex: g as u32, feature: f as u32 | flag, local };
                    local += 1;
                    s += 1;
                }
            }
        }
        debug_assert_eq!(s, keys.len());
    }
}

/// The bounding box of `vertices` (on all the workers where `par`).
fn bounds<const D: usize>(vertices: &[[f64; D]], par: bool) -> ([f64; D], [f64; D]) {
    let empty = || ([f64::INFINITY; D], [f64::NEG_INFINITY; D]);
    let add = |(mut lo, mut hi): ([f64; D], [f64; D]), v: &[f64; D]| {
        for k in 0..D {
            lo[k] = lo[k].min(v[k]);
            hi[k] = hi[k].max(v[k]);
        }
        (lo, hi)
    };
    let join = |a: ([f64; D], [f64; D]), b: ([f64; D], [f64; D])| {
        (std::array::from_fn(|k| a.0[k].min(b.0[k])), std::array::from_fn(|k| a.1[k].max(b.1[k])))
    };
    if par {
        vertices.par_iter().with_min_len(1 << 14).fold(empty, add).reduce(empty, join)
    } else {
        vertices.iter().fold(empty(), add)
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

/// Boxes over the leaves (`B` consecutive segments each; `n` in all), on
/// all the workers where `par`.
fn leaf_level<const D: usize>(leaves: &[Block<D>], n: usize, par: bool) -> Level<D> {
    let boxes = |(j, leaf): (usize, &Block<D>)| {
        let count = (n - j * B).min(B);
        std::array::from_fn::<_, D, _>(|k| {
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for c in 0..count {
                lo = lo.min(leaf.lo[k][c]).min(leaf.hi[k][c]);
                hi = hi.max(leaf.lo[k][c]).max(leaf.hi[k][c]);
            }
            (lo, hi)
        })
    };
    let boxes: Vec<[(f64, f64); D]> = if par {
        leaves.par_iter().enumerate().with_min_len(1 << 10).map(boxes).collect()
    } else {
        leaves.iter().enumerate().map(boxes).collect()
    };
    let mut level = Level::empty(leaves.len());
    for (j, b) in boxes.iter().enumerate() {
        for (k, &(lo, hi)) in b.iter().enumerate() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Features of every kind (segments, polylines, several parts, no
    /// parts), more segments than [`PAR_MIN`], some duplicated.
    fn features(seed: u64) -> IndexBuilder<2> {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut b = IndexBuilder::new();
        let point = |r: &mut rand_chacha::ChaCha8Rng| [r.gen_range(-50.0..50.0), r.gen_range(-50.0..50.0)];
        while b.vertices.len() < 3 * PAR_MIN {
            match r.gen_range(0..10) {
                0 => b.push_multi_polyline(std::iter::empty::<[[f64; 2]; 2]>()),
                1..=4 => b.push_segment(point(&mut r), point(&mut r)),
                5 => b.push_segment([1.0, 1.0], [2.0, 2.0]),
                _ => {
                    let parts: Vec<Vec<[f64; 2]>> = (0..r.gen_range(1..4))
                        .map(|_| (0..r.gen_range(2..9)).map(|_| point(&mut r)).collect())
                        .collect();
                    b.push_multi_polyline(parts)
                }
            };
        }
        b
    }

    #[test]
    fn the_parallel_build_is_the_sequential_one() {
        for seed in [1, 2] {
            let one = format!("{:?}", features(seed).build_on(false).unwrap());
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let many = pool.install(|| format!("{:?}", features(seed).build_on(true).unwrap()));
                assert!(one == many, "seed {seed}, {threads} threads");
            }
        }
    }
}
