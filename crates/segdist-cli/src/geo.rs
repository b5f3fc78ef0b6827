//! `segdist snap` on longitude/latitude: metres on the WGS84 ellipsoid,
//! through segdist-geo's exact index over geodesic segments.

use std::time::Instant;

use anyhow::{anyhow, Result};
use rayon::prelude::*;
use segdist_geo::{GeoHit, GeoIndex};

use crate::geom::Lines;
use crate::output::progress_bar;
use crate::output::Output;
use crate::parquet_out::{kept_values, OutHit, OutRow, Sink};
use crate::points::{PointReader, Pt};
use crate::snap::{field, OutFormat, SnapArgs, Times, CHUNK};

/// The index and every vertex's distance (metres) along its part.
struct GeoSnapper {
    index: GeoIndex,
    cum: Vec<f64>,
}

impl GeoSnapper {
    fn new(lines: &Lines, name: &str) -> Result<Self> {
        let v: Vec<[f64; 2]> = lines.vertices.iter().map(|p| [p[0], p[1]]).collect();
        let features: Vec<Vec<&[[f64; 2]]>> =
            (0..lines.len()).map(|f| lines.parts(f).map(|r| &v[r]).collect()).collect();
        let index = GeoIndex::from_multi_polylines(features.iter().map(Vec::as_slice))
            .map_err(|e| anyhow!("{name}: {e} (with --geographic, x is longitude and y latitude)"))?;
        let mut cum = Vec::with_capacity(v.len());
        for f in 0..lines.len() {
            for part in lines.parts(f) {
                cum.extend(segdist_geo::geodesic_lengths(&v[part]));
            }
        }
        Ok(GeoSnapper { index, cum })
    }

    /// `(along, fraction)` of a hit, in metres within its part.
    fn along(&self, lines: &Lines, h: &GeoHit) -> (f64, f64) {
        let part = lines.feature_start[h.feature] + h.part;
        along(&self.cum[lines.part_start[part]..lines.part_start[part + 1]], h)
    }
}

/// `(along, fraction)` of a hit on the line whose [`segdist_geo::geodesic_lengths`] are
/// `cum`.
fn along(cum: &[f64], h: &GeoHit) -> (f64, f64) {
    let along = segdist_geo::along_line(cum, h.segment, &h.projection);
    (along, segdist_index::fraction(cum, along))
}

pub fn snap(
    args: &SnapArgs,
    lines: &Lines,
    points: &mut PointReader,
    first: Vec<Pt>,
    kept: &[String],
    out: &mut Output,
    times: &mut Times,
) -> Result<()> {
    let mut out = Sink::open(out, args, kept, None, true, false)?;
    let kept_header = crate::points::csv_header(kept);
    let t = Instant::now();
    let snapper = GeoSnapper::new(lines, &args.lines.display().to_string())?;
    times.index += t.elapsed();
    let max_distance = args.max_distance.unwrap_or(f64::INFINITY);
    let progress = progress_bar(args.quiet, points.len);
    let geojson = args.output_format == OutFormat::Geojson;
    let mut head = if geojson {
        String::from("{\"type\":\"FeatureCollection\",\"features\":[\n")
    } else {
        format!("{kept_header}point_id")
    };
    if !geojson {
        if args.k > 1 {
            head.push_str(",rank");
        }
        head.push_str(",line_id,part,segment,distance_m,lon,lat,t,along_m,fraction\n");
    }
    let mut chunk = first;
    let mut first_row = true;
    let mut head = Some(head);
    while !chunk.is_empty() {
        let t = Instant::now();
        let pts: Vec<[f64; 2]> = chunk.iter().map(|p| [p.p[0], p.p[1]]).collect();
        crate::geom::check_latitudes(&points.name, &chunk)?;
        // The header once the first chunk has passed: a bad first chunk
        // leaves standard output empty.
        if let Some(h) = head.take() {
            out.write_all(h.as_bytes())?;
        }
        let hits: Vec<Vec<GeoHit>> = if args.k == 1 {
            snapper.index.nearest_many(&pts, max_distance).into_iter().map(|h| h.into_iter().collect()).collect()
        } else {
            pts.par_iter().map(|p| snapper.index.k_nearest_within(*p, args.k, max_distance)).collect()
        };
        times.query += t.elapsed();
        let t = Instant::now();
        if let Sink::Parquet(pq) = &mut out {
            pq.write(&out_rows(lines, &snapper, &chunk, &hits))?;
        }
        let mut buf = ryu::Buffer::new();
        let mut w = Vec::with_capacity(chunk.len() * 120);
        for ((pt, p), hs) in chunk.iter().zip(&pts).zip(&hits) {
            if matches!(out, Sink::Parquet(_)) {
                break;
            }
            if geojson {
                rows_geojson(&mut w, &mut first_row, args, lines, &snapper, pt, p, hs);
                continue;
            }
            if hs.is_empty() {
                w.extend(pt.kept.as_bytes());
                field(&mut w, &pt.id);
                w.extend(std::iter::repeat_n(b',', 9 + usize::from(args.k > 1)));
                w.push(b'\n');
            }
            for (rank, h) in hs.iter().enumerate() {
                let (along, fraction) = snapper.along(lines, h);
                w.extend(pt.kept.as_bytes());
                field(&mut w, &pt.id);
                if args.k > 1 {
                    w.extend(format!(",{}", rank + 1).as_bytes());
                }
                w.push(b',');
                field(&mut w, &lines.ids[h.feature]);
                w.extend(format!(",{},{}", h.part, h.segment).as_bytes());
                let pr = &h.projection;
                for x in [pr.distance, pr.point[0], pr.point[1], pr.t, along, fraction] {
                    w.push(b',');
                    w.extend(buf.format(x).as_bytes());
                }
                w.push(b'\n');
            }
        }
        out.write_all(&w)?;
        times.write += t.elapsed();
        times.points += chunk.len();
        progress.set_position(points.position());
        let t = Instant::now();
        points.next_chunk(CHUNK, &mut chunk)?;
        times.read += t.elapsed();
    }
    if let Some(h) = head.take() {
        out.write_all(h.as_bytes())?;
    }
    if geojson {
        out.write_all(b"\n]}\n")?;
    }
    out.finish()?;
    progress.finish_and_clear();
    Ok(())
}

/// The rows of a chunk for Parquet.
fn out_rows<'c>(lines: &'c Lines, snapper: &GeoSnapper, chunk: &'c [Pt], hits: &[Vec<GeoHit>]) -> Vec<OutRow<'c>> {
    let mut rows = Vec::with_capacity(chunk.len());
    for (pt, hs) in chunk.iter().zip(hits) {
        let kept = kept_values(&pt.kept);
        if hs.is_empty() {
            rows.push(OutRow { kept: kept.clone(), point_id: &pt.id, rank: 1, hit: None });
        }
        for (rank, h) in hs.iter().enumerate() {
            let (along, fraction) = snapper.along(lines, h);
            let pr = &h.projection;
            let hit = OutHit {
                line_id: &lines.ids[h.feature],
                part: h.part as u64,
                segment: h.segment as u64,
                distance: pr.distance,
                point: [pr.point[0], pr.point[1], 0.0],
                t: pr.t,
                along,
                fraction: Some(fraction),
            };
            rows.push(OutRow { kept: kept.clone(), point_id: &pt.id, rank: rank as u32 + 1, hit: Some(hit) });
        }
    }
    rows
}

#[allow(clippy::too_many_arguments)]
fn rows_geojson(
    w: &mut Vec<u8>,
    first_row: &mut bool,
    args: &SnapArgs,
    lines: &Lines,
    snapper: &GeoSnapper,
    pt: &Pt,
    p: &[f64; 2],
    hs: &[GeoHit],
) {
    let js = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string());
    let mut push = |w: &mut Vec<u8>, feature: String| {
        if !*first_row {
            w.extend(b",\n");
        }
        *first_row = false;
        w.extend(feature.as_bytes());
    };
    let n = |x: f64| ryu::Buffer::new().format(x).to_string();
    if hs.is_empty() {
        push(
            w,
            format!(
                "{{\"type\":\"Feature\",\"geometry\":null,\"properties\":{{{}\"point_id\":{},\"line_id\":null}}}}",
                pt.kept,
                js(&pt.id)
            ),
        );
    }
    for (rank, h) in hs.iter().enumerate() {
        let (along, fraction) = snapper.along(lines, h);
        let pr = &h.projection;
        let q = format!("{},{}", n(pr.point[0]), n(pr.point[1]));
        push(
            w,
            format!(
                "{{\"type\":\"Feature\",\"geometry\":{{\"type\":\"Point\",\"coordinates\":[{q}]}},\"properties\":{{{}\"point_id\":{},\"rank\":{},\"line_id\":{},\"part\":{},\"segment\":{},\"distance_m\":{},\"t\":{},\"along_m\":{},\"fraction\":{}{}}}}}",
                pt.kept,
                js(&pt.id),
                rank + 1,
                js(&lines.ids[h.feature]),
                h.part,
                h.segment,
                n(pr.distance),
                n(pr.t),
                n(along),
                n(fraction),
                if args.connectors { ",\"kind\":\"snapped\"" } else { "" }
            ),
        );
        if args.connectors {
            push(
                w,
                format!(
                    "{{\"type\":\"Feature\",\"geometry\":{{\"type\":\"LineString\",\"coordinates\":[[{},{}],[{q}]]}},\"properties\":{{\"point_id\":{},\"rank\":{},\"line_id\":{},\"kind\":\"connector\"}}}}",
                    n(p[0]),
                    n(p[1]),
                    js(&pt.id),
                    rank + 1,
                    js(&lines.ids[h.feature])
                ),
            );
        }
    }
}
