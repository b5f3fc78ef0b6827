"""The fastest route a user has today for `segdist snap`: numpy/pandas to read
the CSV, shapely 2 (GEOS) STRtree.query_nearest, pandas to write.

    python3 scripts/snap_shapely.py DIR     # reads DIR/points.csv, DIR/lines.wkt

Prints the time of each stage and the total, as one JSON line.
"""
import json
import sys
import time

import numpy as np
import pandas as pd
import shapely

d = sys.argv[1]
t0 = time.perf_counter()
pts = pd.read_csv(f"{d}/points.csv")
with open(f"{d}/lines.wkt") as f:
    wkt = np.array(f.read().splitlines())
t1 = time.perf_counter()
lines = shapely.from_wkt(wkt)
tree = shapely.STRtree(lines)
t2 = time.perf_counter()
points = shapely.points(pts["x"].to_numpy(), pts["y"].to_numpy())
(idx_p, idx_l), dist = tree.query_nearest(points, return_distance=True, all_matches=False)
# The closest point itself, which segdist also gives (shapely has no single call for it).
near = shapely.get_coordinates(shapely.shortest_line(points[idx_p], lines[idx_l]))[1::2]
t3 = time.perf_counter()
pd.DataFrame({"point_id": pts["id"].to_numpy()[idx_p], "line_id": idx_l, "distance": dist,
              "x": near[:, 0], "y": near[:, 1]}).to_csv(f"{d}/shapely.csv", index=False)
t4 = time.perf_counter()
print(json.dumps({"impl": "shapely", "points": len(pts), "lines": len(lines), "read_s": t1 - t0,
                  "index_s": t2 - t1, "query_s": t3 - t2, "write_s": t4 - t3, "total_s": t4 - t0}))
