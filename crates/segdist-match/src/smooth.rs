//! Smoothing along the matched path: once Viterbi has chosen a sub-match's
//! states, and so the route the vehicle drove, each fix's position along
//! that route is re-estimated from its neighbours' as well as its own.
//!
//! Why: the states put each fix at its own projection onto the roads, so
//! a fix's noise along the road moves it past a junction as often as not
//! when the vehicle is near one: the wrong line, whatever the model's
//! scores (at 5 m of noise, 2 m of road at each end of every piece). Along
//! the route, the vehicle's distance driven is a smooth function of time;
//! a Kalman filter and Rauch–Tung–Striebel smoother over (distance, speed),
//! the speed wandering by [`MatchOptions::acceleration`], estimates it from
//! all of the sub-match's fixes, with much less noise than one fix has. A
//! fix whose estimate lies on another piece of the route than its state's
//! is moved there: its position becomes its closest point on that piece.
//!
//! The route and the lines driven are Viterbi's; only which of the
//! route's pieces a fix is on can change. Without times (or with a time
//! not finite) nothing is smoothed. A turn back on the same piece splits
//! the smoothing (the distance driven there is not known), and so does a
//! gap in time over which the speed's wander alone moves the vehicle
//! farther than 3σ (the neighbours then say little).
//!
//! [`MatchOptions::acceleration`]: crate::MatchOptions::acceleration

use crate::graph::{metres_per_degree, RoadGraph, Space};
use crate::hmm::Fix;
use crate::route::Dijkstra;

/// A state chosen by Viterbi, as the smoother sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Chosen {
    pub(crate) arc: u32,
    /// Distance along the arc from its tail.
    pub(crate) pos: f64,
    pub(crate) time: Option<f64>,
}

/// One arc of the route, and the distance driven when at its tail.
#[derive(Clone, Copy, Debug)]
struct Leg {
    arc: u32,
    start: f64,
}

/// Scratch for smoothing, kept per thread.
#[derive(Default)]
pub(crate) struct Smoother {
    legs: Vec<Leg>,
    /// Per step of the current run: its leg, its distance driven, its time.
    at: Vec<(usize, f64, f64)>,
    /// The filter's scratch (see [`rts`]).
    filter: Vec<[([f64; 2], [f64; 3]); 2]>,
    outlier: Vec<bool>,
    t: Vec<f64>,
    z: Vec<[f64; 1]>,
    xy: Vec<[f64; 2]>,
    arcs: Vec<u32>,
}

/// The parameters of a smoothing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    /// GPS noise's deviation (the measurement's along the route).
    pub(crate) sigma: f64,
    /// The speed's wander: deviation of its change over a second.
    pub(crate) acceleration: f64,
    /// A bound on the speed, for the first state's uncertainty.
    pub(crate) max_speed: f64,
    /// How far back on the same arc a move is taken for noise.
    pub(crate) tolerance: f64,
}

impl Smoother {
    /// Smooths the chosen states of one sub-match; for each step whose
    /// estimate lies on another piece of the route, calls `moved(step,
    /// arc)` with the route's arc there (the caller measures the fix on
    /// it).
    pub(crate) fn run(
        &mut self,
        g: &RoadGraph,
        dijkstra: &mut Dijkstra,
        chosen: &[Chosen],
        p: Params,
        mut moved: impl FnMut(usize, u32),
    ) {
        if p.acceleration.is_nan() || p.acceleration <= 0.0 || chosen.len() < 3 {
            return;
        }
        let q = p.acceleration * p.acceleration;
        let mut first = 0;
        while first < chosen.len() {
            // A run: steps first..end, one route without turns back.
            self.legs.clear();
            self.at.clear();
            let Some(t0) = chosen[first].time.filter(|t| t.is_finite()) else {
                first += 1;
                continue;
            };
            self.legs.push(Leg { arc: chosen[first].arc, start: 0.0 });
            self.at.push((0, chosen[first].pos, t0));
            let mut end = first + 1;
            while end < chosen.len() {
                let (a, b) = (chosen[end - 1], chosen[end]);
                let Some(t) = b.time.filter(|t| t.is_finite()) else { break };
                let dt = t - self.at.last().expect("a step").2;
                // The wander in distance over dt: √(q dt³ / 3).
                if q * dt * dt * dt / 3.0 > 9.0 * p.sigma * p.sigma {
                    break;
                }
                let leg = *self.legs.last().expect("a leg");
                if b.arc == a.arc && b.pos >= a.pos - p.tolerance {
                    self.at.push((self.legs.len() - 1, leg.start + b.pos, t));
                } else if b.arc / 2 == a.arc / 2 {
                    break; // a turn back
                } else {
                    let (from, to) = (g.head(a.arc), g.tail(b.arc));
                    self.arcs.clear();
                    if from != to {
                        dijkstra.run(g, from, f64::INFINITY, Some(to));
                        if !dijkstra.dist(to).is_finite() {
                            break;
                        }
                        dijkstra.arcs_to(g, to, &mut self.arcs);
                    }
                    self.arcs.push(b.arc);
                    let mut start = leg.start + len(g, a.arc);
                    for &arc in &self.arcs {
                        self.legs.push(Leg { arc, start });
                        start += len(g, arc);
                    }
                    let last = *self.legs.last().expect("a leg");
                    self.at.push((self.legs.len() - 1, last.start + b.pos, t));
                }
                end += 1;
            }
            if end - first >= 3 {
                self.smooth(p, q);
                self.place(g, first, &mut moved);
            }
            first = end;
        }
    }

    /// The smoothed distances into `at`'s second field.
    fn smooth(&mut self, p: Params, q: f64) {
        self.t.clear();
        self.z.clear();
        self.t.extend(self.at.iter().map(|a| a.2));
        self.z.extend(self.at.iter().map(|a| [a.1]));
        let v0 = p.max_speed * p.max_speed;
        rts(&self.t, &mut self.z, p.sigma * p.sigma, q, v0, &mut self.filter, &mut self.outlier);
        for (a, z) in self.at.iter_mut().zip(&self.z) {
            a.1 = z[0];
        }
    }

    /// Puts each step of the run (starting at chosen state `first`) on the
    /// leg its smoothed distance falls in, telling `moved` of those that
    /// change piece.
    fn place(&self, g: &RoadGraph, first: usize, moved: &mut impl FnMut(usize, u32)) {
        let last = self.legs.len() - 1;
        let span = |l: usize| (self.legs[l].start, self.legs[l].start + len(g, self.legs[l].arc));
        for (i, &(own, s, _)) in self.at.iter().enumerate() {
            let mut l = own;
            while l > 0 && s < span(l).0 {
                l -= 1;
            }
            while l < last && s > span(l).1 {
                l += 1;
            }
            let arc = self.legs[l].arc;
            if arc / 2 == self.legs[own].arc / 2 {
                continue;
            }
            moved(first + i, arc);
        }
    }
}

fn len(g: &RoadGraph, arc: u32) -> f64 {
    g.pieces[(arc / 2) as usize].len
}

/// The trace's fixes at their smoothed positions into `out`, when every
/// fix has a finite time (else `false`, and `out` is left as it is).
///
/// Each coordinate is smoothed on its own (in metres on the local tangent
/// plane when geographic, longitudes unwrapped across the antimeridian) by
/// the same constant-speed model as the route, over each run of
/// consecutive valid fixes; a fix not finite (or not lon/lat) is kept as
/// it is, and so are outliers (a jump of over 6σ from where the fixes
/// before put the vehicle, left out of the smoothing), runs near a pole
/// (where longitude's metres vanish) and runs of fewer than 3 fixes.
pub(crate) fn fixes(
    space: Space,
    fixes: &[Fix],
    sigma: f64,
    acceleration: f64,
    scratch: &mut Smoother,
    out: &mut Vec<Fix>,
) -> bool {
    if !fixes.iter().all(|f| f.time.is_some_and(f64::is_finite)) {
        return false;
    }
    out.clear();
    out.extend_from_slice(fixes);
    let geographic = space == Space::Geographic;
    let valid = |p: [f64; 2]| p[0].is_finite() && p[1].is_finite() && (!geographic || p[1].abs() <= 90.0);
    let (r, q) = (sigma * sigma, acceleration * acceleration);
    // A speed's first uncertainty: 100 m/s.
    let v0 = 1e4;
    let mut first = 0;
    while first < fixes.len() {
        if !valid(fixes[first].point) {
            first += 1;
            continue;
        }
        let mut end = first + 1;
        while end < fixes.len() && valid(fixes[end].point) {
            end += 1;
        }
        let run = &fixes[first..end];
        // Metres per unit of each coordinate (WGS84's radii of curvature
        // at the run's first latitude; a run spans little of the Earth).
        let (kx, ky) = if geographic { metres_per_degree(run[0].point[1].to_radians()) } else { (1.0, 1.0) };
        if run.len() >= 3 && (!geographic || kx > 1000.0) {
            let t = &mut scratch.t;
            t.clear();
            t.extend(run.iter().map(|f| f.time.unwrap_or(0.0)));
            let xy = &mut scratch.xy;
            xy.clear();
            let mut prev = run[0].point[0];
            for f in run {
                let mut x = f.point[0];
                if geographic {
                    // Unwrapped: within 180° of the fix before.
                    x += 360.0 * ((prev - x) / 360.0).round();
                    prev = x;
                }
                xy.push([x * kx, f.point[1] * ky]);
            }
            rts(&scratch.t, xy, r, q, v0, &mut scratch.filter, &mut scratch.outlier);
            for ((o, &[x, y]), &outlier) in out[first..end].iter_mut().zip(xy.iter()).zip(&scratch.outlier) {
                let (mut x, mut y) = (x / kx, y / ky);
                if geographic {
                    (x, y) = (x - 360.0 * (x / 360.0).round(), y.clamp(-90.0, 90.0));
                }
                if !outlier && x.is_finite() && y.is_finite() {
                    o.point = [x, y];
                }
            }
        }
        first = end;
    }
    true
}

/// A measurement this many deviations (squared, summed over the axes) from
/// the filter's prediction is taken for an outlier (a GPS jump, or a state
/// Viterbi put far along): left out of the smoothing, and kept as it is.
/// 36: 6σ on one axis; past it, a fix is a jump, not noise.
const GATE: f64 = 36.0;

/// Kalman filter forward, then Rauch–Tung–Striebel backward, of a motion
/// at constant velocity that wanders with spectral density `q`, each of the
/// `D` axes its own (they share only which measurements are outliers, see
/// [`GATE`]): the measurements `z` at times `t` (variance `r`; the first
/// velocity's variance `v0`) are replaced by their smoothed values, but
/// for the outliers, marked in `outlier`. `scratch` holds the filter's
/// predictions and estimates ((position, velocity), covariance (p00, p01,
/// p11)) per measurement and axis.
pub(crate) fn rts<const D: usize>(
    t: &[f64],
    z: &mut [[f64; D]],
    r: f64,
    q: f64,
    v0: f64,
    scratch: &mut Vec<[([f64; 2], [f64; 3]); 2]>,
    outlier: &mut Vec<bool>,
) {
    let n = z.len();
    outlier.clear();
    outlier.resize(n, false);
    if n < 2 {
        return;
    }
    // Per measurement and axis: [prediction, estimate]. (`D` ≤ 2 axes in
    // one Vec: entry i * D + d.)
    scratch.clear();
    let mut x = [[0.0; 2]; D];
    let mut c = [[0.0; 3]; D];
    for d in 0..D {
        (x[d], c[d]) = ([z[0][d], 0.0], [r, 0.0, v0]);
        scratch.push([(x[d], c[d]), (x[d], c[d])]);
    }
    for i in 1..n {
        let dt = t[i] - t[i - 1];
        // Predict: x' = F x, P' = F P Fᵀ + Q with F = [[1, dt], [0, 1]].
        let mut xp = [[0.0; 2]; D];
        let mut cp = [[0.0; 3]; D];
        let mut m = 0.0;
        for d in 0..D {
            let (x, c) = (x[d], c[d]);
            xp[d] = [x[0] + dt * x[1], x[1]];
            cp[d] = [
                c[0] + 2.0 * dt * c[1] + dt * dt * c[2] + q * dt * dt * dt / 3.0,
                c[1] + dt * c[2] + q * dt * dt / 2.0,
                c[2] + q * dt,
            ];
            let y = z[i][d] - xp[d][0];
            m += y * y / (cp[d][0] + r);
        }
        // Two measurements accepted before any is judged.
        outlier[i] = (m.is_nan() || m > GATE) && i >= 2;
        for d in 0..D {
            let (xp, cp) = (xp[d], cp[d]);
            if outlier[i] {
                (x[d], c[d]) = (xp, cp);
            } else {
                // Update with the measurement.
                let s = cp[0] + r;
                let (k0, k1) = (cp[0] / s, cp[1] / s);
                let y = z[i][d] - xp[0];
                x[d] = [xp[0] + k0 * y, xp[1] + k1 * y];
                c[d] = [cp[0] - k0 * cp[0], cp[1] - k0 * cp[1], cp[2] - k1 * cp[1]];
            }
            scratch.push([(xp, cp), (x[d], c[d])]);
        }
    }
    // Backward: x̂_i = x_i + C (x̂_{i+1} − x'_{i+1}), C = P_i Fᵀ P'_{i+1}⁻¹.
    let mut next = [[0.0; 2]; D];
    for d in 0..D {
        next[d] = scratch[(n - 1) * D + d][1].0;
        if !outlier[n - 1] {
            z[n - 1][d] = next[d][0];
        }
    }
    for i in (0..n - 1).rev() {
        let dt = t[i + 1] - t[i];
        for d in 0..D {
            let (x, c) = scratch[i * D + d][1];
            let (xp, cp) = scratch[(i + 1) * D + d][0];
            let det = cp[0] * cp[2] - cp[1] * cp[1];
            let smoothed = if det > 0.0 && det.is_finite() {
                // P Fᵀ = [[c0 + dt c1, c1], [c1 + dt c2, c2]].
                let pf = [c[0] + dt * c[1], c[1], c[1] + dt * c[2], c[2]];
                let inv = [cp[2] / det, -cp[1] / det, cp[0] / det];
                let g = [
                    pf[0] * inv[0] + pf[1] * inv[1],
                    pf[0] * inv[1] + pf[1] * inv[2],
                    pf[2] * inv[0] + pf[3] * inv[1],
                    pf[2] * inv[1] + pf[3] * inv[2],
                ];
                let e = [next[d][0] - xp[0], next[d][1] - xp[1]];
                [x[0] + g[0] * e[0] + g[1] * e[1], x[1] + g[2] * e[0] + g[3] * e[1]]
            } else {
                x
            };
            next[d] = if smoothed[0].is_finite() && smoothed[1].is_finite() { smoothed } else { x };
            if !outlier[i] {
                z[i][d] = next[d][0];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_drive_is_its_own_smoothing_and_a_jump_is_left_out() {
        // 10 m/s from 3 m, a fix a second (one time repeated): on the line
        // the model predicts, smoothing moves nothing (but for the pull of
        // the first speed's prior, 0 ± 100 m/s: millimetres).
        let t = [0.0, 1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let mut z: Vec<[f64; 2]> = t.iter().map(|&t| [3.0 + 10.0 * t, -2.0 * t]).collect();
        let (mut scratch, mut outlier) = (Vec::new(), Vec::new());
        let want = z.clone();
        rts(&t, &mut z, 25.0, 4.0, 1e4, &mut scratch, &mut outlier);
        for (a, b) in z.iter().zip(&want) {
            assert!((a[0] - b[0]).abs() < 0.01 && (a[1] - b[1]).abs() < 0.01, "{a:?} {b:?}");
        }
        assert!(outlier.iter().all(|&o| !o));
        // A fix 200 m off: an outlier, kept as it is; its neighbours as
        // they were.
        z[5][1] += 200.0;
        let jumped = z[5];
        rts(&t, &mut z, 25.0, 4.0, 1e4, &mut scratch, &mut outlier);
        assert_eq!(outlier, [false, false, false, false, false, true, false, false]);
        assert_eq!(z[5], jumped);
        for i in [4, 6] {
            assert!((z[i][1] - want[i][1]).abs() < 0.01, "{i}: {:?}", z[i]);
        }
    }

    #[test]
    fn noise_is_smoothed_away() {
        // Noise of ±5 alternating about a steady drive: the smoothed
        // distances are nearer the truth than the fixes.
        let t: Vec<f64> = (0..40).map(f64::from).collect();
        let truth: Vec<f64> = t.iter().map(|&t| 8.0 * t).collect();
        let mut z: Vec<[f64; 1]> =
            truth.iter().enumerate().map(|(i, &s)| [s + if i % 2 == 0 { 5.0 } else { -5.0 }]).collect();
        rts(&t, &mut z, 25.0, 4.0, 2500.0, &mut Vec::new(), &mut Vec::new());
        let err = z.iter().zip(&truth).map(|(a, b)| (a[0] - b).abs()).fold(0.0, f64::max);
        assert!(err < 2.0, "{err}");
    }
}
