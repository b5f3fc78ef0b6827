//! What a search returns: [`Hit`] (public), and the slot and projection
//! ([`Found`]) the searches pass between them.

use super::*;

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
    #[inline]
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
    pub(super) fn before(&self, other: &Self) -> bool {
        (self.proj.distance, self.id) < (other.proj.distance, other.id)
    }
}
