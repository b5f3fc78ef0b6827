//! `segdist snap`: the nearest line feature of every point, from CSV,
//! GeoJSON or WKT files, at index speed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use segdist_index::{Hit, HitLists, Index, IndexBuilder, QueryOptions};

use crate::geom::{read_lines, InputOpts, Lines};
use crate::output::{progress_bar, Output};
use crate::parquet_out::{kept_values, OutHit, OutRow, Sink};
use crate::points::{KeepAs, KeepOpts, PointReader, Pt};

/// For every point, the nearest line feature: which line, part and
/// segment, how far, the closest point, t on the segment, and the distance
/// along the line (and as a fraction of its length).
///
/// Lines: GeoJSON LineString, MultiLineString, Polygon and MultiPolygon
/// (rings as lines); WKT, one geometry per line; or CSV rows id,x,y[,z] where
/// consecutive rows with the same id form one line (or rows with a WKT
/// column, one feature each); (Geo)Parquet, a row per feature. Points:
/// GeoJSON Point and MultiPoint, WKT POINT and MULTIPOINT, CSV rows
/// [id,]x,y[,z] (or a WKT POINT column), or (Geo)Parquet rows.
/// Formats follow the file extensions (.geojson/.json, .wkt, .csv,
/// .parquet) unless given; `-` is standard input or output. GeoJSON, CSV
/// with lon/lat column names, and GeoParquet in EPSG:4326 or CRS84 are
/// longitude/latitude: distances in metres on the WGS84 ellipsoid
/// (--planar to use the numbers as they are). When both files carry z, the computation is 3D.
///
/// Output (CSV, or GeoJSON with --output-format geojson): the points
/// file's columns (--keep), then point_id, [rank,] line_id, part, segment,
/// distance, x, y, [z,] t, along, fraction.
/// "along" counts from the start of the part. A point with nothing within
/// --max-distance gets a row with only its id. Every number is faithfully
/// rounded and printed in the shortest form that reads back to it.
#[derive(Args, Debug, Clone)]
#[command(after_help = "Examples:\n  \
    segdist snap --points fixes.csv --lines roads.geojson --out snapped.csv\n  \
    segdist snap --points fixes.geojson --lines roads.wkt --k 3 --max-distance 25\n  \
    segdist snap --points fixes.csv --lines roads.csv --keep trace_id,time --out snapped.csv\n  \
    segdist snap --points p.csv --lines l.csv --output-format geojson --connectors > snapped.geojson")]
pub struct SnapArgs {
    /// The points to snap.
    #[arg(long, value_name = "FILE")]
    pub points: PathBuf,
    /// The lines to snap them to.
    #[arg(long, value_name = "FILE")]
    pub lines: PathBuf,
    /// Write to this file (atomically) instead of standard output (`-`).
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The k nearest lines' segments per point, one row each, nearest first.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub k: usize,
    /// Only segments within this distance; farther points get an empty match.
    #[arg(long, value_name = "R")]
    pub max_distance: Option<f64>,
    /// Output format (default: from --out's extension, .geojson/.json or
    /// .parquet, else CSV). Parquet is GeoParquet: the closest point as a
    /// WKB geometry column.
    #[arg(long, value_name = "FORMAT", default_value = "auto")]
    pub output_format: OutFormat,
    /// With GeoJSON output, add a LineString from each point to its match.
    #[arg(long)]
    pub connectors: bool,
    /// Round the input coordinates to f32 and print results as f32.
    #[arg(long)]
    pub f32: bool,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub input: InputOpts,
    #[command(flatten)]
    pub keep: KeepOpts,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print how long reading, indexing, querying and writing took.
    #[arg(long)]
    pub timings: bool,
    /// Coordinates are longitude/latitude: distances in metres on the
    /// WGS84 ellipsoid (the default when an input is GeoJSON).
    #[arg(long, conflicts_with = "planar")]
    pub geographic: bool,
    /// Use the coordinates as they are, in their own units (the default for
    /// CSV and WKT).
    #[arg(long)]
    pub planar: bool,
}

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutFormat {
    /// From the output file's extension, else CSV.
    Auto,
    Csv,
    Geojson,
    /// GeoParquet, one row group per chunk of points.
    Parquet,
}

impl OutFormat {
    /// `Auto` made definite by the output path's extension.
    pub fn resolve(self, out: Option<&std::path::Path>) -> OutFormat {
        if self != OutFormat::Auto {
            return self;
        }
        let ext = out.and_then(|p| p.extension()).and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        match ext.as_str() {
            "geojson" | "json" => OutFormat::Geojson,
            "parquet" | "geoparquet" | "parq" => OutFormat::Parquet,
            _ => OutFormat::Csv,
        }
    }
}

/// Points handed to the index at a time.
pub(crate) const CHUNK: usize = 1 << 18;

pub fn run(args: &SnapArgs) -> Result<()> {
    let args = &SnapArgs { output_format: args.output_format.resolve(args.out.as_deref()), ..args.clone() };
    if args.k == 0 {
        bail!("--k must be at least 1");
    }
    if let Some(r) = args.max_distance {
        if r.is_nan() || r < 0.0 {
            bail!("--max-distance must be a number >= 0, not {r}");
        }
    }
    if args.connectors && args.output_format != OutFormat::Geojson {
        bail!("--connectors needs --output-format geojson");
    }
    if let Some(n) = args.threads {
        // One command per process: the global pool is this run's.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global();
    }
    let mut times = Times::default();
    let start = Instant::now();
    let t = Instant::now();
    let mut lines = read_lines(&args.lines, &args.input)?;
    let mut points = PointReader::open(&args.points, &args.input)?;
    crate::parquet::check_same_crs(&mut lines, points.crs(), &points.name)?;
    let kept = points.keep(
        &args.keep,
        match args.output_format {
            OutFormat::Geojson => KeepAs::Json,
            OutFormat::Parquet => KeepAs::Fields,
            _ => KeepAs::Csv,
        },
    )?;
    times.read += t.elapsed();
    if args.f32 {
        for v in &mut lines.vertices {
            *v = v.map(|c| f64::from(c as f32));
        }
    }
    let mut first = Vec::new();
    let t = Instant::now();
    points.next_chunk(CHUNK, &mut first)?;
    times.read += t.elapsed();
    let points_z = points.declares_z().unwrap_or_else(|| !first.is_empty() && first.iter().all(|p| p.has_z));
    let three_d = lines.has_z && points_z;
    if !args.quiet && (lines.has_z != points_z) && !lines.vertices.is_empty() && !first.is_empty() {
        eprintln!("segdist: note: only one of the files has z; computing in 2D");
    }
    let files = [(args.lines.as_path(), args.input.lines_format), (args.points.as_path(), args.input.points_format)];
    let geographic =
        crate::geom::is_lonlat(files, lines.lonlat_names || points.lonlat_names(), args.geographic, args.planar);
    if !args.quiet {
        crate::geom::say_mode(geographic);
    }
    let mut out = Output::open(args.out.as_deref())?;
    if geographic {
        crate::geo::snap(args, &lines, &mut points, first, &kept, &mut out, &mut times)?;
    } else if three_d {
        snap::<3>(args, &lines, &mut points, first, &kept, &mut out, &mut times)?;
    } else {
        snap::<2>(args, &lines, &mut points, first, &kept, &mut out, &mut times)?;
    }
    let t = Instant::now();
    out.finish()?;
    times.write += t.elapsed();
    if args.timings {
        eprintln!("{}", times.line(start.elapsed()));
    }
    Ok(())
}

/// Where a run's time went.
#[derive(Default)]
pub struct Times {
    pub read: Duration,
    pub index: Duration,
    pub query: Duration,
    pub write: Duration,
    pub points: usize,
}

impl Times {
    fn line(&self, wall: Duration) -> String {
        format!(
            "segdist: {} points in {:.3} s: read {:.3} s (on its own thread after the first chunk), index {:.3} s, query {:.3} s, write {:.3} s",
            self.points,
            wall.as_secs_f64(),
            self.read.as_secs_f64(),
            self.index.as_secs_f64(),
            self.query.as_secs_f64(),
            self.write.as_secs_f64()
        )
    }
}

/// The index over `lines` and the cumulative length of every vertex
/// within its part (for "along").
pub struct Snapper<const D: usize> {
    pub index: Index<D>,
    pub cum: Vec<f64>,
}

impl<const D: usize> Snapper<D> {
    pub fn new(lines: &Lines) -> Result<Self> {
        let v: Vec<[f64; D]> = lines.vertices.iter().map(|p| std::array::from_fn(|k| p[k])).collect();
        let mut b = IndexBuilder::<D>::with_capacity(v.len(), lines.part_start.len());
        for f in 0..lines.len() {
            b.push_multi_polyline(lines.parts(f).map(|r| &v[r]));
        }
        // Coordinates were checked when read: only size can fail here.
        let (index, cum) = b.build_with_lengths()?;
        Ok(Snapper { index, cum })
    }

    /// `(along, fraction)` of a hit, within its part.
    pub fn along(&self, lines: &Lines, h: &Hit<D>) -> (f64, f64) {
        let part = lines.feature_start[h.feature] + h.part;
        let cum = &self.cum[lines.part_start[part]..lines.part_start[part + 1]];
        let a = segdist_index::along(cum, h.segment, h.t);
        (a, segdist_index::fraction(cum, a))
    }

    /// The hits of every point (nearest first, at most `k`).
    pub fn query(&self, pts: &[[f64; D]], k: usize, max_distance: f64) -> Hits<D> {
        let mut hits = Hits::One(Vec::new());
        self.query_into(pts, k, max_distance, &mut hits);
        hits
    }

    /// [`query`](Self::query) into `hits`, reusing its buffer from one
    /// chunk of points to the next.
    pub fn query_into(&self, pts: &[[f64; D]], k: usize, max_distance: f64, hits: &mut Hits<D>) {
        let opts = QueryOptions { max_distance, ..QueryOptions::default() };
        match hits {
            Hits::One(h) if k == 1 => self.index.nearest_many_into(pts, &opts, h),
            _ if k == 1 => *hits = Hits::One(self.index.nearest_many(pts, &opts)),
            Hits::Many(h) => self.index.k_nearest_many_into(pts, k, &opts, h),
            _ => {
                let mut h = HitLists::new();
                self.index.k_nearest_many_into(pts, k, &opts, &mut h);
                *hits = Hits::Many(h);
            }
        }
    }
}

/// The hits of a run of points: at most one each, or a ranked list each,
/// flat (no allocation per point either way).
pub enum Hits<const D: usize> {
    One(Vec<Option<Hit<D>>>),
    Many(HitLists<D>),
}

impl<const D: usize> Hits<D> {
    /// The hits of point `i`, nearest first.
    pub fn get(&self, i: usize) -> &[Hit<D>] {
        match self {
            Hits::One(h) => h[i].as_slice(),
            Hits::Many(h) => h.get(i).unwrap_or(&[]),
        }
    }
}

fn snap<const D: usize>(
    args: &SnapArgs,
    lines: &Lines,
    points: &mut PointReader,
    first: Vec<Pt>,
    kept: &[String],
    out: &mut Output,
    times: &mut Times,
) -> Result<()> {
    let t = Instant::now();
    let snapper = Snapper::<D>::new(lines)?;
    times.index += t.elapsed();
    let fmt = Fmt { args, lines, snapper: &snapper, kept_header: crate::points::csv_header(kept) };
    let mut out = Sink::open(out, args, kept, lines.crs.clone(), false, D == 3)?;
    let progress = progress_bar(args.quiet, points.len);
    let t = Instant::now();
    out.write_all(&fmt.header())?;
    times.write += t.elapsed();
    let mut first_row = true;
    let max_distance = args.max_distance.unwrap_or(f64::INFINITY);
    let name = points.name.clone();
    // The next chunk is read (and parsed) on its own thread while this one
    // is searched and written.
    std::thread::scope(|scope| -> Result<()> {
        // Made here, so that an early return drops the receiver and the
        // reader stops instead of waiting on a full channel.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<(Vec<Pt>, u64, Duration)>>(1);
        scope.spawn(move || loop {
            let t = Instant::now();
            let mut chunk = Vec::new();
            let r = points.next_chunk(CHUNK, &mut chunk).map(|()| (chunk, points.position(), t.elapsed()));
            let end = r.as_ref().map_or(true, |(c, _, _)| c.is_empty());
            // The receiver gone (an error downstream) ends the reading too.
            if tx.send(r).is_err() || end {
                break;
            }
        });
        let mut chunk = first;
        let mut hits = Hits::One(Vec::new());
        while !chunk.is_empty() {
            let t = Instant::now();
            let pts: Vec<[f64; D]> = chunk
                .iter()
                .map(|p| std::array::from_fn(|k| if args.f32 { f64::from(p.p[k] as f32) } else { p.p[k] }))
                .collect();
            if D == 3 {
                if let Some(p) = chunk.iter().find(|p| !p.has_z) {
                    bail!("{name}: point {:?} has no z, but the data are 3D", p.id);
                }
            }
            snapper.query_into(&pts, args.k, max_distance, &mut hits);
            times.query += t.elapsed();
            let t = Instant::now();
            if let Sink::Parquet(pq) = &mut out {
                pq.write(&fmt.out_rows(&chunk, &hits))?;
                chunk.clear();
            }
            // Formatted in parallel, in slices, written in order.
            let bufs: Vec<Vec<u8>> = (0..chunk.len().div_ceil(4096))
                .into_par_iter()
                .map(|b| {
                    let r = b * 4096..((b + 1) * 4096).min(chunk.len());
                    fmt.rows(&chunk[r.clone()], &pts[r.clone()], &hits, r.start)
                })
                .collect();
            for b in bufs {
                if args.output_format == OutFormat::Geojson && !b.is_empty() {
                    if !first_row {
                        out.write_all(b",\n")?;
                    }
                    first_row = false;
                }
                out.write_all(&b)?;
            }
            times.write += t.elapsed();
            times.points += pts.len();
            let (next, position, read) = rx.recv().map_err(|_| anyhow::anyhow!("{name}: the reader stopped"))??;
            times.read += read;
            progress.set_position(position);
            chunk = next;
        }
        Ok(())
    })?;
    let t = Instant::now();
    out.write_all(&fmt.footer())?;
    out.finish()?;
    times.write += t.elapsed();
    progress.finish_and_clear();
    Ok(())
}

/// Formats result rows.
struct Fmt<'a, const D: usize> {
    args: &'a SnapArgs,
    lines: &'a Lines,
    snapper: &'a Snapper<D>,
    /// The kept columns' header fields, each followed by a comma.
    kept_header: String,
}

impl<const D: usize> Fmt<'_, D> {
    fn num<'b>(&self, x: f64, buf: &'b mut ryu::Buffer) -> &'b str {
        if self.args.f32 {
            buf.format(x as f32)
        } else {
            buf.format(x)
        }
    }

    fn text(&self, x: f64) -> String {
        self.num(x, &mut ryu::Buffer::new()).to_string()
    }

    fn header(&self) -> Vec<u8> {
        match self.args.output_format {
            OutFormat::Geojson => b"{\"type\":\"FeatureCollection\",\"features\":[\n".to_vec(),
            OutFormat::Parquet | OutFormat::Auto => Vec::new(),
            OutFormat::Csv => {
                let mut cols = vec!["point_id"];
                if self.args.k > 1 {
                    cols.push("rank");
                }
                cols.extend(["line_id", "part", "segment", "distance", "x", "y"]);
                if D == 3 {
                    cols.push("z");
                }
                cols.extend(["t", "along", "fraction"]);
                let mut s = format!("{}{}", self.kept_header, cols.join(","));
                s.push('\n');
                s.into_bytes()
            }
        }
    }

    fn footer(&self) -> Vec<u8> {
        match self.args.output_format {
            OutFormat::Geojson => b"\n]}\n".to_vec(),
            _ => Vec::new(),
        }
    }

    /// The rows of a chunk for Parquet (numbers as CSV has them: f32 with
    /// --f32).
    fn out_rows<'c>(&'c self, chunk: &'c [Pt], hits: &'c Hits<D>) -> Vec<OutRow<'c>> {
        let f = |x: f64| if self.args.f32 { f64::from(x as f32) } else { x };
        let mut rows = Vec::with_capacity(chunk.len());
        for (i, pt) in chunk.iter().enumerate() {
            let kept = kept_values(&pt.kept);
            let hs = hits.get(i);
            if hs.is_empty() {
                rows.push(OutRow { kept: kept.clone(), point_id: &pt.id, rank: 1, hit: None });
            }
            for (rank, h) in hs.iter().enumerate() {
                let (along, fraction) = self.snapper.along(self.lines, h);
                let hit = OutHit {
                    line_id: &self.lines.ids[h.feature],
                    part: h.part as u64,
                    segment: h.segment as u64,
                    distance: f(h.distance),
                    point: std::array::from_fn(|k| h.point.get(k).map_or(0.0, |&c| f(c))),
                    t: f(h.t),
                    along: f(along),
                    fraction: Some(f(fraction)),
                };
                rows.push(OutRow { kept: kept.clone(), point_id: &pt.id, rank: rank as u32 + 1, hit: Some(hit) });
            }
        }
        rows
    }

    /// The rows of some points, the first being point `first` of `hits`
    /// (GeoJSON: features joined by ",\n").
    fn rows(&self, chunk: &[Pt], pts: &[[f64; D]], all: &Hits<D>, first: usize) -> Vec<u8> {
        let mut buf = ryu::Buffer::new();
        let hits: Vec<&[Hit<D>]> = (first..first + chunk.len()).map(|i| all.get(i)).collect();
        match self.args.output_format {
            OutFormat::Csv | OutFormat::Parquet | OutFormat::Auto => {
                // Written by hand, field by field: the csv writer's record of
                // Strings cost more than the search itself.
                let mut w = Vec::with_capacity(chunk.len() * 120);
                let width = 8 + D + usize::from(self.args.k > 1);
                for (pt, hs) in chunk.iter().zip(&hits) {
                    if hs.is_empty() {
                        w.extend(pt.kept.as_bytes());
                        field(&mut w, &pt.id);
                        w.extend(std::iter::repeat_n(b',', width - 1));
                        w.push(b'\n');
                    }
                    for (rank, h) in hs.iter().enumerate() {
                        let (along, fraction) = self.snapper.along(self.lines, h);
                        w.extend(pt.kept.as_bytes());
                        field(&mut w, &pt.id);
                        if self.args.k > 1 {
                            w.push(b',');
                            w.extend((rank + 1).to_string().as_bytes());
                        }
                        w.push(b',');
                        field(&mut w, &self.lines.ids[h.feature]);
                        for n in [h.part, h.segment] {
                            w.push(b',');
                            w.extend(n.to_string().as_bytes());
                        }
                        for x in std::iter::once(h.distance).chain(h.point).chain([h.t, along, fraction]) {
                            w.push(b',');
                            w.extend(self.num(x, &mut buf).as_bytes());
                        }
                        w.push(b'\n');
                    }
                }
                w
            }
            OutFormat::Geojson => {
                let mut feats: Vec<String> = Vec::with_capacity(chunk.len());
                let js = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string());
                for ((pt, p), hs) in chunk.iter().zip(pts).zip(hits) {
                    if hs.is_empty() {
                        feats.push(format!(
                            "{{\"type\":\"Feature\",\"geometry\":null,\"properties\":{{{}\"point_id\":{},\"line_id\":null}}}}",
                            pt.kept,
                            js(&pt.id)
                        ));
                    }
                    for (rank, h) in hs.iter().enumerate() {
                        let (along, fraction) = self.snapper.along(self.lines, h);
                        let coords = |q: &[f64; D], _: &mut ryu::Buffer| {
                            q.iter().map(|c| self.text(*c)).collect::<Vec<_>>().join(",")
                        };
                        let q = coords(&h.point, &mut buf);
                        let mut props = format!(
                            "{}\"point_id\":{},\"rank\":{},\"line_id\":{},\"part\":{},\"segment\":{},\"distance\":{},\"t\":{},\"along\":{},\"fraction\":{}",
                            pt.kept,
                            js(&pt.id),
                            rank + 1,
                            js(&self.lines.ids[h.feature]),
                            h.part,
                            h.segment,
                            self.text(h.distance),
                            self.text(h.t),
                            self.text(along),
                            self.text(fraction)
                        );
                        if self.args.connectors {
                            props.push_str(",\"kind\":\"snapped\"");
                        }
                        feats.push(format!(
                            "{{\"type\":\"Feature\",\"geometry\":{{\"type\":\"Point\",\"coordinates\":[{q}]}},\"properties\":{{{props}}}}}"
                        ));
                        if self.args.connectors {
                            feats.push(format!(
                                "{{\"type\":\"Feature\",\"geometry\":{{\"type\":\"LineString\",\"coordinates\":[[{}],[{q}]]}},\"properties\":{{\"point_id\":{},\"rank\":{},\"line_id\":{},\"kind\":\"connector\"}}}}",
                                coords(p, &mut buf),
                                js(&pt.id),
                                rank + 1,
                                js(&self.lines.ids[h.feature])
                            ));
                        }
                    }
                }
                feats.join(",\n").into_bytes()
            }
        }
    }
}

/// Appends a CSV field, quoted only when it must be.
pub(crate) fn field(w: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|c| matches!(c, b',' | b'"' | b'\n' | b'\r')) {
        w.push(b'"');
        w.extend(s.replace('"', "\"\"").as_bytes());
        w.push(b'"');
    } else {
        w.extend(s.as_bytes());
    }
}
