//! Query points streamed from CSV, GeoJSON and WKT files in chunks, with
//! the points file's own columns kept for the output (`--keep`).
//!
//! A CSV row is one point: x/y(/z) columns or a WKT POINT column (see
//! [`CsvCols`]). A GeoJSON Point or MultiPoint feature gives one point per
//! position, all with the feature's id and properties. A WKT line gives one
//! point per position, numbered by line.
//!
//! Kept columns are formatted once, when read, as the output will hold
//! them ([`KeepAs`]): the writers put [`Pt::kept`] before their own
//! columns as it is.

use std::io::{self, BufRead, BufReader, Read};
use std::iter::Peekable;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;

use crate::geom::{csv_error, csv_reader, feature_id, geojson_features, open, position, wkt_points};
use crate::geom::{CsvCols, Format, InputOpts};
use crate::parquet::{Batch, ParquetFile};
use crate::snap::field;

/// One query point: its id, coordinates, whether it had a z, and its
/// kept columns.
pub struct Pt {
    pub id: String,
    pub p: [f64; 3],
    pub has_z: bool,
    /// The kept columns' values, formatted for the output, each followed
    /// by a comma (empty when nothing is kept); see [`PointReader::keep`].
    pub kept: String,
}

/// `--keep`: which columns of the points file go into the output.
#[derive(Args, Debug, Clone)]
pub struct KeepOpts {
    /// The points file's columns (CSV) or properties (GeoJSON) repeated in
    /// every output row, before segdist's own: all (the default), none, or
    /// names separated by commas. A name that is also one of segdist's
    /// output columns (in any mode: point_id, rank, line_id, part, segment,
    /// distance, distance_m, x, y, z, lon, lat, t, along, along_m,
    /// fraction, kind, geometry; any case) gets the prefix input_. From GeoJSON, all
    /// means the properties of the first feature.
    #[arg(long, value_name = "COLS", default_value = "all")]
    pub keep: String,
}

/// segdist's own output column names, in every command and mode: kept
/// columns with these names are prefixed with `input_`.
pub const OWN_COLUMNS: [&str; 18] = [
    "point_id",
    "rank",
    "line_id",
    "part",
    "segment",
    "distance",
    "distance_m",
    "x",
    "y",
    "z",
    "lon",
    "lat",
    "t",
    "along",
    "along_m",
    "fraction",
    "kind",
    "geometry",
];

/// How kept values are written: as CSV fields, or as GeoJSON properties
/// (`"name":value`; CSV values become JSON strings, GeoJSON properties
/// keep their JSON value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepAs {
    Csv,
    Json,
    /// For Parquet output: each value as `LEN:TEXT,` (its length in bytes,
    /// then itself), a null as `-,`; read back by
    /// [`crate::parquet_out::kept_values`].
    Fields,
}

/// Where the kept values come from, and how they are written.
struct Kept {
    from: KeptFrom,
    to: KeepAs,
    /// For [`KeepAs::Json`], `"name":` of each kept value, in order.
    keys: Vec<String>,
}

enum KeptFrom {
    /// CSV (or Parquet) column indexes.
    Columns(Vec<usize>),
    /// GeoJSON property names.
    Properties(Vec<String>),
}

/// The output names of kept input names: each one among [`OWN_COLUMNS`]
/// or already used gets `input_` in front, as often as it takes.
pub fn output_names(names: &[String]) -> Vec<String> {
    let mut used: Vec<String> = OWN_COLUMNS.iter().map(|c| c.to_string()).collect();
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let mut name = n.clone();
        while used.iter().any(|u| u.eq_ignore_ascii_case(&name)) {
            name = format!("input_{name}");
        }
        used.push(name.clone());
        out.push(name);
    }
    out
}

/// The CSV header fields of kept columns, each followed by a comma.
pub fn csv_header(names: &[String]) -> String {
    let mut w = Vec::new();
    for n in names {
        field(&mut w, n);
        w.push(b',');
    }
    String::from_utf8_lossy(&w).into_owned()
}

/// Points streamed from a file in chunks.
pub struct PointReader {
    pub name: String,
    /// Bytes in the file, when known (for progress).
    pub len: Option<u64>,
    kind: Kind,
    kept: Option<Kept>,
}

type Features = Peekable<Box<dyn Iterator<Item = Result<geojson::Feature>> + Send>>;

enum Kind {
    Csv {
        rdr: csv::Reader<Box<dyn Read + Send>>,
        header: csv::StringRecord,
        cols: CsvCols,
        row: usize,
    },
    Wkt {
        lines: io::Lines<BufReader<Box<dyn Read + Send>>>,
        line: usize,
        next_id: usize,
    },
    Geojson {
        features: Features,
        i: usize,
        prop: Option<String>,
    },
    /// The batch being read and the next row in it.
    Parquet {
        file: Box<ParquetFile>,
        batch: Option<Batch>,
        row: usize,
    },
}

impl PointReader {
    pub fn open(path: &Path, opts: &InputOpts) -> Result<PointReader> {
        let format = Format::of(path, opts.points_format)?;
        if format == Format::Parquet {
            let file = ParquetFile::open(path, opts)?;
            let kind = Kind::Parquet { file: Box::new(file), batch: None, row: 0 };
            let name = if path.as_os_str() == "-" { "<stdin>".to_string() } else { path.display().to_string() };
            return Ok(PointReader { name, len: None, kind, kept: None });
        }
        let (name, r, len) = open(path)?;
        let kind = match format {
            Format::Csv => {
                let (rdr, header) = csv_reader(&name, r, opts.delimiter)?;
                let cols = CsvCols::find(&header, opts, &name, false)?;
                Kind::Csv { rdr, header, cols, row: 0 }
            }
            Format::Wkt => Kind::Wkt { lines: BufReader::new(r).lines(), line: 0, next_id: 0 },
            Format::Gpx => bail!("{name}: GPX traces are read by `segdist match`"),
            Format::Parquet => unreachable!("opened above"),
            Format::Geojson => {
                Kind::Geojson { features: geojson_features(&name, r)?.peekable(), i: 0, prop: opts.id_property.clone() }
            }
        };
        Ok(PointReader { name, len, kind, kept: None })
    }

    /// Keeps the columns `opts` names in every point read from now on, in
    /// [`Pt::kept`], formatted `to` the output's form, and gives their
    /// output names ([`output_names`]).
    ///
    /// `all` keeps every CSV column (coordinates and id included), or the
    /// properties of the first GeoJSON feature; WKT has none. A named
    /// column missing from a CSV header is an error; a named property
    /// missing from a feature is empty (null in GeoJSON).
    pub fn keep(&mut self, opts: &KeepOpts, to: KeepAs) -> Result<Vec<String>> {
        let spec = opts.keep.trim();
        let listed: Option<Vec<String>> = match spec {
            "all" => None,
            "none" | "" => return Ok(Vec::new()),
            list => Some(list.split(',').map(|c| c.trim().to_string()).collect()),
        };
        let name = &self.name;
        let (names, from) = match &mut self.kind {
            Kind::Csv { header, .. } => {
                let all: Vec<String> = header.iter().map(|h| h.trim().to_string()).collect();
                match listed {
                    None => (all.clone(), KeptFrom::Columns((0..all.len()).collect())),
                    Some(list) => {
                        let mut cols = Vec::with_capacity(list.len());
                        for c in &list {
                            let i = all.iter().position(|h| h == c).ok_or_else(|| {
                                anyhow!(
                                    "{name}: line 1: no column {c:?} to keep (--keep; the columns are {})",
                                    all.join(", ")
                                )
                            })?;
                            cols.push(i);
                        }
                        (list, KeptFrom::Columns(cols))
                    }
                }
            }
            Kind::Geojson { features, .. } => {
                let names = listed.unwrap_or_else(|| match features.peek() {
                    Some(Ok(f)) => f.properties.iter().flat_map(|m| m.keys().cloned()).collect(),
                    _ => Vec::new(),
                });
                (names.clone(), KeptFrom::Properties(names))
            }
            Kind::Parquet { file, .. } => {
                let all = file.column_names();
                // A geometry column (WKB, WKT, GeoArrow) is not kept by
                // default: the output has its own geometry.
                let skip = file.geometry_column();
                match listed {
                    None => {
                        let cols: Vec<usize> = (0..all.len()).filter(|&c| Some(c) != skip).collect();
                        (cols.iter().map(|&c| all[c].clone()).collect(), KeptFrom::Columns(cols))
                    }
                    Some(list) => {
                        let mut cols = Vec::with_capacity(list.len());
                        for c in &list {
                            let i = all.iter().position(|h| h == c).ok_or_else(|| {
                                anyhow!("{name}: no column {c:?} to keep (--keep; the columns are {})", all.join(", "))
                            })?;
                            cols.push(i);
                        }
                        (list, KeptFrom::Columns(cols))
                    }
                }
            }
            Kind::Wkt { .. } => match listed {
                None => return Ok(Vec::new()),
                Some(_) => bail!("{name}: WKT points have no columns to keep (--keep)"),
            },
        };
        if let (Kind::Parquet { file, .. }, KeptFrom::Columns(cols)) = (&mut self.kind, &from) {
            file.want_text(cols);
        }
        let out = output_names(&names);
        let keys = out.iter().map(|n| format!("{}:", serde_json::Value::String(n.clone()))).collect();
        self.kept = Some(Kept { from, to, keys });
        Ok(out)
    }

    /// The coordinates come from CSV columns named as longitude/latitude.
    pub fn lonlat_names(&self) -> bool {
        match &self.kind {
            Kind::Csv { cols, .. } => cols.lonlat,
            Kind::Parquet { file, .. } => file.lonlat,
            _ => false,
        }
    }

    /// A GeoParquet file's CRS (PROJJSON), if it gives one.
    pub fn crs(&self) -> Option<&serde_json::Value> {
        match &self.kind {
            Kind::Parquet { file, .. } => file.crs.as_ref(),
            _ => None,
        }
    }

    /// Whether the points carry z: a z column in a CSV; otherwise unknown
    /// until read (`None`).
    pub fn declares_z(&self) -> Option<bool> {
        match &self.kind {
            Kind::Csv { cols, .. } => cols.declares_z(),
            _ => None,
        }
    }

    /// Bytes read so far (CSV only; 0 otherwise).
    pub fn position(&self) -> u64 {
        match &self.kind {
            Kind::Csv { rdr, .. } => rdr.position().byte(),
            _ => 0,
        }
    }

    /// Up to about `max` more points into `out` (cleared first); empty at
    /// the end.
    pub fn next_chunk(&mut self, max: usize, out: &mut Vec<Pt>) -> Result<()> {
        out.clear();
        let name = &self.name;
        let kept = self.kept.as_ref();
        match &mut self.kind {
            Kind::Csv { rdr, header, cols, row } => {
                // Byte records: no UTF-8 check of every field, no String
                // per field.
                let mut rec = csv::ByteRecord::new();
                while out.len() < max && rdr.read_byte_record(&mut rec).map_err(|e| csv_error(e, name))? {
                    let (p, has_z) = cols.point_of(|i| rec.get(i).unwrap_or_default(), rec.position(), header, name)?;
                    let id = match cols.id {
                        Some(i) => String::from_utf8_lossy(rec.get(i).unwrap_or_default()).into_owned(),
                        None => row.to_string(),
                    };
                    *row += 1;
                    let kept = kept.map_or_else(String::new, |k| k.of_record(&rec));
                    out.push(Pt { id, p, has_z, kept });
                }
            }
            Kind::Wkt { lines, line, next_id } => {
                while out.len() < max {
                    let Some(text) = lines.next() else { break };
                    let text = text.with_context(|| format!("cannot read {name}"))?;
                    *line += 1;
                    if text.trim().is_empty() {
                        continue;
                    }
                    let place = || format!("{name}: line {line}");
                    for (p, has_z) in wkt_points(&text, &place)? {
                        out.push(Pt { id: next_id.to_string(), p, has_z, kept: String::new() });
                    }
                    *next_id += 1;
                }
            }
            Kind::Parquet { file, batch, row } => {
                while out.len() < max {
                    if batch.as_ref().is_none_or(|b| *row >= b.rows()) {
                        *row = 0;
                        match file.next_batch()? {
                            Some(b) => *batch = Some(b),
                            None => {
                                *batch = None;
                                break;
                            }
                        }
                        continue;
                    }
                    let b = batch.as_ref().expect("a batch");
                    let id = file.id_of(b, *row);
                    let kept = kept.map_or_else(String::new, |k| k.of_batch(b, *row));
                    for (p, has_z) in file.points_of(b, *row)? {
                        out.push(Pt { id: id.clone(), p, has_z, kept: kept.clone() });
                    }
                    *row += 1;
                }
            }
            Kind::Geojson { features, i, prop } => {
                while out.len() < max {
                    let Some(f) = features.next() else { break };
                    let f = f?;
                    let place = format!("{name}: feature {i}");
                    let id = feature_id(&f, *i, prop.as_deref());
                    *i += 1;
                    let kept = kept.map_or_else(String::new, |k| k.of_properties(f.properties.as_ref()));
                    let positions: Vec<Vec<f64>> = match f.geometry.map(|g| g.value) {
                        Some(geojson::Value::Point(p)) => vec![p],
                        Some(geojson::Value::MultiPoint(ps)) => ps,
                        Some(other) => bail!("{place}: a {} where points are expected", other.type_name()),
                        None => bail!("{place}: no geometry"),
                    };
                    for pos in positions {
                        let (p, has_z) = position(&pos).map_err(|e| anyhow!("{place}: {e}"))?;
                        out.push(Pt { id: id.clone(), p, has_z, kept: kept.clone() });
                    }
                }
            }
        }
        Ok(())
    }
}

impl Kept {
    /// The kept fields of a CSV row.
    fn of_record(&self, rec: &csv::ByteRecord) -> String {
        let KeptFrom::Columns(cols) = &self.from else { return String::new() };
        let mut w = Vec::with_capacity(rec.as_slice().len() + 4 * cols.len());
        for (k, &c) in cols.iter().enumerate() {
            let v = String::from_utf8_lossy(rec.get(c).unwrap_or_default());
            self.push(&mut w, k, Value::Text(&v));
        }
        // Made of whole strings: valid UTF-8.
        String::from_utf8(w).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// The kept columns of a Parquet row: text as arrow-cast displays it;
    /// numbers and booleans stay JSON numbers and booleans.
    fn of_batch(&self, batch: &Batch, row: usize) -> String {
        let KeptFrom::Columns(cols) = &self.from else { return String::new() };
        let mut w = Vec::new();
        for (k, &c) in cols.iter().enumerate() {
            let t = batch.data_type(c);
            let raw = t.is_numeric() || *t == arrow_schema::DataType::Boolean;
            match batch.text(c, row) {
                None => self.push(&mut w, k, Value::Null),
                Some(v) if raw && (v == "true" || v == "false" || v.parse::<f64>().is_ok_and(f64::is_finite)) => {
                    self.push(&mut w, k, Value::Raw(v))
                }
                Some(v) => self.push(&mut w, k, Value::Text(v)),
            }
        }
        String::from_utf8(w).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// The kept properties of a GeoJSON feature.
    fn of_properties(&self, props: Option<&geojson::JsonObject>) -> String {
        let KeptFrom::Properties(names) = &self.from else { return String::new() };
        let mut w = Vec::new();
        for (k, n) in names.iter().enumerate() {
            let v = props.and_then(|m| m.get(n)).map_or(Value::Null, Value::Json);
            self.push(&mut w, k, v);
        }
        String::from_utf8(w).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Appends kept value `k` and a comma.
    fn push(&self, w: &mut Vec<u8>, k: usize, v: Value) {
        match self.to {
            KeepAs::Fields => {
                let text = match v {
                    Value::Text(s) | Value::Raw(s) => Some(std::borrow::Cow::Borrowed(s)),
                    Value::Json(serde_json::Value::String(s)) => Some(std::borrow::Cow::Borrowed(s.as_str())),
                    Value::Json(serde_json::Value::Null) | Value::Null => None,
                    Value::Json(other) => Some(std::borrow::Cow::Owned(other.to_string())),
                };
                match text {
                    Some(t) => {
                        w.extend(t.len().to_string().as_bytes());
                        w.push(b':');
                        w.extend(t.as_bytes());
                    }
                    None => w.push(b'-'),
                }
            }
            KeepAs::Csv => match v {
                Value::Text(s) | Value::Raw(s) => field(w, s),
                Value::Json(serde_json::Value::String(s)) => field(w, s),
                Value::Json(serde_json::Value::Null) | Value::Null => {}
                Value::Json(other) => field(w, &other.to_string()),
            },
            KeepAs::Json => {
                w.extend(self.keys[k].as_bytes());
                match v {
                    Value::Text(s) => w.extend(serde_json::Value::String(s.to_string()).to_string().as_bytes()),
                    Value::Json(j) => w.extend(j.to_string().as_bytes()),
                    Value::Raw(s) => w.extend(s.as_bytes()),
                    Value::Null => w.extend(b"null"),
                }
            }
        }
        w.push(b',');
    }
}

/// A kept value as read.
enum Value<'a> {
    Text(&'a str),
    /// A JSON token as it is (a number or a boolean).
    Raw(&'a str),
    Json(&'a serde_json::Value),
    Null,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clashing_names_are_prefixed_until_unique() {
        let names: Vec<String> = ["id", "x", "Y", "input_x", "note", "note"].iter().map(|s| s.to_string()).collect();
        assert_eq!(output_names(&names), ["id", "input_x", "input_Y", "input_input_x", "note", "input_note"]);
    }

    #[test]
    fn fields_for_parquet_read_back_whatever_they_hold() {
        let kept = Kept { from: KeptFrom::Columns(vec![0, 1, 2, 3]), to: KeepAs::Fields, keys: Vec::new() };
        let mut w = Vec::new();
        for (k, v) in
            [Value::Text("a,b:c 12:x,"), Value::Null, Value::Text(""), Value::Raw("-1.5")].into_iter().enumerate()
        {
            kept.push(&mut w, k, v);
        }
        let text = String::from_utf8(w).unwrap();
        assert_eq!(crate::parquet_out::kept_values(&text), [Some("a,b:c 12:x,"), None, Some(""), Some("-1.5")]);
    }

    #[test]
    fn csv_header_quotes_where_it_must() {
        assert_eq!(csv_header(&["a".into(), "b,c".into()]), "a,\"b,c\",");
    }
}
