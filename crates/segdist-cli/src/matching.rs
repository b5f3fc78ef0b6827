//! `segdist match`: GPS traces onto the road network (segdist-match), one
//! output row per input fix, and optionally each sub-match's path as
//! GeoJSON.
//!
//! Traces are streamed: CSV rows of one trace are consecutive (a trace id
//! seen again after another trace is an error naming the line), and traces
//! are matched a batch at a time on all cores, written in input order.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use segdist_match::{Direction, Fix, GraphBuilder, Junctions, MatchOptions, MatchedTrace, Matcher, Space};

use crate::geom::{self, read_lines_with, Format, InputOpts, Lines};
use crate::output::{progress_bar, Output};
use crate::snap::field;

/// Fixes matched per batch (all cores), bounding memory.
const BATCH: usize = 1 << 16;
/// The first batch's size: the cores wait for it, so it is small, and the
/// batches double from it to [`BATCH`] (a first batch of `BATCH` kept them
/// waiting 0.07 s on 336,067 fixes, a tenth of the command).
const FIRST_BATCH: usize = 1 << 11;
/// Batches the reader may have read and not yet handed over: at most
/// `AHEAD` × [`BATCH`] fixes waiting, so memory stays flat on any file,
/// and room to read ahead through the command's start.
const AHEAD: usize = 8;

#[derive(Args, Debug)]
pub struct MatchArgs {
    /// The traces: CSV (a row per fix: trace id, optional time, x/y or
    /// lon/lat), GeoJSON (a LineString or MultiPoint feature per trace) or
    /// GPX (each track segment a trace, with its times).
    #[arg(long, value_name = "FILE")]
    pub points: PathBuf,
    /// The roads: CSV, GeoJSON or WKT lines.
    #[arg(long, value_name = "FILE")]
    pub lines: PathBuf,
    /// CSV column of the trace id (default: `trace` when present; without
    /// it the whole file is one trace). Rows of a trace must be consecutive.
    #[arg(long, value_name = "NAME")]
    pub trace_column: Option<String>,
    /// CSV column of the fix's time: seconds, or RFC 3339 timestamps such
    /// as 2026-11-25T08:00:05Z (default: `time` when present). Times must
    /// not go back within a trace.
    #[arg(long, value_name = "NAME")]
    pub time_column: Option<String>,
    /// GPS noise, standard deviation (metres when geographic).
    #[arg(long, value_name = "M", default_value_t = 10.0)]
    pub sigma: f64,
    /// Candidates are looked for within this distance of a fix (default:
    /// 3 × sigma, at least 50).
    #[arg(long, value_name = "M")]
    pub radius: Option<f64>,
    /// Candidate roads per fix.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub k: usize,
    /// Scale of the transition probability: how much a route may typically
    /// differ from the straight line between fixes.
    #[arg(long, value_name = "M", default_value_t = 10.0)]
    pub beta: f64,
    /// With times, the highest speed (units per second: m/s when
    /// geographic).
    #[arg(long, value_name = "V", default_value_t = 50.0)]
    pub max_speed: f64,
    /// With times, how much a vehicle's velocity wanders (its change's
    /// deviation over a second, units per second): the fixes are smoothed
    /// by a Kalman smoother before matching and along the matched route
    /// after. 0 turns smoothing off.
    #[arg(long, value_name = "A", default_value_t = 2.0)]
    pub acceleration: f64,
    /// The lines' column or property saying one-way: yes/true/1 (along the
    /// line's vertex order), -1/reverse (against it); anything else, or
    /// absent, is two-way.
    #[arg(long, value_name = "NAME", default_value = "oneway")]
    pub oneway: String,
    /// Which vertices join lines: `shared` (ends, and interior vertices
    /// whose coordinates another vertex shares, as in OpenStreetMap) or
    /// `ends`.
    #[arg(long, value_name = "RULE", default_value = "shared")]
    pub junctions: JunctionRule,
    /// The lines' column or property holding the id of the node a line
    /// starts at (with --to-column): lines then meet where these ids are
    /// equal, and only there. Each line must then be one part and have both.
    #[arg(long, value_name = "NAME", requires = "to_column")]
    pub from_column: Option<String>,
    /// The lines' column or property holding the id of the node a line
    /// ends at (with --from-column).
    #[arg(long, value_name = "NAME", requires = "from_column")]
    pub to_column: Option<String>,
    /// Output CSV (default: stdout). Written whole or not at all.
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write each sub-match's path as GeoJSON LineStrings, with the
    /// ordered ids of the lines it drives.
    #[arg(long, value_name = "FILE")]
    pub paths_out: Option<PathBuf>,
    /// Coordinates are lon/lat: distances in metres on WGS84 (default:
    /// GeoJSON, or CSV columns named lon/lat).
    #[arg(long, conflicts_with = "planar")]
    pub geographic: bool,
    /// Coordinates are planar, whatever the format.
    #[arg(long)]
    pub planar: bool,
    /// No notes or progress on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub input: InputOpts,
}

/// Which vertices are junctions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum JunctionRule {
    Shared,
    Ends,
}

/// One trace as read: its id, and its fixes with their ids.
pub(crate) struct Trace {
    id: String,
    /// The fixes' ids, one after another: fix `k`'s ends at `ends[k]`.
    ids: String,
    ends: Vec<usize>,
    fixes: Vec<Fix>,
    /// Where the fixes came from, for errors.
    from: From,
}

/// Where a trace's fixes came from (spelt out only for an error).
enum From {
    /// A CSV line per fix.
    Csv(Vec<u64>),
    /// A GeoJSON feature's positions.
    Feature(usize),
    /// A GPX track's segment's points.
    Gpx(usize, usize),
}

impl Trace {
    fn new(id: String, from: From) -> Trace {
        Trace { id, ids: String::new(), ends: Vec::new(), fixes: Vec::new(), from }
    }

    /// Adds a fix, its id written by `id`.
    fn push(&mut self, fix: Fix, id: impl FnOnce(&mut String)) {
        id(&mut self.ids);
        self.ends.push(self.ids.len());
        self.fixes.push(fix);
    }

    /// Fix `k`'s id.
    fn id_of(&self, k: usize) -> &str {
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        &self.ids[start..self.ends[k]]
    }

    /// Where fix `k` came from in file `name`.
    fn place(&self, name: &str, k: usize) -> String {
        match &self.from {
            From::Csv(lines) => format!("{name}: line {}", lines[k]),
            From::Feature(i) => format!("{name}: feature {i}: position {k}"),
            From::Gpx(track, segment) => format!("{name}: track {track}, segment {segment}, point {k}"),
        }
    }
}

/// A batch as the reader hands it over: its traces, and how far into the
/// input it reaches (bytes, for the progress bar).
type Batch = (Vec<Trace>, u64);

/// A matched batch as the writer takes it: the CSV rows (a buffer per
/// trace), the paths' GeoJSON features, and how far into the input it
/// reaches.
type Written = (Vec<Vec<u8>>, Vec<u8>, u64);

pub fn run(args: &MatchArgs) -> Result<()> {
    let positive = |v: f64, name: &str| -> Result<()> {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            bail!("--{name} must be a number > 0, not {v}")
        }
    };
    positive(args.sigma, "sigma")?;
    positive(args.beta, "beta")?;
    positive(args.max_speed, "max-speed")?;
    if !(args.acceleration.is_finite() && args.acceleration >= 0.0) {
        bail!("--acceleration must be a number >= 0, not {}", args.acceleration);
    }
    let radius = args.radius.unwrap_or(segdist_match::default_radius(args.sigma));
    positive(radius, "radius")?;
    if args.k == 0 {
        bail!("--k must be at least 1");
    }
    let mut attrs = vec![args.oneway.as_str()];
    if let (Some(f), Some(t)) = (&args.from_column, &args.to_column) {
        attrs.extend([f.as_str(), t.as_str()]);
    }
    // The traces are opened first and read on their own thread from here
    // on, while the roads are read and their graph, grid and route table
    // built: that start keeps one core busy, and the reading takes the other.
    let mut traces = TraceReader::open(args)?;
    let (len, name, traces_lonlat) = (traces.len, traces.name.clone(), traces.lonlat);
    let (batches, read) = std::sync::mpsc::sync_channel::<Result<Batch>>(AHEAD);
    let mut size = FIRST_BATCH;
    // (The reader is not scoped: on an error found here, the command must
    // not wait for it, blocked as it may be on an endless standard input.
    // It stops at its next batch, or with the process.)
    let reader = std::thread::spawn(move || loop {
        let mut batch = Vec::new();
        let r = traces.next_batch(&mut batch, size).map(|done| (batch, traces.position(), done));
        size = (2 * size).min(BATCH);
        let (stop, item) = match r {
            Ok((batch, at, done)) => (done, Ok((batch, at))),
            Err(e) => (true, Err(e)),
        };
        if batches.send(item).is_err() || stop {
            return;
        }
    });
    let lines = read_lines_with(&args.lines, &args.input, &attrs)?;
    let files = [(args.lines.as_path(), args.input.lines_format), (args.points.as_path(), args.input.points_format)];
    let geographic = geom::is_lonlat(files, lines.lonlat_names || traces_lonlat, args.geographic, args.planar);
    if !args.quiet {
        crate::geom::say_mode(geographic);
    }
    let graph = build_graph(&lines, geographic, args)?;
    let options = MatchOptions {
        sigma: args.sigma,
        beta: args.beta,
        radius,
        k: args.k,
        max_speed: args.max_speed,
        acceleration: args.acceleration,
        ..Default::default()
    };
    let matcher = Matcher::new(&graph, options).map_err(|e| anyhow!("{e}"))?;

    let mut out = Output::open(args.out.as_deref())?;
    let mut paths = match &args.paths_out {
        Some(p) => {
            let mut o = Output::open(Some(p))?;
            o.write_all(b"{\"type\":\"FeatureCollection\",\"features\":[")?;
            Some(o)
        }
        None => None,
    };
    // As `snap` names them: metres and lon/lat when geographic.
    let (d, x, y, along) =
        if geographic { ("distance_m", "lon", "lat", "along_m") } else { ("distance", "x", "y", "along") };
    writeln!(out, "trace_id,point_id,line_id,part,segment,t,{d},{x},{y},{along},sub_match,state")?;
    let pb = progress_bar(args.quiet, len);
    let want_paths = paths.is_some();
    // Three stages at once: the reader reads the next batches while this
    // thread matches the current one on all cores (each trace's rows and
    // paths formatted beside its match) and another writes the batch before.
    std::thread::scope(|scope| -> Result<()> {
        let (written, write) = std::sync::mpsc::sync_channel::<Written>(1);
        let pb_w = pb.clone();
        let writer = scope.spawn(move || -> Result<(Output, Option<Output>)> {
            for (rows, features, at) in write {
                for r in &rows {
                    out.write_all(r)?;
                }
                if let Some(p) = &mut paths {
                    p.write_all(&features)?;
                }
                out.start_writeback();
                pb_w.set_position(at);
            }
            Ok((out, paths))
        });
        let mut first_path = true;
        // An error the reader sent after batches taken into this one: it
        // is reported once they are matched, as it comes after them.
        let mut after: Option<anyhow::Error> = None;
        while let Ok(item) = read.recv() {
            let (mut batch, mut at) = item?;
            // The batches the reader has ready join this one, up to `BATCH`
            // fixes: one wait for a batch's last trace, not one a batch.
            let mut fixes: usize = batch.iter().map(|t| t.fixes.len()).sum();
            while fixes < BATCH {
                match read.try_recv() {
                    Ok(Ok((more, more_at))) => {
                        fixes += more.iter().map(|t| t.fixes.len()).sum::<usize>();
                        batch.extend(more);
                        at = more_at;
                    }
                    Ok(Err(e)) => {
                        after = Some(e);
                        break;
                    }
                    Err(_) => break,
                }
            }
            if geographic {
                for t in &batch {
                    if let Some(k) = t.fixes.iter().position(|f| f.point[1].abs() > 90.0) {
                        bail!("{}: latitude {} is not in [-90, 90]", t.place(&name, k), t.fixes[k].point[1]);
                    }
                }
            }
            let results: Vec<Result<(Vec<u8>, Vec<u8>)>> = batch
                .par_iter()
                .map(|t| {
                    let r = matcher.match_trace(&t.fixes, want_paths).map_err(|e| match e {
                        segdist_match::MatchError::TimeGoesBack { fix } => {
                            anyhow!(
                                "{}: the time goes back from the fix before (trace {:?})",
                                t.place(&name, fix),
                                t.id
                            )
                        }
                        other => anyhow!("{other}"),
                    })?;
                    let mut rows = Vec::with_capacity(t.fixes.len() * 112);
                    write_rows(&mut rows, t, &r, &lines);
                    let mut features = Vec::new();
                    if want_paths {
                        write_paths(&mut features, t, &r, &lines)?;
                    }
                    Ok((rows, features))
                })
                .collect();
            let (mut rows, mut features) = (Vec::with_capacity(results.len()), Vec::new());
            for r in results {
                let (r, f) = r?;
                rows.push(r);
                // Each feature comes after a comma, but the very first.
                if !f.is_empty() {
                    features.extend_from_slice(if first_path { &f[1..] } else { &f });
                    first_path = false;
                }
            }
            if written.send((rows, features, at)).is_err() {
                break; // the writer failed: its error follows
            }
            if let Some(e) = after {
                return Err(e);
            }
        }
        drop(written);
        let (out, paths) = writer.join().map_err(|_| anyhow!("the writing thread panicked"))??;
        reader.join().map_err(|_| anyhow!("the reading thread panicked"))?;
        pb.finish_and_clear();
        if let Some(mut p) = paths {
            p.write_all(b"]}\n")?;
            p.finish()?;
        }
        out.finish()
    })
}

/// The road graph of `lines`: one-way from their first attribute; with
/// node-id columns, joined by the ids in the next two.
fn build_graph(lines: &Lines, geographic: bool, args: &MatchArgs) -> Result<segdist_match::RoadGraph> {
    let space = if geographic { Space::Geographic } else { Space::Planar };
    let rule = match args.junctions {
        JunctionRule::Shared => Junctions::SharedVertices,
        JunctionRule::Ends => Junctions::Ends,
    };
    let mut b = GraphBuilder::new(space).junctions(rule);
    // Node ids as the data spells them, numbered in order of appearance.
    let mut ids: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    let name = args.lines.display();
    for f in 0..lines.len() {
        let mut parts: Vec<Vec<[f64; 2]>> =
            lines.parts(f).map(|r| lines.vertices[r].iter().map(|v| [v[0], v[1]]).collect()).collect();
        let attr = |i: usize| lines.attrs.get(f).and_then(|a| a.get(i)).and_then(Option::as_deref);
        let dir = attr(0).map_or(Direction::Both, Direction::from_oneway);
        match (&args.from_column, &args.to_column) {
            (Some(fc), Some(tc)) => {
                let line = &lines.ids[f];
                let (Some(from), Some(to)) = (attr(1), attr(2)) else {
                    bail!(
                        "{name}: line {line:?} has no {} (--from-column/--to-column)",
                        if attr(1).is_none() { fc } else { tc }
                    );
                };
                if parts.len() != 1 {
                    bail!("{name}: line {line:?} has {} parts; with node ids a line must be one", parts.len());
                }
                let mut id = |s: &str| {
                    let n = ids.len() as u64;
                    *ids.entry(s.to_string()).or_insert(n)
                };
                let (from, to) = (id(from), id(to));
                b.push_line_between(parts.pop().expect("one part"), dir, from, to);
            }
            _ => {
                b.push_line(parts, dir);
            }
        }
    }
    b.build().map_err(|e| match e {
        segdist_match::GraphError::BadVertex { line, part, vertex } => {
            anyhow!("line {:?}: part {part}, vertex {vertex}: not a longitude/latitude", lines.ids[line])
        }
        other => anyhow!("{other}"),
    })
}

fn write_rows(w: &mut Vec<u8>, t: &Trace, r: &MatchedTrace, lines: &Lines) {
    let (mut b, mut i) = (ryu::Buffer::new(), itoa::Buffer::new());
    let mut num = |w: &mut Vec<u8>, v: f64| w.extend_from_slice(b.format(v).as_bytes());
    let mut int = |w: &mut Vec<u8>, v: usize| w.extend_from_slice(i.format(v).as_bytes());
    for (k, m) in r.fixes.iter().enumerate() {
        field(w, &t.id);
        w.push(b',');
        field(w, t.id_of(k));
        w.push(b',');
        if let Some(c) = &m.candidate {
            field(w, &lines.ids[c.line]);
            w.push(b',');
            int(w, c.part);
            w.push(b',');
            int(w, c.segment);
            w.push(b',');
            num(w, c.t);
            w.push(b',');
            num(w, c.distance);
            w.push(b',');
            num(w, c.point[0]);
            w.push(b',');
            num(w, c.point[1]);
            w.push(b',');
            num(w, c.along);
        } else {
            w.extend_from_slice(b",,,,,,,");
        }
        w.push(b',');
        int(w, m.sub_match as usize);
        w.push(b',');
        w.extend_from_slice(m.state.name().as_bytes());
        w.push(b'\n');
    }
}

/// Each sub-match's path as a GeoJSON feature, each after a comma.
fn write_paths(o: &mut Vec<u8>, t: &Trace, r: &MatchedTrace, lines: &Lines) -> Result<()> {
    for p in &r.paths {
        let mut s = String::from(",");
        let coords: Vec<String> = p
            .points
            .iter()
            .map(|q| format!("[{},{}]", ryu::Buffer::new().format(q[0]), ryu::Buffer::new().format(q[1])))
            .collect();
        let ids: Vec<&str> = p.lines.iter().map(|&l| lines.ids[l].as_str()).collect();
        // A single point is drawn as a Point: a LineString needs two.
        let geometry = if coords.len() >= 2 {
            format!("{{\"type\":\"LineString\",\"coordinates\":[{}]}}", coords.join(","))
        } else {
            format!("{{\"type\":\"Point\",\"coordinates\":{}}}", coords.first().map_or("[]", String::as_str))
        };
        let _ = write!(
            s,
            "\n{{\"type\":\"Feature\",\"properties\":{{\"trace_id\":{},\"sub_match\":{},\"line_ids\":{}}},\"geometry\":{geometry}}}",
            serde_json::to_string(&t.id)?,
            p.sub_match,
            serde_json::to_string(&ids)?
        );
        o.extend_from_slice(s.as_bytes());
    }
    Ok(())
}

/// Traces streamed from CSV rows or GeoJSON features.
pub(crate) struct TraceReader {
    kind: Kind,
    name: String,
    len: Option<u64>,
    lonlat: bool,
    /// Trace ids already finished (a CSV trace must not come back).
    seen: std::collections::HashSet<String>,
    /// A row read ahead: the first of the next trace.
    pending: Option<Trace>,
}

enum Kind {
    Csv {
        rdr: csv::Reader<Box<dyn std::io::Read + Send>>,
        header: csv::StringRecord,
        cols: geom::CsvCols,
        trace: Option<usize>,
        time: Option<usize>,
        row: usize,
    },
    Geojson {
        features: Box<dyn Iterator<Item = Result<geojson::Feature>> + Send>,
        i: usize,
        prop: Option<String>,
    },
    /// Read whole (the `gpx` crate has no streaming reader), one trace per
    /// track segment, in reverse for popping.
    Gpx {
        traces: Vec<Trace>,
    },
}

impl TraceReader {
    pub(crate) fn open(args: &MatchArgs) -> Result<TraceReader> {
        let format = Format::of(&args.points, args.input.points_format)?;
        let (name, r, len) = geom::open(&args.points)?;
        let (kind, lonlat) = match format {
            Format::Csv => {
                let (rdr, header) = geom::csv_reader(&name, r, args.input.delimiter)?;
                let cols = geom::CsvCols::find(&header, &args.input, &name, false)?;
                let pos = |c: &str| header.iter().position(|h| h.trim() == c);
                let column = |given: &Option<String>, default: &str| -> Result<Option<usize>> {
                    match given {
                        Some(c) => pos(c).map(Some).ok_or_else(|| anyhow!("{name}: line 1: no column {c:?}")),
                        None => Ok(pos(default)),
                    }
                };
                let trace = column(&args.trace_column, "trace")?;
                let time = column(&args.time_column, "time")?;
                let lonlat = cols.lonlat;
                (Kind::Csv { rdr, header, cols, trace, time, row: 0 }, lonlat)
            }
            Format::Geojson => {
                let features = geom::geojson_features(&name, r)?;
                (Kind::Geojson { features, i: 0, prop: args.input.id_property.clone() }, false)
            }
            Format::Gpx => (Kind::Gpx { traces: read_gpx(&name, r)? }, true),
            Format::Parquet => {
                bail!("{name}: match reads traces from CSV, GeoJSON or GPX, not Parquet (the lines may be Parquet)")
            }
            Format::Wkt => bail!("{name}: traces are read from CSV, GeoJSON or GPX, not WKT"),
        };
        Ok(TraceReader { kind, name, len, lonlat, seen: Default::default(), pending: None })
    }

    /// Bytes read so far (CSV only).
    fn position(&self) -> u64 {
        match &self.kind {
            Kind::Csv { rdr, .. } => rdr.position().byte(),
            Kind::Geojson { .. } | Kind::Gpx { .. } => 0,
        }
    }

    /// Whole traces of at least `size` fixes in all (but the last batch)
    /// into `out` (cleared first); `true` once the input is done.
    pub(crate) fn next_batch(&mut self, out: &mut Vec<Trace>, size: usize) -> Result<bool> {
        out.clear();
        let mut fixes = 0;
        while fixes < size {
            match self.next_trace()? {
                Some(t) => {
                    fixes += t.fixes.len();
                    out.push(t);
                }
                None => return Ok(true),
            }
        }
        Ok(false)
    }

    fn next_trace(&mut self) -> Result<Option<Trace>> {
        let name = self.name.clone();
        match &mut self.kind {
            Kind::Csv { rdr, header, cols, trace, time, row } => {
                let mut t: Option<Trace> = self.pending.take();
                let mut rec = csv::ByteRecord::new();
                while rdr.read_byte_record(&mut rec).map_err(|e| geom::csv_error(e, &name))? {
                    let line = rec.position().map_or(0, |p| p.line());
                    let (p, _) = cols.point_of(|i| rec.get(i).unwrap_or_default(), rec.position(), header, &name)?;
                    let text = |i: usize| String::from_utf8_lossy(rec.get(i).unwrap_or_default());
                    let time = match time {
                        Some(c) => {
                            let raw = text(*c);
                            let v = seconds(raw.trim()).ok_or_else(|| {
                                anyhow!(
                                    "{name}: line {line}, column {} ({}): cannot read {raw:?} as seconds or an RFC 3339 time",
                                    *c + 1,
                                    header.get(*c).unwrap_or("")
                                )
                            })?;
                            if !v.is_finite() {
                                bail!("{name}: line {line}, column {}: {raw:?} is not a finite time", *c + 1);
                            }
                            Some(v)
                        }
                        None => None,
                    };
                    let fix = Fix { point: [p[0], p[1]], time };
                    let tid = trace.map_or(std::borrow::Cow::Borrowed(""), text);
                    // A row of the trace being read, or the first of the next.
                    let next = match &t {
                        Some(cur) if cur.id == tid => None,
                        _ => Some(Trace::new(tid.into_owned(), From::Csv(Vec::new()))),
                    };
                    let started = t.is_some();
                    let cur = match next {
                        Some(next) if started => self.pending.insert(next),
                        Some(next) => {
                            if self.seen.contains(&next.id) {
                                bail!("{name}: line {line}: trace {:?} appears again after other traces (a trace's rows must be consecutive)", next.id);
                            }
                            t.insert(next)
                        }
                        None => t.as_mut().expect("the current trace"),
                    };
                    cur.push(fix, |ids| match cols.id {
                        Some(i) => ids.push_str(&text(i)),
                        None => ids.push_str(itoa::Buffer::new().format(*row)),
                    });
                    if let From::Csv(lines) = &mut cur.from {
                        lines.push(line);
                    }
                    *row += 1;
                    if self.pending.is_some() {
                        break;
                    }
                }
                if let Some(cur) = &t {
                    if let Some(next) = &self.pending {
                        if self.seen.contains(&next.id) {
                            bail!(
                                "{}: trace {:?} appears again after other traces (a trace's rows must be consecutive)",
                                next.place(&name, 0),
                                next.id
                            );
                        }
                    }
                    self.seen.insert(cur.id.clone());
                }
                Ok(t)
            }
            Kind::Gpx { traces } => Ok(traces.pop()),
            Kind::Geojson { features, i, prop } => {
                let Some(f) = features.next() else { return Ok(None) };
                let f = f?;
                let place = format!("{name}: feature {i}");
                let id = geom::feature_id(&f, *i, prop.as_deref());
                *i += 1;
                let positions: Vec<Vec<f64>> = match f.geometry.map(|g| g.value) {
                    Some(geojson::Value::LineString(ps) | geojson::Value::MultiPoint(ps)) => ps,
                    Some(geojson::Value::Point(p)) => vec![p],
                    Some(other) => {
                        bail!("{place}: a {} where a trace (LineString, MultiPoint) is expected", other.type_name())
                    }
                    None => bail!("{place}: no geometry"),
                };
                let mut t = Trace::new(id, From::Feature(*i - 1));
                for (k, pos) in positions.iter().enumerate() {
                    let (p, _) = geom::position(pos).map_err(|e| anyhow!("{place}: position {k}: {e}"))?;
                    t.push(Fix { point: [p[0], p[1]], time: None }, |ids| {
                        let _ = write!(ids, "{k}");
                    });
                }
                Ok(Some(t))
            }
        }
    }
}

/// A time column's value in seconds: a number as it is, or an RFC 3339
/// timestamp (`2026-11-25T08:00:05Z`, `…+02:00`, fractions of a second) as
/// seconds since 1970 (UTC).
fn seconds(raw: &str) -> Option<f64> {
    raw.parse().ok().or_else(|| {
        let t = time::OffsetDateTime::parse(raw, &time::format_description::well_known::Rfc3339).ok()?;
        Some(t.unix_timestamp_nanos() as f64 * 1e-9)
    })
}

/// Every track segment of a GPX file as a trace: id `NAME` (the track's
/// name, else its number from 0), or `NAME/SEGMENT` when the track has more
/// than one segment; point ids number the fixes from 0; times in seconds
/// since 1970 (UTC).
fn read_gpx(name: &str, r: Box<dyn std::io::Read + Send>) -> Result<Vec<Trace>> {
    let g = gpx::read(std::io::BufReader::new(r)).map_err(|e| anyhow!("{name}: not GPX: {e}"))?;
    let mut traces = Vec::new();
    for (k, track) in g.tracks.iter().enumerate() {
        let track_id = track.name.clone().unwrap_or_else(|| k.to_string());
        for (s, seg) in track.segments.iter().enumerate() {
            let id = if track.segments.len() > 1 { format!("{track_id}/{s}") } else { track_id.clone() };
            let mut t = Trace::new(id, From::Gpx(k, s));
            for (i, w) in seg.points.iter().enumerate() {
                let p = w.point();
                let time = w.time.map(|tm| time::OffsetDateTime::from(tm).unix_timestamp_nanos() as f64 * 1e-9);
                t.push(Fix { point: [p.x(), p.y()], time }, |ids| {
                    let _ = write!(ids, "{i}");
                });
            }
            traces.push(t);
        }
    }
    traces.reverse();
    Ok(traces)
}
