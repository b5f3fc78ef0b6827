//! Random levels and motions against the brute-force, sub-stepped exact
//! reference (tests/common): a cast never passes a wall the reference hits
//! first, and stops at the contact; move-and-slide never ends inside a wall
//! nor crosses or overlaps one on any of its straight pieces. At the origin,
//! at 1e6 and at 1e7, in f64 and in f32.

mod common;

use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist::{Scalar, Segment2};
use segdist_collide::{MoveOptions, Point, WallSet};

const RADII: [f64; 4] = [0.0, 0.1, 0.5, 1.25];

fn casts<P: Point>(seed: u64, off: f64, casts: usize) {
    let walls = level::<P>(seed, off);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xca57);
    let ulp =
        if std::mem::size_of::<P::Scalar>() == 4 { f64::from(f32::EPSILON) } else { f64::EPSILON } * (off.abs() + 20.0);
    let (mut hits, mut misses) = (0, 0);
    for i in 0..casts {
        let r = RADII[i % RADII.len()];
        let c = free_start::<P>(&walls, &mut rng, off, r);
        let len = if i % 3 == 0 { rng.gen_range(0.0..0.5) } else { rng.gen_range(0.0..12.0) };
        let ang: f64 = rng.gen_range(0.0..std::f64::consts::TAU);
        let d = of(to::<P>([len * ang.cos(), len * ang.sin()]));
        let e = of(to::<P>([c[0] + d[0], c[1] + d[1]]));
        let hit = walls.cast(to::<P>(c), P::Scalar::from_f64(r), to::<P>(d));
        let (first, _) = sweep(&walls, c, e, r, 128);
        let end = match hit {
            None => {
                misses += 1;
                assert_eq!(
                    first, None,
                    "case {i}: the reference hits at {first:?}, the cast found nothing (r {r}, {c:?} + {d:?})"
                );
                e
            }
            Some(h) => {
                hits += 1;
                let f = h.fraction.to_f64();
                assert!((0.0..=1.0).contains(&f));
                if let Some(s) = first {
                    assert!(f <= s + 1e-9, "case {i}: stopped at {f}, past the reference's first overlap at {s}");
                }
                let p = of(h.position);
                // At the contact: the hit wall is within rounding of r
                // (unless the start already touched it and the move headed in).
                let w = walls.wall(h.wall);
                let dist = Segment2::new(w.a, w.b).distance(p);
                assert!(dist >= r - 1e-300 || f == 0.0);
                assert!(
                    f == 0.0 || dist <= r + r / 1e6 + 64.0 * ulp,
                    "case {i}: stopped {dist} from the wall, radius {r}"
                );
                p
            }
        };
        // The path to where it stopped: no overlap at any sub-step, no crossing.
        let (over, crossed) = sweep(&walls, c, end, r, 256);
        assert_eq!(
            (over, crossed),
            (None, None),
            "case {i}: the path to {end:?} overlaps or crosses (r {r}, {c:?} + {d:?})"
        );
        assert_eq!(overlapping_from(&walls, c, end, r), None, "case {i}: ends inside a wall");
    }
    assert!(hits > casts / 10 && misses > casts / 10, "{hits} hits, {misses} misses: the cases test both");
}

#[test]
fn cast_never_passes_what_the_substepped_reference_hits_first_f64() {
    for (seed, off) in [(1, 0.0), (2, 1e6), (3, 1e7), (4, -3.5e6)] {
        casts::<[f64; 2]>(seed, off, 400);
    }
}

#[test]
fn cast_never_passes_what_the_substepped_reference_hits_first_f32() {
    for (seed, off) in [(5, 0.0), (6, 1e6), (7, 1e7)] {
        casts::<[f32; 2]>(seed, off, 400);
    }
}

fn wander<P: Point>(seed: u64, off: f64, agents: usize, frames: usize) {
    let walls = level::<P>(seed, off);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let opts = MoveOptions::default();
    let mut state: Vec<([f64; 2], f64, f64)> = (0..agents)
        .map(|i| {
            let r = RADII[i % RADII.len()];
            (free_start::<P>(&walls, &mut rng, off, r), r, rng.gen_range(0.0..std::f64::consts::TAU))
        })
        .collect();
    let (mut hits, mut stuck) = (0, 0);
    for frame in 0..frames {
        for (k, (pos, r, heading)) in state.iter_mut().enumerate() {
            *heading += rng.gen_range(-0.4..0.4);
            let speed = if k % 5 == 0 { 3.0 } else { 0.4 };
            let d = [speed * heading.cos(), speed * heading.sin()];
            let (m, legs) = segdist_collide::__testing::move_legs(
                &walls,
                to::<P>(*pos),
                P::Scalar::from_f64(*r),
                to::<P>(d),
                &opts,
            );
            hits += m.hits;
            // Came through a one-sided wall into a nook too small for it:
            // it may leave, never go deeper; it may end overlapping.
            stuck += usize::from(m.trapped);
            let mut from = *pos;
            for (l, &to_) in legs.iter().enumerate() {
                if l == 0 {
                    // The push-out (a position correction, not a sweep: the
                    // circle overlapped a one-sided wall it came through
                    // from behind): it must not jump through a wall.
                    assert_eq!(crossing(&walls, from, to_), None, "frame {frame} agent {k}: the push crosses a wall");
                    assert!(m.pushes > 0 && !m.trapped || to_ == from);
                    from = to_;
                    continue;
                }
                let (over, crossed) = sweep(&walls, from, to_, *r, 32);
                assert_eq!(
                    (over, crossed),
                    (None, None),
                    "frame {frame} agent {k}: a leg {from:?} → {to_:?} overlaps or crosses (r {r})"
                );
                from = to_;
            }
            let end = of(m.position);
            assert_eq!(Some(&end), legs.last());
            if !m.trapped {
                assert_eq!(
                    overlapping_from(&walls, *pos, end, *r),
                    None,
                    "frame {frame} agent {k}: ends inside a wall"
                );
            }
            *pos = end;
        }
    }
    assert!(hits as usize > agents * frames / 20, "the agents met walls ({hits} contacts)");
    assert!(stuck * 20 < agents * frames, "{stuck} moves trapped");
}

#[test]
fn move_and_slide_never_ends_inside_a_wall_nor_crosses_one_f64() {
    for (seed, off) in [(11, 0.0), (12, 1e6), (13, 1e7)] {
        wander::<[f64; 2]>(seed, off, 24, 60);
    }
}

#[test]
fn move_and_slide_never_ends_inside_a_wall_nor_crosses_one_f32() {
    for (seed, off) in [(14, 0.0), (15, 1e6), (16, 1e7)] {
        wander::<[f32; 2]>(seed, off, 24, 60);
    }
}

#[test]
fn overlap_and_resolve_match_brute_force() {
    for (seed, off) in [(21, 0.0), (22, 1e7)] {
        let walls = level::<[f64; 2]>(seed, off);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for i in 0..2000 {
            let r = RADII[i % RADII.len()] + 0.3;
            let c = [off + rng.gen_range(-1.0..21.0), off + rng.gen_range(-1.0..21.0)];
            let got: Vec<usize> = walls.overlap(c, r).iter().map(|h| h.wall).collect();
            let want: Vec<usize> = (0..walls.len())
                .filter(|&w| {
                    let wall = walls.wall(w);
                    let behind = wall.one_sided && orient(wall.a, wall.b, c) < 0.0;
                    !behind && Segment2::new(wall.a, wall.b).intersects_ball(c, r)
                })
                .collect();
            assert_eq!(got, want, "case {i}");
            let res = walls.resolve(c, r);
            if res.converged {
                assert_eq!(overlapping(&walls, res.position, r), None, "case {i}: resolve says free");
            }
        }
    }
}

#[test]
fn long_diagonal_walls_are_found_in_every_cell_they_cross() {
    // A grid of small cells and long walls at odd angles: the broadphase's
    // conservative cover, checked against brute force everywhere.
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let mut b = WallSet::builder();
    b.cell_size(0.37);
    for _ in 0..40 {
        let a = [rng.gen_range(0.0..50.0), rng.gen_range(0.0..50.0)];
        let ang: f64 = rng.gen_range(0.0..6.3);
        b.push_segment(a, [a[0] + 40.0 * ang.cos(), a[1] + 40.0 * ang.sin()]);
    }
    let walls = b.build().unwrap();
    for _ in 0..5000 {
        let c = [rng.gen_range(-10.0..60.0), rng.gen_range(-10.0..60.0)];
        let got: Vec<usize> = walls.overlap(c, 0.2).iter().map(|h| h.wall).collect();
        let want: Vec<usize> = (0..walls.len())
            .filter(|&w| Segment2::new(walls.wall(w).a, walls.wall(w).b).intersects_ball(c, 0.2))
            .collect();
        assert_eq!(got, want);
    }
}
