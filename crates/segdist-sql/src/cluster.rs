//! segdist on a Ballista cluster: a scheduler and executors that know
//! segdist's functions and `segdist_snap` operator, and a client session.
//!
//! The client plans the SQL (the table function and the registered tables
//! live there) and sends the logical plan to the scheduler through
//! [`LogicalCodec`]; the scheduler plans it physically with
//! [`SnapQueryPlanner`](crate::snap::SnapQueryPlanner), cuts it into stages
//! and sends tasks to the executors through [`PhysicalCodec`]. In
//! `segdist_snap`'s stage the lines are one shuffled partition that every
//! task reads and indexes; the points are the task's own partition.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, Context as _, Result};
use ballista::prelude::SessionContextExt;
use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::protobuf::{job_status, GetJobStatusParams};
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::codec::{LogicalCodec, PhysicalCodec};

/// A session configuration that carries segdist's codecs.
fn config_producer() -> SessionConfig {
    config()
}

fn config() -> SessionConfig {
    crate::with_write_defaults(SessionConfig::new_with_ballista())
        .with_ballista_logical_extension_codec(Arc::new(LogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(PhysicalCodec::default()))
}

/// Runs a scheduler listening on `bind` until the process ends. Its
/// `GET /readyz` answers 200 once `min_executors` executors have
/// registered (503 before).
///
/// # Errors
/// When it cannot listen there.
///
/// ```no_run
/// # #[tokio::main] async fn main() -> anyhow::Result<()> {
/// segdist_sql::cluster::scheduler("0.0.0.0:50050".parse()?, 2).await
/// # }
/// ```
pub async fn scheduler(bind: SocketAddr, min_executors: usize) -> Result<()> {
    let mut config = SchedulerConfig {
        min_ready_executors: min_executors,
        bind_host: bind.ip().to_string(),
        bind_port: bind.port(),
        external_host: bind.ip().to_string(),
        override_logical_codec: Some(Arc::new(LogicalCodec::default())),
        override_physical_codec: Some(Arc::new(PhysicalCodec::default())),
        ..Default::default()
    };
    config.override_config_producer = Some(Arc::new(config_producer));
    config.override_session_builder = Some(Arc::new(|c| Ok(crate::session_state(c))));
    let cluster = BallistaCluster::new_from_config(&config).await.map_err(|e| anyhow!("{e}"))?;
    start_server(cluster, bind, Arc::new(config)).await.map_err(|e| anyhow!("scheduler on {bind}: {e}"))
}

/// Where an executor listens and whom it serves (see [`executor`]).
#[derive(Clone, Debug)]
pub struct ExecutorOptions {
    /// The scheduler, `host:port`.
    pub scheduler: String,
    /// Where the executor's Flight service (results, shuffles) listens.
    pub bind: SocketAddr,
    /// Where the scheduler sends tasks (default: the Flight port + 1).
    pub grpc_port: Option<u16>,
    /// The host others reach it at (default: the bind address).
    pub advertise: Option<String>,
    /// Tasks at a time (default: the number of cores).
    pub concurrent_tasks: usize,
    /// Where the executor keeps its shuffle and result files. `None`: a new
    /// folder `segdist-executor-*` in the system's temporary folder, which
    /// [`executor`] removes when it ends or its future is dropped (the
    /// `segdist-sql executor` process, on SIGINT, SIGTERM or SIGHUP). A
    /// folder given here is left in place.
    pub work_dir: Option<PathBuf>,
}

/// Runs an executor until the process ends.
///
/// # Errors
/// A scheduler address without a port, or a port already taken.
///
/// ```no_run
/// use segdist_sql::cluster::{executor, ExecutorOptions};
/// # #[tokio::main] async fn main() -> anyhow::Result<()> {
/// executor(ExecutorOptions {
///     scheduler: "sched:50050".into(),
///     bind: "0.0.0.0:50051".parse()?,
///     grpc_port: None,
///     advertise: Some("w1".into()),
///     concurrent_tasks: 0,
///     work_dir: None,
/// })
/// .await
/// # }
/// ```
pub async fn executor(o: ExecutorOptions) -> Result<()> {
    let (host, port) =
        o.scheduler.rsplit_once(':').ok_or_else(|| anyhow!("--scheduler {}: expected HOST:PORT", o.scheduler))?;
    let port: u16 = port.parse().with_context(|| format!("--scheduler {}: bad port", o.scheduler))?;
    let mut registry = BallistaFunctionRegistry::default();
    for f in crate::functions::all() {
        registry.scalar_functions.insert(f.name().to_string(), f);
    }
    // Ballista's own default folder is never removed: every job's final
    // output would stay behind when the executor stops.
    let own_dir = match &o.work_dir {
        Some(_) => None,
        None => Some(tempfile::Builder::new().prefix("segdist-executor-").tempdir().context("executor work folder")?),
    };
    let work_dir = o.work_dir.as_deref().or(own_dir.as_ref().map(|d| d.path())).map(|p| p.display().to_string());
    let config = ExecutorProcessConfig {
        work_dir,
        bind_host: o.bind.ip().to_string(),
        external_host: Some(o.advertise.clone().unwrap_or_else(|| o.bind.ip().to_string())),
        port: o.bind.port(),
        grpc_port: o.grpc_port.unwrap_or(o.bind.port().wrapping_add(1)),
        scheduler_host: host.to_string(),
        scheduler_port: port,
        scheduler_connect_timeout_seconds: 30,
        vcores: o.concurrent_tasks,
        print_thread_info: false,
        override_function_registry: Some(Arc::new(registry)),
        override_logical_codec: Some(Arc::new(LogicalCodec::default())),
        override_physical_codec: Some(Arc::new(PhysicalCodec::default())),
        override_config_producer: Some(Arc::new(config_producer)),
        ..Default::default()
    };
    let served = start_executor_process(Arc::new(config)).await.map_err(|e| anyhow!("executor on {}: {e}", o.bind));
    drop(own_dir);
    served
}

/// A client session on the scheduler at `host:port`, with segdist's
/// functions and table function.
///
/// # Errors
/// A malformed address.
///
/// ```no_run
/// use datafusion::physical_plan::execute_stream;
/// # #[tokio::main] async fn main() -> anyhow::Result<()> {
/// let ctx = segdist_sql::cluster::client("sched:50050").await?;
/// ctx.register_parquet("p", "/data/fixes", Default::default()).await?;
/// ctx.register_parquet("r", "/data/roads.parquet", Default::default()).await?;
/// let plan = ctx.sql("SELECT * FROM segdist_snap('p', 'r')").await?.create_physical_plan().await?;
/// let rows = segdist_sql::files::write(&ctx, execute_stream(plan.clone(), ctx.task_ctx())?, None, false).await?;
/// if let Some(r) = segdist_sql::cluster::task_report("sched:50050", &plan).await? {
///     println!("{rows} rows from job {} on {} executors", r.job_id, r.executors.len());
/// }
/// # Ok(())
/// # }
/// ```
pub async fn client(scheduler: &str) -> Result<SessionContext> {
    let state = crate::session_state(config());
    let ctx = SessionContext::remote_with_state(&format!("df://{scheduler}"), state).await?;
    // Upgrading the state for Ballista keeps segdist's functions; the
    // table function is registered again in case a version drops it.
    ctx.register_udtf("segdist_snap", Arc::new(crate::snap::SnapFunction));
    Ok(ctx)
}

/// Each executor that produced a part of a finished distributed query's
/// result, with how many of the final stage's tasks it ran (see [`client`]).
pub struct TaskReport {
    /// The job's id on the scheduler.
    pub job_id: String,
    /// `(executor id, host:port)` → tasks.
    pub executors: BTreeMap<(String, String), usize>,
    /// Milliseconds from the job's start to its end on the executors (the
    /// client fetches the result after that).
    pub executed_ms: u64,
}

/// Asks the scheduler which executors ran the final stage of the job that
/// `plan` (a plan of a [`client`] session, executed) submitted; `None` when
/// the plan was not distributed.
///
/// # Errors
/// When the scheduler cannot be asked.
///
/// See [`client`] for an example.
pub async fn task_report(scheduler: &str, plan: &Arc<dyn ExecutionPlan>) -> Result<Option<TaskReport>> {
    use ballista_core::execution_plans::DistributedQueryExec;
    let Some(job_id) = plan
        .downcast_ref::<DistributedQueryExec<datafusion_proto::protobuf::LogicalPlanNode>>()
        .and_then(|d| d.job_id())
    else {
        return Ok(None);
    };
    let job_id = job_id.to_string();
    let mut client = SchedulerGrpcClient::connect(format!("http://{scheduler}"))
        .await
        .with_context(|| format!("cannot reach the scheduler at {scheduler}"))?;
    let status = client
        .get_job_status(GetJobStatusParams { job_id: job_id.clone() })
        .await
        .map_err(|e| anyhow!("the scheduler at {scheduler}: {e}"))?
        .into_inner();
    let mut executors = BTreeMap::new();
    let mut executed_ms = 0;
    if let Some(job_status::Status::Successful(s)) = status.status.and_then(|s| s.status) {
        executed_ms = s.ended_at.saturating_sub(s.started_at);
        for loc in s.partition_location {
            if let Some(m) = loc.executor_meta {
                *executors.entry((m.id, format!("{}:{}", m.host, m.port))).or_insert(0) += 1;
            }
        }
    }
    Ok(Some(TaskReport { job_id, executors, executed_ms }))
}
