//! GeoIndex against brute force with the geodesic kernel: same segment,
//! same bits.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist_geo::{geodesic, GeoHit, GeoIndex};

mod common;

use common::Lines;

/// Random-walk roads of 20–300 m steps around a centre.
fn roads(r: &mut ChaCha8Rng, centre: [f64; 2], n: usize) -> Lines {
    (0..n)
        .map(|_| {
            let mut v =
                [centre[0] + r.gen_range(-0.05..0.05), (centre[1] + r.gen_range(-0.03..0.03)).clamp(-90.0, 90.0)];
            let mut line = vec![v];
            for _ in 0..r.gen_range(1..8) {
                v = [v[0] + r.gen_range(-0.003..0.003), (v[1] + r.gen_range(-0.002..0.002)).clamp(-90.0, 90.0)];
                line.push(v);
            }
            line
        })
        .collect()
}

/// Every segment's hit, ranked as the index ranks.
fn brute(lines: &Lines, p: [f64; 2]) -> Vec<GeoHit> {
    let mut all = Vec::new();
    for (feature, l) in lines.iter().enumerate() {
        for segment in 0..l.len() - 1 {
            if let Some(projection) = geodesic(l[segment], l[segment + 1], p) {
                all.push(GeoHit { feature, part: 0, segment, projection });
            }
        }
    }
    all.sort_by(|x, y| x.projection.distance.total_cmp(&y.projection.distance));
    all
}

fn check(lines: &Lines, points: &[[f64; 2]]) {
    let index = GeoIndex::from_polylines(lines).unwrap();
    let many = index.nearest_many(points, f64::INFINITY);
    for (p, m) in points.iter().zip(&many) {
        let all = brute(lines, *p);
        assert_eq!(index.nearest(*p), all.first().copied(), "nearest at {p:?}");
        assert_eq!(*m, all.first().copied(), "nearest_many at {p:?}");
        let r = 150.0;
        let want: Vec<GeoHit> = all.iter().copied().filter(|h| h.projection.distance <= r).collect();
        assert_eq!(index.within(*p, r), want, "within at {p:?}");
        assert_eq!(index.nearest_within(*p, r), want.first().copied(), "nearest_within at {p:?}");
        assert_eq!(
            index.k_nearest_within(*p, 3, f64::INFINITY),
            all[..all.len().min(3)].to_vec(),
            "k_nearest at {p:?}"
        );
        for k in [1, 3, 16] {
            let near = &want[..want.len().min(k)];
            assert_eq!(index.k_nearest_within(*p, k, r), near, "k_nearest_within({k}, {r}) at {p:?}");
        }
    }
}

fn points(r: &mut ChaCha8Rng, centre: [f64; 2], n: usize) -> Vec<[f64; 2]> {
    (0..n)
        .map(|_| [centre[0] + r.gen_range(-0.06..0.06), (centre[1] + r.gen_range(-0.04..0.04)).clamp(-90.0, 90.0)])
        .collect()
}

#[test]
fn cities_match_brute_force() {
    let mut r = ChaCha8Rng::seed_from_u64(1);
    for centre in [[24.94, 60.17], [-58.4, -34.6], [151.2, -33.9]] {
        let lines = roads(&mut r, centre, 120);
        let pts = points(&mut r, centre, 150);
        check(&lines, &pts);
    }
}

#[test]
fn the_antimeridian_and_high_latitudes_match_brute_force() {
    let mut r = ChaCha8Rng::seed_from_u64(2);
    // Fiji, across 180°: longitudes on both sides.
    let lines: Lines = roads(&mut r, [179.98, -17.8], 120)
        .into_iter()
        .map(|l| l.into_iter().map(|p| [if p[0] > 180.0 { p[0] - 360.0 } else { p[0] }, p[1]]).collect())
        .collect();
    let pts: Vec<[f64; 2]> = points(&mut r, [179.98, -17.8], 150)
        .into_iter()
        .map(|p| [if p[0] > 180.0 { p[0] - 360.0 } else { p[0] }, p[1]])
        .collect();
    check(&lines, &pts);
    // Svalbard and beyond.
    let lines = roads(&mut r, [15.6, 89.95], 80);
    let pts = points(&mut r, [15.6, 89.95], 100);
    check(&lines, &pts);
}

#[test]
fn long_segments_and_ties_match_brute_force() {
    // Long lines (sagitta of kilometres) and duplicated roads (exact ties).
    let mut lines: Lines =
        vec![vec![[0.0, 0.0], [20.0, 10.0]], vec![[-10.0, 5.0], [30.0, 5.0]], vec![[5.0, -5.0], [5.0, 15.0]]];
    lines.push(lines[1].clone());
    let mut r = ChaCha8Rng::seed_from_u64(3);
    let pts: Vec<[f64; 2]> = (0..150).map(|_| [r.gen_range(-10.0..30.0), r.gen_range(-5.0..15.0)]).collect();
    check(&lines, &pts);
    let index = GeoIndex::from_polylines(&lines).unwrap();
    assert_eq!(index.nearest([0.0, 5.0]).unwrap().feature, 1, "the lower of two equal ids");
}

/// Dense streets and a few long roads (their chords metres inside the
/// arcs), where the k nearest within a limit fill up and a chord just past
/// the k-th distance's reach decides: the search may stop only there.
#[test]
fn k_nearest_within_in_dense_streets_matches_brute_force() {
    let mut r = ChaCha8Rng::seed_from_u64(4);
    let centre = [24.94, 60.17];
    let mut lines: Lines = (0..400)
        .map(|_| {
            let a = [centre[0] + r.gen_range(-0.01..0.01), centre[1] + r.gen_range(-0.005..0.005)];
            vec![a, [a[0] + r.gen_range(-0.0006..0.0006), a[1] + r.gen_range(-0.0003..0.0003)]]
        })
        .collect();
    for _ in 0..40 {
        let (dx, dy) = (r.gen_range(-0.6..0.6), r.gen_range(-0.3..0.3));
        let c = [centre[0] + r.gen_range(-0.01..0.01), centre[1] + r.gen_range(-0.005..0.005)];
        lines.push(vec![[c[0] - dx, c[1] - dy], [c[0] + dx, c[1] + dy]]);
    }
    let index = GeoIndex::from_polylines(&lines).unwrap();
    let mut filled = 0;
    for _ in 0..400 {
        let p = [centre[0] + r.gen_range(-0.01..0.01), centre[1] + r.gen_range(-0.005..0.005)];
        let all = brute(&lines, p);
        for (k, limit) in [(1, 100.0), (4, 150.0), (8, 200.0), (16, 250.0), (40, 120.0)] {
            let want: Vec<GeoHit> = all.iter().copied().filter(|h| h.projection.distance <= limit).take(k).collect();
            filled += usize::from(want.len() == k);
            assert_eq!(index.k_nearest_within(p, k, limit), want, "k {k}, limit {limit} at {p:?}");
        }
    }
    assert!(filled > 1000, "{filled}");
}

/// Twelve roads from one junction: at the junction all are at distance 0
/// (ties by lowest id), so a k-nearest walk runs past the first k + 4
/// chords it fetches and must fetch them all.
#[test]
fn a_star_of_ties_matches_brute_force() {
    let c = [24.94, 60.17];
    let lines = common::star(c);
    let index = GeoIndex::from_polylines(&lines).unwrap();
    for p in [c, [c[0] + 1e-7, c[1]], [c[0] + 2e-4, c[1] + 1e-4], [c[0] - 1e-3, c[1]]] {
        let all = brute(&lines, p);
        for (k, limit) in [(1, 50.0), (3, 50.0), (5, 1.0), (12, 500.0), (20, 100.0)] {
            let want: Vec<GeoHit> = all.iter().copied().filter(|h| h.projection.distance <= limit).take(k).collect();
            assert_eq!(index.k_nearest_within(p, k, limit), want, "k {k}, limit {limit} at {p:?}");
        }
    }
    assert_eq!(index.k_nearest_within(c, 2, 10.0).iter().map(|h| h.feature).collect::<Vec<_>>(), [0, 1]);
}

#[test]
fn bad_input() {
    let e = GeoIndex::from_polylines(&[vec![[0.0, 0.0], [f64::NAN, 1.0]]]).err().unwrap();
    assert_eq!(e, segdist_geo::GeoBuildError::NotLonLat { feature: 0, part: 0, vertex: 1 });
    assert!(GeoIndex::from_polylines(&[vec![[0.0, 0.0]]]).is_err());
    let index = GeoIndex::from_polylines(&[vec![[0.0, 0.0], [1.0, 1.0]]]).unwrap();
    assert!(index.nearest([0.0, 91.0]).is_none());
    assert!(index.within([0.0, 0.0], -1.0).is_empty());
}
