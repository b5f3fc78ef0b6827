//! `geo`: the geographic kernels, single queries, against GeographicLib's
//! inverse problem (one point-to-point distance) as the unit of cost.

use std::hint::black_box;

use geographiclib_rs::{DirectGeodesic, Geodesic, InverseGeodesic};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::report::{interleaved, Record};

pub fn run(quick: bool) {
    let (n, reps) = if quick { (2_000, 1) } else { (20_000, 5) };
    let g = Geodesic::wgs84();
    let mut r = ChaCha8Rng::seed_from_u64(5);
    // Road-sized segments (10 m to 2 km) anywhere below 80°, points within
    // 200 m of them: the snapping workload.
    let cases: Vec<([f64; 2], [f64; 2], [f64; 2])> = (0..n)
        .map(|_| {
            let a = [r.gen_range(-180.0..180.0), r.gen_range(-80.0..80.0)];
            let (lat, lon): (f64, f64) = g.direct(a[1], a[0], r.gen_range(0.0..360.0), r.gen_range(10.0..2000.0));
            let (plat, plon): (f64, f64) = g.direct(lat, lon, r.gen_range(0.0..360.0), r.gen_range(0.0..200.0));
            (a, [lon, lat], [plon, plat])
        })
        .collect();
    let times = interleaved(
        reps,
        &mut [
            &mut || {
                for (a, b, p) in &cases {
                    black_box(segdist_geo::geodesic(*a, *b, *p));
                }
            },
            &mut || {
                for (a, b, p) in &cases {
                    black_box(segdist_geo::sphere(*a, *b, *p, segdist_geo::MEAN_EARTH_RADIUS));
                }
            },
            &mut || {
                for (a, _, p) in &cases {
                    let d: f64 = g.inverse(a[1], a[0], p[1], p[0]);
                    black_box(d);
                }
            },
        ],
    );
    let names = ["segdist-geodesic", "segdist-sphere", "geographiclib-inverse"];
    let mut out = Vec::new();
    for (imp, t) in names.into_iter().zip(times) {
        out.push(Record {
            workload: "geo_point_segment".to_string(),
            imp,
            n,
            threads: 1,
            ns_per_query: t * 1e9 / n as f64,
            extra: Vec::new(),
        });
    }
    out.extend(index(quick));
    for rec in &out {
        rec.print();
    }
    crate::report::markdown(&out, "geographiclib-inverse");
}

/// Nearest road for lon/lat points: `GeoIndex` (metres on the ellipsoid,
/// exact) against the planar index on the same numbers (degrees, what a
/// planar tool computes), all cores.
fn index(quick: bool) -> Vec<Record> {
    let (lines_n, n, reps) = if quick { (2_000, 20_000, 1) } else { (20_000, 200_000, 3) };
    let mut r = ChaCha8Rng::seed_from_u64(6);
    // Random-walk streets of 20–300 m steps over a 40 km × 30 km city.
    let lines: Vec<Vec<[f64; 2]>> = (0..lines_n)
        .map(|_| {
            let mut v = [24.6 + r.gen::<f64>() * 0.7, 60.05 + r.gen::<f64>() * 0.27];
            let mut l = vec![v];
            for _ in 0..r.gen_range(2..9) {
                v = [v[0] + r.gen_range(-0.004..0.004), v[1] + r.gen_range(-0.002..0.002)];
                l.push(v);
            }
            l
        })
        .collect();
    let segments: usize = lines.iter().map(|l| l.len() - 1).sum();
    let pts: Vec<[f64; 2]> = (0..n).map(|_| [24.6 + r.gen::<f64>() * 0.7, 60.05 + r.gen::<f64>() * 0.27]).collect();
    let t = std::time::Instant::now();
    let geo = segdist_geo::GeoIndex::from_polylines(&lines).expect("lon/lat");
    let build_geo = t.elapsed().as_secs_f64() * 1e3;
    let planar = segdist_index::Index::<2>::from_polylines(&lines).expect("finite");
    let opts = segdist_index::QueryOptions::default();
    let threads = rayon::current_num_threads();
    let times = interleaved(
        reps,
        &mut [
            &mut || {
                black_box(geo.nearest_many(&pts, f64::INFINITY));
            },
            &mut || {
                black_box(planar.nearest_many(&pts, &opts));
            },
        ],
    );
    let w = format!("geo_nearest_{segments}_segments");
    let rec = |imp, t: f64, build: Option<f64>| {
        let mut extra = vec![("queries_per_s".to_string(), format!("{:.0}", n as f64 / t))];
        if let Some(b) = build {
            extra.push(("build_ms".to_string(), format!("{b:.1}")));
        }
        Record { workload: w.clone(), imp, n, threads, ns_per_query: t * 1e9 / n as f64, extra }
    };
    vec![rec("segdist-geo-index", times[0], Some(build_geo)), rec("segdist-index-planar-degrees", times[1], None)]
}
