//! Linear referencing on one polyline: where along the line a point projects
//! (PostGIS `ST_LineLocatePoint`, shapely `line_locate_point`) and the point
//! at a distance along it (`ST_LineInterpolatePoint`, `line_interpolate_point`),
//! in `O(log V)` through an [`Index`] over its segments and the cumulative
//! lengths of its vertices.

use segdist::Segment;

use crate::{BuildError, Index, IndexBuilder, QueryOptions};

/// A polyline prepared for linear referencing.
///
/// Lengths are those of the accurate kernel (each segment's length
/// faithfully rounded) summed with compensation, so `along` values carry a
/// relative error of a few units of `f64` roundoff, however many vertices the
/// line has.
///
/// # Example
///
/// ```
/// use segdist_index::Polyline;
///
/// let route = Polyline::<2>::new(&[[0.0, 0.0], [3.0, 0.0], [3.0, 4.0]])?;
/// assert_eq!(route.length(), 7.0);
///
/// let at = route.locate([4.0, 1.0]).unwrap();
/// assert_eq!((at.segment, at.t, at.along, at.distance), (1, 0.25, 4.0, 1.0));
/// assert_eq!(at.fraction, 4.0 / 7.0);
///
/// assert_eq!(route.point_at(5.0), Some([3.0, 2.0]));
/// assert_eq!(route.point_at_fraction(1.0), Some([3.0, 4.0]));
/// # Ok::<(), segdist_index::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Polyline<const D: usize> {
    index: Index<D>,
    vertices: Vec<[f64; D]>,
    /// Distance along the line of every vertex; `cum[0] = 0`.
    cum: Vec<f64>,
}

/// Where a point projects onto a [`Polyline`].
///
/// ```
/// let line = segdist_index::Polyline::<2>::new(&[[0.0, 0.0], [10.0, 0.0]])?;
/// let at = line.locate([2.5, -1.0]).unwrap();
/// assert_eq!((at.point, at.along, at.fraction), ([2.5, 0.0], 2.5, 0.25));
/// # Ok::<(), segdist_index::BuildError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Location<const D: usize> {
    /// The segment: from vertex `segment` to `segment + 1`.
    pub segment: usize,
    /// Where the closest point lies on that segment, in `[0, 1]`.
    pub t: f64,
    /// The closest point of the line.
    pub point: [f64; D],
    /// The distance from the query point, faithfully rounded.
    pub distance: f64,
    /// The distance along the line from its first vertex to `point`.
    pub along: f64,
    /// `along` as a fraction of the line's length, in `[0, 1]` (`0` for a
    /// line of zero length).
    pub fraction: f64,
}

impl<const D: usize> Polyline<D> {
    /// Prepares a polyline of at least two vertices (`f32` or `f64`).
    ///
    /// # Errors
    /// [`BuildError::TooFewVertices`] for fewer than two vertices,
    /// [`BuildError::NonFinite`] naming the first non-finite vertex.
    ///
    /// ```
    /// use segdist_index::{BuildError, Polyline};
    ///
    /// let e = Polyline::<2>::new(&[[0.0, 0.0], [f64::INFINITY, 1.0]]).unwrap_err();
    /// assert_eq!(e, BuildError::NonFinite { feature: 0, part: 0, vertex: 1 });
    /// ```
    pub fn new<T: Copy + Into<f64>>(vertices: &[[T; D]]) -> Result<Self, BuildError> {
        let mut b = IndexBuilder::with_capacity(vertices.len(), 1);
        b.push_polyline(vertices);
        let index = b.build()?;
        let vertices: Vec<[f64; D]> = vertices.iter().map(|v| v.map(Into::into)).collect();
        let cum = cumulative_lengths(&vertices);
        Ok(Polyline { index, vertices, cum })
    }

    /// The vertices.
    ///
    /// ```
    /// let line = segdist_index::Polyline::<2>::new(&[[0.0f32, 0.0], [1.0, 0.0]])?;
    /// assert_eq!(line.vertices(), &[[0.0, 0.0], [1.0, 0.0]]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn vertices(&self) -> &[[f64; D]] {
        &self.vertices
    }

    /// The total length (`+inf` only if it exceeds `f64::MAX`).
    ///
    /// ```
    /// let line = segdist_index::Polyline::<3>::new(&[[0.0, 0.0, 0.0], [1.0, 2.0, 2.0], [1.0, 2.0, 5.0]])?;
    /// assert_eq!(line.length(), 6.0);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn length(&self) -> f64 {
        self.cum[self.cum.len() - 1]
    }

    /// The distance along the line of vertex `i`, `None` past the end.
    ///
    /// ```
    /// let line = segdist_index::Polyline::<2>::new(&[[0.0, 0.0], [3.0, 4.0], [3.0, 5.0]])?;
    /// assert_eq!(line.vertex_along(1), Some(5.0));
    /// assert_eq!(line.vertex_along(3), None);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn vertex_along(&self, i: usize) -> Option<f64> {
        self.cum.get(i).copied()
    }

    /// Projects `p` onto the line: the closest point (ties to the lowest
    /// segment, so a vertex belongs to the segment ending there) and its
    /// distance along the line. `None` for a non-finite `p`.
    ///
    /// ```
    /// let line = segdist_index::Polyline::<2>::new(&[[0.0, 0.0], [2.0, 0.0], [2.0, 2.0]])?;
    /// let at = line.locate([3.0, -1.0]).unwrap(); // nearest to the corner
    /// assert_eq!((at.segment, at.t, at.along), (0, 1.0, 2.0));
    /// assert!(line.locate([f64::NAN, 0.0]).is_none());
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn locate(&self, p: [f64; D]) -> Option<Location<D>> {
        self.index.nearest(p).map(|h| self.location(h.segment, h.t, h.point, h.distance))
    }

    /// [`locate`](Self::locate) for many points, in input order, on all
    /// cores (see [`Index::nearest_many`]); `opts.max_distance` leaves
    /// points farther than it unlocated.
    ///
    /// ```
    /// use segdist_index::{Polyline, QueryOptions};
    ///
    /// let line = Polyline::<2>::new(&[[0.0, 0.0], [10.0, 0.0]])?;
    /// let at = line.locate_many(&[[1.0, 1.0], [9.0, -1.0]], &QueryOptions::default());
    /// assert_eq!(at.iter().map(|l| l.unwrap().along).collect::<Vec<_>>(), [1.0, 9.0]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn locate_many(&self, points: &[[f64; D]], opts: &QueryOptions) -> Vec<Option<Location<D>>> {
        let map = |f| {
            let h = self.index.hit(&f);
            self.location(h.segment, h.t, h.point, h.distance)
        };
        let mut found = Vec::new();
        self.index.nearest_in_order(points, opts, &map, false, &mut found);
        found
    }

    fn location(&self, segment: usize, t: f64, point: [f64; D], distance: f64) -> Location<D> {
        let along = along(&self.cum, segment, t);
        Location { segment, t, point, distance, along, fraction: fraction(&self.cum, along) }
    }

    /// The point at distance `along` from the first vertex, clamped to the
    /// line (negative → first vertex, past the end → last vertex). `None`
    /// for NaN.
    ///
    /// ```
    /// let line = segdist_index::Polyline::<2>::new(&[[0.0, 0.0], [4.0, 0.0], [4.0, 4.0]])?;
    /// assert_eq!(line.point_at(6.0), Some([4.0, 2.0]));
    /// assert_eq!(line.point_at(-1.0), Some([0.0, 0.0]));
    /// assert_eq!(line.point_at(99.0), Some([4.0, 4.0]));
    /// assert_eq!(line.point_at(f64::NAN), None);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn point_at(&self, along: f64) -> Option<[f64; D]> {
        if along.is_nan() {
            return None;
        }
        let last = self.vertices.len() - 1;
        if along <= 0.0 {
            return Some(self.vertices[0]);
        }
        if along >= self.cum[last] {
            return Some(self.vertices[last]);
        }
        // The segment whose span [cum[i], cum[i+1]) holds `along`.
        let i = (self.cum.partition_point(|&c| c <= along) - 1).min(last - 1);
        let (c0, c1) = (self.cum[i], self.cum[i + 1]);
        let t = if c1 > c0 { ((along - c0) / (c1 - c0)).clamp(0.0, 1.0) } else { 0.0 };
        let (a, b) = (self.vertices[i], self.vertices[i + 1]);
        // Two-sided lerp: exact at both ends.
        Some(std::array::from_fn(|k| (1.0 - t) * a[k] + t * b[k]))
    }

    /// The point at `fraction` of the length (clamped to `[0, 1]`); `None`
    /// for NaN.
    ///
    /// ```
    /// let line = segdist_index::Polyline::<2>::new(&[[0.0, 0.0], [4.0, 0.0]])?;
    /// assert_eq!(line.point_at_fraction(0.25), Some([1.0, 0.0]));
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn point_at_fraction(&self, fraction: f64) -> Option<[f64; D]> {
        if fraction.is_nan() {
            return None;
        }
        if fraction >= 1.0 {
            return Some(self.vertices[self.vertices.len() - 1]);
        }
        self.point_at(fraction * self.length())
    }
}

/// The distance along a polyline of each of its vertices (`0` first):
/// faithfully rounded segment lengths summed with compensation, so the
/// relative error stays a few units of roundoff however many vertices.
/// [`Polyline`] keeps these; this is for callers that keep their own
/// geometry, such as one array per part of many features.
///
/// ```
/// let cum = segdist_index::cumulative_lengths(&[[0.0, 0.0], [3.0, 4.0], [3.0, 6.0]]);
/// assert_eq!(cum, [0.0, 5.0, 7.0]);
/// ```
#[must_use]
pub fn cumulative_lengths<const D: usize>(vertices: &[[f64; D]]) -> Vec<f64> {
    if vertices.is_empty() {
        return Vec::new();
    }
    cumulative(vertices.windows(2).map(|w| Segment::new(w[0], w[0]).distance(w[1])))
}

/// The running sums of `lengths`, starting at `0` (one more value than
/// lengths), compensated (Neumaier) so that the relative error stays a few
/// units of roundoff however many terms: [`cumulative_lengths`] with lengths
/// of another kind, such as geodesic ones.
///
/// ```
/// assert_eq!(segdist_index::cumulative([1.0, 1e-16, 1e-16, 3.0]), [0.0, 1.0, 1.0, 1.0000000000000002, 4.0]);
/// ```
#[must_use]
pub fn cumulative(lengths: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut cum = vec![0.0];
    cumulative_into(lengths, &mut cum);
    cum
}

/// [`cumulative`] without its leading `0`, appended to `out`: one running
/// sum per length, for callers that keep many lines' sums in one array
/// (nothing allocated per line).
///
/// ```
/// let mut out = vec![9.0];
/// segdist_index::cumulative_into([1.0, 1e-16, 1e-16, 3.0], &mut out);
/// assert_eq!(out, [9.0, 1.0, 1.0, 1.0000000000000002, 4.0]);
/// ```
pub fn cumulative_into(lengths: impl IntoIterator<Item = f64>, out: &mut Vec<f64>) {
    let (mut sum, mut comp) = (0.0f64, 0.0f64);
    for len in lengths {
        let t = sum + len;
        comp += if sum.abs() >= len.abs() { (sum - t) + len } else { (len - t) + sum };
        sum = t;
        out.push(sum + comp);
    }
}

/// The distance along a polyline of the point at `t` on its segment
/// `segment`, from the line's [`cumulative_lengths`]: exact at the vertices
/// (`t` = 0 or 1), otherwise one multiply-add of non-negative terms. `t` and
/// `segment` are those of a [`Hit`](crate::Hit) or [`Location`].
///
/// ```
/// let cum = segdist_index::cumulative_lengths(&[[0.0, 0.0], [4.0, 0.0], [4.0, 2.0]]);
/// assert_eq!(segdist_index::along(&cum, 1, 0.5), 5.0);
/// assert_eq!(segdist_index::along(&cum, 0, 1.0), 4.0);
/// ```
///
/// # Panics
/// If `segment + 1` is not an index of `cum` (a segment of another line).
#[must_use]
pub fn along(cum: &[f64], segment: usize, t: f64) -> f64 {
    if t == 0.0 {
        cum[segment]
    } else if t == 1.0 {
        cum[segment + 1]
    } else {
        let len = cum[segment + 1] - cum[segment];
        (cum[segment] + t * len).min(cum[segment + 1])
    }
}

/// `along` as a fraction of the line's length (the last of `cum`), in
/// `[0, 1]`; `0` for a line of zero length, `1` where `along` is `+inf`
/// (a line longer than `f64::MAX`).
///
/// ```
/// let cum = segdist_index::cumulative_lengths(&[[0.0, 0.0], [4.0, 0.0]]);
/// assert_eq!(segdist_index::fraction(&cum, 1.0), 0.25);
/// ```
#[must_use]
pub fn fraction(cum: &[f64], along: f64) -> f64 {
    let total = cum.last().copied().unwrap_or(0.0);
    if total == 0.0 || along == 0.0 {
        0.0
    } else if along.is_infinite() {
        1.0
    } else {
        (along / total).min(1.0)
    }
}
