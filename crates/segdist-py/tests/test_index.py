"""SegmentIndex and Polyline: against brute force (the accurate kernel over
every segment), against shapely, and their errors."""

import numpy as np
import pytest

import segdist


def bits(x):
    return np.ascontiguousarray(x).view(np.uint64)


def network(n_lines=300, seed=0, dim=2, origin=0.0):
    """Random polylines (a few vertices each), some crossing, and the flat
    list of their segments in (feature, segment) order."""
    r = np.random.default_rng(seed)
    lines = []
    for _ in range(n_lines):
        start = origin + r.uniform(0, 1000, dim)
        steps = r.normal(0, 20, (int(r.integers(1, 6)), dim))
        lines.append(np.vstack([start, start + np.cumsum(steps, axis=0)]))
    a = np.concatenate([line[:-1] for line in lines])
    b = np.concatenate([line[1:] for line in lines])
    feature = np.concatenate([np.full(len(line) - 1, i) for i, line in enumerate(lines)])
    segment = np.concatenate([np.arange(len(line) - 1) for line in lines])
    return lines, a, b, feature, segment


def brute_distances(a, b, p):
    """(N, M): the accurate kernel from every point to every segment."""
    return segdist.distance(a[None, :, :], b[None, :, :], p[:, None, :])


@pytest.mark.parametrize("dim, origin", [(2, 0.0), (2, 6.5e6), (3, 0.0)])
def test_nearest_equals_brute_force(dim, origin):
    lines, a, b, feature, segment = network(dim=dim, origin=origin)
    index = segdist.SegmentIndex.from_polylines(lines)
    p = origin + np.random.default_rng(1).uniform(-100, 1100, (2000, dim))
    # Points on vertices and exactly between parallel segments make ties.
    p[:50] = a[:50]
    hit = index.nearest(p)
    dist = brute_distances(a, b, p)
    best = np.argmin(dist, axis=1)  # the first minimum: the lowest id wins ties
    assert np.array_equal(hit.feature, feature[best])
    assert np.array_equal(hit.segment, segment[best])
    assert np.array_equal(bits(hit.distance), bits(dist[np.arange(len(p)), best]))
    proj = segdist.closest_point(a[best], b[best], p)
    assert np.array_equal(bits(hit.point), bits(proj.point))
    assert np.array_equal(bits(hit.t), bits(proj.t))


def test_along_a_one_segment_feature_is_t_times_its_length():
    # Features of one segment take a shortcut (no lookup of the vertices'
    # distances along); its answers must be those of the general rule:
    # t * length, no more than the length, exactly 0 and the length at the
    # ends.
    r = np.random.default_rng(7)
    a = r.uniform(0, 10, (300, 2))
    b = a + r.uniform(-1, 1, (300, 2))
    index = segdist.SegmentIndex.from_segments(a, b)
    p = a + (b - a) * r.uniform(-0.3, 1.3, (300, 1)) + r.normal(0, 1e-3, (300, 2))
    hit = index.nearest(p)
    # The lengths (summed without the running sum for such features) are
    # the kernel's distance from one end to the other, as for any line.
    assert np.array_equal(bits(index.lengths()), bits(segdist.distance(a, a, b)))
    assert np.array_equal(bits(index.lengths()), bits([segdist.Polyline([x, y]).length for x, y in zip(a, b)]))
    length = index.lengths()[hit.feature]
    want = np.where(hit.t == 0, 0.0, np.where(hit.t == 1, length, np.minimum(hit.t * length, length)))
    assert (hit.t == 0).any() and (hit.t == 1).any() and ((hit.t > 0) & (hit.t < 1)).any()
    assert np.array_equal(bits(hit.along), bits(want))
    assert np.array_equal(bits(hit.fraction), bits(np.where(hit.along == 0, 0.0, np.minimum(hit.along / length, 1.0))))


def test_nearest_ties_go_to_the_lowest_id():
    # Two identical segments, and one reversed: every point ties.
    index = segdist.SegmentIndex.from_segments([[0, 0], [0, 0], [4, 0]], [[4, 0], [4, 0], [0, 0]])
    assert index.nearest([[1, 1], [2, -3], [9, 9]]).feature.tolist() == [0, 0, 0]


def test_max_distance_and_missing_answers():
    lines, a, b, feature, _ = network(seed=2)
    index = segdist.SegmentIndex.from_polylines(lines)
    p = np.random.default_rng(3).uniform(-500, 1500, (3000, 2))
    hit = index.nearest(p, max_distance=25.0)
    best = brute_distances(a, b, p).min(axis=1)
    far = best > 25.0
    assert far.any() and (~far).any()
    assert (hit.feature[far] == -1).all() and np.isnan(hit.distance[far]).all()
    assert np.isnan(hit.point[far]).all() and np.isnan(hit.along[far]).all()
    assert np.array_equal(hit.distance[~far], best[~far])
    # NaN points and an empty index answer nothing.
    assert index.nearest([[np.nan, 0.0]]).feature.tolist() == [-1]
    empty = segdist.SegmentIndex.from_polylines([])
    assert len(empty) == 0 and empty.nearest([[0.0, 0.0]]).feature.tolist() == [-1]


def test_nearest_k_and_within_equal_brute_force():
    lines, a, b, feature, segment = network(n_lines=150, seed=4)
    index = segdist.SegmentIndex.from_polylines(lines)
    p = np.random.default_rng(5).uniform(0, 1000, (300, 2))
    dist = brute_distances(a, b, p)
    order = np.argsort(dist, axis=1, kind="stable")  # ties: lowest id first
    k = index.nearest_k(p, 5)
    assert np.array_equal(k.query, np.repeat(np.arange(len(p)), 5))
    want = order[:, :5].reshape(-1)
    assert np.array_equal(k.feature, feature[want]) and np.array_equal(k.segment, segment[want])
    assert np.array_equal(bits(k.distance), bits(dist[k.query, want]))
    w = index.within(p, 40.0)
    ids = [order[i][dist[i][order[i]] <= 40.0] for i in range(len(p))]
    assert np.array_equal(w.query, np.concatenate([np.full(len(x), i) for i, x in enumerate(ids)]))
    assert np.array_equal(w.feature, feature[np.concatenate(ids)])
    kk = index.nearest_k(p, 5, max_distance=30.0)
    assert (kk.distance <= 30.0).all() and len(kk.query) < 5 * len(p)


def test_threads_do_not_change_answers():
    lines, *_ = network(seed=6)
    index = segdist.SegmentIndex.from_polylines(lines)
    p = np.random.default_rng(7).uniform(0, 1000, (100_000, 2))
    one = index.nearest(p, threads=1)
    for threads in (None, 2, 3):
        other = index.nearest(p, threads=threads)
        assert all(np.array_equal(bits(x), bits(y)) for x, y in zip(one[3:], other[3:]))
    assert np.array_equal(index.within(p[:5000], 10.0, threads=1).feature, index.within(p[:5000], 10.0).feature)


def test_layouts_agree():
    lines, *_ = network(n_lines=50, seed=8)
    coords = np.concatenate(lines)
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in lines])])
    vertex_line = np.repeat(np.arange(len(lines)), [len(x) for x in lines])
    p = np.random.default_rng(9).uniform(0, 1000, (500, 2))
    ref = segdist.SegmentIndex.from_polylines(lines).nearest(p)
    for index in (
        segdist.SegmentIndex.from_polylines(coords, offsets),
        segdist.SegmentIndex.from_polylines(coords, index=vertex_line),
        segdist.SegmentIndex.from_multi_polylines(coords, offsets, np.arange(len(lines) + 1)),
    ):
        got = index.nearest(p)
        assert index.n_features == len(lines)
        assert np.array_equal(got.feature, ref.feature) and np.array_equal(bits(got.distance), bits(ref.distance))
    # float32 coordinates are widened exactly.
    lines32 = [x.astype(np.float32) for x in lines]
    wide = segdist.SegmentIndex.from_polylines([x.astype(np.float64) for x in lines32]).nearest(p)
    assert np.array_equal(bits(segdist.SegmentIndex.from_polylines(lines32).nearest(p).distance), bits(wide.distance))


def test_multi_part_features_and_along():
    # Feature 0: two parts, 2 + 1 long; feature 1: no parts; feature 2: one part.
    coords = [[0, 0], [2, 0], [10, 0], [10, 1], [0, 9], [3, 9]]
    index = segdist.SegmentIndex.from_multi_polylines(coords, [0, 2, 4, 6], [0, 2, 2, 3])
    assert index.n_features == 3 and len(index) == 3
    assert index.lengths().tolist() == [3.0, 0.0, 3.0]
    hit = index.locate([[11, 0.5], [1, 1], [2, 10]])
    assert hit.feature.tolist() == [0, 0, 2] and hit.part.tolist() == [1, 0, 0]
    assert hit.along.tolist() == [2.5, 1.0, 2.0]
    assert hit.fraction.tolist() == [2.5 / 3, 1 / 3, 2 / 3]
    pts = index.interpolate([0, 0, 0, 2, 1], [0.5, 2.0, 2.5, 99.0, 1.0])
    assert pts[:4].tolist() == [[0.5, 0.0], [2.0, 0.0], [10.0, 0.5], [3.0, 9.0]]
    assert np.isnan(pts[4]).all()  # a feature without parts has no points


def test_from_shapely_and_agreement_with_strtree():
    shapely = pytest.importorskip("shapely")
    lines, a, b, *_ = network(n_lines=400, seed=10)
    geoms = [shapely.LineString(x) for x in lines]
    geoms[3] = shapely.from_wkt("LINESTRING EMPTY")
    geoms[4] = None
    geoms[5] = shapely.multilinestrings([lines[5], lines[5] + 300])
    index = segdist.SegmentIndex.from_shapely(geoms)
    assert index.n_features == 400
    p = np.random.default_rng(11).uniform(0, 1000, (2000, 2))
    hit = index.nearest(p)
    tree = shapely.STRtree(geoms)
    _, theirs = tree.query_nearest(shapely.points(p), return_distance=True, all_matches=False)
    assert np.allclose(hit.distance, theirs, rtol=1e-12, atol=1e-9)
    assert not np.isin(hit.feature, [3, 4]).any()
    # line_locate_point / line_interpolate_point on ordinary data.
    line = shapely.LineString(lines[7])
    located = index.locate(p[:1]).along  # on whatever feature is nearest
    f = int(index.nearest(p[:1]).feature[0])
    ref = shapely.line_locate_point(geoms[f], shapely.points(p[:1]))
    assert np.allclose(located, ref, rtol=1e-12, atol=1e-9)
    pts = segdist.Polyline(line).interpolate([0.0, 5.0, 30.0])
    want = shapely.get_coordinates(shapely.line_interpolate_point(line, [0.0, 5.0, 30.0]))
    assert np.allclose(pts, want, rtol=1e-12, atol=1e-9)
    with pytest.raises(TypeError, match="geometry 1 is a Polygon"):
        segdist.SegmentIndex.from_shapely([line, shapely.box(0, 0, 1, 1)])


def test_shapely_lines_layout_with_and_without_empty_lines():
    shapely = pytest.importorskip("shapely")
    from segdist._common import shapely_lines

    lines = [shapely.LineString([(0, 0), (1, 0), (2, 1)]), shapely.LineString([(5, 5), (6, 6)])]
    coords, parts, features = shapely_lines(lines)  # read in one call
    assert coords.tolist() == [[0, 0], [1, 0], [2, 1], [5, 5], [6, 6]]
    assert (parts.tolist(), features.tolist()) == ([0, 3, 5], [0, 1, 2])
    # An empty line is a feature with no parts (read part by part).
    coords, parts, features = shapely_lines([lines[0], shapely.LineString(), lines[1]])
    assert coords.tolist() == [[0, 0], [1, 0], [2, 1], [5, 5], [6, 6]]
    assert (parts.tolist(), features.tolist()) == ([0, 3, 5], [0, 1, 1, 2])


def test_polyline_locate_against_a_scan():
    shapely = pytest.importorskip("shapely")
    r = np.random.default_rng(12)
    verts = np.cumsum(r.normal(0, 1, (5000, 2)), axis=0)
    line = segdist.Polyline(verts)
    p = r.uniform(verts.min(0), verts.max(0), (300, 2))
    at = line.locate(p)
    a, b = verts[:-1], verts[1:]
    dist = brute_distances(a, b, p)
    best = np.argmin(dist, axis=1)
    assert np.array_equal(at.segment, best)
    assert np.array_equal(bits(at.distance), bits(dist[np.arange(len(p)), best]))
    ref = shapely.line_locate_point(shapely.LineString(verts), shapely.points(p))
    assert np.allclose(at.along, ref, rtol=1e-9, atol=1e-6)
    assert np.allclose(at.fraction, at.along / line.length)
    back = line.interpolate(at.along)
    assert np.allclose(back, at.point, rtol=0, atol=1e-9)
    assert line.interpolate([0.5], normalized=True).shape == (1, 2)


@pytest.mark.parametrize(
    "build, error, message",
    [
        (lambda: segdist.SegmentIndex.from_polylines([[[0, 0], [1, 1]], [[0, 0], [1, 1], [np.nan, 2]]]), ValueError,
         "feature 1, part 0, vertex 2: a coordinate is not finite"),
        (lambda: segdist.SegmentIndex.from_polylines([[[0, 0], [1, 1]], [[5, 5]]]), ValueError,
         "feature 1, part 0: a part needs at least 2 vertices, it has 1"),
        (lambda: segdist.SegmentIndex.from_polylines(np.zeros((4, 2)), [0, 2, 5]), ValueError, "offsets: must end at 4"),
        (lambda: segdist.SegmentIndex.from_polylines(np.zeros((4, 2)), [1, 4]), ValueError, "must start at 0"),
        (lambda: segdist.SegmentIndex.from_polylines(np.zeros((4, 2)), [0, 3, 2, 4]), ValueError, "must not decrease"),
        (lambda: segdist.SegmentIndex.from_polylines(np.zeros((4, 2)), index=[0, 1, 0, 1]), ValueError,
         "non-decreasing"),
        (lambda: segdist.SegmentIndex.from_polylines(np.zeros((4, 2)), [0.0, 4.0]), TypeError, "integers"),
        (lambda: segdist.SegmentIndex.from_segments(np.zeros((3, 2)), np.zeros((4, 2))), ValueError, "shape"),
        (lambda: segdist.SegmentIndex.from_polylines([[[0, 0, 0, 0], [1, 1, 1, 1]]]), ValueError, "shape"),
        (lambda: segdist.Polyline([[0, 0]]), ValueError, "at least 2 vertices"),
        (lambda: segdist.Polyline([[0, 0], [np.inf, 0]]), ValueError, "not finite"),
    ],
)
def test_build_errors(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_query_errors():
    index = segdist.SegmentIndex.from_segments([[0, 0]], [[1, 0]])
    with pytest.raises(ValueError, match="points have 3 coordinates, the index has 2"):
        index.nearest([[0, 0, 0]])
    with pytest.raises(ValueError, match="k must be >= 0"):
        index.nearest_k([[0, 0]], -1)
    with pytest.raises(ValueError, match="radius must be a number >= 0"):
        index.within([[0, 0]], -1.0)
    with pytest.raises(ValueError, match="max_distance must be a number >= 0"):
        index.nearest([[0, 0]], max_distance=float("nan"))
    with pytest.raises(IndexError, match="feature 3 out of range"):
        index.interpolate([0, 3], 0.5)
    with pytest.raises(TypeError, match="feature must be integers"):
        index.interpolate(0.5, 0.5)
    assert repr(index) == "SegmentIndex(1 features, 1 segments, 2-D)"
    assert index.memory_bytes > 0
