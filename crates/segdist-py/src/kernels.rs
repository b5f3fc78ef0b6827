//! Vectorised kernels: one segment (or line) against many points, or many
//! (segment, point) pairs, over `segdist::batch` (SIMD chosen at run time,
//! all cores, bit-identical to the scalar methods).

use numpy::{
    dtype, Element, PyArray1, PyArray2, PyArrayDescrMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rayon::prelude::*;
use segdist::batch::{self, Isa, Options, Outputs, Points, Tier};
use segdist::{Line, Region, Scalar};

use crate::arrays::{column, points_array, rows, vertex};

/// The two coordinate types the kernels run in (others are converted to
/// `float64` on the Python side).
#[derive(Clone, Copy)]
enum Kind {
    F64,
    F32,
}

/// How the points were given: an `(N, D)` array, or a tuple of `D`
/// columns; the dtype and `D` they share.
fn describe(p: &Bound<'_, PyAny>) -> PyResult<(bool, Kind, usize)> {
    let (columns, first, dim) = if let Ok(t) = p.cast::<PyTuple>() {
        let first = t.get_item(0)?;
        (true, first, t.len())
    } else {
        let arr = p.cast::<PyUntypedArray>().map_err(|_| PyTypeError::new_err("p must be a numpy array"))?;
        if arr.ndim() != 2 {
            return Err(PyValueError::new_err(format!("p must have shape (N, 2) or (N, 3), got {:?}", arr.shape())));
        }
        (false, p.clone(), arr.shape()[1])
    };
    let arr = first.cast::<PyUntypedArray>().map_err(|_| PyTypeError::new_err("p must hold numpy arrays"))?;
    let py = p.py();
    let kind = if arr.dtype().is_equiv_to(&dtype::<f64>(py)) {
        Kind::F64
    } else if arr.dtype().is_equiv_to(&dtype::<f32>(py)) {
        Kind::F32
    } else {
        return Err(PyTypeError::new_err(format!("p must be float64 or float32, got {}", arr.dtype())));
    };
    Ok((columns, kind, dim))
}

type Projected<'py, T> = (
    Option<Bound<'py, PyArray1<T>>>,
    Option<Bound<'py, PyArray1<T>>>,
    Option<Bound<'py, PyArray1<T>>>,
    Option<Bound<'py, PyArray2<T>>>,
    Option<Bound<'py, PyArray1<u8>>>,
);

/// Distances, squared distances, `t`, closest points and regions (those
/// named in `outputs`: `d`, `s`, `t`, `p`, `r`) from segments `a → b` to
/// points `p`.
///
/// `a` and `b` are one vertex each (shape `(D,)`: one segment against every
/// point) or one per point (`(N, D)`: pairs); `p` is `(N, D)` or a tuple of
/// `D` columns of length `N`. All share one dtype, `float64` or `float32`,
/// and are C-contiguous. Region codes: 0 start, 1 interior, 2 end,
/// 3 undefined (non-finite input).
#[pyfunction]
#[pyo3(signature = (a, b, p, outputs, *, line = false, fast = false, threads = None))]
#[allow(clippy::too_many_arguments)]
pub fn project<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    p: &Bound<'py, PyAny>,
    outputs: &str,
    line: bool,
    fast: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyTuple>> {
    let opts = Options { line, tier: if fast { Tier::Fast } else { Tier::Accurate }, threads, isa: Isa::Auto };
    let (columns, kind, dim) = describe(p)?;
    let call = Call { a, b, p, columns, outputs, opts };
    match (kind, dim) {
        (Kind::F64, 2) => call.run::<f64, 2>(py)?.into_pyobject(py),
        (Kind::F64, 3) => call.run::<f64, 3>(py)?.into_pyobject(py),
        (Kind::F32, 2) => call.run::<f32, 2>(py)?.into_pyobject(py),
        (Kind::F32, 3) => call.run::<f32, 3>(py)?.into_pyobject(py),
        _ => Err(PyValueError::new_err(format!("points must have 2 or 3 coordinates, got {dim}"))),
    }
}

struct Call<'a, 'py> {
    a: &'a Bound<'py, PyAny>,
    b: &'a Bound<'py, PyAny>,
    p: &'a Bound<'py, PyAny>,
    columns: bool,
    outputs: &'a str,
    opts: Options,
}

/// The points, borrowed: rows or columns.
enum Borrowed<'py, T: Element> {
    Rows(PyReadonlyArray2<'py, T>),
    Columns(Vec<PyReadonlyArray1<'py, T>>),
}

impl<'py, T: Element + 'static> Borrowed<'py, T> {
    fn new(p: &Bound<'py, PyAny>, columns: bool) -> PyResult<Self> {
        Ok(if columns { Borrowed::Columns(p.extract()?) } else { Borrowed::Rows(p.extract()?) })
    }

    fn points<const D: usize>(&self) -> PyResult<Points<'_, T, D>> {
        match self {
            Borrowed::Rows(r) => Ok(Points::Rows(rows::<T, D>(r, "p")?)),
            Borrowed::Columns(c) => {
                let cols = c.iter().map(|c| column(c, "p")).collect::<PyResult<Vec<_>>>()?;
                let cols: [&[T]; D] =
                    cols.try_into().map_err(|_| PyValueError::new_err("p has the wrong number of columns"))?;
                if cols.iter().any(|c| c.len() != cols[0].len()) {
                    return Err(PyValueError::new_err("the columns of p differ in length"));
                }
                Ok(Points::Columns(cols))
            }
        }
    }
}

/// The segments' vertices: one for all points, or one per point.
enum Vertices<'py, T: Element> {
    One(PyReadonlyArray1<'py, T>),
    Many(PyReadonlyArray2<'py, T>),
}

impl<'py, T: Element + 'static> Vertices<'py, T> {
    fn new(x: &Bound<'py, PyAny>, what: &str) -> PyResult<Self> {
        let arr =
            x.cast::<PyUntypedArray>().map_err(|_| PyTypeError::new_err(format!("{what} must be a numpy array")))?;
        let wrong_dtype = || PyTypeError::new_err(format!("{what} must have the dtype of p ({})", arr.dtype()));
        match arr.ndim() {
            1 => Ok(Vertices::One(x.extract().map_err(|_| wrong_dtype())?)),
            2 => Ok(Vertices::Many(x.extract().map_err(|_| wrong_dtype())?)),
            _ => Err(PyValueError::new_err(format!("{what} must have shape (D,) or (N, D), got {:?}", arr.shape()))),
        }
    }
}

impl<'py> Call<'_, 'py> {
    fn run<T: Scalar + Element, const D: usize>(&self, py: Python<'py>) -> PyResult<Projected<'py, T>> {
        let pts = Borrowed::<T>::new(self.p, self.columns)?;
        let points = pts.points::<D>()?;
        let n = points.len();
        let want = |c: char| self.outputs.contains(c);
        let mut d = want('d').then(|| vec![T::ZERO; n]);
        let mut s = want('s').then(|| vec![T::ZERO; n]);
        let mut t = want('t').then(|| vec![T::ZERO; n]);
        let mut q = want('p').then(|| vec![[T::ZERO; D]; n]);
        let mut r = want('r').then(|| vec![Region::Start; n]);
        let out = Outputs {
            distance: d.as_deref_mut(),
            distance_squared: s.as_deref_mut(),
            t: t.as_deref_mut(),
            point: q.as_deref_mut(),
            region: r.as_deref_mut(),
        };
        let (a, b) = (Vertices::<T>::new(self.a, "a")?, Vertices::<T>::new(self.b, "b")?);
        let opts = self.opts;
        let done = match (&a, &b) {
            (Vertices::One(a), Vertices::One(b)) => {
                let (a, b) = (vertex::<T, D>(a, "a")?, vertex::<T, D>(b, "b")?);
                py.detach(|| batch::one_to_many(a, b, points, out, &opts))
            }
            (Vertices::Many(a), Vertices::Many(b)) => {
                let (a, b) = (rows::<T, D>(a, "a")?, rows::<T, D>(b, "b")?);
                py.detach(|| batch::pairs(a, b, points, out, &opts))
            }
            _ => return Err(PyValueError::new_err("a and b must both be one vertex or both one per point")),
        };
        done.map_err(|e| PyValueError::new_err(e.to_string()))?;
        let region = r.map(|r| r.into_iter().map(region_code).collect::<Vec<u8>>());
        Ok((
            d.map(|v| PyArray1::from_vec(py, v)),
            s.map(|v| PyArray1::from_vec(py, v)),
            t.map(|v| PyArray1::from_vec(py, v)),
            q.map(|v| points_array(py, v)).transpose()?,
            region.map(|v| PyArray1::from_vec(py, v)),
        ))
    }
}

/// The code of a region in the arrays handed to Python.
fn region_code(r: Region) -> u8 {
    match r {
        Region::Start => 0,
        Region::Interior => 1,
        Region::End => 2,
        Region::Undefined => 3,
    }
}

/// Signed distances from the lines through `a → b` to 2-D points `p`
/// (positive on the left), faithfully rounded with an exact sign. Shapes
/// and dtypes as for [`project`].
#[pyfunction]
#[pyo3(signature = (a, b, p, *, threads = None))]
pub fn signed_distance<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    p: &Bound<'py, PyAny>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let (columns, kind, dim) = describe(p)?;
    if dim != 2 {
        return Err(PyValueError::new_err(format!("signed_distance is for 2-D points, got {dim} coordinates")));
    }
    match kind {
        Kind::F64 => Ok(signed::<f64>(py, a, b, p, columns, threads)?.into_any()),
        Kind::F32 => Ok(signed::<f32>(py, a, b, p, columns, threads)?.into_any()),
    }
}

fn signed<'py, T: Scalar + Element>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    p: &Bound<'py, PyAny>,
    columns: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<T>>> {
    let pts = Borrowed::<T>::new(p, columns)?;
    let points = pts.points::<2>()?;
    let at = |i: usize| match points {
        Points::Rows(r) => r[i],
        Points::Columns([x, y]) => [x[i], y[i]],
    };
    let n = points.len();
    let (a, b) = (Vertices::<T>::new(a, "a")?, Vertices::<T>::new(b, "b")?);
    let mut out = vec![T::ZERO; n];
    let lines: Box<dyn Fn(usize) -> Line<T, 2> + Sync> = match (&a, &b) {
        (Vertices::One(a), Vertices::One(b)) => {
            let line = Line::new(vertex::<T, 2>(a, "a")?, vertex::<T, 2>(b, "b")?);
            Box::new(move |_| line)
        }
        (Vertices::Many(a), Vertices::Many(b)) => {
            let (a, b) = (rows::<T, 2>(a, "a")?, rows::<T, 2>(b, "b")?);
            if a.len() != n || b.len() != n {
                return Err(PyValueError::new_err(format!(
                    "a, b and p differ in length ({}, {}, {n})",
                    a.len(),
                    b.len()
                )));
            }
            Box::new(move |i| Line::new(a[i], b[i]))
        }
        _ => return Err(PyValueError::new_err("a and b must both be one vertex or both one per point")),
    };
    const CHUNK: usize = 4096;
    let fill = |(c, out): (usize, &mut [T])| {
        for (k, o) in out.iter_mut().enumerate() {
            let i = c * CHUNK + k;
            *o = lines(i).signed_distance(at(i));
        }
    };
    py.detach(|| -> PyResult<()> {
        if threads == Some(1) || n < 2 * CHUNK {
            out.chunks_mut(CHUNK).enumerate().for_each(fill);
            Ok(())
        } else {
            crate::arrays::with_threads(threads, || out.par_chunks_mut(CHUNK).enumerate().for_each(fill))
        }
    })?;
    Ok(PyArray1::from_vec(py, out))
}

/// The instruction set the batch kernels run on here (`"avx512"`,
/// `"avx2"`, `"sse2"`, `"neon"` or `"scalar"`).
#[pyfunction]
pub fn isa() -> &'static str {
    match Isa::detect() {
        Isa::Avx512 => "avx512",
        Isa::Avx2 => "avx2",
        Isa::Sse2 => "sse2",
        Isa::Neon => "neon",
        _ => "scalar",
    }
}
