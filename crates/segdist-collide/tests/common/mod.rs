//! The tests' reference: brute force over every wall with the exact
//! predicates taken straight from their sources (segdist's
//! `Segment::cmp_distance`, robust's orientation), and a sub-stepped sweep,
//! none of it through the crate's grid, filters or casts.

#![allow(dead_code)]

use std::cmp::Ordering;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist::Segment2;
use segdist_collide::{Point, Wall, WallSet};

pub fn orient(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    robust::orient2d(
        robust::Coord { x: a[0], y: a[1] },
        robust::Coord { x: b[0], y: b[1] },
        robust::Coord { x: c[0], y: c[1] },
    )
}

fn behind(w: &Wall, p: [f64; 2]) -> bool {
    w.one_sided && orient(w.a, w.b, p) < 0.0
}

/// Does the circle at `p` overlap `w` (`r = 0`: lie on it)?
pub fn overlaps_wall(w: &Wall, p: [f64; 2], r: f64) -> bool {
    if behind(w, p) {
        return false;
    }
    match Segment2::new(w.a, w.b).cmp_distance(p, r) {
        Some(Ordering::Less) => true,
        Some(Ordering::Equal) => r == 0.0,
        _ => false,
    }
}

/// The first wall the circle at `p` overlaps, by brute force.
pub fn overlapping(walls: &WallSet, p: [f64; 2], r: f64) -> Option<usize> {
    walls.walls().iter().position(|w| overlaps_wall(w, p, r))
}

/// The first wall the circle at `p` overlaps that it did not pass through
/// from behind (a one-sided wall whose back `from` is on).
pub fn overlapping_from(walls: &WallSet, from: [f64; 2], p: [f64; 2], r: f64) -> Option<usize> {
    walls.walls().iter().position(|w| !behind(w, from) && overlaps_wall(w, p, r))
}

/// The first wall whose segment `[c, p]` properly crosses from its front
/// (a one-sided wall may be crossed from behind).
pub fn crossing(walls: &WallSet, c: [f64; 2], p: [f64; 2]) -> Option<usize> {
    walls.walls().iter().position(|w| {
        if behind(w, c) {
            return false;
        }
        let (o1, o2) = (orient(w.a, w.b, c), orient(w.a, w.b, p));
        let (o3, o4) = (orient(c, p, w.a), orient(c, p, w.b));
        o1 * o2 < 0.0 && o3 * o4 < 0.0
    })
}

/// The first of `k` sub-steps of `c → p` at which the circle overlaps a wall
/// it did not overlap at `c`, as a fraction, or `None`; and the first wall
/// the path crosses.
pub fn sweep(walls: &WallSet, c: [f64; 2], p: [f64; 2], r: f64, k: usize) -> (Option<f64>, Option<usize>) {
    // Walls the circle overlaps at the start, and one-sided walls whose back
    // it starts on (it passes through those), are not the move's.
    let free: Vec<bool> = walls.walls().iter().map(|w| !overlaps_wall(w, c, r) && !behind(w, c)).collect();
    let first = (1..=k).map(|i| i as f64 / k as f64).find(|&s| {
        let x = [c[0] + s * (p[0] - c[0]), c[1] + s * (p[1] - c[1])];
        walls.walls().iter().zip(&free).any(|(w, &f)| f && overlaps_wall(w, x, r))
    });
    (first, crossing(walls, c, p))
}

/// A random level in the square `[off, off + 20]²`: segments, polylines,
/// zero-length walls, a polygon, some one-sided; coordinates rounded to
/// `P`'s type.
pub fn level<P: Point>(seed: u64, off: f64) -> WallSet {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let pt = |x: f64, y: f64| P::from_array([x, y].map(|v| <P::Scalar as segdist::Scalar>::from_f64(off + v)));
    let mut b = WallSet::builder();
    for _ in 0..30 {
        let (x, y) = (rng.gen_range(0.0..20.0), rng.gen_range(0.0..20.0));
        let (ang, len): (f64, f64) = (rng.gen_range(0.0..6.3), rng.gen_range(0.3..6.0));
        b.push_segment(pt(x, y), pt(x + len * ang.cos(), y + len * ang.sin()));
    }
    for i in 0..4 {
        let mut v = vec![pt(rng.gen_range(0.0..20.0), rng.gen_range(0.0..20.0))];
        let (mut x, mut y) = (rng.gen_range(0.0..20.0), rng.gen_range(0.0..20.0));
        for _ in 0..5 {
            x += rng.gen_range(-3.0..3.0);
            y += rng.gen_range(-3.0..3.0);
            v.push(pt(x, y));
        }
        if i % 2 == 0 {
            b.push_polyline(&v);
        } else {
            b.push_one_sided_polyline(&v);
        }
    }
    for _ in 0..3 {
        let p = pt(rng.gen_range(0.0..20.0), rng.gen_range(0.0..20.0));
        b.push_segment(p, p);
    }
    let (x, y) = (rng.gen_range(2.0..16.0), rng.gen_range(2.0..16.0));
    b.push_solid_polygon(&[pt(x, y), pt(x + 2.0, y), pt(x + 2.0, y + 1.5), pt(x, y + 2.5)]);
    b.push_polygon(&[pt(0.0, 0.0), pt(20.0, 0.0), pt(20.0, 20.0), pt(0.0, 20.0)]);
    b.build().unwrap()
}

/// A random free start in the level (rounded to `P`'s type) for radius `r`.
pub fn free_start<P: Point>(walls: &WallSet, rng: &mut ChaCha8Rng, off: f64, r: f64) -> [f64; 2] {
    loop {
        let p = [off + rng.gen_range(0.5..19.5), off + rng.gen_range(0.5..19.5)]
            .map(|v| segdist::Scalar::to_f64(<P::Scalar as segdist::Scalar>::from_f64(v)));
        if overlapping(walls, p, r).is_none() {
            return p;
        }
    }
}

/// `x` rounded to `P`.
pub fn to<P: Point>(x: [f64; 2]) -> P {
    P::from_array(x.map(<P::Scalar as segdist::Scalar>::from_f64))
}

/// `p` in `f64`.
pub fn of<P: Point>(p: P) -> [f64; 2] {
    p.to_array().map(segdist::Scalar::to_f64)
}
