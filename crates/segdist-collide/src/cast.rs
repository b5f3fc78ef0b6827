//! The swept circle: [`WallSet::cast`], and the engine under it that
//! move-and-slide shares.
//!
//! 1. The grid gives the walls near the move's box.
//! 2. Each is *hit* when the circle, moved straight from `c` to `e`, would
//!    overlap it on the way ([`path_meets`], exact). A wall the circle
//!    already touches or overlaps at `c` is hit (at fraction 0) only if the
//!    move heads into it; one it leaves or runs along is let go (distance
//!    to a segment is convex along a line, so it never gets nearer).
//! 3. The first hit's fraction is estimated ([`entry`]), the stop position
//!    rounded to the caller's type, and the straight path from `c` to it
//!    checked exactly against every nearby wall; while any would be
//!    overlapped on the way, the fraction backs off (doubling steps). So
//!    the position returned is never past the true contact, at any
//!    distance from the origin, in `f32` as in `f64`.

use segdist::{Region, Scalar, Segment2};

use crate::point::{narrow, round, unit, valid, wide, Point};
use crate::predicates::{behind, cmp_point, entry, path_meets};
use crate::query::{touch, Feature, Touch, SCRATCH};
use crate::walls::WallSet;

/// Where a swept circle stops: the first contact along a move.
///
/// ```
/// use segdist_collide::{Feature, WallSet};
///
/// let mut b = WallSet::builder();
/// b.push_segment([0.0, 0.0], [0.0, 10.0]);
/// let walls = b.build().unwrap();
/// let hit = walls.cast([-5.0f64, 5.0], 1.0, [10.0, 0.0]).unwrap();
/// assert!((hit.fraction - 0.4).abs() < 1e-12 && hit.position[0] <= -1.0);
/// assert_eq!((hit.wall, hit.normal, hit.feature), (0, [-1.0, 0.0], Feature::Edge));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CastHit<P: Point> {
    /// The fraction of the move made, in `[0, 1]`: `position` is the start
    /// plus this fraction of the motion (rounded).
    pub fraction: P::Scalar,
    /// Where the centre stops: the straight path from the start to here
    /// overlaps no wall (decided exactly on the rounded coordinates), and
    /// it lies within rounding of the contact.
    pub position: P,
    /// The contact: the hit wall's point closest to `position`.
    pub point: P,
    /// Unit normal of the contact, from the wall towards the centre.
    pub normal: P,
    /// The hit wall's id (of walls hit at the same instant: the nearest,
    /// an edge before a vertex, then the lowest id).
    pub wall: usize,
    /// Vertex or edge.
    pub feature: Feature,
}

/// A cast's answer in `f64`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stop {
    pub(crate) s: f64,
    pub(crate) p: [f64; 2],
    pub(crate) touch: Touch,
}

impl WallSet {
    /// Sweeps the circle of radius `radius` from `center` along `motion`
    /// and returns the first contact, or `None` when the whole move is
    /// free (then `center + motion`, rounded, is safe to move to: the
    /// straight path there overlaps no wall).
    ///
    /// A contact is an overlap (distance `< radius`): a move that only
    /// grazes a wall (touching it at one instant) passes; for `radius = 0`
    /// a touch stops the point. Walls the circle already overlaps or
    /// touches at the start stop it at fraction 0 only if the motion heads
    /// into them; otherwise it may leave them or run along them.
    ///
    /// Edge cases: zero motion gives `None`; a negative or NaN radius, or
    /// a non-finite input, gives `None`.
    ///
    /// ```
    /// use segdist_collide::WallSet;
    ///
    /// // A thin wall far from the origin and a fast move: no tunnelling.
    /// let mut b = WallSet::builder();
    /// b.push_segment([1e7, 0.0], [1e7, 1.0]);
    /// let walls = b.build().unwrap();
    /// let hit = walls.cast([1e7 - 50.0, 0.5], 0.25, [100.0, 0.0]).unwrap();
    /// assert!(hit.position[0] <= 1e7 - 0.25);
    /// ```
    #[must_use]
    pub fn cast<P: Point>(&self, center: P, radius: P::Scalar, motion: P) -> Option<CastHit<P>> {
        let (c, r, d) = (wide(center), radius.to_f64(), wide(motion));
        if !valid(&[c, d], r) {
            return None;
        }
        let e = round::<P>([c[0] + d[0], c[1] + d[1]]);
        let stop = SCRATCH.with_borrow_mut(|(cands, _)| {
            self.near_move(c, e, r, cands);
            self.cast_in::<P>(cands, c, e, r, r)
        })?;
        Some(hit_of(stop))
    }

    /// The walls near the move `c → e` for a circle of radius `r`.
    pub(crate) fn near_move(&self, c: [f64; 2], e: [f64; 2], r: f64, cands: &mut Vec<u32>) {
        let lo = [c[0].min(e[0]) - r, c[1].min(e[1]) - r];
        let hi = [c[0].max(e[0]) + r, c[1].max(e[1]) + r];
        self.grid.query(lo, hi, cands);
    }

    /// The engine: the move `c → e` (both already in `P`'s type) of a circle
    /// that stops at radius `big` from the walls (a skin beyond its radius
    /// `r`, or `r` itself), among the walls `cands`. The path to the stop
    /// is checked at radius `r`.
    pub(crate) fn cast_in<P: Point>(&self, cands: &[u32], c: [f64; 2], e: [f64; 2], big: f64, r: f64) -> Option<Stop> {
        if c == e {
            return None;
        }
        let d = [e[0] - c[0], e[1] - c[1]];
        // With a skin, stop a hair (2^-30, relative) outside it: a circle
        // left at the skin radius to the last ulp made every later move's
        // "within the skin?" too close to call but exactly (big integers,
        // 8,400 of them per 100,000 steps of a crowd); the float filters
        // decide this gap.
        let aim = if big > r { big * (1.0 + 1.0 / (1u64 << 30) as f64) } else { big };
        let mut first = f64::INFINITY;
        let mut hits: Vec<(u32, f64)> = Vec::new();
        let mut let_go: Vec<u32> = Vec::new();
        for &id in cands {
            let w = &self.walls[id as usize];
            if behind(w, c) || !path_meets(c, e, w.a, w.b, big) {
                continue;
            }
            let at_start = cmp_point(w.a, w.b, c, big);
            let s = if at_start == core::cmp::Ordering::Greater {
                entry(c, d, w.a, w.b, aim)
            } else if heads_into(w.a, w.b, c, d) {
                0.0
            } else {
                let_go.push(id);
                continue;
            };
            first = first.min(s);
            hits.push((id, s));
        }
        // Back off until the straight path to the stop is clear at radius r.
        let mut s = if hits.is_empty() { 1.0 } else { first.clamp(0.0, 1.0) };
        let scale = c.iter().chain(&e).fold(0.0f64, |m, x| m.max(x.abs()));
        let len = d[0].abs().max(d[1].abs());
        let mut step = 8.0 * unit::<P>() * (scale / len) + 1e-16;
        let mut p;
        loop {
            p = if s >= 1.0 {
                e
            } else if s <= 0.0 {
                c
            } else {
                round::<P>([c[0] + s * d[0], c[1] + s * d[1]])
            };
            if s <= 0.0 {
                s = 0.0;
                break;
            }
            // With no hit, only the walls let go were judged by estimate.
            let check: &[u32] = if hits.is_empty() { &let_go } else { cands };
            let bad = check.iter().copied().find(|&id| {
                let w = &self.walls[id as usize];
                !behind(w, c) && path_meets(c, p, w.a, w.b, r) && !overlaps_at(w.a, w.b, c, r)
            });
            match bad {
                None => break,
                Some(id) => {
                    if hits.is_empty() {
                        hits.push((id, s));
                    }
                    s -= step;
                    step *= 2.0;
                }
            }
        }
        if hits.is_empty() {
            return None;
        }
        // The contact: of the walls hit first, the nearest to the stop; an
        // edge before a vertex (a joint of collinear walls is the edge's);
        // then the lowest id.
        let tol = 1e-9 + first.abs() * 1e-9;
        let touch = hits
            .iter()
            .filter(|h| h.1 <= first + tol || first == f64::INFINITY)
            .map(|&(id, _)| touch(id, &self.walls[id as usize], p))
            .min_by(|x, y| {
                x.d.total_cmp(&y.d)
                    .then((x.region != Region::Interior).cmp(&(y.region != Region::Interior)))
                    .then(x.wall.cmp(&y.wall))
            })?;
        Some(Stop { s, p, touch })
    }
}

/// Does the move `d` from `c` head into the segment `[a, b]` (the distance
/// decreasing at the start)? A centre on the segment never does.
fn heads_into(a: [f64; 2], b: [f64; 2], c: [f64; 2], d: [f64; 2]) -> bool {
    let q = Segment2::new(a, b).closest_point(c).point;
    let v = [c[0] - q[0], c[1] - q[1]];
    v[0] * d[0] + v[1] * d[1] < 0.0
}

/// Does a circle of radius `r` at `c` already overlap `[a, b]` (for `r =
/// 0`: lie on it)? Such walls are the caller's start state, not the move's.
fn overlaps_at(a: [f64; 2], b: [f64; 2], c: [f64; 2], r: f64) -> bool {
    let o = cmp_point(a, b, c, r);
    o == core::cmp::Ordering::Less || (r == 0.0 && o == core::cmp::Ordering::Equal)
}

/// The public form of a stop.
pub(crate) fn hit_of<P: Point>(s: Stop) -> CastHit<P> {
    CastHit {
        fraction: P::Scalar::from_f64(s.s),
        position: narrow(s.p),
        point: narrow(s.touch.q),
        normal: narrow(s.touch.n),
        wall: s.touch.wall as usize,
        feature: Feature::of_region(s.touch.region),
    }
}
