//! Longitude/latitude in metres on WGS84 (segdist-geo): `geodesic` over
//! pairs of (segment, point), and `GeoIndex`, the exact nearest geodesic
//! segment with the distance along its line, as `segdist snap` gives them
//! for lon/lat input.

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rayon::prelude::*;
use segdist_geo::{geodesic as kernel, GeoIndex as Index};

use crate::arrays::{column, points_array, rows, with_threads};

/// `(point (N, 2), t, along, distance)` of segment `a[i]`–`b[i]` and point
/// `p[i]`, every `i`, on all cores; a `ValueError` naming the first row that
/// is not a longitude/latitude.
#[pyfunction]
#[pyo3(signature = (a, b, p, threads=None))]
pub fn geodesic<'py>(
    py: Python<'py>,
    a: PyReadonlyArray2<'py, f64>,
    b: PyReadonlyArray2<'py, f64>,
    p: PyReadonlyArray2<'py, f64>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (a, b, p) = (rows::<f64, 2>(&a, "a")?, rows::<f64, 2>(&b, "b")?, rows::<f64, 2>(&p, "p")?);
    if a.len() != b.len() || a.len() != p.len() {
        return Err(PyValueError::new_err(format!(
            "a, b and p differ in length ({}, {}, {})",
            a.len(),
            b.len(),
            p.len()
        )));
    }
    let out = py.detach(|| {
        with_threads(threads, || {
            (0..p.len()).into_par_iter().map(|i| kernel(a[i], b[i], p[i]).ok_or(i)).collect::<Vec<_>>()
        })
    })?;
    let n = out.len();
    let (mut point, mut t, mut along, mut distance) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for r in out {
        let r = r.map_err(|i| {
            PyValueError::new_err(format!("row {i}: not a longitude/latitude (|latitude| <= 90, finite)"))
        })?;
        point.push(r.point);
        t.push(r.t);
        along.push(r.along);
        distance.push(r.distance);
    }
    PyTuple::new(
        py,
        [
            points_array(py, point)?.into_any(),
            PyArray1::from_vec(py, t).into_any(),
            PyArray1::from_vec(py, along).into_any(),
            PyArray1::from_vec(py, distance).into_any(),
        ],
    )
}

/// The native half of `segdist.GeoIndex`: see the Python class.
#[pyclass(frozen, module = "segdist._segdist")]
pub struct GeoIndex {
    index: Index,
    /// Metres along its part, per vertex.
    cum: Vec<f64>,
    part_start: Vec<usize>,
    feature_part: Vec<usize>,
}

#[pymethods]
impl GeoIndex {
    /// Builds from `coords` (`(V, 2)` lon/lat), `part_offsets` and
    /// `feature_offsets` (GeoArrow's MultiLineString layout).
    #[staticmethod]
    fn build(
        py: Python<'_>,
        coords: PyReadonlyArray2<'_, f64>,
        part_offsets: PyReadonlyArray1<'_, i64>,
        feature_offsets: PyReadonlyArray1<'_, i64>,
    ) -> PyResult<Self> {
        let v = rows::<f64, 2>(&coords, "coords")?;
        let parts = crate::index::offsets(column(&part_offsets, "part_offsets")?, v.len(), "part_offsets")?;
        let features =
            crate::index::offsets(column(&feature_offsets, "feature_offsets")?, parts.len() - 1, "feature_offsets")?;
        py.detach(|| {
            let lists: Vec<Vec<&[[f64; 2]]>> =
                features.windows(2).map(|f| (f[0]..f[1]).map(|q| &v[parts[q]..parts[q + 1]]).collect()).collect();
            let index = Index::from_multi_polylines(lists.iter().map(Vec::as_slice))
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            let mut cum = Vec::with_capacity(v.len());
            for q in parts.windows(2) {
                cum.extend(segdist_geo::geodesic_lengths(&v[q[0]..q[1]]));
            }
            Ok(GeoIndex { index, cum, part_start: parts, feature_part: features })
        })
    }

    /// The number of segments.
    fn __len__(&self) -> usize {
        self.index.len()
    }

    /// For every point: `(feature, part, segment, t, distance, point,
    /// along)`, -1 and NaN where nothing is within `max_distance` metres.
    fn nearest<'py>(
        &self,
        py: Python<'py>,
        points: PyReadonlyArray2<'py, f64>,
        max_distance: f64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        if max_distance.is_nan() || max_distance < 0.0 {
            return Err(PyValueError::new_err(format!("max_distance must be a number >= 0, got {max_distance}")));
        }
        let pts = rows::<f64, 2>(&points, "points")?;
        let hits = py.detach(|| self.index.nearest_many(pts, max_distance));
        let n = hits.len();
        let (mut feature, mut part, mut segment) = (vec![-1i64; n], vec![-1i64; n], vec![-1i64; n]);
        let (mut t, mut distance, mut along) = (vec![f64::NAN; n], vec![f64::NAN; n], vec![f64::NAN; n]);
        let mut point = vec![[f64::NAN; 2]; n];
        for (i, h) in hits.iter().enumerate() {
            if let Some(h) = h {
                let q = self.feature_part[h.feature] + h.part;
                let cum = &self.cum[self.part_start[q]..self.part_start[q + 1]];
                (feature[i], part[i], segment[i]) = (h.feature as i64, h.part as i64, h.segment as i64);
                (t[i], distance[i], point[i]) = (h.projection.t, h.projection.distance, h.projection.point);
                along[i] = segdist_geo::along_line(cum, h.segment, &h.projection);
            }
        }
        PyTuple::new(
            py,
            [
                PyArray1::from_vec(py, feature).into_any(),
                PyArray1::from_vec(py, part).into_any(),
                PyArray1::from_vec(py, segment).into_any(),
                PyArray1::from_vec(py, t).into_any(),
                PyArray1::from_vec(py, distance).into_any(),
                points_array(py, point)?.into_any(),
                PyArray1::from_vec(py, along).into_any(),
            ],
        )
    }
}
