//! `segdist-sql`: SQL with segdist's functions over Parquet, CSV and
//! GeoJSON files, embedded or on a Ballista cluster.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context as _, Result};
use clap::{Parser, Subcommand};
use datafusion::physical_plan::execute_stream;

/// SQL over files with segdist's exact functions and nearest-line join.
#[derive(Parser, Debug)]
#[command(
    name = "segdist-sql",
    version,
    after_help = "Examples:\n  \
    segdist-sql query --table p=fixes.parquet --table r=roads.parquet \\\n    \
    \"SELECT * FROM segdist_snap('p', 'r')\" --out snapped.parquet\n  \
    segdist-sql scheduler --bind 0.0.0.0:50050\n  \
    segdist-sql executor --scheduler sched-host:50050 --bind 0.0.0.0:50051 --advertise this-host\n  \
    segdist-sql query --scheduler sched-host:50050 --table p=/shared/fixes.parquet ... \"SQL\""
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one SQL statement; results as CSV on standard output or in --out.
    Query {
        /// A table from a file: NAME=PATH (.parquet or a folder of them,
        /// .csv with a header, .geojson). Repeat for more tables.
        #[arg(long = "table", value_name = "NAME=PATH")]
        tables: Vec<String>,
        /// Write here (.csv or .parquet), atomically, instead of to
        /// standard output. A folder (a name ending in `/`, or one that
        /// exists): one Parquet file per partition, written where the
        /// partition is computed (on a cluster, by the executors: the
        /// folder must be one they all write to); only the files' names and
        /// row counts come back.
        #[arg(short, long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Run on the Ballista cluster whose scheduler is at HOST:PORT
        /// (every executor must reach the tables' paths).
        #[arg(long, value_name = "HOST:PORT")]
        scheduler: Option<String>,
        /// Partitions to split the work into (default: the number of cores).
        #[arg(long, value_name = "N")]
        partitions: Option<usize>,
        /// With a .parquet --out: GeoParquet, a WKB point column `geometry`
        /// made from the result's lon/lat (or x/y) columns.
        #[arg(long)]
        geoparquet: bool,
        /// Set a DataFusion or Ballista option first (as SQL's SET), e.g.
        /// --set ballista.shuffle.compression.codec=none. Repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        settings: Vec<String>,
        /// The SQL statement.
        sql: String,
    },
    /// Run a Ballista scheduler that knows segdist's functions.
    Scheduler {
        /// Listen here.
        #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:50050")]
        bind: SocketAddr,
        /// GET /readyz answers 200 once this many executors have registered.
        #[arg(long, value_name = "N", default_value_t = 1)]
        min_executors: usize,
    },
    /// Run a Ballista executor that knows segdist's functions.
    Executor {
        /// The scheduler to serve.
        #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:50050")]
        scheduler: String,
        /// Where results and shuffles are served (Arrow Flight).
        #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:50051")]
        bind: SocketAddr,
        /// Where the scheduler sends tasks (default: the --bind port + 1).
        #[arg(long, value_name = "PORT")]
        grpc_port: Option<u16>,
        /// The host name or address others reach this executor at (default:
        /// the --bind address).
        #[arg(long, value_name = "HOST")]
        advertise: Option<String>,
        /// Tasks at a time (default: the number of cores).
        #[arg(long, value_name = "N", default_value_t = 0)]
        concurrent_tasks: usize,
        /// Keep shuffle and result files here, and leave them (default: a
        /// new folder in the temporary folder, removed when the executor
        /// stops on SIGINT, SIGTERM or SIGHUP).
        #[arg(long, value_name = "DIR")]
        work_dir: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("segdist-sql: {e}");
            return ExitCode::from(1);
        }
    };
    let out = match &cli.command {
        Command::Query { out: Some(out), .. } => Some(out.clone()),
        _ => None,
    };
    // An executor's own work folder outlives the runtime, so that no task
    // still writing can put a file back after it is removed.
    let work_dir = match &mut cli.command {
        Command::Executor { work_dir: dir @ None, .. } => {
            match tempfile::Builder::new().prefix("segdist-executor-").tempdir() {
                Ok(d) => {
                    *dir = Some(d.path().to_path_buf());
                    Some(d)
                }
                Err(e) => {
                    eprintln!("segdist-sql: cannot make the executor's work folder: {e}");
                    return ExitCode::from(1);
                }
            }
        }
        _ => None,
    };
    let result = rt.block_on(async {
        tokio::select! {
            r = run(cli) => r.map(|()| None),
            signal = interrupted() => Ok(Some(signal)),
        }
    });
    // Tasks that do not stop at once (a write under way) get a moment.
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    drop(work_dir);
    match result {
        Ok(None) => ExitCode::SUCCESS,
        // Stopped by a signal: whatever was being written goes, and the
        // exit status is the shells' 128 + the signal.
        Ok(Some(signal)) => {
            if let Some(out) = &out {
                segdist_sql::files::remove_temporaries(out, |pid| pid == std::process::id());
            }
            ExitCode::from(128 + signal)
        }
        Err(e) => {
            eprintln!("segdist-sql: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The number of the first SIGINT, SIGTERM or SIGHUP to arrive (never, if
/// they cannot be listened for, or off Unix).
async fn interrupted() -> u8 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let (Ok(mut int), Ok(mut term), Ok(mut hup)) =
            (signal(SignalKind::interrupt()), signal(SignalKind::terminate()), signal(SignalKind::hangup()))
        {
            return tokio::select! {
                _ = int.recv() => 2,
                _ = term.recv() => 15,
                _ = hup.recv() => 1,
            };
        }
    }
    std::future::pending().await
}

async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Query { tables, out, scheduler, partitions, geoparquet, settings, sql } => {
            let ctx = match &scheduler {
                Some(s) => segdist_sql::cluster::client(s).await?,
                None => segdist_sql::context(),
            };
            if let Some(n) = partitions {
                ctx.state_ref().write().config_mut().options_mut().execution.target_partitions = n.max(1);
            }
            for kv in &settings {
                let (k, v) = kv.split_once('=').ok_or_else(|| anyhow!("--set {kv}: expected KEY=VALUE"))?;
                ctx.sql(&format!("SET {k} = '{}'", v.replace('\'', "''"))).await?;
            }
            for t in &tables {
                let (name, path) = t.split_once('=').ok_or_else(|| anyhow!("--table {t}: expected NAME=PATH"))?;
                segdist_sql::files::register(&ctx, name, &PathBuf::from(path)).await?;
            }
            let started = std::time::Instant::now();
            let df = ctx.sql(&sql).await?;
            let (plan, rows) = match out.as_deref().filter(|o| is_folder(o)) {
                Some(dir) if geoparquet => {
                    bail!("--geoparquet needs a .parquet file, not the folder {}", dir.display())
                }
                Some(dir) => write_parts(&ctx, df, dir).await?,
                None => {
                    let plan = df.create_physical_plan().await?;
                    let stream = progress(execute_stream(plan.clone(), ctx.task_ctx())?, started);
                    (plan, segdist_sql::files::write(&ctx, stream, out.as_deref(), geoparquet).await?)
                }
            };
            if let Some(s) = &scheduler
                && let Some(r) = segdist_sql::cluster::task_report(s, &plan).await?
            {
                eprintln!(
                    "segdist-sql: job {}: {rows} rows in {:.2} s, {:.2} s of it on the executors; the final stage ran on:",
                    r.job_id,
                    started.elapsed().as_secs_f64(),
                    r.executed_ms as f64 / 1e3
                );
                for ((id, addr), n) in &r.executors {
                    eprintln!("segdist-sql:   executor {id} at {addr}: {n} task(s)");
                }
            }
            Ok(())
        }
        Command::Scheduler { bind, min_executors } => {
            eprintln!("segdist-sql: scheduler listening on {bind}");
            segdist_sql::cluster::scheduler(bind, min_executors).await
        }
        Command::Executor { scheduler, bind, grpc_port, advertise, concurrent_tasks, work_dir } => {
            eprintln!("segdist-sql: executor on {bind}, serving the scheduler at {scheduler}");
            let o = segdist_sql::cluster::ExecutorOptions {
                scheduler,
                bind,
                grpc_port,
                advertise,
                concurrent_tasks,
                work_dir,
            };
            segdist_sql::cluster::executor(o).await
        }
    }
}

/// `--out` names a folder: it ends with `/` or is one.
fn is_folder(out: &std::path::Path) -> bool {
    out.as_os_str().to_string_lossy().ends_with('/') || out.is_dir()
}

/// The `part-*.parquet` files (and their temporaries) of an earlier run in
/// `dir`, removed: a run with fewer partitions must not leave old parts
/// beside its own. Other files are left alone.
fn remove_parts(dir: &std::path::Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let part = name.strip_prefix('.').unwrap_or(&name).starts_with("part-");
        if part && (name.ends_with(".parquet") || name.ends_with(".tmp")) {
            std::fs::remove_file(e.path()).with_context(|| format!("cannot remove {}", e.path().display()))?;
        }
    }
    Ok(())
}

/// The query's result as `dir/part-NNNNN.parquet`, one per partition,
/// written where each partition is computed (see segdist_sql::parts): the
/// plan run and the rows written.
async fn write_parts(
    ctx: &datafusion::prelude::SessionContext,
    df: datafusion::dataframe::DataFrame,
    dir: &std::path::Path,
) -> Result<(std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>, u64)> {
    use datafusion::arrow::array::UInt64Array;
    use datafusion::logical_expr::{Extension, LogicalPlan};
    let dir = std::path::absolute(dir)?;
    remove_parts(&dir)?;
    let node = segdist_sql::parts::WritePartsNode::new(df.logical_plan().clone(), dir.display().to_string());
    let plan = LogicalPlan::Extension(Extension { node: std::sync::Arc::new(node) });
    let plan = ctx.execute_logical_plan(plan).await?.create_physical_plan().await?;
    let written = datafusion::physical_plan::collect(plan.clone(), ctx.task_ctx()).await?;
    let counts = written.iter().filter_map(|b| b.column(1).as_any().downcast_ref::<UInt64Array>());
    let rows: u64 = counts.flat_map(|c| c.values().iter().copied()).sum();
    let files: usize = written.iter().map(|b| b.num_rows()).sum();
    eprintln!("segdist-sql: {rows} rows in {files} Parquet file(s) under {}", dir.display());
    Ok((plan, rows))
}

/// On a terminal, `stream` counting its rows on standard error once a
/// second (results to standard output are left alone: the count goes only
/// where it cannot mix with them); elsewhere `stream` as it is.
fn progress(
    stream: datafusion::execution::SendableRecordBatchStream,
    started: std::time::Instant,
) -> datafusion::execution::SendableRecordBatchStream {
    use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
    use futures::StreamExt;
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return stream;
    }
    let schema = stream.schema();
    let (mut rows, mut shown) = (0usize, std::time::Instant::now());
    let counted = stream.inspect(move |b| {
        if let Ok(b) = b {
            rows += b.num_rows();
            if shown.elapsed().as_secs_f64() >= 1.0 {
                shown = std::time::Instant::now();
                eprint!("\rsegdist-sql: {rows} rows in {:.0} s\x1b[K", started.elapsed().as_secs_f64());
            }
        }
    });
    // At the end, the count's line is cleared (nothing more is yielded).
    let cleared = counted.chain(
        futures::stream::once(async { eprint!("\r\x1b[K") })
            .filter_map(|()| async { None::<datafusion::error::Result<datafusion::arrow::array::RecordBatch>> }),
    );
    Box::pin(RecordBatchStreamAdapter::new(schema, cleared))
}
