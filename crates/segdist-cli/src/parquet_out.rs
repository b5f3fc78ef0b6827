//! `snap`'s results as GeoParquet: one row group per chunk of points, the
//! closest point as a WKB `geometry` column, GeoParquet 1.1 metadata with
//! the inputs' CRS; and [`Sink`], where `snap` writes either this or text.

use std::sync::Arc;

use anyhow::Result;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};

/// Writes `snap`'s rows as (Geo)Parquet: one row group per chunk, the
/// closest point as a WKB `geometry` column, GeoParquet 1.1 metadata.
pub struct ParquetOut<'w> {
    writer: parquet::arrow::ArrowWriter<&'w mut crate::output::Output>,
    schema: SchemaRef,
}

/// One output row: the kept values, the point id, and its hit if any.
pub struct OutRow<'a> {
    pub kept: Vec<Option<&'a str>>,
    pub point_id: &'a str,
    pub rank: u32,
    pub hit: Option<OutHit<'a>>,
}

/// A hit, as `snap` writes it.
pub struct OutHit<'a> {
    pub line_id: &'a str,
    pub part: u64,
    pub segment: u64,
    pub distance: f64,
    pub point: [f64; 3],
    pub t: f64,
    pub along: f64,
    pub fraction: Option<f64>,
}

/// The output's columns: their names in `snap`'s CSV; and its CRS.
pub struct OutColumns {
    pub kept: Vec<String>,
    pub rank: bool,
    pub geographic: bool,
    pub three_d: bool,
    /// The inputs' CRS (PROJJSON) for planar output; unknown (null) when
    /// `None`.
    pub crs: Option<serde_json::Value>,
}

impl<'w> ParquetOut<'w> {
    pub fn new(out: &'w mut crate::output::Output, cols: &OutColumns) -> Result<ParquetOut<'w>> {
        use arrow_schema::{Field, Schema};
        let mut fields: Vec<Field> = cols.kept.iter().map(|k| Field::new(k, DataType::Utf8, true)).collect();
        fields.push(Field::new("point_id", DataType::Utf8, false));
        if cols.rank {
            fields.push(Field::new("rank", DataType::UInt32, false));
        }
        let (d, xy, along) =
            if cols.geographic { ("distance_m", ["lon", "lat"], "along_m") } else { ("distance", ["x", "y"], "along") };
        fields.push(Field::new("line_id", DataType::Utf8, true));
        fields.push(Field::new("part", DataType::UInt64, true));
        fields.push(Field::new("segment", DataType::UInt64, true));
        fields.push(Field::new(d, DataType::Float64, true));
        for c in xy {
            fields.push(Field::new(c, DataType::Float64, true));
        }
        if cols.three_d {
            fields.push(Field::new("z", DataType::Float64, true));
        }
        fields.push(Field::new("t", DataType::Float64, true));
        fields.push(Field::new(along, DataType::Float64, true));
        fields.push(Field::new("fraction", DataType::Float64, true));
        fields.push(Field::new("geometry", DataType::Binary, true));
        let schema = Arc::new(Schema::new(fields));
        let kind = if cols.three_d { "Point Z" } else { "Point" };
        // Lon/lat: GeoParquet's default CRS (OGC:CRS84), said by leaving
        // crs out; planar: the inputs' CRS, else unknown (null).
        let crs = match (&cols.geographic, &cols.crs) {
            (true, _) => String::new(),
            (false, Some(crs)) => format!(",\"crs\":{crs}"),
            (false, None) => ",\"crs\":null".to_string(),
        };
        let geo = format!(
            "{{\"version\":\"1.1.0\",\"primary_column\":\"geometry\",\"columns\":{{\"geometry\":{{\"encoding\":\"WKB\",\"geometry_types\":[\"{kind}\"]{crs}}}}}}}"
        );
        let props = parquet::file::properties::WriterProperties::builder()
            .set_compression(parquet::basic::Compression::SNAPPY)
            // Dictionaries only where values repeat: line ids. (Interning
            // every point id, number and point cost a sixth of the run.)
            .set_dictionary_enabled(false)
            .set_column_dictionary_enabled(parquet::schema::types::ColumnPath::from("line_id"), true)
            .set_max_row_group_row_count(Some(crate::snap::CHUNK))
            .set_key_value_metadata(Some(vec![parquet::file::metadata::KeyValue::new("geo".to_string(), geo)]))
            .build();
        let writer = parquet::arrow::ArrowWriter::try_new(out, schema.clone(), Some(props))?;
        Ok(ParquetOut { writer, schema })
    }

    /// Writes `rows` as one row group.
    pub fn write(&mut self, rows: &[OutRow]) -> Result<()> {
        use arrow_array::builder::{BinaryBuilder, Float64Builder, StringBuilder, UInt32Builder, UInt64Builder};
        let fields = self.schema.fields();
        let kept = fields.iter().take_while(|f| f.name() != "point_id").count();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(fields.len());
        for k in 0..kept {
            let mut b = StringBuilder::new();
            for r in rows {
                b.append_option(r.kept.get(k).copied().flatten());
            }
            columns.push(Arc::new(b.finish()));
        }
        let floats = |f: &dyn Fn(&OutHit) -> Option<f64>| {
            let mut b = Float64Builder::with_capacity(rows.len());
            rows.iter().for_each(|r| b.append_option(r.hit.as_ref().and_then(f)));
            Arc::new(b.finish()) as ArrayRef
        };
        let ints = |f: &dyn Fn(&OutHit) -> u64| {
            let mut b = UInt64Builder::with_capacity(rows.len());
            rows.iter().for_each(|r| b.append_option(r.hit.as_ref().map(f)));
            Arc::new(b.finish()) as ArrayRef
        };
        for field in fields.iter().skip(kept) {
            columns.push(match field.name().as_str() {
                "point_id" => str_column(rows, |r| Some(r.point_id)),
                "rank" => {
                    let mut b = UInt32Builder::with_capacity(rows.len());
                    rows.iter().for_each(|r| b.append_value(r.rank));
                    Arc::new(b.finish())
                }
                "line_id" => str_column(rows, |r| r.hit.as_ref().map(|h| h.line_id)),
                "part" => ints(&|h| h.part),
                "segment" => ints(&|h| h.segment),
                "distance" | "distance_m" => floats(&|h| Some(h.distance)),
                "x" | "lon" => floats(&|h| Some(h.point[0])),
                "y" | "lat" => floats(&|h| Some(h.point[1])),
                "z" => floats(&|h| Some(h.point[2])),
                "t" => floats(&|h| Some(h.t)),
                "along" | "along_m" => floats(&|h| Some(h.along)),
                "fraction" => floats(&|h| h.fraction),
                "geometry" => {
                    let three_d = fields.iter().any(|f| f.name() == "z");
                    let mut b = BinaryBuilder::new();
                    let mut buf = Vec::with_capacity(40);
                    for r in rows {
                        match &r.hit {
                            None => b.append_null(),
                            Some(h) => {
                                buf.clear();
                                point_wkb(&mut buf, &h.point, three_d);
                                b.append_value(&buf);
                            }
                        }
                    }
                    Arc::new(b.finish())
                }
                other => unreachable!("column {other} is made above"),
            });
        }
        let batch = RecordBatch::try_new(self.schema.clone(), columns)?;
        self.writer.write(&batch)?;
        self.writer.flush()?;
        Ok(())
    }

    /// Writes the footer.
    pub fn finish(self) -> Result<()> {
        self.writer.close()?;
        Ok(())
    }
}

/// A string column of `f` of every row.
fn str_column<'r, 'a: 'r>(rows: &'r [OutRow<'a>], f: impl Fn(&'r OutRow<'a>) -> Option<&'r str>) -> ArrayRef {
    let mut b = arrow_array::builder::StringBuilder::with_capacity(rows.len(), rows.len() * 8);
    rows.iter().for_each(|r| b.append_option(f(r)));
    Arc::new(b.finish())
}

/// A WKB point: little-endian, ISO type 1001 for Point Z. (21 or 29 bytes
/// written here: the wkb crate's writer would need a geo-traits point
/// made for each row first.)
fn point_wkb(buf: &mut Vec<u8>, p: &[f64; 3], three_d: bool) {
    buf.push(1);
    buf.extend(if three_d { 1001u32 } else { 1u32 }.to_le_bytes());
    for c in &p[..if three_d { 3 } else { 2 }] {
        buf.extend(c.to_le_bytes());
    }
}

/// Where `snap`'s rows go: text (CSV, GeoJSON) to the output, or Parquet
/// record batches (text is then ignored).
pub enum Sink<'w> {
    Text(&'w mut crate::output::Output),
    Parquet(Box<ParquetOut<'w>>),
}

impl<'w> Sink<'w> {
    /// Parquet when `args` say so, with `snap`'s columns for the mode.
    pub fn open(
        out: &'w mut crate::output::Output,
        args: &crate::snap::SnapArgs,
        kept: &[String],
        crs: Option<serde_json::Value>,
        geographic: bool,
        three_d: bool,
    ) -> Result<Sink<'w>> {
        if args.output_format != crate::snap::OutFormat::Parquet {
            return Ok(Sink::Text(out));
        }
        let cols = OutColumns { kept: kept.to_vec(), rank: args.k > 1, geographic, three_d, crs };
        Ok(Sink::Parquet(Box::new(ParquetOut::new(out, &cols)?)))
    }

    /// Writes text (nothing for Parquet).
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        if let Sink::Text(out) = self {
            std::io::Write::write_all(out, bytes)?;
        }
        Ok(())
    }

    /// Ends the output (Parquet's footer).
    pub fn finish(self) -> Result<()> {
        match self {
            Sink::Text(_) => Ok(()),
            Sink::Parquet(pq) => pq.finish(),
        }
    }
}

/// The kept values of a point formatted by [`KeepAs::Fields`]
/// (`LEN:TEXT,` or `-,` each), `None` for null.
///
/// [`KeepAs::Fields`]: crate::points::KeepAs::Fields
pub fn kept_values(kept: &str) -> Vec<Option<&str>> {
    let mut out = Vec::new();
    let mut rest = kept;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("-,") {
            out.push(None);
            rest = r;
            continue;
        }
        let Some((len, r)) = rest.split_once(':') else { break };
        let Some(n) = len.parse::<usize>().ok().filter(|&n| n < r.len() && r.is_char_boundary(n)) else { break };
        out.push(Some(&r[..n]));
        rest = &r[n + 1..];
    }
    out
}
