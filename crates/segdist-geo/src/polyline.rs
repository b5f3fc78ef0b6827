//! Linear referencing on a lon/lat polyline in metres: where along the
//! line (on the ellipsoid) a point projects, and the point at a distance
//! along it. The geographic counterpart of `segdist_index::Polyline`, and
//! of PostGIS's `ST_LineLocatePoint` / `ST_LineInterpolatePoint` on
//! `geography`.

use crate::{geodesic, GeoBuildError, GeoHit, GeoIndex, GeoProjection};

/// A lon/lat polyline prepared for linear referencing in metres.
///
/// Lengths are geodesic (each segment's, summed with compensation); a
/// query finds the nearest segment exactly through a [`GeoIndex`], so a
/// point costs `O(log V)`, not a scan of every vertex.
///
/// # Example
///
/// ```
/// use segdist_geo::GeoPolyline;
///
/// // Along the equator, 0.01° a step (1113.19 m).
/// let line = GeoPolyline::new(&[[0.0, 0.0], [0.01, 0.0], [0.02, 0.0]])?;
/// assert!((line.length() - 2226.39).abs() < 0.01);
///
/// let at = line.locate([0.015, 0.001]).unwrap();
/// assert_eq!(at.segment, 1);
/// assert!((at.along - 1669.79).abs() < 0.01 && (at.fraction - 0.75).abs() < 1e-9);
/// assert!((at.distance - 110.57).abs() < 0.01);
///
/// let p = line.point_at(at.along).unwrap();
/// assert!((p[0] - 0.015).abs() < 1e-9 && p[1].abs() < 1e-9);
/// # Ok::<(), segdist_geo::GeoBuildError>(())
/// ```
pub struct GeoPolyline {
    index: GeoIndex,
    vertices: Vec<[f64; 2]>,
    /// Distance along the line of every vertex (m); `cum[0] = 0`.
    cum: Vec<f64>,
}

/// Where a point projects onto a [`GeoPolyline`] (metres).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeoLocation {
    /// The segment: from vertex `segment` to `segment + 1`.
    pub segment: usize,
    /// Where the closest point lies on that segment, as a fraction of its
    /// length.
    pub t: f64,
    /// The closest point of the line, `[lon, lat]`.
    pub point: [f64; 2],
    /// The distance from the query point (m).
    pub distance: f64,
    /// The distance along the line from its first vertex to `point` (m).
    pub along: f64,
    /// `along` as a fraction of the line's length.
    pub fraction: f64,
}

/// The geodesic distance along a lon/lat polyline of each vertex (m, `0`
/// first): each segment's length from [`geodesic`], summed with
/// compensation. For callers that keep their own geometry (one array per
/// part of many features).
///
/// ```
/// let cum = segdist_geo::geodesic_lengths(&[[0.0, 0.0], [0.0, 0.01], [0.0, 0.02]]);
/// assert!((cum[1] - 1105.74).abs() < 0.01 && (cum[2] - 2.0 * 1105.74).abs() < 0.03);
/// ```
#[must_use]
pub fn geodesic_lengths(vertices: &[[f64; 2]]) -> Vec<f64> {
    if vertices.is_empty() {
        return Vec::new();
    }
    segdist_index::cumulative(vertices.windows(2).map(|w| geodesic(w[0], w[0], w[1]).map_or(0.0, |r| r.distance)))
}

/// The distance along a line (metres) of `projection`, a projection onto
/// its segment `segment`, from the line's [`geodesic_lengths`] `cum`: the
/// end vertex where the lengths put it, never past the segment's end. For
/// callers that keep their own geometry, as [`geodesic_lengths`].
///
/// ```
/// let line = [[0.0, 0.0], [0.01, 0.0], [0.02, 0.0]];
/// let cum = segdist_geo::geodesic_lengths(&line);
/// let r = segdist_geo::geodesic(line[1], line[2], [0.015, 0.001]).unwrap();
/// assert!((segdist_geo::along_line(&cum, 1, &r) - 1.5 * cum[1]).abs() < 1e-6);
/// ```
///
/// # Panics
/// If `segment + 1` is not an index of `cum` (a segment of another line).
#[must_use]
pub fn along_line(cum: &[f64], segment: usize, projection: &GeoProjection) -> f64 {
    if projection.t == 1.0 {
        cum[segment + 1]
    } else {
        (cum[segment] + projection.along).min(cum[segment + 1])
    }
}

impl GeoPolyline {
    /// A polyline through `[lon, lat]` vertices (at least two).
    ///
    /// # Errors
    /// [`GeoBuildError::NotLonLat`] naming the vertex that is not a
    /// longitude/latitude; [`GeoBuildError::Index`] for fewer than two
    /// vertices.
    ///
    /// ```
    /// assert!(segdist_geo::GeoPolyline::new(&[[0.0, 0.0], [1.0, 91.0]]).is_err());
    /// assert!(segdist_geo::GeoPolyline::new(&[[0.0, 0.0]]).is_err());
    /// ```
    pub fn new(vertices: &[[f64; 2]]) -> Result<Self, GeoBuildError> {
        let index = GeoIndex::from_polylines(&[vertices])?;
        Ok(GeoPolyline { index, vertices: vertices.to_vec(), cum: geodesic_lengths(vertices) })
    }

    /// The vertices, as given.
    #[must_use]
    pub fn vertices(&self) -> &[[f64; 2]] {
        &self.vertices
    }

    /// The length (m).
    ///
    /// ```
    /// let line = segdist_geo::GeoPolyline::new(&[[179.99, 0.0], [-179.99, 0.0]])?; // across 180°
    /// assert!((line.length() - 2226.39).abs() < 0.01);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn length(&self) -> f64 {
        self.cum[self.cum.len() - 1]
    }

    /// Where `p` projects onto the line (the first such point on a tie);
    /// `None` for a point that is not a longitude/latitude.
    ///
    /// ```
    /// let line = segdist_geo::GeoPolyline::new(&[[0.0, 0.0], [0.01, 0.0]])?;
    /// assert_eq!(line.locate([-1.0, 0.0]).unwrap().along, 0.0);
    /// assert!(line.locate([0.0, 95.0]).is_none());
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn locate(&self, p: [f64; 2]) -> Option<GeoLocation> {
        self.index.nearest(p).map(|h| self.location(&h))
    }

    /// [`locate`](Self::locate) for many points, in input order, on all
    /// cores; points farther than `max_distance` metres are left unlocated.
    ///
    /// ```
    /// let line = segdist_geo::GeoPolyline::new(&[[0.0, 0.0], [0.01, 0.0]])?;
    /// let at = line.locate_many(&[[0.005, 0.001], [0.005, 1.0]], 1000.0);
    /// assert!(at[0].is_some() && at[1].is_none());
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn locate_many(&self, points: &[[f64; 2]], max_distance: f64) -> Vec<Option<GeoLocation>> {
        self.index.nearest_many(points, max_distance).into_iter().map(|h| h.map(|h| self.location(&h))).collect()
    }

    fn location(&self, h: &GeoHit) -> GeoLocation {
        let along = along_line(&self.cum, h.segment, &h.projection);
        GeoLocation {
            segment: h.segment,
            t: h.projection.t,
            point: h.projection.point,
            distance: h.projection.distance,
            along,
            fraction: segdist_index::fraction(&self.cum, along),
        }
    }

    /// The point at `along` metres from the first vertex, clamped to the
    /// line (negative → first vertex, past the end → last); `None` for NaN.
    ///
    /// ```
    /// let line = segdist_geo::GeoPolyline::new(&[[0.0, 0.0], [0.0, 0.01], [0.01, 0.01]])?;
    /// assert_eq!(line.point_at(-5.0), Some([0.0, 0.0]));
    /// assert_eq!(line.point_at(1e9), Some([0.01, 0.01]));
    /// let p = line.point_at(1105.74).unwrap(); // about the corner
    /// assert!(p[0].abs() < 1e-6 && (p[1] - 0.01).abs() < 1e-6);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn point_at(&self, along: f64) -> Option<[f64; 2]> {
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
        let i = (self.cum.partition_point(|&c| c <= along) - 1).min(last - 1);
        Some(crate::ellipsoid::point_along(self.vertices[i], self.vertices[i + 1], along - self.cum[i]))
    }

    /// The point at `fraction` of the length (clamped to `[0, 1]`); `None`
    /// for NaN.
    ///
    /// ```
    /// let line = segdist_geo::GeoPolyline::new(&[[0.0, 0.0], [0.02, 0.0]])?;
    /// let p = line.point_at_fraction(0.25).unwrap();
    /// assert!((p[0] - 0.005).abs() < 1e-9);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn point_at_fraction(&self, fraction: f64) -> Option<[f64; 2]> {
        if fraction.is_nan() {
            return None;
        }
        if fraction >= 1.0 {
            return Some(self.vertices[self.vertices.len() - 1]);
        }
        self.point_at(fraction * self.length())
    }
}
