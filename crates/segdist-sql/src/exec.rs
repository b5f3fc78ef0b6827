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
use datafusion::arrow::compute::{cast, concat, take};
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
use segdist_index::{Hit, Index, IndexBuilder, QueryOptions};
use tokio::sync::OnceCell;

use crate::geometry::{self, Lines};
use crate::snap::Spec;

/// The nearest-line join over a points plan and a lines plan.
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
        let (lines, cell, spec, schema) =
            (Arc::clone(&self.lines), Arc::clone(&self.prepared), self.spec, Arc::clone(&self.schema));
        let out = Arc::clone(&schema);
        let stream = futures::stream::once(async move {
            let prepared = cell.get_or_try_init(|| Prepared::build(spec, lines, ctx)).await?;
            let prepared = Arc::clone(prepared);
            Ok::<_, datafusion::error::DataFusionError>(points.map(move |b| prepared.answer(&b?, &out)))
        })
        .map(|r| match r {
            Ok(s) => s.boxed(),
            Err(e) => futures::stream::once(async { Err(e) }).boxed(),
        })
        .flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
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
        let mut keep = Vec::new();
        let mut row = 0usize;
        let mut ids = Vec::new();
        for b in &batches {
            let (id, geom) = (b.column(0), b.column(1));
            for i in 0..b.num_rows() {
                let place = || format!("segdist_snap: lines row {}", row + i);
                if let Some((parts, has_z)) = geometry::read(geom, i, &place)? {
                    lines.push(&parts, has_z, &place)?;
                    keep.push((ids.len(), i as u32));
                }
            }
            row += b.num_rows();
            ids.push(Arc::clone(id));
        }
        if lines.is_empty() {
            return exec_err!("segdist_snap: the lines table has no geometry to snap to");
        }
        if spec.three_d && !lines.has_z {
            return exec_err!("segdist_snap: the points have z but some line vertices have none");
        }
        // The ids of the kept rows, in feature order.
        let mut id_parts = Vec::with_capacity(ids.len());
        for (k, a) in ids.iter().enumerate() {
            let rows: UInt32Array = keep.iter().filter(|(b, _)| *b == k).map(|(_, i)| *i).collect();
            id_parts.push(take(a.as_ref(), &rows, None)?);
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

    /// `(along, fraction)` of `along` on feature `f`'s part `part`.
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
        if self.spec.geographic {
            if let Some(i) = (0..n).find(|&i| valid(i) && cols[1].value(i).abs() > 90.0) {
                return exec_err!(
                    "segdist_snap: point {}: latitude {} is not in [-90, 90]",
                    id_text(batch.column(0), i),
                    cols[1].value(i)
                );
            }
        }
        let at = |i: usize, k: usize| if valid(i) { cols[k].value(i) } else { 0.0 };
        let opts = QueryOptions { max_distance: self.spec.max_distance, threads: 1 };
        let k = self.spec.k;
        // Every point's answers, nearest first (none for a NULL coordinate).
        let mut answers: Vec<Vec<Answer>> = match &self.index {
            Searcher::Planar2(ix) => {
                let pts: Vec<[f64; 2]> = (0..n).map(|i| [at(i, 0), at(i, 1)]).collect();
                self.planar(ix, &pts, k, &opts)
            }
            Searcher::Planar3(ix) => {
                let pts: Vec<[f64; 3]> = (0..n).map(|i| [at(i, 0), at(i, 1), at(i, 2)]).collect();
                self.planar(ix, &pts, k, &opts)
            }
            Searcher::Geo(ix) => {
                let pts: Vec<[f64; 2]> = (0..n).map(|i| [at(i, 0), at(i, 1)]).collect();
                let hits: Vec<Vec<GeoHit>> = if k == 1 {
                    ix.nearest_many(&pts, self.spec.max_distance).into_iter().map(|h| h.into_iter().collect()).collect()
                } else {
                    pts.iter().map(|p| ix.k_nearest_within(*p, k, self.spec.max_distance)).collect()
                };
                hits.into_iter()
                    .map(|hs| {
                        hs.into_iter()
                            .map(|h| {
                                let along =
                                    segdist_geo::along_line(self.cum(h.feature, h.part), h.segment, &h.projection);
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
                            })
                            .collect()
                    })
                    .collect()
            }
        };
        for (i, a) in answers.iter_mut().enumerate() {
            if !valid(i) {
                a.clear();
            }
        }
        self.rows(batch, schema, &answers)
    }

    fn planar<const D: usize>(
        &self,
        ix: &Index<D>,
        pts: &[[f64; D]],
        k: usize,
        opts: &QueryOptions,
    ) -> Vec<Vec<Answer>> {
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
            hits.iter().map(|h| h.iter().map(one).collect()).collect()
        } else {
            ix.k_nearest_many(pts, k, opts).iter().map(|hs| hs.iter().map(one).collect()).collect()
        }
    }

    /// The output rows: one per answer, or one with NULLs for a point with
    /// none (nothing within max_distance, or a NULL coordinate).
    fn rows(&self, batch: &RecordBatch, schema: &SchemaRef, answers: &[Vec<Answer>]) -> Result<RecordBatch> {
        let rows = answers.iter().map(|a| a.len().max(1)).sum::<usize>();
        let mut src = Vec::with_capacity(rows);
        let mut rank = Vec::with_capacity(rows);
        let mut feature = Vec::with_capacity(rows);
        let mut ints: [Vec<Option<i64>>; 2] = Default::default();
        let mut nums: [Vec<Option<f64>>; 7] = Default::default();
        for (i, a) in answers.iter().enumerate() {
            if a.is_empty() {
                src.push(i as u32);
                rank.push(None);
                feature.push(None);
                ints.iter_mut().for_each(|v| v.push(None));
                nums.iter_mut().for_each(|v| v.push(None));
            }
            for (r, h) in a.iter().enumerate() {
                src.push(i as u32);
                rank.push(Some(r as i64 + 1));
                feature.push(Some(h.feature as u32));
                ints[0].push(Some(h.part as i64));
                ints[1].push(Some(h.segment as i64));
                let fraction = self.fraction(h.feature, h.part, h.along);
                for (v, x) in
                    nums.iter_mut().zip([h.distance, h.point[0], h.point[1], h.point[2], h.t, h.along, fraction])
                {
                    v.push(Some(x));
                }
            }
        }
        let src = UInt32Array::from(src);
        let mut out: Vec<ArrayRef> = vec![take(batch.column(0).as_ref(), &src, None)?];
        if self.spec.k > 1 {
            out.push(Arc::new(Int64Array::from(rank)));
        }
        out.push(take(self.ids.as_ref(), &UInt32Array::from(feature), None)?);
        for v in ints {
            out.push(Arc::new(Int64Array::from(v)));
        }
        let dims = if self.spec.three_d { 3 } else { 2 };
        for (c, v) in nums.into_iter().enumerate() {
            // z only in 3D.
            if c == 3 && dims == 2 {
                continue;
            }
            out.push(Arc::new(Float64Array::from(v)));
        }
        Ok(RecordBatch::try_new(Arc::clone(schema), out)?)
    }
}

/// A point's id as text, for errors.
fn id_text(col: &ArrayRef, i: usize) -> String {
    datafusion::arrow::util::display::array_value_to_string(col, i).unwrap_or_else(|_| format!("in row {i}"))
}

fn build_planar<const D: usize>(lines: &Lines) -> Result<(Index<D>, Vec<f64>)> {
    let v: Vec<[f64; D]> = lines.vertices.iter().map(|p| std::array::from_fn(|k| p[k])).collect();
    let mut b = IndexBuilder::<D>::with_capacity(v.len(), lines.part_start.len());
    let mut cum = Vec::with_capacity(v.len());
    for f in 0..lines.len() {
        let parts: Vec<&[[f64; D]]> = lines.parts(f).map(|r| &v[r]).collect();
        for part in &parts {
            cum.extend(segdist_index::cumulative_lengths(part));
        }
        b.push_multi_polyline(parts);
    }
    match b.build() {
        Ok(ix) => Ok((ix, cum)),
        Err(e) => exec_err!("segdist_snap: {e}"),
    }
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
