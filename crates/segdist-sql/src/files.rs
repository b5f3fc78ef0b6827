//! Tables from files, and results into files.
//!
//! - `.parquet` (or a folder of them): Parquet and GeoParquet, read by
//!   DataFusion (a GeoParquet geometry column is WKB, which
//!   `segdist_snap` reads).
//! - `.csv`: CSV with a header row.
//! - `.geojson` / `.json`: a FeatureCollection, read whole: Point features
//!   become rows `id, lon, lat`; line and polygon features rows
//!   `id, geometry` (WKT). The id is the feature's `id`, else its position,
//!   as `segdist snap` numbers them.
//!
//! Results go to standard output as CSV, or to a `.csv` or `.parquet` file
//! written beside its final name and renamed into place only when complete:
//! an error leaves nothing behind. Parquet is written by DataFusion's
//! parallel writer (row groups and columns encoded on every core) with the
//! session's `datafusion.execution.parquet.*` options; segdist-sql's
//! defaults are in [`crate::with_write_defaults`]. Asked for, a `.parquet`
//! result with `lon`/`lat` (or `x`/`y`) columns is GeoParquet: a WKB point
//! column `geometry` is added.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context as _, Result};
use datafusion::arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use datafusion::arrow::csv::WriterBuilder;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::datasource::file_format::parquet::ParquetSink;
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::datasource::physical_plan::{FileGroup, FileOutputMode, FileSinkConfig};
use datafusion::datasource::sink::DataSink;
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::prelude::{CsvReadOptions, ParquetReadOptions, SessionContext};
use futures::StreamExt;

/// Registers the file (or folder of Parquet files) at `path` as table
/// `name`, its format chosen by the extension.
///
/// # Errors
/// A missing file, an unknown extension, or a file that cannot be read.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> anyhow::Result<()> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("p.csv");
/// std::fs::write(&path, "id,x,y\n1,0.5,2\n")?;
/// let ctx = segdist_sql::context();
/// segdist_sql::files::register(&ctx, "p", &path).await?;
/// assert_eq!(ctx.sql("SELECT * FROM p").await?.count().await?, 1);
/// # Ok(())
/// # }
/// ```
pub async fn register(ctx: &SessionContext, name: &str, path: &Path) -> Result<()> {
    if !path.exists() {
        bail!("{}: no such file", path.display());
    }
    let text = path.to_str().ok_or_else(|| anyhow!("{}: the path is not UTF-8", path.display()))?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        _ if path.is_dir() || ext == "parquet" || ext == "geoparquet" => {
            let opts = ParquetReadOptions {
                file_extension: if ext == "geoparquet" { ".geoparquet" } else { ".parquet" },
                ..Default::default()
            };
            ctx.register_parquet(name, text, opts).await.with_context(|| format!("{}: not Parquet", path.display()))?
        }
        "csv" => ctx
            .register_csv(name, text, CsvReadOptions::new().has_header(true))
            .await
            .with_context(|| format!("{}: not CSV", path.display()))?,
        "geojson" | "json" => {
            let batch = geojson_table(path)?;
            let table = MemTable::try_new(batch.schema(), vec![vec![batch]])?;
            ctx.register_table(name, Arc::new(table))?;
        }
        _ => bail!("{}: unknown format (.parquet, .csv or .geojson)", path.display()),
    }
    Ok(())
}

/// A GeoJSON file as one batch: `id, lon, lat` for points, `id, geometry`
/// (WKT) for lines and polygons.
fn geojson_table(path: &Path) -> Result<RecordBatch> {
    use geojson::{GeoJson, Value};
    let name = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {name}"))?;
    let gj: GeoJson = text.parse().map_err(|e| anyhow!("{name}: not GeoJSON: {e}"))?;
    let features = match gj {
        GeoJson::FeatureCollection(fc) => fc.features,
        GeoJson::Feature(f) => vec![f],
        GeoJson::Geometry(g) => vec![geojson::Feature { geometry: Some(g), ..Default::default() }],
    };
    let id = |i: usize, f: &geojson::Feature| match &f.id {
        Some(geojson::feature::Id::String(s)) => s.clone(),
        Some(geojson::feature::Id::Number(n)) => n.to_string(),
        None => i.to_string(),
    };
    let points = features.iter().all(|f| matches!(f.geometry.as_ref().map(|g| &g.value), Some(Value::Point(_))));
    let ids: StringArray = features.iter().enumerate().map(|(i, f)| Some(id(i, f))).collect();
    let s = |n: &str, t: DataType| Field::new(n, t, true);
    if points && !features.is_empty() {
        let mut lon = Vec::with_capacity(features.len());
        let mut lat = Vec::with_capacity(features.len());
        for f in &features {
            if let Some(Value::Point(p)) = f.geometry.as_ref().map(|g| &g.value) {
                lon.push(p.first().copied());
                lat.push(p.get(1).copied());
            }
        }
        let schema =
            Schema::new(vec![s("id", DataType::Utf8), s("lon", DataType::Float64), s("lat", DataType::Float64)]);
        let cols: Vec<ArrayRef> =
            vec![Arc::new(ids), Arc::new(Float64Array::from(lon)), Arc::new(Float64Array::from(lat))];
        return Ok(RecordBatch::try_new(Arc::new(schema), cols)?);
    }
    let mut wkt = Vec::with_capacity(features.len());
    for (i, f) in features.iter().enumerate() {
        wkt.push(match f.geometry.as_ref().map(|g| &g.value) {
            None => None,
            Some(v) => Some(
                to_wkt(v)
                    .ok_or_else(|| anyhow!("{name}: feature {i}: a {} where lines are expected", v.type_name()))?,
            ),
        });
    }
    let schema = Schema::new(vec![s("id", DataType::Utf8), s("geometry", DataType::Utf8)]);
    Ok(RecordBatch::try_new(Arc::new(schema), vec![Arc::new(ids), Arc::new(StringArray::from(wkt))])?)
}

/// WKT for a line-like GeoJSON geometry; numbers in Rust's shortest form,
/// which reads back to the same `f64`.
fn to_wkt(v: &geojson::Value) -> Option<String> {
    use geojson::Value;
    let pos = |p: &Vec<f64>| p.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" ");
    let line = |l: &Vec<Vec<f64>>| format!("({})", l.iter().map(pos).collect::<Vec<_>>().join(","));
    let lines = |ls: &Vec<Vec<Vec<f64>>>| format!("({})", ls.iter().map(line).collect::<Vec<_>>().join(","));
    Some(match v {
        Value::LineString(l) => format!("LINESTRING{}", line(l)),
        Value::MultiLineString(m) => format!("MULTILINESTRING{}", lines(m)),
        Value::Polygon(p) => format!("POLYGON{}", lines(p)),
        Value::MultiPolygon(m) => format!("MULTIPOLYGON({})", m.iter().map(lines).collect::<Vec<_>>().join(",")),
        _ => return None,
    })
}

/// GeoParquet output: results with `lon`, `lat` (or `x`, `y`) columns and
/// no `geometry` of their own get a WKB point column `geometry` and the
/// file the "geo" metadata of GeoParquet 1.1 (CRS: OGC:CRS84 for lon/lat,
/// unknown for x/y), so GIS tools open them as points.
struct GeoColumns {
    x: usize,
    y: usize,
    lonlat: bool,
}

impl GeoColumns {
    fn of(schema: &Schema) -> Option<GeoColumns> {
        if schema.index_of("geometry").is_ok() {
            return None;
        }
        let f64_at = |n: &str| schema.index_of(n).ok().filter(|&i| schema.field(i).data_type() == &DataType::Float64);
        match (f64_at("lon"), f64_at("lat"), f64_at("x"), f64_at("y")) {
            (Some(x), Some(y), _, _) => Some(GeoColumns { x, y, lonlat: true }),
            (_, _, Some(x), Some(y)) => Some(GeoColumns { x, y, lonlat: false }),
            _ => None,
        }
    }

    fn schema(&self, schema: &Schema) -> SchemaRef {
        let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new("geometry", DataType::Binary, true));
        Arc::new(Schema::new(fields))
    }

    /// The file's "geo" metadata.
    fn metadata(&self) -> String {
        let crs = if self.lonlat { "" } else { ",\"crs\":null" };
        format!(
            "{{\"version\":\"1.1.0\",\"primary_column\":\"geometry\",\"columns\":{{\"geometry\":{{\"encoding\":\"WKB\",\"geometry_types\":[\"Point\"]{crs}}}}}}}"
        )
    }

    /// `batch` with its points as WKB.
    fn add(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        use datafusion::arrow::array::{Array, AsArray, BinaryBuilder};
        use datafusion::arrow::datatypes::Float64Type;
        let (x, y) =
            (batch.column(self.x).as_primitive::<Float64Type>(), batch.column(self.y).as_primitive::<Float64Type>());
        let mut b = BinaryBuilder::with_capacity(batch.num_rows(), batch.num_rows() * 21);
        let mut buf = Vec::with_capacity(21);
        for i in 0..batch.num_rows() {
            if x.is_null(i) || y.is_null(i) {
                b.append_null();
                continue;
            }
            buf.clear();
            let p = wkt::types::Point::from_coord(wkt::types::Coord { x: x.value(i), y: y.value(i), z: None, m: None });
            wkb::writer::write_point(&mut buf, &p, &Default::default()).map_err(|e| anyhow!("WKB: {e}"))?;
            b.append_value(&buf);
        }
        let mut cols = batch.columns().to_vec();
        cols.push(Arc::new(b.finish()));
        Ok(RecordBatch::try_new(self.schema(&batch.schema()), cols)?)
    }
}

/// Writes `stream` as CSV to standard output (`out` = `None`) or to `out`
/// (`.csv` or `.parquet`), atomically; returns the number of rows. Parquet
/// is written with `ctx`'s Parquet options. With `geoparquet`, a
/// `.parquet` result with lon/lat or x/y columns is GeoParquet (a WKB point
/// column `geometry`; on 10 M rows the query takes about a quarter longer).
///
/// # Errors
/// An unknown extension, an error in the query, or one writing; a file is
/// then left as it was.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> anyhow::Result<()> {
/// let ctx = segdist_sql::context();
/// let dir = tempfile::tempdir()?;
/// let out = dir.path().join("d.csv");
/// let stream = ctx.sql("SELECT segdist_distance(1, 3, 0, 0, 2, 0) AS d").await?.execute_stream().await?;
/// assert_eq!(segdist_sql::files::write(&ctx, stream, Some(&out), false).await?, 1);
/// assert_eq!(std::fs::read_to_string(&out)?, "d\n3.0\n");
/// # Ok(())
/// # }
/// ```
pub async fn write(
    ctx: &SessionContext,
    stream: SendableRecordBatchStream,
    out: Option<&Path>,
    geoparquet: bool,
) -> Result<u64> {
    let Some(out) = out else {
        return write_csv(stream, Box::new(BufWriter::new(std::io::stdout().lock()))).await;
    };
    let ext = out.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    if ext != "csv" && ext != "parquet" {
        bail!("{}: unknown output format (.csv or .parquet)", out.display());
    }
    let tmp = temporary(out)?;
    let result = if ext == "csv" {
        match File::create(&tmp) {
            Ok(f) => write_csv(stream, Box::new(BufWriter::new(f))).await,
            Err(e) => Err(anyhow!(e).context(format!("cannot write {}", tmp.display()))),
        }
    } else {
        let geo = if geoparquet { GeoColumns::of(&stream.schema()) } else { None };
        write_parquet(ctx, stream, &tmp, geo).await
    };
    match result {
        Ok(rows) => {
            std::fs::rename(&tmp, out).with_context(|| format!("cannot write {}", out.display()))?;
            Ok(rows)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// CSV with a header (the header alone for no rows).
async fn write_csv(mut stream: SendableRecordBatchStream, to: Box<dyn Write>) -> Result<u64> {
    let schema = stream.schema();
    let mut w = WriterBuilder::new().with_header(true).build(to);
    let mut rows = 0u64;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        rows += batch.num_rows() as u64;
        w.write(&batch)?;
    }
    if rows == 0 {
        w.write(&RecordBatch::new_empty(schema))?;
    }
    w.into_inner().flush()?;
    Ok(rows)
}

/// One Parquet file at `path` by DataFusion's `ParquetSink`, which encodes
/// row groups and columns in parallel while the stream is still arriving.
async fn write_parquet(
    ctx: &SessionContext,
    stream: SendableRecordBatchStream,
    path: &Path,
    geo: Option<GeoColumns>,
) -> Result<u64> {
    let mut options = ctx.state().default_table_options().parquet;
    let stream: SendableRecordBatchStream = match geo {
        None => stream,
        Some(g) => {
            options.key_value_metadata.insert("geo".into(), Some(g.metadata()));
            let schema = g.schema(&stream.schema());
            let batches =
                stream.map(move |b| b.and_then(|b| g.add(&b).map_err(|e| DataFusionError::External(e.into()))));
            Box::pin(RecordBatchStreamAdapter::new(schema, batches))
        }
    };
    let path = std::path::absolute(path)?;
    let name = path.to_str().ok_or_else(|| anyhow!("{}: not a UTF-8 path", path.display()))?;
    let config = FileSinkConfig {
        original_url: name.to_string(),
        object_store_url: ObjectStoreUrl::local_filesystem(),
        file_group: FileGroup::default(),
        table_paths: vec![ListingTableUrl::parse(name)?],
        output_schema: stream.schema(),
        table_partition_cols: vec![],
        insert_op: InsertOp::Append,
        keep_partition_by_columns: false,
        file_extension: "parquet".into(),
        file_output_mode: FileOutputMode::SingleFile,
    };
    Ok(ParquetSink::new(config, options).write_all(stream, &ctx.task_ctx()).await?)
}

/// A temporary name beside `out`, after removing those of earlier runs
/// that were killed outright (see [`remove_temporaries`]).
fn temporary(out: &Path) -> Result<PathBuf> {
    let name = out.file_name().and_then(|n| n.to_str()).ok_or_else(|| anyhow!("{}: not a file name", out.display()))?;
    remove_temporaries(out, |pid| pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists());
    Ok(out.with_file_name(format!(".{name}.segdist-sql-{}.tmp", std::process::id())))
}

/// Removes the temporaries beside `out` (`.NAME.segdist-sql-PID.tmp`, and
/// the object store's staging files `...tmp#N` beside them) of the runs
/// whose process id `whose` accepts, saying so on stderr. Called with this
/// process's id when a signal stops a query, and before every write with
/// the ids of runs no longer alive (Linux: `/proc`; elsewhere a warning
/// names them instead).
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let stale = dir.path().join(".out.csv.segdist-sql-999999999.tmp");
/// std::fs::write(&stale, "half")?;
/// segdist_sql::files::remove_temporaries(&dir.path().join("out.csv"), |pid| pid == 999_999_999);
/// assert!(!stale.exists());
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn remove_temporaries(out: &Path, whose: impl Fn(u32) -> bool) {
    let Some(name) = out.file_name().and_then(|n| n.to_str()) else { return };
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let prefix = format!(".{name}.segdist-sql-");
    let known = Path::new("/proc/self").exists();
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some((pid, _)) = file.strip_prefix(&prefix).and_then(|r| r.split_once(".tmp")) else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if pid == std::process::id() || known {
            if whose(pid) {
                let _ = std::fs::remove_file(e.path());
                if pid != std::process::id() {
                    eprintln!("segdist-sql: removed {}, left by an earlier run that was killed", e.path().display());
                }
            }
        } else {
            eprintln!("segdist-sql: warning: {} may be left by an earlier run that was killed", e.path().display());
        }
    }
}
