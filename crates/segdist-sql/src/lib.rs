//! segdist in SQL: exact point–segment functions and a nearest-line join
//! for [Apache DataFusion](https://datafusion.apache.org), on one machine or
//! spread over a cluster with [Apache Ballista](https://datafusion.apache.org/ballista).
//!
//! - [`functions`]: `segdist_distance`, `segdist_distance_squared`,
//!   `segdist_closest_point` (2D and 3D), `segdist_geodesic_distance`,
//!   `segdist_line_locate_point`, `segdist_line_interpolate_point`.
//! - [`snap`]: the table function `segdist_snap('points', 'lines' [, k
//!   [, max_distance]])`, whose rows are `segdist snap --keep none`'s, bit for bit;
//!   [`exec`] its physical operator.
//! - [`files`]: tables from Parquet/GeoParquet, CSV and GeoJSON files, and
//!   results written atomically as CSV or Parquet.
//! - [`cluster`]: a Ballista scheduler and executors that know segdist's
//!   functions and operator ([`codec`]), and a client for them.
//!
//! # Example
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> datafusion::error::Result<()> {
//! let ctx = segdist_sql::context();
//! let df = ctx.sql("SELECT segdist_distance(1.0, 3.0, 0.0, 0.0, 2.0, 0.0) AS d").await?;
//! let batches = df.collect().await?;
//! let d = batches[0].column(0).as_any().downcast_ref::<datafusion::arrow::array::Float64Array>().unwrap();
//! assert_eq!(d.value(0), 3.0);
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::prelude::{SessionConfig, SessionContext};

pub mod cluster;
pub mod codec;
pub mod exec;
pub mod files;
pub mod functions;
pub mod geometry;
pub mod parts;
pub mod snap;

/// A session state with segdist's functions, table function and planner
/// added to DataFusion's defaults.
///
/// ```
/// let state = segdist_sql::session_state(datafusion::prelude::SessionConfig::new());
/// assert!(state.table_functions().contains_key("segdist_snap"));
/// ```
pub fn session_state(config: SessionConfig) -> SessionState {
    let state = SessionStateBuilder::new()
        .with_default_features()
        .with_config(config)
        .with_query_planner(Arc::new(snap::SnapQueryPlanner))
        .build();
    with_segdist(state)
}

/// Adds segdist's scalar functions and `segdist_snap` to `state`.
///
/// ```
/// let state = datafusion::execution::SessionStateBuilder::new().with_default_features().build();
/// let state = segdist_sql::with_segdist(state);
/// assert!(state.scalar_functions().contains_key("segdist_closest_point"));
/// ```
pub fn with_segdist(mut state: SessionState) -> SessionState {
    use datafusion::execution::FunctionRegistry;
    for f in functions::all() {
        // Registering returns the function it replaced, if any.
        let _ = state.register_udf(f);
    }
    state.register_udtf("segdist_snap", Arc::new(snap::SnapFunction));
    state
}

/// segdist-sql's defaults on top of DataFusion's: Parquet is written with
/// LZ4 and no dictionary pages (`datafusion.execution.parquet.compression =
/// 'lz4_raw'`, `dictionary_enabled = false`). segdist's results are mostly
/// distinct floats, which dictionaries do not shrink. `COPY` of 10 M rows
/// of `segdist_snap` wrote 532 MB in 2.2 s this way, and 471 MB in 6.2 s
/// with DataFusion's defaults (`zstd(3)` and dictionaries). `SET` (or
/// `--set`) changes either.
///
/// ```
/// let c = segdist_sql::with_write_defaults(datafusion::prelude::SessionConfig::new());
/// assert_eq!(c.options().execution.parquet.compression.as_deref(), Some("lz4_raw"));
/// ```
pub fn with_write_defaults(mut config: SessionConfig) -> SessionConfig {
    let parquet = &mut config.options_mut().execution.parquet;
    parquet.compression = Some("lz4_raw".into());
    parquet.dictionary_enabled = Some(false);
    config
}

/// An embedded session (no server) with everything segdist adds.
///
/// ```
/// use datafusion::execution::FunctionRegistry;
///
/// let ctx = segdist_sql::context();
/// assert!(ctx.udf("segdist_distance").is_ok());
/// ```
pub fn context() -> SessionContext {
    SessionContext::new_with_state(session_state(with_write_defaults(SessionConfig::new())))
}
