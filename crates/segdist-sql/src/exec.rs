//! [`SnapExec`]: the physical nearest-line join.
//!
//! Child 0 is the points (id, coordinates), split into partitions; child 1
//! the lines (id, geometry), gathered into one partition. The first
//! partition to run collects the lines and builds segdist's index (planar
//! [`segdist_index::Index`] or geographic [`segdist_geo::GeoIndex`], as
//! `segdist snap` does); every partition of this plan shares it, and
//! answers each batch of points with the index's batch search.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int64Array, RecordBatch, UInt32Array};
use datafusion::arrow::compute::{cast, concat, concat_batches, take};
use datafusion::arrow::datatypes::{DataType, Float64Type, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{exec_err, internal_err, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    collect, DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::StreamExt;
use segdist_geo::{GeoHit, GeoIndex};
use segdist_index::{Hit, HitLists, Index, IndexBuilder, QueryOptions};
use tokio::sync::OnceCell;

use crate::geometry::{self, Lines};
use crate::snap::Spec;

/// The nearest-line join over a points plan and a lines plan (planned from
/// [`SnapNode`](crate::snap::SnapNode), whose example shows it).
#[derive(Debug)]
pub struct SnapExec {
    spec: Spec,
    points: Arc<dyn ExecutionPlan>,
    lines: Arc<dyn ExecutionPlan>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    /// The index, built once by whichever partition asks first.
    prepared: Arc<OnceCell<Arc<Prepared>>>,
}

impl SnapExec {
    /// The join of `points` (id, x, y[, z] or id, lon, lat) and `lines`
    /// (id, geometry).
    ///
    /// # Errors
    /// When the inputs do not have those columns.
    pub fn try_new(spec: Spec, points: Arc<dyn ExecutionPlan>, lines: Arc<dyn ExecutionPlan>) -> Result<SnapExec> {
        let (ps, ls) = (points.schema(), lines.schema());
        let coords = if spec.three_d { 3 } else { 2 };
        if ps.fields().len() != 1 + coords || ls.fields().len() != 2 {
            return internal_err!("SegdistSnap: inputs of {} and {} columns", ps.fields().len(), ls.fields().len());
        }
        geometry::encoding(ls.field(1).name(), ls.field(1).data_type())?;
        let schema = spec.output_schema(ps.field(0), ls.field(0));
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(points.output_partitioning().partition_count()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(SnapExec { spec, points, lines, schema, properties, prepared: Arc::new(OnceCell::new()) })
    }

    /// What it computes.
    pub fn spec(&self) -> Spec {
        self.spec
    }
}

impl DisplayAs for SnapExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let s = self.spec;
        write!(
            f,
            "SegdistSnapExec: k={}, max_distance={}, geographic={}, 3d={}",
            s.k, s.max_distance, s.geographic, s.three_d
        )
    }
}

impl ExecutionPlan for SnapExec {
    fn name(&self) -> &str {
        "SegdistSnapExec"
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

    fn required_input_distribution(&self) -> Vec<Distribution> {
        vec![Distribution::UnspecifiedDistribution, Distribution::SinglePartition]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![true, false]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.points, &self.lines]
    }

    fn with_new_children(self: Arc<Self>, mut children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 2 {
            return internal_err!("SegdistSnapExec takes 2 children, not {}", children.len());
        }
        let lines = children.pop().expect("two children");
        let points = children.pop().expect("two children");
        Ok(Arc::new(SnapExec::try_new(self.spec, points, lines)?))
    }

    fn execute(&self, partition: usize, ctx: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let points = self.points.execute(partition, Arc::clone(&ctx))?;
        let batch_size = ctx.session_config().batch_size().max(1);
        let (lines, cell, spec, schema) =
            (Arc::clone(&self.lines), Arc::clone(&self.prepared), self.spec, Arc::clone(&self.schema));
        let out = Arc::clone(&schema);
        let stream = futures::stream::once(async move {
            let prepared = Arc::clone(cell.get_or_try_init(|| Prepared::build(spec, lines, ctx)).await?);
            // Points are searched CHUNK at a time: the batch search groups
            // nearby points, and a chunk of 8,192 random points (DataFusion's
            // batch) has few neighbours (measured: 6.5 s against 1.3 s for
            // 10 M points). Answers go out in batches of the session's size.
            let answers = futures::stream::unfold(points, |mut points| async move {
                let chunk = next_chunk(&mut points).await?;
                Some((chunk, points))
            })
            .map(move |chunk| {
                let b = chunk.and_then(|c| prepared.answer(&c, &out))?;
                let slices: Vec<Result<RecordBatch>> = (0..b.num_rows())
                    .step_by(batch_size)
                    .map(|at| Ok(b.slice(at, batch_size.min(b.num_rows() - at))))
                    .collect();
                Ok::<_, datafusion::error::DataFusionError>(futures::stream::iter(slices))
            });
            Ok::<_, datafusion::error::DataFusionError>(answers)
        })
        .map(|r| match r {
            Ok(s) => s
                .map(|r| match r {
                    Ok(slices) => slices.boxed(),
                    Err(e) => futures::stream::once(async { Err(e) }).boxed(),
                })
                .flatten()
                .boxed(),
            Err(e) => futures::stream::once(async { Err(e) }).boxed(),
        })
        .flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}

/// Points searched at a time (as `segdist snap` does).
const CHUNK: usize = 1 << 18;

/// The next CHUNK points (or what is left) as one batch; `None` at the end.
async fn next_chunk(points: &mut SendableRecordBatchStream) -> Option<Result<RecordBatch>> {
    let mut buf = Vec::new();
    let mut rows = 0;
    while rows < CHUNK {
        match points.next().await {
            Some(Ok(b)) => {
                rows += b.num_rows();
                buf.push(b);
            }
            Some(Err(e)) => return Some(Err(e)),
            None => break,
        }
    }
    let first = buf.first()?;
    Some(concat_batches(&first.schema(), &buf).map_err(Into::into))
}

/// The index over the lines, and what the answers need besides.
struct Prepared {
    spec: Spec,
    lines: Lines,
    /// The id of every feature (lines with a NULL geometry are left out).
    ids: ArrayRef,
    /// Distance along its part of every vertex (metres when geographic).
    cum: Vec<f64>,
    index: Searcher,
}

impl fmt::Debug for Prepared {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Prepared {{ {} lines }}", self.lines.len())
    }
}

enum Searcher {
    Planar2(Index<2>),
    Planar3(Index<3>),
    Geo(GeoIndex),
}

/// One answer: the feature, part, segment, distance, point, t and along.
struct Answer {
    feature: usize,
    part: usize,
    segment: usize,
    distance: f64,
    point: [f64; 3],
    t: f64,
    along: f64,
}

impl Prepared {
    async fn build(spec: Spec, plan: Arc<dyn ExecutionPlan>, ctx: Arc<TaskContext>) -> Result<Arc<Prepared>> {
        let batches = collect(plan, ctx).await?;
        let mut lines = Lines::new();
        let mut row = 0usize;
        // The ids of the rows kept (a geometry, not NULL), in feature order.
        let mut id_parts = Vec::with_capacity(batches.len());
        for b in &batches {
            let (id, geom) = (b.column(0), b.column(1));
            let mut keep = Vec::with_capacity(b.num_rows());
            for i in 0..b.num_rows() {
                let place = || format!("segdist_snap: lines row {}", row + i);
                if let Some((parts, has_z)) = geometry::read(geom, i, &place)? {
                    lines.push(&parts, has_z, &place)?;
                    keep.push(i as u32);
                }
            }
            row += b.num_rows();
            id_parts.push(take(id.as_ref(), &UInt32Array::from(keep), None)?);
        }
        if lines.is_empty() {
            return exec_err!("segdist_snap: the lines table has no geometry to snap to");
        }
        if spec.three_d && !lines.has_z {
            return exec_err!("segdist_snap: the points have z but some line vertices have none");
        }
        let ids = concat(&id_parts.iter().map(|a| a.as_ref()).collect::<Vec<_>>())?;
        let (index, cum) = if spec.geographic {
            build_geo(&lines)?
        } else if spec.three_d {
            let (i, c) = build_planar::<3>(&lines)?;
            (Searcher::Planar3(i), c)
        } else {
            let (i, c) = build_planar::<2>(&lines)?;
            (Searcher::Planar2(i), c)
        };
        Ok(Arc::new(Prepared { spec, lines, ids, cum, index }))
    }

    /// The fraction of the part's length at `along`.
    fn fraction(&self, feature: usize, part: usize, along: f64) -> f64 {
        let part = self.lines.feature_start[feature] + part;
        let cum = &self.cum[self.lines.part_start[part]..self.lines.part_start[part + 1]];
        segdist_index::fraction(cum, along)
    }

    fn cum(&self, feature: usize, part: usize) -> &[f64] {
        let part = self.lines.feature_start[feature] + part;
        &self.cum[self.lines.part_start[part]..self.lines.part_start[part + 1]]
    }

    /// The answers for one batch of points.
    fn answer(&self, batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let dims = if self.spec.three_d { 3 } else { 2 };
        let mut cols = Vec::with_capacity(dims);
        for c in 1..=dims {
            let a = cast(batch.column(c), &DataType::Float64)?;
            cols.push(a.as_primitive::<Float64Type>().clone());
        }
        let valid = |i: usize| cols.iter().all(|c| c.is_valid(i));
        let names = batch.schema();
        for (c, col) in cols.iter().enumerate() {
            if let Some(i) = (0..n).find(|&i| col.is_valid(i) && !col.value(i).is_finite()) {
                return exec_err!(
                    "segdist_snap: point {}: {} is {}; coordinates must be finite",
                    id_text(batch.column(0), i),
                    names.field(c + 1).name(),
                    col.value(i)
                );
            }
        }
        if self.spec.geographic
            && let Some(i) = (0..n).find(|&i| valid(i) && cols[1].value(i).abs() > 90.0)
        {
            return exec_err!(
                "segdist_snap: point {}: latitude {} is not in [-90, 90]",
                id_text(batch.column(0), i),
                cols[1].value(i)
            );
        }
        let at = |i: usize, k: usize| if valid(i) { cols[k].value(i) } else { 0.0 };
        let opts = QueryOptions { max_distance: self.spec.max_distance, threads: 1, ..QueryOptions::default() };
        let k = self.spec.k;
        // One output row per answer (point, rank, answer), nearest first;
        // one with no answer for a point with none.
        let mut rows = Rows::with_capacity(n * k.min(4));
        match &self.index {
            Searcher::Planar2(ix) => {
                let pts: Vec<[f64; 2]> = (0..n).map(|i| [at(i, 0), at(i, 1)]).collect();
                self.planar(ix, &pts, k, &opts, &valid, &mut rows);
            }
            Searcher::Planar3(ix) => {
                let pts: Vec<[f64; 3]> = (0..n).map(|i| [at(i, 0), at(i, 1), at(i, 2)]).collect();
                self.planar(ix, &pts, k, &opts, &valid, &mut rows);
            }
            Searcher::Geo(ix) => {
                let pts: Vec<[f64; 2]> = (0..n).map(|i| [at(i, 0), at(i, 1)]).collect();
                let one = |h: &GeoHit| {
                    let along = segdist_geo::along_line(self.cum(h.feature, h.part), h.segment, &h.projection);
                    let p = &h.projection;
                    Answer {
                        feature: h.feature,
                        part: h.part,
                        segment: h.segment,
                        distance: p.distance,
                        point: [p.point[0], p.point[1], 0.0],
                        t: p.t,
                        along,
                    }
                };
                if k == 1 {
                    for (i, h) in ix.nearest_many(&pts, self.spec.max_distance).iter().enumerate() {
                        rows.push_all(i, valid(i), h.iter().map(one));
                    }
                } else {
                    for (i, p) in pts.iter().enumerate() {
                        let hs = if valid(i) { ix.k_nearest_within(*p, k, self.spec.max_distance) } else { Vec::new() };
                        rows.push_all(i, true, hs.iter().map(one));
                    }
                }
            }
        }
        self.batch(batch, schema, rows)
    }

    fn planar<const D: usize>(
        &self,
        ix: &Index<D>,
        pts: &[[f64; D]],
        k: usize,
        opts: &QueryOptions,
        valid: &dyn Fn(usize) -> bool,
        rows: &mut Rows,
    ) {
        let one = |h: &Hit<D>| Answer {
            feature: h.feature,
            part: h.part,
            segment: h.segment,
            distance: h.distance,
            point: std::array::from_fn(|c| if c < D { h.point[c] } else { 0.0 }),
            t: h.t,
            along: segdist_index::along(self.cum(h.feature, h.part), h.segment, h.t),
        };
        if k == 1 {
            let mut hits = Vec::new();
            ix.nearest_many_into(pts, opts, &mut hits);
            for (i, h) in hits.iter().enumerate() {
                rows.push_all(i, valid(i), h.iter().map(one));
            }
        } else {
            // Flat: no `Vec` a point.
            let mut lists = HitLists::new();
            ix.k_nearest_many_into(pts, k, opts, &mut lists);
            for (i, hs) in lists.iter().enumerate() {
                rows.push_all(i, valid(i), hs.iter().map(one));
            }
        }
    }

    /// The output batch: ids taken from the points and the lines, the rest
    /// from the answers.
    fn batch(&self, batch: &RecordBatch, schema: &SchemaRef, rows: Rows) -> Result<RecordBatch> {
        let mut out: Vec<ArrayRef> = vec![take(batch.column(0).as_ref(), &UInt32Array::from(rows.src), None)?];
        if self.spec.k > 1 {
            out.push(Arc::new(Int64Array::from(rows.rank)));
        }
        let features: UInt32Array = rows.answers.iter().map(|a| a.as_ref().map(|a| a.feature as u32)).collect();
        out.push(take(self.ids.as_ref(), &features, None)?);
        let int = |f: &dyn Fn(&Answer) -> usize| -> ArrayRef {
            Arc::new(rows.answers.iter().map(|a| a.as_ref().map(|a| f(a) as i64)).collect::<Int64Array>())
        };
        out.push(int(&|a| a.part));
        out.push(int(&|a| a.segment));
        let num = |f: &dyn Fn(&Answer) -> f64| -> ArrayRef {
            Arc::new(rows.answers.iter().map(|a| a.as_ref().map(f)).collect::<Float64Array>())
        };
        out.push(num(&|a| a.distance));
        for c in 0..if self.spec.three_d { 3 } else { 2 } {
            out.push(num(&|a| a.point[c]));
        }
        out.push(num(&|a| a.t));
        out.push(num(&|a| a.along));
        out.push(num(&|a| self.fraction(a.feature, a.part, a.along)));
        Ok(RecordBatch::try_new(Arc::clone(schema), out)?)
    }
}

/// Output rows being gathered: the point's row, its rank and its answer.
struct Rows {
    src: Vec<u32>,
    rank: Vec<Option<i64>>,
    answers: Vec<Option<Answer>>,
}

impl Rows {
    fn with_capacity(n: usize) -> Rows {
        Rows { src: Vec::with_capacity(n), rank: Vec::with_capacity(n), answers: Vec::with_capacity(n) }
    }

    /// Point `i`'s answers (none when `valid` is false: a NULL coordinate).
    fn push_all(&mut self, i: usize, valid: bool, answers: impl Iterator<Item = Answer>) {
        let before = self.src.len();
        if valid {
            for (r, a) in answers.enumerate() {
                self.src.push(i as u32);
                self.rank.push(Some(r as i64 + 1));
                self.answers.push(Some(a));
            }
        }
        if self.src.len() == before {
            self.src.push(i as u32);
            self.rank.push(None);
            self.answers.push(None);
        }
    }
}

/// A point's id as text, for errors.
fn id_text(col: &ArrayRef, i: usize) -> String {
    datafusion::arrow::util::display::array_value_to_string(col, i).unwrap_or_else(|_| format!("in row {i}"))
}

fn build_planar<const D: usize>(lines: &Lines) -> Result<(Index<D>, Vec<f64>)> {
    let v: Vec<[f64; D]> = lines.vertices.iter().map(|p| std::array::from_fn(|k| p[k])).collect();
    let mut b = IndexBuilder::<D>::with_capacity(v.len(), lines.part_start.len());
    for f in 0..lines.len() {
        b.push_multi_polyline(lines.parts(f).map(|r| &v[r]));
    }
    b.build_with_lengths().or_else(|e| exec_err!("segdist_snap: {e}"))
}

fn build_geo(lines: &Lines) -> Result<(Searcher, Vec<f64>)> {
    let v: Vec<[f64; 2]> = lines.vertices.iter().map(|p| [p[0], p[1]]).collect();
    let features: Vec<Vec<&[[f64; 2]]>> = (0..lines.len()).map(|f| lines.parts(f).map(|r| &v[r]).collect()).collect();
    let index = match GeoIndex::from_multi_polylines(features.iter().map(Vec::as_slice)) {
        Ok(ix) => ix,
        Err(e) => return exec_err!("segdist_snap: lines: {e} (geographic: x is longitude, y latitude)"),
    };
    let mut cum = Vec::with_capacity(v.len());
    for f in 0..lines.len() {
        for part in lines.parts(f) {
            cum.extend(segdist_geo::geodesic_lengths(&v[part]));
        }
    }
    Ok((Searcher::Geo(index), cum))
}
