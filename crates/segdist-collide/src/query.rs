//! Static queries on a [`WallSet`]: [`overlap`](WallSet::overlap) (every
//! wall a circle touches) and [`resolve`](WallSet::resolve) (the push-out
//! against all of them together).
//!
//! Resolve linearises each contact as a half-plane `n·v >= depth` (exact
//! for an edge, conservative for a vertex, whose disc lies behind its
//! tangent), finds the shortest `v` meeting them all (in 2D: one
//! constraint alone, or two at their lines' meeting point; the least of
//! those that meets every other), moves, and checks again, exactly, until
//! nothing overlaps. A vertex contact at a point that is also an end of
//! another touching wall is dropped first: that wall's own constraint
//! implies it, and keeping it is what makes "ghost normals" snag circles at
//! the joints of collinear walls.

use core::cmp::Ordering;
use std::cell::RefCell;

use segdist::{Region, Scalar, Segment2};

use crate::point::{narrow, round, unit, valid, wide, Point};
use crate::predicates::{behind, cmp_point};
use crate::walls::{Wall, WallSet};

/// Which part of a wall a contact is on.
///
/// ```
/// use segdist_collide::{Feature, WallSet};
///
/// let mut b = WallSet::builder();
/// b.push_segment([0.0, 0.0], [10.0, 0.0]);
/// let walls = b.build().unwrap();
/// assert_eq!(walls.overlap([5.0, 0.5], 1.0)[0].feature, Feature::Edge);
/// assert_eq!(walls.overlap([10.5, 0.0], 1.0)[0].feature, Feature::End);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// The wall's start vertex `a` (also every contact with a zero-length
    /// wall).
    Start,
    /// A point strictly between the vertices.
    Edge,
    /// The wall's end vertex `b`.
    End,
}

impl Feature {
    pub(crate) fn of_region(region: Region) -> Feature {
        match region {
            Region::Interior => Feature::Edge,
            Region::End => Feature::End,
            _ => Feature::Start,
        }
    }
}

/// A wall a circle touches: where, how deep and which way out.
///
/// ```
/// use segdist_collide::{Feature, WallSet};
///
/// let mut b = WallSet::builder();
/// b.push_segment([0.0, 0.0], [10.0, 0.0]);
/// let walls = b.build().unwrap();
/// let c = walls.overlap([4.0, 0.25], 1.0)[0];
/// assert_eq!((c.wall, c.point, c.normal), (0, [4.0, 0.0], [0.0, 1.0]));
/// assert_eq!((c.distance, c.depth, c.feature), (0.25, 0.75, Feature::Edge));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact<P: Point> {
    /// The wall's id.
    pub wall: usize,
    /// The wall's point closest to the centre (segdist's accurate
    /// closest point, faithfully rounded).
    pub point: P,
    /// Unit vector from the wall towards the centre. For a centre exactly
    /// on a wall: the wall's left normal (seen from `a` to `b`); on a
    /// zero-length wall, `+x`.
    pub normal: P,
    /// The centre's distance to the wall (faithfully rounded).
    pub distance: P::Scalar,
    /// `radius − distance`: `0` for a touch.
    pub depth: P::Scalar,
    /// Vertex or edge.
    pub feature: Feature,
}

/// The outcome of [`WallSet::resolve`].
///
/// ```
/// use segdist_collide::WallSet;
///
/// let mut b = WallSet::builder();
/// b.push_segment([0.0, 0.0], [10.0, 0.0]);
/// let r = b.build().unwrap().resolve([5.0, 0.5], 1.0);
/// assert!(r.converged && r.iterations == 1);
/// assert!(r.position[1] >= 1.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resolution<P: Point> {
    /// Where the centre ends. When `converged`, the circle overlaps no wall
    /// there (decided exactly on the rounded coordinates).
    pub position: P,
    /// How many pushes were made (0: it overlapped nothing).
    pub iterations: u32,
    /// `false` when the pushes ran out before the circle was free (a
    /// corridor narrower than the circle, say); `position` is then the
    /// last one reached.
    pub converged: bool,
}

/// A touching wall in `f64`: its id, closest point, distance, unit normal
/// and region.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Touch {
    pub(crate) wall: u32,
    pub(crate) q: [f64; 2],
    pub(crate) d: f64,
    pub(crate) n: [f64; 2],
    pub(crate) region: Region,
}

/// `v / |v|`, scaled against overflow and underflow; `None` for zero.
pub(crate) fn unit_vector(v: [f64; 2]) -> Option<[f64; 2]> {
    let m = v[0].abs().max(v[1].abs());
    if m == 0.0 || !m.is_finite() {
        return None;
    }
    let w = [v[0] / m, v[1] / m];
    let len = w[0].hypot(w[1]);
    Some([w[0] / len, w[1] / len])
}

/// The wall's closest point to `c`, and the unit normal out of it.
pub(crate) fn touch(id: u32, w: &Wall, c: [f64; 2]) -> Touch {
    let pr = Segment2::new(w.a, w.b).closest_point(c);
    let n = unit_vector([c[0] - pr.point[0], c[1] - pr.point[1]])
        .or_else(|| unit_vector([w.a[1] - w.b[1], w.b[0] - w.a[0]]))
        .unwrap_or([1.0, 0.0]);
    Touch { wall: id, q: pr.point, d: pr.distance, n, region: pr.region }
}

thread_local! {
    /// Each thread's candidate buffers, kept between queries.
    pub(crate) static SCRATCH: RefCell<(Vec<u32>, Vec<u32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl WallSet {
    /// Every wall the circle of radius `radius` centred at `center` touches
    /// or overlaps (distance `<= radius`, decided exactly), by wall id. A
    /// one-sided wall whose back the centre is on is left out.
    ///
    /// Edge cases: `radius = 0` gives the walls the centre lies on; a
    /// negative or NaN radius, or a non-finite centre, gives none.
    ///
    /// ```
    /// use segdist_collide::WallSet;
    ///
    /// let mut b = WallSet::builder();
    /// b.push_polyline(&[[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]]);
    /// let walls = b.build().unwrap();
    /// let hits = walls.overlap([9.5, 0.5], 1.0); // in the corner
    /// assert_eq!(hits.iter().map(|c| c.wall).collect::<Vec<_>>(), [0, 1]);
    /// assert!(walls.overlap([5.0, 1.0], 1.0)[0].depth == 0.0); // a touch
    /// ```
    #[must_use]
    pub fn overlap<P: Point>(&self, center: P, radius: P::Scalar) -> Vec<Contact<P>> {
        let (c, r) = (wide(center), radius.to_f64());
        if !valid(&[c], r) {
            return Vec::new();
        }
        let mut out = Vec::new();
        SCRATCH.with_borrow_mut(|(cands, _)| {
            self.grid.query([c[0] - r, c[1] - r], [c[0] + r, c[1] + r], cands);
            cands.sort_unstable();
            for &id in cands.iter() {
                let w = &self.walls[id as usize];
                if behind(w, c) || cmp_point(w.a, w.b, c, r) == Ordering::Greater {
                    continue;
                }
                let t = touch(id, w, c);
                out.push(Contact {
                    wall: id as usize,
                    point: narrow(t.q),
                    normal: narrow(t.n),
                    distance: P::Scalar::from_f64(t.d),
                    depth: P::Scalar::from_f64((r - t.d).max(0.0)),
                    feature: Feature::of_region(t.region),
                });
            }
        });
        out
    }

    /// Pushes the circle out of every wall it overlaps, all of them
    /// together: the shortest move that clears the touching walls' contact
    /// half-planes at once, repeated (at most 8 times) until, decided
    /// exactly on the rounded coordinates, it overlaps none (touching is
    /// allowed). Correct in concave corners (both walls at once) and at
    /// joints of collinear walls (no ghost normal from the shared vertex).
    ///
    /// Edge cases: a centre exactly on a wall is pushed along the wall's
    /// left normal; `radius = 0` never overlaps; a negative or NaN radius,
    /// or a non-finite centre, returns the centre unchanged and `converged
    /// = false`. In `f32` at large coordinates the push is at least an ulp
    /// of the position, so it can overshoot by that much.
    ///
    /// ```
    /// use segdist_collide::WallSet;
    ///
    /// // A concave corner: pushed out of both walls at once.
    /// let mut b = WallSet::builder();
    /// b.push_polyline(&[[0.0, 10.0], [0.0, 0.0], [10.0, 0.0]]);
    /// let walls = b.build().unwrap();
    /// let r = walls.resolve([0.5, 0.25], 1.0);
    /// assert!(r.converged && r.position[0] >= 1.0 && r.position[1] >= 1.0);
    /// assert!(walls.overlap(r.position, 1.0).iter().all(|c| c.depth == 0.0));
    /// ```
    #[must_use]
    pub fn resolve<P: Point>(&self, center: P, radius: P::Scalar) -> Resolution<P> {
        let (c, r) = (wide(center), radius.to_f64());
        if !valid(&[c], r) {
            return Resolution { position: center, iterations: 0, converged: false };
        }
        let (p, iterations, converged) = SCRATCH.with_borrow_mut(|(_, cands)| self.resolve_in::<P>(c, r, 8, cands));
        Resolution { position: narrow(p), iterations, converged }
    }

    /// [`resolve`](Self::resolve) in `f64` (positions rounded to `P`'s
    /// type): the end position, the pushes made, whether it is free.
    pub(crate) fn resolve_in<P: Point>(
        &self,
        c: [f64; 2],
        r: f64,
        max: u32,
        cands: &mut Vec<u32>,
    ) -> ([f64; 2], u32, bool) {
        let mut p = c;
        let mut margin = 4.0 * unit::<P>() * (c[0].abs().max(c[1].abs()) + r) + 1e-290;
        let mut touches: Vec<Touch> = Vec::new();
        for it in 0..=max {
            let reach = r + margin;
            self.grid.query([p[0] - reach, p[1] - reach], [p[0] + reach, p[1] + reach], cands);
            touches.clear();
            let mut overlapping = false;
            for &id in cands.iter() {
                let w = &self.walls[id as usize];
                if behind(w, p) || cmp_point(w.a, w.b, p, reach) != Ordering::Less {
                    continue;
                }
                overlapping |= cmp_point(w.a, w.b, p, r) == Ordering::Less;
                touches.push(touch(id, w, p));
            }
            if !overlapping {
                return (p, it, true);
            }
            if it == max {
                break;
            }
            prune(&self.walls, &mut touches);
            let v = solve(&touches, r + margin);
            let next = round::<P>([p[0] + v[0], p[1] + v[1]]);
            if next == p || !(next[0].is_finite() && next[1].is_finite()) {
                // Rounding swallowed the push: ask for more.
                margin *= 4.0;
            } else {
                p = next;
            }
        }
        (p, max, false)
    }

    /// Does the circle overlap any of the walls `cands` (exactly; `r = 0`
    /// never overlaps)? The mover's check before it calls `resolve_in`.
    #[inline]
    pub(crate) fn overlaps_any(&self, cands: &[u32], c: [f64; 2], r: f64) -> bool {
        cands.iter().any(|&id| {
            let w = &self.walls[id as usize];
            let apart = w.a[0].min(w.b[0]) - c[0] >= r
                || c[0] - w.a[0].max(w.b[0]) >= r
                || w.a[1].min(w.b[1]) - c[1] >= r
                || c[1] - w.a[1].max(w.b[1]) >= r;
            !apart && !behind(w, c) && cmp_point(w.a, w.b, c, r) == Ordering::Less
        })
    }
}

/// Drops each vertex contact whose vertex is also an end of another
/// touching wall (that wall's constraint implies it); of several contacts
/// at one shared vertex, the lowest wall id stays.
fn prune(walls: &[Wall], touches: &mut Vec<Touch>) {
    let keep: Vec<bool> = touches
        .iter()
        .map(|t| {
            if t.region == Region::Interior {
                return true;
            }
            !touches.iter().any(|o| {
                let w = &walls[o.wall as usize];
                o.wall != t.wall && (w.a == t.q || w.b == t.q) && (o.q != t.q || o.wall < t.wall)
            })
        })
        .collect();
    let mut k = keep.iter();
    touches.retain(|_| *k.next().unwrap_or(&true));
}

/// The shortest `v` with `n_i·v >= reach − d_i` for every touch (each
/// alone, or two at once; the least that meets all). Where none meets all
/// (an infeasible squeeze), the one that misses least.
fn solve(touches: &[Touch], reach: f64) -> [f64; 2] {
    let need: Vec<([f64; 2], f64)> = touches.iter().map(|t| (t.n, reach - t.d)).collect();
    let hmax = need.iter().fold(0.0f64, |m, x| m.max(x.1));
    let miss = |v: [f64; 2]| need.iter().fold(0.0f64, |m, (n, h)| m.max(h - (n[0] * v[0] + n[1] * v[1])));
    let tol = 1e-9 * hmax;
    let mut best: Option<([f64; 2], f64, f64)> = None; // v, miss, |v|²
    let mut consider = |v: [f64; 2]| {
        if !(v[0].is_finite() && v[1].is_finite()) {
            return;
        }
        let m = miss(v).max(tol);
        let len2 = v[0] * v[0] + v[1] * v[1];
        let better = match best {
            None => true,
            Some((_, bm, bl)) => m < bm || (m == bm && len2 < bl),
        };
        if better {
            best = Some((v, m, len2));
        }
    };
    for (i, &(ni, hi)) in need.iter().enumerate() {
        consider([ni[0] * hi, ni[1] * hi]);
        for &(nj, hj) in &need[i + 1..] {
            let det = ni[0] * nj[1] - ni[1] * nj[0];
            if det.abs() > 1e-12 {
                consider([(hi * nj[1] - hj * ni[1]) / det, (ni[0] * hj - nj[0] * hi) / det]);
            }
        }
    }
    best.map_or([0.0, 0.0], |b| b.0)
}
