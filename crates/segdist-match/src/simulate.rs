//! Simulated GPS traces with known truth, for measuring a matcher: a vehicle
//! drives shortest paths between random nodes of a [`RoadGraph`], at each
//! line's speed, and a fix is taken every `interval` seconds with Gaussian
//! noise added in metres.
//!
//! The noise is drawn by the Box–Muller transform over `rand`'s uniform
//! numbers: three lines, where `rand_distr` would be a crate for one
//! distribution.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::graph::{RoadGraph, Space};
use crate::hmm::Fix;
use crate::route::Dijkstra;

/// How to simulate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimOptions {
    /// Seconds between fixes.
    pub interval: f64,
    /// Standard deviation of the noise on each coordinate, in metres.
    pub noise: f64,
    /// Shortest-path legs driven one after the other per trace.
    pub legs: usize,
    /// The random stream (the same seed, the same traces).
    pub seed: u64,
}

/// One simulated fix and the truth behind it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimFix {
    /// The fix as a GPS would give it: noisy position, time.
    pub fix: Fix,
    /// The line the vehicle was on.
    pub line: usize,
    /// Where it was, without noise.
    pub truth: [f64; 2],
}

/// `traces` simulated traces on `graph`, `speeds[line]` being each line's
/// speed in metres per second (a line of speed 0 or less is never driven).
/// A trace may come out shorter than asked, or empty, on a graph with few
/// connected lines.
///
/// ```
/// use segdist_match::simulate::{simulate, SimOptions};
/// use segdist_match::{Direction, GraphBuilder, Space};
/// let mut b = GraphBuilder::new(Space::Planar);
/// b.push_line(vec![vec![[0.0, 0.0], [1000.0, 0.0]]], Direction::Both);
/// b.push_line(vec![vec![[1000.0, 0.0], [1000.0, 1000.0]]], Direction::Both);
/// let g = b.build()?;
/// let o = SimOptions { interval: 1.0, noise: 5.0, legs: 2, seed: 7 };
/// let traces = simulate(&g, &[10.0, 10.0], 3, &o);
/// assert_eq!(traces.len(), 3);
/// assert!(traces.iter().flatten().all(|f| f.line < 2));
/// # Ok::<(), segdist_match::GraphError>(())
/// ```
#[must_use]
pub fn simulate(graph: &RoadGraph, speeds: &[f64], traces: usize, o: &SimOptions) -> Vec<Vec<SimFix>> {
    let mut rng = ChaCha8Rng::seed_from_u64(o.seed);
    let mut dijkstra = Dijkstra::new(graph.nodes());
    let speed = |arc: u32| speeds.get(graph.pieces[(arc / 2) as usize].line as usize).copied().unwrap_or(0.0);
    let drivable: Vec<u32> =
        (0..graph.open.len() as u32).filter(|&a| graph.open[a as usize] && speed(a) > 0.0).collect();
    let mut out = Vec::with_capacity(traces);
    for _ in 0..traces {
        let mut fixes = Vec::new();
        if drivable.is_empty() {
            out.push(fixes);
            continue;
        }
        // The arcs driven, in order.
        let mut arcs = vec![drivable[rng.gen_range(0..drivable.len())]];
        for _ in 0..o.legs {
            let from = graph.head(*arcs.last().expect("one arc at least"));
            dijkstra.run_by(graph, from, |a| speed(a) > 0.0);
            let reached: Vec<u32> =
                (0..graph.nodes() as u32).filter(|&n| dijkstra.dist(n).is_finite() && n != from).collect();
            if reached.is_empty() {
                break;
            }
            let to = reached[rng.gen_range(0..reached.len())];
            dijkstra.arcs_to(graph, to, &mut arcs);
        }
        // Drive them, a fix every interval.
        let (mut time, mut next) = (0.0, 0.0);
        for &arc in &arcs {
            let (p, v) = (arc / 2, speed(arc));
            let len = graph.pieces[p as usize].len;
            while next <= time + len / v {
                let pos = (next - time) * v;
                let off = if arc.is_multiple_of(2) { pos } else { len - pos };
                let truth = graph.point_on(p, off);
                let point = noisy(graph.space, truth, o.noise, &mut rng);
                fixes.push(SimFix {
                    fix: Fix { point, time: Some(next) },
                    line: graph.pieces[p as usize].line as usize,
                    truth,
                });
                next += o.interval;
            }
            time += len / v;
        }
        out.push(fixes);
    }
    out
}

/// `p` moved by Gaussian noise of `sigma` metres on each axis.
fn noisy(space: Space, p: [f64; 2], sigma: f64, rng: &mut ChaCha8Rng) -> [f64; 2] {
    let u1: f64 = 1.0 - rng.r#gen::<f64>(); // (0, 1]
    let u2: f64 = rng.r#gen::<f64>();
    let r = sigma * (-2.0 * u1.ln()).sqrt();
    let (dx, dy) = (r * (std::f64::consts::TAU * u2).cos(), r * (std::f64::consts::TAU * u2).sin());
    match space {
        Space::Planar => [p[0] + dx, p[1] + dy],
        Space::Geographic => {
            // Metres to degrees on the local tangent plane (WGS84 radii of
            // curvature).
            let lat = p[1].to_radians();
            let (n, m) = crate::graph::radii(lat);
            [p[0] + (dx / (n * lat.cos())).to_degrees(), p[1] + (dy / m).to_degrees()]
        }
    }
}
