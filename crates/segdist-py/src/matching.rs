//! `segdist.RoadNetwork`: map matching (segdist-match) on numpy columns.
//! Traces are runs of equal ids in a trace-id column; they are matched on
//! all cores with the GIL released, and the answer comes back as columns,
//! one row per fix, the same as `segdist match`'s rows.

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rayon::prelude::*;
use segdist_match::{Direction, Fix, FixState, GraphBuilder, Junctions, MatchOptions, Matcher, RoadGraph, Space};

use crate::arrays::{column, rows, with_threads};

/// The native half of `segdist.RoadNetwork`: see the Python class.
#[pyclass(frozen, module = "segdist._segdist")]
pub struct RoadNetwork {
    graph: RoadGraph,
}

#[pymethods]
impl RoadNetwork {
    /// Builds from `coords` (`(V, 2)` float64) and `offsets` (the first
    /// vertex of each line, then `V`), `oneway` (int8 per line: 0 both
    /// ways, 1 along the vertex order, -1 against it), and optionally the
    /// node ids of each line's ends (`from_node`, `to_node`: int64 per
    /// line, or both empty).
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        coords: PyReadonlyArray2<'_, f64>,
        offsets: PyReadonlyArray1<'_, i64>,
        oneway: PyReadonlyArray1<'_, i8>,
        from_node: PyReadonlyArray1<'_, i64>,
        to_node: PyReadonlyArray1<'_, i64>,
        geographic: bool,
        shared_vertices: bool,
    ) -> PyResult<Self> {
        let coords = rows::<f64, 2>(&coords, "coords")?;
        let offsets = column(&offsets, "offsets")?;
        let oneway = column(&oneway, "oneway")?;
        let (from_node, to_node) = (column(&from_node, "from_node")?, column(&to_node, "to_node")?);
        if from_node.len() != to_node.len() || !(from_node.is_empty() || from_node.len() == oneway.len()) {
            return Err(PyValueError::new_err(
                "from_node and to_node must both have one id per line, or both be empty",
            ));
        }
        if offsets.first() != Some(&0)
            || offsets.windows(2).any(|w| w[1] < w[0])
            || usize::try_from(*offsets.last().unwrap_or(&0)).ok() != Some(coords.len())
        {
            return Err(PyValueError::new_err(
                "offsets must start at 0, not decrease, and end at the number of vertices",
            ));
        }
        if oneway.len() + 1 != offsets.len() {
            return Err(PyValueError::new_err(format!(
                "oneway has {} values for {} lines",
                oneway.len(),
                offsets.len() - 1
            )));
        }
        let space = if geographic { Space::Geographic } else { Space::Planar };
        let rule = if shared_vertices { Junctions::SharedVertices } else { Junctions::Ends };
        let mut b = GraphBuilder::new(space).junctions(rule);
        for (l, (w, &d)) in offsets.windows(2).zip(oneway).enumerate() {
            let dir = match d {
                1 => Direction::Forward,
                -1 => Direction::Backward,
                _ => Direction::Both,
            };
            let vertices = coords[w[0] as usize..w[1] as usize].to_vec();
            if from_node.is_empty() {
                b.push_line(vec![vertices], dir);
            } else {
                // Ids are opaque: their bits, signed or not.
                b.push_line_between(vertices, dir, from_node[l] as u64, to_node[l] as u64);
            }
        }
        let graph = py.detach(|| b.build()).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(RoadNetwork { graph })
    }

    /// (nodes, arcs).
    fn size(&self) -> (usize, usize) {
        (self.graph.nodes(), self.graph.arcs())
    }

    /// Matches the traces: `trace` (int64 per fix; a trace is a run of
    /// equal values), `xy` (`(N, 2)` float64), `time` (float64 per fix, or
    /// empty for none); `radius` `None`: [`default_radius`] of `sigma`.
    /// Returns the columns line, part, segment, t, distance, x, y, along,
    /// sub_match, state.
    #[allow(clippy::too_many_arguments)]
    fn match_traces<'py>(
        &self,
        py: Python<'py>,
        trace: PyReadonlyArray1<'_, i64>,
        xy: PyReadonlyArray2<'_, f64>,
        time: PyReadonlyArray1<'_, f64>,
        sigma: f64,
        beta: f64,
        radius: Option<f64>,
        k: usize,
        max_speed: f64,
        acceleration: f64,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let ids = column(&trace, "trace")?;
        let xy = rows::<f64, 2>(&xy, "xy")?;
        let time = column(&time, "time")?;
        if ids.len() != xy.len() || !(time.is_empty() || time.len() == xy.len()) {
            return Err(PyValueError::new_err(format!(
                "trace ({}), xy ({}) and time ({}) must have one value per fix (time may be empty)",
                ids.len(),
                xy.len(),
                time.len()
            )));
        }
        let radius = radius.unwrap_or_else(|| segdist_match::default_radius(sigma));
        let options = MatchOptions { sigma, beta, radius, k, max_speed, acceleration, ..Default::default() };
        let matcher = Matcher::new(&self.graph, options).map_err(|e| PyValueError::new_err(e.to_string()))?;
        // Runs of equal ids; an id seen again after another is an error.
        let mut runs = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut start = 0;
        for i in 1..=ids.len() {
            if i == ids.len() || ids[i] != ids[start] {
                if !seen.insert(ids[start]) {
                    return Err(PyValueError::new_err(format!(
                        "fix {start}: trace {} appears again after other traces (a trace's fixes must be consecutive)",
                        ids[start]
                    )));
                }
                runs.push(start..i);
                start = i;
            }
        }
        let fix = |i: usize| Fix { point: xy[i], time: time.get(i).copied() };
        let results = py
            .detach(|| {
                with_threads(threads, || {
                    runs.par_iter()
                        .map(|r| {
                            let fixes: Vec<Fix> = r.clone().map(fix).collect();
                            matcher.match_trace(&fixes, false).map_err(|e| match e {
                                segdist_match::MatchError::TimeGoesBack { fix } => {
                                    format!("fix {}: the time goes back from the fix before", r.start + fix)
                                }
                                other => other.to_string(),
                            })
                        })
                        .collect::<Result<Vec<_>, String>>()
                })
            })?
            .map_err(PyValueError::new_err)?;
        let n = xy.len();
        let (mut line, mut part, mut segment) = (vec![-1i64; n], vec![-1i64; n], vec![-1i64; n]);
        let (mut t, mut distance, mut x, mut y, mut along) =
            (vec![f64::NAN; n], vec![f64::NAN; n], vec![f64::NAN; n], vec![f64::NAN; n], vec![f64::NAN; n]);
        let (mut sub, mut state) = (vec![0i64; n], vec![0i8; n]);
        for (r, res) in runs.iter().zip(results) {
            for (i, m) in r.clone().zip(res.fixes) {
                sub[i] = i64::from(m.sub_match);
                state[i] = match m.state {
                    FixState::Matched => 0,
                    FixState::Unmatched => 1,
                    FixState::Break => 2,
                };
                if let Some(c) = m.candidate {
                    (line[i], part[i], segment[i]) = (c.line as i64, c.part as i64, c.segment as i64);
                    (t[i], distance[i], x[i], y[i], along[i]) = (c.t, c.distance, c.point[0], c.point[1], c.along);
                }
            }
        }
        PyTuple::new(
            py,
            [
                PyArray1::from_vec(py, line).into_any(),
                PyArray1::from_vec(py, part).into_any(),
                PyArray1::from_vec(py, segment).into_any(),
                PyArray1::from_vec(py, t).into_any(),
                PyArray1::from_vec(py, distance).into_any(),
                PyArray1::from_vec(py, x).into_any(),
                PyArray1::from_vec(py, y).into_any(),
                PyArray1::from_vec(py, along).into_any(),
                PyArray1::from_vec(py, sub).into_any(),
                PyArray1::from_vec(py, state).into_any(),
            ],
        )
    }
}

/// The radius a match looks for candidates within when none is given:
/// `segdist_match::default_radius` (3 × sigma, at least 50).
#[pyfunction]
pub fn default_radius(sigma: f64) -> f64 {
    segdist_match::default_radius(sigma)
}
