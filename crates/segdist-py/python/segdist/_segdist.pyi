"""Type stubs for segdist's native module (built from crates/segdist-py/src).

Users call the wrappers in ``segdist/__init__.py``, which check and convert
their input; these functions take C-contiguous float64/float32 arrays only.
"""

from typing import Any, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

_F = npt.NDArray[np.floating]
_Points = Union[_F, Tuple[_F, ...]]
_Hits = Tuple[
    npt.NDArray[np.int64],  # query
    npt.NDArray[np.int64],  # feature
    npt.NDArray[np.int64],  # part
    npt.NDArray[np.int64],  # segment
    npt.NDArray[np.float64],  # t
    npt.NDArray[np.float64],  # point
    npt.NDArray[np.float64],  # distance
    npt.NDArray[np.float64],  # along
    npt.NDArray[np.float64],  # fraction
]

def project(
    a: _F,
    b: _F,
    p: _Points,
    outputs: str,
    *,
    line: bool = False,
    fast: bool = False,
    threads: Optional[int] = None,
) -> Tuple[Optional[_F], Optional[_F], Optional[_F], Optional[_F], Optional[npt.NDArray[np.uint8]]]: ...
def signed_distance(a: _F, b: _F, p: _Points, *, threads: Optional[int] = None) -> _F: ...
def isa() -> str: ...
def class_codes(objects: npt.NDArray[np.object_], classes: list[type]) -> npt.NDArray[np.int8]: ...
def same_objects(a: npt.NDArray[np.object_], b: npt.NDArray[np.object_]) -> bool: ...

class SegmentIndex:
    @staticmethod
    def build(
        coords: npt.NDArray[np.float64], part_offsets: npt.NDArray[np.int64], feature_offsets: npt.NDArray[np.int64]
    ) -> "SegmentIndex": ...
    @property
    def ndim(self) -> int: ...
    @property
    def n_features(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    def __len__(self) -> int: ...
    def lengths(self) -> npt.NDArray[np.float64]: ...
    def nearest(
        self, points: npt.NDArray[np.float64], max_distance: float = ..., threads: Optional[int] = None
    ) -> _Hits: ...
    def nearest_k(
        self, points: npt.NDArray[np.float64], k: int, max_distance: float = ..., threads: Optional[int] = None
    ) -> _Hits: ...
    def within(self, points: npt.NDArray[np.float64], radius: float, threads: Optional[int] = None) -> _Hits: ...
    def interpolate(
        self, feature: npt.NDArray[np.int64], distance: npt.NDArray[np.float64], normalized: bool = False
    ) -> npt.NDArray[np.float64]: ...

class Polyline:
    def __init__(self, coords: npt.NDArray[np.float64]) -> None: ...
    @property
    def length(self) -> float: ...
    def __len__(self) -> int: ...
    def locate(
        self, points: npt.NDArray[np.float64], max_distance: float = ..., threads: Optional[int] = None
    ) -> _Hits: ...
    def interpolate(self, distance: npt.NDArray[np.float64], normalized: bool = False) -> npt.NDArray[np.float64]: ...

class RoadNetwork:
    def __init__(
        self,
        coords: npt.NDArray[np.float64],
        offsets: npt.NDArray[np.int64],
        oneway: npt.NDArray[np.int8],
        from_node: npt.NDArray[np.int64],
        to_node: npt.NDArray[np.int64],
        geographic: bool,
        shared_vertices: bool,
    ) -> None: ...
    def size(self) -> tuple[int, int]: ...
    def match_traces(
        self,
        trace: npt.NDArray[np.int64],
        xy: npt.NDArray[np.float64],
        time: npt.NDArray[np.float64],
        sigma: float,
        beta: float,
        radius: Optional[float],
        k: int,
        max_speed: float,
        acceleration: float,
        threads: Optional[int],
    ) -> tuple[npt.NDArray[Any], ...]: ...

def default_radius(sigma: float) -> float: ...
def geodesic(
    a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], p: npt.NDArray[np.float64], threads: Optional[int] = None
) -> tuple[npt.NDArray[np.float64], ...]: ...

class GeoIndex:
    @staticmethod
    def build(
        coords: npt.NDArray[np.float64], part_offsets: npt.NDArray[np.int64], feature_offsets: npt.NDArray[np.int64]
    ) -> "GeoIndex": ...
    def __len__(self) -> int: ...
    def nearest(self, points: npt.NDArray[np.float64], max_distance: float) -> tuple[npt.NDArray[Any], ...]: ...
