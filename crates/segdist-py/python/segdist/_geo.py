"""Longitude/latitude in metres on the WGS84 ellipsoid: :func:`geodesic`
and :class:`GeoIndex`, the Rust crate ``segdist-geo`` on numpy arrays."""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from . import _segdist
from ._common import max_distance as _max_distance
from ._common import offsets as _offsets
from ._common import shapely_lines as _shapely_lines

__all__ = ["GeoProjection", "geodesic", "GeoNearest", "GeoIndex"]


class GeoProjection(NamedTuple):
    """The closest point of a geodesic segment to a lon/lat point
    (:func:`geodesic`): ``point`` ``(..., 2)`` lon/lat, ``t`` the fraction
    of the segment's length, ``along`` and ``distance`` in metres."""

    point: np.ndarray
    t: np.ndarray
    along: np.ndarray
    distance: np.ndarray


def geodesic(a, b, p, *, threads: Optional[int] = None) -> GeoProjection:
    """The closest point on the geodesic from ``a`` to ``b`` (lon/lat,
    degrees) to ``p``, on the WGS84 ellipsoid, distances in metres: the Rust
    crate ``segdist-geo``'s ``geodesic``, bit for bit. ``a``, ``b``, ``p``
    broadcast against each other (shape ``(..., 2)``); all cores, the GIL
    released. A coordinate that is not a longitude/latitude raises
    ``ValueError``.

    >>> import segdist
    >>> r = segdist.geodesic([0, 0], [1, 0], [[0.5, 0.001], [1.5, 0.0]])
    >>> r.distance.round(1), r.t  # 0.001° of latitude; half a degree of the equator
    (array([  110.6, 55659.7]), array([0.5, 1. ]))
    """
    a, b, p = (np.asarray(x, dtype=np.float64) for x in (a, b, p))
    for name, x in (("a", a), ("b", b), ("p", p)):
        if x.ndim == 0 or x.shape[-1] != 2:
            raise ValueError(f"{name} must have shape (..., 2) (lon, lat), got {x.shape}")
    a, b, p = np.broadcast_arrays(a, b, p)
    shape = p.shape[:-1]
    flat = [np.ascontiguousarray(x.reshape(-1, 2)) for x in (a, b, p)]
    point, t, along, distance = _segdist.geodesic(*flat, threads)
    return GeoProjection(point.reshape(shape + (2,)), t.reshape(shape), along.reshape(shape), distance.reshape(shape))


class GeoNearest(NamedTuple):
    """:meth:`GeoIndex.nearest`'s answer, one row per point: ``feature``,
    ``part``, ``segment`` (-1 where nothing is within ``max_distance``),
    ``t``, ``distance`` (metres), ``point`` (lon/lat), ``along`` (metres
    from the start of the part), NaN where nothing was found."""

    feature: np.ndarray
    part: np.ndarray
    segment: np.ndarray
    t: np.ndarray
    distance: np.ndarray
    point: np.ndarray
    along: np.ndarray


class GeoIndex:
    """The exact nearest geodesic segment to lon/lat points, in metres on
    WGS84: the Rust crate ``segdist-geo``'s ``GeoIndex``, the answers of
    ``segdist snap`` on lon/lat input, bit for bit.

    >>> import segdist
    >>> roads = segdist.GeoIndex.from_polylines([[[24.94, 60.17], [24.95, 60.17]], [[24.94, 60.18], [24.95, 60.18]]])
    >>> hit = roads.nearest([[24.945, 60.1701], [24.9, 60.0]], max_distance=1000)
    >>> hit.feature, hit.distance.round(2), hit.along.round(1)
    (array([ 0, -1]), array([11.13,   nan]), array([277.6,   nan]))
    """

    __slots__ = ("_native",)

    def __init__(self, native):
        self._native = native

    @classmethod
    def from_multi_polylines(cls, coords, part_offsets, feature_offsets) -> "GeoIndex":
        """Features of one or more parts in GeoArrow's MultiLineString
        layout, as :meth:`SegmentIndex.from_multi_polylines` (lon/lat)."""
        arr = np.ascontiguousarray(np.asarray(coords, dtype=np.float64).reshape(-1, 2))
        native = _segdist.GeoIndex.build(
            arr, _offsets(part_offsets, "part_offsets"), _offsets(feature_offsets, "feature_offsets")
        )
        return cls(native)

    @classmethod
    def from_polylines(cls, polylines) -> "GeoIndex":
        """One feature per polyline, a sequence of ``(V_i, 2)`` lon/lat arrays."""
        lines = [np.asarray(line, dtype=np.float64).reshape(-1, 2) for line in polylines]
        coords = np.concatenate(lines) if lines else np.zeros((0, 2))
        offsets = np.concatenate([[0], np.cumsum([len(line) for line in lines])]).astype(np.int64)
        return cls.from_multi_polylines(coords, offsets, np.arange(len(lines) + 1))

    @classmethod
    def from_shapely(cls, geometries) -> "GeoIndex":
        """From shapely LineStrings, LinearRings and MultiLineStrings in
        lon/lat (an array, a list or a GeoSeries; z is ignored), as
        :meth:`SegmentIndex.from_shapely`.

        >>> import segdist, shapely
        >>> roads = segdist.GeoIndex.from_shapely([shapely.LineString([(24.94, 60.17), (24.95, 60.17)])])
        >>> roads.nearest([[24.945, 60.1701]]).distance.round(2)
        array([11.13])
        """
        return cls.from_multi_polylines(*_shapely_lines(geometries, allow_z=False))

    def __len__(self) -> int:
        return len(self._native)

    def nearest(self, points, max_distance=None) -> GeoNearest:
        """The nearest segment to every point ``(N, 2)`` (lon/lat), within
        ``max_distance`` metres when given; all cores, the GIL released."""
        pts = np.ascontiguousarray(np.asarray(points, dtype=np.float64).reshape(-1, 2))
        return GeoNearest(*self._native.nearest(pts, _max_distance(max_distance)))
