//! The matcher against known truth: simulated traces on synthetic networks,
//! and the cases that break naive matchers, each by name.

use segdist_match::simulate::{simulate, SimFix, SimOptions};
use segdist_match::{
    Direction, Fix, FixState, GraphBuilder, GraphError, Junctions, MatchError, MatchOptions, Matcher, RoadGraph, Space,
};

fn fixes(points: &[[f64; 2]]) -> Vec<Fix> {
    points.iter().map(|&p| Fix { point: p, time: None }).collect()
}

fn lines_of(m: &Matcher, f: &[Fix]) -> Vec<Option<usize>> {
    m.match_trace(f, false).unwrap().fixes.iter().map(|f| f.candidate.map(|c| c.line)).collect()
}

/// A grid of `n` × `n` blocks of 100 m, each block side its own line.
fn grid(space: Space, n: usize, unit: f64, origin: [f64; 2]) -> RoadGraph {
    let mut b = GraphBuilder::new(space);
    for i in 0..=n {
        for j in 0..n {
            let (x, y) = (i as f64 * unit, j as f64 * unit);
            let p = |x: f64, y: f64| [origin[0] + x, origin[1] + y];
            b.push_line(vec![vec![p(x, y), p(x, y + unit)]], Direction::Both);
            b.push_line(vec![vec![p(y, x), p(y + unit, x)]], Direction::Both);
        }
    }
    b.build().unwrap()
}

/// The share of fixes matched to their true line.
fn accuracy(m: &Matcher, traces: &[Vec<SimFix>]) -> f64 {
    let (mut right, mut all) = (0, 0);
    for tr in traces {
        let f: Vec<Fix> = tr.iter().map(|s| s.fix).collect();
        for (s, got) in tr.iter().zip(lines_of(m, &f)) {
            all += 1;
            right += usize::from(got == Some(s.line));
        }
    }
    right as f64 / all as f64
}

#[test]
fn simulated_traces_on_a_grid_match_their_true_lines() {
    let g = grid(Space::Planar, 10, 100.0, [0.0, 0.0]);
    // 9.37 m/s: fixes rarely fall exactly on a junction, where either
    // line would be right.
    let speeds = vec![9.37; 220];
    let traces = simulate(&g, &speeds, 40, &SimOptions { interval: 5.0, noise: 5.0, legs: 3, seed: 11 });
    let m = Matcher::new(&g, MatchOptions { sigma: 5.0, radius: 25.0, ..Default::default() }).unwrap();
    let a = accuracy(&m, &traces);
    // Measured 0.95; the misses are fixes within noise of a junction.
    assert!(a > 0.93, "{a}");
}

#[test]
fn simulated_geographic_traces_match_in_metres() {
    // The same grid in lon/lat near Helsinki: 0.0018° of longitude and
    // 0.0009° of latitude are about 100 m there.
    let mut b = GraphBuilder::new(Space::Geographic);
    for i in 0..=6 {
        for j in 0..6 {
            let (x, y) = (24.9 + i as f64 * 0.0018, 60.1 + j as f64 * 0.0009);
            b.push_line(vec![vec![[x, y], [x, y + 0.0009]]], Direction::Both);
            let (x, y) = (24.9 + j as f64 * 0.0018, 60.1 + i as f64 * 0.0009);
            b.push_line(vec![vec![[x, y], [x + 0.0018, y]]], Direction::Both);
        }
    }
    let g = b.build().unwrap();
    let traces = simulate(&g, &[9.37; 84], 20, &SimOptions { interval: 5.0, noise: 5.0, legs: 3, seed: 5 });
    let m = Matcher::new(&g, MatchOptions { sigma: 5.0, radius: 25.0, ..Default::default() }).unwrap();
    let a = accuracy(&m, &traces);
    assert!(a > 0.9, "{a}");
    // Distances are metres: 5 m noise, 2D, puts fixes a few metres off.
    let f: Vec<Fix> = traces[0].iter().map(|s| s.fix).collect();
    let r = m.match_trace(&f, false).unwrap();
    let mean = r.fixes.iter().map(|f| f.candidate.unwrap().distance).sum::<f64>() / r.fixes.len() as f64;
    assert!(mean > 1.0 && mean < 10.0, "{mean}");
}

#[test]
fn parallel_roads_follow_the_trace_not_the_nearest_line() {
    // A main road and a service road 15 m north of it, joined at both ends.
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line(vec![vec![[0.0, 0.0], [1000.0, 0.0]]], Direction::Both);
    b.push_line(vec![vec![[0.0, 15.0], [1000.0, 15.0]]], Direction::Both);
    b.push_line(vec![vec![[0.0, 0.0], [0.0, 15.0]]], Direction::Both);
    b.push_line(vec![vec![[1000.0, 0.0], [1000.0, 15.0]]], Direction::Both);
    let g = b.build().unwrap();
    // On the main road; every third fix strays nearer the service road.
    let pts: Vec<[f64; 2]> =
        (0..30).map(|i| [20.0 + 30.0 * f64::from(i), if i % 3 == 1 { 9.0 } else { -2.0 }]).collect();
    let m = Matcher::new(&g, MatchOptions { sigma: 5.0, ..Default::default() }).unwrap();
    assert!(lines_of(&m, &fixes(&pts)).iter().all(|l| *l == Some(0)));
}

#[test]
fn a_u_turn_mid_road_is_one_sub_match() {
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line(vec![vec![[0.0, 0.0], [1000.0, 0.0]]], Direction::Both);
    let g = b.build().unwrap();
    let mut pts: Vec<[f64; 2]> = (0..10).map(|i| [100.0 + 40.0 * f64::from(i), 2.0]).collect();
    pts.extend((0..10).map(|i| [460.0 - 40.0 * f64::from(i), -2.0]));
    let m = Matcher::new(&g, MatchOptions::default()).unwrap();
    let r = m.match_trace(&fixes(&pts), true).unwrap();
    assert!(r.fixes.iter().all(|f| f.state == FixState::Matched && f.sub_match == 0));
    assert!(r.fixes[..10].iter().all(|f| f.forward), "east first");
    assert!(r.fixes[11..].iter().all(|f| !f.forward), "then west");
    assert_eq!(r.paths.len(), 1);
}

#[test]
fn one_way_carriageways_are_driven_their_way() {
    // A dual carriageway: eastbound at y = 0, westbound at y = 12 (drawn
    // west to east, so Backward), joined at both ends.
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line(vec![vec![[0.0, 0.0], [1000.0, 0.0]]], Direction::Forward);
    b.push_line(vec![vec![[0.0, 12.0], [1000.0, 12.0]]], Direction::Backward);
    b.push_line(vec![vec![[0.0, 0.0], [0.0, 12.0]]], Direction::Both);
    b.push_line(vec![vec![[1000.0, 0.0], [1000.0, 12.0]]], Direction::Both);
    let g = b.build().unwrap();
    // Driving west, the fixes nearer the eastbound side (y = 4).
    let pts: Vec<[f64; 2]> = (0..20).map(|i| [900.0 - 40.0 * f64::from(i), 4.0]).collect();
    let m = Matcher::new(&g, MatchOptions { sigma: 5.0, ..Default::default() }).unwrap();
    let r = m.match_trace(&fixes(&pts), false).unwrap();
    assert!(r.fixes.iter().all(|f| f.candidate.unwrap().line == 1 && !f.forward), "{r:?}");
    // Driving east, the same fixes are on the eastbound side.
    let east: Vec<[f64; 2]> = pts.iter().rev().copied().collect();
    let r = m.match_trace(&fixes(&east), false).unwrap();
    assert!(r.fixes.iter().all(|f| f.candidate.unwrap().line == 0 && f.forward));
}

#[test]
fn a_loop_driven_twice_stays_on_it() {
    // A closed ring: 400 m square, first vertex = last.
    let ring = vec![[0.0, 0.0], [100.0, 0.0], [100.0, 100.0], [0.0, 100.0], [0.0, 0.0]];
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line(vec![ring], Direction::Forward);
    b.push_line(vec![vec![[100.0, 0.0], [300.0, 0.0]]], Direction::Both); // a spur
    let g = b.build().unwrap();
    let mut pts = Vec::new();
    for _ in 0..2 {
        for s in (5..400).step_by(30) {
            let s = f64::from(s);
            pts.push(match s {
                s if s < 100.0 => [s, 1.0],
                s if s < 200.0 => [99.0, s - 100.0],
                s if s < 300.0 => [300.0 - s, 101.0],
                s => [1.0, 400.0 - s],
            });
        }
    }
    let m = Matcher::new(&g, MatchOptions::default()).unwrap();
    let r = m.match_trace(&fixes(&pts), true).unwrap();
    assert!(r.fixes.iter().all(|f| f.candidate.unwrap().line == 0 && f.sub_match == 0), "{r:?}");
}

#[test]
fn a_gap_no_route_bridges_breaks_the_trace_into_sub_matches() {
    // Two roads 300 m apart with no road between them.
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line(vec![vec![[0.0, 0.0], [1000.0, 0.0]]], Direction::Both);
    b.push_line(vec![vec![[0.0, 300.0], [1000.0, 300.0]]], Direction::Both);
    let g = b.build().unwrap();
    let pts = [[100.0, 1.0], [140.0, 1.0], [180.0, 299.0], [220.0, 299.0]];
    let m = Matcher::new(&g, MatchOptions::default()).unwrap();
    let r = m.match_trace(&fixes(&pts), true).unwrap();
    let states: Vec<_> = r.fixes.iter().map(|f| (f.state, f.sub_match, f.candidate.unwrap().line)).collect();
    assert_eq!(
        states,
        [(FixState::Matched, 0, 0), (FixState::Matched, 0, 0), (FixState::Break, 1, 1), (FixState::Matched, 1, 1)]
    );
    assert_eq!(r.paths.iter().map(|p| p.lines.clone()).collect::<Vec<_>>(), [vec![0], vec![1]]);
}

#[test]
fn a_fix_far_from_every_road_is_unmatched_and_ends_the_sub_match() {
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line(vec![vec![[0.0, 0.0], [1000.0, 0.0]]], Direction::Both);
    let g = b.build().unwrap();
    let pts = [[100.0, 1.0], [140.0, 500.0], [180.0, 1.0], [f64::NAN, 0.0], [220.0, 1.0]];
    let m = Matcher::new(&g, MatchOptions::default()).unwrap();
    let r = m.match_trace(&fixes(&pts), false).unwrap();
    let states: Vec<_> = r.fixes.iter().map(|f| (f.state, f.sub_match, f.candidate.is_some())).collect();
    assert_eq!(
        states,
        [
            (FixState::Matched, 0, true),
            (FixState::Unmatched, 0, false),
            (FixState::Matched, 1, true),
            (FixState::Unmatched, 1, false),
            (FixState::Matched, 2, true),
        ]
    );
}

#[test]
fn empty_single_and_repeated_fixes() {
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line(vec![vec![[0.0, 0.0], [1000.0, 0.0]]], Direction::Both);
    b.push_line(vec![vec![[0.0, 10.0], [1000.0, 10.0]]], Direction::Both);
    let g = b.build().unwrap();
    let m = Matcher::new(&g, MatchOptions::default()).unwrap();
    let r = m.match_trace(&[], true).unwrap();
    assert!(r.fixes.is_empty() && r.paths.is_empty());
    let r = m.match_trace(&fixes(&[[50.0, 3.0]]), true).unwrap();
    assert_eq!(r.fixes[0].candidate.unwrap().line, 0);
    assert_eq!(r.paths[0].points, [[50.0, 0.0]]);
    // A vehicle standing still: the same fix, again and again, same time.
    let f = vec![Fix { point: [50.0, 3.0], time: Some(7.0) }; 5];
    let r = m.match_trace(&f, false).unwrap();
    assert!(r.fixes.iter().all(|f| f.state == FixState::Matched && f.sub_match == 0 && f.candidate.unwrap().line == 0));
}

#[test]
fn noise_moving_a_fix_back_on_the_same_road_is_tolerated() {
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line(vec![vec![[0.0, 0.0], [1000.0, 0.0]]], Direction::Forward);
    let g = b.build().unwrap();
    // The third fix is 6 m behind the second.
    let pts = [[100.0, 1.0], [130.0, 1.0], [124.0, 1.0], [160.0, 1.0]];
    let m = Matcher::new(&g, MatchOptions { sigma: 5.0, ..Default::default() }).unwrap();
    let r = m.match_trace(&fixes(&pts), false).unwrap();
    assert!(r.fixes.iter().all(|f| f.state == FixState::Matched && f.sub_match == 0));
}

#[test]
fn times_out_of_order_are_an_error_and_speed_bounds_routes() {
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line(vec![vec![[0.0, 0.0], [1000.0, 0.0]]], Direction::Both);
    let g = b.build().unwrap();
    let m = Matcher::new(&g, MatchOptions::default()).unwrap();
    let f = [Fix { point: [10.0, 0.0], time: Some(5.0) }, Fix { point: [20.0, 0.0], time: Some(4.0) }];
    assert_eq!(m.match_trace(&f, false), Err(MatchError::TimeGoesBack { fix: 1 }));
    // 800 m in 2 s is 400 m/s: no route that fast, so a break.
    let f = [Fix { point: [10.0, 0.0], time: Some(0.0) }, Fix { point: [810.0, 0.0], time: Some(2.0) }];
    let r = m.match_trace(&f, false).unwrap();
    assert_eq!(r.fixes[1].state, FixState::Break);
    let f = [Fix { point: [10.0, 0.0], time: Some(0.0) }, Fix { point: [810.0, 0.0], time: Some(40.0) }];
    assert_eq!(m.match_trace(&f, false).unwrap().fixes[1].state, FixState::Matched);
}

#[test]
fn junctions_at_shared_vertices_or_ends_only() {
    // Two lines crossing at (50, 0), a vertex of both.
    let build = |j: Junctions| {
        let mut b = GraphBuilder::new(Space::Planar).junctions(j);
        b.push_line(vec![vec![[0.0, 0.0], [50.0, 0.0], [100.0, 0.0]]], Direction::Both);
        b.push_line(vec![vec![[50.0, -50.0], [50.0, 0.0], [50.0, 50.0]]], Direction::Both);
        b.build().unwrap()
    };
    let g = build(Junctions::SharedVertices);
    assert_eq!((g.nodes(), g.pieces(), g.arcs()), (5, 4, 8));
    let g = build(Junctions::Ends);
    assert_eq!((g.nodes(), g.pieces(), g.arcs()), (4, 2, 4));
    // Turning at the crossing needs the shared vertex.
    let pts = [[20.0, 1.0], [45.0, 1.0], [51.0, 20.0], [51.0, 45.0]];
    let o = MatchOptions { radius: 15.0, ..Default::default() };
    let m = Matcher::new(&g, o).unwrap();
    let r = m.match_trace(&fixes(&pts), false).unwrap();
    assert_eq!(r.fixes[2].state, FixState::Break);
    let g = build(Junctions::SharedVertices);
    let m = Matcher::new(&g, o).unwrap();
    let r = m.match_trace(&fixes(&pts), true).unwrap();
    assert!(r.fixes.iter().all(|f| f.state == FixState::Matched));
    assert_eq!(r.paths[0].lines, [0, 1]);
    assert_eq!(r.paths[0].points, [[20.0, 0.0], [45.0, 0.0], [50.0, 0.0], [50.0, 20.0], [50.0, 45.0]]);
}

#[test]
fn bad_lines_and_options_are_errors() {
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line(vec![vec![[0.0, 0.0]]], Direction::Both);
    assert_eq!(b.build().err(), Some(GraphError::ShortPart { line: 0, part: 0 }));
    let mut b = GraphBuilder::new(Space::Geographic);
    b.push_line(vec![vec![[0.0, 0.0], [0.0, 91.0]]], Direction::Both);
    assert_eq!(b.build().err(), Some(GraphError::BadVertex { line: 0, part: 0, vertex: 1 }));
    let g = GraphBuilder::new(Space::Planar).build().unwrap();
    for o in [
        MatchOptions { sigma: 0.0, ..Default::default() },
        MatchOptions { beta: f64::NAN, ..Default::default() },
        MatchOptions { radius: -1.0, ..Default::default() },
        MatchOptions { k: 0, ..Default::default() },
        MatchOptions { max_speed: 0.0, ..Default::default() },
    ] {
        assert!(matches!(Matcher::new(&g, o), Err(MatchError::BadOption(_))), "{o:?}");
    }
    // An empty network: every fix unmatched.
    let m = Matcher::new(&g, MatchOptions::default()).unwrap();
    assert!(m.match_trace(&fixes(&[[0.0, 0.0]]), false).unwrap().fixes[0].state == FixState::Unmatched);
}

#[test]
fn node_ids_join_lines_and_nothing_else() {
    // A crossing without a shared node (a bridge over a road), and a third
    // line joined to the first by node 2.
    let mut b = GraphBuilder::new(Space::Planar);
    b.push_line_between(vec![[0.0, 0.0], [50.0, 0.0], [100.0, 0.0]], Direction::Both, 1, 2);
    b.push_line_between(vec![[50.0, -50.0], [50.0, 0.0], [50.0, 50.0]], Direction::Both, 3, 4);
    b.push_line_between(vec![[100.0, 0.0], [100.0, 80.0]], Direction::Both, 2, 5);
    let g = b.build().unwrap();
    let o = MatchOptions { radius: 15.0, ..Default::default() };
    let m = Matcher::new(&g, o).unwrap();
    // Turning off the bridge onto the road below: no route, a break.
    let r = m.match_trace(&fixes(&[[20.0, 1.0], [45.0, 1.0], [51.0, 20.0], [51.0, 45.0]]), false).unwrap();
    assert_eq!(r.fixes[2].state, FixState::Break);
    // Turning at node 2: one sub-match.
    let r = m.match_trace(&fixes(&[[60.0, 1.0], [90.0, 1.0], [101.0, 30.0], [101.0, 60.0]]), true).unwrap();
    assert!(r.fixes.iter().all(|f| f.state == FixState::Matched), "{r:?}");
    assert_eq!(r.paths[0].lines, [0, 2]);
}
