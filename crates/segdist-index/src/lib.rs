//! Exact nearest-segment search over millions of segments and polylines, and
//! linear referencing, built on [`segdist`]'s accurate kernel.
//!
//! - [`Index`]: a static spatial index over segments, polylines and
//!   multi-polylines (2D and 3D, `f64`; `f32` input widened exactly), built
//!   with [`IndexBuilder`]. Queries: [`nearest`](Index::nearest),
//!   [`nearest_within`](Index::nearest_within) (a `max_distance` that prunes),
//!   [`k_nearest`](Index::k_nearest), [`within`](Index::within) (a radius), and
//!   [`nearest_many`](Index::nearest_many) for batches on all cores
//!   ([`nearest_many_into`](Index::nearest_many_into) to stream chunks
//!   through one buffer of answers, [`nearest_many_to`](Index::nearest_many_to)
//!   to write each answer where the caller keeps it, a [`Sink`], on the
//!   search's threads).
//! - [`Polyline`]: linear referencing on one line: [`locate`](Polyline::locate)
//!   a point as (segment, `t`, distance along, fraction), and the inverse,
//!   [`point_at`](Polyline::point_at) a distance along it, in `O(log V)`.
//!
//! **Exact**: every distance is that of [`segdist::Segment::closest_point`]
//! (faithfully rounded), and the search never drops a segment that could
//! tie, so each answer is bit for bit what a brute-force scan with the
//! accurate kernel gives. Ties between equal distances go to the lowest id
//! (`feature`, then `part`, then `segment`).
//!
//! **Total**: non-finite coordinates are rejected when building, with a
//! [`BuildError`] naming the feature, part and vertex; an empty index is valid
//! and finds nothing; a query point with a NaN or infinite coordinate finds
//! nothing. No query panics.
//!
//! # Example: snap GPS fixes to roads
//!
//! ```
//! use segdist_index::{IndexBuilder, QueryOptions};
//!
//! let mut roads = IndexBuilder::<2>::new();
//! let main_st = roads.push_polyline(&[[0.0, 0.0], [100.0, 0.0], [200.0, 50.0]]);
//! let side_st = roads.push_polyline(&[[100.0, 0.0], [100.0, 80.0]]);
//! let roads = roads.build()?;
//!
//! let fixes = [[50.0, 3.0], [103.0, 60.0], [500.0, 500.0]];
//! let opts = QueryOptions { max_distance: 25.0, ..Default::default() };
//! let snapped = roads.nearest_many(&fixes, &opts);
//! assert_eq!(snapped[0].unwrap().feature, main_st);
//! assert_eq!(snapped[1].unwrap().feature, side_st);
//! assert_eq!(snapped[1].unwrap().point, [100.0, 60.0]);
//! assert!(snapped[2].is_none()); // farther than 25 from every road
//! # Ok::<(), segdist_index::BuildError>(())
//! ```
#![warn(missing_docs)]
// The geometry indexes several coordinate columns by axis `k` in one loop.
#![allow(clippy::needless_range_loop)]

mod batch;
mod build;
#[cfg(feature = "geo-types")]
mod geo;
mod hilbert;
mod index;
mod lists;
// Public for segdist-py's output columns; not part of the API.
#[doc(hidden)]
pub mod mem;
mod polyline;
mod sink;

pub use batch::{Isa, QueryOptions};
pub use build::{BuildError, IndexBuilder};
pub use index::{Hit, Index, Index2, Index3};
pub use lists::HitLists;
pub use polyline::{along, cumulative, cumulative_into, cumulative_lengths, fraction, Location, Polyline};
pub use sink::Sink;

// The README's Rust examples (segdist's and the index's) run as doc tests
// here, so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;
