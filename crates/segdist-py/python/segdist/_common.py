"""Helpers shared by the package's modules: argument checks and reading
shapely line geometries into GeoArrow's MultiLineString layout."""

from __future__ import annotations

import numpy as np


def offsets(x, what: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise TypeError(f"{what} must be a 1-D array of integers, got {arr.dtype} {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def max_distance(x) -> float:
    return float("inf") if x is None else float(x)


def shapely_lines(geometries, *, allow_z: bool = True):
    """``(coords, part_offsets, feature_offsets)`` of shapely LineStrings,
    LinearRings and MultiLineStrings (feature ``i`` is ``geometries[i]``;
    empty and missing geometries are features with no parts). Coordinates
    are 3-D when ``allow_z`` and any geometry has z.

    When every geometry is one non-empty line, its vertices are read in one
    call, without making a shapely object per part.
    """
    import shapely

    geoms = object_array(geometries)
    has_z = allow_z and bool(np.any(shapely.has_z(geoms)))
    kinds = type_ids(geoms)
    coords, vertex_geom = shapely.get_coordinates(geoms, include_z=has_z, return_index=True)
    ok = np.isin(kinds, [-1, 1, 2, 5])  # missing, LineString, LinearRing, MultiLineString
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise TypeError(f"geometry {i} is a {geoms[i].geom_type}: only LineString and MultiLineString index")
    n = len(geoms)
    if np.all((kinds == 1) | (kinds == 2)):
        counts = np.bincount(vertex_geom, minlength=n)
        if counts.all():  # no empty line (a line has no vertex or 2 and more)
            part_offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(counts, out=part_offsets[1:])
            return coords, part_offsets, np.arange(n + 1)
    # Parts: the vertices read above are theirs, in order (an empty part
    # has none); only where each part starts is left to find.
    parts, part_feature = shapely.get_parts(geoms, return_index=True)
    keep = ~shapely.is_empty(parts)
    parts, part_feature = parts[keep], part_feature[keep]
    part_offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(shapely.get_num_coordinates(parts), out=part_offsets[1:])
    feature_offsets = np.searchsorted(part_feature, np.arange(n + 1))
    return coords, part_offsets, feature_offsets


def type_ids(geoms: np.ndarray) -> np.ndarray:
    """``shapely.get_type_id(geoms)`` for a 1-D object array: read from
    each object's class where it is one of shapely's geometry classes (or
    ``None``: -1), GEOS asked only about the others (GEOS's answer cost
    3 ms for 100,000 lines, the class 0.2)."""
    import shapely

    from ._segdist import class_codes

    # A class's position here is its type id plus one (shapely.GeometryType).
    classes = [type(None), shapely.Point, shapely.LineString, shapely.LinearRing, shapely.Polygon,
               shapely.MultiPoint, shapely.MultiLineString, shapely.MultiPolygon, shapely.GeometryCollection]
    codes = class_codes(geoms, classes)
    ids = codes.astype(np.int32) - 1
    unknown = codes < 0
    if unknown.any():
        ids[unknown] = shapely.get_type_id(geoms[unknown])
    return ids


def object_array(geometries) -> np.ndarray:
    """A writeable 1-D object array of ``geometries`` (shapely's functions
    refuse the read-only views pandas' copy-on-write hands out)."""
    geoms = np.asarray(geometries, dtype=object).reshape(-1)
    return geoms if geoms.flags.writeable else geoms.copy()


class Background:
    """``f(*args)`` on a thread of its own (with ``thread=False``, at once
    on this one: small inputs, where starting a thread costs more than it
    saves); :meth:`result` waits for it and returns its value or raises its
    exception, :meth:`wait` only waits."""

    def __init__(self, f, *args, thread: bool = True):
        import threading

        self._value, self._error, self._thread = None, None, None

        def run():
            try:
                self._value = f(*args)
            except BaseException as e:  # handed to the caller of result()
                self._error = e

        if thread:
            self._thread = threading.Thread(target=run, daemon=True)
            self._thread.start()
        else:
            run()

    def wait(self):
        if self._thread is not None:
            self._thread.join()

    def result(self):
        self.wait()
        if self._error is not None:
            raise self._error
        return self._value


#: Fewer geometries than this are read on the calling thread alone.
THREAD_MIN = 4096
