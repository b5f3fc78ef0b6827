//! Reading Parquet and GeoParquet: lines and points, record batch by
//! record batch (writing is parquet_out.rs).
//!
//! The geometry of a row is found, in order: `--x-column`/`--y-column`;
//! the GeoParquet metadata's primary column (`geo` key: WKB, or GeoArrow's
//! native `point`, `linestring`, `polygon`, `multipoint`,
//! `multilinestring`, `multipolygon`, coordinates separated or
//! interleaved); x/y columns by name, as in a CSV ([`XY_NAMES`]); a binary
//! (WKB) or text (WKT) column named geometry, geom, wkb_geometry or wkt.
//! The CRS says whether it is longitude/latitude: GeoParquet's default (no
//! `crs`) and EPSG:4326/OGC:CRS84 are; any other, or `crs: null`
//! (unknown), is not. Plain x/y columns follow their names.
//!
//! Parquet needs to seek: `-` (standard input) is read whole into memory.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use crate::geom::{position, InputOpts, Lines, XY_NAMES};

/// Rows read at a time.
const BATCH: usize = 1 << 16;

/// How a row's geometry is stored.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Geometry {
    /// x, y (and z) numeric columns.
    Xy { x: usize, y: usize, z: Option<usize> },
    /// WKB in a binary column.
    Wkb(usize),
    /// WKT in a text column.
    Wkt(usize),
    /// GeoArrow: `depth` list levels above the coordinates (point 0,
    /// linestring and multipoint 1, polygon and multilinestring 2,
    /// multipolygon 3).
    Native { col: usize, depth: usize },
}

/// A Parquet file being read.
pub struct ParquetFile {
    pub name: String,
    reader: ParquetRecordBatchReader,
    schema: SchemaRef,
    geometry: Geometry,
    /// The id column, if any.
    pub id: Option<usize>,
    /// The coordinates are longitude/latitude (by CRS or column names).
    pub lonlat: bool,
    /// The geometry column's CRS (PROJJSON) when the GeoParquet metadata
    /// gives one.
    pub crs: Option<serde_json::Value>,
    /// Rows read so far: the first row of the next batch.
    pub read: u64,
    /// Columns read as text in every batch (the id, a WKT geometry, kept
    /// columns).
    text_cols: Vec<usize>,
}

/// A record batch with the columns read from it made ready once: the
/// coordinates as doubles, the text columns as strings.
pub struct Batch {
    pub batch: RecordBatch,
    /// Its first row's number in the file, from 0.
    pub base: u64,
    texts: Vec<Option<arrow_array::StringArray>>,
    xyz: Vec<arrow_array::Float64Array>,
}

impl Batch {
    pub fn rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// Column `c` of row `row` as text (`None` for null); `c` must have
    /// been asked for ([`ParquetFile::want_text`]).
    pub fn text(&self, c: usize, row: usize) -> Option<&str> {
        let col = self.texts[c].as_ref().expect("a text column asked for");
        (!col.is_null(row)).then(|| col.value(row))
    }

    /// The type of column `c`.
    pub fn data_type(&self, c: usize) -> &DataType {
        self.batch.column(c).data_type()
    }
}

/// The names of a geometry column looked for without GeoParquet metadata.
const GEOMETRY_NAMES: [&str; 4] = ["geometry", "geom", "wkb_geometry", "wkt"];

impl ParquetFile {
    /// Opens `path` (`-`: standard input, read whole) and finds its
    /// geometry and id columns.
    pub fn open(path: &Path, opts: &InputOpts) -> Result<ParquetFile> {
        let name = if path.as_os_str() == "-" { "<stdin>".to_string() } else { path.display().to_string() };
        guarded(&name, || Self::open_unguarded(path, opts))
    }

    fn open_unguarded(path: &Path, opts: &InputOpts) -> Result<ParquetFile> {
        let name = if path.as_os_str() == "-" { "<stdin>".to_string() } else { path.display().to_string() };
        let bad = |e: parquet::errors::ParquetError| anyhow!("{name}: not a Parquet file: {e}");
        let builder = if path.as_os_str() == "-" {
            let mut buf = Vec::new();
            std::io::stdin().read_to_end(&mut buf).with_context(|| format!("cannot read {name}"))?;
            Source::Bytes(ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(buf)).map_err(bad)?)
        } else {
            let f = File::open(path).with_context(|| format!("cannot open {name}"))?;
            Source::File(ParquetRecordBatchReaderBuilder::try_new(f).map_err(bad)?)
        };
        let (schema, geo) = match &builder {
            Source::File(b) => (b.schema().clone(), geo_metadata(b.metadata())),
            Source::Bytes(b) => (b.schema().clone(), geo_metadata(b.metadata())),
        };
        let (geometry, lonlat) = find_geometry(&schema, geo.as_ref(), opts, &name)?;
        // No crs in the metadata is GeoParquet's default, OGC:CRS84; null
        // is unknown.
        let crs = match geometry {
            Geometry::Wkb(c) | Geometry::Native { col: c, .. } => geo.as_ref().and_then(|g| {
                let column = &g["columns"][schema.field(c).name()];
                match column.get("crs") {
                    None => Some(serde_json::json!({"id": {"authority": "OGC", "code": "CRS84"}})),
                    Some(serde_json::Value::Null) => None,
                    Some(crs) => Some(crs.clone()),
                }
            }),
            _ => None,
        };
        let id = schema.fields().iter().position(|f| f.name() == &opts.id_column);
        let reader = match builder {
            Source::File(b) => b.with_batch_size(BATCH).build(),
            Source::Bytes(b) => b.with_batch_size(BATCH).build(),
        }
        .map_err(bad)?;
        let text_cols = id.into_iter().chain(if let Geometry::Wkt(c) = geometry { Some(c) } else { None }).collect();
        Ok(ParquetFile { name, reader, schema, geometry, id, lonlat, crs, read: 0, text_cols })
    }

    /// The names of the columns (all of them, geometry included).
    pub fn column_names(&self) -> Vec<String> {
        self.schema.fields().iter().map(|f| f.name().clone()).collect()
    }

    /// The column holding WKB, WKT or GeoArrow geometry (not worth keeping
    /// as text), if any.
    pub fn geometry_column(&self) -> Option<usize> {
        match self.geometry {
            Geometry::Xy { .. } => None,
            Geometry::Wkb(c) | Geometry::Wkt(c) | Geometry::Native { col: c, .. } => Some(c),
        }
    }

    /// Reads columns `cols` as text in every batch from now on.
    pub fn want_text(&mut self, cols: &[usize]) {
        self.text_cols.extend(cols);
    }

    /// The next record batch, `None` at the end.
    pub fn next_batch(&mut self) -> Result<Option<Batch>> {
        let name = self.name.clone();
        guarded(&name, || self.next_batch_unguarded())
    }

    fn next_batch_unguarded(&mut self) -> Result<Option<Batch>> {
        let batch = match self.reader.next() {
            None => return Ok(None),
            Some(Err(e)) => bail!("{}: rows from {}: {e}", self.name, self.read),
            Some(Ok(b)) => b,
        };
        let mut texts = vec![None; batch.num_columns()];
        for &c in &self.text_cols {
            if texts[c].is_none() {
                texts[c] = Some(as_text(batch.column(c))?);
            }
        }
        let mut xyz = Vec::new();
        if let Geometry::Xy { x, y, z } = self.geometry {
            for c in [Some(x), Some(y), z].into_iter().flatten() {
                let col = batch.column(c);
                if !col.data_type().is_numeric() {
                    bail!(
                        "{}: column {}: {} where numbers are expected",
                        self.name,
                        self.schema.field(c).name(),
                        col.data_type()
                    );
                }
                xyz.push(arrow_cast::cast(col, &DataType::Float64)?.as_primitive::<Float64Type>().clone());
            }
        }
        let base = self.read;
        self.read += batch.num_rows() as u64;
        Ok(Some(Batch { batch, base, texts, xyz }))
    }

    /// Where row `row` of a batch is, in errors.
    fn place(&self, base: u64, row: usize) -> String {
        format!("{}: row {}", self.name, base + row as u64)
    }

    /// The id of a row: the id column's value, else its row number.
    pub fn id_of(&self, batch: &Batch, row: usize) -> String {
        match self.id {
            None => (batch.base + row as u64).to_string(),
            Some(c) => batch.text(c, row).unwrap_or_default().to_string(),
        }
    }

    /// The positions of a row holding a point or multipoint, checked finite.
    pub fn points_of(&self, batch: &Batch, row: usize) -> Result<Vec<([f64; 3], bool)>> {
        let place = || format!("{}, column {}", self.place(batch.base, row), self.column_name());
        let parts = self.positions(batch, row, &place)?;
        let (kind, positions) = parts;
        if !matches!(kind, Kind::Point | Kind::MultiPoint) {
            bail!("{}: a {} where points are expected", place(), kind.name());
        }
        positions.into_iter().flatten().map(|p| position(&p).map_err(|e| anyhow!("{}: {e}", place()))).collect()
    }

    /// The parts of a row holding a line, multi-line or polygon (rings
    /// become lines).
    pub fn line_parts_of(&self, batch: &Batch, row: usize) -> Result<Vec<Vec<Vec<f64>>>> {
        let place = || format!("{}, column {}", self.place(batch.base, row), self.column_name());
        let (kind, parts) = self.positions(batch, row, &place)?;
        if matches!(kind, Kind::Point | Kind::MultiPoint) {
            bail!("{}: a {} where lines are expected", place(), kind.name());
        }
        Ok(parts)
    }

    fn column_name(&self) -> String {
        match self.geometry {
            Geometry::Xy { x, y, .. } => format!("{}/{}", self.schema.field(x).name(), self.schema.field(y).name()),
            Geometry::Wkb(c) | Geometry::Wkt(c) | Geometry::Native { col: c, .. } => {
                self.schema.field(c).name().clone()
            }
        }
    }

    /// A row's geometry as parts of positions, and its kind.
    fn positions(&self, batch: &Batch, row: usize, place: &dyn Fn() -> String) -> Result<(Kind, Vec<Vec<Vec<f64>>>)> {
        guarded(&place(), || self.positions_unguarded(batch, row, place))
    }

    fn positions_unguarded(
        &self,
        batch: &Batch,
        row: usize,
        place: &dyn Fn() -> String,
    ) -> Result<(Kind, Vec<Vec<Vec<f64>>>)> {
        match self.geometry {
            Geometry::Xy { .. } => {
                if batch.xyz.iter().any(|c| c.is_null(row)) {
                    bail!("{}: no coordinate (null)", place());
                }
                Ok((Kind::Point, vec![vec![batch.xyz.iter().map(|c| c.value(row)).collect()]]))
            }
            Geometry::Wkb(c) => {
                let col = batch.batch.column(c);
                if col.is_null(row) {
                    bail!("{}: no geometry (null)", place());
                }
                let bytes = binary(col, row).ok_or_else(|| anyhow!("{}: not a binary column", place()))?;
                let g = wkb::reader::read_wkb(bytes).map_err(|e| anyhow!("{}: not WKB: {e}", place()))?;
                walk(&g, place)
            }
            Geometry::Wkt(c) => {
                let t = batch.text(c, row).ok_or_else(|| anyhow!("{}: no geometry (null)", place()))?;
                let g: wkt::Wkt<f64> = t.trim().parse().map_err(|e| anyhow!("{}: not WKT: {e}", place()))?;
                walk(&g, place)
            }
            Geometry::Native { col, depth } => {
                let arr = batch.batch.column(col);
                if arr.is_null(row) {
                    bail!("{}: no geometry (null)", place());
                }
                let kind = match depth {
                    0 => Kind::Point,
                    1 => Kind::LineString,
                    2 => Kind::MultiLineString,
                    _ => Kind::MultiPolygon,
                };
                Ok((kind, native(arr.as_ref(), row, depth, place)?))
            }
        }
    }
}

/// `f`, with a panic in the parquet, arrow or wkb crates (which some
/// malformed files cause) turned into an error naming `name`. Its message
/// is not printed: main's panic hook leaves those to this error.
fn guarded<T>(name: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let why = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
            bail!("{name}: not a valid Parquet file (the reader failed: {})", why.unwrap_or_default())
        }
    }
}

/// Whether a panic comes from the crates [`guarded`] calls into.
pub fn is_reader_panic(info: &std::panic::PanicHookInfo) -> bool {
    info.location().is_some_and(|l| {
        let f = l.file();
        ["/parquet-", "/arrow-", "/wkb-", "/geo-traits-"].iter().any(|c| f.contains(c))
    })
}

enum Source {
    File(ParquetRecordBatchReaderBuilder<File>),
    Bytes(ParquetRecordBatchReaderBuilder<bytes::Bytes>),
}

/// The kind of a geometry, for errors and for checking what is expected.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Point,
    MultiPoint,
    LineString,
    MultiLineString,
    Polygon,
    MultiPolygon,
    Collection,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Point => "Point",
            Kind::MultiPoint => "MultiPoint",
            Kind::LineString => "LineString",
            Kind::MultiLineString => "MultiLineString",
            Kind::Polygon => "Polygon",
            Kind::MultiPolygon => "MultiPolygon",
            Kind::Collection => "GeometryCollection",
        }
    }
}

/// The parsed `geo` metadata of a GeoParquet file, if any.
fn geo_metadata(meta: &parquet::file::metadata::ParquetMetaData) -> Option<serde_json::Value> {
    let kv = meta.file_metadata().key_value_metadata()?;
    let geo = kv.iter().find(|k| k.key == "geo")?.value.as_ref()?;
    serde_json::from_str(geo).ok()
}

/// Whether a GeoParquet column's `crs` is longitude/latitude on WGS84:
/// absent (the spec's default, OGC:CRS84), or a PROJJSON whose id is
/// EPSG:4326 or OGC:CRS84.
fn crs_is_lonlat(column: &serde_json::Value) -> bool {
    column.as_object().and_then(|c| c.get("crs")).is_none_or(is_lonlat)
}

/// Whether a PROJJSON CRS is EPSG:4326 or OGC:CRS84 by its id.
fn is_lonlat(crs: &serde_json::Value) -> bool {
    let id = &crs["id"];
    let (authority, code) = (id["authority"].as_str().unwrap_or(""), &id["code"]);
    (authority == "EPSG" && (code == 4326 || code == "4326")) || (authority == "OGC" && code == "CRS84")
}

/// The geometry columns of a file, and whether they are lon/lat.
fn find_geometry(
    schema: &SchemaRef,
    geo: Option<&serde_json::Value>,
    opts: &InputOpts,
    name: &str,
) -> Result<(Geometry, bool)> {
    let pos = |c: &str| schema.fields().iter().position(|f| f.name() == c);
    let pos_any_case = |c: &str| schema.fields().iter().position(|f| f.name().eq_ignore_ascii_case(c));
    let z = pos(&opts.z_column);
    if opts.x_column.is_some() || opts.y_column.is_some() {
        let (xc, yc) = (opts.x_column.as_deref().unwrap_or("x"), opts.y_column.as_deref().unwrap_or("y"));
        let missing: Vec<&str> = [xc, yc].into_iter().filter(|c| pos(c).is_none()).collect();
        if !missing.is_empty() {
            bail!("{name}: missing column(s) {} (say --x-column and --y-column)", missing.join(", "));
        }
        let lonlat = XY_NAMES.iter().any(|&(x, y, ll)| ll && xc.eq_ignore_ascii_case(x) && yc.eq_ignore_ascii_case(y));
        return Ok((Geometry::Xy { x: pos(xc).expect("checked"), y: pos(yc).expect("checked"), z }, lonlat));
    }
    let chosen = opts.geometry_column.as_deref().map(|g| (g, pos(g)));
    if let Some((g, None)) = chosen {
        bail!("{name}: no column {g:?} (--geometry-column)");
    }
    if let Some(geo) = geo {
        let primary = geo["primary_column"].as_str().unwrap_or("geometry");
        let column_name = chosen.map_or(primary, |(g, _)| g);
        if let Some(c) = pos(column_name) {
            let meta = &geo["columns"][column_name];
            let encoding = meta["encoding"].as_str().unwrap_or("WKB").to_ascii_lowercase();
            let depth = match encoding.as_str() {
                "wkb" => None,
                "point" => Some(0),
                "linestring" | "multipoint" => Some(1),
                "polygon" | "multilinestring" => Some(2),
                "multipolygon" => Some(3),
                other => {
                    bail!("{name}: column {column_name}: GeoParquet encoding {other:?} is not read (WKB or GeoArrow)")
                }
            };
            let geometry = match depth {
                None => Geometry::Wkb(c),
                Some(depth) => Geometry::Native { col: c, depth },
            };
            return Ok((geometry, crs_is_lonlat(meta)));
        }
    }
    let by_name = XY_NAMES.iter().find_map(|&(x, y, ll)| Some((pos_any_case(x)?, pos_any_case(y)?, ll)));
    if let (Some((x, y, lonlat)), None) = (by_name, chosen) {
        return Ok((Geometry::Xy { x, y, z }, lonlat));
    }
    let c = match chosen {
        Some((_, c)) => c,
        None => GEOMETRY_NAMES.iter().find_map(|g| pos_any_case(g)),
    };
    let Some(c) = c else {
        let pairs: Vec<String> = XY_NAMES.iter().map(|(x, y, _)| format!("{x}/{y}")).collect();
        bail!(
            "{name}: no geometry: no GeoParquet metadata, none of the columns {}, and no WKB or WKT column ({}) (say --x-column and --y-column, or --geometry-column)",
            pairs.join(", "),
            GEOMETRY_NAMES.join(", ")
        );
    };
    let geometry = match schema.field(c).data_type() {
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Geometry::Wkb(c),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Geometry::Wkt(c),
        other => bail!("{name}: column {}: {other} is neither WKB (binary) nor WKT (text)", schema.field(c).name()),
    };
    Ok((geometry, false))
}

/// The bytes of a binary value.
fn binary(col: &ArrayRef, row: usize) -> Option<&[u8]> {
    match col.data_type() {
        DataType::Binary => Some(col.as_binary::<i32>().value(row)),
        DataType::LargeBinary => Some(col.as_binary::<i64>().value(row)),
        DataType::BinaryView => Some(col.as_binary_view().value(row)),
        _ => None,
    }
}

/// A column as text: cast to strings (numbers, dates and times as
/// arrow-cast writes them), else as arrow-cast displays each value.
fn as_text(col: &ArrayRef) -> Result<arrow_array::StringArray> {
    if let Ok(a) = arrow_cast::cast(col, &DataType::Utf8) {
        return Ok(a.as_string::<i32>().clone());
    }
    let f = arrow_cast::display::ArrayFormatter::try_new(col.as_ref(), &Default::default())?;
    Ok((0..col.len()).map(|i| (!col.is_null(i)).then(|| f.value(i).to_string())).collect())
}

/// GeoArrow positions of row `row` of `arr`, `depth` list levels deep,
/// as parts (a point or a linestring is one part; a polygon's rings and a
/// multipolygon's are parts).
fn native(arr: &dyn Array, row: usize, depth: usize, place: &dyn Fn() -> String) -> Result<Vec<Vec<Vec<f64>>>> {
    fn list(arr: &dyn Array, row: usize, place: &dyn Fn() -> String) -> Result<ArrayRef> {
        match arr.data_type() {
            DataType::List(_) => Ok(arr.as_list::<i32>().value(row)),
            DataType::LargeList(_) => Ok(arr.as_list::<i64>().value(row)),
            other => bail!("{}: a {other} where GeoArrow has a list", place()),
        }
    }
    fn coords(arr: &dyn Array, place: &dyn Fn() -> String) -> Result<Vec<Vec<f64>>> {
        (0..arr.len()).map(|i| coord(arr, i, place)).collect()
    }
    fn coord(arr: &dyn Array, i: usize, place: &dyn Fn() -> String) -> Result<Vec<f64>> {
        let values = |a: &dyn Array, range: std::ops::Range<usize>| -> Result<Vec<f64>> {
            let a = a
                .as_primitive_opt::<Float64Type>()
                .ok_or_else(|| anyhow!("{}: coordinates are not doubles", place()))?;
            Ok(range.map(|k| a.value(k)).collect())
        };
        match arr.data_type() {
            DataType::Struct(_) => {
                let s = arr.as_struct();
                s.columns().iter().map(|c| values(c.as_ref(), i..i + 1).map(|v| v[0])).collect()
            }
            DataType::FixedSizeList(_, n) => {
                let l = arr.as_fixed_size_list();
                let n = *n as usize;
                values(l.values().as_ref(), i * n..(i + 1) * n)
            }
            other => bail!("{}: a {other} where GeoArrow has coordinates", place()),
        }
    }
    Ok(match depth {
        0 => vec![vec![coord(arr, row, place)?]],
        1 => vec![coords(list(arr, row, place)?.as_ref(), place)?],
        2 => {
            let parts = list(arr, row, place)?;
            (0..parts.len()).map(|p| coords(list(parts.as_ref(), p, place)?.as_ref(), place)).collect::<Result<_>>()?
        }
        _ => {
            let polys = list(arr, row, place)?;
            let mut out = Vec::new();
            for q in 0..polys.len() {
                let rings = list(polys.as_ref(), q, place)?;
                for r in 0..rings.len() {
                    out.push(coords(list(rings.as_ref(), r, place)?.as_ref(), place)?);
                }
            }
            out
        }
    })
}

/// A WKB or WKT geometry as parts of positions, through geo-traits.
fn walk<G: geo_traits::GeometryTrait<T = f64>>(
    g: &G,
    place: &dyn Fn() -> String,
) -> Result<(Kind, Vec<Vec<Vec<f64>>>)> {
    use geo_traits::{
        CoordTrait, GeometryType, LineStringTrait, MultiLineStringTrait, MultiPointTrait, MultiPolygonTrait,
        PointTrait, PolygonTrait,
    };
    let dims = g.dim().size().min(3);
    fn line<L: LineStringTrait<T = f64>>(l: &L, dims: usize) -> Vec<Vec<f64>> {
        l.coords().map(|c| (0..dims).map(|k| c.nth(k).unwrap_or(f64::NAN)).collect()).collect()
    }
    fn point<P: PointTrait<T = f64>>(p: &P, dims: usize) -> Option<Vec<f64>> {
        p.coord().map(|c| (0..dims).map(|k| c.nth(k).unwrap_or(f64::NAN)).collect())
    }
    Ok(match g.as_type() {
        GeometryType::Point(p) => {
            let p = point(p, dims).ok_or_else(|| anyhow!("{}: an empty point", place()))?;
            (Kind::Point, vec![vec![p]])
        }
        GeometryType::MultiPoint(m) => (Kind::MultiPoint, vec![m.points().filter_map(|p| point(&p, dims)).collect()]),
        GeometryType::LineString(l) => (Kind::LineString, vec![line(l, dims)]),
        GeometryType::MultiLineString(m) => (Kind::MultiLineString, m.line_strings().map(|l| line(&l, dims)).collect()),
        GeometryType::Polygon(p) => {
            (Kind::Polygon, p.exterior().into_iter().chain(p.interiors()).map(|r| line(&r, dims)).collect())
        }
        GeometryType::MultiPolygon(m) => (
            Kind::MultiPolygon,
            m.polygons()
                .flat_map(|p| p.exterior().into_iter().chain(p.interiors()).map(|r| line(&r, dims)).collect::<Vec<_>>())
                .collect(),
        ),
        GeometryType::GeometryCollection(_) => (Kind::Collection, Vec::new()),
        _ => bail!("{}: a geometry type that is neither points nor lines", place()),
    })
}

/// Reads every line feature of a (Geo)Parquet file, keeping the values of
/// the columns `attrs` (see [`crate::geom::read_lines_with`]). A row is a
/// feature; its id is the id column's value, else its row number.
pub fn read_lines(path: &Path, opts: &InputOpts, attrs: &[&str]) -> Result<Lines> {
    let mut file = ParquetFile::open(path, opts)?;
    if file.id.is_none() && opts.id_column != "id" {
        bail!("{}: no column {:?} (--id-column)", file.name, opts.id_column);
    }
    let names = file.column_names();
    let attr_cols: Vec<Option<usize>> = attrs.iter().map(|a| names.iter().position(|n| n == a)).collect();
    file.want_text(&attr_cols.iter().flatten().copied().collect::<Vec<_>>());
    let mut lines = Lines::new();
    lines.lonlat_names = file.lonlat;
    lines.crs = file.crs.clone();
    while let Some(batch) = file.next_batch()? {
        for row in 0..batch.rows() {
            let id = file.id_of(&batch, row);
            let parts = file.line_parts_of(&batch, row)?;
            let place = || format!("{} (line {id:?})", file.place(batch.base, row));
            lines.push(id.clone(), &parts, &place)?;
            lines
                .attrs
                .push(attr_cols.iter().map(|c| c.and_then(|c| batch.text(c, row)).map(str::to_string)).collect());
        }
    }
    if lines.vertices.is_empty() {
        lines.has_z = false;
    }
    Ok(lines)
}

/// Checks that the points' CRS (`crs`, from `name`) is the lines' when
/// both files give one (by their `id` when both have one), and makes it
/// the lines' when only the points give one, for the output.
pub fn check_same_crs(lines: &mut Lines, crs: Option<&serde_json::Value>, name: &str) -> Result<()> {
    let Some(crs) = crs else { return Ok(()) };
    match &lines.crs {
        None => lines.crs = Some(crs.clone()),
        Some(l) => {
            let same = match (l.get("id"), crs.get("id")) {
                _ if is_lonlat(l) && is_lonlat(crs) => true,
                (Some(a), Some(b)) => a == b,
                _ => l == crs,
            };
            if !same {
                let show = |c: &serde_json::Value| c.get("id").unwrap_or(c).to_string();
                bail!("{name}: its CRS {} is not the lines' {}: reproject one of them", show(crs), show(l));
            }
        }
    }
    Ok(())
}
