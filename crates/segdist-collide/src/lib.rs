//! Circles moving among thousands of walls, exactly: the collision layer of
//! a top-down game, on segdist's exact kernels.
//!
//! A [`WallSet`] is a static level built once from segments, polylines and
//! polygons (two-sided, or one-sided walls and solid polygons). It answers,
//! for a circle of any radius, in `f32` or `f64`:
//!
//! | query | answer |
//! |---|---|
//! | [`overlap`](WallSet::overlap) | every wall the circle touches: [`Contact`] (point, normal, depth, wall, [`Feature`]) |
//! | [`resolve`](WallSet::resolve) | the push-out against all of them together ([`Resolution`]) |
//! | [`cast`](WallSet::cast) | the first contact along a move ([`CastHit`]), never past it |
//! | [`move_and_slide`](WallSet::move_and_slide) | a character mover: cast, stop a skin short, slide, repeat ([`Move`]) |
//! | [`move_and_slide_many`](WallSet::move_and_slide_many) | that for every [`Agent`] at once, on all cores |
//!
//! ```
//! use segdist_collide::{MoveOptions, WallSet};
//!
//! let mut level = WallSet::builder();
//! level.push_polygon(&[[0.0, 0.0], [20.0, 0.0], [20.0, 10.0], [0.0, 10.0]]); // a room
//! level.push_segment([10.0, 0.0], [10.0, 6.0]); // a thin wall inside
//! let level = level.build().unwrap();
//!
//! let (mut pos, radius) = ([2.0f32, 2.0], 0.5);
//! for _ in 0..60 {
//!     let m = level.move_and_slide(pos, radius, [0.5, 0.05], &MoveOptions::default());
//!     pos = m.position;
//! }
//! assert!(pos[0] < 10.0 - 0.5); // stopped by the thin wall, never through it
//! assert!(level.overlap(pos, radius).is_empty());
//! ```
//!
//! # What "exact" means here
//!
//! Every decision is taken on the exact values of the given floats:
//! whether a circle overlaps a wall (segdist's faithfully rounded distance,
//! and exact integer arithmetic when that is too close to call), whether a
//! path crosses a wall (Shewchuk's adaptive orientation). The positions
//! returned are rounded to the caller's type and then *checked* with those
//! predicates: a cast or a move never returns a position past the true
//! contact and never one whose straight path from the start overlaps a
//! wall, at `1e7` from the origin as at `1`, in `f32` as in `f64`. No
//! tolerance, so nothing that breaks far from the origin; fast casts
//! through thin walls do not tunnel.
//!
//! # Determinism
//!
//! The same input gives the same bits on every CPU and thread count: the
//! arithmetic is plain IEEE `f64` (Rust never contracts it into fused
//! multiply-adds), segdist's kernels give the same bits with and without
//! FMA, and agents are moved independently. `tests/determinism.rs` checks
//! one thread against two.
//!
//! # Vector types
//!
//! Queries are generic over [`Point`]: `[f32; 2]`, `[f64; 2]`, and with the
//! features `glam` and `mint`, `glam::Vec2`, `glam::DVec2`,
//! `mint::Vector2`, `mint::Point2`. Answers come back in the type given.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod cast;
mod demo;
mod mover;
mod point;
mod predicates;
mod query;
mod walls;

pub use cast::CastHit;
pub use mover::{Agent, Move, MoveOptions, Stopped};
pub use point::Point;
pub use query::{Contact, Feature, Resolution};
pub use walls::{BuildError, Wall, WallSet, WallSetBuilder};

/// Hooks for this crate's own tests. Not part of the API.
#[doc(hidden)]
pub mod __testing {
    pub use crate::demo::{maze, maze_walls, Crowd, Rng};
    use crate::{Move, MoveOptions, Point, WallSet};

    /// A move and the centre after each of its straight pieces (the
    /// push-out first), so tests can check every piece.
    pub fn move_legs<P: Point>(
        walls: &WallSet,
        position: P,
        radius: P::Scalar,
        motion: P,
        opts: &MoveOptions,
    ) -> (Move<P>, Vec<[f64; 2]>) {
        let mut legs = Vec::new();
        let m = walls.slide(position, radius, motion, opts, |p| legs.push(p));
        (m, legs)
    }
}
