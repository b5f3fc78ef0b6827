//! `segdist_snap('points', 'lines' [, k [, max_distance]])`: the nearest
//! line join as a table function, a logical node and its planner.
//!
//! The table function looks the two tables up, picks their columns by name
//! (see [`Spec::columns`]), and returns a view whose plan is a
//! [`SnapNode`] over the two projected scans: the node, not a provider,
//! travels to a Ballista scheduler, and its inputs are ordinary scans that
//! Ballista already knows how to ship. [`SnapPlanner`] turns the node into
//! [`SnapExec`].

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{plan_datafusion_err, plan_err, DFSchema, DFSchemaRef, Result, ScalarValue, TableReference};
use datafusion::datasource::{provider_as_source, TableType};
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan, LogicalPlanBuilder, UserDefinedLogicalNodeCore};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, ExtensionPlanner, PhysicalPlanner};

use crate::exec::SnapExec;

/// What a snap computes: the answers' shape, decided when it is planned
/// (see [`Spec::output_schema`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    /// Hits per point, nearest first.
    pub k: usize,
    /// Only lines within this distance (metres when geographic).
    pub max_distance: f64,
    /// Longitude/latitude, distances in metres on WGS84.
    pub geographic: bool,
    /// Points have z (lines must then have it too).
    pub three_d: bool,
}

impl Spec {
    /// Chooses the points' id and coordinate columns and the lines' id and
    /// geometry columns by name (case-insensitive), and whether the points
    /// are geographic:
    /// - points: `id` or `point_id`; `x`, `y` (and `z`) → planar, or `lon`/
    ///   `lng`/`longitude` and `lat`/`latitude` → geographic;
    /// - lines: `id` or `line_id`; `geometry`, `geom`, `wkb`, `wkt` or
    ///   `the_geom`.
    ///
    /// Returns the column names in the order the node's inputs project them.
    ///
    /// ```
    /// use datafusion::arrow::datatypes::{DataType, Field, Schema};
    /// use segdist_sql::snap::Spec;
    ///
    /// let f = |n: &str, t| Field::new(n, t, true);
    /// let points = Schema::new(vec![f("ID", DataType::Int64), f("Lon", DataType::Float64), f("lat", DataType::Float32)]);
    /// let lines = Schema::new(vec![f("line_id", DataType::Utf8), f("wkb", DataType::Binary)]);
    /// let (geographic, three_d, p, l) = Spec::columns(&points, &lines)?;
    /// assert!(geographic && !three_d);
    /// assert_eq!((p, l), (vec!["ID".to_string(), "Lon".into(), "lat".into()], vec!["line_id".to_string(), "wkb".into()]));
    /// # Ok::<(), datafusion::error::DataFusionError>(())
    /// ```
    pub fn columns(points: &Schema, lines: &Schema) -> Result<(bool, bool, Vec<String>, Vec<String>)> {
        let find = |s: &Schema, names: &[&str]| -> Option<String> {
            names
                .iter()
                .find_map(|n| s.fields().iter().find(|f| f.name().eq_ignore_ascii_case(n)).map(|f| f.name().clone()))
        };
        let list = |s: &Schema| s.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>().join(", ");
        let Some(pid) = find(points, &["point_id", "id"]) else {
            return plan_err!(
                "segdist_snap: the points table needs an id column (id or point_id); it has {}",
                list(points)
            );
        };
        let lon = find(points, &["lon", "lng", "longitude"]);
        let lat = find(points, &["lat", "latitude"]);
        let (x, y, z) = (find(points, &["x"]), find(points, &["y"]), find(points, &["z"]));
        let (geographic, mut pcols) = match (x, y, lon, lat) {
            (Some(x), Some(y), _, _) => (false, vec![pid, x, y]),
            (_, _, Some(lon), Some(lat)) => (true, vec![pid, lon, lat]),
            _ => {
                return plan_err!(
                    "segdist_snap: the points table needs x and y, or lon and lat, columns; it has {}",
                    list(points)
                );
            }
        };
        let three_d = !geographic && z.is_some();
        if let (true, Some(z)) = (three_d, z) {
            pcols.push(z);
        }
        for c in &pcols[1..] {
            let t = points.field_with_name(c)?.data_type();
            if !t.is_numeric() {
                return plan_err!("segdist_snap: points column \"{c}\" is {t}, not a number");
            }
        }
        let Some(lid) = find(lines, &["line_id", "id"]) else {
            return plan_err!(
                "segdist_snap: the lines table needs an id column (id or line_id); it has {}",
                list(lines)
            );
        };
        let Some(geom) = find(lines, &["geometry", "geom", "wkb", "wkt", "the_geom"]) else {
            return plan_err!(
                "segdist_snap: the lines table needs a geometry column (geometry, geom, wkb, wkt or the_geom); it has {}",
                list(lines)
            );
        };
        crate::geometry::encoding(&geom, lines.field_with_name(&geom)?.data_type())?;
        Ok((geographic, three_d, pcols, vec![lid, geom]))
    }

    /// The output schema: `segdist snap`'s columns, in its order, given the
    /// types of the point and line ids.
    ///
    /// ```
    /// use datafusion::arrow::datatypes::{DataType, Field};
    /// use segdist_sql::snap::Spec;
    ///
    /// let spec = Spec { k: 2, max_distance: f64::INFINITY, geographic: true, three_d: false };
    /// let id = Field::new("id", DataType::Int64, false);
    /// let names: Vec<String> = spec.output_schema(&id, &id).fields().iter().map(|f| f.name().clone()).collect();
    /// assert_eq!(names.join(","), "point_id,rank,line_id,part,segment,distance_m,lon,lat,t,along_m,fraction");
    /// ```
    pub fn output_schema(&self, point_id: &Field, line_id: &Field) -> SchemaRef {
        let f = |n: &str| Field::new(n, DataType::Float64, true);
        let i = |n: &str| Field::new(n, DataType::Int64, true);
        let mut v = vec![Field::new("point_id", point_id.data_type().clone(), point_id.is_nullable())];
        if self.k > 1 {
            v.push(i("rank"));
        }
        v.extend([Field::new("line_id", line_id.data_type().clone(), true), i("part"), i("segment")]);
        if self.geographic {
            v.extend([f("distance_m"), f("lon"), f("lat"), f("t"), f("along_m"), f("fraction")]);
        } else {
            v.extend([f("distance"), f("x"), f("y")]);
            if self.three_d {
                v.push(f("z"));
            }
            v.extend([f("t"), f("along"), f("fraction")]);
        }
        Arc::new(Schema::new(v))
    }

    /// Bytes for the codecs.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(18);
        b.extend((self.k as u64).to_le_bytes());
        b.extend(self.max_distance.to_le_bytes());
        b.push(u8::from(self.geographic) | u8::from(self.three_d) << 1);
        b
    }

    /// The inverse of [`encode`](Self::encode).
    pub(crate) fn decode(b: &[u8]) -> Option<Spec> {
        let k = u64::from_le_bytes(b.get(0..8)?.try_into().ok()?) as usize;
        let max_distance = f64::from_le_bytes(b.get(8..16)?.try_into().ok()?);
        let flags = *b.get(16)?;
        Some(Spec { k, max_distance, geographic: flags & 1 != 0, three_d: flags & 2 != 0 })
    }
}

/// The logical node: points (id, coordinates) and lines (id, geometry) in,
/// `segdist snap`'s rows out. `EXPLAIN` shows it:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> anyhow::Result<()> {
/// let ctx = segdist_sql::context();
/// ctx.sql("CREATE TABLE p AS VALUES (1, 0.5, 2.0)").await?.collect().await?;
/// ctx.sql("CREATE VIEW points AS SELECT column1 AS id, column2 AS x, column3 AS y FROM p").await?.collect().await?;
/// ctx.sql("CREATE VIEW roads AS SELECT 'A' AS id, 'LINESTRING(0 0, 4 0)' AS geometry").await?.collect().await?;
/// let plan = ctx.sql("EXPLAIN SELECT * FROM segdist_snap('points', 'roads')").await?.collect().await?;
/// let text = datafusion::arrow::util::pretty::pretty_format_batches(&plan)?.to_string();
/// assert!(text.contains("SegdistSnap: k=1") && text.contains("SegdistSnapExec"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SnapNode {
    spec: SpecKey,
    points: LogicalPlan,
    lines: LogicalPlan,
    schema: DFSchemaRef,
}

/// [`Spec`] with equality and hashing on its bits.
#[derive(Clone, Copy, Debug)]
struct SpecKey(Spec);

impl PartialEq for SpecKey {
    fn eq(&self, o: &Self) -> bool {
        self.0.encode() == o.0.encode()
    }
}
impl Eq for SpecKey {}
impl Hash for SpecKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.encode().hash(h);
    }
}

impl PartialOrd for SnapNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.spec.0.encode().partial_cmp(&other.spec.0.encode()).filter(|o| *o != Ordering::Equal)
    }
}

impl SnapNode {
    /// The node over `points` (id, x, y[, z] or id, lon, lat) and `lines`
    /// (id, geometry), already projected to those columns.
    pub fn try_new(spec: Spec, points: LogicalPlan, lines: LogicalPlan) -> Result<SnapNode> {
        let schema = spec.output_schema(points.schema().field(0), lines.schema().field(0));
        let schema = Arc::new(DFSchema::try_from(schema.as_ref().clone())?);
        Ok(SnapNode { spec: SpecKey(spec), points, lines, schema })
    }

    /// What it computes.
    pub fn spec(&self) -> Spec {
        self.spec.0
    }
}

impl UserDefinedLogicalNodeCore for SnapNode {
    fn name(&self) -> &str {
        "SegdistSnap"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.points, &self.lines]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        Vec::new()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let s = self.spec.0;
        write!(
            f,
            "SegdistSnap: k={}, max_distance={}, geographic={}, 3d={}",
            s.k, s.max_distance, s.geographic, s.three_d
        )
    }

    fn with_exprs_and_inputs(&self, _exprs: Vec<Expr>, mut inputs: Vec<LogicalPlan>) -> Result<Self> {
        if inputs.len() != 2 {
            return plan_err!("SegdistSnap takes 2 inputs, not {}", inputs.len());
        }
        let lines = inputs.pop().expect("two inputs");
        let points = inputs.pop().expect("two inputs");
        SnapNode::try_new(self.spec.0, points, lines)
    }
}

/// The `segdist_snap` table function (see [`SnapNode`] for an example;
/// [`crate::with_segdist`] registers it).
#[derive(Debug, Default)]
pub struct SnapFunction;

impl TableFunctionImpl for SnapFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        let usage = "segdist_snap('points table', 'lines table' [, k [, max_distance]])";
        if !(2..=4).contains(&exprs.len()) {
            return plan_err!("{usage}: {} arguments given", exprs.len());
        }
        let name = |i: usize| match &exprs[i] {
            Expr::Literal(
                ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) | ScalarValue::Utf8View(Some(s)),
                _,
            ) => Ok(s.clone()),
            e => plan_err!("{usage}: argument {} must be a table name in quotes, not {e}", i + 1),
        };
        let k = match exprs.get(2) {
            None => 1,
            Some(Expr::Literal(v, _)) => match v.cast_to(&DataType::Int64) {
                Ok(ScalarValue::Int64(Some(k))) if k >= 1 => k as usize,
                _ => return plan_err!("{usage}: k must be an integer >= 1, not {v}"),
            },
            Some(e) => return plan_err!("{usage}: k must be a constant, not {e}"),
        };
        let max_distance = match exprs.get(3) {
            None => f64::INFINITY,
            Some(Expr::Literal(v, _)) => match v.cast_to(&DataType::Float64) {
                Ok(ScalarValue::Float64(Some(r))) if r >= 0.0 => r,
                _ => return plan_err!("{usage}: max_distance must be a number >= 0, not {v}"),
            },
            Some(e) => return plan_err!("{usage}: max_distance must be a constant, not {e}"),
        };
        let session = args.session();
        let (pname, lname) = (name(0)?, name(1)?);
        let (points, lines) = (table(session, &pname)?, table(session, &lname)?);
        let (geographic, three_d, pcols, lcols) = Spec::columns(&points.schema(), &lines.schema())?;
        let spec = Spec { k, max_distance, geographic, three_d };
        let scan = |n: &str, t: Arc<dyn TableProvider>, cols: &[String]| -> Result<LogicalPlan> {
            LogicalPlanBuilder::scan(n, provider_as_source(t), None)?
                .project(cols.iter().map(|c| Expr::Column(datafusion::common::Column::new(Some(n), c))))?
                .build()
        };
        let node = SnapNode::try_new(spec, scan(&pname, points, &pcols)?, scan(&lname, lines, &lcols)?)?;
        let plan = LogicalPlan::Extension(Extension { node: Arc::new(node) });
        Ok(Arc::new(SnapView { plan }))
    }
}

/// A registered table by name, in the session's default catalog and schema.
fn table(session: &dyn Session, name: &str) -> Result<Arc<dyn TableProvider>> {
    let opts = &session.config_options().catalog;
    let r = TableReference::from(name).resolve(&opts.default_catalog, &opts.default_schema);
    let schema = session
        .catalog_list()
        .catalog(&r.catalog)
        .and_then(|c| c.schema(&r.schema))
        .ok_or_else(|| plan_datafusion_err!("segdist_snap: no schema {}.{}", r.catalog, r.schema))?;
    // The in-memory catalog answers at once.
    futures::executor::block_on(schema.table(&r.table))?
        .ok_or_else(|| plan_datafusion_err!("segdist_snap: no table named '{name}' (register it first)"))
}

/// What `segdist_snap(...)` returns: a view the SQL planner inlines.
#[derive(Debug)]
struct SnapView {
    plan: LogicalPlan,
}

#[async_trait]
impl TableProvider for SnapView {
    fn schema(&self) -> SchemaRef {
        Arc::clone(self.plan.schema().inner())
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    fn get_logical_plan(&self) -> Option<Cow<'_, LogicalPlan>> {
        Some(Cow::Borrowed(&self.plan))
    }

    async fn scan(
        &self,
        state: &dyn Session,
        _projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        state.create_physical_plan(&self.plan).await
    }
}

/// Plans [`SnapNode`] as [`SnapExec`] (see [`SnapNode`] for an example).
#[derive(Debug, Default)]
pub struct SnapPlanner;

#[async_trait]
impl ExtensionPlanner for SnapPlanner {
    async fn plan_extension(
        &self,
        _planner: &dyn PhysicalPlanner,
        node: &dyn datafusion::logical_expr::UserDefinedLogicalNode,
        _logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        _session: &dyn Session,
        _ctx: &datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let Some(node) = node.as_any().downcast_ref::<SnapNode>() else {
            return Ok(None);
        };
        let exec = SnapExec::try_new(node.spec(), Arc::clone(&physical_inputs[0]), Arc::clone(&physical_inputs[1]))?;
        Ok(Some(Arc::new(exec)))
    }
}

/// DataFusion's physical planner with [`SnapPlanner`] and
/// [`PartsPlanner`](crate::parts::PartsPlanner); the planner of
/// [`crate::session_state`] (see [`SnapNode`] for an example).
#[derive(Debug, Default)]
pub struct SnapQueryPlanner;

#[async_trait]
impl QueryPlanner for SnapQueryPlanner {
    async fn create_physical_plan(&self, plan: &LogicalPlan, session: &dyn Session) -> Result<Arc<dyn ExecutionPlan>> {
        DefaultPhysicalPlanner::with_extension_planners(vec![
            Arc::new(SnapPlanner),
            Arc::new(crate::parts::PartsPlanner),
        ])
        .create_physical_plan(plan, session)
        .await
    }
}
