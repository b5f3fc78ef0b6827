//! A step of the model: the states of one fix scored from those of the
//! fix before (`Matcher::transition`), the route between each pair from the
//! graph's route table, a kept search or a fresh one, and the best incoming
//! score kept per state (Viterbi). Each previous state is tried against
//! every live state in one loop without a branch, over [`Live`]'s columns.

use super::{back_by_noise, Fix, Matcher, Scratch, PRUNE};

/// A step's live states (those not pruned by their emission), a column
/// per field so that a previous state is tried against all of them in one
/// loop without branches (the compiler vectorises it), and the best
/// incoming score and previous state found for each so far.
#[derive(Default)]
pub(super) struct Live {
    /// The state's place among the step's states.
    pub(super) state: Vec<u32>,
    pub(super) arc: Vec<u32>,
    /// Distance along the arc from its tail.
    pub(super) pos: Vec<f64>,
    /// The arc's tail node, where a route to it arrives.
    pub(super) tail: Vec<u32>,
    /// The best incoming score so far (-inf: none).
    pub(super) score: Vec<f64>,
    /// The previous state it comes from (`u64::MAX`: none; as wide as a
    /// score, for the loop's vectors).
    pub(super) back: Vec<u64>,
}

impl Live {
    pub(super) fn clear(&mut self) {
        self.state.clear();
        self.arc.clear();
        self.pos.clear();
        self.tail.clear();
        self.score.clear();
        self.back.clear();
    }

    pub(super) fn push(&mut self, state: u32, arc: u32, pos: f64, tail: u32) {
        self.state.push(state);
        self.arc.push(arc);
        self.pos.push(pos);
        self.tail.push(tail);
        self.score.push(f64::NEG_INFINITY);
        self.back.push(u64::MAX);
    }

    pub(super) fn len(&self) -> usize {
        self.state.len()
    }
}

impl Matcher<'_> {
    /// Asks for the memory a route lookup from `head` will read: the graph's
    /// table row, or this thread's kept search (see `Routes::prefetch`;
    /// `entries`: the row's or search's first entries, else its place).
    #[inline]
    pub(super) fn prefetch_routes(&self, routes: &crate::route::Routes, head: u32, entries: bool) {
        match self.table.as_deref() {
            Some(t) => t.prefetch(head, entries),
            None => routes.prefetch(head, entries),
        }
    }

    /// Scores the states `cur..` of this step from those `prev..cur` of the
    /// step before, fixes `a` and `b`, `straight` apart; `false` when none
    /// is reachable.
    // Out of line: inlined into `run`, with its route lookups, a match
    // took 1.4 % more instructions (callgrind, 150 traces at 1 s).
    #[inline(never)]
    pub(super) fn transition(&self, s: &mut Scratch, a: &Fix, b: &Fix, straight: f64, prev: usize, cur: usize) -> bool {
        let g = self.graph;
        if self.keep_routes {
            // The rows' (or slots') places came in during the candidate
            // search (see `run`): now their entries, while the bound and
            // the live states are worked out.
            for st in &s.states[prev..cur] {
                self.prefetch_routes(&s.routes, st.head, true);
            }
        }
        let mut bound = 2.0 * straight + 2.0 * self.o.radius + self.o.u_turn_penalty;
        if let (Some(ta), Some(tb)) = (a.time, b.time) {
            bound = bound.min(self.o.max_speed * (tb - ta) + 4.0 * self.o.sigma);
        }
        // Moving back a little on the same arc is GPS noise: the along-track
        // difference of two fixes has a deviation of sigma × √2.
        let tolerance = 4.0 * self.o.sigma;
        #[cfg(test)]
        if !self.keep_routes {
            // The tests' reference matcher: pair by pair, a fresh search per
            // head node.
            return super::tests::transition_by_pairs(self, s, straight, bound, prev, cur);
        }
        let mut any = false;
        let top_emission = s.states[cur..].iter().map(|st| st.score).fold(f64::NEG_INFINITY, f64::max);
        // Scores here are emissions alone: a state far below the step's
        // best cannot win.
        s.live.clear();
        for (n, st) in s.states[cur..].iter().enumerate() {
            if st.score >= top_emission - PRUNE {
                s.live.push(n as u32, st.arc, st.pos, g.tail(st.arc));
            }
        }
        s.done.clear();
        let (sigma, beta, penalty) = (self.o.sigma, self.o.beta, self.o.u_turn_penalty);
        let Scratch { states, live, done, routes, lengths, .. } = s;
        let n = live.len();
        let before = &states[prev..cur];
        // Scores of the previous step are normalised: its best is 0.
        for (j, first) in before.iter().enumerate() {
            // One search per distinct head node.
            let head = first.head;
            if first.score < -PRUNE || done.contains(&head) {
                continue;
            }
            done.push(head);
            let mut searched = false;
            for (jj, sj) in before.iter().enumerate().skip(j) {
                if sj.head != head || sj.score < -PRUNE {
                    continue;
                }
                let from = (prev + jj) as u64;
                let arc_len = g.pieces[(sj.arc / 2) as usize].len;
                // What is left of its arc to drive.
                let rest = arc_len - sj.pos;
                // A transition only lowers a score: sj wins nothing where
                // the best so far is at least its own.
                if !live.score.iter().fold(false, |w, &best| w | (sj.score > best)) {
                    continue;
                }
                if !searched {
                    routes.lengths(
                        g,
                        head,
                        bound,
                        2.0 * self.o.radius,
                        self.keep_routes,
                        self.table.as_deref(),
                        live.tail.iter().copied(),
                        lengths,
                    );
                    searched = true;
                }
                // Every live state by a route from the head, in one loop
                // without a branch. Those on sj's own piece (one candidate
                // a piece: at most its two arcs) take their route by a rule
                // of their own, selected by masks in the same loop: a move
                // along the same arc (GPS noise moving it back a little,
                // see `back_by_noise`), a turn back on the piece, or back
                // along its own arc by more than noise, round by the road.
                let (piece, arc, from_pos) = (sj.arc / 2, sj.arc, sj.pos);
                let lanes = (live.arc[..n].iter().zip(&live.pos[..n]))
                    .zip(&lengths[..n])
                    .zip(&mut live.score[..n])
                    .zip(&mut live.back[..n]);
                for ((((&a, &p), &length), best), back) in lanes {
                    let by_road = rest + length + p;
                    let moved = back_by_noise(p - from_pos, sigma);
                    let turned = (arc_len - p - from_pos).abs() + penalty;
                    let route = if (a == arc) & (p >= from_pos - tolerance) {
                        moved
                    } else if (a / 2 == piece) & (a != arc) {
                        turned
                    } else {
                        by_road
                    };
                    let score = sj.score - (route - straight).abs() / beta;
                    // Selected by masks, not by a branch (which SSE2, with
                    // no blend, had made of a select: a test a lane; 3–7 %
                    // of a match at 20 m of noise). AVX2 through runtime
                    // dispatch, four lanes to two, gained nothing more: a
                    // step has 11 live states.
                    let wins = u64::from((route <= bound) & (score > *best)).wrapping_neg();
                    *best = f64::from_bits(score.to_bits() & wins | best.to_bits() & !wins);
                    *back = from & wins | *back & !wins;
                }
            }
        }
        // Each live state's score and way in; the others cannot be reached.
        // (Every state of a step comes in with no way in: `back` unset.)
        debug_assert!(states[cur..].iter().all(|st| st.back == u32::MAX));
        for l in 0..n {
            let st = &mut states[cur + live.state[l] as usize];
            if live.back[l] != u64::MAX {
                st.score += live.score[l];
                st.back = live.back[l] as u32;
            }
        }
        let mut top = f64::NEG_INFINITY;
        for st in &mut states[cur..] {
            if st.back == u32::MAX {
                st.score = f64::NEG_INFINITY;
            } else {
                any = true;
                top = top.max(st.score);
            }
        }
        // Keep scores near 0 over long traces.
        if any {
            for st in &mut s.states[cur..] {
                st.score -= top;
            }
        }
        any
    }
}
