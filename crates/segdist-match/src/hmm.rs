//! The hidden Markov model matcher (Newson & Krumm, 2009): a fix's states
//! are its candidate positions on the roads, each in a direction of travel;
//! emission scores the exact distance from the fix, transition scores how
//! far the route between two states differs from the straight distance
//! between their fixes; Viterbi picks the likeliest sequence.
//!
//! A trace is matched in sub-matches. A fix with no candidate within the
//! radius ends the current one (and is `Unmatched`); a fix that no state of
//! the previous fix reaches within the route bound ends it too, and starts
//! the next (its state is `Break`). One bad fix never fails a trace.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use crate::candidates::Ranked;
use crate::graph::{Candidate, Grid, RoadGraph};
use crate::route::Routes;
use crate::smooth::{self, Chosen, Params, Smoother};
use crate::table::RouteTable;
use crate::Space;
use segdist_geo::GeoPoint;
use transition::Live;

mod transition;

/// One GPS fix: where, and optionally when (seconds, any origin).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fix {
    /// x/y, or longitude/latitude in degrees for a geographic graph.
    pub point: [f64; 2],
    /// Seconds; when given, fixes must not go back in time, and the route
    /// between two fixes is bounded by [`MatchOptions::max_speed`].
    pub time: Option<f64>,
}

/// The matcher's parameters. Distances are in the graph's unit (metres
/// when geographic).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatchOptions {
    /// The GPS noise's standard deviation (default 10).
    pub sigma: f64,
    /// The scale of the transition's exponential: how much longer than the
    /// straight line a route may be, typically (default 10).
    pub beta: f64,
    /// Candidates are looked for within this distance of a fix (default
    /// 50, [`default_radius`] of the default sigma; the command line and
    /// Python take `default_radius(sigma)` of the sigma given).
    pub radius: f64,
    /// At most this many candidate pieces per fix (default 8).
    pub k: usize,
    /// With times, the fastest a vehicle is taken to go (default 50, in
    /// units per second: 180 km/h in metres).
    pub max_speed: f64,
    /// A turn back on the same road, between two fixes, costs this much
    /// route length on top of the distance driven (default 50).
    pub u_turn_penalty: f64,
    /// How much a vehicle's velocity wanders: the deviation of its change
    /// over one second, in units per second (default 2: 2 m/s in a
    /// second). With times, the fixes are smoothed by a Kalman smoother of
    /// this process noise before they are matched, and again along the
    /// matched route after (see the crate docs, "Smoothing"). 0 turns
    /// smoothing off.
    pub acceleration: f64,
}

/// The radius the command line and Python look for candidates within when
/// none is given: 3 × `sigma`, at least 50 (metres when geographic).
///
/// Why 3σ: a fix's distance across the road it was on exceeds 3σ for 0.27 %
/// of fixes (Gaussian noise), and the wider 5σ this replaced (and the
/// bench's 4σ) put no more fixes on the true line at 20 m of noise (σ
/// above 16.7 is where 3σ and 5σ differ), on the Helsinki roads or the
/// bench's city, while the extra candidates and the longer route table
/// made a match 1.35–1.4 times slower there at 4σ (README, "Map
/// matching"). The floor of 50 keeps a small sigma, often an optimistic
/// one, from leaving real fixes without candidates. A NaN sigma gives 50.
///
/// ```
/// use segdist_match::default_radius;
/// assert_eq!(default_radius(5.0), 50.0);
/// assert_eq!(default_radius(20.0), 60.0);
/// assert_eq!(default_radius(f64::NAN), 50.0);
/// ```
#[must_use]
pub fn default_radius(sigma: f64) -> f64 {
    (3.0 * sigma).max(50.0)
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            sigma: 10.0,
            beta: 10.0,
            radius: default_radius(10.0),
            k: 8,
            max_speed: 50.0,
            u_turn_penalty: 50.0,
            acceleration: 2.0,
        }
    }
}

/// Why a trace could not be matched.
#[derive(Clone, Debug, PartialEq)]
pub enum MatchError {
    /// Fix `fix` is earlier than the fix before it.
    TimeGoesBack { fix: usize },
    /// An option out of range (a non-positive sigma, beta or speed, a
    /// negative radius, penalty or acceleration, or `k` of 0).
    BadOption(&'static str),
}

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatchError::TimeGoesBack { fix } => write!(f, "fix {fix} is earlier than the fix before it"),
            MatchError::BadOption(o) => write!(f, "{o} is out of range"),
        }
    }
}

impl std::error::Error for MatchError {}

/// What became of a fix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixState {
    /// On a road, continuing the sub-match of the fix before it (or
    /// starting the trace's first, or one after an unmatched fix).
    Matched,
    /// No road within the radius (or not a finite coordinate): ends the
    /// current sub-match. (With smoothing, the radius is measured from the
    /// fix's smoothed position.)
    Unmatched,
    /// On a road, but no route from the fix before it within the bound:
    /// starts a new sub-match.
    Break,
}

impl FixState {
    /// `matched`, `unmatched` or `break`.
    ///
    /// ```
    /// assert_eq!(segdist_match::FixState::Break.name(), "break");
    /// ```
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FixState::Matched => "matched",
            FixState::Unmatched => "unmatched",
            FixState::Break => "break",
        }
    }
}

/// A fix's match.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatchedFix {
    /// What became of it.
    pub state: FixState,
    /// Which sub-match of the trace it belongs to, from 0 (an unmatched fix
    /// carries the number of the sub-match before it, or 0).
    pub sub_match: u32,
    /// Where on the roads (`None` when unmatched).
    pub candidate: Option<Candidate>,
    /// Driving along the line's vertex order (`false`: against it).
    pub forward: bool,
    arc: u32,
}

/// A sub-match's path: the roads driven, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchedPath {
    /// The sub-match.
    pub sub_match: u32,
    /// The path's vertices, from the first fix's position to the last's
    /// (with smoothing, their smoothed positions' places on the roads).
    pub points: Vec<[f64; 2]>,
    /// The lines driven, in order (a line entered twice in a row once).
    pub lines: Vec<usize>,
}

/// A trace's match.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchedTrace {
    /// One per input fix, in input order.
    pub fixes: Vec<MatchedFix>,
    /// One per sub-match, when asked for.
    pub paths: Vec<MatchedPath>,
}

/// A state of the model: a candidate in a direction, its score and where it
/// came from.
#[derive(Clone, Copy)]
struct State {
    cand: u32,
    arc: u32,
    /// The arc's head node.
    head: u32,
    /// Distance along the arc from its tail.
    pos: f64,
    score: f64,
    back: u32,
}

/// The route length given to a move of `d` along the same arc (negative:
/// back; the caller takes moves back of up to 4σ). Forward, `d`. Back by up
/// to 2σ, `|d|`, as far as the fix moved: GPS jitter costs nothing. Farther
/// back, less and less (`4σ − |d|`): a steady reverse pays about its
/// straight distance every step, and a turn back (with its penalty) soon
/// wins. (Measured on the bench's traces: jitter at no cost is worth 3
/// points at 20 m and 1 s over counting every move back as no distance.)
#[inline(always)]
fn back_by_noise(d: f64, sigma: f64) -> f64 {
    if d >= 0.0 {
        d
    } else if -d <= 2.0 * sigma {
        -d
    } else {
        (4.0 * sigma + d).max(0.0)
    }
}

/// Scratch kept per thread across traces.
struct Scratch {
    routes: Routes,
    ranked: Ranked,
    /// A fix's nearest segments from the geographic grid.
    hits: Vec<segdist_geo::GeoHit>,
    /// The trace's fixes prepared (lon/lat only).
    points: Vec<Option<GeoPoint>>,
    cands: Vec<Candidate>,
    /// Every step's candidates and states, for the current sub-match.
    all_cands: Vec<Candidate>,
    states: Vec<State>,
    /// Per step of the current sub-match: (fix, first state, first candidate).
    steps: Vec<(usize, usize, usize)>,
    /// Head nodes already searched from in a step.
    done: Vec<u32>,
    /// A step's states not pruned by their emission, and the best way into
    /// each found so far.
    live: Live,
    /// Route lengths from a head node to the live states' tails.
    lengths: Vec<f64>,
    smoother: Smoother,
    chosen: Vec<Chosen>,
    /// The trace's fixes at their smoothed positions.
    smoothed: Vec<Fix>,
}

/// States this far below the step's best (in log-likelihood) are not
/// extended: e^-30 ≈ 1e-13 of the best's probability.
const PRUNE: f64 = 30.0;

thread_local! {
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

/// Matches traces on a [`RoadGraph`].
///
/// ```
/// use segdist_match::{Direction, Fix, FixState, GraphBuilder, MatchOptions, Matcher, Space};
/// let mut b = GraphBuilder::new(Space::Planar);
/// b.push_line(vec![vec![[0.0, 0.0], [100.0, 0.0]]], Direction::Both); // line 0
/// b.push_line(vec![vec![[100.0, 0.0], [200.0, 0.0]]], Direction::Both); // line 1
/// b.push_line(vec![vec![[100.0, 0.0], [100.0, 100.0]]], Direction::Both); // line 2
/// let g = b.build()?;
/// let m = Matcher::new(&g, MatchOptions::default()).unwrap();
/// let fixes: Vec<Fix> = [[10.0, 3.0], [60.0, -2.0], [103.0, 40.0], [98.0, 90.0]]
///     .map(|p| Fix { point: p, time: None })
///     .to_vec();
/// let out = m.match_trace(&fixes, true).unwrap();
/// let lines: Vec<usize> = out.fixes.iter().map(|f| f.candidate.unwrap().line).collect();
/// assert_eq!(lines, [0, 0, 2, 2]);
/// assert!(out.fixes.iter().all(|f| f.state == FixState::Matched && f.sub_match == 0));
/// assert_eq!(out.paths[0].lines, [0, 2]);
/// # Ok::<(), segdist_match::GraphError>(())
/// ```
pub struct Matcher<'g> {
    graph: &'g RoadGraph,
    o: MatchOptions,
    /// The planar graph's candidates for the radius (`None`: the index).
    grid: Option<Arc<Grid>>,
    /// Whether route searches are kept for later steps (always, but in the
    /// tests' reference matcher).
    keep_routes: bool,
    /// The graph's short routes, searched once (see `table.rs`; `None` in
    /// the tests' reference matcher, or for a graph too large).
    table: Option<Arc<RouteTable>>,
}

impl<'g> Matcher<'g> {
    /// A matcher on `graph`.
    ///
    /// The first matcher for a radius lays a grid of the segments near each
    /// cell for the candidate search (a planar graph's own, a geographic
    /// graph's [`segdist_geo::GeoGrid`]; 0.03–0.05 s for 100,000 segments),
    /// and searches every node's routes up to `6 × radius + u_turn_penalty`
    /// (the routes between fixes up to twice the radius apart; 0.03 s for a
    /// 100,000-segment grid on 2 cores, none for a graph whose table would
    /// hold over 8.4 M entries: its matchers search each step); the graph
    /// keeps both for later matchers.
    ///
    /// # Errors
    /// [`MatchError::BadOption`] for an option out of range.
    pub fn new(graph: &'g RoadGraph, options: MatchOptions) -> Result<Self, MatchError> {
        let o = options;
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !positive(o.sigma) {
            return Err(MatchError::BadOption("sigma"));
        }
        if !positive(o.beta) {
            return Err(MatchError::BadOption("beta"));
        }
        if o.max_speed.is_nan() || o.max_speed <= 0.0 {
            return Err(MatchError::BadOption("max_speed"));
        }
        if o.radius.is_nan() || o.radius < 0.0 {
            return Err(MatchError::BadOption("radius"));
        }
        if !o.u_turn_penalty.is_finite() || o.u_turn_penalty < 0.0 {
            return Err(MatchError::BadOption("u_turn_penalty"));
        }
        if !o.acceleration.is_finite() || o.acceleration < 0.0 {
            return Err(MatchError::BadOption("acceleration"));
        }
        if o.k == 0 {
            return Err(MatchError::BadOption("k"));
        }
        // Routes between fixes up to twice the radius apart (1–5 s at city
        // speeds) are bounded by 2 × straight + 2 × radius + the U-turn
        // penalty, within this reach.
        // The table's searches run on all cores; the grid, built on one,
        // joins them.
        let (table, grid) =
            rayon::join(|| graph.route_table(6.0 * o.radius + o.u_turn_penalty), || graph.grid(o.radius));
        Ok(Matcher { graph, o, grid, keep_routes: true, table })
    }

    /// Matches one trace; with `paths`, also each sub-match's path.
    ///
    /// # Errors
    /// [`MatchError::TimeGoesBack`] when a fix's time is earlier than the
    /// one before it (equal times are fine). Nothing else fails: see
    /// [`FixState`].
    pub fn match_trace(&self, fixes: &[Fix], paths: bool) -> Result<MatchedTrace, MatchError> {
        for i in 1..fixes.len() {
            if let (Some(a), Some(b)) = (fixes[i - 1].time, fixes[i].time)
                && b < a
            {
                return Err(MatchError::TimeGoesBack { fix: i });
            }
        }
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let s = s.get_or_insert_with(|| Scratch {
                routes: Routes::new(self.graph.nodes()),
                live: Live::default(),
                lengths: Vec::new(),
                ranked: Default::default(),
                hits: Vec::new(),
                points: Vec::new(),
                cands: Vec::new(),
                all_cands: Vec::new(),
                states: Vec::new(),
                steps: Vec::new(),
                done: Vec::new(),
                smoother: Smoother::default(),
                chosen: Vec::new(),
                smoothed: Vec::new(),
            });
            Ok(self.run(fixes, paths, s))
        })
    }

    fn run(&self, fixes: &[Fix], want_paths: bool, s: &mut Scratch) -> MatchedTrace {
        let g = self.graph;
        // With times, the fixes are matched at their smoothed positions.
        let mut at = std::mem::take(&mut s.smoothed);
        let smoothed = self.o.acceleration > 0.0
            && smooth::fixes(g.space(), fixes, self.o.sigma, self.o.acceleration, &mut s.smoother, &mut at);
        let original = fixes;
        let fixes = if smoothed { &at[..] } else { original };
        let none = MatchedFix { state: FixState::Unmatched, sub_match: 0, candidate: None, forward: true, arc: 0 };
        let mut out = vec![none; fixes.len()];
        let mut paths = Vec::new();
        s.states.clear();
        s.all_cands.clear();
        s.steps.clear();
        let mut sub: Option<u32> = None; // the current sub-match
        let mut next_sub = 0u32;
        let mut after_gap = false;
        // The next fixes' lists and segments are asked for two and one
        // steps ahead: at 5 s between fixes each fix is in other cells than
        // the last, its list and segments cache misses. `next_cell`: the
        // next fix's cell, whose list was asked for a step before.
        // A lon/lat fix's Earth-centred coordinates, worked out once for
        // its cell, its candidates and its distance from the fix before.
        let mut points = std::mem::take(&mut s.points);
        points.clear();
        if g.space() == Space::Geographic {
            points.extend(fixes.iter().map(|f| GeoPoint::new(f.point)));
        }
        let point = |i: usize| points.get(i).copied().flatten();
        let mut next_cell = self.grid.as_deref().and_then(|grid| {
            let c = fixes.get(1).and_then(|f| grid.cell(f.point, point(1).as_ref()));
            if let Some(c) = c {
                grid.prefetch_list(c);
            }
            c
        });
        for (i, fix) in fixes.iter().enumerate() {
            if let Some(grid) = self.grid.as_deref() {
                let after = fixes.get(i + 2).and_then(|f| grid.cell(f.point, point(i + 2).as_ref()));
                if let Some(c) = after {
                    grid.prefetch_list(c);
                }
                if let Some(c) = next_cell {
                    grid.prefetch_segments(c);
                }
                next_cell = after;
            }
            match self.grid.as_deref() {
                Some(Grid::Planar(grid)) => grid.candidates(g, fix.point, self.o.k, &mut s.ranked, &mut s.cands),
                Some(Grid::Geographic(grid)) => {
                    match point(i) {
                        // One candidate a piece: a segment surely farther
                        // than its piece's nearest is not measured.
                        Some(p) => grid.k_nearest_within_of_grouped(
                            &p,
                            2 * self.o.k,
                            |line, part, segment| g.piece_of(line, part, segment),
                            &mut s.hits,
                        ),
                        None => s.hits.clear(),
                    }
                    g.push_geographic(&s.hits, self.o.k, &mut s.cands);
                }
                None => g.candidates(fix.point, self.o.k, self.o.radius, &mut s.cands),
            }
            if s.cands.is_empty() {
                if let Some(id) = sub.take() {
                    self.finish(s, id, original, smoothed, &mut out, want_paths.then_some(&mut paths));
                }
                out[i].sub_match = next_sub.saturating_sub(1);
                after_gap = false;
                continue;
            }
            let mut first_state = s.states.len();
            let mut first_cand = s.all_cands.len();
            let emission = |d: f64| -0.5 * (d / self.o.sigma) * (d / self.o.sigma);
            for (c, cand) in s.cands.iter().enumerate() {
                let pc = &g.pieces[cand.piece as usize];
                for (arc, pos) in [(2 * cand.piece, cand.offset), (2 * cand.piece + 1, pc.len - cand.offset)] {
                    if g.open[arc as usize] {
                        let score = emission(cand.distance);
                        let head = g.head(arc);
                        s.states.push(State { cand: (first_cand + c) as u32, arc, head, pos, score, back: u32::MAX });
                    }
                }
            }
            s.all_cands.extend_from_slice(&s.cands);
            if let Some(id) = sub {
                let (prev_fix, prev_first, _) = *s.steps.last().expect("a sub-match has a step");
                let straight = match (point(prev_fix), point(i)) {
                    (Some(a), Some(b)) => a.distance(&b),
                    _ => g.distance(fixes[prev_fix].point, fix.point).unwrap_or(0.0),
                };
                if !self.transition(s, &fixes[prev_fix], fix, straight, prev_first, first_state) {
                    // No route: the sub-match ends before this fix, which
                    // starts the next with its emission scores alone.
                    let cands = s.all_cands.split_off(first_cand);
                    let states = s.states.split_off(first_state);
                    self.finish(s, id, original, smoothed, &mut out, want_paths.then_some(&mut paths));
                    s.all_cands.extend(cands);
                    s.states.extend(states.into_iter().map(|mut st| {
                        st.cand -= first_cand as u32;
                        st.score = emission(s.all_cands[st.cand as usize].distance);
                        st.back = u32::MAX;
                        st
                    }));
                    (first_state, first_cand) = (0, 0);
                    sub = None;
                    after_gap = true;
                }
            }
            if sub.is_none() {
                // A first step: emission alone, its best at 0 as every step's.
                let top = s.states[first_state..].iter().map(|st| st.score).fold(f64::NEG_INFINITY, f64::max);
                for st in &mut s.states[first_state..] {
                    st.score -= top;
                }
                sub = Some(next_sub);
                next_sub += 1;
                out[i].state = if after_gap { FixState::Break } else { FixState::Matched };
                after_gap = false;
            } else {
                out[i].state = FixState::Matched;
            }
            s.steps.push((i, first_state, first_cand));
            if self.keep_routes {
                // The next step searches from these states' heads: their
                // kept searches' slots are asked for now, to arrive while
                // the next fix's candidates are found.
                for st in &s.states[first_state..] {
                    self.prefetch_routes(&s.routes, st.head, false);
                }
            }
        }
        if let Some(id) = sub {
            self.finish(s, id, original, smoothed, &mut out, want_paths.then_some(&mut paths));
        }
        s.smoothed = at;
        s.points = points;
        MatchedTrace { fixes: out, paths }
    }

    /// Backtracks the current sub-match into `out`, smooths it along its
    /// route, then clears it (and draws its path). `fixes` are the trace's
    /// as given; `smoothed`: the states are those of their smoothed
    /// positions, so each fix's position on its piece is measured again.
    fn finish(
        &self,
        s: &mut Scratch,
        id: u32,
        fixes: &[Fix],
        smoothed: bool,
        out: &mut [MatchedFix],
        paths: Option<&mut Vec<MatchedPath>>,
    ) {
        let Some(&(_, last_first, _)) = s.steps.last() else { return };
        let mut best = last_first;
        for j in last_first..s.states.len() {
            if s.states[j].score > s.states[best].score {
                best = j;
            }
        }
        let mut chosen = Vec::with_capacity(s.steps.len());
        let mut j = best as u32;
        for _ in 0..s.steps.len() {
            chosen.push(j);
            j = s.states[j as usize].back;
        }
        chosen.reverse();
        for (&(fix, _, _), &j) in s.steps.iter().zip(&chosen) {
            let st = s.states[j as usize];
            let o = &mut out[fix];
            o.sub_match = id;
            o.candidate = Some(s.all_cands[st.cand as usize]);
            o.forward = st.arc.is_multiple_of(2);
            o.arc = st.arc;
        }
        if smoothed {
            s.chosen.clear();
            s.chosen.extend(s.steps.iter().zip(&chosen).map(|(&(fix, _, _), &j)| {
                let st = s.states[j as usize];
                Chosen { arc: st.arc, pos: st.pos, time: fixes[fix].time }
            }));
            let params = Params {
                sigma: self.o.sigma,
                acceleration: self.o.acceleration,
                max_speed: self.o.max_speed.min(1e6),
                tolerance: 4.0 * self.o.sigma,
            };
            let steps = &s.steps;
            s.smoother.run(self.graph, &mut s.routes.dijkstra, &s.chosen, params, |step, arc| {
                let o = &mut out[steps[step].0];
                o.forward = arc.is_multiple_of(2);
                o.arc = arc;
            });
            // The states are those of the smoothed positions: each fix is
            // measured once, from where it was given, on its piece. (The
            // piece's segments are finite, and so is the fix, whose smoothed
            // position had candidates: `None` cannot come.)
            for &(fix, _, _) in &s.steps {
                let o = &mut out[fix];
                o.candidate = self.graph.candidate_on(o.arc / 2, fixes[fix].point).or(o.candidate);
            }
        }
        if let Some(paths) = paths {
            let states: Vec<State> = chosen.iter().map(|&j| s.states[j as usize]).collect();
            paths.push(self.path(s, id, &states));
        }
        s.states.clear();
        s.all_cands.clear();
        s.steps.clear();
    }

    /// The path through a sub-match's chosen states.
    fn path(&self, s: &mut Scratch, id: u32, states: &[State]) -> MatchedPath {
        let g = self.graph;
        let mut points = Vec::new();
        let mut lines: Vec<usize> = Vec::new();
        let line = |l: usize, lines: &mut Vec<usize>| {
            if lines.last() != Some(&l) {
                lines.push(l);
            }
        };
        // Offsets along the piece, from the piece's first vertex.
        let off = |arc: u32, pos: f64| if arc.is_multiple_of(2) { pos } else { g.pieces[(arc / 2) as usize].len - pos };
        let first = states[0];
        line(g.pieces[(first.arc / 2) as usize].line as usize, &mut lines);
        g.piece_path(first.arc / 2, off(first.arc, first.pos), off(first.arc, first.pos), &mut points);
        let tolerance = 4.0 * self.o.sigma;
        let mut arcs = Vec::new();
        for w in states.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (pa, pb) = (a.arc / 2, b.arc / 2);
            if a.arc == b.arc && b.pos >= a.pos - tolerance {
                g.piece_path(pa, off(a.arc, a.pos), off(b.arc, b.pos.max(a.pos)), &mut points);
                continue;
            }
            if pa == pb {
                // A turn back: out to the turning point and back.
                g.piece_path(pa, off(a.arc, a.pos), off(b.arc, b.pos), &mut points);
                continue;
            }
            g.piece_path(pa, off(a.arc, a.pos), off(a.arc, g.pieces[pa as usize].len), &mut points);
            s.routes.dijkstra.run(g, g.head(a.arc), f64::INFINITY, Some(g.tail(b.arc)));
            arcs.clear();
            s.routes.dijkstra.arcs_to(g, g.tail(b.arc), &mut arcs);
            for &arc in &arcs {
                let p = arc / 2;
                line(g.pieces[p as usize].line as usize, &mut lines);
                let len = g.pieces[p as usize].len;
                g.piece_path(p, off(arc, 0.0), off(arc, len), &mut points);
            }
            line(g.pieces[pb as usize].line as usize, &mut lines);
            g.piece_path(pb, off(b.arc, 0.0), off(b.arc, b.pos), &mut points);
        }
        MatchedPath { sub_match: id, points, lines }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transition as first written, the reference for the matcher's
    /// (the tests' plain matcher runs it): every previous state against
    /// every live state, one pair at a time, each route case a branch, a
    /// fresh bounded search per head node.
    pub(super) fn transition_by_pairs(
        m: &Matcher,
        s: &mut Scratch,
        straight: f64,
        bound: f64,
        prev: usize,
        cur: usize,
    ) -> bool {
        let (g, o) = (m.graph, m.o);
        let tolerance = 4.0 * o.sigma;
        let top_emission = s.states[cur..].iter().map(|st| st.score).fold(f64::NEG_INFINITY, f64::max);
        let live: Vec<(usize, u32, f64, u32)> = (cur..s.states.len())
            .filter(|&n| s.states[n].score >= top_emission - PRUNE)
            .map(|n| (n, s.states[n].arc, s.states[n].pos, g.tail(s.states[n].arc)))
            .collect();
        let mut best = vec![(f64::NEG_INFINITY, u32::MAX); s.states.len() - cur];
        let mut lengths = Vec::new();
        // The previous states by head node, the heads in their first
        // state's order (which state wins a tie).
        let mut order: Vec<usize> = (prev..cur).collect();
        let first = |h: u32| (prev..cur).find(|&j| s.states[j].head == h && s.states[j].score >= -PRUNE).unwrap_or(cur);
        order.sort_by_key(|&j| first(s.states[j].head));
        for jj in order {
            let sj = s.states[jj];
            if sj.score < -PRUNE {
                continue;
            }
            let arc_len = g.pieces[(sj.arc / 2) as usize].len;
            s.routes.lengths(g, sj.head, bound, 0.0, false, None, live.iter().map(|l| l.3), &mut lengths);
            for (l, &(n, arc, pos, _)) in live.iter().enumerate() {
                let route = if arc == sj.arc && pos >= sj.pos - tolerance {
                    back_by_noise(pos - sj.pos, o.sigma)
                } else if arc / 2 == sj.arc / 2 && arc != sj.arc {
                    (arc_len - pos - sj.pos).abs() + o.u_turn_penalty
                } else {
                    arc_len - sj.pos + lengths[l] + pos
                };
                if route > bound {
                    continue;
                }
                let score = sj.score - (route - straight).abs() / o.beta;
                if score > best[n - cur].0 {
                    best[n - cur] = (score, jj as u32);
                }
            }
        }
        let mut top = f64::NEG_INFINITY;
        for (st, &(score, back)) in s.states[cur..].iter_mut().zip(&best) {
            if back == u32::MAX {
                st.score = f64::NEG_INFINITY;
            } else {
                (st.score, st.back) = (st.score + score, back);
                top = top.max(st.score);
            }
        }
        let any = top > f64::NEG_INFINITY;
        if any {
            for st in &mut s.states[cur..] {
                st.score -= top;
            }
        }
        any
    }
    use crate::simulate::{simulate, SimOptions};
    use crate::{Direction, GraphBuilder, Space};

    /// A lattice of 60 m blocks, its streets cut into lines at odd places
    /// (some two blocks long, some one-way), with diagonals through some
    /// blocks meeting the lattice at its corners.
    fn town() -> RoadGraph {
        town_in(Space::Planar)
    }

    /// [`town`] in metres, or in lon/lat at 60° N.
    fn town_in(space: Space) -> RoadGraph {
        let mut b = GraphBuilder::new(space);
        let n = 14;
        let at = |i: usize, j: usize| {
            let m = [60.0 * i as f64 + 0.25 * (j % 3) as f64, 60.0 * j as f64];
            match space {
                Space::Planar => m,
                Space::Geographic => [24.9 + m[0] / 55_800.0, 60.2 + m[1] / 111_400.0],
            }
        };
        for j in 0..=n {
            let mut i = 0;
            while i < n {
                let len = 1 + (i + j) % 2;
                let end = (i + len).min(n);
                let dir = if (i * 7 + j) % 5 == 0 { Direction::Forward } else { Direction::Both };
                b.push_line(vec![(i..=end).map(|k| at(k, j)).collect()], dir);
                b.push_line(vec![(i..=end).map(|k| at(j, k)).collect()], Direction::Both);
                i = end;
            }
        }
        for i in (0..n).step_by(3) {
            b.push_line(vec![vec![at(i, i), at(i + 1, i + 1)]], Direction::Both);
        }
        b.build().expect("finite")
    }

    /// Each segment's piece is the one whose vertices hold it, on lines cut
    /// into several pieces where other lines meet them mid-way.
    #[test]
    fn each_segment_s_piece_holds_it() {
        let g = town();
        let mut cut = 0;
        for (line, part, segment, v) in g.segments() {
            let want =
                g.pieces.iter().position(|pc| pc.line as usize == line && pc.v0 as usize <= v && v < pc.v1 as usize);
            assert_eq!(Some(g.piece_of(line, part, segment) as usize), want, "line {line}, segment {segment}");
            cut += usize::from(g.pieces[want.unwrap()].v0 as usize > g.part_start[g.line_start[line] + part]);
        }
        assert!(cut > 20, "{cut} segments past a line's first piece");
    }

    #[test]
    fn matchers_of_one_radius_share_the_graph_s_grid() {
        let g = town();
        let o = MatchOptions::default();
        let (a, b) = (Matcher::new(&g, o).unwrap(), Matcher::new(&g, o).unwrap());
        assert!(Arc::ptr_eq(a.grid.as_ref().unwrap(), b.grid.as_ref().unwrap()));
        let c = Matcher::new(&g, MatchOptions { radius: 80.0, ..o }).unwrap();
        assert!(!Arc::ptr_eq(a.grid.as_ref().unwrap(), c.grid.as_ref().unwrap()));
        // A radius of 0 asks the index.
        assert!(Matcher::new(&g, MatchOptions { radius: 0.0, ..o }).unwrap().grid.is_none());
    }

    /// The grid's candidates (planar, and the geographic index's grid), the
    /// route table, the kept route searches and the transition's
    /// branch-free loop give the answers of the index, of a fresh search and
    /// of the transition by pairs at every step, bit for bit.
    #[test]
    fn shortcuts_answer_as_the_plain_matcher() {
        for space in [Space::Planar, Space::Geographic] {
            shortcuts_answer_as_the_plain_matcher_in(space);
        }
    }

    fn shortcuts_answer_as_the_plain_matcher_in(space: Space) {
        let g = town_in(space);
        let speeds = vec![12.0; 400];
        for (interval, noise, seed) in [(1.0, 5.0, 1), (1.0, 20.0, 2), (5.0, 10.0, 3), (30.0, 10.0, 4)] {
            let traces = simulate(&g, &speeds, 30, &SimOptions { interval, noise, legs: 3, seed });
            for timed in [true, false] {
                let o = MatchOptions { sigma: noise, radius: (5.0 * noise).max(50.0), ..Default::default() };
                let fast = Matcher::new(&g, o).unwrap();
                assert!(fast.grid.is_some());
                let plain = Matcher { grid: None, keep_routes: false, table: None, ..Matcher::new(&g, o).unwrap() };
                let mut fixes = 0;
                for tr in &traces {
                    let f: Vec<Fix> =
                        tr.iter().map(|s| Fix { time: if timed { s.fix.time } else { None }, ..s.fix }).collect();
                    fixes += f.len();
                    assert_eq!(fast.match_trace(&f, true), plain.match_trace(&f, true));
                }
                assert!(fixes > 100, "{fixes}");
            }
        }
    }
}
