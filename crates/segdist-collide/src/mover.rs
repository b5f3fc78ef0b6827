//! The character mover: [`WallSet::move_and_slide`] and its many-agent
//! form, as Box2D v3's mover and Godot's `move_and_slide` do it, on the
//! exact cast.
//!
//! A move first pushes the circle out of any wall it overlaps
//! ([`WallSet::resolve`]), then casts with a radius a *skin* larger than
//! the circle's (so it stops a skin short of the contact), keeps the rest
//! of the motion less its part into the contact's normal (and a thousandth
//! more, so the next cast runs slightly away from the wall rather than
//! grazing it), and casts again, at most `max_iterations` times. Two
//! contacts whose normals the remaining motion would have to go against
//! both make a corner: in 2D nothing can slide there, so it stops; a slide
//! that would turn back against the original motion stops too. That is
//! what keeps agents still in corners instead of jittering.

use rayon::prelude::*;
use segdist::Scalar;

use crate::cast::{hit_of, CastHit};
use crate::point::{narrow, round, valid, wide, Point};
use crate::query::SCRATCH;
use crate::walls::WallSet;

/// How [`WallSet::move_and_slide`] moves.
///
/// ```
/// let opts = segdist_collide::MoveOptions::default();
/// assert_eq!((opts.skin, opts.max_iterations), (1.0 / 32.0, 4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MoveOptions {
    /// How far short of a contact the circle stops, as a fraction of its
    /// radius (so agents of every size keep the same proportion). Default
    /// `1/32`. Never negative.
    pub skin: f64,
    /// The most casts one move makes (each contact costs one). Default 4.
    pub max_iterations: u32,
}

impl Default for MoveOptions {
    fn default() -> Self {
        MoveOptions { skin: 1.0 / 32.0, max_iterations: 4 }
    }
}

/// Why a move stopped where it did.
///
/// ```
/// use segdist_collide::{MoveOptions, Stopped, WallSet};
///
/// let walls = WallSet::builder().build().unwrap();
/// let m = walls.move_and_slide([0.0, 0.0], 1.0, [5.0, 0.0], &MoveOptions::default());
/// assert_eq!(m.stopped, Stopped::Completed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stopped {
    /// All the motion was used, slides included.
    Completed,
    /// A wall took the rest: a head-on contact, a corner, or a slide that
    /// would have turned back against the motion.
    Blocked,
    /// `max_iterations` casts were made with motion still left.
    Iterations,
    /// The input was not finite (or the radius negative): nothing moved.
    Invalid,
}

/// The outcome of one [`WallSet::move_and_slide`].
///
/// ```
/// use segdist_collide::{MoveOptions, Stopped, WallSet};
///
/// let mut b = WallSet::builder();
/// b.push_segment([0.0, -10.0], [0.0, 10.0]);
/// let walls = b.build().unwrap();
/// // Into the wall at 45°: slides along it.
/// let m = walls.move_and_slide([-2.0, 0.0], 0.5, [3.0, 3.0], &MoveOptions::default());
/// assert_eq!((m.stopped, m.hits), (Stopped::Completed, 1));
/// assert!(m.position[0] < -0.5 && m.position[1] > 2.9);
/// assert_eq!(m.contact.unwrap().normal, [-1.0, 0.0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Move<P: Point> {
    /// Where the centre ends. The circle overlaps no wall there, and no
    /// part of the move crossed or overlapped one (decided exactly, on the
    /// rounded coordinates), unless `trapped` (below) or `stopped` is
    /// `Invalid` (then it is the start, unmoved).
    pub position: P,
    /// Why it stopped there.
    pub stopped: Stopped,
    /// How many contacts the move met.
    pub hits: u32,
    /// The last contact met, if any.
    pub contact: Option<CastHit<P>>,
    /// Pushes made to free the circle at the start (0 when it was free).
    pub pushes: u32,
    /// The circle started overlapping walls and no push could free it (a
    /// gap narrower than it, as a nook it entered through a one-sided
    /// wall): the move went on from the start, free to leave those walls
    /// but never deeper into them, and may end overlapping them.
    pub trapped: bool,
}

/// One circle to move: where it is, its radius and the motion wanted this
/// step.
///
/// ```
/// let a = segdist_collide::Agent { position: [1.0, 2.0], radius: 0.5, motion: [0.1, 0.0] };
/// assert_eq!(a.radius, 0.5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agent<P: Point> {
    /// The centre.
    pub position: P,
    /// The radius (`>= 0`).
    pub radius: P::Scalar,
    /// The displacement wanted.
    pub motion: P,
}

impl WallSet {
    /// Moves a circle by `motion`, sliding along the walls it meets: see
    /// the module's description. The end position is safe: the circle
    /// overlaps no wall there and the path to it crossed none.
    ///
    /// Edge cases: zero motion only frees the circle (if it overlaps);
    /// `radius = 0` moves a point that stops before touching a wall; a
    /// non-finite input or a negative radius moves nothing
    /// ([`Stopped::Invalid`]). Deterministic: the same bits on every CPU
    /// and thread count.
    ///
    /// ```
    /// use segdist_collide::{MoveOptions, Stopped, WallSet};
    ///
    /// // Into a concave corner: it stops there, and stays.
    /// let mut b = WallSet::builder();
    /// b.push_polyline(&[[0.0, 10.0], [0.0, 0.0], [10.0, 0.0]]);
    /// let walls = b.build().unwrap();
    /// let opts = MoveOptions::default();
    /// let m = walls.move_and_slide([3.0, 3.0], 1.0, [-5.0, -5.0], &opts);
    /// assert_eq!(m.stopped, Stopped::Blocked);
    /// let again = walls.move_and_slide(m.position, 1.0, [-5.0, -5.0], &opts);
    /// assert_eq!(again.position, m.position);
    /// ```
    #[must_use]
    pub fn move_and_slide<P: Point>(&self, position: P, radius: P::Scalar, motion: P, opts: &MoveOptions) -> Move<P> {
        self.slide(position, radius, motion, opts, |_| {})
    }

    /// [`move_and_slide`](Self::move_and_slide), calling `leg` with the
    /// centre after each straight piece of the move (the push-out first).
    pub(crate) fn slide<P: Point>(
        &self,
        position: P,
        radius: P::Scalar,
        motion: P,
        opts: &MoveOptions,
        mut leg: impl FnMut([f64; 2]),
    ) -> Move<P> {
        let (c, r, d) = (wide(position), radius.to_f64(), wide(motion));
        if !valid(&[c, d], r) {
            return Move { position, stopped: Stopped::Invalid, hits: 0, contact: None, pushes: 0, trapped: false };
        }
        let skin = if opts.skin.is_finite() { opts.skin.max(0.0) } else { 0.0 };
        let big = r + r * skin;
        SCRATCH.with_borrow_mut(|(cands, more)| {
            // The walls near the straight move: usually all a move needs
            // (and, with none, it is free: most moves, in open space).
            let straight = round::<P>([c[0] + d[0], c[1] + d[1]]);
            self.near_move(c, straight, big, cands);
            if cands.is_empty() {
                leg(c);
                leg(straight);
                return Move {
                    position: narrow(straight),
                    stopped: Stopped::Completed,
                    hits: 0,
                    contact: None,
                    pushes: 0,
                    trapped: false,
                };
            }
            let (origin, pushes, free) = if self.overlaps_any(cands, c, r) {
                // Trapped (no free place near): move on from the start; the
                // casts let it leave the walls it overlaps, never go deeper.
                let (pushed, pushes, free) = self.resolve_in::<P>(c, r, 8, more);
                (if free { pushed } else { c }, pushes, free)
            } else {
                (c, 0, true)
            };
            // Every cast of this move stays within |motion| (and a little
            // more from the overclip) of where the casts start: a cast off
            // the straight move (a slide, or after a push) asks the grid
            // once for every wall within that reach.
            let reach = 1.01 * d[0].abs().max(d[1].abs()) * core::f64::consts::SQRT_2 + big;
            let mut wide_query = false;
            let mut p = origin;
            leg(p);
            let mut rem = d;
            let mut normals: [[f64; 2]; 2] = [[0.0; 2]; 2];
            let mut hits = 0u32;
            let mut contact = None;
            let mut stopped = Stopped::Iterations;
            for _ in 0..opts.max_iterations {
                let e = round::<P>([p[0] + rem[0], p[1] + rem[1]]);
                if e == p {
                    stopped = Stopped::Completed;
                    break;
                }
                if !wide_query && (p != c || e != straight) {
                    self.near_move(origin, origin, reach, cands);
                    wide_query = true;
                }
                let Some(stop) = self.cast_in::<P>(cands, p, e, big, r) else {
                    p = e;
                    leg(p);
                    stopped = Stopped::Completed;
                    break;
                };
                p = stop.p;
                leg(p);
                let n = stop.touch.n;
                contact = Some(stop);
                let left = 1.0 - stop.s;
                rem = [rem[0] * left, rem[1] * left];
                // Slide: the rest less its part into the contact, and a
                // thousandth more away from it.
                let into = rem[0] * n[0] + rem[1] * n[1];
                if into < 0.0 {
                    let k = into * 1.001;
                    rem = [rem[0] - k * n[0], rem[1] - k * n[1]];
                }
                let corner = (hits as usize).min(2);
                let blocked = normals[..corner]
                    .iter()
                    .any(|m| rem[0] * m[0] + rem[1] * m[1] < 0.0 && (m[0] * n[1] - m[1] * n[0]).abs() > 1e-9);
                normals[(hits % 2) as usize] = n;
                hits += 1;
                if blocked || rem[0] * d[0] + rem[1] * d[1] <= 0.0 {
                    stopped = Stopped::Blocked;
                    break;
                }
            }
            Move { position: narrow(p), stopped, hits, contact: contact.map(hit_of), pushes, trapped: !free }
        })
    }

    /// [`move_and_slide`](Self::move_and_slide) for every agent, on all
    /// cores; the answers in input order, the same bits as one by one
    /// (each agent moves against the walls only, not against the others).
    ///
    /// ```
    /// use segdist_collide::{Agent, MoveOptions, WallSet};
    ///
    /// let mut b = WallSet::builder();
    /// b.push_segment([0.0, -10.0], [0.0, 10.0]);
    /// let walls = b.build().unwrap();
    /// let agents: Vec<Agent<[f32; 2]>> =
    ///     (0..100).map(|i| Agent { position: [-2.0, i as f32 * 0.1], radius: 0.5, motion: [3.0, 0.0] }).collect();
    /// let moves = walls.move_and_slide_many(&agents, &MoveOptions::default());
    /// assert!(moves.iter().all(|m| m.position[0] <= -0.5));
    /// ```
    #[must_use]
    pub fn move_and_slide_many<P: Point>(&self, agents: &[Agent<P>], opts: &MoveOptions) -> Vec<Move<P>> {
        let mut out = Vec::new();
        self.move_and_slide_many_into(agents, opts, &mut out);
        out
    }

    /// [`move_and_slide_many`](Self::move_and_slide_many) into a vector of
    /// the caller's (cleared first), so a game loop allocates nothing per
    /// frame once it has grown.
    ///
    /// ```
    /// use segdist_collide::{Agent, MoveOptions, WallSet};
    ///
    /// let walls = WallSet::builder().build().unwrap();
    /// let agents = [Agent { position: [0.0, 0.0], radius: 1.0, motion: [1.0, 0.0] }];
    /// let mut moves = Vec::new();
    /// walls.move_and_slide_many_into(&agents, &MoveOptions::default(), &mut moves);
    /// assert_eq!(moves[0].position, [1.0, 0.0]);
    /// ```
    pub fn move_and_slide_many_into<P: Point>(&self, agents: &[Agent<P>], opts: &MoveOptions, out: &mut Vec<Move<P>>) {
        agents
            .par_iter()
            .with_min_len(64)
            .map(|a| self.move_and_slide(a.position, a.radius, a.motion, opts))
            .collect_into_vec(out);
    }
}
