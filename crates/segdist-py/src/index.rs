//! `SegmentIndex` (nearest segment, k nearest, within a radius, linear
//! referencing along features) and `Polyline`, over `segdist-index`.
//!
//! Both keep coordinates in `float64` (`float32` input is widened exactly)
//! and take query points as C-contiguous `(N, D)` `float64` arrays.

use std::num::NonZeroU32;

use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rayon::prelude::*;
use segdist_index::{along, cumulative_into, fraction, Hit, HitLists, Index, IndexBuilder, QueryOptions, Sink};

use crate::arrays::{column, points_array, rows, with_threads};

/// Features (each one or more parts, each a polyline) in an index, with
/// what linear referencing needs: the vertices and the distance along its
/// feature of every vertex.
struct Features<const D: usize> {
    index: Index<D>,
    vertices: Vec<[f64; D]>,
    /// First vertex of each part, and one past the last.
    part_start: Vec<usize>,
    /// First part of each feature, and one past the last.
    feature_part: Vec<usize>,
    /// The distance along its feature of every vertex: parts follow one
    /// another, the gap between them not counted (as GEOS does).
    cum: Vec<f64>,
    /// Each feature's length (in one small array: a batch's answers come
    /// in no order of feature, and every lookup is a cache miss).
    lengths: Vec<f64>,
    /// Whether each feature is one segment (a bit each): then `lengths`
    /// alone gives its distances along.
    single: Vec<u64>,
}

pub(crate) fn offsets(arr: &[i64], len: usize, what: &str) -> PyResult<Vec<usize>> {
    let bad = |why: String| PyValueError::new_err(format!("{what}: {why}"));
    if arr.first() != Some(&0) {
        return Err(bad("must start at 0".into()));
    }
    if arr.windows(2).any(|w| w[1] < w[0]) {
        return Err(bad("must not decrease".into()));
    }
    let last = *arr.last().unwrap_or(&0);
    if usize::try_from(last).ok() != Some(len) {
        return Err(bad(format!("must end at {len}, ends at {last}")));
    }
    Ok(arr.iter().map(|&o| o as usize).collect())
}

/// Features a worker sums the distances along of at once.
const CUM_RUN: usize = 8192;

impl<const D: usize> Features<D> {
    fn build(vertices: Vec<[f64; D]>, part_start: Vec<usize>, feature_part: Vec<usize>) -> PyResult<Self> {
        // The index and the distances along, side by side on two workers.
        let (index, cum) = rayon::join(
            || {
                let mut builder = IndexBuilder::<D>::with_capacity(vertices.len(), part_start.len().saturating_sub(1));
                for f in feature_part.windows(2) {
                    builder.push_multi_polyline((f[0]..f[1]).map(|p| &vertices[part_start[p]..part_start[p + 1]]));
                }
                builder.build()
            },
            || {
                // Runs of features on the workers (a third of the build's
                // time on one, 100,000 segments), joined in order.
                let n = feature_part.len() - 1;
                let runs: Vec<Vec<f64>> = (0..n.div_ceil(CUM_RUN))
                    .into_par_iter()
                    .map(|r| {
                        let features = r * CUM_RUN..((r + 1) * CUM_RUN).min(n);
                        let first = part_start[feature_part[features.start]];
                        let mut cum = Vec::with_capacity(part_start[feature_part[features.end]] - first);
                        for f in feature_part[features.start..=features.end].windows(2) {
                            // A feature of one segment: 0 and its length,
                            // what the sum below gives (for a finite
                            // length), without it (a sixth of the build's
                            // time, 100,000 such features).
                            let first_vertex = part_start[f[0]];
                            if f[1] == f[0] + 1 && part_start[f[1]] - first_vertex == 2 {
                                let (a, b) = (vertices[first_vertex], vertices[first_vertex + 1]);
                                let length = segdist::Segment::new(a, a).distance(b);
                                if length.is_finite() {
                                    cum.extend([0.0, length]);
                                    continue;
                                }
                            }
                            // One compensated running sum over the
                            // feature's segments; a part's first vertex
                            // repeats the previous part's last value.
                            let lengths = (f[0]..f[1]).flat_map(|p| {
                                let part = &vertices[part_start[p]..part_start[p + 1]];
                                std::iter::once(0.0)
                                    .chain(part.windows(2).map(|w| segdist::Segment::new(w[0], w[0]).distance(w[1])))
                            });
                            cumulative_into(lengths, &mut cum);
                            debug_assert_eq!(first + cum.len(), part_start[f[1]]);
                        }
                        cum
                    })
                    .collect();
                runs.concat()
            },
        );
        let index = index.map_err(|e| PyValueError::new_err(e.to_string()))?;
        let n = feature_part.len() - 1;
        let mut single = vec![0u64; n.div_ceil(64)];
        for (i, f) in feature_part.windows(2).enumerate() {
            if f[1] == f[0] + 1 && part_start[f[1]] - part_start[f[0]] == 2 {
                single[i / 64] |= 1 << (i % 64);
            }
        }
        // A feature's length is its last vertex's distance along (0 with no
        // parts).
        let lengths =
            feature_part.windows(2).map(|f| if f[0] == f[1] { 0.0 } else { cum[part_start[f[1]] - 1] }).collect();
        Ok(Features { index, vertices, part_start, feature_part, cum, lengths, single })
    }

    /// The distance along its feature of a hit, and as a fraction of the
    /// feature's length.
    fn along(&self, h: &Hit<D>) -> (f64, f64) {
        let length = self.lengths[h.feature];
        let s = if self.single[h.feature / 64] >> (h.feature % 64) & 1 == 1 {
            // The feature's vertices are 0 and `length` along it.
            along(&[0.0, length], 0, h.t)
        } else {
            let part_first_vertex = self.part_start[self.feature_part[h.feature] + h.part];
            along(&self.cum[part_first_vertex..], h.segment, h.t)
        };
        (s, fraction(&[0.0, length], s))
    }

    /// Asks memory for what [`along`](Self::along) reads of `feature`
    /// first (its length, and where its parts start).
    fn prefetch(&self, feature: usize) {
        #[cfg(target_arch = "x86_64")]
        if let (Some(l), Some(p)) = (self.lengths.get(feature), self.feature_part.get(feature)) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: a prefetch never faults; both are elements of ours.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>((l as *const f64).cast());
                _mm_prefetch::<_MM_HINT_T0>((p as *const usize).cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = feature;
    }

    fn length(&self, feature: usize) -> f64 {
        self.lengths[feature]
    }

    /// The point at distance `s` along `feature` (clamped to it).
    fn point_at(&self, feature: usize, s: f64) -> [f64; D] {
        let (p0, p1) = (self.feature_part[feature], self.feature_part[feature + 1]);
        if p0 == p1 {
            return [f64::NAN; D];
        }
        let (v0, v1) = (self.part_start[p0], self.part_start[p1]);
        let (cum, verts) = (&self.cum[v0..v1], &self.vertices[v0..v1]);
        let last = verts.len() - 1;
        if s.is_nan() {
            return [f64::NAN; D];
        }
        if s <= 0.0 {
            return verts[0];
        }
        if s >= cum[last] {
            return verts[last];
        }
        // cum[i] < s <= cum[i + 1]: i and i + 1 are in one part (a part's
        // first vertex repeats the value before it), and a distance that
        // ends one part gives that part's last vertex.
        let i = cum.partition_point(|&c| c < s) - 1;
        let (c0, c1) = (cum[i], cum[i + 1]);
        let t = ((s - c0) / (c1 - c0)).clamp(0.0, 1.0);
        let (a, b) = (verts[i], verts[i + 1]);
        std::array::from_fn(|k| (1.0 - t) * a[k] + t * b[k])
    }
}

/// Hits as columns: one row per query (`nearest`) or several (`query`
/// then says whose).
struct Columns<const D: usize> {
    query: Option<Vec<i64>>,
    feature: Vec<i64>,
    part: Vec<i64>,
    segment: Vec<i64>,
    t: Vec<f64>,
    point: Vec<[f64; D]>,
    distance: Vec<f64>,
    along: Vec<f64>,
    fraction: Vec<f64>,
}

/// Mutable windows of the same rows of every column (but `query`).
struct Rows<'a, const D: usize> {
    feature: &'a mut [i64],
    part: &'a mut [i64],
    segment: &'a mut [i64],
    t: &'a mut [f64],
    point: &'a mut [[f64; D]],
    distance: &'a mut [f64],
    along: &'a mut [f64],
    fraction: &'a mut [f64],
}

impl<'a, const D: usize> Rows<'a, D> {
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (f0, f1) = self.feature.split_at_mut(mid);
        let (p0, p1) = self.part.split_at_mut(mid);
        let (s0, s1) = self.segment.split_at_mut(mid);
        let (t0, t1) = self.t.split_at_mut(mid);
        let (q0, q1) = self.point.split_at_mut(mid);
        let (d0, d1) = self.distance.split_at_mut(mid);
        let (a0, a1) = self.along.split_at_mut(mid);
        let (r0, r1) = self.fraction.split_at_mut(mid);
        (
            Rows { feature: f0, part: p0, segment: s0, t: t0, point: q0, distance: d0, along: a0, fraction: r0 },
            Rows { feature: f1, part: p1, segment: s1, t: t1, point: q1, distance: d1, along: a1, fraction: r1 },
        )
    }

    /// Row `i`: a hit, or (`None`) the row that says "nothing": ids -1,
    /// numbers NaN.
    fn set(&mut self, i: usize, row: Option<&Snap<D>>) {
        match row {
            Some(r) => {
                self.feature[i] = i64::from(r.feature.get()) - 1;
                self.part[i] = i64::from(r.part);
                self.segment[i] = i64::from(r.segment);
                self.t[i] = r.t;
                self.point[i] = r.point;
                self.distance[i] = r.distance;
                self.along[i] = r.along;
                self.fraction[i] = r.fraction;
            }
            None => {
                self.feature[i] = -1;
                self.part[i] = -1;
                self.segment[i] = -1;
                self.t[i] = f64::NAN;
                self.point[i] = [f64::NAN; D];
                self.distance[i] = f64::NAN;
                self.along[i] = f64::NAN;
                self.fraction[i] = f64::NAN;
            }
        }
    }
}

/// The columns' rows as the batch search's [`Sink`]: each hit with its
/// distance along its feature. Hits are held back [`LAG`] rows, their
/// feature's length asked of memory when they arrive and read when they
/// leave: the lookups come in no order of feature, and waiting on each was
/// an eighth of a batch's time (200k points, 100k one-segment features).
struct Filling<'a, const D: usize> {
    rows: Rows<'a, D>,
    features: &'a Features<D>,
    /// Rows held back (row, hit), a ring: `next` is the oldest once full.
    held: Vec<(usize, Hit<D>)>,
    next: usize,
}

/// Rows a [`Filling`] holds back.
const LAG: usize = 8;

impl<'a, const D: usize> Filling<'a, D> {
    fn new(rows: Rows<'a, D>, features: &'a Features<D>) -> Self {
        Filling { rows, features, held: Vec::with_capacity(LAG), next: 0 }
    }

    fn write(&mut self, (i, h): (usize, Hit<D>)) {
        self.rows.set(i, Some(&Snap::new(&h, self.features.along(&h))));
    }
}

impl<const D: usize> Sink<D> for Filling<'_, D> {
    fn len(&self) -> usize {
        self.rows.feature.len()
    }

    fn split_at(self, mid: usize) -> (Self, Self) {
        let (r0, r1) = self.rows.split_at(mid);
        (Filling::new(r0, self.features), Filling::new(r1, self.features))
    }

    fn put(&mut self, i: usize, hit: Option<Hit<D>>) {
        let Some(h) = hit else {
            self.rows.set(i, None);
            return;
        };
        self.features.prefetch(h.feature);
        if self.held.len() < LAG {
            self.held.push((i, h));
        } else {
            let oldest = std::mem::replace(&mut self.held[self.next], (i, h));
            self.next = (self.next + 1) % LAG;
            self.write(oldest);
        }
    }

    fn flush(&mut self) {
        for row in std::mem::take(&mut self.held) {
            self.write(row);
        }
    }
}

/// A hit as the columns hold it, compact for the trip back into input
/// order (64 bytes in 2D, `Option` included, where a `Hit` with its
/// distance along took 88: each answer read back is a cache miss, over one
/// line or two instead of two or three). Ids fit in `u32`: the index
/// numbers its segments, so its features and parts, in 32 bits.
#[derive(Clone, Copy, Debug)]
struct Snap<const D: usize> {
    /// The feature plus one (so that `Option<Snap>` needs no extra tag).
    feature: NonZeroU32,
    part: u32,
    segment: u32,
    t: f64,
    point: [f64; D],
    distance: f64,
    along: f64,
    fraction: f64,
}

impl<const D: usize> Snap<D> {
    fn new(h: &Hit<D>, (along, fraction): (f64, f64)) -> Self {
        Snap {
            feature: NonZeroU32::MIN.saturating_add(h.feature as u32),
            part: h.part as u32,
            segment: h.segment as u32,
            t: h.t,
            point: h.point,
            distance: h.distance,
            along,
            fraction,
        }
    }
}

/// One row of the columns (`None`: nothing found).
type Row<const D: usize> = Option<Snap<D>>;

/// Rows filled by one thread at a time.
const FILL_CHUNK: usize = 1 << 14;

impl<const D: usize> Columns<D> {
    /// `n` rows of zeros (the system's fresh memory: its pages are faulted
    /// in by the threads that write them first).
    fn zeroed(n: usize, with_query: Option<Vec<i64>>) -> Self {
        Columns {
            query: with_query,
            feature: segdist_index::mem::vec_of(0, n),
            part: segdist_index::mem::vec_of(0, n),
            segment: segdist_index::mem::vec_of(0, n),
            t: segdist_index::mem::vec_of(0.0, n),
            point: segdist_index::mem::vec_of([0.0; D], n),
            distance: segdist_index::mem::vec_of(0.0, n),
            along: segdist_index::mem::vec_of(0.0, n),
            fraction: segdist_index::mem::vec_of(0.0, n),
        }
    }

    /// Every row, as windows to write.
    fn rows(&mut self) -> Rows<'_, D> {
        Rows {
            feature: &mut self.feature,
            part: &mut self.part,
            segment: &mut self.segment,
            t: &mut self.t,
            point: &mut self.point,
            distance: &mut self.distance,
            along: &mut self.along,
            fraction: &mut self.fraction,
        }
    }

    /// `n` rows, those of a range of positions from `rows_of(range)`,
    /// converted on all cores.
    fn fill<I: Iterator<Item = Row<D>>>(
        n: usize,
        with_query: Option<Vec<i64>>,
        threads: Option<usize>,
        rows_of: impl Fn(std::ops::Range<usize>) -> I + Sync,
    ) -> PyResult<Self> {
        let mut c = Self::zeroed(n, with_query);
        let rows = c.rows();
        fn go<const D: usize, I: Iterator<Item = Row<D>>>(
            mut rows: Rows<'_, D>,
            from: usize,
            rows_of: &(impl Fn(std::ops::Range<usize>) -> I + Sync),
            parallel: bool,
        ) {
            let n = rows.feature.len();
            if !parallel || n <= FILL_CHUNK {
                for (i, row) in rows_of(from..from + n).enumerate() {
                    rows.set(i, row.as_ref());
                }
            } else {
                let mid = n / 2;
                let (r0, r1) = rows.split_at(mid);
                rayon::join(|| go(r0, from, rows_of, true), || go(r1, from + mid, rows_of, true));
            }
        }
        if threads == Some(1) {
            go(rows, 0, &rows_of, false);
        } else {
            with_threads(threads, || go(rows, 0, &rows_of, true))?;
        }
        Ok(c)
    }

    /// `(query, feature, part, segment, t, point, distance, along, fraction)`,
    /// `query` `None` for one row per query.
    fn into_py(self, py: Python<'_>) -> PyResult<Bound<'_, PyTuple>> {
        (
            self.query.map(|q| PyArray1::from_vec(py, q)),
            PyArray1::from_vec(py, self.feature),
            PyArray1::from_vec(py, self.part),
            PyArray1::from_vec(py, self.segment),
            PyArray1::from_vec(py, self.t),
            points_array(py, self.point)?,
            PyArray1::from_vec(py, self.distance),
            PyArray1::from_vec(py, self.along),
            PyArray1::from_vec(py, self.fraction),
        )
            .into_pyobject(py)
    }
}

/// The index's options for a `max_distance` (checked) and `threads`
/// (`None`: all cores).
fn query_options(max_distance: f64, threads: Option<usize>) -> PyResult<QueryOptions> {
    Ok(QueryOptions {
        max_distance: check_distance(max_distance, "max_distance")?,
        threads: threads.unwrap_or(0),
        ..Default::default()
    })
}

fn check_distance(x: f64, what: &str) -> PyResult<f64> {
    if x.is_nan() || x < 0.0 {
        return Err(PyValueError::new_err(format!("{what} must be a number >= 0, got {x}")));
    }
    Ok(x)
}

impl<const D: usize> Features<D> {
    fn nearest<'py>(
        &self,
        py: Python<'py>,
        points: &PyReadonlyArray2<'py, f64>,
        max_distance: f64,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let points = rows::<f64, D>(points, "points")?;
        let opts = query_options(max_distance, threads)?;
        let out = py.detach(|| {
            // Each answer written into the columns as the search makes it
            // (with its distance along), not kept and copied after.
            let mut c = Columns::zeroed(points.len(), None);
            self.index.nearest_many_to(points, &opts, Filling::new(c.rows(), self));
            c
        });
        out.into_py(py)
    }

    fn many<'py>(
        &self,
        py: Python<'py>,
        points: &PyReadonlyArray2<'py, f64>,
        threads: Option<usize>,
        query: impl FnOnce(&Index<D>, &[[f64; D]], &mut HitLists<D>) + Send,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let points = rows::<f64, D>(points, "points")?;
        let out = py.detach(|| -> PyResult<Columns<D>> {
            // The lists flat, as the columns are: no list a point.
            let mut lists = HitLists::new();
            query(&self.index, points, &mut lists);
            let query = lists.iter().enumerate().flat_map(|(q, l)| std::iter::repeat_n(q as i64, l.len())).collect();
            let hits = lists.hits();
            Columns::fill(hits.len(), Some(query), threads, |range| {
                hits[range].iter().map(|h| Some(Snap::new(h, self.along(h))))
            })
        })?;
        out.into_py(py)
    }

    fn interpolate<'py>(
        &self,
        py: Python<'py>,
        feature: &PyReadonlyArray1<'py, i64>,
        distance: &PyReadonlyArray1<'py, f64>,
        normalized: bool,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (feature, distance) = (column(feature, "feature")?, column(distance, "distance")?);
        if feature.len() != distance.len() {
            return Err(PyValueError::new_err(format!(
                "feature and distance differ in length ({} and {})",
                feature.len(),
                distance.len()
            )));
        }
        let n_features = self.feature_part.len() - 1;
        if let Some(&f) = feature.iter().find(|&&f| f < 0 || f as u64 >= n_features as u64) {
            return Err(PyIndexError::new_err(format!("feature {f} out of range (the index has {n_features})")));
        }
        let out = py.detach(|| {
            feature
                .iter()
                .zip(distance)
                .map(|(&f, &s)| {
                    let f = f as usize;
                    let s = if normalized { s * self.length(f) } else { s };
                    self.point_at(f, s)
                })
                .collect::<Vec<_>>()
        });
        points_array(py, out)
    }
}

enum Inner {
    D2(Features<2>),
    D3(Features<3>),
}

impl Inner {
    /// Features over `coords` (`(V, 2|3)` float64), their parts and
    /// features given by `layout(V)` (offsets, checked).
    fn new(
        py: Python<'_>,
        coords: &Bound<'_, PyAny>,
        layout: impl FnOnce(usize) -> PyResult<(Vec<usize>, Vec<usize>)>,
    ) -> PyResult<Self> {
        let arr = coords.cast::<PyUntypedArray>()?;
        if arr.ndim() != 2 {
            return Err(PyValueError::new_err(format!(
                "coords must have shape (N, 2) or (N, 3), got {:?}",
                arr.shape()
            )));
        }
        let (parts, features) = layout(arr.shape()[0])?;
        Ok(match arr.shape()[1] {
            2 => {
                let verts = vertices_of::<2>(coords)?;
                Inner::D2(py.detach(|| Features::build(verts, parts, features))?)
            }
            3 => {
                let verts = vertices_of::<3>(coords)?;
                Inner::D3(py.detach(|| Features::build(verts, parts, features))?)
            }
            d => return Err(PyValueError::new_err(format!("coordinates must be 2-D or 3-D, got {d}"))),
        })
    }

    fn dim(&self) -> usize {
        match self {
            Inner::D2(_) => 2,
            Inner::D3(_) => 3,
        }
    }
}

/// Dispatches on the index's dimension.
macro_rules! on_dim {
    ($self:expr, $f:ident => $body:expr) => {
        match &$self.inner {
            Inner::D2($f) => $body,
            Inner::D3($f) => $body,
        }
    };
}

/// The native half of `segdist.SegmentIndex`: see the Python class.
#[pyclass(frozen, module = "segdist._segdist")]
pub struct SegmentIndex {
    inner: Inner,
}

fn vertices_of<const D: usize>(coords: &Bound<'_, PyAny>) -> PyResult<Vec<[f64; D]>> {
    let arr: PyReadonlyArray2<f64> = coords.extract()?;
    Ok(rows::<f64, D>(&arr, "coords")?.to_vec())
}

#[pymethods]
impl SegmentIndex {
    /// Builds from `coords` (`(V, D)` float64), `part_offsets` (the first
    /// vertex of each part, then `V`) and `feature_offsets` (the first part
    /// of each feature, then the number of parts): GeoArrow's
    /// MultiLineString layout.
    #[staticmethod]
    fn build(
        py: Python<'_>,
        coords: &Bound<'_, PyAny>,
        part_offsets: PyReadonlyArray1<'_, i64>,
        feature_offsets: PyReadonlyArray1<'_, i64>,
    ) -> PyResult<Self> {
        let inner = Inner::new(py, coords, |v| {
            let parts = offsets(column(&part_offsets, "part_offsets")?, v, "part_offsets")?;
            let features = offsets(column(&feature_offsets, "feature_offsets")?, parts.len() - 1, "feature_offsets")?;
            Ok((parts, features))
        })?;
        Ok(SegmentIndex { inner })
    }

    /// 2 or 3.
    #[getter]
    fn ndim(&self) -> usize {
        self.inner.dim()
    }

    /// The number of segments.
    fn __len__(&self) -> usize {
        on_dim!(self, f => f.index.len())
    }

    /// The number of features.
    #[getter]
    fn n_features(&self) -> usize {
        on_dim!(self, f => f.feature_part.len() - 1)
    }

    /// Bytes held: the index, and the vertices and lengths kept for
    /// linear referencing.
    #[getter]
    fn memory_bytes(&self) -> usize {
        on_dim!(self, f => f.index.memory_bytes()
            + f.vertices.len() * 8 * self.inner.dim()
            + (f.cum.len() + f.part_start.len() + f.feature_part.len()) * 8)
    }

    /// The length of every feature.
    fn lengths<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        on_dim!(self, f => PyArray1::from_vec(py, f.lengths.clone()))
    }

    #[pyo3(signature = (points, max_distance = f64::INFINITY, threads = None))]
    fn nearest<'py>(
        &self,
        py: Python<'py>,
        points: PyReadonlyArray2<'py, f64>,
        max_distance: f64,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        on_dim!(self, f => f.nearest(py, &points, max_distance, threads))
    }

    #[pyo3(signature = (points, k, max_distance = f64::INFINITY, threads = None))]
    fn nearest_k<'py>(
        &self,
        py: Python<'py>,
        points: PyReadonlyArray2<'py, f64>,
        k: usize,
        max_distance: f64,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let opts = query_options(max_distance, threads)?;
        on_dim!(self, f => f.many(py, &points, threads, |i, p, out| i.k_nearest_many_into(p, k, &opts, out)))
    }

    #[pyo3(signature = (points, radius, threads = None))]
    fn within<'py>(
        &self,
        py: Python<'py>,
        points: PyReadonlyArray2<'py, f64>,
        radius: f64,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let radius = check_distance(radius, "radius")?;
        let opts = query_options(f64::INFINITY, threads)?;
        on_dim!(self, f => f.many(py, &points, threads, |i, p, out| i.within_many_into(p, radius, &opts, out)))
    }

    #[pyo3(signature = (feature, distance, normalized = false))]
    fn interpolate<'py>(
        &self,
        py: Python<'py>,
        feature: PyReadonlyArray1<'py, i64>,
        distance: PyReadonlyArray1<'py, f64>,
        normalized: bool,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        on_dim!(self, f => f.interpolate(py, &feature, &distance, normalized))
    }
}

/// The native half of `segdist.Polyline`: see the Python class.
#[pyclass(frozen, module = "segdist._segdist")]
pub struct Polyline {
    inner: Inner,
}

#[pymethods]
impl Polyline {
    #[new]
    fn new(py: Python<'_>, coords: &Bound<'_, PyAny>) -> PyResult<Self> {
        let inner = Inner::new(py, coords, |v| Ok((vec![0, v], vec![0, 1])))?;
        Ok(Polyline { inner })
    }

    /// The length.
    #[getter]
    fn length(&self) -> f64 {
        on_dim!(self, f => f.length(0))
    }

    /// The number of vertices.
    fn __len__(&self) -> usize {
        on_dim!(self, f => f.vertices.len())
    }

    #[pyo3(signature = (points, max_distance = f64::INFINITY, threads = None))]
    fn locate<'py>(
        &self,
        py: Python<'py>,
        points: PyReadonlyArray2<'py, f64>,
        max_distance: f64,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        on_dim!(self, f => f.nearest(py, &points, max_distance, threads))
    }

    #[pyo3(signature = (distance, normalized = false))]
    fn interpolate<'py>(
        &self,
        py: Python<'py>,
        distance: PyReadonlyArray1<'py, f64>,
        normalized: bool,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let n = column(&distance, "distance")?.len();
        let feature = PyArray1::from_vec(py, vec![0i64; n]).readonly();
        on_dim!(self, f => f.interpolate(py, &feature, &distance, normalized))
    }
}
