//! Reading lines and points from CSV, GeoJSON and WKT files, with errors
//! that name the file and the line or feature.
//!
//! Lines are read whole (an index needs them all); points are streamed in
//! chunks from CSV and WKT, and feature by feature from a GeoJSON
//! FeatureCollection, so memory stays flat however many points there are.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};

/// An input file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Comma-separated values with a header (delimiter detected).
    Csv,
    /// GeoJSON: a FeatureCollection, a Feature or a bare geometry.
    Geojson,
    /// Well-known text, one geometry per line.
    Wkt,
    /// GPS Exchange Format: tracks of timed fixes (`segdist match` only).
    Gpx,
    /// (Geo)Parquet: WKB or GeoArrow geometry, or x/y columns.
    Parquet,
}

impl Format {
    /// The format of `path` from its extension, or `given`.
    pub fn of(path: &Path, given: Option<Format>) -> Result<Format> {
        if let Some(f) = given {
            return Ok(f);
        }
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        Ok(match ext.as_str() {
            "csv" | "tsv" | "txt" => Format::Csv,
            "geojson" | "json" => Format::Geojson,
            "wkt" => Format::Wkt,
            "gpx" => Format::Gpx,
            "parquet" | "geoparquet" | "parq" => Format::Parquet,
            _ => bail!("{}: cannot tell the format from the extension; say --lines-format or --points-format (csv, geojson, wkt, gpx or parquet)", path.display()),
        })
    }
}

/// Whether an input is longitude/latitude: GeoJSON is (RFC 7946), and so
/// is a CSV whose coordinate columns are named lon/lat (`lonlat_names`);
/// other CSV and WKT are not unless told; `--geographic` / `--planar`
/// override.
pub fn is_lonlat(files: [(&Path, Option<Format>); 2], lonlat_names: bool, geographic: bool, planar: bool) -> bool {
    geographic
        || (!planar
            && (lonlat_names
                || files
                    .iter()
                    .any(|(p, f)| Format::of(p, *f).is_ok_and(|f| matches!(f, Format::Geojson | Format::Gpx)))))
}

/// Says on stderr how coordinates are taken (see [`is_lonlat`]).
pub fn say_mode(geographic: bool) {
    eprintln!(
        "segdist: {}",
        if geographic {
            "geographic: lon/lat, distances in metres on the WGS84 ellipsoid (--planar to use the numbers as they are)"
        } else {
            "planar: distances in the coordinates' own units (--geographic for lon/lat in metres)"
        }
    );
}

/// Checks that every point of a chunk has a latitude in [-90, 90].
pub fn check_latitudes(name: &str, chunk: &[crate::points::Pt]) -> Result<()> {
    if let Some(p) = chunk.iter().find(|p| p.p[1].abs() > 90.0) {
        bail!("{name}: point {:?}: latitude {} is not in [-90, 90] (say --planar for other coordinates)", p.id, p.p[1]);
    }
    Ok(())
}

/// How to read the input files: columns, properties, formats.
#[derive(Args, Debug, Clone)]
pub struct InputOpts {
    /// Format of the lines file (default: from its extension).
    #[arg(long, value_name = "FORMAT")]
    pub lines_format: Option<Format>,
    /// Format of the points file (default: from its extension).
    #[arg(long, value_name = "FORMAT")]
    pub points_format: Option<Format>,
    /// CSV column holding the id (for lines, consecutive rows with the same
    /// id form one line; for points it is optional, the row number being
    /// the id).
    #[arg(long, value_name = "NAME", default_value = "id")]
    pub id_column: String,
    /// CSV column holding x (or longitude). Default: found by name, the
    /// first pair present of x/y, lon/lat, lng/lat, long/lat,
    /// longitude/latitude, easting/northing (any case); lon/lat names
    /// make the run geographic.
    #[arg(long, value_name = "NAME")]
    pub x_column: Option<String>,
    /// CSV column holding y (or latitude). Default: found by name, as x.
    #[arg(long, value_name = "NAME")]
    pub y_column: Option<String>,
    /// CSV column holding the geometry as WKT (POINT for points; LINESTRING,
    /// MULTILINESTRING or polygons for lines, one feature per row).
    /// Default: used when no x/y pair is found, from a column named wkt,
    /// geometry, geom or the_geom (any case).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["x_column", "y_column"])]
    pub geometry_column: Option<String>,
    /// CSV column holding z (used when present in both files).
    #[arg(long, value_name = "NAME", default_value = "z")]
    pub z_column: String,
    /// GeoJSON property to use as the id (default: the feature's "id",
    /// else its position in the file, from 0).
    #[arg(long, value_name = "NAME")]
    pub id_property: Option<String>,
    /// CSV field delimiter (default: detected from the header line among
    /// ',', ';', tab and '|').
    #[arg(short, long, value_name = "CHAR")]
    pub delimiter: Option<char>,
}

/// The x/y column names looked for when none are given, in order, and
/// whether each pair is longitude/latitude.
pub(crate) const XY_NAMES: [(&str, &str, bool); 6] = [
    ("x", "y", false),
    ("lon", "lat", true),
    ("lng", "lat", true),
    ("long", "lat", true),
    ("longitude", "latitude", true),
    ("easting", "northing", false),
];

/// Line features, flattened: vertex runs per part, part runs per feature.
pub struct Lines {
    /// The coordinates are longitude/latitude: CSV columns named so, or a
    /// GeoParquet CRS that says so.
    pub lonlat_names: bool,
    /// A GeoParquet file's CRS (PROJJSON), for the output's.
    pub crs: Option<serde_json::Value>,
    pub ids: Vec<String>,
    pub vertices: Vec<[f64; 3]>,
    /// First vertex of every part, then the number of vertices.
    pub part_start: Vec<usize>,
    /// First part of every feature, then the number of parts.
    pub feature_start: Vec<usize>,
    /// Every vertex had a z.
    pub has_z: bool,
    /// Per feature, the values of the columns or properties asked for by
    /// [`read_lines_with`], in their order (`None` where absent or null).
    pub attrs: Vec<Vec<Option<String>>>,
}

impl Lines {
    pub(crate) fn new() -> Lines {
        Lines {
            lonlat_names: false,
            crs: None,
            ids: Vec::new(),
            vertices: Vec::new(),
            part_start: vec![0],
            feature_start: vec![0],
            has_z: true,
            attrs: Vec::new(),
        }
    }

    /// Adds a feature of `parts`, each a list of positions; `place` names
    /// it in errors.
    pub(crate) fn push(&mut self, id: String, parts: &[Vec<Vec<f64>>], place: &dyn Fn() -> String) -> Result<()> {
        for (k, part) in parts.iter().enumerate() {
            if part.len() < 2 {
                bail!("{}: part {k} has {} vertex(es), a line needs at least 2", place(), part.len());
            }
            for (v, pos) in part.iter().enumerate() {
                let p = position(pos).map_err(|e| anyhow!("{}: part {k}, vertex {v}: {e}", place()))?;
                self.has_z &= p.1;
                self.vertices.push(p.0);
            }
            self.part_start.push(self.vertices.len());
        }
        self.feature_start.push(self.part_start.len() - 1);
        self.ids.push(id);
        Ok(())
    }

    /// The parts of feature `f`, as vertex ranges.
    pub fn parts(&self, f: usize) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        (self.feature_start[f]..self.feature_start[f + 1]).map(|q| self.part_start[q]..self.part_start[q + 1])
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }
}

/// `([x, y, z], has z)` of a GeoJSON/WKT position, checked finite.
pub(crate) fn position(pos: &[f64]) -> Result<([f64; 3], bool)> {
    if pos.len() < 2 {
        bail!("a position needs x and y, it has {} number(s)", pos.len());
    }
    let z = pos.get(2).copied();
    let p = [pos[0], pos[1], z.unwrap_or(0.0)];
    if let Some(bad) = p.iter().find(|c| !c.is_finite()) {
        bail!("coordinate {bad} is not a finite number");
    }
    Ok((p, z.is_some()))
}

pub(crate) fn open(path: &Path) -> Result<(String, Box<dyn Read + Send>, Option<u64>)> {
    if path.as_os_str() == "-" {
        return Ok(("<stdin>".to_string(), Box::new(io::stdin()), None));
    }
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = f.metadata().ok().map(|m| m.len());
    Ok((path.display().to_string(), Box::new(f), len))
}

/// The most frequent of `,` `;` tab `|` on the first line (`,` if none).
pub fn sniff_delimiter(head: &[u8]) -> u8 {
    let line = head.split(|&c| c == b'\n').next().unwrap_or_default();
    [b',', b';', b'\t', b'|']
        .into_iter()
        .max_by_key(|d| (line.iter().filter(|c| *c == d).count(), *d == b','))
        .filter(|d| line.contains(d))
        .unwrap_or(b',')
}

/// A CSV reader with the delimiter detected, and its header.
pub(crate) fn csv_reader(
    name: &str,
    r: Box<dyn Read + Send>,
    given: Option<char>,
) -> Result<(csv::Reader<Box<dyn Read + Send>>, csv::StringRecord)> {
    let mut r = BufReader::with_capacity(1 << 16, r);
    let delimiter = match given {
        Some(c) if c.is_ascii() => c as u8,
        Some(c) => bail!("--delimiter must be a single ASCII character, not {c:?}"),
        None => sniff_delimiter(r.fill_buf().with_context(|| format!("cannot read {name}"))?),
    };
    let mut rdr = csv::ReaderBuilder::new().delimiter(delimiter).from_reader(Box::new(r) as Box<dyn Read + Send>);
    let header = rdr.headers().map_err(|e| csv_error(e, name))?.clone();
    Ok((rdr, header))
}

/// `file: line L: …` for a CSV read error.
pub fn csv_error(e: csv::Error, name: &str) -> anyhow::Error {
    let line = e.position().map(|p| p.line());
    match (e.kind(), line) {
        (csv::ErrorKind::UnequalLengths { expected_len, len, .. }, Some(line)) => {
            anyhow!("{name}: line {line}: {len} fields where the header has {expected_len}")
        }
        (csv::ErrorKind::Utf8 { .. }, Some(line)) => anyhow!("{name}: line {line}: invalid UTF-8"),
        (_, Some(line)) => anyhow!("{name}: line {line}: {e}"),
        _ => anyhow::Error::new(e).context(format!("cannot read {name}")),
    }
}

/// Where a CSV row's geometry is: x, y (and z) columns, or one column of
/// WKT text.
#[derive(Clone, Copy)]
enum CsvGeom {
    Xyz { xyz: [usize; 3], has_z: bool },
    Wkt(usize),
}

/// The columns of id and geometry in a CSV header.
pub(crate) struct CsvCols {
    pub(crate) id: Option<usize>,
    geom: CsvGeom,
    /// x and y are named as longitude and latitude.
    pub(crate) lonlat: bool,
}

/// The names of a CSV column of WKT geometry looked for when no x/y pair
/// is present (as ogr2ogr's CSV driver does), compared without case.
const WKT_NAMES: [&str; 4] = ["wkt", "geometry", "geom", "the_geom"];

impl CsvCols {
    /// Finds the columns: id and z by their names (`--id-column`,
    /// `--z-column`); x and y by `--x-column` / `--y-column`, else the
    /// first pair of [`XY_NAMES`] present, compared without case or
    /// surrounding spaces; else a WKT column, by `--geometry-column` or
    /// the first of [`WKT_NAMES`] present.
    pub(crate) fn find(header: &csv::StringRecord, opts: &InputOpts, name: &str, need_id: bool) -> Result<CsvCols> {
        let pos = |c: &str| header.iter().position(|h| h.trim() == c);
        let pos_any_case = |c: &str| header.iter().position(|h| h.trim().eq_ignore_ascii_case(c));
        let id = pos(&opts.id_column);
        if need_id && id.is_none() {
            bail!("{name}: line 1: no column {:?} (lines need an id column; say --id-column)", opts.id_column);
        }
        if let Some(g) = &opts.geometry_column {
            let i = pos(g).ok_or_else(|| anyhow!("{name}: line 1: no column {g:?} (--geometry-column)"))?;
            return Ok(CsvCols { id, geom: CsvGeom::Wkt(i), lonlat: false });
        }
        let (x, y, lonlat) = match (&opts.x_column, &opts.y_column) {
            (None, None) => {
                let found = XY_NAMES.iter().find_map(|&(x, y, ll)| Some((pos_any_case(x)?, pos_any_case(y)?, ll)));
                if found.is_none() {
                    if let Some(i) = WKT_NAMES.iter().find_map(|w| pos_any_case(w)) {
                        return Ok(CsvCols { id, geom: CsvGeom::Wkt(i), lonlat: false });
                    }
                }
                found.ok_or_else(|| {
                    // Half a pair present: name the other half.
                    let half = XY_NAMES.iter().find_map(|&(x, y, _)| match (pos_any_case(x), pos_any_case(y)) {
                        (Some(_), None) => Some(y),
                        (None, Some(_)) => Some(x),
                        _ => None,
                    });
                    let pairs: Vec<String> = XY_NAMES.iter().map(|(x, y, _)| format!("{x}/{y}")).collect();
                    match half {
                        Some(c) => anyhow!("{name}: line 1: missing column(s) {c} (say --x-column and --y-column)"),
                        None => anyhow!(
                            "{name}: line 1: no coordinate columns: none of {}, and no WKT column ({}) (say --x-column and --y-column, or --geometry-column)",
                            pairs.join(", "),
                            WKT_NAMES.join(", ")
                        ),
                    }
                })?
            }
            (xc, yc) => {
                let (xc, yc) = (xc.as_deref().unwrap_or("x"), yc.as_deref().unwrap_or("y"));
                let missing: Vec<&str> = [xc, yc].into_iter().filter(|c| pos(c).is_none()).collect();
                if !missing.is_empty() {
                    bail!("{name}: line 1: missing column(s) {} (say --x-column and --y-column)", missing.join(", "));
                }
                let named = |c: &str, names: &[&str]| names.iter().any(|n| c.trim().eq_ignore_ascii_case(n));
                let lonlat = named(xc, &["lon", "lng", "long", "longitude"]) && named(yc, &["lat", "latitude"]);
                (pos(xc).expect("checked"), pos(yc).expect("checked"), lonlat)
            }
        };
        let z = pos(&opts.z_column);
        Ok(CsvCols { id, geom: CsvGeom::Xyz { xyz: [x, y, z.unwrap_or(0)], has_z: z.is_some() }, lonlat })
    }

    /// Whether every row has a z: known from the header for x/y/z
    /// columns, not for WKT (`None`).
    pub(crate) fn declares_z(&self) -> Option<bool> {
        match self.geom {
            CsvGeom::Xyz { has_z, .. } => Some(has_z),
            CsvGeom::Wkt(_) => None,
        }
    }

    /// The point of a row given its fields (`get`), checked, and whether it
    /// has a z. A WKT column must hold a POINT.
    pub(crate) fn point_of<'r>(
        &self,
        get: impl Fn(usize) -> &'r [u8],
        position: Option<&csv::Position>,
        header: &csv::StringRecord,
        name: &str,
    ) -> Result<([f64; 3], bool)> {
        let place = |i: usize| {
            let line = position.map_or(0, |p| p.line());
            format!("{name}: line {line}, column {} ({})", i + 1, header.get(i).unwrap_or(""))
        };
        let (xyz, has_z) = match self.geom {
            CsvGeom::Xyz { xyz, has_z } => (xyz, has_z),
            CsvGeom::Wkt(i) => {
                let text = std::str::from_utf8(get(i)).map_err(|_| anyhow!("{}: invalid UTF-8", place(i)))?;
                let points = wkt_points(text, &|| place(i))?;
                return match points.as_slice() {
                    [p] => Ok(*p),
                    _ => bail!("{}: a point has one position; this has {}", place(i), points.len()),
                };
            }
        };
        let mut p = [0.0; 3];
        for k in 0..if has_z { 3 } else { 2 } {
            let i = xyz[k];
            let bytes = get(i);
            let raw = std::str::from_utf8(bytes).unwrap_or("");
            let v: f64 = raw
                .trim()
                .parse()
                .map_err(|_| anyhow!("{}: cannot read {:?} as a number", place(i), String::from_utf8_lossy(bytes)))?;
            if !v.is_finite() {
                bail!("{}: {raw:?} is not a finite number", place(i));
            }
            p[k] = v;
        }
        Ok((p, has_z))
    }

    /// The line parts of a row whose geometry is a WKT column (`None` for
    /// x/y columns, where consecutive rows make a line).
    fn wkt_line_parts_of(
        &self,
        rec: &csv::StringRecord,
        header: &csv::StringRecord,
        name: &str,
    ) -> Option<Result<Vec<Vec<Vec<f64>>>>> {
        let CsvGeom::Wkt(i) = self.geom else { return None };
        let line = rec.position().map_or(0, |p| p.line());
        let place = || format!("{name}: line {line}, column {} ({})", i + 1, header.get(i).unwrap_or(""));
        Some(wkt_line_parts(rec.get(i).unwrap_or(""), &place))
    }
}

/// The positions of a WKT POINT or MULTIPOINT (`place` names it in
/// errors), checked finite, each with whether it has a z.
pub(crate) fn wkt_points(text: &str, place: &dyn Fn() -> String) -> Result<Vec<([f64; 3], bool)>> {
    let g: wkt::Wkt<f64> = text.trim().parse().map_err(|e| anyhow!("{}: not WKT: {e}", place()))?;
    let coords: Vec<&wkt::types::Coord<f64>> = match &g {
        wkt::Wkt::Point(p) => p.coord().into_iter().collect(),
        wkt::Wkt::MultiPoint(m) => m.points().iter().filter_map(|p| p.coord()).collect(),
        _ => bail!("{}: a {} where points are expected", place(), wkt_type(&g)),
    };
    coords.into_iter().map(|c| position(&wkt_pos(c)).map_err(|e| anyhow!("{}: {e}", place()))).collect()
}

/// Reads every line feature of `path`.
pub fn read_lines(path: &Path, opts: &InputOpts) -> Result<Lines> {
    read_lines_with(path, opts, &[])
}

/// [`read_lines`], keeping each feature's values of the CSV columns or
/// GeoJSON properties `attrs` in [`Lines::attrs`] (WKT has none).
pub fn read_lines_with(path: &Path, opts: &InputOpts, attrs: &[&str]) -> Result<Lines> {
    let format = Format::of(path, opts.lines_format)?;
    if format == Format::Parquet {
        return crate::parquet::read_lines(path, opts, attrs);
    }
    let (name, r, _) = open(path)?;
    let mut lines = Lines::new();
    match format {
        Format::Csv => {
            let (mut rdr, header) = csv_reader(&name, r, opts.delimiter)?;
            let cols = CsvCols::find(&header, opts, &name, true)?;
            lines.lonlat_names = cols.lonlat;
            let attr_cols: Vec<Option<usize>> =
                attrs.iter().map(|a| header.iter().position(|h| h.trim() == *a)).collect();
            let mut current: Option<String> = None;
            let mut run: Vec<Vec<f64>> = Vec::new();
            let mut first_line = 0;
            let flush = |lines: &mut Lines, id: Option<String>, run: &mut Vec<Vec<f64>>, line: u64| -> Result<()> {
                if let Some(id) = id {
                    let place = || format!("{name}: line {line} (line {id:?})");
                    lines.push(id.clone(), std::slice::from_ref(run), &place)?;
                }
                run.clear();
                Ok(())
            };
            let mut rec = csv::StringRecord::new();
            let attr_values = |rec: &csv::StringRecord| -> Vec<Option<String>> {
                attr_cols
                    .iter()
                    .map(|c| c.and_then(|c| rec.get(c)).map(str::to_string).filter(|v| !v.is_empty()))
                    .collect()
            };
            while rdr.read_record(&mut rec).map_err(|e| csv_error(e, &name))? {
                let id = rec.get(cols.id.expect("lines need ids")).unwrap_or("").to_string();
                // A WKT column: each row is a feature.
                if let Some(parts) = cols.wkt_line_parts_of(&rec, &header, &name) {
                    let line = rec.position().map_or(0, |p| p.line());
                    let place = || format!("{name}: line {line} (line {id:?})");
                    lines.push(id.clone(), &parts?, &place)?;
                    lines.attrs.push(attr_values(&rec));
                    continue;
                }
                let (p, _) = cols.point_of(|i| rec.get(i).unwrap_or("").as_bytes(), rec.position(), &header, &name)?;
                if current.as_deref() != Some(id.as_str()) {
                    flush(&mut lines, current.take(), &mut run, first_line)?;
                    first_line = rec.position().map_or(0, |p| p.line());
                    current = Some(id);
                    lines.attrs.push(attr_values(&rec));
                }
                run.push(if cols.declares_z() == Some(true) { p.to_vec() } else { p[..2].to_vec() });
            }
            flush(&mut lines, current.take(), &mut run, first_line)?;
        }
        Format::Geojson => {
            for (i, f) in geojson_features(&name, r)?.enumerate() {
                let mut f = f?;
                let place = || format!("{name}: feature {i}");
                let id = feature_id(&f, i, opts.id_property.as_deref());
                let parts = line_parts(f.geometry.take().map(|g| g.value), &place)?;
                lines.push(id, &parts, &place)?;
                let value = |a: &str| {
                    f.properties.as_ref()?.get(a).and_then(|v| match v {
                        serde_json::Value::Null => None,
                        serde_json::Value::String(s) => Some(s.clone()),
                        other => Some(other.to_string()),
                    })
                };
                lines.attrs.push(attrs.iter().map(|a| value(a)).collect());
            }
        }
        Format::Gpx => bail!("{name}: GPX holds traces, not lines (`segdist match --points` reads it)"),
        Format::Parquet => unreachable!("read above"),
        Format::Wkt => {
            for (i, line) in BufReader::new(r).lines().enumerate() {
                let line = line.with_context(|| format!("cannot read {name}"))?;
                if line.trim().is_empty() {
                    continue;
                }
                let place = || format!("{name}: line {}", i + 1);
                let parts = wkt_line_parts(&line, &place)?;
                lines.push(i.to_string(), &parts, &place)?;
                lines.attrs.push(vec![None; attrs.len()]);
            }
        }
    }
    if lines.vertices.is_empty() {
        lines.has_z = false;
    }
    Ok(lines)
}

/// The parts of a line-like GeoJSON geometry (polygon rings count as lines),
/// taken from it.
fn line_parts(g: Option<geojson::Value>, place: &dyn Fn() -> String) -> Result<Vec<Vec<Vec<f64>>>> {
    use geojson::Value as V;
    Ok(match g {
        Some(V::LineString(l)) => vec![l],
        Some(V::MultiLineString(ls)) => ls,
        Some(V::Polygon(rings)) => rings,
        Some(V::MultiPolygon(ps)) => ps.into_iter().flatten().collect(),
        Some(other) => bail!("{}: a {} where lines are expected", place(), other.type_name()),
        None => bail!("{}: no geometry", place()),
    })
}

/// The parts of a line-like WKT geometry.
fn wkt_line_parts(text: &str, place: &dyn Fn() -> String) -> Result<Vec<Vec<Vec<f64>>>> {
    use wkt::Wkt;
    let g: Wkt<f64> = text.parse().map_err(|e| anyhow!("{}: not WKT: {e}", place()))?;
    let ls = |l: &wkt::types::LineString<f64>| l.coords().iter().map(wkt_pos).collect::<Vec<_>>();
    Ok(match &g {
        Wkt::LineString(l) => vec![ls(l)],
        Wkt::MultiLineString(m) => m.line_strings().iter().map(ls).collect(),
        Wkt::Polygon(p) => p.rings().iter().map(ls).collect(),
        Wkt::MultiPolygon(m) => m.polygons().iter().flat_map(|p| p.rings().iter().map(ls)).collect(),
        _ => bail!("{}: a {} where lines are expected", place(), wkt_type(&g)),
    })
}

fn wkt_pos(c: &wkt::types::Coord<f64>) -> Vec<f64> {
    match c.z {
        Some(z) => vec![c.x, c.y, z],
        None => vec![c.x, c.y],
    }
}

fn wkt_type(g: &wkt::Wkt<f64>) -> &'static str {
    use wkt::Wkt;
    match g {
        Wkt::Point(_) => "POINT",
        Wkt::LineString(_) => "LINESTRING",
        Wkt::Polygon(_) => "POLYGON",
        Wkt::MultiPoint(_) => "MULTIPOINT",
        Wkt::MultiLineString(_) => "MULTILINESTRING",
        Wkt::MultiPolygon(_) => "MULTIPOLYGON",
        Wkt::GeometryCollection(_) => "GEOMETRYCOLLECTION",
    }
}

/// The features of a GeoJSON file: streamed from a FeatureCollection, or
/// the one Feature or geometry it holds.
pub(crate) fn geojson_features(
    name: &str,
    r: Box<dyn Read + Send>,
) -> Result<Box<dyn Iterator<Item = Result<geojson::Feature>> + Send>> {
    let mut r = BufReader::with_capacity(1 << 16, r);
    // A FeatureCollection is streamed; anything else is read whole.
    let head = String::from_utf8_lossy(r.fill_buf().with_context(|| format!("cannot read {name}"))?).into_owned();
    let name = name.to_string();
    if head.contains("FeatureCollection") {
        return Ok(Box::new(crate::features::Features::new(&name, r)));
    }
    let mut text = String::new();
    r.read_to_string(&mut text).with_context(|| format!("cannot read {name}"))?;
    let gj: geojson::GeoJson = text.parse().map_err(|e| anyhow!("{name}: not GeoJSON: {e}"))?;
    let features = match gj {
        geojson::GeoJson::FeatureCollection(fc) => fc.features,
        geojson::GeoJson::Feature(f) => vec![f],
        geojson::GeoJson::Geometry(g) => vec![geojson::Feature { geometry: Some(g), ..Default::default() }],
    };
    Ok(Box::new(features.into_iter().map(Ok)))
}

/// A feature's id: the chosen property, else its `id`, else its position.
pub(crate) fn feature_id(f: &geojson::Feature, i: usize, property: Option<&str>) -> String {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if let Some(p) = property {
        if let Some(v) = f.properties.as_ref().and_then(|m| m.get(p)) {
            return text(v);
        }
    } else if let Some(id) = &f.id {
        return match id {
            geojson::feature::Id::String(s) => s.clone(),
            geojson::feature::Id::Number(n) => n.to_string(),
        };
    }
    i.to_string()
}
