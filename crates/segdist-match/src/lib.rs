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

mod candidates;
mod graph;
mod hmm;
mod route;
pub mod simulate;

pub use graph::{Candidate, Direction, GraphBuilder, GraphError, Junctions, RoadGraph, Space};
pub use hmm::{Fix, FixState, MatchError, MatchOptions, MatchedFix, MatchedPath, MatchedTrace, Matcher};
