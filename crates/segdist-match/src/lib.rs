//! Map matching: whole GPS traces onto a road network.
//!
//! [`GraphBuilder`] turns line features into a [`RoadGraph`] (nodes where
//! lines meet, one-way lines driven one way); [`Matcher`] matches each trace
//! with a hidden Markov model whose candidates are segdist's exact
//! nearest-segment answers (geodesic metres for lon/lat), and whose routes
//! come from a bounded shortest-path search.
//!
//! ```
//! use segdist_match::{Direction, Fix, GraphBuilder, MatchOptions, Matcher, Space};
//!
//! // Two parallel streets 30 m apart, joined at both ends.
//! let mut b = GraphBuilder::new(Space::Planar);
//! b.push_line(vec![vec![[0.0, 0.0], [500.0, 0.0]]], Direction::Both); // 0: south
//! b.push_line(vec![vec![[0.0, 30.0], [500.0, 30.0]]], Direction::Both); // 1: north
//! b.push_line(vec![vec![[0.0, 0.0], [0.0, 30.0]]], Direction::Both);
//! b.push_line(vec![vec![[500.0, 0.0], [500.0, 30.0]]], Direction::Both);
//! let roads = b.build()?;
//!
//! // A drive along the south street; one fix strays 17 m north, nearer
//! // the other street, but the trace as a whole stays south.
//! let fixes: Vec<Fix> = [[50.0, 2.0], [150.0, -3.0], [250.0, 17.0], [350.0, 1.0], [450.0, -2.0]]
//!     .map(|p| Fix { point: p, time: None })
//!     .to_vec();
//! let m = Matcher::new(&roads, MatchOptions::default()).unwrap();
//! let matched = m.match_trace(&fixes, false).unwrap();
//! assert!(matched.fixes.iter().all(|f| f.candidate.unwrap().line == 0));
//! # Ok::<(), segdist_match::GraphError>(())
//! ```
//!
//! # Smoothing
//!
//! When every fix of a trace has a time, the matcher smooths twice, with a
//! Kalman filter and Rauch–Tung–Striebel smoother of a vehicle whose
//! velocity wanders by [`MatchOptions::acceleration`] (2 m/s in a second by
//! default; 0 turns smoothing off):
//!
//! 1. **Before matching**, the fixes' positions: the model's candidates and
//!    transitions are those of the smoothed positions, which at 1 s between
//!    fixes are 2.3–3.2 times nearer the truth than the fixes (at 5–20 m of
//!    noise on a simulated lattice; 1.3–1.7 times at 5 s). A fix
//!    more than 6σ from where the fixes before it put the vehicle (a GPS
//!    jump) is left out and matched as it is.
//! 2. **After Viterbi**, each fix's distance along the matched route: a fix
//!    whose smoothed distance lies on another piece of the route than its
//!    state's (a fix near a junction, its noise along the road putting it
//!    on the far side) is moved to that piece.
//!
//! The lines driven are Viterbi's, and what is reported of a fix is its
//! own: its closest point on the piece it was matched to, and its exact
//! distance there (geodesic metres in lon/lat), as without smoothing. On
//! the bench's simulated traces (README, "Map matching"), smoothing puts
//! 94 % of fixes on the true line at 5 m of noise and 1 s where 87 % were
//! before on the Helsinki roads, 83 % where 45 % were at 20 m. Without
//! times (or with a time missing or not finite), nothing is smoothed.
//!
//! ```
//! use segdist_match::{Direction, Fix, GraphBuilder, MatchOptions, Matcher, Space};
//! // A street, and a side street leaving it at x = 100.
//! let mut b = GraphBuilder::new(Space::Planar);
//! b.push_line(vec![vec![[0.0, 0.0], [100.0, 0.0]]], Direction::Both); // 0
//! b.push_line(vec![vec![[100.0, 0.0], [200.0, 0.0]]], Direction::Both); // 1
//! b.push_line(vec![vec![[100.0, 0.0], [100.0, 100.0]]], Direction::Both); // 2
//! let roads = b.build()?;
//! // A car at 10 m/s along the street, past the junction at t = 10 s; the
//! // fix at t = 10.2 s (x = 102) was thrown 4 m back by noise.
//! let xs = [60.0, 70.0, 80.0, 90.0, 98.0, 112.0, 122.0, 132.0];
//! let ts = [6.0, 7.0, 8.0, 9.0, 10.2, 11.2, 12.2, 13.2];
//! let fixes: Vec<Fix> = xs.iter().zip(&ts).map(|(&x, &t)| Fix { point: [x, 1.0], time: Some(t) }).collect();
//! let o = MatchOptions { sigma: 5.0, ..MatchOptions::default() };
//! let lines = |o: MatchOptions| -> Vec<usize> {
//!     let m = Matcher::new(&roads, o).unwrap();
//!     m.match_trace(&fixes, false).unwrap().fixes.iter().map(|f| f.candidate.unwrap().line).collect()
//! };
//! assert_eq!(lines(MatchOptions { acceleration: 0.0, ..o }), [0, 0, 0, 0, 0, 1, 1, 1]);
//! assert_eq!(lines(o), [0, 0, 0, 0, 1, 1, 1, 1]);
//! # Ok::<(), segdist_match::GraphError>(())
//! ```

mod candidates;
mod graph;
mod hmm;
mod route;
pub mod simulate;
mod smooth;
mod table;

pub use graph::{Candidate, Direction, GraphBuilder, GraphError, Junctions, RoadGraph, Space};
pub use hmm::{
    default_radius, Fix, FixState, MatchError, MatchOptions, MatchedFix, MatchedPath, MatchedTrace, Matcher,
};

/// A prefetch of the cache line at `p` into every level: the route
/// searches' and the candidate grid's hints (nothing where the CPU has no
/// such instruction).
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
