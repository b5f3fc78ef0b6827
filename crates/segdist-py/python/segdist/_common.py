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
    kinds = shapely.get_type_id(geoms)
    ok = np.isin(kinds, [-1, 1, 2, 5])  # missing, LineString, LinearRing, MultiLineString
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise TypeError(f"geometry {i} is a {geoms[i].geom_type}: only LineString and MultiLineString index")
    has_z = allow_z and bool(np.any(shapely.has_z(geoms)))
    n = len(geoms)
    if np.all((kinds == 1) | (kinds == 2)) and not np.any(shapely.is_empty(geoms)):
        coords, vertex_geom = shapely.get_coordinates(geoms, include_z=has_z, return_index=True)
        return coords, np.searchsorted(vertex_geom, np.arange(n + 1)), np.arange(n + 1)
    parts, part_feature = shapely.get_parts(geoms, return_index=True)
    keep = ~shapely.is_empty(parts)
    parts, part_feature = parts[keep], part_feature[keep]
    coords, vertex_part = shapely.get_coordinates(parts, include_z=has_z, return_index=True)
    part_offsets = np.searchsorted(vertex_part, np.arange(len(parts) + 1))
    feature_offsets = np.searchsorted(part_feature, np.arange(n + 1))
    return coords, part_offsets, feature_offsets


def object_array(geometries) -> np.ndarray:
    """A writeable 1-D object array of ``geometries`` (shapely's functions
    refuse the read-only views pandas' copy-on-write hands out)."""
    geoms = np.asarray(geometries, dtype=object).reshape(-1)
    return geoms if geoms.flags.writeable else geoms.copy()
