//! Borrowing numpy arrays as Rust slices, and handing results back.

use numpy::{Element, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// The rows of an `(N, D)` C-contiguous array, without copying.
pub fn rows<'a, T: Element, const D: usize>(arr: &'a PyReadonlyArray2<'_, T>, what: &str) -> PyResult<&'a [[T; D]]> {
    let shape = arr.shape();
    if shape[1] != D {
        return Err(PyValueError::new_err(format!("{what} must have shape (N, {D}), got {shape:?}")));
    }
    let flat = arr.as_slice().map_err(|_| PyTypeError::new_err(format!("{what} must be C-contiguous")))?;
    let (rows, rest) = flat.as_chunks::<D>();
    debug_assert!(rest.is_empty());
    Ok(rows)
}

/// A 1-D C-contiguous array as a slice, without copying.
pub fn column<'a, T: Element>(arr: &'a PyReadonlyArray1<'_, T>, what: &str) -> PyResult<&'a [T]> {
    arr.as_slice().map_err(|_| PyTypeError::new_err(format!("{what} must be C-contiguous")))
}

/// One point or vertex given as a 1-D array of length `D`.
pub fn vertex<T: Element + Copy, const D: usize>(arr: &PyReadonlyArray1<'_, T>, what: &str) -> PyResult<[T; D]> {
    let s = column(arr, what)?;
    s.try_into().map_err(|_| PyValueError::new_err(format!("{what} must have shape ({D},), got ({},)", s.len())))
}

/// `Vec<[T; D]>` as an `(N, D)` array (no copy: numpy takes the buffer).
pub fn points_array<'py, T: Element, const D: usize>(
    py: Python<'py>,
    points: Vec<[T; D]>,
) -> PyResult<Bound<'py, PyArray2<T>>> {
    let n = points.len();
    PyArray1::from_vec(py, points.into_flattened()).reshape([n, D])
}

/// Runs `f` on `threads` worker threads: `None` or `0` for rayon's global
/// pool (all cores), `1` for the calling thread, `k` for a pool of `k`.
pub fn with_threads<R: Send>(threads: Option<usize>, f: impl FnOnce() -> R + Send) -> PyResult<R> {
    match threads {
        None | Some(0) | Some(1) => Ok(f()),
        Some(k) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(k)
                .build()
                .map_err(|e| PyValueError::new_err(format!("cannot start {k} threads: {e}")))?;
            Ok(pool.install(f))
        }
    }
}

/// For each object of a 1-D object array, the position in `classes` of its
/// exact class, or `-1` for a class not among them: shapely's geometry
/// types read from the objects' classes (shapely makes each geometry an
/// instance of its type's class), without a call into GEOS per geometry,
/// which `shapely.get_type_id` costs (3 ms for 100,000 lines, a tenth of a
/// whole 200k-point `sjoin_nearest`). Python falls back to GEOS for `-1`.
#[pyfunction]
pub fn class_codes<'py>(
    py: Python<'py>,
    objects: PyReadonlyArray1<'py, Py<PyAny>>,
    classes: Vec<Bound<'py, pyo3::types::PyType>>,
) -> Bound<'py, PyArray1<i8>> {
    let classes: Vec<*mut pyo3::ffi::PyTypeObject> = classes.iter().map(|c| c.as_type_ptr()).collect();
    let codes: Vec<i8> = objects
        .as_array()
        .iter()
        .map(|o| {
            let class = o.bind(py).get_type().as_type_ptr();
            classes.iter().position(|&c| c == class).and_then(|i| i8::try_from(i).ok()).unwrap_or(-1)
        })
        .collect();
    PyArray1::from_vec(py, codes)
}

/// Whether two 1-D object arrays hold the same objects (the very same, not
/// equal ones) in the same order: how `sjoin_nearest` sees that the lines
/// it kept an index of are unchanged (shapely's geometries are immutable,
/// and the kept array holds its objects alive, so an address is never
/// reused by another geometry meanwhile).
#[pyfunction]
pub fn same_objects<'py>(a: PyReadonlyArray1<'py, Py<PyAny>>, b: PyReadonlyArray1<'py, Py<PyAny>>) -> bool {
    let (a, b) = (a.as_array(), b.as_array());
    a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.as_ptr() == y.as_ptr())
}
