//! A query's result written as one Parquet file per partition, by whoever
//! computes the partition: threads when embedded, the executors on a
//! cluster (`segdist-sql query --out DIR/`). Embedded, the files are
//! `part-00000.parquet`, `part-00001.parquet`, …; on a cluster each name
//! also carries the task that wrote it (`part-JOB-STAGE-TASK-ATTEMPT-N`).
//!
//! Writing one file means every row passes through one writer: on a
//! cluster, through the client, which fetches the whole result from the
//! executors once the job has ended (10 M snapped points, 800 MB: about 3 s
//! after a 2 s job on two executors). [`WritePartsNode`] puts the writing
//! into the plan instead; it is planned as [`WritePartsExec`], which turns
//! each input partition into `DIR/part-NNNNN.parquet` and answers one row
//! per file: its name and how many rows it holds. Only those rows come back
//! to the client. On a cluster `DIR` must be a folder every executor can
//! write to (shared, or the same on every host).

use std::cmp::Ordering;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{RecordBatch, StringArray, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::config::TableParquetOptions;
use datafusion::common::file_options::parquet_writer::ParquetWriterOptions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{internal_err, plan_err, DFSchema, DFSchemaRef, DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties};
use datafusion::physical_planner::{ExtensionPlanner, PhysicalPlanner};
use futures::StreamExt;

/// The rows [`WritePartsExec`] answers: one per file written.
fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("file", DataType::Utf8, false), Field::new("rows", DataType::UInt64, false)]))
}

/// Writes `input`'s result under `dir`, one Parquet file per partition (a
/// logical node, so that it travels to a cluster with the plan).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> anyhow::Result<()> {
/// use datafusion::logical_expr::{Extension, LogicalPlan};
/// use segdist_sql::parts::WritePartsNode;
///
/// let ctx = segdist_sql::context();
/// let dir = tempfile::tempdir()?;
/// let query = ctx.sql("SELECT segdist_distance(1, 3, 0, 0, 2, 0) AS d").await?;
/// let node = WritePartsNode::new(query.logical_plan().clone(), dir.path().display().to_string());
/// let plan = LogicalPlan::Extension(Extension { node: std::sync::Arc::new(node) });
/// let written = ctx.execute_logical_plan(plan).await?.collect().await?;
/// assert_eq!(written.iter().map(|b| b.num_rows()).sum::<usize>(), 1); // one partition, one file
/// assert!(dir.path().join("part-00000.parquet").exists());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WritePartsNode {
    input: LogicalPlan,
    dir: String,
    schema: DFSchemaRef,
}

impl WritePartsNode {
    /// `input`'s result into the folder `dir` (which [`WritePartsExec`]
    /// creates if needed).
    pub fn new(input: LogicalPlan, dir: String) -> WritePartsNode {
        let schema = Arc::new(DFSchema::try_from(schema().as_ref().clone()).expect("a plain schema"));
        WritePartsNode { input, dir, schema }
    }

    /// The folder written to.
    pub fn dir(&self) -> &str {
        &self.dir
    }
}

impl PartialOrd for WritePartsNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.dir.partial_cmp(&other.dir).filter(|o| *o != Ordering::Equal)
    }
}

impl UserDefinedLogicalNodeCore for WritePartsNode {
    fn name(&self) -> &str {
        "SegdistWriteParts"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        Vec::new()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "SegdistWriteParts: dir={}", self.dir)
    }

    fn with_exprs_and_inputs(&self, _exprs: Vec<Expr>, mut inputs: Vec<LogicalPlan>) -> Result<Self> {
        match (inputs.pop(), inputs.is_empty()) {
            (Some(input), true) => Ok(WritePartsNode::new(input, self.dir.clone())),
            _ => plan_err!("SegdistWriteParts takes 1 input"),
        }
    }
}

/// Each partition of `input` written to `dir/part-[TASK-]NNNNN.parquet` (through a
/// temporary name, renamed when complete), with the session's Parquet
/// options; answers one row per file (see [`WritePartsNode`]).
#[derive(Debug)]
pub struct WritePartsExec {
    input: Arc<dyn ExecutionPlan>,
    dir: String,
    properties: Arc<PlanProperties>,
}

impl WritePartsExec {
    /// Writes `input`'s partitions under `dir`.
    pub fn new(input: Arc<dyn ExecutionPlan>, dir: String) -> WritePartsExec {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema()),
            Partitioning::UnknownPartitioning(input.output_partitioning().partition_count()),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        WritePartsExec { input, dir, properties }
    }

    /// The folder written to.
    pub fn dir(&self) -> &str {
        &self.dir
    }
}

impl DisplayAs for WritePartsExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "SegdistWritePartsExec: dir={}", self.dir)
    }
}

impl ExecutionPlan for WritePartsExec {
    fn name(&self) -> &str {
        "SegdistWritePartsExec"
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn datafusion::physical_expr::PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    /// One file per partition the input already has: no repartitioning
    /// inserted below (which would also cut a stage on a cluster and send
    /// every row through a shuffle).
    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn with_new_children(self: Arc<Self>, mut children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        match (children.pop(), children.is_empty()) {
            (Some(input), true) => Ok(Arc::new(WritePartsExec::new(input, self.dir.clone()))),
            _ => internal_err!("SegdistWritePartsExec takes 1 child"),
        }
    }

    fn execute(&self, partition: usize, ctx: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, Arc::clone(&ctx))?;
        let mut options = TableParquetOptions {
            global: ctx.session_config().options().execution.parquet.clone(),
            ..Default::default()
        };
        // The Arrow schema in the file's metadata, as DataFusion writes it.
        options.arrow_schema(&self.input.schema());
        let properties = ParquetWriterOptions::try_from(&options)?.writer_options().clone();
        // On a cluster a task runs its share of the stage's partitions
        // numbered from 0: the task's identity (job, stage, task, attempt)
        // makes the name unique.
        let task = ctx.task_id().map(|t| {
            let t = t.trim_start_matches("TID ");
            t.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect::<String>() + "-"
        });
        let path = Path::new(&self.dir).join(format!("part-{}{partition:05}.parquet", task.unwrap_or_default()));
        let stream = futures::stream::once(async move {
            let rows = write(input, &path, properties).await?;
            let file = StringArray::from(vec![path.display().to_string()]);
            Ok(RecordBatch::try_new(schema(), vec![Arc::new(file), Arc::new(UInt64Array::from(vec![rows]))])?)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema(), stream)))
    }
}

/// One partition into `path`, through `.NAME.PID-NANOS.tmp` beside it; the
/// rows written.
async fn write(
    mut input: SendableRecordBatchStream,
    path: &Path,
    properties: datafusion::parquet::file::properties::WriterProperties,
) -> Result<u64> {
    let io =
        |e: std::io::Error, what: &Path| DataFusionError::Execution(format!("cannot write {}: {e}", what.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(e, dir))?;
    }
    // A name of this attempt's own: a task retried elsewhere never writes
    // into another's temporary.
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let tmp: PathBuf = path.with_file_name(format!(".{name}.{}-{nanos}.tmp", std::process::id()));
    let result = async {
        let file = std::fs::File::create(&tmp).map_err(|e| io(e, &tmp))?;
        let mut writer = ArrowWriter::try_new(file, input.schema(), Some(properties))?;
        let mut rows = 0u64;
        while let Some(batch) = input.next().await {
            let batch = batch?;
            rows += batch.num_rows() as u64;
            writer.write(&batch)?;
        }
        writer.close()?;
        std::fs::rename(&tmp, path).map_err(|e| io(e, path))?;
        Ok(rows)
    }
    .await;
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Plans [`WritePartsNode`] as [`WritePartsExec`].
#[derive(Debug, Default)]
pub struct PartsPlanner;

#[async_trait]
impl ExtensionPlanner for PartsPlanner {
    async fn plan_extension(
        &self,
        _planner: &dyn PhysicalPlanner,
        node: &dyn datafusion::logical_expr::UserDefinedLogicalNode,
        _logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        _session: &dyn Session,
        _ctx: &datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let Some(node) = node.as_any().downcast_ref::<WritePartsNode>() else {
            return Ok(None);
        };
        Ok(Some(Arc::new(WritePartsExec::new(Arc::clone(&physical_inputs[0]), node.dir.clone()))))
    }
}
