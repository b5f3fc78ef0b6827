"""segdist.sjoin_nearest against geopandas.sjoin_nearest (same ids, the
same shape of result, distances within GEOS's rounding and equal to
segdist's own bit for bit), geographic on EPSG:4326 against GeoIndex and
`segdist snap`, missing points, ties, and errors."""

import csv
import io
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import segdist

gpd = pytest.importorskip("geopandas")
pd = pytest.importorskip("pandas")
shapely = pytest.importorskip("shapely")

DATA = pathlib.Path(__file__).resolve().parents[3] / "examples" / "helsinki"


def roads_and_fixes(n_seg=3000, n_pts=5000, seed=7, crs=3067):
    r = np.random.default_rng(seed)
    a = r.random((n_seg, 2)) * 1000
    ang = r.random(n_seg) * 2 * np.pi
    b = a + np.c_[np.cos(ang), np.sin(ang)] * (5 + 30 * r.random(n_seg))[:, None]
    # Some two-part roads and longer polylines among the segments.
    geoms = list(shapely.linestrings(np.stack([a, b], 1)))
    for i in range(0, n_seg, 50):
        geoms[i] = shapely.MultiLineString([[a[i], b[i]], [b[i], b[i] + 7, b[i] + [20, 3]]])
    lines = gpd.GeoDataFrame(
        {"road": np.arange(n_seg) * 10, "name": [f"r{i}" for i in range(n_seg)]},
        geometry=geoms,
        index=np.arange(n_seg) + 100,
        crs=crs,
    )
    p = r.random((n_pts, 2)) * 1000
    fixes = gpd.GeoDataFrame(
        {"fix": np.arange(n_pts), "name": "f"}, geometry=shapely.points(p), index=[f"p{i}" for i in range(n_pts)], crs=crs
    )
    return fixes, lines


def unique_rows(g):
    """geopandas' rows of points with one nearest line (no ties)."""
    return g[~g.index.duplicated(keep=False)]


@pytest.mark.parametrize("how", ["inner", "left"])
@pytest.mark.parametrize("max_distance", [None, 12.0])
def test_equals_geopandas(how, max_distance):
    fixes, lines = roads_and_fixes()
    ours = segdist.sjoin_nearest(fixes, lines, how=how, max_distance=max_distance, distance_col="d")
    theirs = gpd.sjoin_nearest(fixes, lines, how=how, max_distance=max_distance, distance_col="d")
    # The same shape: geopandas' columns, in its order, then segdist's.
    assert list(ours.columns) == list(theirs.columns) + list(segdist._join.EXTRAS)
    assert ours.crs == theirs.crs and ours.geometry.name == "geometry"
    theirs = unique_rows(theirs)
    assert len(theirs) > 0.99 * len(ours) and len(theirs) <= len(ours)
    got = ours.loc[theirs.index]
    found = theirs["index_right"].notna().to_numpy()
    if how == "left" and max_distance is not None:
        assert not found.all()
    np.testing.assert_array_equal(got["index_right"].to_numpy(), theirs["index_right"].to_numpy())
    for c in ["fix", "name_left", "road", "name_right"]:
        pd.testing.assert_series_equal(got[c], theirs[c])
    assert got.geometry.equals(theirs.geometry)
    # GEOS rounds its distances less carefully than segdist: within 1e-12.
    np.testing.assert_allclose(got["d"].to_numpy(), theirs["d"].to_numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("how", ["inner", "left"])
def test_columns_of_every_kind_taken_as_geopandas(how):
    # Enough points that Arrow and object columns are taken in two halves
    # on two threads; categorical, object, nullable and a second geometry.
    fixes, lines = roads_and_fixes(n_pts=9001)
    lines["kind"] = pd.Categorical(np.where(lines["road"] % 3 == 0, "main", "side"))
    lines["tags"] = pd.Series([{"i": i} if i % 7 else None for i in range(len(lines))], index=lines.index, dtype=object)
    lines["lanes"] = pd.array([i % 4 if i % 5 else None for i in range(len(lines))], dtype="Int64")
    lines["mid"] = lines.geometry.centroid
    ours = segdist.sjoin_nearest(fixes, lines, how=how, max_distance=10.0, distance_col="d")
    theirs = unique_rows(gpd.sjoin_nearest(fixes, lines, how=how, max_distance=10.0, distance_col="d"))
    got = ours.loc[theirs.index]
    if how == "left":
        assert got["index_right"].isna().any()
    for c in ["road", "name_right", "kind", "tags", "lanes"]:
        pd.testing.assert_series_equal(got[c], theirs[c])
    assert got["mid"].equals(theirs["mid"])


def test_the_lines_index_is_kept_with_them_until_they_change():
    import gc

    fixes, lines = roads_and_fixes(n_pts=300)
    # (Within longitude/latitude's range, for the geodesic join below.)
    fixes = fixes.set_geometry(fixes.geometry.scale(0.05, 0.05, origin=(0, 0)))
    lines = lines.set_geometry(lines.geometry.scale(0.05, 0.05, origin=(0, 0)))
    kept = segdist._join._KEPT
    first = segdist.sjoin_nearest(fixes, lines, distance_col="d")
    key = (id(lines.geometry.array), False)
    assert key in kept
    index = kept[key].index
    again = segdist.sjoin_nearest(fixes, lines, distance_col="d")
    assert kept[key].index is index  # used again, not built again
    pd.testing.assert_frame_equal(again, first)
    # Geodesic on the same lines: an index of its own.
    segdist.sjoin_nearest(fixes, lines, geographic=True)
    assert (id(lines.geometry.array), True) in kept and kept[key].index is index
    # A line moved (in place, as geopandas' own sindex sees it): the index
    # is built again, and the answers are the new line's.
    far = fixes.geometry.iloc[0]
    lines.loc[lines.index[3], "geometry"] = shapely.LineString([(far.x - 1, far.y), (far.x + 1, far.y)])
    moved = segdist.sjoin_nearest(fixes, lines, distance_col="d")
    assert kept[(id(lines.geometry.array), False)].index is not index
    assert moved["index_right"].iloc[0] == lines.index[3] and moved["d"].iloc[0] == 0.0
    np.testing.assert_array_equal(
        moved["index_right"].to_numpy(),
        segdist.sjoin_nearest(fixes, lines.copy(), distance_col="d")["index_right"].to_numpy(),
    )
    # The kept index goes with its lines.
    before = len(kept)
    del lines, first, again, moved
    gc.collect()
    assert len(kept) == before - 2


def test_types_are_read_from_classes_as_geos_gives_them():
    geoms = np.array(
        [None, shapely.Point(1, 2), shapely.Point(), shapely.LineString([(0, 0), (1, 1)]), shapely.LineString(),
         shapely.LinearRing([(0, 0), (1, 0), (1, 1)]), shapely.box(0, 0, 1, 1), shapely.MultiPoint([(0, 0)]),
         shapely.MultiLineString([[(0, 0), (1, 1)]]), shapely.MultiPolygon([shapely.box(0, 0, 1, 1)]),
         shapely.GeometryCollection([shapely.Point(0, 0)])] * 3,
        dtype=object,
    )
    ids = segdist._common.type_ids(geoms)
    np.testing.assert_array_equal(ids, shapely.get_type_id(geoms))
    assert ids.tolist()[:11] == [-1, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7]
    # What is not a geometry is GEOS's to refuse, as before.
    with pytest.raises(TypeError):
        segdist._common.type_ids(np.array([shapely.Point(0, 0), 42], dtype=object))


def test_every_number_is_segdists_own():
    fixes, lines = roads_and_fixes()
    j = segdist.sjoin_nearest(fixes, lines, distance_col="distance")
    index = segdist.SegmentIndex.from_shapely(lines.geometry)
    hit = index.nearest(fixes.get_coordinates().to_numpy())
    assert (j["index_right"].to_numpy() == lines.index.to_numpy()[hit.feature]).all()
    for ours, col in [("distance", hit.distance), ("t", hit.t), ("along", hit.along), ("segment", hit.segment),
                      ("part", hit.part), ("nearest_x", hit.point[:, 0]), ("nearest_y", hit.point[:, 1])]:
        assert j[ours].to_numpy().tobytes() == col.tobytes(), ours


def helsinki_frames():
    roads = json.load(open(DATA / "roads.geojson"))["features"]
    points = json.load(open(DATA / "points.geojson"))["features"]
    lines = gpd.GeoDataFrame(
        {"osm_id": [f["properties"]["osm_id"] for f in roads]},
        geometry=[shapely.geometry.shape(f["geometry"]) for f in roads],
        crs=4326,
    )
    pts = gpd.GeoDataFrame(geometry=[shapely.geometry.shape(f["geometry"]) for f in points], crs=4326)
    return pts, lines


def test_wgs84_is_geodesic_in_metres_as_segdist_snap():
    pts, lines = helsinki_frames()
    j = segdist.sjoin_nearest(pts, lines, distance_col="distance_m")
    out = subprocess.run(
        [os.environ.get("SEGDIST_BIN", "segdist"), "snap", "-q", "--keep", "none", "--points",
         str(DATA / "points.geojson"), "--lines", str(DATA / "roads.geojson"), "--id-property", "osm_id"],
        check=True, capture_output=True, text=True,
    ).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == len(j) == len(pts)
    assert [int(r["line_id"]) for r in rows] == j["osm_id"].tolist()
    assert [float(r["distance_m"]) for r in rows] == j["distance_m"].tolist()
    assert [float(r["along_m"]) for r in rows] == j["along"].tolist()
    assert [float(r["lon"]) for r in rows] == j["nearest_x"].tolist()
    # Metres, not degrees: within 300 m, where geopandas measures degrees.
    assert 1 < j["distance_m"].median() < 300
    # Said otherwise, planar degrees (as geopandas).
    planar = segdist.sjoin_nearest(pts, lines, distance_col="deg", geographic=False)
    assert planar["deg"].max() < 0.01


def test_missing_and_empty_points():
    fixes, lines = roads_and_fixes(n_pts=10)
    geoms = fixes.geometry.array.copy()
    geoms[2], geoms[5] = None, shapely.Point()
    fixes = fixes.set_geometry(gpd.GeoSeries(geoms, index=fixes.index, crs=fixes.crs))
    inner = segdist.sjoin_nearest(fixes, lines)
    assert list(inner.index) == [f"p{i}" for i in range(10) if i not in (2, 5)]
    left = segdist.sjoin_nearest(fixes, lines, how="left", distance_col="d")
    assert list(left.index) == list(fixes.index)
    assert left.loc[["p2", "p5"], ["index_right", "road", "d", "t"]].isna().all().all()
    assert (left.loc[["p2", "p5"], "segment"] == -1).all()
    assert left.drop(index=["p2", "p5"])["d"].notna().all()


def test_points_with_nan_coordinates_and_repeated_labels():
    fixes, lines = roads_and_fixes(n_pts=6)
    geoms = fixes.geometry.array.copy()
    geoms[1] = shapely.Point(np.nan, 5.0)
    fixes = fixes.set_geometry(gpd.GeoSeries(geoms, index=fixes.index, crs=fixes.crs))
    fixes.index = ["a", "a", "b", "a", "c", "c"]  # labels need not be unique
    left = segdist.sjoin_nearest(fixes, lines, how="left", distance_col="d")
    assert list(left.index) == list(fixes.index)
    assert left["d"].isna().tolist() == [False, True, False, False, False, False]
    inner = segdist.sjoin_nearest(fixes, lines, distance_col="d")
    assert list(inner.index) == ["a", "b", "a", "c", "c"]
    assert (inner["d"].to_numpy() == left["d"].dropna().to_numpy()).all()
    # A line among the points is named, wherever it is.
    geoms[3] = lines.geometry.iloc[1]
    with pytest.raises(TypeError, match="left geometry 3 is a LineString"):
        segdist.sjoin_nearest(gpd.GeoSeries(geoms, crs=fixes.crs), lines)


def test_shapely_arrays_and_series():
    fixes, lines = roads_and_fixes(n_pts=200)
    from_frames = segdist.sjoin_nearest(fixes, lines, distance_col="d")
    j = segdist.sjoin_nearest(np.asarray(fixes.geometry.array), list(lines.geometry), distance_col="d")
    assert list(j.columns) == ["geometry", "index_right", "d", *segdist._join.EXTRAS]
    assert (j["index_right"].to_numpy() == from_frames["index_right"].to_numpy() - 100).all()
    assert (j["d"].to_numpy() == from_frames["d"].to_numpy()).all()


def test_ties_take_the_first_line():
    lines = gpd.GeoDataFrame(
        {"n": ["a", "b", "c"]},
        geometry=[shapely.LineString([(0, 1), (10, 1)]), shapely.LineString([(0, -1), (10, -1)]),
                  shapely.LineString([(0, -1), (10, -1)])],
        index=[7, 3, 5],
    )
    pts = gpd.GeoDataFrame(geometry=shapely.points([[5, 0], [5, -0.5]]))
    j = segdist.sjoin_nearest(pts, lines)
    assert j["index_right"].tolist() == [7, 3]
    assert len(gpd.sjoin_nearest(pts, lines)) == 5  # geopandas: every tie


def test_errors():
    fixes, lines = roads_and_fixes(n_pts=5, n_seg=5)
    with pytest.raises(ValueError, match="how must be"):
        segdist.sjoin_nearest(fixes, lines, how="right")
    with pytest.raises(TypeError, match="left geometry 0 is a MultiLineString: sjoin_nearest joins Points"):
        segdist.sjoin_nearest(lines, lines)
    poly = gpd.GeoDataFrame(geometry=[shapely.box(0, 0, 1, 1)], crs=3067)
    with pytest.raises(TypeError, match="geometry 0 is a Polygon"):
        segdist.sjoin_nearest(fixes, poly)
    with pytest.raises(ValueError, match="the CRSs differ"):
        segdist.sjoin_nearest(fixes, lines.set_crs(3857, allow_override=True))
    with pytest.raises(ValueError, match="not WGS84"):
        segdist.sjoin_nearest(fixes.set_crs(4258, allow_override=True), lines.set_crs(4258, allow_override=True))
    with pytest.raises(ValueError, match="twice"):
        segdist.sjoin_nearest(fixes.assign(t=1), lines)
    with pytest.raises(ValueError, match="max_distance"):
        segdist.sjoin_nearest(fixes, lines, max_distance=-1)
    with pytest.raises(TypeError, match="left must be"):
        segdist.sjoin_nearest(42, lines)
    # extras=False leaves geopandas' columns only.
    j = segdist.sjoin_nearest(fixes.assign(t=1), lines, extras=False)
    assert list(j.columns) == list(gpd.sjoin_nearest(fixes.assign(t=1), lines).columns)


def test_namespace_is_the_api():
    assert sorted(dir(segdist)) == sorted(segdist.__all__)
    for name in segdist.__all__:
        assert getattr(segdist, name) is not None
