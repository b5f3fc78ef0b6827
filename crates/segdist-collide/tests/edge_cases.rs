//! Each edge case the collision layer decides, by name.

mod common;

use common::{crossing, overlapping};
use segdist_collide::{BuildError, Feature, MoveOptions, Stopped, WallSet};

fn walls(build: impl FnOnce(&mut segdist_collide::WallSetBuilder)) -> WallSet {
    let mut b = WallSet::builder();
    build(&mut b);
    b.build().unwrap()
}

#[test]
fn concave_corner_resolves_both_walls_at_once() {
    let w = walls(|b| {
        b.push_polyline(&[[0.0, 10.0], [0.0, 0.0], [10.0, 0.0]]);
    });
    let r = w.resolve([0.3, 0.4], 1.0);
    assert!(r.converged);
    assert_eq!(r.iterations, 1, "both walls in one push");
    assert!(r.position[0] >= 1.0 && r.position[1] >= 1.0);
    assert!(r.position[0] < 1.0 + 1e-12 && r.position[1] < 1.0 + 1e-12, "the shortest push: {:?}", r.position);
    assert_eq!(overlapping(&w, r.position, 1.0), None);
}

#[test]
fn concave_corner_move_stops_without_jitter() {
    let w = walls(|b| {
        b.push_polyline(&[[0.0, 10.0], [0.0, 0.0], [10.0, 0.0]]);
    });
    let opts = MoveOptions::default();
    let mut p = [5.0, 5.0];
    let mut seen = Vec::new();
    for _ in 0..50 {
        let m = w.move_and_slide(p, 1.0, [-0.7, -0.4], &opts);
        p = m.position;
        seen.push(p);
    }
    assert!(p[0] < 1.1 && p[1] < 1.1, "in the corner: {p:?}");
    // Still: the last frames all give the same position, bit for bit.
    assert!(seen[40..].iter().all(|q| *q == p), "{:?}", &seen[40..]);
    assert_eq!(overlapping(&w, p, 1.0), None);
}

#[test]
fn convex_corner_rounds_off_with_a_vertex_normal() {
    let w = walls(|b| {
        b.push_polyline(&[[0.0, 10.0], [0.0, 0.0], [10.0, 0.0]]);
    });
    // Outside the corner, towards the vertex.
    let c = w.overlap([-0.5, -0.5], 1.0);
    assert_eq!(c.len(), 2);
    assert!(c.iter().all(|k| k.point == [0.0, 0.0] && k.feature != Feature::Edge));
    let r = w.resolve([-0.5f64, -0.5], 1.0);
    assert!(r.converged && r.iterations == 1);
    let (x, y) = (r.position[0], r.position[1]);
    assert!((x - y).abs() < 1e-15 && (x * x + y * y).sqrt() >= 1.0, "pushed along the diagonal: {:?}", r.position);
    // Sliding past the corner: around it, never into it.
    let m = w.move_and_slide([-1.5, 5.0], 1.0, [0.0, -8.0], &MoveOptions::default());
    assert_eq!(overlapping(&w, m.position, 1.0), None);
    assert!(m.position[1] < -0.5, "went round: {:?}", m.position);
}

#[test]
fn collinear_walls_sharing_a_vertex_do_not_snag() {
    // A floor of 100 unit pieces and one long floor: a circle sliding along
    // each ends in the same place, and pushes at the joints are straight up.
    let pieces = walls(|b| {
        let v: Vec<[f64; 2]> = (0..=100).map(|i| [i as f64, 0.0]).collect();
        b.push_polyline(&v);
    });
    let long = walls(|b| {
        b.push_segment([0.0, 0.0], [100.0, 0.0]);
    });
    let opts = MoveOptions::default();
    let (mut p, mut q) = ([0.5f64, 1.2], [0.5f64, 1.2]);
    for _ in 0..200 {
        p = pieces.move_and_slide(p, 1.0, [0.4, -0.3], &opts).position;
        q = long.move_and_slide(q, 1.0, [0.4, -0.3], &opts).position;
    }
    assert!(p[0] > 79.0, "slid along the pieces: {p:?}");
    assert!((p[0] - q[0]).abs() < 1e-9 && (p[1] - q[1]).abs() < 1e-9, "pieces {p:?}, one wall {q:?}");
    for x in [3.0, 3.2, 2.8] {
        let r = pieces.resolve([x, 0.5], 1.0);
        assert_eq!(r.position[0], x, "no sideways push at the joint");
        assert!(r.position[1] >= 1.0 && r.converged && r.iterations == 1);
    }
}

#[test]
fn zero_length_wall_is_a_point_obstacle() {
    let w = walls(|b| {
        b.push_segment([5.0, 5.0], [5.0, 5.0]);
    });
    let c = w.overlap([5.5, 5.0], 1.0);
    assert_eq!((c.len(), c[0].feature, c[0].normal), (1, Feature::Start, [1.0, 0.0]));
    let hit = w.cast([0.0f64, 5.0], 1.0, [10.0, 0.0]).unwrap();
    assert!(hit.position[0] <= 4.0 && hit.position[0] > 4.0 - 1e-12);
    assert_eq!(hit.normal, [-1.0, 0.0]);
}

#[test]
fn centre_exactly_on_a_wall_is_pushed_along_its_left_normal() {
    let w = walls(|b| {
        b.push_segment([0.0, 0.0], [10.0, 0.0]);
    });
    let c = w.overlap([4.0, 0.0], 0.5);
    assert_eq!((c[0].distance, c[0].depth, c[0].normal), (0.0, 0.5, [0.0, 1.0]));
    let r = w.resolve([4.0, 0.0], 0.5);
    assert_eq!(r.position[0], 4.0);
    assert!(r.position[1] >= 0.5 && r.position[1] < 0.5 + 1e-12);
    // And it may leave the wall in any direction: the cast lets it go.
    assert!(w.cast([4.0, 0.0], 0.5, [0.0, -3.0]).is_none());
}

#[test]
fn zero_radius_point_stops_before_touching_and_never_crosses() {
    let w = walls(|b| {
        b.push_segment([0.0, -1.0], [0.0, 1.0]);
    });
    let hit = w.cast([-1.0f64, 0.0], 0.0, [2.0, 0.0]).unwrap();
    assert!(hit.position[0] < 0.0 && hit.position[0] > -1e-14, "{:?}", hit.position);
    assert_eq!(crossing(&w, [-1.0, 0.0], hit.position), None);
    assert!(w.overlap([0.0, 0.5], 0.0).len() == 1 && w.overlap([1e-300, 0.5], 0.0).is_empty());
    assert!(w.resolve([0.0, 0.5], 0.0).converged, "a point on a wall does not overlap it");
    let m = w.move_and_slide([-1.0, 0.0], 0.0, [3.0, 0.5], &MoveOptions::default());
    assert!(m.position[0] < 0.0);
}

#[test]
fn zero_displacement_moves_nothing_but_frees_an_overlap() {
    let w = walls(|b| {
        b.push_segment([0.0, 0.0], [10.0, 0.0]);
    });
    assert!(w.cast([5.0, 0.5], 1.0, [0.0, 0.0]).is_none());
    let m = w.move_and_slide([5.0, 3.0], 1.0, [0.0, 0.0], &MoveOptions::default());
    assert_eq!((m.position, m.stopped, m.hits, m.pushes), ([5.0, 3.0], Stopped::Completed, 0, 0));
    let m = w.move_and_slide([5.0, 0.5], 1.0, [0.0, 0.0], &MoveOptions::default());
    assert!(m.position[1] >= 1.0 && m.pushes == 1);
}

#[test]
fn motion_parallel_to_a_wall_at_contact_runs_along_it() {
    let w = walls(|b| {
        b.push_segment([0.0, 0.0], [10.0, 0.0]);
    });
    // Touching (distance exactly r) and moving along: no contact.
    assert!(w.cast([2.0, 1.0], 1.0, [5.0, 0.0]).is_none());
    // Slightly into it: stopped at once, then slides along it.
    let hit = w.cast([2.0, 1.0], 1.0, [5.0, -1e-9]).unwrap();
    assert_eq!((hit.fraction, hit.position, hit.normal), (0.0, [2.0, 1.0], [0.0, 1.0]));
    let m = w.move_and_slide([2.0, 1.0], 1.0, [5.0, -1e-9], &MoveOptions::default());
    assert!(m.position[0] > 6.99 && m.position[1] >= 1.0, "{m:?}");
}

#[test]
fn grazing_contact_passes() {
    let w = walls(|b| {
        b.push_segment([5.0, 0.0], [5.0, -3.0]);
    });
    // Passes the wall's end at exactly distance 1: a touch, not an overlap.
    assert!(w.cast([0.0, 1.0], 1.0, [10.0, 0.0]).is_none());
    // One ulp closer: a contact at the vertex.
    let hit = w.cast([0.0, 1.0 - f64::EPSILON / 2.0], 1.0, [10.0, 0.0]).unwrap();
    assert_eq!((hit.feature, hit.point), (Feature::Start, [5.0, 0.0]));
}

#[test]
fn coordinates_around_1e6_and_1e7_in_f32_and_f64_never_tunnel() {
    for off in [1e6, 1e7, -1e7] {
        // f64: a thin wall, a fast move.
        let w = walls(|b| {
            b.push_segment([off, off - 1.0], [off, off + 1.0]);
        });
        let hit = w.cast([off - 20.0, off], 0.25, [40.0, 1e-7]).unwrap();
        assert!(
            hit.position[0] <= off - 0.25 && hit.position[0] > off - 0.25 - 1e-8,
            "f64 at {off}: {:?}",
            hit.position
        );
        assert_eq!(overlapping(&w, hit.position, 0.25), None);
        // f32: the ulp there is 0.0625 (1e6) or 1 (1e7).
        let o = off as f32;
        let w = walls(|b| {
            b.push_segment([o, o - 4.0], [o, o + 4.0]);
        });
        let m = w.move_and_slide([o - 40.0, o], 2.0f32, [80.0, 0.0], &MoveOptions::default());
        let p = [f64::from(m.position[0]), f64::from(m.position[1])];
        assert!(p[0] <= f64::from(o) - 2.0, "f32 at {off}: {p:?}");
        assert_eq!(overlapping(&w, p, 2.0), None);
        assert_eq!(crossing(&w, [f64::from(o) - 40.0, f64::from(o)], p), None);
    }
}

#[test]
fn one_sided_walls_block_from_the_front_only() {
    let w = walls(|b| {
        b.push_one_sided_polyline(&[[0.0, 0.0], [10.0, 0.0]]);
    });
    assert!(w.cast([5.0, 3.0], 1.0, [0.0, -6.0]).is_some());
    assert!(w.cast([5.0, -3.0], 1.0, [0.0, 6.0]).is_none());
    assert!(w.overlap([5.0, -0.5], 1.0).is_empty(), "centre behind: no contact");
    assert_eq!(w.overlap([5.0, 0.5], 1.0).len(), 1);
    // Up through it, then pushed out on top.
    let m = w.move_and_slide([5.0, -3.0], 1.0, [0.0, 3.5], &MoveOptions::default());
    assert_eq!(m.position, [5.0, 0.5]);
    let m = w.move_and_slide(m.position, 1.0, [0.0, 0.0], &MoveOptions::default());
    assert!(m.position[1] >= 1.0);
}

#[test]
fn non_finite_input_answers_nothing_and_never_panics() {
    let w = walls(|b| {
        b.push_segment([0.0, 0.0], [10.0, 0.0]);
    });
    for bad in [f64::NAN, f64::INFINITY] {
        assert!(w.overlap([bad, 0.0], 1.0).is_empty());
        assert!(w.cast([0.0, 1.0], 1.0, [bad, 0.0]).is_none());
        assert!(!w.resolve([0.0, bad], 1.0).converged);
        assert_eq!(w.move_and_slide([0.0, 3.0], bad, [1.0, 0.0], &MoveOptions::default()).stopped, Stopped::Invalid);
    }
    assert!(w.overlap([5.0, 0.0], -1.0).is_empty());
    assert_eq!(w.move_and_slide([0.0, 3.0], -1.0, [1.0, 0.0], &MoveOptions::default()).stopped, Stopped::Invalid);
}

#[test]
fn bad_walls_are_refused_with_their_id() {
    let mut b = WallSet::builder();
    b.push_polyline(&[[0.0, 0.0], [1.0, 0.0], [1.0, f64::NAN]]);
    assert_eq!(b.build().unwrap_err(), BuildError::NonFinite { wall: 1, vertex: 1 });
    let mut b = WallSet::builder();
    b.push_segment([0.0, 0.0], [1e200, 0.0]);
    assert_eq!(b.build().unwrap_err(), BuildError::TooLarge { wall: 0 });
    let mut b = WallSet::builder();
    b.cell_size(0.0);
    assert_eq!(b.build().unwrap_err(), BuildError::BadCellSize);
    assert_eq!(
        BuildError::NonFinite { wall: 1, vertex: 1 }.to_string(),
        "wall 1: vertex 1 has a NaN or infinite coordinate"
    );
}

#[test]
fn empty_wall_set_blocks_nothing() {
    let w = WallSet::builder().build().unwrap();
    assert!(w.overlap([0.0, 0.0], 1.0).is_empty() && w.cast([0.0, 0.0], 1.0, [5.0, 5.0]).is_none());
    let m = w.move_and_slide([0.0, 0.0], 1.0, [5.0, 5.0], &MoveOptions::default());
    assert_eq!((m.position, m.stopped), ([5.0, 5.0], Stopped::Completed));
}

#[test]
fn a_move_after_a_push_out_sees_the_walls_near_where_it_was_pushed() {
    // A corridor a little wider than the circle: pushed out of the floor,
    // then asked up: the ceiling (beyond the start's reach, within the
    // pushed position's) must stop it.
    let w = walls(|b| {
        b.push_segment([-10.0, 0.0], [10.0, 0.0]);
        b.push_segment([-10.0, 2.02], [10.0, 2.02]);
    });
    let m = w.move_and_slide([0.0, 0.1], 1.0, [0.0, 0.05], &MoveOptions::default());
    assert_eq!(m.pushes, 1);
    assert_eq!(overlapping(&w, m.position, 1.0), None, "{m:?}");
}
