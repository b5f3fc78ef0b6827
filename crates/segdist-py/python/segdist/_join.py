"""GeoPandas' nearest join, exact and fast: :func:`sjoin_nearest`.

The points' coordinates and the lines' vertices are read out of shapely in
a few vectorised calls, the index is segdist's (planar, or geodesic on WGS84
for EPSG:4326), and the result is assembled as ``geopandas.sjoin_nearest``
assembles it: the points' columns, ``index_right``, the lines' columns.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple, Optional

import numpy as np

from ._common import THREAD_MIN, Background, object_array, shapely_lines

__all__ = ["sjoin_nearest"]

#: The columns :func:`sjoin_nearest` adds with ``extras=True``.
EXTRAS = ("part", "segment", "t", "along", "nearest_x", "nearest_y")


def _frame(x, what: str):
    """``x`` as a GeoDataFrame: a GeoDataFrame as it is; a GeoSeries,
    shapely array or list as a frame of that one geometry column."""
    import geopandas as gpd

    if isinstance(x, gpd.GeoDataFrame):
        return x
    if isinstance(x, gpd.GeoSeries):
        return gpd.GeoDataFrame(geometry=x)
    try:
        return gpd.GeoDataFrame(geometry=gpd.GeoSeries(np.asarray(x, dtype=object).reshape(-1)))
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} must be a GeoDataFrame, a GeoSeries or shapely geometries: {e}") from None


def _is_wgs84(crs) -> bool:
    return crs.to_epsg() == 4326 or crs.equals("OGC:CRS84")


class _Points:
    """The ``(N, 2)`` coordinates of Points read out of shapely: ``x`` and
    ``y`` are two jobs, begun on a thread of its own (shapely lets go of
    the GIL) while the caller reads and indexes the lines; :meth:`result`
    takes on the job left, if any (when the lines' index was kept, the
    caller has nothing else to do), and returns ``(xy, valid)``."""

    def __init__(self, pts):
        import threading

        self.pts, self.xy = pts, np.empty((len(pts), 2))
        self._jobs, self._lock = [1, 0], threading.Lock()
        self._helper = Background(self._work, thread=len(pts) >= THREAD_MIN)

    def _work(self):
        import shapely

        read = (shapely.get_x, shapely.get_y)
        while True:
            with self._lock:
                if not self._jobs:
                    return
                axis = self._jobs.pop()
            read[axis](self.pts, out=self.xy[:, axis])

    def wait(self):
        """Waits for the helper's job (so that nothing is left running)."""
        self._helper.wait()

    def result(self):
        """``(xy, valid)``: valid means a finite point (missing and empty
        points, and points with a NaN or infinite coordinate, are not; their
        rows are NaN). Other geometries raise ``TypeError``."""
        import shapely

        pts, xy = self.pts, self.xy
        try:
            try:
                self._work()
            finally:
                self._helper.wait()
            self._helper.result()
        except shapely.errors.GEOSException:  # an empty point
            empty = shapely.is_empty(pts)
            xy[empty] = np.nan
            xy[~empty, 0], xy[~empty, 1] = shapely.get_x(pts[~empty]), shapely.get_y(pts[~empty])
        # (NaN for whatever is not a point: checked here, only where NaN.
        # Column by column: `isfinite(xy).all(axis=1)` took 2 ms of a 200k
        # join.)
        valid = np.isfinite(xy[:, 0]) & np.isfinite(xy[:, 1])
        if not valid.all():
            odd = np.flatnonzero(~valid)
            kinds = shapely.get_type_id(pts[odd])
            if not np.isin(kinds, [-1, 0]).all():
                i = int(odd[np.flatnonzero(~np.isin(kinds, [-1, 0]))[0]])
                raise TypeError(f"left geometry {i} is a {pts[i].geom_type}: sjoin_nearest joins Points")
        return xy, valid


def _take(arr, f, fill: bool):
    """``arr.take(f, allow_fill=fill)``, as a function that returns it.
    Arrays of Python objects or Arrow (strings, say) are taken in two
    halves, the second on a thread of its own (pyarrow lets go of the GIL):
    such a take was 2.3 of a 200k join's 28 ms, and the second core idles
    while the result is put together."""
    if len(f) < THREAD_MIN or (isinstance(arr.dtype, np.dtype) and arr.dtype != object):
        whole = arr.take(f, allow_fill=fill)
        return lambda: whole
    h = len(f) // 2
    tail = Background(lambda: arr.take(f[h:], allow_fill=fill))
    head = arr.take(f[:h], allow_fill=fill)
    return lambda: type(arr)._concat_same_type([head, tail.result()])


class _Kept(NamedTuple):
    """An index kept with the lines it was built from (see
    :func:`_lines_index`)."""

    lines: "weakref.ref"
    geometries: np.ndarray
    index: object


#: Indexes kept with their lines' geometry arrays: ``(id(array),
#: geographic)`` to :class:`_Kept`; an entry goes when its array does.
_KEPT: dict = {}


def _lines_index(array, geographic: bool):
    """The index of ``array``'s lines (a GeoSeries' GeometryArray, or any
    array of shapely lines): kept with the array, as GeoPandas keeps its
    spatial index (``sindex``) with it, so that joins against the same
    lines read and index them once. The kept index is used only while the
    array holds the very geometries it was built from (shapely's geometries
    are immutable; one set or replaced is another object): else it is
    built again."""
    from . import GeoIndex, SegmentIndex
    from ._segdist import same_objects

    geoms = object_array(array)
    key = (id(array), bool(geographic))
    kept = _KEPT.get(key)
    if kept is not None and kept.lines() is array and same_objects(kept.geometries, geoms):
        return kept.index
    layout = shapely_lines(geoms, allow_z=False)
    index = (GeoIndex if geographic else SegmentIndex).from_multi_polylines(*layout)
    try:
        ref = weakref.ref(array, lambda _, key=key: _KEPT.pop(key, None))
    except TypeError:  # (a list, say: nothing to keep the index with)
        return index
    # (A copy: the array's own objects may be replaced in place.)
    _KEPT[key] = _Kept(ref, geoms.copy(), index)
    return index


def sjoin_nearest(
    left,
    right,
    how: str = "inner",
    max_distance: Optional[float] = None,
    lsuffix: str = "left",
    rsuffix: str = "right",
    distance_col: Optional[str] = None,
    *,
    geographic: Optional[bool] = None,
    extras: bool = True,
    threads: Optional[int] = None,
):
    """Each point of ``left`` joined to its nearest line of ``right``: a
    drop-in for ``geopandas.sjoin_nearest(left, right, ...)`` when the left
    holds points and the right lines, with exact distances.

    ``left`` holds Points (a GeoDataFrame, GeoSeries or shapely array);
    ``right`` LineStrings, LinearRings and MultiLineStrings. The result has
    GeoPandas' shape: ``left``'s rows (its index and geometry), then
    ``index_right`` (``index_{rsuffix}``), then ``right``'s columns; names
    in both get ``_{lsuffix}`` and ``_{rsuffix}``. ``distance_col`` names a
    column for the distance. With ``extras`` (the default) the columns
    ``part``, ``segment``, ``t`` (where on the segment), ``along`` (the
    distance along the line to the closest point) and ``nearest_x``,
    ``nearest_y`` (the closest point) follow.

    ``how="inner"`` leaves out points with no line within ``max_distance``
    (and missing or empty points); ``how="left"`` keeps them with NaN.

    Distances: when the CRS is EPSG:4326 (longitude/latitude on WGS84), in
    metres on the ellipsoid (``max_distance`` too, ``along`` too), where
    GeoPandas measures degrees; otherwise in the CRS's units, as GeoPandas.
    ``geographic`` overrides. Another geographic CRS raises ``ValueError``:
    reproject with ``to_crs(4326)`` first. The two frames' CRSs must be
    equal.

    The lines' index is kept with their geometry array, as GeoPandas keeps
    its spatial index (``sindex``), so that later joins against the same
    lines skip reading and indexing them; it is built again when the lines
    change (a geometry set or replaced) and goes when they do.

    Differences from GeoPandas: one row per point, so of lines at exactly
    the same distance the first (lowest position in ``right``) is taken,
    where GeoPandas returns them all; z is ignored; ``how="right"`` and
    ``exclusive`` do not exist. Needs geopandas.

    >>> import geopandas as gpd, shapely, segdist
    >>> roads = gpd.GeoDataFrame({"name": ["Main", "Side"]},
    ...     geometry=[shapely.LineString([(0, 0), (10, 0)]), shapely.LineString([(0, 5), (10, 5)])], crs=3067)
    >>> fixes = gpd.GeoDataFrame({"fix": [1, 2]}, geometry=shapely.points([[3, 1], [7, 4.5]]), crs=3067)
    >>> j = segdist.sjoin_nearest(fixes, roads, distance_col="distance")
    >>> j[["fix", "index_right", "name", "distance", "t", "along"]]
       fix  index_right  name  distance    t  along
    0    1            0  Main       1.0  0.3    3.0
    1    2            1  Side       0.5  0.7    7.0
    """
    if how not in ("inner", "left"):
        raise ValueError(f"how must be 'inner' or 'left', got {how!r} (segdist joins points to lines)")
    lf, rf = _frame(left, "left"), _frame(right, "right")
    crs = lf.crs if lf.crs is not None else rf.crs
    if lf.crs is not None and rf.crs is not None and not lf.crs.equals(rf.crs):
        raise ValueError(f"the CRSs differ: left {lf.crs.to_string()}, right {rf.crs.to_string()}; reproject one with to_crs")
    if geographic is None:
        geographic = crs is not None and crs.is_geographic
        if geographic and not _is_wgs84(crs):
            raise ValueError(
                f"{crs.to_string()} is geographic but not WGS84: reproject with to_crs(4326), or say geographic=False"
            )
    if max_distance is not None and not (max_distance >= 0):
        raise ValueError(f"max_distance must be a number >= 0, got {max_distance}")

    # The points are read out of shapely on a thread of their own (shapely
    # lets go of the GIL there) while the lines' vertices are read and the
    # index is built here, unless it is kept from a join before. (The other
    # way round, the index built on a thread while the points are read
    # here, took 35 ms against 28 for 200k points and 100k segments, medians
    # of 40 alternating calls.)
    pts = object_array(lf.geometry.array)
    reading = _Points(pts)
    try:
        index = _lines_index(rf.geometry.array, geographic)
    except BaseException:
        reading.wait()  # (nothing left running; the lines' error is raised)
        raise
    xy, valid = reading.result()
    all_valid = bool(valid.all())
    q = xy if all_valid else np.ascontiguousarray(xy[valid])
    if geographic:
        hit = index.nearest(q, max_distance)
    else:
        hit = index.nearest(q, max_distance=max_distance, threads=threads)
    feature = hit.feature
    if not all_valid:
        feature = np.full(len(pts), -1, dtype=np.int64)
        feature[valid] = hit.feature
    found = feature >= 0
    all_found = bool(found.all())
    # The result's rows (None: every point's, in order, no copy).
    rows = None if how == "left" or all_found else np.flatnonzero(found)
    f = feature if rows is None else feature[rows]
    # Whether every row has a line (else -1 in f takes NaN).
    every = all_found or how == "inner"

    def column(x, fill=np.nan):
        """A per-query answer for the result's rows."""
        if all_valid:
            full = x
        else:
            full = np.full((len(pts),) + x.shape[1:], fill, dtype=x.dtype)
            full[valid] = x
        return full if rows is None else full[rows]

    # GeoPandas' assembly: left's columns, index_right, right's columns.
    import pandas as pd

    lcols = [c for c in lf.columns if c != lf.geometry.name]
    rcols = [c for c in rf.columns if c != rf.geometry.name]
    both = set(lcols) & set(rcols)
    added = {}
    right_index = rf.index.take(f) if every else rf.index.take(f, allow_fill=True, fill_value=np.nan)
    added[f"index_{rsuffix}"] = np.asarray(right_index)
    # Column by column (pandas' own take for each; a frame's `iloc` cost
    # twice as much, 5 ms of a 200k join).
    taken = {}
    for j, c in enumerate(rf.columns):
        if c != rf.geometry.name:
            taken[f"{c}_{rsuffix}" if c in both else c] = _take(rf.iloc[:, j].array, f, not every)
    for name, part in taken.items():
        added[name] = part()
    if distance_col is not None:
        added[distance_col] = column(hit.distance)
    if extras:
        added["part"] = column(hit.part, -1)
        added["segment"] = column(hit.segment, -1)
        added["t"] = column(hit.t)
        added["along"] = column(hit.along)
        point = column(hit.point)
        added["nearest_x"], added["nearest_y"] = point[:, 0], point[:, 1]
    out = lf if rows is None else lf.iloc[rows]
    out = out.rename(columns={c: f"{c}_{lsuffix}" for c in both}) if both else out
    clash = sorted(set(added) & set(out.columns))
    if clash:
        raise ValueError(f"the result would have the column(s) {clash} twice: rename them, or say extras=False")
    # One frame of the added columns, side by side with left's: no column
    # is copied (setting them one by one copied each, a quarter of the
    # call's time outside the search).
    return pd.concat([out, pd.DataFrame(added, index=out.index, copy=False)], axis=1)
