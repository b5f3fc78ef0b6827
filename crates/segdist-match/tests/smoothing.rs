//! Smoothing (`MatchOptions::acceleration`): the fixes smoothed before
//! matching and along the matched route after, against known truth, and
//! the contract it keeps: each matched fix's position and distance are its
//! own, exactly as the kernels give them.

use segdist_match::simulate::{simulate, SimFix, SimOptions};
use segdist_match::{Direction, Fix, FixState, GraphBuilder, MatchOptions, MatchedTrace, Matcher, RoadGraph, Space};

/// A lattice of `n` × `n` blocks of `unit` (each block side a line of two
/// segments, its middle vertex moved off the straight: a piece of several
/// segments), in metres from `origin`, or in degrees when geographic.
fn lattice(space: Space, n: usize, unit: [f64; 2], origin: [f64; 2]) -> RoadGraph {
    let mut b = GraphBuilder::new(space);
    let at = |i: usize, j: usize| [origin[0] + i as f64 * unit[0], origin[1] + j as f64 * unit[1]];
    let bend = |a: [f64; 2], c: [f64; 2], k: usize| {
        let s = if k.is_multiple_of(2) { 0.03 } else { -0.03 };
        let m = [(a[0] + c[0]) / 2.0 + s * (c[1] - a[1]), (a[1] + c[1]) / 2.0 + s * (c[0] - a[0])];
        vec![vec![a, m, c]]
    };
    for i in 0..=n {
        for j in 0..n {
            b.push_line(bend(at(i, j), at(i, j + 1), i + j), Direction::Both);
            b.push_line(bend(at(j, i), at(j + 1, i), i + j + 1), Direction::Both);
        }
    }
    b.build().unwrap()
}

fn share(m: &Matcher, traces: &[Vec<SimFix>]) -> f64 {
    let (mut right, mut all) = (0, 0);
    for tr in traces {
        let f: Vec<Fix> = tr.iter().map(|s| s.fix).collect();
        for (s, got) in tr.iter().zip(m.match_trace(&f, false).unwrap().fixes) {
            all += 1;
            right += usize::from(got.candidate.map(|c| c.line) == Some(s.line));
        }
    }
    right as f64 / all as f64
}

/// Every matched fix's point and distance are the kernel's for the fix as
/// given (not its smoothed position) on the segment it names.
fn own_positions(g_space: Space, lines: &[Vec<[f64; 2]>], fixes: &[Fix], r: &MatchedTrace) {
    for (f, m) in fixes.iter().zip(&r.fixes) {
        let Some(c) = m.candidate else { continue };
        let (a, b) = (lines[c.line][c.segment], lines[c.line][c.segment + 1]);
        let (point, distance, t) = match g_space {
            Space::Planar => {
                let pr = segdist::Segment::new(a, b).closest_point(f.point);
                (pr.point, pr.distance, pr.t)
            }
            Space::Geographic => {
                let pr = segdist_geo::geodesic(a, b, f.point).unwrap();
                (pr.point, pr.distance, pr.t)
            }
        };
        assert_eq!((c.point, c.distance, c.t), (point, distance, t), "fix {f:?}");
    }
}

/// The lattice's lines as vertex lists (in push order).
fn lattice_lines(n: usize, unit: [f64; 2], origin: [f64; 2]) -> Vec<Vec<[f64; 2]>> {
    let at = |i: usize, j: usize| [origin[0] + i as f64 * unit[0], origin[1] + j as f64 * unit[1]];
    let bend = |a: [f64; 2], c: [f64; 2], k: usize| {
        let s = if k.is_multiple_of(2) { 0.03 } else { -0.03 };
        vec![a, [(a[0] + c[0]) / 2.0 + s * (c[1] - a[1]), (a[1] + c[1]) / 2.0 + s * (c[0] - a[0])], c]
    };
    let mut out = Vec::new();
    for i in 0..=n {
        for j in 0..n {
            out.push(bend(at(i, j), at(i, j + 1), i + j));
            out.push(bend(at(j, i), at(j + 1, i), i + j + 1));
        }
    }
    out
}

#[test]
fn smoothing_puts_more_fixes_on_the_true_line() {
    let g = lattice(Space::Planar, 10, [100.0, 100.0], [0.0, 0.0]);
    let speeds = vec![9.37; 220];
    for (noise, interval, least_gain) in [(10.0, 1.0, 0.04), (20.0, 1.0, 0.15), (5.0, 5.0, 0.005)] {
        let traces = simulate(&g, &speeds, 30, &SimOptions { interval, noise, legs: 3, seed: 3 });
        let o = MatchOptions { sigma: noise, radius: (4.0 * noise).max(50.0), ..Default::default() };
        let off = share(&Matcher::new(&g, MatchOptions { acceleration: 0.0, ..o }).unwrap(), &traces);
        let on = share(&Matcher::new(&g, o).unwrap(), &traces);
        // Measured: 10 m at 1 s 0.909 -> 0.978; 20 m 0.730 -> 0.961; 5 m
        // at 5 s 0.958 -> 0.970.
        assert!(on >= off + least_gain, "{noise} m, {interval} s: {off} -> {on}");
        assert!(on > 0.93, "{noise} m, {interval} s: {on}");
    }
}

#[test]
fn smoothed_fixes_keep_their_own_positions_and_distances() {
    let unit = [100.0, 100.0];
    let g = lattice(Space::Planar, 6, unit, [0.0, 0.0]);
    let lines = lattice_lines(6, unit, [0.0, 0.0]);
    let traces = simulate(&g, &[9.37; 84], 10, &SimOptions { interval: 1.0, noise: 10.0, legs: 3, seed: 9 });
    let m = Matcher::new(&g, MatchOptions { sigma: 10.0, ..Default::default() }).unwrap();
    for tr in &traces {
        let f: Vec<Fix> = tr.iter().map(|s| s.fix).collect();
        own_positions(Space::Planar, &lines, &f, &m.match_trace(&f, false).unwrap());
    }
    // In lon/lat, near Helsinki, and astride the antimeridian.
    for origin in [[24.9, 60.1], [179.991, -16.0]] {
        let unit = [0.0018, 0.0009];
        let g = lattice(Space::Geographic, 6, unit, origin);
        let mut lines = lattice_lines(6, unit, origin);
        for p in lines.iter_mut().flatten() {
            if p[0] > 180.0 {
                p[0] -= 360.0;
            }
        }
        let g2 = {
            let mut b = GraphBuilder::new(Space::Geographic);
            for l in &lines {
                b.push_line(vec![l.clone()], Direction::Both);
            }
            b.build().unwrap()
        };
        let traces = simulate(&g, &[9.37; 84], 6, &SimOptions { interval: 1.0, noise: 10.0, legs: 3, seed: 2 });
        let o = MatchOptions { sigma: 10.0, ..Default::default() };
        let (m, m2) = (Matcher::new(&g, o).unwrap(), Matcher::new(&g2, o).unwrap());
        let mut right = (0, 0);
        for tr in &traces {
            // The same fixes with longitudes in [-180, 180], on the same
            // roads written so.
            let f2: Vec<Fix> = tr
                .iter()
                .map(|s| {
                    let mut p = s.fix.point;
                    p[0] -= if p[0] > 180.0 { 360.0 } else { 0.0 };
                    Fix { point: p, time: s.fix.time }
                })
                .collect();
            let r = m2.match_trace(&f2, false).unwrap();
            own_positions(Space::Geographic, &lines, &f2, &r);
            for (s, got) in tr.iter().zip(&r.fixes) {
                assert!(got.candidate.is_some_and(|c| c.distance.is_finite() && c.distance >= 0.0));
                right.0 += usize::from(got.candidate.map(|c| c.line) == Some(s.line));
                right.1 += 1;
            }
            // And as the unwrapped graph matches them (same lines).
            let f: Vec<Fix> = tr.iter().map(|s| s.fix).collect();
            let r1 = m.match_trace(&f, false).unwrap();
            let l1: Vec<_> = r1.fixes.iter().map(|x| x.candidate.map(|c| c.line)).collect();
            let l2: Vec<_> = r.fixes.iter().map(|x| x.candidate.map(|c| c.line)).collect();
            let same = l1.iter().zip(&l2).filter(|(a, b)| a == b).count();
            assert!(same as f64 >= 0.97 * l1.len() as f64, "{origin:?}: {same} of {}", l1.len());
        }
        let share = right.0 as f64 / right.1 as f64;
        assert!(share > 0.9, "{origin:?}: {share}");
    }
}

#[test]
fn without_times_smoothing_changes_nothing() {
    let g = lattice(Space::Planar, 6, [100.0, 100.0], [0.0, 0.0]);
    let traces = simulate(&g, &[9.37; 84], 10, &SimOptions { interval: 1.0, noise: 10.0, legs: 3, seed: 4 });
    let o = MatchOptions { sigma: 10.0, ..Default::default() };
    let (on, off) = (Matcher::new(&g, o).unwrap(), Matcher::new(&g, MatchOptions { acceleration: 0.0, ..o }).unwrap());
    for tr in &traces {
        let f: Vec<Fix> = tr.iter().map(|s| Fix { point: s.fix.point, time: None }).collect();
        assert!(on.match_trace(&f, true).unwrap() == off.match_trace(&f, true).unwrap());
        // A trace with a time missing is not smoothed either.
        let mut f: Vec<Fix> = tr.iter().map(|s| s.fix).collect();
        let mid = f.len() / 2;
        f[mid].time = None;
        assert!(on.match_trace(&f, true).unwrap() == off.match_trace(&f, true).unwrap());
    }
}

#[test]
fn repeated_times_gaps_and_bad_fixes_in_a_smoothed_trace() {
    let g = lattice(Space::Planar, 4, [100.0, 100.0], [0.0, 0.0]);
    let m = Matcher::new(&g, MatchOptions { sigma: 5.0, ..Default::default() }).unwrap();
    let fix = |x: f64, y: f64, t: f64| Fix { point: [x, y], time: Some(t) };
    // Along the bottom street: two fixes at one time, the same fix three
    // times, a fix not finite, a minute's gap, a GPS jump 300 m away (no
    // road near it: unmatched, and its neighbours not pulled off their
    // street by it).
    let trace = [
        fix(5.0, 2.0, 0.0),
        fix(15.0, -1.0, 1.0),
        fix(16.0, 1.0, 1.0),
        fix(25.0, 0.5, 2.0),
        fix(25.0, 0.5, 2.0),
        fix(25.0, 0.5, 3.0),
        fix(f64::NAN, 0.0, 4.0),
        fix(45.0, -2.0, 5.0),
        fix(55.0, 1.0, 6.0),
        fix(60.0, 1.0, 66.0),
        fix(65.0, -300.0, 67.0),
        fix(70.0, 2.0, 68.0),
        fix(80.0, -1.0, 69.0),
    ];
    let r = m.match_trace(&trace, true).unwrap();
    let states: Vec<FixState> = r.fixes.iter().map(|f| f.state).collect();
    use FixState::{Matched as M, Unmatched as U};
    assert_eq!(states, [M, M, M, M, M, M, U, M, M, M, U, M, M]);
    for (f, m) in trace.iter().zip(&r.fixes) {
        if let Some(c) = m.candidate {
            // The bottom street is lines 1 (x 0..100), its pieces' segments
            // from the lattice's bends.
            assert_eq!(c.line, 1, "{f:?}");
            assert!(c.distance.is_finite() && c.distance >= 0.0);
        }
    }
    // All fixes at one time: nothing to smooth over, no division by zero.
    let same: Vec<Fix> = (0..5).map(|i| fix(10.0 + 10.0 * f64::from(i), 1.0, 7.0)).collect();
    let r = m.match_trace(&same, false).unwrap();
    assert!(r.fixes.iter().all(|f| f.candidate.is_some_and(|c| c.line == 1 && c.distance.is_finite())));
}

#[test]
fn acceleration_out_of_range_is_an_error() {
    let g = lattice(Space::Planar, 1, [100.0, 100.0], [0.0, 0.0]);
    for a in [-1.0, f64::NAN, f64::INFINITY] {
        let o = MatchOptions { acceleration: a, ..Default::default() };
        assert!(Matcher::new(&g, o).is_err(), "{a}");
    }
}
