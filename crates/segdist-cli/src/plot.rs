//! `segdist plot`: the visual check, made real: lines, points, the short
//! connector from each point to its closest point, and the closest points,
//! as an SVG picture fitted to the data.
//!
//! The SVG is written by hand: it is a few elements of text, and a drawing
//! crate would bring more than it gives here.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::geom::{read_lines, InputOpts, Lines};
use crate::output::Output;
use crate::points::{PointReader, Pt};
use crate::snap::Snapper;

/// Draws lines (grey), points (blue), the connector from each point to its
/// closest point on the nearest line (orange) and those closest points
/// (red), fitted to the data, as SVG. Beyond --max-points points an evenly
/// spaced sample is drawn, and the picture says so. 3D data are drawn from
/// above (x, y).
#[derive(Args, Debug)]
#[command(after_help = "Example:\n  segdist plot --points fixes.csv --lines roads.geojson -o picture.svg")]
pub struct PlotArgs {
    /// The points.
    #[arg(long, value_name = "FILE")]
    pub points: PathBuf,
    /// The lines.
    #[arg(long, value_name = "FILE")]
    pub lines: PathBuf,
    /// The SVG file to write (atomically); standard output if not given.
    #[arg(short, long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Draw at most this many points (an evenly spaced sample beyond).
    #[arg(long, value_name = "N", default_value_t = 3000)]
    pub max_points: usize,
    /// Connect only points within this distance of a line.
    #[arg(long, value_name = "R")]
    pub max_distance: Option<f64>,
    #[command(flatten)]
    pub input: InputOpts,
}

pub fn run(args: &PlotArgs) -> Result<()> {
    let lines = read_lines(&args.lines, &args.input)?;
    let mut reader = PointReader::open(&args.points, &args.input)?;
    let mut all = Vec::new();
    let mut chunk = Vec::new();
    loop {
        reader.next_chunk(1 << 16, &mut chunk)?;
        if chunk.is_empty() {
            break;
        }
        all.append(&mut chunk);
    }
    let files = [(args.lines.as_path(), args.input.lines_format), (args.points.as_path(), args.input.points_format)];
    let lonlat = crate::geom::is_lonlat(files, lines.lonlat_names || reader.lonlat_names(), false, false);
    let svg = picture(&lines, &all, args.max_points, args.max_distance.unwrap_or(f64::INFINITY), None, lonlat)?;
    let mut out = Output::open(args.out.as_deref())?;
    out.write_all(svg.as_bytes())?;
    out.finish()
}

/// The SVG text. `credit`, if given, is printed at the foot (data
/// attribution); `lonlat` draws longitude/latitude to local scale.
pub fn picture(
    lines: &Lines,
    points: &[Pt],
    max_points: usize,
    max_distance: f64,
    credit: Option<&str>,
    lonlat: bool,
) -> Result<String> {
    let total = points.len();
    let step = total.div_ceil(max_points.max(1)).max(1);
    let sample: Vec<&Pt> = points.iter().step_by(step).collect();
    if step > 1 {
        eprintln!("segdist: plot: drawing {} of {total} points (every {step}th)", sample.len());
    }
    let snapper = Snapper::<2>::new(lines)?;
    let pts: Vec<[f64; 2]> = sample.iter().map(|p| [p.p[0], p.p[1]]).collect();
    let hits = snapper.query(&pts, 1, max_distance);

    // Fit: the box of everything, 3% margin, y up.
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in lines.vertices.iter().map(|v| [v[0], v[1]]).chain(pts.iter().copied()) {
        for k in 0..2 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if lo[0] > hi[0] {
        (lo, hi) = ([0.0, 0.0], [1.0, 1.0]);
    }
    // Longitude/latitude data (GeoJSON) are drawn with a degree of
    // longitude shortened by the cosine of the middle latitude, so that
    // shapes look as they do on a local map.
    let sx = if lonlat { ((lo[1] + hi[1]) / 2.0).to_radians().cos().max(0.01) } else { 1.0 };
    let (lo0, hi0) = (lo[0] * sx, hi[0] * sx);
    let span = (hi0 - lo0).max(hi[1] - lo[1]).max(f64::MIN_POSITIVE);
    // The longer side 940 px, a 30 px margin, 40 px at the foot for notes.
    let scale = 940.0 / span;
    let (w, h) = ((hi0 - lo0) * scale + 60.0, (hi[1] - lo[1]) * scale + 100.0);
    let x = |v: f64| (v * sx - lo0) * scale + 30.0;
    let y = |v: f64| (hi[1] - v) * scale + 30.0;

    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.1} {h:.1}\" font-family=\"sans-serif\" font-size=\"13\">"
    );
    let note = if step > 1 { format!(" (a sample of {} of {total} points)", sample.len()) } else { String::new() };
    let _ = writeln!(s, "<title>segdist: {} lines, {} points{note}</title>", lines.len(), total);
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(s, "<g fill=\"none\" stroke=\"#9a9a9a\" stroke-width=\"1.6\" stroke-linejoin=\"round\">");
    for f in 0..lines.len() {
        for part in lines.parts(f) {
            let pts: Vec<String> =
                lines.vertices[part].iter().map(|v| format!("{:.2},{:.2}", x(v[0]), y(v[1]))).collect();
            let _ = writeln!(s, "<polyline points=\"{}\"/>", pts.join(" "));
        }
    }
    s.push_str("</g>\n<g stroke=\"#f28e2b\" stroke-width=\"1.2\">\n");
    for (i, p) in pts.iter().enumerate() {
        if let Some(h) = hits.get(i).first() {
            let _ = writeln!(
                s,
                "<line x1=\"{:.2}\" y1=\"{:.2}\" x2=\"{:.2}\" y2=\"{:.2}\"/>",
                x(p[0]),
                y(p[1]),
                x(h.point[0]),
                y(h.point[1])
            );
        }
    }
    s.push_str("</g>\n<g fill=\"#1f77b4\">\n");
    for p in &pts {
        let _ = writeln!(s, "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"2.6\"/>", x(p[0]), y(p[1]));
    }
    s.push_str("</g>\n<g fill=\"#d62728\">\n");
    for h in (0..pts.len()).filter_map(|i| hits.get(i).first()) {
        let _ = writeln!(s, "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"2\"/>", x(h.point[0]), y(h.point[1]));
    }
    s.push_str("</g>\n");
    let legend = [
        ("#9a9a9a", "lines"),
        ("#1f77b4", "points"),
        ("#f28e2b", "to the closest point"),
        ("#d62728", "closest points"),
    ];
    for (i, (c, t)) in legend.iter().enumerate() {
        let ly = 20.0 + 18.0 * i as f64;
        let _ = writeln!(
            s,
            "<rect x=\"8\" y=\"{:.0}\" width=\"12\" height=\"12\" fill=\"{c}\"/><text x=\"26\" y=\"{:.0}\">{t}</text>",
            ly - 10.0,
            ly
        );
    }
    if step > 1 {
        let _ = writeln!(s, "<text x=\"8\" y=\"{:.0}\">{}</text>", 20.0 + 18.0 * 4.0, note.trim());
    }
    if let Some(c) = credit {
        // Two lines, so that it fits narrow pictures too.
        let (first, rest) = c.split_once(", ").unwrap_or((c, ""));
        for (i, line) in [first, rest].iter().filter(|l| !l.is_empty()).enumerate() {
            let _ = writeln!(
                s,
                "<text x=\"8\" y=\"{:.0}\" font-size=\"11\" fill=\"#555\">{}</text>",
                h - 24.0 + 14.0 * i as f64,
                escape(line)
            );
        }
    }
    s.push_str("</svg>\n");
    Ok(s)
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
