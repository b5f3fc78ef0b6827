#!/usr/bin/env python3
"""segdist-sql's bench: the nearest-line join over N points (Parquet) and M
segments, four ways in one run:

- `segdist snap` (the CLI) on the same data as CSV: the reference throughput;
- `segdist-sql query` embedded: `segdist_snap` from Parquet to Parquet;
- the same on a Ballista cluster: a scheduler and two executors on loopback;
- both again into a folder (`--out DIR/`: a Parquet file per partition,
  written where the partition is computed, so the cluster's result never
  passes through the client);
- SedonaDB 0.5's `ST_KNN` join on the same Parquet files (geographic: on
  the first --sedona-geo-points points only, as it answers some 50 points/s).

Planar (the segments of the index bench: random, 0.001-0.01 long, in the
unit square) and geographic (the same mapped onto 1 deg x 0.5 deg of
longitude/latitude near Helsinki; metres on WGS84). Times are wall clock of
the whole command (reading, indexing, joining, writing), the median of
--runs runs for segdist, one run for SedonaDB.

Agreement: on a sample of points, the nearest distance by brute force
(`segdist_distance` / `segdist_geodesic_distance` over every segment, in
SQL, no index) against each engine's answer; and over every point SedonaDB
answered, how many of its lines differ from segdist's and how many are
farther from the point than segdist's (by segdist's distance to each).

Needs: the release binaries (`cargo build --release --bin segdist` at the
root, `cargo build --release` in crates/segdist-sql), and
`pip install sedonadb pyarrow geoarrow-pyarrow pandas numpy`.

    python3 crates/segdist-sql/bench/bench.py                 # 10 M points x 100 k segments
    python3 crates/segdist-sql/bench/bench.py --points 1000000 --runs 1
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[3]
SEGDIST = ROOT / "target/release/segdist"
SQL = ROOT / "crates/segdist-sql/target/release/segdist-sql"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def wkb_segments(a, b):
    """WKB LineStrings of two vertices, little-endian, as an Arrow array."""
    m = len(a)
    rec = np.zeros(m, dtype=[("o", "u1"), ("t", "<u4"), ("n", "<u4"), ("c", "<f8", 4)])
    rec["o"], rec["t"], rec["n"] = 1, 2, 2
    rec["c"] = np.column_stack([a[:, 0], a[:, 1], b[:, 0], b[:, 1]])
    offsets = (np.arange(m + 1, dtype=np.int32) * rec.itemsize).tobytes()
    return pa.Array.from_buffers(pa.binary(), m, [None, pa.py_buffer(offsets), pa.py_buffer(rec.tobytes())])


def generate(d: Path, n: int, m: int, seed: int):
    rng = np.random.default_rng(seed)
    a = rng.random((m, 2))
    length = 0.001 + 0.009 * rng.random(m)
    th = 2 * np.pi * rng.random(m)
    b = a + np.column_stack([length * np.cos(th), length * np.sin(th)])
    p = rng.random((n, 2))
    geo = lambda q: np.column_stack([24.5 + q[:, 0], 60.0 + 0.5 * q[:, 1]])
    for mode, (pa_, pb, pp, cx, cy) in {
        "planar": (a, b, p, "x", "y"),
        "geographic": (geo(a), geo(b), geo(p), "lon", "lat"),
    }.items():
        ids = pa.array(np.arange(m, dtype=np.int64))
        lines = pa.table(
            {"id": ids, "geometry": wkb_segments(pa_, pb), "ax": pa_[:, 0], "ay": pa_[:, 1], "bx": pb[:, 0], "by": pb[:, 1]}
        )
        pq.write_table(lines, d / f"lines_{mode}.parquet")
        pts = pa.table({"id": np.arange(n, dtype=np.int64), cx: pp[:, 0], cy: pp[:, 1]})
        pq.write_table(pts, d / f"points_{mode}.parquet", row_group_size=1 << 20)
        # The CLI's CSV: points id,x,y; lines as consecutive rows per id.
        pacsv.write_csv(pa.table({"id": pts["id"], "x": pp[:, 0], "y": pp[:, 1]}), d / f"points_{mode}.csv")
        rows = pa.table(
            {
                "id": np.repeat(np.arange(m, dtype=np.int64), 2),
                "x": np.column_stack([pa_[:, 0], pb[:, 0]]).ravel(),
                "y": np.column_stack([pa_[:, 1], pb[:, 1]]).ravel(),
            }
        )
        pacsv.write_csv(rows, d / f"lines_{mode}.csv")


def timed(cmd, runs, env=None):
    """Median wall time of `cmd` over `runs` runs, and its last stderr."""
    times, err = [], ""
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - t)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{r.stderr}")
        err = r.stderr
    return statistics.median(times), times, err


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A scheduler and two executors, each a segdist-sql process."""

    def __enter__(self):
        self.port = free_port()
        self.procs = [
            subprocess.Popen([SQL, "scheduler", "--bind", f"127.0.0.1:{self.port}", "--min-executors", "2"],
                             stderr=subprocess.DEVNULL)
        ]
        for _ in range(2):
            self.procs.append(
                subprocess.Popen(
                    [SQL, "executor", "--scheduler", f"127.0.0.1:{self.port}", "--bind",
                     f"127.0.0.1:{free_port()}", "--grpc-port", str(free_port())],
                    stderr=subprocess.DEVNULL,
                )
            )
        start = time.time()
        while True:
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=2).status == 200:
                    break
            except Exception:
                pass
            if time.time() - start > 60:
                raise SystemExit("the executors did not register")
            time.sleep(0.2)
        return self

    def __exit__(self, *a):
        # SIGTERM: an executor removes its work folder (shuffles, results).
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def sql(tables, query, out):
    cmd = [SQL, "query"] + [f"--table={k}={v}" for k, v in tables.items()] + ["--out", out, query]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{query}: {r.stderr}")
    return pq.read_table(out)


def sedona_timed(d: Path, mode: str, points: Path, out: Path, limit: float, full: bool = False):
    """SedonaDB's join in a process of its own, stopped after `limit` s:
    its wall time, or None when stopped."""
    import multiprocessing

    q = multiprocessing.Queue()
    p = multiprocessing.Process(target=lambda: q.put(sedona(d, mode, points, out, full)))
    p.start()
    p.join(limit)
    if p.is_alive():
        p.terminate()
        p.join()
        return None
    return q.get()


def sedona(d: Path, mode: str, points: Path, out: Path, full: bool = False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sedonadb

        c = sedonadb.connect()
    cx, cy = ("x", "y") if mode == "planar" else ("lon", "lat")
    t = time.perf_counter()
    c.read_parquet(str(points)).to_view("p")
    c.sql(f"SELECT id, ST_GeomFromWKB(geometry) AS geom FROM '{d / f'lines_{mode}.parquet'}'").to_view("l")
    sphere = "true" if mode == "geographic" else "false"
    q = f"SELECT p.id AS point_id, l.id AS line_id FROM p JOIN l ON ST_KNN(ST_Point(p.{cx}, p.{cy}), l.geom, 1, {sphere})"
    if full:
        # segdist_snap's columns, as far as SedonaDB has them (it has no
        # ST_ClosestPoint for these types: the closest point is
        # interpolated at the located fraction).
        q = f"""SELECT point_id, line_id, ST_Distance(pt, geom) AS distance, ST_X(cp) AS x, ST_Y(cp) AS y,
                  f * ST_Length(geom) AS along, f AS fraction
                FROM (SELECT *, ST_LineInterpolatePoint(geom, f) AS cp
                      FROM (SELECT p.id AS point_id, l.id AS line_id, ST_Point(p.{cx}, p.{cy}) AS pt, l.geom,
                                   ST_LineLocatePoint(l.geom, ST_Point(p.{cx}, p.{cy})) AS f
                            FROM p JOIN l ON ST_KNN(ST_Point(p.{cx}, p.{cy}), l.geom, 1, {sphere})))"""
    c.sql(q).to_parquet(str(out), single_file_output=True)
    return time.perf_counter() - t


def agreement(d: Path, mode: str, points: Path, ours: Path, theirs: Path, every: int):
    """On every `every`-th point SedonaDB answered: the brute-force nearest
    distance against segdist's and SedonaDB's answers. Over all of them:
    how many of SedonaDB's lines differ from segdist's, and how many are
    farther (segdist's distance from the point to SedonaDB's line against
    segdist's answer; the worst by how much)."""
    cx, cy = ("x", "y") if mode == "planar" else ("lon", "lat")
    f = "segdist_distance" if mode == "planar" else "segdist_geodesic_distance"
    dcol = "distance" if mode == "planar" else "distance_m"
    tables = {"p": points, "l": d / f"lines_{mode}.parquet", "o": ours, "s": theirs}
    dist = f"{f}(p.{cx}, p.{cy}, l.ax, l.ay, l.bx, l.by)"
    q = f"""
      WITH sample AS (SELECT p.* FROM p JOIN s ON s.point_id = p.id WHERE p.id % {every} = 0),
      brute AS (SELECT p.id, min({dist}) AS d FROM sample p CROSS JOIN l GROUP BY p.id),
      theirs AS (SELECT p.id, min({dist}) AS d FROM sample p JOIN s ON s.point_id = p.id JOIN l ON l.id = s.line_id GROUP BY p.id)
      SELECT count(*) AS n,
             sum(CASE WHEN o.{dcol} = brute.d THEN 0 ELSE 1 END) AS segdist_wrong,
             sum(CASE WHEN theirs.d = brute.d THEN 0 ELSE 1 END) AS sedona_wrong
      FROM brute JOIN o ON o.point_id = brute.id LEFT JOIN theirs ON theirs.id = brute.id"""
    r = sql(tables, q, d / "agree.parquet").to_pylist()[0]
    q = f"""
      WITH theirs AS (SELECT s.point_id, s.line_id, {dist} AS d FROM s JOIN p ON p.id = s.point_id JOIN l ON l.id = s.line_id)
      SELECT count(*) AS answered,
             sum(CASE WHEN o.line_id <> theirs.line_id THEN 1 ELSE 0 END) AS differs,
             sum(CASE WHEN theirs.d > o.{dcol} THEN 1 ELSE 0 END) AS farther,
             sum(CASE WHEN theirs.d < o.{dcol} THEN 1 ELSE 0 END) AS nearer,
             coalesce(max(theirs.d - o.{dcol}), 0) AS worst
      FROM o JOIN theirs ON o.point_id = theirs.point_id"""
    r.update(sql(tables, q, d / "differ.parquet").to_pylist()[0])
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=10_000_000)
    ap.add_argument("--segments", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sample-every", type=int, default=5000, help="brute force on every k-th point (planar)")
    ap.add_argument("--skip-sedona", action="store_true")
    ap.add_argument("--sedona-limit", type=float, default=900, help="stop SedonaDB after this many seconds")
    ap.add_argument("--sedona-geo-points", type=int, default=2000,
                    help="SedonaDB's geographic join on the first N points (it answers some 50 points/s)")
    ap.add_argument("--dir", type=Path, help="keep the data here (default: a temporary folder)")
    args = ap.parse_args()
    for b in (SEGDIST, SQL):
        if not b.exists():
            raise SystemExit(f"{b}: build it first (see --help)")
    d = args.dir or Path(tempfile.mkdtemp(prefix="segdist-sql-bench-"))
    d.mkdir(parents=True, exist_ok=True)
    log(f"data: {args.points:,} points x {args.segments:,} segments in {d}")
    if not (d / "points_planar.parquet").exists():
        generate(d, args.points, args.segments, 7)
    results = {"points": args.points, "segments": args.segments, "runs": args.runs, "modes": {}}
    snap = "SELECT * FROM segdist_snap('p', 'l')"
    for mode in ("planar", "geographic"):
        flag = ["--planar"] if mode == "planar" else ["--geographic"]
        r = {}
        cli = [SEGDIST, "snap", "--points", d / f"points_{mode}.csv", "--lines", d / f"lines_{mode}.csv", "-q", "-o",
               d / f"cli_{mode}.csv"] + flag
        r["cli_csv"], r["cli_csv_runs"], _ = timed(cli, args.runs)
        log(f"{mode}: segdist snap (CSV): {r['cli_csv']:.2f} s")
        tables = [f"--table=p={d / f'points_{mode}.parquet'}", f"--table=l={d / f'lines_{mode}.parquet'}"]
        ours = d / f"sql_{mode}.parquet"
        r["embedded"], r["embedded_runs"], _ = timed([SQL, "query", *tables, "--out", ours, snap], args.runs)
        log(f"{mode}: segdist-sql embedded (Parquet): {r['embedded']:.2f} s")
        r["embedded_csv"], r["embedded_csv_runs"], _ = timed(
            [SQL, "query", *tables, "--out", d / f"sql_{mode}.csv", snap], args.runs)
        log(f"{mode}: segdist-sql embedded (CSV out): {r['embedded_csv']:.2f} s")
        ids = "SELECT point_id, line_id FROM segdist_snap('p', 'l')"
        r["embedded_ids"], r["embedded_ids_runs"], _ = timed(
            [SQL, "query", *tables, "--out", d / f"sql_ids_{mode}.parquet", ids], args.runs)
        log(f"{mode}: segdist-sql embedded (point_id, line_id only): {r['embedded_ids']:.2f} s")
        with Cluster() as c:
            cmd = [SQL, "query", "--scheduler", f"127.0.0.1:{c.port}", *tables, "--out", d / f"dist_{mode}.parquet", snap]
            r["cluster"], r["cluster_runs"], report = timed(cmd, args.runs)
        r["cluster_report"] = report.strip().splitlines()
        log(f"{mode}: segdist-sql on 2 executors: {r['cluster']:.2f} s\n{report}")
        same = pq.read_table(ours).sort_by("point_id").equals(pq.read_table(d / f"dist_{mode}.parquet").sort_by("point_id"))
        r["cluster_equals_embedded"] = same
        # Into a folder: one Parquet file per partition, written where the
        # partition is computed (threads embedded, executors on the cluster).
        parts = d / f"parts_{mode}"
        r["embedded_parts"], r["embedded_parts_runs"], _ = timed([SQL, "query", *tables, "--out", f"{parts}/", snap], args.runs)
        log(f"{mode}: segdist-sql embedded (Parquet folder): {r['embedded_parts']:.2f} s")
        cparts = d / f"cluster_parts_{mode}"
        with Cluster() as c:
            cmd = [SQL, "query", "--scheduler", f"127.0.0.1:{c.port}", *tables, "--out", f"{cparts}/", snap]
            r["cluster_parts"], r["cluster_parts_runs"], report = timed(cmd, args.runs)
        log(f"{mode}: segdist-sql on 2 executors (Parquet folder): {r['cluster_parts']:.2f} s\n{report}")
        r["cluster_parts_equals_embedded"] = pq.read_table(ours).sort_by("point_id").equals(
            pq.read_table(cparts).sort_by("point_id"))
        if not args.skip_sedona:
            theirs = d / f"sedona_{mode}.parquet"
            points = d / f"points_{mode}.parquet"
            if mode == "geographic":
                # The first N points, and segdist's answers for them.
                n = min(args.sedona_geo_points, args.points)
                pq.write_table(pq.read_table(points).slice(0, n), d / "points_geographic_head.parquet")
                points = d / "points_geographic_head.parquet"
                r["sedona_points"] = n
            else:
                r["sedona_points"] = args.points
            t = sedona_timed(d, mode, points, theirs, args.sedona_limit)
            if t is None:
                r["sedona_stopped_after"] = args.sedona_limit
                log(f"{mode}: SedonaDB ST_KNN: stopped after {args.sedona_limit:.0f} s")
            else:
                r["sedona"] = t
                log(f"{mode}: SedonaDB ST_KNN on {r['sedona_points']:,} points: {t:.2f} s")
                every = args.sample_every if mode == "planar" else 20
                r["agreement"] = agreement(d, mode, points, ours, theirs, every)
                log(f"{mode}: agreement {r['agreement']}")
            if mode == "planar":
                full = d / "sedona_full_planar.parquet"
                t = sedona_timed(d, mode, points, full, args.sedona_limit, full=True)
                if t is not None:
                    r["sedona_full"] = t
                    q = """SELECT count(*) AS n, sum(CASE WHEN s.distance = o.distance THEN 0 ELSE 1 END) AS distance_differs,
                                  max(abs(s.distance - o.distance) / o.distance) AS worst_relative
                           FROM o JOIN s ON o.point_id = s.point_id WHERE o.distance > 0"""
                    r["sedona_full_agreement"] = sql({"o": ours, "s": full}, q, d / "full.parquet").to_pylist()[0]
                    log(f"{mode}: SedonaDB, segdist_snap's columns: {t:.2f} s; {r['sedona_full_agreement']}")
        results["modes"][mode] = r
    out = ROOT / "target/bench-sql.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=str))
    n = args.points / 1e6
    print(f"\n{args.points:,} points x {args.segments:,} segments; wall time of the whole command, median of {args.runs}")
    print("| | planar | | geographic | |\n|---|---:|---:|---:|---:|")
    print("| | s | M points/s | s | M points/s |")
    rows = [("`segdist snap` (CSV in, CSV out)", "cli_csv"), ("`segdist_snap` embedded (Parquet in, Parquet out)", "embedded"),
            ("`segdist_snap` embedded (Parquet in, CSV out)", "embedded_csv"),
            ("`segdist_snap` embedded, only `point_id, line_id` (SedonaDB's columns)", "embedded_ids"),
            ("`segdist_snap` on 2 Ballista executors, loopback", "cluster"),
            ("`segdist_snap` embedded, into a folder (a Parquet file per partition)", "embedded_parts"),
            ("`segdist_snap` on 2 Ballista executors, into a folder (each executor writes its own)", "cluster_parts"), ("SedonaDB 0.5 `ST_KNN` join, `point_id, line_id` (1 run)", "sedona"),
            ("SedonaDB 0.5 `ST_KNN` join with `ST_Distance`, `ST_LineLocatePoint`, `ST_LineInterpolatePoint` (1 run)", "sedona_full")]
    for name, k in rows:
        cells = []
        for mode in ("planar", "geographic"):
            m = results["modes"][mode]
            t = m.get(k)
            if t and k == "sedona" and m["sedona_points"] != args.points:
                cells += [f"{t:.2f} ({m['sedona_points']:,} points)", f"{m['sedona_points'] / t / 1e6:.5f}"]
            elif t:
                cells += [f"{t:.2f}", f"{n / t:.2f}"]
            elif k == "sedona" and "sedona_stopped_after" in m:
                cells += [f"> {m['sedona_stopped_after']:.0f} (stopped)", f"< {n / m['sedona_stopped_after']:.3f}"]
            else:
                cells += ["-", "-"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    for mode in ("planar", "geographic"):
        r = results["modes"][mode]
        line = f"{mode}: embedded/CLI throughput {r['cli_csv'] / r['embedded']:.2f}x, cluster/embedded time {r['cluster'] / r['embedded']:.2f}x"
        if "sedona_stopped_after" in r:
            line += f", SedonaDB more than {r['sedona_stopped_after'] / r['embedded_ids']:.0f}x the embedded time (same columns)"
        if "sedona" in r:
            a = r["agreement"]
            # Per point, so that a run on fewer points compares too.
            per = lambda t, n: t / n
            theirs = per(r["sedona"], r["sedona_points"])
            line += (f", SedonaDB {theirs / per(r['embedded'], args.points):.1f}x the embedded time per point (all columns), "
                     f"{theirs / per(r['embedded_ids'], args.points):.1f}x (same columns); brute force on {a['n']} points: "
                     f"segdist wrong {a['segdist_wrong']}, SedonaDB wrong {a['sedona_wrong']}; "
                     f"of {a['answered']:,} points SedonaDB answered, its line differs from segdist's for {a['differs']:,}, "
                     f"is farther for {a['farther']:,} (worst by {a['worst']:.6g}), nearer for {a['nearer']:,}")
        if "sedona_full" in r:
            a = r["sedona_full_agreement"]
            line += (f"; SedonaDB with segdist_snap's columns {r['sedona_full'] / r['embedded']:.1f}x the embedded time, "
                     f"its distance differs from segdist's for {a['distance_differs']:,} of {a['n']:,} points "
                     f"(worst relative {a['worst_relative']:.3g})")
        print(line + f"; cluster answer equals embedded: {r['cluster_equals_embedded']}"
              f"; into a folder, cluster/embedded time {r['cluster_parts'] / r['embedded_parts']:.2f}x, "
              f"cluster/embedded single file {r['cluster_parts'] / r['embedded']:.2f}x, "
              f"answer equals embedded: {r['cluster_parts_equals_embedded']}")


if __name__ == "__main__":
    main()
