"""segdist's Python package against shapely 2 and geopandas, same machine,
same run.

The three workloads of issue 6, and issue 28's nearest join:

1. one segment × 10M points: ``shapely.distance(line, points)`` (plus the
   ``shapely.points`` call that makes Point objects from an array, which a
   numpy user pays too) against ``segdist.distance(a, b, xy)``;
2. nearest segment, 100k segments × 1M points: ``STRtree.query_nearest``
   against ``SegmentIndex.nearest`` (index builds timed apart);
3. ``line_locate_point`` on a 100k-vertex line against ``Polyline.locate``;
4. ``geopandas.sjoin_nearest`` against ``segdist.sjoin_nearest``, 200k points
   against 100k segments, whole calls.

shapely runs on a sample where the full workload would take minutes; every
figure is per point. Each measurement is the median of ``--repeat`` runs,
the two libraries interleaved; the join's (at least 5): with the lines'
index kept from a join before (both libraries keep one), a first join
(segdist's index built in the call) and a join right after geopandas'. Prints one JSON object per measurement on
stdout and a Markdown table on stderr.

Usage: python vs_shapely.py [--quick] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import shapely

import segdist


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def median_of(runs: int, **fs):
    """Runs each f ``runs`` times, interleaved; the median seconds of each."""
    times = {k: [] for k in fs}
    for _ in range(runs):
        for k, f in fs.items():
            times[k].append(timed(f)[0])
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of the sizes (a smoke test)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    r = np.random.default_rng(42)
    rows = []

    def report(workload, ours_s, ours_n, theirs_s, theirs_n, target, **extra):
        ours, theirs = ours_s / ours_n, theirs_s / theirs_n
        row = {
            "workload": workload,
            "segdist_ns_per_point": ours * 1e9,
            "shapely_ns_per_point": theirs * 1e9,
            "speedup": theirs / ours,
            "target": target,
            "segdist_points": ours_n,
            "shapely_points": theirs_n,
            **extra,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)

    # 1. One segment against many points.
    n = 10_000_000 // scale
    xy = r.uniform(-100, 100, (n, 2))
    a, b = np.array([-30.0, -10.0]), np.array([40.0, 25.0])
    line = shapely.LineString([a, b])
    m = n // 10  # shapely on a tenth: the same per-point cost, a tenth of the wait
    pts = shapely.points(xy[:m])
    t = median_of(
        args.repeat,
        segdist=lambda: segdist.distance(a, b, xy),
        points=lambda: shapely.points(xy[:m]),
        shapely=lambda: shapely.distance(line, pts),
    )
    # The target counts both shapely calls (the next row).
    report("one segment, distance", t["segdist"], n, t["shapely"], m, None,
           shapely_with_points_ns=(t["shapely"] + t["points"]) / m * 1e9)
    report("one segment, distance incl. shapely.points", t["segdist"], n, t["shapely"] + t["points"], m, 50)
    t = median_of(args.repeat, segdist=lambda: segdist.closest_point(a, b, xy))
    rows[-1]["segdist_closest_point_ns"] = t["segdist"] / n * 1e9

    # 2. Nearest segment among 100k: PEERS.md's set (random segments of
    # length 0.001-0.01 in the unit square, uniform points).
    k = 100_000 // scale
    starts = r.random((k, 2))
    length, angle = r.uniform(0.001, 0.01, k), r.uniform(0, 2 * np.pi, k)
    ends = starts + np.stack([length * np.cos(angle), length * np.sin(angle)], axis=1)
    q = r.random((1_000_000 // scale, 2))
    segs = shapely.linestrings(np.stack([starts, ends], axis=1))
    build_ours, index = timed(lambda: segdist.SegmentIndex.from_segments(starts, ends))
    build_theirs, tree = timed(lambda: shapely.STRtree(segs))
    sample = 20_000 // scale
    qpts = shapely.points(q[:sample])
    t = median_of(
        args.repeat,
        segdist=lambda: index.nearest(q),
        shapely=lambda: tree.query_nearest(qpts, return_distance=True, all_matches=False),
    )
    # Same answers (distance) on the sample: a benchmark of wrong answers is worthless.
    _, dist = tree.query_nearest(qpts, return_distance=True, all_matches=False)
    assert np.allclose(index.nearest(q[:sample]).distance, dist, rtol=1e-12, atol=1e-9)
    report("nearest segment (100k segments)", t["segdist"], len(q), t["shapely"], sample, 100,
           segdist_build_ms=build_ours * 1e3, shapely_build_ms=build_theirs * 1e3)

    # 3. line_locate_point on a 100k-vertex line.
    v = 100_000 // scale
    verts = np.cumsum(r.normal(0, 1, (v, 2)), axis=0)
    pq = r.uniform(verts.min(0), verts.max(0), (1_000_000 // scale, 2))
    ls = shapely.LineString(verts)
    shapely.prepare(ls)
    build_ours, poly = timed(lambda: segdist.Polyline(verts))
    sample = 200 // min(scale, 4)
    spts = shapely.points(pq[:sample])
    t = median_of(
        args.repeat,
        segdist=lambda: poly.locate(pq),
        shapely=lambda: shapely.line_locate_point(ls, spts),
    )
    assert np.allclose(poly.locate(pq[:sample]).along, shapely.line_locate_point(ls, spts), rtol=1e-9, atol=1e-6)
    report("line_locate_point (100k vertices)", t["segdist"], len(pq), t["shapely"], sample, 1000,
           segdist_build_ms=build_ours * 1e3)

    # 4. GeoPandas' nearest join: 200k points against 100k segments (the
    # set of 2), both frames with attribute columns, the whole call timed
    # (index build included, as geopandas builds its tree in the call).
    import geopandas as gpd

    n_pts = 200_000 // scale
    lines = gpd.GeoDataFrame({"road": np.arange(k), "name": [f"r{i}" for i in range(k)]}, geometry=segs, crs=3067)
    fixes = gpd.GeoDataFrame({"fix": np.arange(n_pts)}, geometry=shapely.points(q[:n_pts]), crs=3067)
    # Both keep the lines' index with their geometry array for the joins
    # after the first (geopandas its STRtree, `sindex`; segdist its own):
    # "kept" is such a join. "first" is a join against lines new to both
    # (a copy made beforehand: the index built in the call). And a call's
    # time depends on what ran just before: on this 2-core VM, a segdist
    # call right after geopandas' (2.5 s on one core, the other idle) took
    # 1.2-1.5x as long as one right after another segdist call (caches and
    # clocks cold). So "cold" is the first segdist call after geopandas',
    # "kept" the three that follow it (back to back, as timeit measures),
    # "first" the call after those.
    ours = lambda: segdist.sjoin_nearest(fixes, lines, distance_col="d")  # noqa: E731
    theirs = lambda: gpd.sjoin_nearest(fixes, lines, distance_col="d")  # noqa: E731
    rounds = max(args.repeat, 5)
    fresh = [lines.copy() for _ in range(rounds)]
    times = {"cold": [], "kept": [], "first": [], "geopandas": []}
    for new_lines in fresh:
        times["geopandas"].append(timed(theirs)[0])
        times["cold"].append(timed(ours)[0])
        times["kept"] += [timed(ours)[0] for _ in range(3)]
        times["first"].append(timed(lambda: segdist.sjoin_nearest(fixes, new_lines, distance_col="d"))[0])
    t = {k: statistics.median(v) for k, v in times.items()}
    del fresh, new_lines
    ours, theirs = segdist.sjoin_nearest(fixes, lines, distance_col="d"), gpd.sjoin_nearest(fixes, lines, distance_col="d")
    theirs = theirs[~theirs.index.duplicated(keep=False)]  # geopandas gives every tie
    got = ours.loc[theirs.index]
    assert (got["index_right"].to_numpy() == theirs["index_right"].to_numpy()).all()
    assert np.allclose(got["d"].to_numpy(), theirs["d"].to_numpy(), rtol=0, atol=1e-12)
    report("sjoin_nearest vs geopandas (200k points, 100k segments)", t["kept"], n_pts, t["geopandas"], n_pts, 100,
           geopandas=gpd.__version__,
           also={"a first join (the lines' index built in the call)": t["first"] / n_pts * 1e9,
                 "a join right after geopandas' (cold)": t["cold"] / n_pts * 1e9})

    info = {
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "isa": segdist.isa(),
        "segdist": segdist.__version__,
        "shapely": shapely.__version__,
        "geos": shapely.geos_version_string,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }
    print(json.dumps({"info": info}), flush=True)

    err = sys.stderr
    print(f"\nsegdist {info['segdist']} vs shapely {info['shapely']} (GEOS {info['geos']}), "
          f"{info['cpus']} cores, {info['isa']}; medians of {args.repeat} "
          f"(the join: of {max(args.repeat, 5)})\n", file=err)
    print("| workload | segdist per point | shapely (geopandas) per point | segdist faster | target |", file=err)
    print("|---|---:|---:|---:|---:|", file=err)
    for row in rows:
        target = "—" if row["target"] is None else f"≥ {row['target']}×"
        print(f"| {row['workload']} | {fmt(row['segdist_ns_per_point'])} | {fmt(row['shapely_ns_per_point'])} "
              f"| {row['speedup']:,.0f}× | {target} |", file=err)
        for what, ns in row.get("also", {}).items():
            print(f"| … {what} | {fmt(ns)} | {fmt(row['shapely_ns_per_point'])} "
                  f"| {row['shapely_ns_per_point'] / ns:,.0f}× | — |", file=err)


def fmt(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.1f} ns"


if __name__ == "__main__":
    main()
