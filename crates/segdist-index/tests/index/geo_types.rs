//! The `geo-types` feature: an index built from `LineString`s,
//! `MultiLineString`s and `Line`s answers exactly as one built from the same
//! coordinates, bit for bit, and a `Polyline` from a `LineString` locates
//! as one from its vertices.
#![cfg(feature = "geo-types")]

use geo_types::{Coord, Line, LineString, MultiLineString, Point};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist_index::{Index, IndexBuilder, Polyline};

#[test]
fn geo_types_inputs_answer_as_their_coordinates() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut walk = |n: usize| -> Vec<[f64; 2]> {
        let mut p = [rng.gen_range(0.0..1000.0), rng.gen_range(0.0..1000.0)];
        (0..n)
            .map(|_| {
                p = [p[0] + rng.gen_range(-20.0..20.0), p[1] + rng.gen_range(-20.0..20.0)];
                p
            })
            .collect()
    };
    let lines: Vec<Vec<[f64; 2]>> = (0..300).map(|i| walk(2 + i % 5)).collect();
    let to_ls = |v: &[[f64; 2]]| LineString::from(v.iter().map(|p| Coord { x: p[0], y: p[1] }).collect::<Vec<_>>());

    // The same features three ways: arrays; LineStrings, MultiLineStrings
    // (pairs of lines) and Lines (first segments).
    let mut plain = IndexBuilder::<2>::new();
    let mut geo = IndexBuilder::<2>::new();
    for (i, l) in lines.iter().enumerate() {
        match i % 3 {
            0 => {
                plain.push_polyline(l);
                geo.push_line_string(&to_ls(l));
            }
            1 => {
                let other = &lines[(i + 7) % lines.len()];
                plain.push_multi_polyline([&l[..], &other[..]]);
                geo.push_multi_line_string(&MultiLineString::new(vec![to_ls(l), to_ls(other)]));
            }
            _ => {
                plain.push_segment(l[0], l[1]);
                geo.push_geo_line(&Line::new(Coord { x: l[0][0], y: l[0][1] }, Coord { x: l[1][0], y: l[1][1] }));
            }
        }
    }
    let (plain, geo) = (plain.build().unwrap(), geo.build().unwrap());
    let only_strings = Index::from_line_strings(&lines.iter().map(|l| to_ls(l)).collect::<Vec<_>>()).unwrap();
    let only_arrays = Index::<2>::from_polylines(&lines).unwrap();
    for _ in 0..2000 {
        let p = Point::new(rng.gen_range(-50.0..1050.0), rng.gen_range(-50.0..1050.0));
        assert_eq!(geo.nearest(p.into()), plain.nearest(p.into()));
        assert_eq!(geo.k_nearest(p.into(), 4), plain.k_nearest(p.into(), 4));
        assert_eq!(only_strings.nearest(p.into()), only_arrays.nearest(p.into()));
    }
    let route = Polyline::try_from(&to_ls(&lines[4])).unwrap();
    assert_eq!(route.locate([500.0, 500.0]), Polyline::new(&lines[4]).unwrap().locate([500.0, 500.0]));
    assert!(Polyline::try_from(&LineString::<f64>::new(vec![])).is_err());
}
