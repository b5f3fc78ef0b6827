"""RoadNetwork.match: the same answers as `segdist match`, bit for bit, on
noisy traces over a grid; known truth on a parallel-road case; and its
errors."""

import csv
import io
import os
import subprocess

import numpy as np
import pytest

import segdist


def grid(n=6, unit=100.0):
    """An n x n grid of blocks, each block side its own line; odd rows'
    horizontal lines one-way eastward."""
    lines, oneway = [], []
    for i in range(n + 1):
        for j in range(n):
            x, y = i * unit, j * unit
            lines += [[[x, y], [x, y + unit]], [[y, x], [y + unit, x]]]
            oneway += [None, "yes" if i % 2 == 1 else None]
    return lines, oneway


def traces(n_traces=10, n=60, seed=3):
    """Random walks along the grid's lines with 5 m of noise."""
    r = np.random.default_rng(seed)
    ids, xy, t = [], [], []
    for k in range(n_traces):
        p = np.array([r.integers(0, 6) * 100.0, r.uniform(0, 600)])
        for s in range(n):
            ids.append(k)
            xy.append(p + r.normal(0, 5, 2))
            t.append(float(s))
            p = p + np.array([0.0, 9.0])
            if p[1] > 600:
                p[1] -= 600
    return np.array(ids), np.array(xy), np.array(t)


def test_match_equals_the_command_line(tmp_path):
    lines, oneway = grid()
    ids, xy, t = traces()
    net = segdist.RoadNetwork(lines, oneway)
    # 84 lines, the 18 horizontal ones of rows 1, 3 and 5 one-way.
    assert (net.nodes, net.arcs) == (49, 2 * 84 - 18)
    m = net.match(ids, xy, t, sigma=5.0)
    with open(tmp_path / "roads.csv", "w") as f:
        f.write("id,x,y,oneway\n")
        for i, (line, ow) in enumerate(zip(lines, oneway)):
            for x, y in line:
                f.write(f"{i},{float(x)!r},{float(y)!r},{ow or ''}\n")
    with open(tmp_path / "traces.csv", "w") as f:
        f.write("trace,time,x,y\n")
        for k, (x, y), s in zip(ids, xy, t):
            f.write(f"{k},{float(s)!r},{float(x)!r},{float(y)!r}\n")
    out = subprocess.run(
        [os.environ.get("SEGDIST_BIN", "segdist"), "match", "-q", "--planar", "--sigma", "5",
         "--points", str(tmp_path / "traces.csv"), "--lines", str(tmp_path / "roads.csv")],
        check=True, capture_output=True, text=True,
    ).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == len(ids)
    assert [r["line_id"] for r in rows] == [str(v) for v in m.line]
    assert [float(r["distance"]) for r in rows] == m.distance.tolist()
    assert [float(r["along"]) for r in rows] == m.along.tolist()
    assert [r["state"] for r in rows] == m.state.tolist()
    assert [int(r["sub_match"]) for r in rows] == m.sub_match.tolist()


def test_smoothing_needs_times_and_can_be_turned_off():
    lines, oneway = grid()
    ids, xy, t = traces(seed=5)
    net = segdist.RoadNetwork(lines, oneway)
    # Without times nothing is smoothed.
    plain, plain_off = net.match(ids, xy, sigma=5.0), net.match(ids, xy, sigma=5.0, acceleration=0.0)
    assert plain.line.tolist() == plain_off.line.tolist()
    assert plain.distance.tolist() == plain_off.distance.tolist()
    # With times it is, unless turned off.
    off = net.match(ids, xy, t, sigma=5.0, acceleration=0.0)
    on = net.match(ids, xy, t, sigma=5.0)
    assert off.x.tolist() != on.x.tolist() or off.line.tolist() != on.line.tolist()
    # (The walks wrap from y = 600 to 0: a jump no route makes, so a break.)
    assert (on.state != "unmatched").all()
    assert np.all(np.isfinite(on.distance)) and np.all(on.distance >= 0)
    # Smoothed: each fix's distance is still its own, to its matched point.
    mine = np.hypot(xy[:, 0] - on.x, xy[:, 1] - on.y)
    assert np.allclose(mine, on.distance, rtol=1e-12, atol=1e-9)


def test_parallel_roads_follow_the_trace():
    net = segdist.RoadNetwork(
        [[[0, 0], [1000, 0]], [[0, 15], [1000, 15]], [[0, 0], [0, 15]], [[1000, 0], [1000, 15]]]
    )
    x = 20.0 + 30.0 * np.arange(30)
    y = np.where(np.arange(30) % 3 == 1, 9.0, -2.0)
    m = net.match(np.zeros(30, int), np.column_stack([x, y]), sigma=5.0)
    assert (m.line == 0).all()
    assert (m.state == "matched").all()


def test_unmatched_fixes_and_string_trace_ids():
    net = segdist.RoadNetwork([[[0, 0], [1000, 0]]])
    m = net.match(["a", "a", "a", "b"], [[100, 1], [140, 500], [180, 1], [50, 0]])
    assert m.line.tolist() == [0, -1, 0, 0]
    assert m.state.tolist() == ["matched", "unmatched", "matched", "matched"]
    assert m.sub_match.tolist() == [0, 0, 1, 0]
    assert np.isnan(m.distance[1]) and m.distance[0] == 1.0


def test_default_radius_is_three_sigma_at_least_fifty():
    assert [segdist.default_radius(s) for s in (5.0, 16.0, 20.0, 40.0)] == [50.0, 50.0, 60.0, 120.0]
    assert segdist.default_radius(float("nan")) == 50.0
    # A fix 55 m from the road: within 3 sigma at sigma 20 (60 m), not at
    # sigma 10 (50 m); the default and the same radius given agree.
    net = segdist.RoadNetwork([[[0, 0], [1000, 0]]])
    xy = [[100, 1], [140, 55], [180, 1]]
    for sigma, line in [(10.0, -1), (20.0, 0)]:
        m = net.match([0, 0, 0], xy, sigma=sigma)
        assert m.line[1] == line
        given = net.match([0, 0, 0], xy, sigma=sigma, radius=segdist.default_radius(sigma))
        assert (given.line == m.line).all() and np.array_equal(given.distance, m.distance, equal_nan=True)


def test_geographic_distances_are_metres():
    net = segdist.RoadNetwork([[[24.94, 60.17], [24.96, 60.17]]], geographic=True)
    m = net.match([0, 0], [[24.945, 60.17003], [24.946, 60.17003]])
    assert 3.25 < m.distance[0] < 3.34


def test_errors():
    net = segdist.RoadNetwork([[[0, 0], [1000, 0]]])
    with pytest.raises(ValueError, match="trace 1 appears again"):
        net.match([1, 2, 1], [[0, 0], [1, 0], [2, 0]])
    with pytest.raises(ValueError, match="fix 1: the time goes back"):
        net.match([1, 1], [[0, 0], [1, 0]], [5.0, 4.0])
    with pytest.raises(ValueError, match="sigma"):
        net.match([1], [[0, 0]], sigma=0.0)
    with pytest.raises(ValueError, match="acceleration"):
        net.match([1], [[0, 0]], acceleration=-1.0)
    with pytest.raises(ValueError, match="fewer than two vertices"):
        segdist.RoadNetwork([[[0, 0]]])
    with pytest.raises(ValueError, match="junctions"):
        segdist.RoadNetwork([[[0, 0], [1, 0]]], junctions="all")


def test_node_ids_join_lines_and_nothing_else():
    lines = [[[0, 0], [50, 0], [100, 0]], [[50, -50], [50, 0], [50, 50]], [[100, 0], [100, 80]]]
    turn = [[20, 1], [45, 1], [51, 20], [51, 45]]
    shared = segdist.RoadNetwork(lines)
    assert shared.match([0] * 4, turn, radius=15.0).state.tolist() == ["matched"] * 4
    bridge = segdist.RoadNetwork(lines, nodes=([1, 3, 2], [2, 4, 5]))
    assert (bridge.nodes, bridge.arcs) == (5, 6)
    assert bridge.match([0] * 4, turn, radius=15.0).state.tolist() == ["matched", "matched", "break", "matched"]
    with pytest.raises(ValueError, match="one id per line"):
        segdist.RoadNetwork(lines, nodes=([1], [2]))
