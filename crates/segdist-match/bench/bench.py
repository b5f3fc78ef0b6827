#!/usr/bin/env python3
"""segdist-match's bench: simulated GPS traces with known truth on the
Helsinki roads, matched in one run by

- `segdist match` on lon/lat (geodesic metres, exact candidates),
- `segdist match --planar` on the same traces projected to ETRS-TM35FIN
  (EPSG:3067, metres),
- `segdist snap` (nearest road, the baseline) on the projected traces,
- FMM (`pip install fastmm`, 0.3.2: FMM's C++ with Python wheels) on the
  projected traces and the same graph (lines cut at shared vertices, both
  directions of two-way lines, one of one-way lines), with the same
  candidates (k, radius) and GPS error.

The traces come from `segdist-bench match-data` (segdist_match::simulate):
a car drives shortest paths between random nodes of the drivable roads
(footways, steps, cycleways... left out, as central Helsinki maps its
sidewalks beside the streets) at 15-50 km/h by road class, a fix every
INTERVAL seconds with Gaussian noise of NOISE metres on each axis.

Accuracy: the share of fixes whose matched line is the line the car was on.
Speed: fixes per second of the whole command for the CLIs (reading,
graph, matching, writing; median of --runs); for FMM, of the match calls
alone (its network and UBODT built beforehand, the build timed apart), and
of its start and matching together as a second run on the same network
finds them (the UBODT loaded from its cache, then the match calls; the
network object, built in Python, not counted).

    python3 crates/segdist-match/bench/bench.py              # 200 traces per case
    python3 crates/segdist-match/bench/bench.py --traces 50 --runs 1
    python3 crates/segdist-match/bench/bench.py --city --traces 100
    python3 crates/segdist-match/bench/bench.py --k 12          # more candidates a fix

With --city, the network is `segdist-bench`'s synthetic city (`mapmatch::city`:
a 10 km square of 100 m blocks, 18,552 lines, 37,104 segments, arteries,
one-way streets and missing blocks) instead of the Helsinki district: a
network the size of a city's, where FMM's precomputed table (UBODT, built
with --delta, 3 km by default) grows to millions of rows.

Near misses: of the fixes segdist (planar) put on a wrong line, the share
whose wrong line passes within 10 m of the car's true position (shapely),
i.e. a neighbour across a junction or a road alongside.

Needs the release binaries (`cargo build --release -p segdist-cli -p
segdist-bench`) and `pip install fastmm pyproj shapely`.

The roads: © OpenStreetMap contributors, data available under the Open
Database License (ODbL), https://www.openstreetmap.org/copyright.
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import tempfile
import time

import fastmm
import shapely
from pyproj import Transformer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SEGDIST = os.path.join(ROOT, "target", "release", "segdist")
BENCH = os.path.join(ROOT, "target", "release", "segdist-bench")
CASES = [(n, i) for n in (5.0, 10.0, 20.0) for i in (1.0, 5.0, 30.0)]


def project_roads(src, dst, tr):
    fc = json.load(open(src))
    for f in fc["features"]:
        f["geometry"]["coordinates"] = [list(tr.transform(x, y)) for x, y in f["geometry"]["coordinates"]]
    json.dump(fc, open(dst, "w"))
    return fc


def project_traces(src, dst, tr):
    rows = list(csv.DictReader(open(src)))
    with open(dst, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["trace", "time", "x", "y", "true_line"])
        for r in rows:
            x, y = tr.transform(float(r["lon"]), float(r["lat"]))
            w.writerow([r["trace"], r["time"], repr(x), repr(y), r["true_line"]])
    return rows


def timed(cmd, runs, out):
    """Median wall time of `cmd`, which writes `out`: removed before each
    run, as a first run finds it (replacing a file by renaming over it, as
    the command does, makes ext4 write the new file out before the rename
    returns: 0.1 s of 1.2 on the 1 s cases here, the file system's cost, not
    the matcher's)."""
    times = []
    for _ in range(runs):
        if os.path.exists(out):
            os.remove(out)
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def accuracy(truth, out_csv, column="line_id"):
    got = [r[column] for r in csv.DictReader(open(out_csv))]
    assert len(got) == len(truth), (len(got), len(truth))
    return sum(g == t["true_line"] for g, t in zip(got, truth)) / len(truth)


def near_misses(truth, out_csv, fc, tr):
    """Of the wrong lines in `out_csv`, the share within 10 m of the true
    position."""
    lines = {str(f["id"]): shapely.LineString(f["geometry"]["coordinates"]) for f in fc["features"]}
    wrong = near = 0
    for t, r in zip(truth, csv.DictReader(open(out_csv))):
        if r["line_id"] in ("", t["true_line"]):
            continue
        wrong += 1
        p = shapely.Point(tr.transform(float(t["true_lon"]), float(t["true_lat"])))
        near += lines[r["line_id"]].distance(p) <= 10.0
    return near / max(wrong, 1)


def fmm_network(fc):
    """FMM's network: each line cut at vertices shared with another (as
    segdist-match's default), one edge per direction it may be driven."""
    count = {}
    for f in fc["features"]:
        prev = None
        for p in f["geometry"]["coordinates"]:
            k = tuple(p)
            if k != prev:
                count[k] = count.get(k, 0) + 1
            prev = k
    nodes, edge_line = {}, {}
    net = fastmm.Network()
    eid = 0

    def node(p):
        return nodes.setdefault(tuple(p), len(nodes))

    for f in fc["features"]:
        c = f["geometry"]["coordinates"]
        one_way = f["properties"].get("oneway") == "yes"
        start = 0
        for v in range(1, len(c)):
            if v == len(c) - 1 or count.get(tuple(c[v]), 0) > 1:
                piece = [tuple(p) for p in c[start : v + 1]]
                a, b = node(piece[0]), node(piece[-1])
                net.add_edge(eid, source=a, target=b, geom=piece)
                edge_line[eid] = str(f["id"])
                eid += 1
                if not one_way:
                    net.add_edge(eid, source=b, target=a, geom=piece[::-1])
                    edge_line[eid] = str(f["id"])
                    eid += 1
                start = v
    net.finalize()
    return net, edge_line


def fmm_match(m, edge_line, path, k, radius, sigma):
    """Per fix, FMM's line id ('' where it matched none); seconds."""
    rows = list(csv.DictReader(open(path)))
    traces = {}
    for r in rows:
        traces.setdefault(r["trace"], []).append((float(r["x"]), float(r["y"]), float(r["time"])))
    out, secs = [], 0.0
    for pts in traces.values():
        lines = [""] * len(pts)
        traj = fastmm.Trajectory.from_xy_tuples([(x, y) for x, y, _ in pts])
        t = time.perf_counter()
        res = m.match(traj, max_candidates=k, candidate_search_radius=radius, gps_error=sigma)
        secs += time.perf_counter() - t
        for sub in res.subtrajectories:
            if sub.error_code != fastmm.SUCCESS or not sub.segments:
                continue
            for j, seg in enumerate(sub.segments):
                lines[sub.start_index + j] = edge_line[seg.edges[0].edge_id]
            lines[sub.start_index + len(sub.segments)] = edge_line[sub.segments[-1].edges[-1].edge_id]
        out.extend(lines)
    return out, secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--city", action="store_true", help="the synthetic 10 km city (segdist-bench's mapmatch::city)")
    ap.add_argument("--delta", type=float, default=3000.0, help="FMM's UBODT bound (m)")
    ap.add_argument("--k", type=int, default=8, help="candidate roads a fix, for segdist and FMM (segdist's default: 8)")
    a = ap.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="segdist-match-bench-")
    subprocess.run([BENCH, "match-data", d, str(a.traces)] + (["--city"] if a.city else []), check=True,
                   stderr=subprocess.DEVNULL)
    tr = Transformer.from_crs("EPSG:4326", "EPSG:3067", always_xy=True)
    fc = project_roads(os.path.join(d, "roads.geojson"), os.path.join(d, "roads_tm35.geojson"), tr)
    t = time.perf_counter()
    net, edge_line = fmm_network(fc)

    def fmm_start():
        """FMM's matcher over `net`: its UBODT built and written to the
        cache the first time, loaded from there after."""
        return fastmm.FastMapMatch(net, fastmm.TransitionMode.SHORTEST, max_distance_between_candidates=a.delta,
                                   cache_dir=os.path.join(d, "ubodt"))

    first = fmm_start()
    fmm_build = time.perf_counter() - t
    del first  # (not held beside the second: the city's table is 425 MB)
    # As a second run on the same network finds it: the UBODT loaded from
    # its cache (FMM's own start, the network object kept).
    t = time.perf_counter()
    m = fmm_start()
    fmm_load = time.perf_counter() - t
    print(f"FMM network and UBODT ({a.delta:g} m) built in {fmm_build:.2f} s; the UBODT loaded from its cache in"
          f" {fmm_load:.2f} s")
    rows = []
    for noise, interval in CASES:
        name = f"traces_{noise:g}m_{interval:g}s"
        ll = os.path.join(d, name + ".csv")
        xy = os.path.join(d, name + "_tm35.csv")
        truth = project_traces(ll, xy, tr)
        # segdist's default radius (segdist_match::default_radius, 3 sigma
        # and at least 50 m), given to both: FMM has no default of its own.
        k, radius = a.k, max(3 * noise, 50.0)
        common = ["--sigma", str(noise), "--radius", str(radius), "--k", str(k), "-q"]
        out = os.path.join(d, "out.csv")
        geo_s = timed([SEGDIST, "match", "--points", ll, "--lines", os.path.join(d, "roads.geojson"), "-o", out] + common, a.runs, out)
        geo_acc = accuracy(truth, out)
        xy_s = timed([SEGDIST, "match", "--planar", "--points", xy, "--lines", os.path.join(d, "roads_tm35.geojson"), "-o", out]
                     + common, a.runs, out)
        xy_acc = accuracy(truth, out)
        near = near_misses(truth, out, fc, tr)
        subprocess.run([SEGDIST, "snap", "--planar", "-q", "--points", xy, "--lines", os.path.join(d, "roads_tm35.geojson"),
                        "-o", out], check=True)
        near_acc = accuracy(truth, out)
        fmm_lines, fmm_s = fmm_match(m, edge_line, xy, k, radius, noise)
        fmm_acc = sum(g == t["true_line"] for g, t in zip(fmm_lines, truth)) / len(truth)
        n = len(truth)
        r = dict(noise_m=noise, interval_s=interval, fixes=n, segdist_geo=geo_acc, segdist_planar=xy_acc,
                 nearest=near_acc, fmm=fmm_acc, near_misses=near, segdist_geo_fixes_per_s=n / geo_s,
                 segdist_planar_fixes_per_s=n / xy_s, fmm_fixes_per_s=n / fmm_s,
                 fmm_whole_fixes_per_s=n / (fmm_load + fmm_s))
        print(json.dumps(r))
        rows.append(r)
    print()
    print("| noise | interval | fixes | segdist-match (lon/lat) | segdist-match (planar) | FMM | nearest road |"
          " segdist misses within 10 m | segdist lon/lat fixes/s | segdist planar fixes/s | FMM fixes/s (match only) |"
          " FMM fixes/s (UBODT loaded, match) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['noise_m']:g} m | {r['interval_s']:g} s | {r['fixes']:,} | {100 * r['segdist_geo']:.1f} % |"
              f" {100 * r['segdist_planar']:.1f} % | {100 * r['fmm']:.1f} % | {100 * r['nearest']:.1f} % | {100 * r['near_misses']:.0f} % |"
              f" {r['segdist_geo_fixes_per_s'] / 1e6:.3f} M | {r['segdist_planar_fixes_per_s'] / 1e6:.3f} M |"
              f" {r['fmm_fixes_per_s'] / 1e6:.3f} M | {r['fmm_whole_fixes_per_s'] / 1e6:.4f} M |")


if __name__ == "__main__":
    main()
