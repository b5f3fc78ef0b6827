"""Exact, fast distance from points to segments, lines and polylines.

segdist answers one question: where on this segment (line, polyline, road
network) is the point closest to that point, and how far is it? Every
result is *faithfully rounded* (within one unit in the last place of the
exact answer) for every finite input, including the near-degenerate cases
where the textbook formula and GEOS/shapely lose every digit, and it comes
from Rust code that uses every core and the widest SIMD the CPU has.

Vectorised kernels (one segment against many points, or many pairs)::

    >>> import numpy as np, segdist
    >>> p = np.array([[0.0, 1.0], [2.0, -1.0], [5.0, 0.5]])
    >>> segdist.distance([0, 0], [4, 0], p)
    array([1.        , 1.        , 1.11803399])
    >>> segdist.closest_point([0, 0], [4, 0], p).t
    array([0. , 0.5, 1. ])

Nearest segment among many, and linear referencing::

    >>> index = segdist.SegmentIndex.from_polylines([[[0, 0], [10, 0]], [[0, 5], [10, 5]]])
    >>> hit = index.nearest([[3.0, 1.0], [7.0, 4.0]])
    >>> hit.feature, hit.distance, hit.along
    (array([0, 1]), array([1., 1.]), array([3., 7.]))

Inputs are numpy arrays (or anything ``numpy.asarray`` takes) of shape
``(..., 2)`` or ``(..., 3)``; ``float64`` and ``float32`` arrays that are
C-contiguous are read in place, without a copy. The GIL is released while
Rust works. Results are identical, bit for bit, to the Rust library's and to
the ``segdist`` command line's.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

import numpy as np

from . import _segdist
from ._common import max_distance as _max_distance
from ._common import offsets as _offsets
from ._common import shapely_lines as _shapely_lines
from ._segdist import __version__

__all__ = [
    "START",
    "INTERIOR",
    "END",
    "UNDEFINED",
    "Projection",
    "Nearest",
    "Hits",
    "Location",
    "distance",
    "distance_squared",
    "closest_point",
    "line_distance",
    "line_closest_point",
    "signed_distance",
    "SegmentIndex",
    "Polyline",
    "RoadNetwork",
    "Matched",
    "match",
    "default_radius",
    "geodesic",
    "GeoProjection",
    "GeoIndex",
    "GeoNearest",
    "sjoin_nearest",
    "isa",
    "__version__",
]

#: Region code: the closest point is the segment's start ``a`` (``t == 0``),
#: also every query on a zero-length segment.
START = 0
#: Region code: the closest point lies strictly between ``a`` and ``b``.
INTERIOR = 1
#: Region code: the closest point is the segment's end ``b`` (``t == 1``).
END = 2
#: Region code: some coordinate was NaN or infinite; every number is NaN.
UNDEFINED = 3


class Projection(NamedTuple):
    """Where points project onto segments (or lines).

    Each field has the shape of the broadcast queries: ``point`` one more
    axis of length 2 or 3, the others none.
    """

    #: The closest points.
    point: np.ndarray
    #: Where they lie on the segments: ``a + t (b - a)``, in ``[0, 1]`` for
    #: segments, any value for lines.
    t: np.ndarray
    #: The distances.
    distance: np.ndarray
    #: :data:`START`, :data:`INTERIOR`, :data:`END` or :data:`UNDEFINED`
    #: (``uint8``).
    region: np.ndarray


class Nearest(NamedTuple):
    """The nearest segment to each query point (one row per point).

    Where a point has no answer (farther than ``max_distance``, a NaN
    coordinate, an empty index), its ids are ``-1`` and its numbers NaN.
    """

    #: The feature (the order in which features were given), ``int64``.
    feature: np.ndarray
    #: The part within a multi-part feature (0 otherwise).
    part: np.ndarray
    #: The segment within the part: from its vertex ``segment`` to ``segment + 1``.
    segment: np.ndarray
    #: Where the closest point lies on that segment, in ``[0, 1]``.
    t: np.ndarray
    #: The closest points.
    point: np.ndarray
    #: The distances, faithfully rounded.
    distance: np.ndarray
    #: The distance along the feature to the closest point (parts follow
    #: one another; the gaps between them are not counted, as in GEOS).
    along: np.ndarray
    #: ``along`` as a fraction of the feature's length.
    fraction: np.ndarray


class Hits(NamedTuple):
    """Several answers per query point (``nearest_k``, ``within``), flat:
    ``query`` says which point each row answers, rows of one query are
    nearest first. Other fields as in :class:`Nearest`."""

    query: np.ndarray
    feature: np.ndarray
    part: np.ndarray
    segment: np.ndarray
    t: np.ndarray
    point: np.ndarray
    distance: np.ndarray
    along: np.ndarray
    fraction: np.ndarray


class Location(NamedTuple):
    """Where points project onto a :class:`Polyline`."""

    #: The distance along the line from its first vertex (shapely's
    #: ``line_locate_point``).
    along: np.ndarray
    #: ``along`` as a fraction of the length (``normalized=True``).
    fraction: np.ndarray
    #: The distance from the point to the line.
    distance: np.ndarray
    #: The closest points.
    point: np.ndarray
    #: The segment: from vertex ``segment`` to ``segment + 1``.
    segment: np.ndarray
    #: Where the closest point lies on that segment.
    t: np.ndarray


# --------------------------------------------------------------- inputs


def _as_coords(x, what: str) -> np.ndarray:
    """``x`` as an array of numbers whose last axis has length 2 or 3."""
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    if arr.dtype.kind not in "fiu" or arr.dtype.itemsize > 8:
        raise TypeError(f"{what} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.shape[-1] not in (2, 3):
        raise ValueError(f"{what} must have shape (2,), (3,), (N, 2) or (N, 3), got {arr.shape}")
    return arr


def _is_columns(p) -> bool:
    return isinstance(p, (tuple, list)) and len(p) in (2, 3) and all(
        isinstance(c, np.ndarray) and c.ndim == 1 for c in p
    )


def _fits_f32(arr: np.ndarray) -> bool:
    if arr.dtype == np.float32:
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = arr.astype(np.float32)
    return bool(np.array_equal(narrow.astype(arr.dtype), arr, equal_nan=arr.dtype.kind == "f"))


def _prepare(a, b, p):
    """Arrays for the native kernels: ``(a, b, p, shape)``, where ``shape``
    is that of the broadcast queries.

    The kernels run in ``float32`` when the points are ``float32`` and the
    segments' vertices are float32 or exactly representable in it; in
    ``float64`` otherwise.
    """
    a, b = _as_coords(a, "a"), _as_coords(b, "b")
    if _is_columns(p):
        cols = list(p)
        n = len(cols[0])
        if any(len(c) != n for c in cols):
            raise ValueError(f"the columns of p differ in length: {[len(c) for c in cols]}")
        for c in cols:
            if c.dtype.kind not in "fiu" or c.dtype.itemsize > 8:
                raise TypeError(f"p must hold real numbers, got dtype {c.dtype}")
        f32 = all(c.dtype == np.float32 for c in cols)
        dim, shape = len(cols), (n,)
    else:
        pa = _as_coords(p, "p")
        f32 = pa.dtype == np.float32
        dim, shape = pa.shape[-1], pa.shape[:-1]
    for name, v in (("a", a), ("b", b)):
        if v.shape[-1] != dim:
            raise ValueError(f"{name} has {v.shape[-1]} coordinates per vertex, p has {dim}")
    dt = np.float32 if f32 and _fits_f32(a) and _fits_f32(b) else np.float64
    if a.ndim == 1 and b.ndim == 1:
        if _is_columns(p):
            p = tuple(np.ascontiguousarray(c, dtype=dt) for c in cols)
        else:
            p = np.ascontiguousarray(pa.reshape(-1, dim), dtype=dt)
        return np.ascontiguousarray(a, dt), np.ascontiguousarray(b, dt), p, shape
    # Many segments: every array broadcast to one row per query.
    if _is_columns(p):
        pa = np.stack(cols, axis=-1)
    try:
        shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1], pa.shape[:-1])
    except ValueError:
        raise ValueError(
            f"a {a.shape}, b {b.shape} and p {pa.shape} do not broadcast to one shape (..., {dim})"
        ) from None
    rows = lambda x: np.ascontiguousarray(np.broadcast_to(x, shape + (dim,)).reshape(-1, dim), dtype=dt)  # noqa: E731
    return rows(a), rows(b), rows(pa), shape


def _shaped(x: Optional[np.ndarray], shape):
    if x is None:
        return None
    out = x.reshape(shape + x.shape[1:])
    return out[()] if out.ndim == 0 else out


def _project(a, b, p, outputs: str, line: bool, fast: bool, threads: Optional[int]):
    a, b, p, shape = _prepare(a, b, p)
    res = _segdist.project(a, b, p, outputs, line=line, fast=fast, threads=threads)
    return [_shaped(x, shape) for x in res]


# -------------------------------------------------------------- kernels


def distance(a, b, p, *, fast: bool = False, threads: Optional[int] = None):
    """Distances from points ``p`` to segments ``a → b``.

    ``a`` and ``b`` are one vertex each (shape ``(2,)`` or ``(3,)``: one
    segment against every point) or arrays that broadcast with ``p``
    (``(N, 2)``: segment ``i`` against point ``i``). ``p`` is ``(..., 2)``,
    ``(..., 3)``, or a tuple of coordinate columns ``(xs, ys)`` /
    ``(xs, ys, zs)`` of 1-D arrays. The result has ``p``'s shape less its
    last axis (a number for one point).

    Accurate by default: faithfully rounded for every finite input.
    ``fast=True`` uses the textbook formula (made total: never NaN for
    finite input), for data far from degenerate. ``threads``: ``None``
    for all cores, ``1`` for the calling thread only. A NaN or infinite
    coordinate gives NaN for that query and nothing else.

    >>> import segdist
    >>> segdist.distance([0, 0], [4, 0], [[2, 3], [7, 4]])
    array([3., 5.])
    >>> float(segdist.distance([0, 0, 0], [0, 0, 2], [1, 0, 1]))
    1.0
    """
    return _project(a, b, p, "d", False, fast, threads)[0]


def distance_squared(a, b, p, *, fast: bool = False, threads: Optional[int] = None):
    """Squared distances from points ``p`` to segments ``a → b``: never
    negative, faithfully rounded (no square root, so no rounding of one).
    Arguments as for :func:`distance`.

    >>> import segdist
    >>> segdist.distance_squared([0, 0], [4, 0], [[2, 3], [7, 4]])
    array([ 9., 25.])
    """
    return _project(a, b, p, "s", False, fast, threads)[1]


def closest_point(a, b, p, *, fast: bool = False, threads: Optional[int] = None) -> Projection:
    """The closest points of segments ``a → b`` to points ``p``, with ``t``,
    the distance and the region (:data:`START`, :data:`INTERIOR`,
    :data:`END`). Arguments as for :func:`distance`.

    >>> import segdist
    >>> r = segdist.closest_point([0, 0], [2, 0], [[1, 1], [3, 0]])
    >>> r.point
    array([[1., 0.],
           [2., 0.]])
    >>> r.t, r.region
    (array([0.5, 1. ]), array([1, 2], dtype=uint8))
    """
    d, _, t, q, r = _project(a, b, p, "dtpr", False, fast, threads)
    return Projection(q, t, d, r)


def line_distance(a, b, p, *, fast: bool = False, threads: Optional[int] = None):
    """Distances from points ``p`` to the infinite lines through ``a`` and
    ``b``. Arguments as for :func:`distance`; a line with ``a == b`` is
    the point ``a``.

    >>> import segdist
    >>> segdist.line_distance([0, 0], [1, 0], [[5, 2], [-3, -1]])
    array([2., 1.])
    """
    return _project(a, b, p, "d", True, fast, threads)[0]


def line_closest_point(a, b, p, *, fast: bool = False, threads: Optional[int] = None) -> Projection:
    """The closest points of the lines through ``a`` and ``b``, with the
    unclamped ``t``. Arguments as for :func:`distance`.

    >>> import segdist
    >>> r = segdist.line_closest_point([0, 0], [1, 0], [[5, 2]])
    >>> r.point, r.t
    (array([[5., 0.]]), array([5.]))
    """
    d, _, t, q, r = _project(a, b, p, "dtpr", True, fast, threads)
    return Projection(q, t, d, r)


def signed_distance(a, b, p, *, threads: Optional[int] = None):
    """Signed distances from 2-D points to the lines through ``a → b``:
    positive on the left, negative on the right; faithfully rounded, and
    the sign always exact (the orientation predicate, computed exactly).
    Arguments as for :func:`distance`.

    >>> import segdist
    >>> segdist.signed_distance([0, 0], [1, 0], [[3, 2], [3, -2], [9, 0]])
    array([ 2., -2.,  0.])
    """
    a, b, p, shape = _prepare(a, b, p)
    return _shaped(_segdist.signed_distance(a, b, p, threads=threads), shape)


def isa() -> str:
    """The instruction set the kernels chose on this CPU at run time:
    ``"avx512"``, ``"avx2"``, ``"sse2"``, ``"neon"`` or ``"scalar"``.

    >>> import segdist
    >>> segdist.isa() in ("avx512", "avx2", "sse2", "neon", "scalar")
    True
    """
    return _segdist.isa()


# ---------------------------------------------------------------- index


def _query_points(points, dim: int):
    arr = _as_coords(points, "points")
    if arr.shape[-1] != dim:
        raise ValueError(f"points have {arr.shape[-1]} coordinates, the index has {dim}")
    return np.ascontiguousarray(arr.reshape(-1, dim), dtype=np.float64), arr.shape[:-1]


class SegmentIndex:
    """Exact nearest-segment search over segments and (multi-)polylines.

    Every answer is the one a brute-force scan with the accurate kernel
    gives, bit for bit; ties go to the lowest feature, then part, then
    segment. Build it with :meth:`from_segments`, :meth:`from_polylines`,
    :meth:`from_multi_polylines` or :meth:`from_shapely`; coordinates are
    kept in ``float64``. A NaN or infinite coordinate raises
    ``ValueError`` naming the feature, part and vertex.

    >>> import numpy as np, segdist
    >>> index = segdist.SegmentIndex.from_segments([[0, 0], [0, 4]], [[10, 0], [10, 4]])
    >>> len(index), index.n_features
    (2, 2)
    >>> index.nearest([[2, 1], [2, 3.5]]).feature
    array([0, 1])
    """

    __slots__ = ("_native",)

    def __init__(self, native: _segdist.SegmentIndex):
        self._native = native

    # -- building

    @classmethod
    def from_multi_polylines(cls, coords, part_offsets, feature_offsets) -> "SegmentIndex":
        """Features of one or more parts, in GeoArrow's MultiLineString
        layout: ``coords`` ``(V, 2|3)``, ``part_offsets`` the first vertex of
        each part then ``V``, ``feature_offsets`` the first part of each
        feature then the number of parts. A feature may have no parts (it
        is never an answer); a part needs at least 2 vertices.

        >>> import segdist
        >>> coords = [[0, 0], [1, 0], [5, 0], [6, 0], [0, 9], [1, 9]]
        >>> index = segdist.SegmentIndex.from_multi_polylines(coords, [0, 2, 4, 6], [0, 2, 3])
        >>> index.nearest([[5.5, 1]]).feature, index.lengths()
        (array([0]), array([2., 1.]))
        """
        arr = _as_coords(coords, "coords")
        if arr.ndim != 2:
            raise ValueError(f"coords must have shape (V, 2) or (V, 3), got {arr.shape}")
        arr = np.ascontiguousarray(arr, dtype=np.float64)
        native = _segdist.SegmentIndex.build(
            arr, _offsets(part_offsets, "part_offsets"), _offsets(feature_offsets, "feature_offsets")
        )
        return cls(native)

    @classmethod
    def from_segments(cls, a, b) -> "SegmentIndex":
        """One feature per segment ``a[i] → b[i]`` (``(M, 2|3)`` each).

        >>> import segdist
        >>> index = segdist.SegmentIndex.from_segments([[0, 0]], [[4, 0]])
        >>> index.nearest([[1, 2]]).distance
        array([2.])
        """
        a, b = _as_coords(a, "a"), _as_coords(b, "b")
        if a.ndim != 2 or a.shape != b.shape:
            raise ValueError(f"a and b must both have shape (M, 2) or (M, 3), got {a.shape} and {b.shape}")
        m, dim = a.shape
        coords = np.stack([np.asarray(a, np.float64), np.asarray(b, np.float64)], axis=1).reshape(-1, dim)
        return cls.from_multi_polylines(coords, np.arange(0, 2 * m + 1, 2), np.arange(m + 1))

    @classmethod
    def from_polylines(cls, polylines, offsets=None, *, index=None) -> "SegmentIndex":
        """One feature per polyline, given as

        - a sequence of ``(V_i, 2|3)`` arrays: ``from_polylines([line0, line1])``;
        - all vertices ``(V, 2|3)`` and ``offsets`` (the first vertex of each
          polyline, then ``V``: GeoArrow's LineString layout);
        - all vertices and ``index``, the polyline of every vertex
          (non-decreasing: what ``shapely.get_coordinates(lines,
          return_index=True)`` returns).

        >>> import numpy as np, segdist
        >>> coords = np.array([[0, 0], [4, 0], [4, 4], [9, 9], [9, 0]], float)
        >>> a = segdist.SegmentIndex.from_polylines(coords, [0, 3, 5])
        >>> b = segdist.SegmentIndex.from_polylines(coords, index=[0, 0, 0, 1, 1])
        >>> a.nearest([[8, 1]]).feature, b.nearest([[8, 1]]).feature
        (array([1]), array([1]))
        """
        if offsets is None and index is None:
            lines = [_as_coords(line, f"polyline {i}") for i, line in enumerate(polylines)]
            if not lines:
                return cls.from_multi_polylines(np.zeros((0, 2)), [0], [0])
            for i, line in enumerate(lines):
                if line.ndim != 2:
                    raise ValueError(f"polyline {i} must have shape (V, 2) or (V, 3), got {line.shape}")
            coords = np.concatenate([np.asarray(line, np.float64) for line in lines])
            offsets = np.concatenate([[0], np.cumsum([len(line) for line in lines])])
        else:
            coords = polylines
            if index is not None:
                if offsets is not None:
                    raise TypeError("give offsets or index, not both")
                idx = _offsets(index, "index")
                if np.any(idx[1:] < idx[:-1]) or (len(idx) and idx[0] < 0):
                    raise ValueError("index must be non-negative and non-decreasing (one run per polyline)")
                n = int(idx[-1]) + 1 if len(idx) else 0
                offsets = np.searchsorted(idx, np.arange(n + 1), side="left")
        offsets = _offsets(offsets, "offsets")
        return cls.from_multi_polylines(coords, offsets, np.arange(len(offsets)))

    @classmethod
    def from_shapely(cls, geometries) -> "SegmentIndex":
        """From shapely LineStrings, LinearRings and MultiLineStrings (an
        array, a list or a GeoSeries; needs shapely 2). Feature ``i`` is
        ``geometries[i]``; empty geometries and ``None`` are features with
        no segments (never an answer). Coordinates are 3-D when any
        geometry has z.

        >>> import segdist, shapely
        >>> lines = [shapely.LineString([(0, 0), (10, 0)]), shapely.from_wkt("MULTILINESTRING ((0 5, 1 5), (9 5, 10 5))")]
        >>> segdist.SegmentIndex.from_shapely(lines).nearest([[9.5, 4]]).feature
        array([1])
        """
        return cls.from_multi_polylines(*_shapely_lines(geometries))

    # -- facts

    def __len__(self) -> int:
        """The number of segments."""
        return len(self._native)

    def __repr__(self) -> str:
        return f"SegmentIndex({self.n_features} features, {len(self)} segments, {self.ndim}-D)"

    @property
    def ndim(self) -> int:
        """2 or 3."""
        return self._native.ndim

    @property
    def n_features(self) -> int:
        """The number of features."""
        return self._native.n_features

    @property
    def memory_bytes(self) -> int:
        """Bytes held (the index, and the vertices and lengths kept for
        linear referencing)."""
        return self._native.memory_bytes

    def lengths(self) -> np.ndarray:
        """The length of every feature (the sum of its parts')."""
        return self._native.lengths()

    # -- queries

    def nearest(self, points, *, max_distance: Optional[float] = None, threads: Optional[int] = None) -> Nearest:
        """The nearest segment to each point, with the closest point and
        where it lies along its feature. ``points`` is ``(..., D)``; the
        fields have its shape less the last axis (``point`` keeps it).
        ``max_distance`` leaves farther points unanswered (ids -1, NaN).

        Many points at once are answered far faster than one by one: they
        are visited along a space-filling curve on all cores.

        >>> import segdist
        >>> index = segdist.SegmentIndex.from_polylines([[[0, 0], [4, 0], [4, 4]]])
        >>> r = index.nearest([[5, 1], [50, 50]], max_distance=10)
        >>> r.feature, r.segment, r.t, r.along
        (array([ 0, -1]), array([ 1, -1]), array([0.25,  nan]), array([ 5., nan]))
        """
        pts, shape = _query_points(points, self.ndim)
        res = self._native.nearest(pts, _max_distance(max_distance), threads)
        return Nearest(*(_shaped(x, shape) for x in res[1:]))

    def locate(self, points, *, max_distance: Optional[float] = None, threads: Optional[int] = None) -> Nearest:
        """Linear referencing: the nearest feature to each point and the
        distance along it (``along``, ``fraction``); :meth:`nearest` under
        the name GIS users look for. See :meth:`interpolate` for the way
        back.

        >>> import segdist
        >>> index = segdist.SegmentIndex.from_polylines([[[0, 0], [3, 0], [3, 4]]])
        >>> index.locate([[4, 2]]).along
        array([5.])
        """
        return self.nearest(points, max_distance=max_distance, threads=threads)

    def nearest_k(
        self, points, k: int, *, max_distance: Optional[float] = None, threads: Optional[int] = None
    ) -> Hits:
        """The ``k`` nearest segments to each point (fewer where the index
        has fewer, or fewer lie within ``max_distance``), nearest first, as
        flat rows (``query`` says whose).

        >>> import segdist
        >>> index = segdist.SegmentIndex.from_segments([[0, 0], [0, 2], [0, 5]], [[9, 0], [9, 2], [9, 5]])
        >>> h = index.nearest_k([[1, 1.5]], 2)
        >>> h.query, h.feature, h.distance
        (array([0, 0]), array([1, 0]), array([0.5, 1.5]))
        """
        if int(k) < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        pts, _ = _query_points(points, self.ndim)
        return Hits(*self._native.nearest_k(pts, int(k), _max_distance(max_distance), threads))

    def within(self, points, radius: float, *, threads: Optional[int] = None) -> Hits:
        """Every segment within ``radius`` of each point (distance
        ``<= radius``), nearest first, as flat rows.

        >>> import segdist
        >>> index = segdist.SegmentIndex.from_segments([[0, 0], [0, 2], [0, 5]], [[9, 0], [9, 2], [9, 5]])
        >>> index.within([[1, 1.5], [1, 9]], 2.0).feature
        array([1, 0])
        """
        pts, _ = _query_points(points, self.ndim)
        return Hits(*self._native.within(pts, float(radius), threads))

    def interpolate(self, feature, distance, *, normalized: bool = False) -> np.ndarray:
        """The point at ``distance`` along each ``feature`` (broadcast
        together), clamped to the feature; with ``normalized``, ``distance``
        is a fraction of its length. A feature with no parts gives NaN.

        >>> import segdist
        >>> index = segdist.SegmentIndex.from_polylines([[[0, 0], [3, 0], [3, 4]]])
        >>> index.interpolate(0, [5.0, 1.5])
        array([[3. , 2. ],
               [1.5, 0. ]])
        >>> index.interpolate([0, 0], 0.5, normalized=True)
        array([[3. , 0.5],
               [3. , 0.5]])
        """
        f, d = np.broadcast_arrays(np.asarray(feature), np.asarray(distance, dtype=np.float64))
        if f.dtype.kind not in "iu":
            raise TypeError(f"feature must be integers, got {f.dtype}")
        shape = f.shape
        f = np.ascontiguousarray(f.reshape(-1), dtype=np.int64)
        d = np.ascontiguousarray(d.reshape(-1))
        out = self._native.interpolate(f, d, normalized)
        return out.reshape(shape + (self.ndim,))


class Polyline:
    """One polyline prepared for linear referencing: shapely's
    ``line_locate_point`` and ``line_interpolate_point``, exact, in
    ``O(log V)`` per point instead of ``O(V)``.

    ``coords`` is ``(V, 2|3)`` or a shapely LineString.

    >>> import segdist
    >>> route = segdist.Polyline([[0, 0], [3, 0], [3, 4]])
    >>> route.length
    7.0
    >>> at = route.locate([[4, 1]])
    >>> at.along, at.fraction, at.distance
    (array([4.]), array([0.57142857]), array([1.]))
    >>> route.interpolate([5.0])
    array([[3., 2.]])
    """

    __slots__ = ("_native", "_ndim")

    def __init__(self, coords):
        if hasattr(coords, "geom_type"):
            if coords.geom_type not in ("LineString", "LinearRing"):
                raise TypeError(f"a Polyline is made from a LineString, got a {coords.geom_type}")
            coords = np.asarray(coords.coords)
        arr = _as_coords(coords, "coords")
        if arr.ndim != 2:
            raise ValueError(f"coords must have shape (V, 2) or (V, 3), got {arr.shape}")
        self._ndim = arr.shape[1]
        self._native = _segdist.Polyline(np.ascontiguousarray(arr, dtype=np.float64))

    def __len__(self) -> int:
        """The number of vertices."""
        return len(self._native)

    def __repr__(self) -> str:
        return f"Polyline({len(self)} vertices, length {self.length!r})"

    @property
    def length(self) -> float:
        """The length: faithfully rounded segment lengths summed with
        compensation."""
        return self._native.length

    def locate(self, points, *, threads: Optional[int] = None) -> Location:
        """Where each point projects onto the line: the distance ``along``
        it of the closest point (the first such point on a tie), as a
        ``fraction`` of the length, the ``distance`` from the point, the
        closest ``point``, its ``segment`` and ``t``. NaN points give NaN
        and segment -1.

        >>> import segdist
        >>> segdist.Polyline([[0, 0], [10, 0]]).locate([[2.5, -1.0], [99, 0]]).along
        array([ 2.5, 10. ])
        """
        pts, shape = _query_points(points, self._ndim)
        _, _, _, segment, t, point, dist, along, fraction = self._native.locate(pts, float("inf"), threads)
        return Location(*(_shaped(x, shape) for x in (along, fraction, dist, point, segment, t)))

    def interpolate(self, distance, *, normalized: bool = False) -> np.ndarray:
        """The point at ``distance`` along the line (clamped to it); with
        ``normalized``, a fraction of the length.

        >>> import segdist
        >>> segdist.Polyline([[0, 0], [4, 0], [4, 4]]).interpolate([6.0, -1.0, 0.5], normalized=False)
        array([[4. , 2. ],
               [0. , 0. ],
               [0.5, 0. ]])
        """
        d = np.asarray(distance, dtype=np.float64)
        out = self._native.interpolate(np.ascontiguousarray(d.reshape(-1)), normalized)
        return out.reshape(d.shape + (self._ndim,))


from ._geo import GeoIndex, GeoNearest, GeoProjection, geodesic  # noqa: E402
from ._join import sjoin_nearest  # noqa: E402
from ._matching import Matched, RoadNetwork, default_radius, match  # noqa: E402


def __dir__():
    """The package's API only (:data:`__all__`)."""
    return list(__all__)
