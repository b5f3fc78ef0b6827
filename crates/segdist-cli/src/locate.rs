//! `segdist locate`: linear referencing of points along a line.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use segdist_index::{Polyline, QueryOptions};

use crate::geom::{read_lines, InputOpts};
use crate::output::Output;
use crate::points::{KeepAs, KeepOpts, PointReader, Pt};
use crate::snap::field;

/// Where along a line each point projects (like PostGIS ST_LineLocatePoint
/// and shapely line_locate_point): the segment, t on it, the distance along
/// the line from its first vertex, that as a fraction of the line's length,
/// the distance from the point, and the closest point.
///
/// The line file may hold several LineString features: each point is then
/// located along each of them (or only along --line-id). Output columns:
/// the points file's columns (--keep), then point_id, line_id, segment, t,
/// along, fraction, distance, x, y[, z] (geographic: along_m, distance_m,
/// lon, lat).
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    segdist locate --line route.geojson --points fixes.csv\n  \
    segdist locate --line roads.geojson --line-id 4236349 --points fixes.csv --out located.csv")]
pub struct LocateArgs {
    /// The line (or lines) to locate along.
    #[arg(long, value_name = "FILE")]
    pub line: PathBuf,
    /// The points to locate.
    #[arg(long, value_name = "FILE")]
    pub points: PathBuf,
    /// Only the line feature with this id.
    #[arg(long, value_name = "ID")]
    pub line_id: Option<String>,
    /// Write to this file (atomically) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Points farther than this from a line get an empty match on it.
    #[arg(long, value_name = "R")]
    pub max_distance: Option<f64>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub input: InputOpts,
    #[command(flatten)]
    pub keep: KeepOpts,
    /// Coordinates are longitude/latitude: lengths and distances in metres
    /// on the WGS84 ellipsoid (the default when an input is GeoJSON).
    #[arg(long, conflicts_with = "planar")]
    pub geographic: bool,
    /// Use the coordinates as they are (the default for CSV and WKT).
    #[arg(long)]
    pub planar: bool,
}

pub fn run(args: &LocateArgs) -> Result<()> {
    if let Some(n) = args.threads {
        let _ = rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build_global();
    }
    let max_distance = args.max_distance.unwrap_or(f64::INFINITY);
    if max_distance.is_nan() || max_distance < 0.0 {
        bail!("--max-distance must be a number >= 0");
    }
    let lines = read_lines(&args.line, &args.input)?;
    let chosen: Vec<usize> = match &args.line_id {
        Some(id) => match lines.ids.iter().position(|i| i == id) {
            Some(f) => vec![f],
            None => bail!("{}: no line with id {id:?}", args.line.display()),
        },
        None => (0..lines.len()).collect(),
    };
    if chosen.is_empty() {
        bail!("{}: no line to locate along", args.line.display());
    }
    let mut points = PointReader::open(&args.points, &args.input)?;
    let kept = crate::points::csv_header(&points.keep(&args.keep, KeepAs::Csv)?);
    let mut chunk = Vec::new();
    points.next_chunk(1 << 16, &mut chunk)?;
    let three_d = lines.has_z && points.declares_z().unwrap_or_else(|| chunk.iter().all(|p| p.has_z));
    let files = [(args.line.as_path(), args.input.lines_format), (args.points.as_path(), args.input.points_format)];
    let geographic =
        crate::geom::is_lonlat(files, lines.lonlat_names || points.lonlat_names(), args.geographic, args.planar);
    eprintln!(
        "segdist: {}",
        if geographic {
            "geographic: lon/lat, lengths and distances in metres on the WGS84 ellipsoid (--planar to use the numbers as they are)"
        } else {
            "planar: lengths and distances in the coordinates' own units (--geographic for lon/lat in metres)"
        }
    );
    let mut out = Output::open(args.out.as_deref())?;
    if geographic {
        let head = format!("{kept}point_id,line_id,segment,t,along_m,fraction,distance_m,lon,lat\n");
        locate_geo(args, &lines, &chosen, &mut points, chunk, max_distance, &head, &mut out)?;
    } else {
        let z = if three_d { ",z" } else { "" };
        let head = format!("{kept}point_id,line_id,segment,t,along,fraction,distance,x,y{z}\n");
        if three_d {
            locate::<3>(args, &lines, &chosen, &mut points, chunk, max_distance, &head, &mut out)?;
        } else {
            locate::<2>(args, &lines, &chosen, &mut points, chunk, max_distance, &head, &mut out)?;
        }
    }
    out.finish()
}

#[allow(clippy::too_many_arguments)]
fn locate<const D: usize>(
    args: &LocateArgs,
    lines: &crate::geom::Lines,
    chosen: &[usize],
    points: &mut PointReader,
    mut chunk: Vec<Pt>,
    max_distance: f64,
    head: &str,
    out: &mut Output,
) -> Result<()> {
    let mut routes = Vec::with_capacity(chosen.len());
    for &f in chosen {
        let v = line_string::<D>(args, lines, f)?;
        routes.push((f, Polyline::new(&v)?));
    }
    out.write_all(head.as_bytes())?;
    let opts = QueryOptions { max_distance, ..QueryOptions::default() };
    let mut buf = ryu::Buffer::new();
    while !chunk.is_empty() {
        if D == 3 {
            if let Some(p) = chunk.iter().find(|p| !p.has_z) {
                bail!("{}: point {:?} has no z, but the data are 3D", points.name, p.id);
            }
        }
        let pts: Vec<[f64; D]> = chunk.iter().map(|p| std::array::from_fn(|k| p.p[k])).collect();
        let located: Vec<_> = routes.iter().map(|(_, r)| r.locate_many(&pts, &opts)).collect();
        let rows = csv_rows(&chunk, lines, &routes, &located, 7 + D, |l, rec| {
            rec.push(l.segment.to_string());
            let numbers = [l.t, l.along, l.fraction, l.distance].into_iter().chain(l.point);
            rec.extend(numbers.map(|x| buf.format(x).to_string()));
        })?;
        out.write_all(&rows)?;
        points.next_chunk(1 << 16, &mut chunk)?;
    }
    Ok(())
}

/// [`locate`] on longitude/latitude: each line a `GeoPolyline` (geodesic
/// segments, lengths along it in metres).
#[allow(clippy::too_many_arguments)]
fn locate_geo(
    args: &LocateArgs,
    lines: &crate::geom::Lines,
    chosen: &[usize],
    points: &mut PointReader,
    mut chunk: Vec<Pt>,
    max_distance: f64,
    head: &str,
    out: &mut Output,
) -> Result<()> {
    let mut routes = Vec::with_capacity(chosen.len());
    for &f in chosen {
        let v = line_string::<2>(args, lines, f)?;
        let route = segdist_geo::GeoPolyline::new(&v)
            .map_err(|e| anyhow::anyhow!("{}: line {:?}: {e}", args.line.display(), lines.ids[f]))?;
        routes.push((f, route));
    }
    out.write_all(head.as_bytes())?;
    let mut buf = ryu::Buffer::new();
    while !chunk.is_empty() {
        crate::geom::check_latitudes(&points.name, &chunk)?;
        let pts: Vec<[f64; 2]> = chunk.iter().map(|p| [p.p[0], p.p[1]]).collect();
        let located: Vec<_> = routes.iter().map(|(_, route)| route.locate_many(&pts, max_distance)).collect();
        let rows = csv_rows(&chunk, lines, &routes, &located, 9, |at, rec| {
            rec.push(at.segment.to_string());
            let numbers = [at.t, at.along, at.fraction, at.distance, at.point[0], at.point[1]];
            rec.extend(numbers.map(|x| buf.format(x).to_string()));
        })?;
        out.write_all(&rows)?;
        points.next_chunk(1 << 16, &mut chunk)?;
    }
    Ok(())
}

/// One CSV row per point and line: kept columns, point id, line id, then
/// `fields` of the location, or empty fields up to `width` in all where the
/// point was not located.
fn csv_rows<R, L: Copy>(
    chunk: &[Pt],
    lines: &crate::geom::Lines,
    routes: &[(usize, R)],
    located: &[Vec<Option<L>>],
    width: usize,
    mut fields: impl FnMut(L, &mut Vec<String>),
) -> Result<Vec<u8>> {
    let mut w = Vec::new();
    let mut rec = Vec::new();
    for (i, pt) in chunk.iter().enumerate() {
        for ((f, _), l) in routes.iter().zip(located) {
            w.extend(pt.kept.as_bytes());
            field(&mut w, &pt.id);
            w.push(b',');
            field(&mut w, &lines.ids[*f]);
            rec.clear();
            match l[i] {
                Some(l) => fields(l, &mut rec),
                None => rec.resize(width - 2, String::new()),
            }
            for x in &rec {
                w.push(b',');
                w.extend(x.as_bytes());
            }
            w.push(b'\n');
        }
    }
    Ok(w)
}

/// The vertices of feature `f`, which must be a single LineString.
fn line_string<const D: usize>(args: &LocateArgs, lines: &crate::geom::Lines, f: usize) -> Result<Vec<[f64; D]>> {
    let parts: Vec<_> = lines.parts(f).collect();
    if parts.len() != 1 {
        bail!("{}: line {:?} has {} parts; locate needs a LineString", args.line.display(), lines.ids[f], parts.len());
    }
    Ok(lines.vertices[parts[0].clone()].iter().map(|p| std::array::from_fn(|k| p[k])).collect())
}
