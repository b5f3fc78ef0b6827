"""`segdist snap` on GeoParquet written by another tool (geopandas and
pyarrow): WKB and GeoArrow encodings, the CRS deciding the mode, answers
equal to the GeoJSON run bit for bit; and its GeoParquet output read back
by geopandas."""

import io
import os
import pathlib
import subprocess

import numpy as np
import pytest

gpd = pytest.importorskip("geopandas")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

DATA = pathlib.Path(__file__).resolve().parents[3] / "examples" / "helsinki"
SEGDIST = os.environ.get("SEGDIST_BIN", "segdist")


def snap(*args, cwd):
    r = subprocess.run([SEGDIST, "snap", "-q", *args], cwd=cwd, capture_output=True)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("geoparquet")
    pts = gpd.read_file(DATA / "points.geojson")
    roads = gpd.read_file(DATA / "roads.geojson")
    pts.to_parquet(d / "points.parquet")
    roads.to_parquet(d / "roads.parquet")
    pts.to_parquet(d / "points_geoarrow.parquet", geometry_encoding="geoarrow")
    roads.to_parquet(d / "roads_geoarrow.parquet", geometry_encoding="geoarrow")
    pts.to_crs(3067).to_parquet(d / "points_tm35.parquet")
    roads.to_crs(3067).to_parquet(d / "roads_tm35.parquet")
    return d


def test_geopandas_geoparquet_reads_as_the_geojson(files):
    want = snap("--keep", "none", "--points", str(DATA / "points.geojson"), "--lines", str(DATA / "roads.geojson"),
                "--id-property", "osm_id", cwd=files)
    for enc in ["", "_geoarrow"]:
        got = snap("--keep", "none", "--points", f"points{enc}.parquet", "--lines", f"roads{enc}.parquet",
                   "--id-column", "osm_id", cwd=files)
        assert got == want, enc
    # The properties come along, as from GeoJSON.
    kept = pd.read_csv(io.StringIO(snap("--points", "points.parquet", "--lines", "roads.parquet", "--id-column",
                                        "osm_id", cwd=files)))
    ref = gpd.read_file(DATA / "points.geojson")
    assert list(kept.columns[:6]) == ["osm_id", "input_kind", "value", "name", "addr_street", "addr_housenumber"]
    assert (kept["osm_id"].to_numpy() == ref["osm_id"].to_numpy()).all()


def test_a_projected_crs_is_planar_and_carried_to_the_output(files):
    out = snap("--keep", "none", "--points", "points_tm35.parquet", "--lines", "roads_tm35.parquet", "--id-column",
               "osm_id", cwd=files)
    assert out.startswith("point_id,line_id,part,segment,distance,x,y,")
    snap("--points", "points_tm35.parquet", "--lines", "roads_tm35.parquet", "--id-column", "osm_id",
         "-o", "snapped_tm35.parquet", cwd=files)
    g = gpd.read_parquet(files / "snapped_tm35.parquet")
    assert g.crs.to_epsg() == 3067
    csv = pd.read_csv(io.StringIO(out))
    assert (g["distance"].to_numpy() == csv["distance"].to_numpy()).all()
    assert (g.geometry.x.to_numpy() == csv["x"].to_numpy()).all()
    assert (g.geometry.y.to_numpy() == csv["y"].to_numpy()).all()


def test_geoparquet_output_reads_back_in_geopandas(files):
    args = ["--points", "points.parquet", "--lines", "roads.parquet", "--id-column", "osm_id", "--k", "2",
            "--max-distance", "30"]
    csv = pd.read_csv(io.StringIO(snap(*args, cwd=files)), dtype={"osm_id": str, "point_id": str, "line_id": str})
    snap(*args, "-o", "snapped.parquet", cwd=files)
    g = gpd.read_parquet(files / "snapped.parquet")
    assert g.crs.equals("OGC:CRS84") or g.crs.to_epsg() == 4326
    assert list(g.columns) == list(csv.columns) + ["geometry"]
    assert len(g) == len(csv) and g["line_id"].isna().sum() > 0
    for c in ["distance_m", "lon", "lat", "t", "along_m", "fraction"]:
        np.testing.assert_array_equal(g[c].to_numpy(), csv[c].to_numpy())
    assert (g["line_id"].fillna("").to_numpy() == csv["line_id"].fillna("").to_numpy()).all()
    matched = g["line_id"].notna()
    assert (g.geometry[matched].x.to_numpy() == g["lon"][matched].to_numpy()).all()
    assert g.geometry[~matched].isna().all()
