"""The vectorised kernels: shapes, dtypes, layouts, threads, agreement with
shapely and with the Rust command line, and errors."""

import csv
import io
import os
import pathlib
import subprocess

import numpy as np
import pytest

import segdist

ROOT = pathlib.Path(__file__).resolve().parents[3]


def bits(x):
    return np.asarray(x).view(np.uint64 if np.asarray(x).dtype == np.float64 else np.uint32)


def random_case(n=1000, dim=2, seed=0):
    r = np.random.default_rng(seed)
    return r.uniform(-50, 50, (n, dim)), r.uniform(-50, 50, (n, dim)), r.uniform(-60, 60, (n, dim))


# ---------------------------------------------------------------- shapes


def test_one_segment_many_points_shapes():
    p = np.random.default_rng(1).normal(size=(4, 5, 2))
    d = segdist.distance([0, 0], [1, 0], p)
    assert d.shape == (4, 5)
    r = segdist.closest_point([0, 0], [1, 0], p)
    assert r.point.shape == (4, 5, 2) and r.t.shape == (4, 5) and r.region.dtype == np.uint8
    assert np.array_equal(d, r.distance)


def test_one_point_gives_numbers():
    d = segdist.distance([0, 0], [4, 0], [2, 3])
    assert isinstance(d, np.float64) and d == 3.0
    r = segdist.closest_point([0, 0], [4, 0], [5, 0])
    assert r.point.tolist() == [4.0, 0.0] and r.t == 1.0 and r.region == segdist.END


def test_pairs_and_broadcasting_agree_with_one_by_one():
    a, b, p = random_case(300)
    pairs = segdist.closest_point(a, b, p)
    for i in range(0, 300, 37):
        one = segdist.closest_point(a[i], b[i], p[i : i + 1])
        assert bits(one.distance[0]) == bits(pairs.distance[i])
        assert np.array_equal(bits(one.point[0]), bits(pairs.point[i]))
        assert bits(one.t[0]) == bits(pairs.t[i])
    # One point against many segments.
    d = segdist.distance(a, b, p[0])
    assert np.array_equal(bits(d), bits(segdist.distance(a, b, np.broadcast_to(p[0], a.shape))))
    # An (M, 1, 2) grid of segments against (N, 2) points.
    grid = segdist.distance(a[:7, None, :], b[:7, None, :], p[:11])
    assert grid.shape == (7, 11)
    assert grid[3, 5] == segdist.distance(a[3], b[3], p[5])


def test_columns_rows_fortran_and_strided_agree():
    a, b, p = random_case(5000, seed=2)
    rows = segdist.closest_point(a[0], b[0], p)
    cols = segdist.closest_point(a[0], b[0], (p[:, 0].copy(), p[:, 1].copy()))
    fort = segdist.closest_point(a[0], b[0], np.asfortranarray(p))
    strided = segdist.closest_point(a[0], b[0], np.repeat(p, 2, axis=0)[::2])
    for r in (cols, fort, strided):
        for k in ("point", "t", "distance", "region"):
            assert np.array_equal(getattr(rows, k), getattr(r, k)), k


def test_float32_in_float32_out_and_promotion():
    a, b, p = random_case(100, seed=3)
    p32 = p.astype(np.float32)
    d = segdist.distance([0, 0], [1, 0], p32)
    assert d.dtype == np.float32
    # A vertex that float32 cannot hold exactly promotes the query to float64.
    assert segdist.distance([0, 0], [0.1, 0], p32).dtype == np.float64
    assert segdist.distance(a.astype(np.float32), b.astype(np.float32), p32).dtype == np.float32
    # Integers are read as float64.
    assert segdist.distance([0, 0], [4, 0], np.array([[2, 3]])).dtype == np.float64


def test_threads_do_not_change_results():
    a, b, p = random_case(200_000, seed=4)
    one = segdist.closest_point(a[0], b[0], p, threads=1)
    for threads in (None, 2, 3):
        r = segdist.closest_point(a[0], b[0], p, threads=threads)
        assert all(np.array_equal(bits(getattr(one, k)), bits(getattr(r, k))) for k in ("point", "t", "distance"))
    assert np.array_equal(segdist.signed_distance(a, b, p, threads=1), segdist.signed_distance(a, b, p))


def test_fast_tier_close_to_accurate_on_ordinary_data():
    a, b, p = random_case(10_000, seed=5)
    acc = segdist.distance(a, b, p)
    fast = segdist.distance(a, b, p, fast=True)
    assert np.allclose(acc, fast, rtol=1e-12, atol=1e-12)


def test_lines_and_signed_distance():
    r = segdist.line_closest_point([0, 0], [2, 0], [[5, 1], [-3, -1]])
    assert r.t.tolist() == [2.5, -1.5] and r.distance.tolist() == [1.0, 1.0]
    assert segdist.line_distance([1, 1], [1, 1], [4, 5]) == 5.0  # a point
    s = segdist.signed_distance(np.array([[0, 0], [0, 0]]), np.array([[1, 0], [0, 1]]), [[2, 3], [2, 3]])
    assert s.tolist() == [3.0, -2.0]
    with pytest.raises(ValueError, match="2-D"):
        segdist.signed_distance([0, 0, 0], [1, 0, 0], [1, 1, 1])


def test_edge_cases_named():
    # Zero-length segment: the distance to the point, t = 0, region START.
    r = segdist.closest_point([1.5, -2], [1.5, -2], [[4.5, 2]])
    assert (r.distance[0], r.t[0], r.region[0]) == (5.0, 0.0, segdist.START)
    # A NaN coordinate: NaN in every number of that query only, region UNDEFINED.
    r = segdist.closest_point([0, 0], [1, 0], [[np.nan, 1], [0.5, 1]])
    assert np.isnan(r.distance[0]) and np.isnan(r.t[0]) and np.isnan(r.point[0]).all()
    assert r.region.tolist() == [segdist.UNDEFINED, segdist.INTERIOR] and r.distance[1] == 1.0
    # Empty input.
    assert segdist.distance([0, 0], [1, 0], np.zeros((0, 2))).shape == (0,)
    # Huge coordinates: no overflow to inf where the answer is finite.
    assert segdist.distance([-1e308, 0], [1e308, 0], [0, 1e308]) == 1e308


# ------------------------------------------------- peers and the CLI


def test_agrees_with_shapely():
    shapely = pytest.importorskip("shapely")
    a, b, p = random_case(2000, seed=6)
    lines = shapely.linestrings(np.stack([a, b], axis=1))
    points = shapely.points(p)
    theirs = shapely.distance(lines, points)
    ours = segdist.distance(a, b, p)
    # GEOS's textbook formula is good to a few ulps on data this far from
    # degenerate.
    assert np.allclose(ours, theirs, rtol=1e-13, atol=1e-13)


def segdist_cli():
    exe = os.environ.get("SEGDIST_BIN") or str(ROOT / "target" / "release" / "segdist")
    if not pathlib.Path(exe).exists():
        subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "segdist", "-q"], cwd=ROOT, check=True)
    return exe


@pytest.mark.parametrize("flags", [[], ["--line"], ["--f32"], ["--fast"]])
def test_bit_identical_to_the_cli(tmp_path, flags):
    from exact import cases

    a, b, p = (np.concatenate(x) for x in zip(*(cases(f, 40, 2) for f in ("uniform", "utm", "near_interior", "huge"))))
    if "--f32" in flags:
        from exact import to_f32

        a, b, p = (to_f32(x).astype(np.float64) for x in (a, b, p))
    src = tmp_path / "pairs.csv"
    with open(src, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ax", "ay", "bx", "by", "px", "py"])
        for i in range(len(p)):
            w.writerow([repr(float(v)) for v in (*a[i], *b[i], *p[i])])
    out = subprocess.run([segdist_cli(), "pairs", "-q", *flags, str(src)], check=True, capture_output=True, text=True)
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == len(p)
    dt = np.float32 if "--f32" in flags else np.float64
    a, b, p = (x.astype(dt) for x in (a, b, p))
    f = segdist.line_closest_point if "--line" in flags else segdist.closest_point
    r = f(a, b, p, fast="--fast" in flags)
    d2 = None if "--line" in flags else segdist.distance_squared(a, b, p, fast="--fast" in flags)
    col = lambda k: np.array([float(row[k]) for row in rows]).astype(dt)  # noqa: E731
    assert np.array_equal(bits(col("d")), bits(r.distance))
    assert np.array_equal(bits(col("t")), bits(r.t))
    assert np.array_equal(bits(col("qx")), bits(r.point[:, 0]))
    assert np.array_equal(bits(col("qy")), bits(r.point[:, 1]))
    if d2 is not None:
        assert np.array_equal(bits(col("d2")), bits(d2))
        names = ["start", "interior", "end", "undefined"]
        assert [row["region"] for row in rows] == [names[k] for k in r.region]


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "args, error, message",
    [
        (([0, 0], [1, 0], [[1, 2, 3, 4]]), ValueError, r"p must have shape \(2,\), \(3,\)"),
        (([0, 0], [1, 0], 5.0), ValueError, "p must have shape"),
        (([0, 0, 0], [1, 0, 0], [[1, 2]]), ValueError, "a has 3 coordinates per vertex, p has 2"),
        (([0, 0], [1, 0], [["a", "b"]]), TypeError, "p must hold real numbers"),
        (([0, 0], [1, 0], np.array([[1j, 2]])), TypeError, "p must hold real numbers"),
        ((np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((4, 2))), ValueError, "do not broadcast"),
        (([0, 0], [1, 0], (np.zeros(3), np.zeros(4))), ValueError, "columns of p differ in length"),
    ],
)
def test_bad_input_raises_clearly(args, error, message):
    with pytest.raises(error, match=message):
        segdist.distance(*args)


def test_native_layer_refuses_wrong_arrays_without_crashing():
    from segdist import _segdist

    with pytest.raises(TypeError):
        _segdist.project(np.zeros(2), np.zeros(2), np.zeros((3, 2), np.int64), "d")
    with pytest.raises(TypeError):
        _segdist.project(np.zeros(2, np.float32), np.zeros(2), np.zeros((3, 2)), "d")
    with pytest.raises(TypeError, match="contiguous"):
        _segdist.project(np.zeros(2), np.zeros(2), np.zeros((3, 4))[:, ::2], "d")
    with pytest.raises(ValueError):
        _segdist.project(np.zeros(3), np.zeros(3), np.zeros((3, 2)), "d")
    with pytest.raises(ValueError):
        _segdist.project(np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((3, 2)), "d")


def test_docstring_examples():
    import doctest

    # The package and the modules its API lives in.
    for module in (segdist, segdist._geo, segdist._join, segdist._matching):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 4 and result.failed == 0, module.__name__
    assert doctest.testmod(segdist).attempted > 40


def test_readme_python_examples_run():
    # The README's ```python blocks are part of the documentation: they
    # must run as written.
    import re

    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
