//! `segdist demo`: the main job on bundled data, in one command.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use crate::geom::InputOpts;
use crate::snap::{OutFormat, SnapArgs};

/// The bundled example data: OpenStreetMap roads and points of central
/// Helsinki (© OpenStreetMap contributors, ODbL).
const ROADS: &str = include_str!("../../../examples/helsinki/roads.geojson");
const POINTS: &str = include_str!("../../../examples/helsinki/points.geojson");
/// The attribution the ODbL asks for wherever the data are shown.
pub const CREDIT: &str = "© OpenStreetMap contributors, data available under the Open Database License (ODbL), https://www.openstreetmap.org/copyright";

/// Snaps 2,311 OpenStreetMap points of central Helsinki to its 2,577 roads
/// (bundled with segdist), and writes the input, the result (snapped.csv)
/// and a picture (snapped.svg) into a directory. Coordinates are WGS84
/// longitude/latitude; distances are metres on the ellipsoid.
#[derive(Args, Debug)]
#[command(after_help = "Example:\n  segdist demo --dir /tmp/segdist-demo")]
pub struct DemoArgs {
    /// Where to write the files (created if needed).
    #[arg(long, value_name = "DIR", default_value = "segdist-demo")]
    pub dir: PathBuf,
}

pub fn run(args: &DemoArgs) -> Result<()> {
    let dir = &args.dir;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let roads = dir.join("roads.geojson");
    let points = dir.join("points.geojson");
    std::fs::write(&roads, ROADS).with_context(|| format!("cannot write {}", roads.display()))?;
    std::fs::write(&points, POINTS).with_context(|| format!("cannot write {}", points.display()))?;
    let input = InputOpts {
        lines_format: None,
        points_format: None,
        id_column: "id".into(),
        x_column: None,
        y_column: None,
        z_column: "z".into(),
        id_property: Some("osm_id".into()),
        geometry_column: None,
        delimiter: None,
    };
    let csv = dir.join("snapped.csv");
    let snap = SnapArgs {
        points: points.clone(),
        lines: roads.clone(),
        out: Some(csv.clone()),
        k: 1,
        max_distance: None,
        output_format: OutFormat::Csv,
        connectors: false,
        f32: false,
        threads: None,
        input: input.clone(),
        keep: crate::points::KeepOpts { keep: "all".into() },
        quiet: true,
        timings: false,
        geographic: true,
        planar: false,
    };
    crate::snap::run(&snap)?;

    let lines = crate::geom::read_lines(&roads, &input)?;
    let mut reader = crate::points::PointReader::open(&points, &input)?;
    let mut pts = Vec::new();
    reader.next_chunk(usize::MAX, &mut pts)?;
    let svg = crate::plot::picture(&lines, &pts, 3000, f64::INFINITY, Some(CREDIT), true)?;
    let pic = dir.join("snapped.svg");
    std::fs::write(&pic, svg).with_context(|| format!("cannot write {}", pic.display()))?;

    let mut rdr = csv::Reader::from_path(&csv)?;
    let column = rdr.headers()?.iter().position(|h| h == "distance_m");
    let mut d: Vec<f64> =
        rdr.records().filter_map(|r| r.ok().and_then(|r| r.get(column?).and_then(|x| x.parse().ok()))).collect();
    d.sort_by(f64::total_cmp);
    let median = d.get(d.len() / 2).copied().unwrap_or(f64::NAN);
    println!("Snapped {} points to the nearest of {} roads (central Helsinki, OpenStreetMap).", pts.len(), lines.len());
    println!(
        "Distance to the nearest road on the WGS84 ellipsoid: median {median:.1} m, max {:.1} m.",
        d.last().copied().unwrap_or(f64::NAN)
    );
    println!("Wrote, in {}:", dir.display());
    println!("  roads.geojson, points.geojson   the input");
    println!("  snapped.csv                     the points' properties, then point_id, line_id, part, segment,");
    println!("                                  distance_m, lon, lat, t, along_m, fraction");
    println!("  snapped.svg                     roads, points, connectors and closest points");
    println!("Data: {CREDIT}");
    Ok(())
}
