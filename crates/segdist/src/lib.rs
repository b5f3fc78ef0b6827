//! Where on a segment (or line) is the point closest to a given point, and
//! how far is it — exactly.
//!
//! segdist answers point–segment, point–line and point–plane queries in 2D and
//! 3D, in `f32` and `f64`, in one build. Its accurate tier is **faithfully
//! rounded for every finite input**: the distance, the squared distance, the
//! parameter `t` and every coordinate of the closest point are within one ulp
//! of the value computed exactly from the given floats (in practice `t`, the
//! point and interior distances are almost always correctly rounded,
//! distances to a vertex about nine times in ten), including for points a
//! hair's breadth from the segment, UTM-sized coordinates, tiny or huge
//! magnitudes, and zero-length segments. Its fast tier is the textbook formula, made total.
//!
//! # Entry points
//!
//! | type | queries |
//! |---|---|
//! | [`Segment`] ([`Segment2`], [`Segment3`]) | [`closest_point`](Segment::closest_point) → [`Projection`], [`distance`](Segment::distance), [`distance_squared`](Segment::distance_squared), [`intersects_ball`](Segment::intersects_ball), [`push_out`](Segment::push_out), and `_fast` forms |
//! | [`Line`] ([`Line2`], [`Line3`]) | [`closest_point`](Line::closest_point) → [`LineProjection`] (unclamped `t`), [`distance`](Line::distance), [`distance_squared`](Line::distance_squared), 2D [`signed_distance`](Line::signed_distance), `_fast` forms |
//! | [`Plane`] | [`signed_distance`](Plane::signed_distance), [`distance`](Plane::distance) |
//! | [`batch`] | [`one_to_many`](batch::one_to_many), [`pairs`](batch::pairs), [`project`](batch::project), [`distances`](batch::distances): millions of queries per call, SIMD chosen at run time, all cores, bit-identical to the methods above |
//!
//! Points are plain arrays, `[x, y]` or `[x, y, z]`.
//!
//! ```
//! use segdist::{Region, Segment2};
//!
//! let road = Segment2::new([500_000.125, 6_700_000.5], [500_010.5, 6_700_004.25]);
//! let gps = [500_004.0, 6_700_003.0];
//! let hit = road.closest_point(gps);
//! assert_eq!(hit.region, Region::Interior);
//! assert_eq!(hit.distance, 1.0339321055666837); // faithfully rounded
//! assert_eq!(hit.t, 0.40736936705610477);
//! ```
//!
//! # The accuracy contract (accurate tier)
//!
//! For every finite input:
//!
//! - `distance`, `distance_squared`, `t` and each coordinate of the closest
//!   point are faithfully rounded (error below one ulp of the exact value).
//! - `distance_squared >= 0`; it is `+inf` only when the exact value exceeds
//!   the type's maximum (the distance is then still finite and right).
//! - A clamped result is the vertex itself, bit for bit, with `t` exactly `0`
//!   or `1`.
//! - A zero-length segment (`a == b`) gives `t = 0`, `q = a`, `d = |p − a|`.
//! - `f32` input is computed in `f64` from the exact widened values and
//!   rounded once, so `f32` results are faithfully rounded in `f32`.
//!
//! Non-finite input gives NaN in every number (never a NaN beside finite
//! fields). Nothing panics.
//!
//! # How
//!
//! Exact differences, double-double products with rigorous error bounds, and
//! an exact big-integer path for the rare queries those bounds cannot certify
//! (points within about `1e-13`, relative, of the segment's line or of an
//! endpoint's perpendicular; coordinates spanning more than ~900 binades).
//! The kernel is compiled with and without FMA and picked at run time; both
//! builds return the same bits. See `ARCHITECTURE.md` in the repository.
//!
//! # The fast tier
//!
//! `*_fast` methods run the textbook clamped projection in the caller's
//! type: branch-free, no fused multiply-add (so identical bits on every CPU),
//! never negative, endpoints exact, `a == b` handled, NaN in → NaN out. Their
//! absolute error is bounded by a small multiple of the unit roundoff times
//! the coordinates' magnitude (see [`Segment::closest_point_fast`]), which
//! near a segment can be an enormous *relative* error.

#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod batch;
// The SIMD lanes and their kernels are reached only on x86-64 and aarch64;
// other targets (wasm32, for the page) run the scalar kernel.
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
mod batch_kernel;
mod eft;
mod exact;
mod fast;
mod kernel;
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
mod lanes;
mod line;
mod plane;
mod scalar;
mod segment;
#[cfg(target_arch = "x86_64")]
mod sweep;

pub use kernel::Region;
pub use line::{Line, Line2, Line3, LineProjection};
pub use plane::Plane;
pub use scalar::Scalar;
pub use segment::{Projection, Segment, Segment2, Segment3};

// The README's Rust examples run as doc tests of segdist-index, the crate
// that sees both segdist and the index.

/// Hooks for segdist's own tests (the portable and dispatched builds of the
/// kernel, compared bit for bit). Not part of the API.
#[doc(hidden)]
pub mod __testing {
    pub use crate::kernel::{segment_dispatched, segment_portable};
}
