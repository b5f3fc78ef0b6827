//! The nearest geodesic segment for lon/lat data, exact: a planar index
//! over the segments' chords (3D, metres, Earth-centred) finds every
//! segment that could be the answer, with a proven margin, and the geodesic
//! kernel decides among them.
//!
//! Why it is exact: a chord is at most `sag` from its geodesic arc, where
//! `sag = (1 − cos(κ·s/2))/κ` for an arc of length `s` and curvature at most
//! `κ = 1/(a(1 − e²))` (the largest normal curvature of the ellipsoid), and
//! a straight line is never longer than a path on the surface. So the 3D
//! distance from the point to a chord, minus the largest `sag`, is a lower
//! bound on the geodesic distance to that segment. A query evaluates the
//! segment with the nearest chord, and then every segment whose chord is
//! within that distance plus the largest `sag` plus the kernel's error
//! (twice 1 mm): no segment left out can beat or tie the answer.

use rayon::prelude::*;
use segdist_index::{Index, IndexBuilder};

use crate::ellipsoid::geodesic_from;
use crate::{ecef, geodesic, valid, GeoProjection, A, F};

/// How far a geodesic arc of length `s` can stray from its chord (m), with
/// a margin for the rounding of the chord's coordinates.
fn sagitta(s: f64) -> f64 {
    let e2 = F * (2.0 - F);
    let r_min = A * (1.0 - e2);
    let half = (s / (2.0 * r_min)).min(std::f64::consts::PI);
    r_min * (1.0 - half.cos()) * (1.0 + 1e-9) + 1e-6
}

/// Why a [`GeoIndex`] could not be built.
///
/// ```
/// let e = segdist_geo::GeoIndex::from_polylines(&[vec![[0.0, 0.0], [1.0, 95.0]]]).err().unwrap();
/// assert_eq!(e.to_string(), "feature 0, part 0, vertex 1: not a longitude/latitude (finite, |latitude| <= 90)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeoBuildError {
    /// A vertex that is not a finite longitude with a latitude in [-90, 90].
    NotLonLat {
        /// The feature's id (push order).
        feature: usize,
        /// The part within the feature.
        part: usize,
        /// The vertex within the part.
        vertex: usize,
    },
    /// A part with fewer than two vertices, or too many vertices.
    Index(segdist_index::BuildError),
}

impl std::fmt::Display for GeoBuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GeoBuildError::NotLonLat { feature, part, vertex } => write!(
                f,
                "feature {feature}, part {part}, vertex {vertex}: not a longitude/latitude (finite, |latitude| <= 90)"
            ),
            GeoBuildError::Index(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for GeoBuildError {}

/// A geodesic segment found by a query: which one, and the projection of
/// the query point onto it (distances in metres).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeoHit {
    /// The feature's id (push order).
    pub feature: usize,
    /// The part within the feature.
    pub part: usize,
    /// The segment within the part: from vertex `segment` to `segment + 1`.
    pub segment: usize,
    /// The closest point and the distances, as [`geodesic`] gives them.
    pub projection: GeoProjection,
}

/// An index over lon/lat polylines for exact nearest-geodesic-segment
/// queries in metres: the same answers as evaluating [`geodesic`] on every
/// segment and taking the least distance (ties to the lowest id).
///
/// ```
/// use segdist_geo::GeoIndex;
///
/// let roads = GeoIndex::from_polylines(&[
///     vec![[24.9432708, 60.1665138], [24.9433654, 60.1664439], [24.9434029, 60.166408]],
///     vec![[24.9456678, 60.1676677], [24.945671, 60.1676302], [24.9456879, 60.1674353]],
/// ])?;
/// let hit = roads.nearest([24.9440, 60.1667]).unwrap();
/// assert_eq!(hit.feature, 0);
/// assert!(hit.projection.distance > 30.0 && hit.projection.distance < 60.0);
/// # Ok::<(), segdist_geo::GeoBuildError>(())
/// ```
pub struct GeoIndex {
    chords: Index<3>,
    pub(crate) vertices: Vec<[f64; 2]>,
    /// The vertices' Earth-centred coordinates (the chords' ends), kept so
    /// that a query's geodesic evaluations do not compute them again (two
    /// sines and cosines a vertex; 24 bytes a vertex).
    pub(crate) vertices_ecef: Vec<[f64; 3]>,
    part_start: Vec<usize>,
    feature_start: Vec<usize>,
    /// The largest arc-to-chord distance of any segment (m).
    pub(crate) sag: f64,
}

impl GeoIndex {
    /// An index over polylines of `[lon, lat]` vertices, feature `i` being
    /// `polylines[i]`.
    ///
    /// # Errors
    /// [`GeoBuildError::NotLonLat`] for a vertex that is not a longitude and
    /// latitude, [`GeoBuildError::Index`] for a part of fewer than two
    /// vertices.
    pub fn from_polylines<P: AsRef<[[f64; 2]]>>(polylines: &[P]) -> Result<Self, GeoBuildError> {
        Self::from_multi_polylines(polylines.iter().map(|p| std::slice::from_ref(p)))
    }

    /// An index over multi-polylines: each item a list of parts.
    ///
    /// # Errors
    /// As [`from_polylines`](Self::from_polylines).
    ///
    /// ```
    /// let parts = [vec![[0.0, 0.0], [0.001, 0.0]], vec![[0.0, 0.01], [0.001, 0.01]]];
    /// let index = segdist_geo::GeoIndex::from_multi_polylines([&parts[..]])?;
    /// assert_eq!(index.nearest([0.0005, 0.009]).unwrap().part, 1);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    pub fn from_multi_polylines<'a, P, I>(features: I) -> Result<Self, GeoBuildError>
    where
        P: AsRef<[[f64; 2]]> + 'a,
        I: IntoIterator<Item = &'a [P]>,
    {
        let (mut vertices, mut part_start, mut feature_start) = (Vec::new(), Vec::new(), Vec::new());
        for (f, parts) in features.into_iter().enumerate() {
            feature_start.push(part_start.len());
            for (k, part) in parts.iter().enumerate() {
                let part = part.as_ref();
                if let Some(v) = part.iter().position(|p| !valid(p)) {
                    return Err(GeoBuildError::NotLonLat { feature: f, part: k, vertex: v });
                }
                part_start.push(vertices.len());
                vertices.extend_from_slice(part);
            }
        }
        part_start.push(vertices.len());
        feature_start.push(part_start.len() - 1);
        // On all cores: each vertex's Earth-centred position, and the
        // largest sagitta of a segment (a geodesic a segment; the largest
        // of a set, whatever the order it is taken in).
        let vertices_ecef: Vec<[f64; 3]> = vertices.par_iter().with_min_len(4096).map(ecef).collect();
        let sag = (0..part_start.len() - 1)
            .into_par_iter()
            .with_min_len(1024)
            .map(|q| {
                vertices[part_start[q]..part_start[q + 1]].windows(2).fold(0.0f64, |sag, w| {
                    let s = geodesic(w[0], w[0], w[1]).map_or(0.0, |r| r.distance);
                    sag.max(sagitta(s))
                })
            })
            .reduce(|| 0.0, f64::max);
        let mut b = IndexBuilder::<3>::with_capacity(vertices.len(), part_start.len());
        for f in 0..feature_start.len() - 1 {
            b.push_multi_polyline(
                (feature_start[f]..feature_start[f + 1]).map(|q| &vertices_ecef[part_start[q]..part_start[q + 1]]),
            );
        }
        let chords = b.build().map_err(GeoBuildError::Index)?;
        Ok(GeoIndex { chords, vertices, vertices_ecef, part_start, feature_start, sag })
    }

    /// The number of segments.
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[0.0, 0.0], [1.0, 1.0], [2.0, 1.0]]])?;
    /// assert_eq!(index.len(), 2);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.chords.len()
    }

    /// Whether the index holds no segment.
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines::<Vec<[f64; 2]>>(&[])?;
    /// assert!(index.is_empty() && index.nearest([0.0, 0.0]).is_none());
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.chords.is_empty()
    }

    /// `p`'s closest point on one segment of the index, `segment` of part
    /// `part` of feature `feature`: the answer a query would give for that
    /// segment, bit for bit (the same as [`geodesic`] on its ends), from
    /// the Earth-centred coordinates the index keeps. `None` for a segment
    /// the index does not have, or a point that is not a longitude/latitude.
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[24.0, 60.0], [24.01, 60.0], [24.01, 60.01]]])?;
    /// let p = [24.005, 60.001];
    /// let hit = index.segment(p, 0, 0, 0).unwrap();
    /// assert_eq!(hit.projection, segdist_geo::geodesic([24.0, 60.0], [24.01, 60.0], p).unwrap());
    /// assert!(index.segment(p, 0, 0, 2).is_none());
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn segment(&self, p: [f64; 2], feature: usize, part: usize, segment: usize) -> Option<GeoHit> {
        let q = *self.feature_start.get(feature)? + part;
        if q >= *self.feature_start.get(feature + 1)? || segment + 2 > self.part_start[q + 1] - self.part_start[q] {
            return None;
        }
        if !valid(&p) {
            return None;
        }
        self.evaluate(&p, &ecef(&p), feature, part, segment)
    }

    /// The segment nearest to `p` on the ellipsoid; `None` when the index is
    /// empty or `p` is not a longitude/latitude.
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[
    ///     vec![[179.99, 0.0], [-179.99, 0.0]], // across the antimeridian
    ///     vec![[0.0, 0.0], [0.01, 0.0]],
    /// ])?;
    /// let hit = index.nearest([180.0, 0.001]).unwrap();
    /// assert_eq!(hit.feature, 0);
    /// assert!((hit.projection.distance - 110.574).abs() < 0.01);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn nearest(&self, p: [f64; 2]) -> Option<GeoHit> {
        self.nearest_within(p, f64::INFINITY)
    }

    /// The nearest segment at distance `<= max_distance` metres, or `None`.
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[0.0, 0.0], [0.01, 0.0]]])?;
    /// assert!(index.nearest_within([0.005, 0.001], 100.0).is_none()); // 110.6 m away
    /// assert!(index.nearest_within([0.005, 0.001], 120.0).is_some());
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn nearest_within(&self, p: [f64; 2], max_distance: f64) -> Option<GeoHit> {
        if !valid(&p) || max_distance.is_nan() || max_distance < 0.0 {
            return None;
        }
        let q = ecef(&p);
        let first = self.chords.nearest(q)?;
        self.finish(&p, &q, &first, 0.0, max_distance)
    }

    /// The rest of a nearest query, given the segment with the nearest
    /// chord and a lower bound on every other chord's distance.
    fn finish(
        &self,
        p: &[f64; 2],
        q: &[f64; 3],
        first: &segdist_index::Hit<3>,
        runner_up: f64,
        max_distance: f64,
    ) -> Option<GeoHit> {
        let h0 = self.evaluate(p, q, first.feature, first.part, first.segment)?;
        let id = |h: &GeoHit| (h.feature, h.part, h.segment);
        let bound = h0.projection.distance.min(max_distance);
        let r = self.reach(bound);
        // Every other chord farther than the reach: no other candidate.
        if runner_up > r {
            return Some(h0).filter(|h| h.projection.distance <= max_distance);
        }
        // Usually no other chord is that near (a tight radius: a cheap search).
        let near = self.chords.within(*q, r);
        // The candidates but the one already evaluated, then that one.
        near.iter()
            .filter(|h| (h.feature, h.part, h.segment) != id(&h0))
            .filter_map(|h| self.evaluate(p, q, h.feature, h.part, h.segment))
            .chain(std::iter::once(h0))
            .filter(|h| h.projection.distance <= max_distance)
            .min_by(rank)
    }

    /// Every segment within `radius` metres of `p`, nearest first (ties by
    /// lowest id).
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[
    ///     vec![[0.0, 0.0], [0.01, 0.0]],
    ///     vec![[0.0, 0.002], [0.01, 0.002]],
    ///     vec![[0.0, 0.1], [0.01, 0.1]],
    /// ])?;
    /// let near = index.within([0.005, 0.001], 200.0);
    /// assert_eq!(near.iter().map(|h| h.feature).collect::<Vec<_>>(), [0, 1]);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn within(&self, p: [f64; 2], radius: f64) -> Vec<GeoHit> {
        if !valid(&p) || radius.is_nan() || radius < 0.0 {
            return Vec::new();
        }
        let mut hits: Vec<GeoHit> =
            self.candidates(&p, &ecef(&p), radius).into_iter().filter(|h| h.projection.distance <= radius).collect();
        hits.sort_by(rank);
        hits
    }

    /// The `k` nearest segments within `max_distance` metres, nearest
    /// first (ties by lowest id).
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[
    ///     vec![[0.0, 0.0], [0.01, 0.0]],
    ///     vec![[0.0, 0.002], [0.01, 0.002]],
    ///     vec![[0.0, 0.1], [0.01, 0.1]],
    /// ])?;
    /// let two = index.k_nearest_within([0.005, 0.0015], 2, f64::INFINITY);
    /// assert_eq!(two.iter().map(|h| h.feature).collect::<Vec<_>>(), [1, 0]);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn k_nearest_within(&self, p: [f64; 2], k: usize, max_distance: f64) -> Vec<GeoHit> {
        if k == 0 || !valid(&p) || max_distance.is_nan() || max_distance < 0.0 {
            return Vec::new();
        }
        let q = ecef(&p);
        if max_distance.is_finite() {
            return self.k_nearest_near(&p, &q, k, max_distance);
        }
        // The k nearest chords' segments bound the k-th distance.
        let bound = self
            .chords
            .k_nearest(q, k)
            .iter()
            .filter_map(|h| self.evaluate(&p, &q, h.feature, h.part, h.segment))
            .map(|h| h.projection.distance)
            .fold(0.0f64, f64::max)
            .min(max_distance);
        let mut hits: Vec<GeoHit> =
            self.candidates(&p, &q, bound).into_iter().filter(|h| h.projection.distance <= max_distance).collect();
        hits.sort_by(rank);
        hits.truncate(k);
        hits
    }

    /// [`k_nearest_within`](Self::k_nearest_within) with a finite limit:
    /// the chords within its reach, nearest first, are evaluated until the
    /// next chord is beyond the reach of the `k`-th distance found (its
    /// segment is then farther than `k` others, and so are all after it).
    /// One search and about `k` evaluations, where bounding the `k`-th
    /// distance first took two searches and evaluated both their answers
    /// (map matching asks this of every fix: half its time in lon/lat).
    fn k_nearest_near(&self, p: &[f64; 2], q: &[f64; 3], k: usize, max_distance: f64) -> Vec<GeoHit> {
        // The walk stops a little past the k-th chord: the k + 4 nearest
        // within the reach usually hold where it stops (one search that
        // prunes by the k-th, where a search for every chord within the
        // reach measured them all: a seventh of a lon/lat match). If the
        // walk runs past them, it runs again over all.
        let (reach, m) = (self.reach(max_distance), k.saturating_add(4));
        let first = self.chords.k_nearest_within(*q, m, reach);
        if let Some(hits) = self.walk(p, q, k, max_distance, &first, first.len() < m) {
            return hits;
        }
        let all = self.chords.within(*q, reach);
        self.walk(p, q, k, max_distance, &all, true).unwrap_or_default()
    }

    /// The walk of [`k_nearest_near`](Self::k_nearest_near) over `chords`,
    /// nearest first (ties by lowest id): `None` when it reaches their end
    /// and they are not `complete` (every chord within the reach).
    fn walk(
        &self,
        p: &[f64; 2],
        q: &[f64; 3],
        k: usize,
        max_distance: f64,
        chords: &[segdist_index::Hit<3>],
        complete: bool,
    ) -> Option<Vec<GeoHit>> {
        let mut hits: Vec<GeoHit> = Vec::new();
        let mut cut = self.reach(max_distance);
        for h in chords {
            if h.distance > cut {
                return Some(hits);
            }
            let Some(g) = self.evaluate(p, q, h.feature, h.part, h.segment) else { continue };
            if g.projection.distance > max_distance {
                continue;
            }
            if let Some(kth) = keep(&mut hits, g, k) {
                cut = cut.min(self.reach(kth));
            }
        }
        complete.then_some(hits)
    }

    /// [`nearest_within`](Self::nearest_within) for many points, in input
    /// order, on all cores.
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[0.0, 0.0], [0.01, 0.0]]])?;
    /// let hits = index.nearest_many(&[[0.005, 0.001], [f64::NAN, 0.0]], f64::INFINITY);
    /// assert!(hits[0].is_some() && hits[1].is_none());
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn nearest_many(&self, points: &[[f64; 2]], max_distance: f64) -> Vec<Option<GeoHit>> {
        if max_distance.is_nan() || max_distance < 0.0 {
            return vec![None; points.len()];
        }
        // The nearest chords through the planar batch search (curve order,
        // shared candidates), then each point on its own.
        let qs: Vec<[f64; 3]> = points.par_iter().map(|p| if valid(p) { ecef(p) } else { [f64::NAN; 3] }).collect();
        let firsts = self.chords.nearest_many_with_runner_up(&qs, &segdist_index::QueryOptions::default());
        points
            .par_iter()
            .zip(&qs)
            .zip(&firsts)
            .map(|((p, q), first)| first.as_ref().and_then(|(f, up)| self.finish(p, q, f, *up, max_distance)))
            .collect()
    }

    /// How far a chord may be from the query point for its segment to be
    /// within `bound` metres of it, or to tie: the largest arc-to-chord gap
    /// and twice the kernel's millimetre on top.
    pub(crate) fn reach(&self, bound: f64) -> f64 {
        reach(self.sag, bound)
    }

    /// Every segment that could be within `bound` metres of `p`, evaluated.
    fn candidates(&self, p: &[f64; 2], q: &[f64; 3], bound: f64) -> Vec<GeoHit> {
        let r = self.reach(bound);
        self.chords.within(*q, r).iter().filter_map(|h| self.evaluate(p, q, h.feature, h.part, h.segment)).collect()
    }

    /// Every segment: (feature, part, segment, its first vertex in
    /// `vertices`).
    pub(crate) fn segments(&self) -> impl Iterator<Item = (usize, usize, usize, usize)> + '_ {
        (0..self.feature_start.len() - 1).flat_map(move |f| {
            (self.feature_start[f]..self.feature_start[f + 1]).flat_map(move |q| {
                let (s, e) = (self.part_start[q], self.part_start[q + 1]);
                (s..e.saturating_sub(1).max(s)).map(move |v| (f, q - self.feature_start[f], v - s, v))
            })
        })
    }

    /// The geodesic answer for one segment; `q` is `ecef(p)`.
    fn evaluate(&self, p: &[f64; 2], q: &[f64; 3], feature: usize, part: usize, segment: usize) -> Option<GeoHit> {
        let v = self.part_start[self.feature_start[feature] + part] + segment;
        let x = [&self.vertices_ecef[v], &self.vertices_ecef[v + 1], q];
        let projection = geodesic_from(self.vertices[v], self.vertices[v + 1], *p, Some(x))?;
        Some(GeoHit { feature, part, segment, projection })
    }
}

/// [`GeoIndex::reach`] for an index whose largest arc-to-chord gap is
/// `sag` (the grid keeps the index's).
pub(crate) fn reach(sag: f64, bound: f64) -> f64 {
    bound + sag + 2e-3 + 1e-9 * bound
}

/// Keeps `g` among `hits`, ranked, at most `k`; once there are `k`, the
/// k-th distance (which bounds what may still come in a walk).
pub(crate) fn keep(hits: &mut Vec<GeoHit>, g: GeoHit, k: usize) -> Option<f64> {
    let at = hits.partition_point(|x| rank(x, &g).is_lt());
    if at < k {
        hits.insert(at, g);
        hits.truncate(k);
    }
    (hits.len() == k && at < k).then(|| hits[k - 1].projection.distance)
}

/// Least distance first, then lowest id.
pub(crate) fn rank(x: &GeoHit, y: &GeoHit) -> std::cmp::Ordering {
    x.projection
        .distance
        .total_cmp(&y.projection.distance)
        .then((x.feature, x.part, x.segment).cmp(&(y.feature, y.part, y.segment)))
}
