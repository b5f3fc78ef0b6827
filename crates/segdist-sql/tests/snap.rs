//! `segdist_snap` against `segdist snap` on the bundled Helsinki data, bit
//! for bit: from GeoJSON, Parquet (points in many row groups) and
//! GeoParquet-style WKB lines; geographic and planar, k and max_distance;
//! through the API and the `segdist-sql query` binary.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::{assert_same, batch_rows, csv_rows, golden, helsinki};
use datafusion::arrow::array::{ArrayRef, BinaryBuilder, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::file::properties::WriterProperties;
use datafusion::physical_plan::ExecutionPlanProperties;
use datafusion::prelude::SessionContext;

async fn helsinki_ctx() -> SessionContext {
    let ctx = segdist_sql::context();
    segdist_sql::files::register(&ctx, "points", &helsinki("points.geojson")).await.unwrap();
    segdist_sql::files::register(&ctx, "roads", &helsinki("roads.geojson")).await.unwrap();
    ctx
}

async fn rows(ctx: &SessionContext, sql: &str) -> (Vec<String>, Vec<Vec<common::Cell>>) {
    batch_rows(&ctx.sql(sql).await.unwrap().collect().await.unwrap())
}

#[tokio::test]
async fn geographic_snap_equals_segdist_snap_bit_for_bit() {
    let ctx = helsinki_ctx().await;
    let got = rows(&ctx, "SELECT * FROM segdist_snap('points', 'roads')").await;
    assert_eq!(got.1.len(), 2311);
    assert_same(&got, &golden("helsinki_geographic.csv"));
}

#[tokio::test]
async fn planar_k_nearest_within_a_distance_equals_segdist_snap_bit_for_bit() {
    let ctx = helsinki_ctx().await;
    ctx.sql("CREATE VIEW planar AS SELECT id, lon AS x, lat AS y FROM points").await.unwrap();
    let got = rows(&ctx, "SELECT * FROM segdist_snap('planar', 'roads', 3, 0.0003)").await;
    let want = golden("helsinki_planar_k3.csv");
    // Points with nothing within 0.0003 keep a row of NULLs.
    assert!(want.1.iter().filter(|r| r[2] == common::Cell::Null).count() > 10);
    assert_same(&got, &want);
}

/// Writes `batches` as Parquet, `rows_per_group` rows to a row group.
fn write_parquet(path: &Path, batches: &[RecordBatch], rows_per_group: usize) {
    let props = WriterProperties::builder().set_max_row_group_row_count(Some(rows_per_group)).build();
    let mut w = ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batches[0].schema(), Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

#[tokio::test]
async fn parquet_points_and_wkb_lines_give_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = helsinki_ctx().await;
    // Points: a folder of 8 Parquet files, in row groups of 100.
    let points = ctx.sql("SELECT * FROM points").await.unwrap().collect().await.unwrap();
    let points = datafusion::arrow::compute::concat_batches(&points[0].schema(), &points).unwrap();
    std::fs::create_dir(dir.path().join("points")).unwrap();
    let part = points.num_rows().div_ceil(8);
    for i in 0..8 {
        let b = points.slice(i * part, part.min(points.num_rows() - i * part));
        write_parquet(&dir.path().join(format!("points/part-{i}.parquet")), &[b], 100);
    }
    // Lines: WKB, as GeoParquet stores its geometry.
    let roads = ctx.sql("SELECT id, geometry FROM roads").await.unwrap().collect().await.unwrap();
    let mut wkb = Vec::new();
    for b in &roads {
        let mut builder = BinaryBuilder::new();
        let text = b.column(1).as_any().downcast_ref::<datafusion::arrow::array::StringArray>().unwrap();
        for t in text.iter() {
            let g: wkt::Wkt<f64> = t.unwrap().parse().unwrap();
            let mut buf = Vec::new();
            wkb::writer::write_geometry(&mut buf, &g, &Default::default()).unwrap();
            builder.append_value(buf);
        }
        let schema =
            Schema::new(vec![Field::new("id", DataType::Utf8, true), Field::new("geometry", DataType::Binary, true)]);
        let cols: Vec<ArrayRef> = vec![Arc::clone(b.column(0)), Arc::new(builder.finish())];
        wkb.push(RecordBatch::try_new(Arc::new(schema), cols).unwrap());
    }
    write_parquet(&dir.path().join("roads.parquet"), &wkb, 1000);

    let ctx = segdist_sql::context();
    ctx.state_ref().write().config_mut().options_mut().execution.target_partitions = 8;
    segdist_sql::files::register(&ctx, "p", &dir.path().join("points")).await.unwrap();
    segdist_sql::files::register(&ctx, "r", &dir.path().join("roads.parquet")).await.unwrap();
    let plan = ctx.sql("SELECT * FROM segdist_snap('p', 'r')").await.unwrap().create_physical_plan().await.unwrap();
    let shown = datafusion::physical_plan::displayable(plan.as_ref()).indent(false).to_string();
    assert_eq!(plan.output_partitioning().partition_count(), 8, "the points are split:\n{shown}");
    let got = rows(&ctx, "SELECT * FROM segdist_snap('p', 'r')").await;
    assert_same(&got, &golden("helsinki_geographic.csv"));
}

#[test]
fn the_binary_writes_csv_and_parquet_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_segdist-sql"))
            .args(["query", "--geoparquet"])
            .arg(format!("--table=p={}", helsinki("points.geojson").display()))
            .arg(format!("--table=r={}", helsinki("roads.geojson").display()))
            .arg("--out")
            .arg(out)
            .arg("SELECT * FROM segdist_snap('p', 'r')")
            .output()
            .unwrap()
    };
    let csv = dir.path().join("snapped.csv");
    let o = run(&csv);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_same(&csv_rows(&text), &golden("helsinki_geographic.csv"));

    let pq = dir.path().join("snapped.parquet");
    assert!(run(&pq).status.success());
    let file = std::fs::File::open(&pq).unwrap();
    let reader = datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    // GeoParquet: a WKB point per row at (lon, lat), and the "geo" metadata.
    let meta = datafusion::parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&pq).unwrap()).unwrap();
    use datafusion::parquet::file::reader::FileReader;
    let kv = meta.metadata().file_metadata().key_value_metadata().unwrap();
    let geo = kv.iter().find(|k| k.key == "geo").and_then(|k| k.value.clone()).unwrap();
    assert!(geo.contains("\"primary_column\":\"geometry\"") && geo.contains("\"encoding\":\"WKB\""), "{geo}");
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::Float64Type;
    use geo_traits::{CoordTrait, GeometryTrait, GeometryType, PointTrait};
    let mut stripped = Vec::new();
    for b in &batches {
        let col = |n: &str| b.column_by_name(n).unwrap().as_primitive::<Float64Type>().clone();
        let (lon, lat) = (col("lon"), col("lat"));
        let g = b.column_by_name("geometry").unwrap().as_binary::<i32>();
        for i in 0..b.num_rows() {
            let w = wkb::reader::read_wkb(g.value(i)).unwrap();
            let GeometryType::Point(p) = w.as_type() else { panic!("row {i}: not a point") };
            let c = p.coord().unwrap();
            assert_eq!((c.x(), c.y()), (lon.value(i), lat.value(i)));
        }
        stripped.push(b.project(&(0..b.num_columns() - 1).collect::<Vec<_>>()).unwrap());
    }
    assert_same(&batch_rows(&stripped), &golden("helsinki_geographic.csv"));
    // Only the two results: no temporary left beside them.
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["snapped.csv", "snapped.parquet"]);
}

#[tokio::test]
async fn scalar_functions_and_the_join_compose_in_sql() {
    let ctx = helsinki_ctx().await;
    // Recompute each snapped distance from the snapped point: zero.
    let sql = "SELECT max(segdist_geodesic_distance(s.lon, s.lat, s.lon, s.lat, s.lon, s.lat)) AS z, count(*) AS n \
               FROM segdist_snap('points', 'roads') s";
    let b = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let z = b[0].column(0).as_any().downcast_ref::<datafusion::arrow::array::Float64Array>().unwrap().value(0);
    assert_eq!(z, 0.0);
    // The join's rows are ordinary rows: filter, join back, aggregate.
    let sql = "SELECT count(*) FROM segdist_snap('points', 'roads') s JOIN points p ON s.point_id = p.id WHERE s.distance_m < 10";
    let b = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let n = b[0].column(0).as_any().downcast_ref::<datafusion::arrow::array::Int64Array>().unwrap().value(0);
    let want = golden("helsinki_geographic.csv")
        .1
        .iter()
        .filter(|r| match r[4] {
            common::Cell::Bits(b) => f64::from_bits(b) < 10.0,
            _ => false,
        })
        .count();
    assert_eq!(n as usize, want);
}

#[tokio::test]
async fn points_in_several_chunks_of_two_partitions_each_get_their_nearest() {
    // segdist_snap gathers a partition's batches into chunks of at least
    // 2^18 points and searches a chunk at a time: with 300,000 points a
    // partition, in batches of 10,000, each partition is two chunks (27
    // batches, then 3). Every point's answer is checked against the index
    // asked one point at a time.
    use datafusion::arrow::array::{AsArray, Int64Array, StringArray};
    use datafusion::arrow::datatypes::{Float64Type, Int64Type};
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut rnd = move || rng.random::<f64>();
    let segments: Vec<([f64; 2], [f64; 2])> = (0..200)
        .map(|_| {
            let a = [rnd(), rnd()];
            (a, [a[0] + 0.05 * rnd(), a[1] + 0.05 * rnd()])
        })
        .collect();
    let wkt: Vec<String> =
        segments.iter().map(|(a, b)| format!("LINESTRING({} {}, {} {})", a[0], a[1], b[0], b[1])).collect();
    let lines_schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("geometry", DataType::Utf8, false),
    ]));
    let lines = RecordBatch::try_new(
        lines_schema.clone(),
        vec![Arc::new(Int64Array::from_iter_values(0..200)), Arc::new(StringArray::from(wkt))],
    )
    .unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("x", DataType::Float64, false),
        Field::new("y", DataType::Float64, false),
    ]));
    let (per_batch, batches, partitions) = (10_000, 30, 2);
    let n = per_batch * batches * partitions;
    let points: Vec<[f64; 2]> = (0..n).map(|_| [rnd(), rnd()]).collect();
    let batch = |from: usize| -> RecordBatch {
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values((from..from + per_batch).map(|i| i as i64))),
            Arc::new(datafusion::arrow::array::Float64Array::from_iter_values(
                points[from..from + per_batch].iter().map(|p| p[0]),
            )),
            Arc::new(datafusion::arrow::array::Float64Array::from_iter_values(
                points[from..from + per_batch].iter().map(|p| p[1]),
            )),
        ];
        RecordBatch::try_new(schema.clone(), cols).unwrap()
    };
    let parts: Vec<Vec<RecordBatch>> =
        (0..partitions).map(|p| (0..batches).map(|b| batch((p * batches + b) * per_batch)).collect()).collect();
    let ctx = segdist_sql::context();
    ctx.register_table("p", Arc::new(datafusion::datasource::MemTable::try_new(schema.clone(), parts).unwrap()))
        .unwrap();
    ctx.register_batch("l", lines).unwrap();
    let got = ctx.sql("SELECT point_id, line_id, distance FROM segdist_snap('p', 'l')").await.unwrap();
    let got = got.collect().await.unwrap();

    let mut b = segdist_index::IndexBuilder::<2>::new();
    for (a, c) in &segments {
        b.push_segment(*a, *c);
    }
    let index = b.build().unwrap();
    let mut seen = vec![false; n];
    for batch in &got {
        let (ids, lines) = (batch.column(0).as_primitive::<Int64Type>(), batch.column(1).as_primitive::<Int64Type>());
        let d = batch.column(2).as_primitive::<Float64Type>();
        for r in 0..batch.num_rows() {
            let i = ids.value(r) as usize;
            assert!(!std::mem::replace(&mut seen[i], true), "point {i} answered twice");
            let want = index.nearest(points[i]).unwrap();
            assert_eq!((lines.value(r) as usize, d.value(r).to_bits()), (want.feature, want.distance.to_bits()), "{i}");
        }
    }
    assert!(seen.iter().all(|&s| s), "a point was not answered");
}
