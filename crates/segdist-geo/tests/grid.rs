//! GeoGrid against GeoIndex (itself tested against brute force): for its
//! radius, the same k nearest segments, bit for bit, in dense streets,
//! across the antimeridian, near a pole, with long roads (large sagitta),
//! ties at a junction, and networks spread round the Earth; and its grouped
//! search, which leaves out what a nearer segment of its group surely beats.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist_geo::{GeoHit, GeoIndex, GeoPoint};

mod common;

use common::Lines;

/// Random-walk roads of `step` degrees around a centre, within `spread`.
fn roads(r: &mut ChaCha8Rng, centre: [f64; 2], n: usize, spread: f64, step: f64) -> Lines {
    let lat = |x: f64| x.clamp(-90.0, 90.0);
    (0..n)
        .map(|_| {
            let mut v = [centre[0] + r.gen_range(-spread..spread), lat(centre[1] + r.gen_range(-spread..spread) / 2.0)];
            let mut line = vec![v];
            for _ in 0..r.gen_range(1..6) {
                v = [v[0] + r.gen_range(-step..step), lat(v[1] + r.gen_range(-step..step) / 2.0)];
                line.push(v);
            }
            line
        })
        .collect()
}

/// Queries near the roads' vertices and anywhere around them.
/// Returns how many hits were found, and how many of them a grouped search
/// left out.
fn check(lines: &Lines, radii: &[f64], r: &mut ChaCha8Rng, queries: usize) -> (usize, usize) {
    let index = GeoIndex::from_polylines(lines).unwrap();
    let segments: Vec<[[f64; 2]; 2]> = lines.iter().flat_map(|l| l.windows(2).map(|w| [w[0], w[1]])).collect();
    let (mut found, mut left_out) = (0, 0);
    for &radius in radii {
        let grid = index.grid(radius).expect("a grid");
        assert_eq!(grid.radius(), radius);
        let mut hits: Vec<GeoHit> = Vec::new();
        for i in 0..queries {
            // A vertex, near one, or near a segment's middle (where a long
            // road's arc is metres from its chord), up to about the radius.
            let [a, b] = segments[r.gen_range(0..segments.len())];
            let (v, d) = match i % 3 {
                0 => (a, 0.0),
                1 => (a, radius * 2e-5),
                _ => ([(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0], radius * 1.5e-5),
            };
            let p = [v[0] + r.gen_range(-d..=d), (v[1] + r.gen_range(-d..=d)).clamp(-90.0, 90.0)];
            for k in [1, 2, 5, 16] {
                grid.k_nearest_within(p, k, &mut hits);
                assert_eq!(hits, index.k_nearest_within(p, k, radius), "k {k}, radius {radius} at {p:?}");
                found += hits.len();
                // Grouped (a line a group, or three lines a group): the same
                // list less segments farther than one before them in their
                // group, so the same nearest of each group in the same order.
                for per in [1, 3] {
                    let group = |line: usize, _: usize, _: usize| (line / per) as u32;
                    let mut grouped = Vec::new();
                    grid.k_nearest_within_of_grouped(&GeoPoint::new(p).unwrap(), k, group, &mut grouped);
                    let first_of_each = |hits: &[GeoHit]| {
                        let mut seen = Vec::new();
                        hits.iter()
                            .filter(|h| {
                                let g = group(h.feature, h.part, h.segment);
                                !seen.contains(&g) && {
                                    seen.push(g);
                                    true
                                }
                            })
                            .copied()
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(first_of_each(&grouped), first_of_each(&hits), "k {k}, radius {radius} at {p:?}");
                    let mut rest = hits.iter();
                    for g in &grouped {
                        assert!(rest.any(|h| h == g), "grouped hits are the list's, in its order");
                    }
                    for h in hits.iter().filter(|h| !grouped.contains(h)) {
                        let g = group(h.feature, h.part, h.segment);
                        assert!(
                            grouped.iter().any(|o| group(o.feature, o.part, o.segment) == g
                                && o.projection.distance < h.projection.distance),
                            "only segments farther than their group's are left out"
                        );
                    }
                    left_out += hits.len() - grouped.len();
                }
            }
        }
    }
    (found, left_out)
}

#[test]
fn dense_streets_answer_as_the_index() {
    let mut r = ChaCha8Rng::seed_from_u64(1);
    let lines = roads(&mut r, [24.94, 60.17], 600, 0.02, 0.0008);
    let (found, left_out) = check(&lines, &[5.0, 30.0, 50.0, 200.0], &mut r, 1500);
    assert!(found > 10_000, "{found}");
    // The grouped search did leave segments out (and not most of them).
    assert!(left_out > 1000 && left_out < 2 * found, "{left_out} of {found}");
}

#[test]
fn the_antimeridian_a_pole_and_long_roads_answer_as_the_index() {
    let mut r = ChaCha8Rng::seed_from_u64(2);
    let mut lines = roads(&mut r, [179.99, -16.5], 200, 0.02, 0.001);
    lines.extend(roads(&mut r, [-179.99, -16.5], 200, 0.02, 0.001));
    check(&lines, &[40.0, 100.0], &mut r, 600);
    let lines = roads(&mut r, [10.0, 89.99], 300, 0.01, 0.002);
    check(&lines, &[40.0, 300.0], &mut r, 600);
    // Roads of tens of kilometres: chords metres inside their arcs.
    let lines = roads(&mut r, [24.9, 60.2], 60, 0.3, 0.3);
    check(&lines, &[50.0, 2000.0], &mut r, 600);
}

#[test]
fn a_network_round_the_earth_answers_as_the_index() {
    // Towns on several continents: the tangent plane folds, lists lengthen,
    // answers stay the index's.
    let mut r = ChaCha8Rng::seed_from_u64(3);
    let mut lines = Lines::new();
    for centre in [[24.9, 60.2], [-74.0, 40.7], [151.2, -33.9], [116.4, 39.9], [-58.4, -34.6]] {
        lines.extend(roads(&mut r, centre, 120, 0.01, 0.001));
    }
    check(&lines, &[30.0, 80.0], &mut r, 800);
}

#[test]
fn ties_at_a_junction_answer_as_the_index() {
    let c = [24.94, 60.17];
    let lines = common::star(c);
    let index = GeoIndex::from_polylines(&lines).unwrap();
    let grid = index.grid(50.0).unwrap();
    let mut hits = Vec::new();
    for k in [1, 3, 12, 20] {
        grid.k_nearest_within(c, k, &mut hits);
        assert_eq!(hits, index.k_nearest_within(c, k, 50.0), "k {k}");
        assert_eq!(hits.len(), k.min(12));
    }
}

#[test]
fn no_grid_and_no_answers_where_none_belong() {
    let index = GeoIndex::from_polylines(&[vec![[0.0, 0.0], [0.001, 0.0]]]).unwrap();
    assert!(index.grid(0.0).is_none());
    assert!(index.grid(-1.0).is_none());
    assert!(index.grid(f64::NAN).is_none());
    assert!(index.grid(f64::INFINITY).is_none());
    let empty = GeoIndex::from_polylines::<Vec<[f64; 2]>>(&[]).unwrap();
    assert!(empty.grid(50.0).is_none());
    let grid = index.grid(50.0).unwrap();
    let mut hits = vec![];
    for p in [[f64::NAN, 0.0], [0.0, 91.0], [f64::INFINITY, 0.0], [90.0, 0.0], [0.0005, 0.0]] {
        for k in [0, 1] {
            grid.k_nearest_within(p, k, &mut hits);
            assert_eq!(hits, index.k_nearest_within(p, k, 50.0), "{p:?}, k {k}");
        }
    }
    // A cell for a point on the grid only: off it, or not lon/lat, none
    // (and no answers); on it, its memory asked for, nothing else.
    for p in [[f64::NAN, 0.0], [0.0, 91.0], [f64::INFINITY, 0.0], [90.0, 0.0], [0.001, 0.1]] {
        assert_eq!(grid.cell(p), None, "{p:?}");
        grid.k_nearest_within(p, 1, &mut hits);
        assert!(hits.is_empty(), "{p:?}");
    }
    let cell = grid.cell([0.0005, 0.0]).expect("on the grid");
    grid.prefetch_list(cell);
    grid.prefetch_chords(cell);
    assert_eq!(grid.cell([0.000501, 0.0]), Some(cell));
    assert_ne!(grid.cell([0.0005, 0.0003]), Some(cell));
}
