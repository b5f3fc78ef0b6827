//! Linear referencing against a direct computation over all segments.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist::Segment;
use segdist_index::{BuildError, Polyline, QueryOptions};

/// A random walk of `n` vertices with some repeated vertices (zero-length
/// segments) and some sharp turns back over itself.
fn walk(r: &mut ChaCha8Rng, n: usize) -> Vec<[f64; 2]> {
    let mut v = [500_000.0, 6_700_000.0];
    let mut heading = 0.0f64;
    let mut line = vec![v];
    for i in 1..n {
        heading += if i % 50 == 0 { 3.0 } else { (r.r#gen::<f64>() - 0.5) * 0.7 };
        let step = if i % 17 == 0 { 0.0 } else { 1.0 + r.r#gen::<f64>() * 20.0 };
        v = [v[0] + step * heading.cos(), v[1] + step * heading.sin()];
        line.push(v);
    }
    line
}

/// The scan that `line_locate_point` does: nearest segment by the accurate
/// kernel, first wins ties, and the summed length up to it.
fn direct(line: &[[f64; 2]], p: [f64; 2]) -> (usize, f64, f64, f64) {
    let mut best = (0, 0.0, f64::INFINITY);
    for (i, w) in line.windows(2).enumerate() {
        let r = Segment::new(w[0], w[1]).closest_point(p);
        if r.distance < best.2 {
            best = (i, r.t, r.distance);
        }
    }
    let len = |i: usize| Segment::new(line[i], line[i]).distance(line[i + 1]);
    let along: f64 = (0..best.0).map(len).sum::<f64>() + best.1 * len(best.0);
    (best.0, best.1, best.2, along)
}

#[test]
fn locate_matches_a_scan_of_every_segment() {
    let mut r = ChaCha8Rng::seed_from_u64(7);
    let line = walk(&mut r, 3000);
    let route = Polyline::new(&line).unwrap();
    let mut points = Vec::new();
    for i in 0..1500 {
        let s = r.gen_range(0..line.len() - 1);
        let t: f64 = r.r#gen();
        let (a, b) = (line[s], line[s + 1]);
        let noise = if i % 3 == 0 { 0.0 } else { 30.0 };
        points.push([
            a[0] + t * (b[0] - a[0]) + (r.r#gen::<f64>() - 0.5) * noise,
            a[1] + t * (b[1] - a[1]) + (r.r#gen::<f64>() - 0.5) * noise,
        ]);
    }
    points.extend(line.iter().step_by(7).copied()); // vertices: ties between two segments
    let many = route.locate_many(&points, &QueryOptions::default());
    for (p, m) in points.iter().zip(&many) {
        let at = route.locate(*p).unwrap();
        assert_eq!(Some(at), *m, "batch at {p:?}");
        let (segment, t, distance, along) = direct(&line, *p);
        assert_eq!((at.segment, at.t, at.distance), (segment, t, distance), "at {p:?}");
        // The naive sum drifts by a few ulps over 3000 segments.
        assert!((at.along - along).abs() <= 1e-12 * along.max(1.0), "{} vs {along} at {p:?}", at.along);
        assert!((0.0..=1.0).contains(&at.fraction));
        assert_eq!(at.fraction, (at.along / route.length()).min(1.0));
    }
}

#[test]
fn point_at_inverts_locate() {
    let mut r = ChaCha8Rng::seed_from_u64(8);
    let line = walk(&mut r, 500);
    let route = Polyline::new(&line).unwrap();
    for i in 0..=1000 {
        let s = route.length() * f64::from(i) / 1000.0;
        let q = route.point_at(s).unwrap();
        let at = route.locate(q).unwrap();
        // The point lies on the line; locating it gives back its distance
        // along (up to rounding), unless the line passes there twice.
        // A few ulps of coordinates near 7e6 (ulp 9.3e-10).
        assert!(at.distance <= 1e-8, "{} off the line", at.distance);
        if (at.along - s).abs() > 1e-6 {
            let again = route.point_at(at.along).unwrap();
            assert!(Segment::new(again, again).distance(q) <= 1e-8);
        }
    }
    assert_eq!(route.point_at(0.0), Some(line[0]));
    assert_eq!(route.point_at(route.length()), Some(line[line.len() - 1]));
    assert_eq!(route.point_at_fraction(-3.0), Some(line[0]));
    assert_eq!(route.point_at_fraction(7.0), Some(line[line.len() - 1]));
    assert_eq!(route.point_at_fraction(f64::NAN), None);
    assert_eq!(route.point_at(f64::INFINITY), Some(line[line.len() - 1]));
}

#[test]
fn vertices_locate_at_their_cumulative_length() {
    let line = [[0.0, 0.0], [3.0, 4.0], [3.0, 4.0], [3.0, 10.0], [0.0, 10.0]];
    let route = Polyline::new(&line).unwrap();
    assert_eq!(route.length(), 14.0);
    for (i, v) in line.iter().enumerate() {
        let at = route.locate(*v).unwrap();
        assert_eq!((at.along, at.distance), (route.vertex_along(i).unwrap(), 0.0), "vertex {i}");
    }
    // The repeated vertex: the lowest segment that reaches it wins.
    assert_eq!(route.locate([3.0, 4.0]).unwrap().segment, 0);
    assert_eq!(route.point_at(5.0), Some([3.0, 4.0]));
}

#[test]
fn degenerate_lines() {
    // Zero length: every point locates at along = 0, fraction = 0.
    let route = Polyline::new(&[[1.0, 1.0], [1.0, 1.0]]).unwrap();
    let at = route.locate([4.0, 5.0]).unwrap();
    assert_eq!((at.along, at.fraction, at.distance), (0.0, 0.0, 5.0));
    assert_eq!(route.point_at_fraction(0.5), Some([1.0, 1.0]));

    assert_eq!(
        Polyline::<2>::new(&[[0.0, 0.0]]).unwrap_err(),
        BuildError::TooFewVertices { feature: 0, part: 0, vertices: 1 }
    );
    let route = Polyline::new(&[[0.0, 0.0, 0.0], [0.0, 0.0, 2.0]]).unwrap();
    assert!(route.locate([f64::NAN, 0.0, 0.0]).is_none());
    assert_eq!(route.locate([1.0, 0.0, 1.5]).unwrap().fraction, 0.75);
}
