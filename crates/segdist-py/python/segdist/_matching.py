"""Map matching: GPS traces onto the roads driven (:class:`RoadNetwork`,
:func:`match`), the Rust crate ``segdist-match`` on numpy columns."""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from . import _segdist

__all__ = ["Matched", "RoadNetwork", "match"]


class Matched(NamedTuple):
    """Map matching's answer, one row per fix (see :meth:`RoadNetwork.match`).
    Where a fix is unmatched, ``line``, ``part`` and ``segment`` are -1 and
    the floats NaN."""

    line: np.ndarray
    part: np.ndarray
    segment: np.ndarray
    t: np.ndarray
    distance: np.ndarray
    x: np.ndarray
    y: np.ndarray
    along: np.ndarray
    sub_match: np.ndarray
    state: np.ndarray


_STATES = np.array(["matched", "unmatched", "break"])


def _oneway_code(v) -> int:
    if v is None:
        return 0
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(np.sign(v))
    text = str(v).strip().lower()
    return 1 if text in ("yes", "true", "1") else -1 if text in ("-1", "reverse") else 0


class RoadNetwork:
    """A road network for map matching: GPS traces onto the roads driven,
    by a hidden Markov model over segdist's exact candidates (the same
    matcher and answers as ``segdist match``).

    ``lines`` is a sequence of ``(V_i, 2)`` polylines; ``oneway`` one value
    per line (``True``/``1``/``"yes"``: along the vertex order, ``-1``/
    ``"-1"``/``"reverse"``: against it, anything else: both ways).
    ``geographic`` takes coordinates as lon/lat and works in metres on
    WGS84. Lines meet where their ends, or any of their vertices
    (``junctions="shared"``, as in OpenStreetMap), have equal coordinates;
    ``junctions="ends"`` joins them at ends only. With ``nodes=(from_ids,
    to_ids)`` (integers, one each per line) lines meet where those ids are
    equal, and only there.

    >>> import numpy as np, segdist
    >>> net = segdist.RoadNetwork([[[0, 0], [100, 0]], [[100, 0], [200, 0]], [[100, 0], [100, 100]]])
    >>> m = net.match([7, 7, 7, 7], [[10, 3], [60, -2], [103, 40], [98, 90]])
    >>> m.line, m.state
    (array([0, 0, 2, 2]), array(['matched', 'matched', 'matched', 'matched'], dtype='<U9'))
    """

    __slots__ = ("_native",)

    def __init__(self, lines, oneway=None, *, nodes=None, geographic: bool = False, junctions: str = "shared"):
        arrays = [np.asarray(line, dtype=np.float64) for line in lines]
        for i, a in enumerate(arrays):
            if a.ndim != 2 or a.shape[1] != 2:
                raise ValueError(f"line {i} must have shape (V, 2), got {a.shape}")
        coords = np.ascontiguousarray(np.concatenate(arrays) if arrays else np.zeros((0, 2)))
        offsets = np.concatenate([[0], np.cumsum([len(a) for a in arrays])]).astype(np.int64)
        if oneway is None:
            codes = np.zeros(len(arrays), dtype=np.int8)
        else:
            codes = np.array([_oneway_code(v) for v in oneway], dtype=np.int8)
        if junctions not in ("shared", "ends"):
            raise ValueError(f"junctions must be 'shared' or 'ends', not {junctions!r}")
        if nodes is None:
            src = dst = np.zeros(0, dtype=np.int64)
        else:
            src, dst = (np.ascontiguousarray(np.asarray(a).reshape(-1), dtype=np.int64) for a in nodes)
        self._native = _segdist.RoadNetwork(coords, offsets, codes, src, dst, bool(geographic), junctions == "shared")

    @property
    def nodes(self) -> int:
        """The number of nodes (junctions and ends)."""
        return self._native.size()[0]

    @property
    def arcs(self) -> int:
        """The number of directed arcs that may be driven."""
        return self._native.size()[1]

    def match(
        self,
        trace,
        xy,
        time=None,
        *,
        sigma: float = 10.0,
        radius: Optional[float] = None,
        k: int = 8,
        beta: float = 10.0,
        max_speed: float = 50.0,
        acceleration: float = 2.0,
        threads: Optional[int] = None,
    ) -> Matched:
        """Matches every trace: ``trace`` an id per fix (a trace's fixes
        consecutive), ``xy`` ``(N, 2)`` positions, ``time`` seconds per fix
        (optional; must not go back within a trace). ``sigma`` is the GPS
        noise, ``radius`` where candidates are looked for (default
        :func:`default_radius` of sigma: 3 × sigma, at least 50), ``k``
        candidate roads per fix, ``beta`` the transition's scale,
        ``max_speed`` the fastest a vehicle goes (with times),
        ``acceleration`` how much its velocity wanders (with times,
        the fixes are smoothed before matching and along the matched route
        after; 0 turns that off). Traces run on all cores (``threads`` to
        choose), the GIL released.

        A fix with no road within the radius is ``"unmatched"`` and ends
        its sub-match; one that no route from the fix before reaches starts
        a new one (``"break"``).
        """
        ids = np.asarray(trace)
        if ids.ndim != 1:
            raise ValueError(f"trace must be 1-D, got shape {ids.shape}")
        if ids.dtype.kind in "iu":
            codes = np.ascontiguousarray(ids, dtype=np.int64)
        else:
            codes = np.unique(ids, return_inverse=True)[1].astype(np.int64).reshape(-1)
        pts = np.ascontiguousarray(np.asarray(xy, dtype=np.float64).reshape(-1, 2))
        t = np.zeros(0) if time is None else np.ascontiguousarray(np.asarray(time, dtype=np.float64).reshape(-1))
        r = None if radius is None else float(radius)
        cols = self._native.match_traces(codes, pts, t, float(sigma), float(beta), r, int(k), float(max_speed), float(acceleration), threads)
        return Matched(*cols[:9], _STATES[cols[9]])


def default_radius(sigma: float) -> float:
    """The radius :meth:`RoadNetwork.match` and :func:`match` look for
    candidates within when none is given: 3 × ``sigma``, at least 50
    (metres where the network is geographic), as the command line's
    ``segdist match`` and the Rust crate's ``default_radius``. A fix lies
    over 3 sigma across its road for 0.27 % of fixes; the floor keeps a
    small, often optimistic, sigma from leaving real fixes without
    candidates. A NaN sigma gives 50.

    >>> import segdist
    >>> segdist.default_radius(5.0), segdist.default_radius(20.0)
    (50.0, 60.0)
    """
    return _segdist.default_radius(float(sigma))


def match(
    lines,
    trace,
    xy,
    time=None,
    *,
    oneway=None,
    nodes=None,
    geographic: bool = False,
    junctions: str = "shared",
    **options,
) -> Matched:
    """Map matching in one call: ``RoadNetwork(lines, oneway, nodes=nodes,
    geographic=geographic, junctions=junctions).match(trace, xy, time,
    **options)``. Build a :class:`RoadNetwork` once instead when matching
    many batches against the same roads.

    >>> import segdist
    >>> roads = [[[0, 0], [500, 0]], [[0, 30], [500, 30]], [[0, 0], [0, 30]], [[500, 0], [500, 30]]]
    >>> segdist.match(roads, [1] * 4, [[50, 2], [150, -3], [250, 17], [350, 1]], sigma=5.0).line
    array([0, 0, 0, 0])
    """
    net = RoadNetwork(lines, oneway, nodes=nodes, geographic=geographic, junctions=junctions)
    return net.match(trace, xy, time, **options)
