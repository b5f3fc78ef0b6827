//! The native half of the `segdist` Python package (`segdist._segdist`).
//!
//! Python's `segdist/__init__.py` turns what users pass (lists, any dtype,
//! any shape, shapely geometries) into what these functions take:
//! C-contiguous `float64` or `float32` arrays of the right shape. The
//! functions here check again (a wrong array raises `TypeError` or
//! `ValueError`, never crashes), borrow the arrays without copying, release
//! the GIL, and run the Rust library on all cores. Results are therefore
//! the Rust library's, bit for bit.
//!
//! - [`kernels`]: one segment (or line) against many points, or many
//!   (segment, point) pairs, over `segdist::batch`.
//! - [`index`]: `SegmentIndex` and `Polyline`, over `segdist-index`.
//! - [`matching`]: `RoadNetwork`, map matching over `segdist-match`.
//! - [`geo`]: `geodesic` and `GeoIndex`, lon/lat in metres over `segdist-geo`.

use pyo3::prelude::*;

mod arrays;
mod geo;
mod index;
mod kernels;
mod matching;

#[pymodule]
fn _segdist(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kernels::project, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::signed_distance, m)?)?;
    m.add_function(wrap_pyfunction!(kernels::isa, m)?)?;
    m.add_class::<index::SegmentIndex>()?;
    m.add_class::<index::Polyline>()?;
    m.add_class::<matching::RoadNetwork>()?;
    m.add_function(wrap_pyfunction!(matching::default_radius, m)?)?;
    m.add_function(wrap_pyfunction!(geo::geodesic, m)?)?;
    m.add_class::<geo::GeoIndex>()?;
    m.add_function(wrap_pyfunction!(arrays::class_codes, m)?)?;
    m.add_function(wrap_pyfunction!(arrays::same_objects, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
