"""Lon/lat in metres: GeoIndex.nearest equals `segdist snap` on the Helsinki
data bit for bit, geodesic equals GeoIndex's projections, and errors."""

import csv
import io
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import segdist

# The OpenStreetMap data bundled with the repository (© OpenStreetMap
# contributors, ODbL).
DATA = pathlib.Path(__file__).resolve().parents[3] / "examples" / "helsinki"


def helsinki():
    roads = json.load(open(DATA / "roads.geojson"))["features"]
    points = json.load(open(DATA / "points.geojson"))["features"]
    lines = [np.array(f["geometry"]["coordinates"], float) for f in roads]
    pts = np.array([f["geometry"]["coordinates"] for f in points], float)
    return lines, pts


def test_geo_index_equals_segdist_snap():
    lines, pts = helsinki()
    hit = segdist.GeoIndex.from_polylines(lines).nearest(pts)
    out = subprocess.run(
        [os.environ.get("SEGDIST_BIN", "segdist"), "snap", "-q", "--points", str(DATA / "points.geojson"),
         "--lines", str(DATA / "roads.geojson")],
        check=True, capture_output=True, text=True,
    ).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == len(pts)
    assert [int(r["line_id"]) for r in rows] == hit.feature.tolist()
    assert [int(r["segment"]) for r in rows] == hit.segment.tolist()
    assert [float(r["distance_m"]) for r in rows] == hit.distance.tolist()
    assert [float(r["lon"]) for r in rows] == hit.point[:, 0].tolist()
    assert [float(r["lat"]) for r in rows] == hit.point[:, 1].tolist()
    assert [float(r["t"]) for r in rows] == hit.t.tolist()
    assert [float(r["along_m"]) for r in rows] == hit.along.tolist()


def test_geodesic_equals_the_index_projection():
    lines, pts = helsinki()
    hit = segdist.GeoIndex.from_polylines(lines).nearest(pts[:500])
    a = np.array([lines[f][s] for f, s in zip(hit.feature, hit.segment)])
    b = np.array([lines[f][s + 1] for f, s in zip(hit.feature, hit.segment)])
    r = segdist.geodesic(a, b, pts[:500])
    assert r.distance.tolist() == hit.distance[:500].tolist()
    assert r.point.tolist() == hit.point[:500].tolist()
    # Broadcasting: one segment against many points.
    one = segdist.geodesic(a[0], b[0], pts[:3])
    assert one.distance.shape == (3,)


def test_geo_errors():
    with pytest.raises(ValueError, match="row 1: not a longitude/latitude"):
        segdist.geodesic([0, 0], [1, 0], [[0, 0], [0, 95]])
    with pytest.raises(ValueError):
        segdist.GeoIndex.from_polylines([[[0, 0], [0, 91]]])
    index = segdist.GeoIndex.from_polylines([[[0, 0], [0.01, 0]]])
    assert len(index) == 1
    assert index.nearest([[0.005, 0.001]], max_distance=100).feature.tolist() == [-1]
    with pytest.raises(ValueError, match="max_distance"):
        index.nearest([[0, 0]], max_distance=-1)
