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
    for rec in &out {
        rec.print();
    }
    crate::report::markdown(&out, "geographiclib-inverse");
}
