"""An exact rational reference (fractions.Fraction) and the adversarial
input families of NUMERICS.md, for the accuracy tests.

The families mirror the Rust suite's (crates/segdist/tests/common): the
same shapes of trouble, drawn by numpy's generator.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

FAMILIES = [
    "uniform",
    "utm",
    "near_degenerate",
    "collinear_beyond",
    "near_interior",
    "on_segment",
    "one_ulp_off",
    "perpendicular_at_vertex",
    "huge",
    "tiny",
    "ab_squared_underflows",
    "mixed_magnitudes",
    "any_finite_bits",
    "ties",
]


def exact(a, b, p, line=False):
    """Exact ``(t, q, d2)`` as Fractions for one query (``t = 0``, ``q = a``
    on a zero-length segment)."""
    A, B, P = ([Fraction(float(x)) for x in v] for v in (a, b, p))
    ab = [y - x for x, y in zip(A, B)]
    length2 = sum(c * c for c in ab)
    if length2 == 0:
        t = Fraction(0)
    else:
        t = sum((pp - aa) * c for pp, aa, c in zip(P, A, ab)) / length2
        if not line:
            t = min(max(t, Fraction(0)), Fraction(1))
    q = [aa + t * c for aa, c in zip(A, ab)]
    d2 = sum((pp - qq) ** 2 for pp, qq in zip(P, q))
    return t, q, d2


def _max(dtype) -> Fraction:
    return Fraction(float(np.finfo(dtype).max))


def faithful(x, v: Fraction, dtype=np.float64) -> bool:
    """Is ``x`` one of the two floats of ``dtype`` around ``v`` (or ``v``
    itself)?"""
    x = dtype(x)
    if np.isinf(x):
        return abs(v) > _max(dtype) and (v > 0) == (x > 0)
    if np.isnan(x):
        return False
    fx = Fraction(float(x))
    if fx == v:
        return True
    toward = dtype(np.inf if fx < v else -np.inf)
    with np.errstate(over="ignore"):
        nxt = np.nextafter(x, toward, dtype=dtype)
    if np.isinf(nxt):
        return abs(v) > _max(dtype)
    nq = Fraction(float(nxt))
    return nq > v if fx < v else nq < v


def faithful_sqrt(x, v2: Fraction, dtype=np.float64) -> bool:
    """Is ``x`` a faithful rounding of ``sqrt(v2)``? (Squares compared
    exactly.)"""
    x = dtype(x)
    if np.isinf(x):
        return v2 > _max(dtype) ** 2
    if np.isnan(x) or x < 0:
        return False
    fx = Fraction(float(x))
    if fx * fx == v2:
        return True
    if fx * fx < v2:
        with np.errstate(over="ignore"):
            nxt = np.nextafter(x, dtype(np.inf), dtype=dtype)
        return bool(np.isinf(nxt)) or Fraction(float(nxt)) ** 2 > v2
    if fx == 0:
        return False
    return Fraction(float(np.nextafter(x, dtype(0), dtype=dtype))) ** 2 < v2


def _log_uniform(r, lo, hi):
    return math.exp(r.uniform(math.log(lo), math.log(hi)))


def _sign(r):
    return 1.0 if r.random() < 0.5 else -1.0


def _along(a, b, t):
    return a + t * (b - a)


def _perp(v, r):
    if len(v) == 2:
        w = np.array([-v[1], v[0]])
    else:
        x = r.random(3) - 0.5
        w = x - (x @ v) / (v @ v) * v
    return w / np.sqrt(w @ w)


def _finite_bits(r):
    while True:
        x = np.frombuffer(r.integers(0, 2**64, dtype=np.uint64).tobytes(), dtype=np.float64)[0]
        if np.isfinite(x):
            return float(x)


def case(family: str, r: np.random.Generator, i: int, dim: int):
    """One ``(a, b, p)`` of a family."""
    u = lambda: r.random(dim)  # noqa: E731
    if family == "uniform":
        return u(), u(), u()
    if family == "utm":
        a = 1e6 + u() * 9e6
        return a, a + (u() - 0.5) * 20.0, a + (u() - 0.5) * 200.0
    if family == "near_degenerate":
        a = np.array([_sign(r) * _log_uniform(r, 1e-3, 1e6) for _ in range(dim)])
        b = a.copy() if i % 5 == 0 else a * (1.0 + (u() - 0.5) * 1e-12)
        return a, b, a + (u() - 0.5) * np.abs(a) * 1e-9
    if family == "collinear_beyond":
        a, b = (u() - 0.5) * 100, (u() - 0.5) * 100
        s = -_log_uniform(r, 1e-6, 1e6) if r.random() < 0.5 else 1.0 + _log_uniform(r, 1e-6, 1e6)
        return a, b, _along(a, b, s)
    if family == "near_interior":
        a, b = (u() - 0.5) * 1e3, (u() - 0.5) * 1e3
        ab = b - a
        off = _sign(r) * _log_uniform(r, 1e-16, 1e-8) * np.sqrt(ab @ ab)
        return a, b, _along(a, b, r.random()) + off * _perp(ab, r)
    if family == "on_segment":
        if i % 2 == 0:
            a = r.integers(-1000, 1000, dim).astype(float)
            b = r.integers(-1000, 1000, dim).astype(float)
            return a, b, _along(a, b, r.integers(1, 1024) / 1024)
        a, b = (u() - 0.5) * 10, (u() - 0.5) * 10
        return a, b, _along(a, b, r.random())
    if family == "one_ulp_off":
        a = r.integers(-1000, 1000, dim).astype(float)
        b = r.integers(-1000, 1000, dim).astype(float)
        p = _along(a, b, r.integers(1, 1024) / 1024)
        k = r.integers(dim)
        p[k] = np.nextafter(p[k], np.inf if r.random() < 0.5 else -np.inf)
        return a, b, p
    if family == "perpendicular_at_vertex":
        a = r.integers(-100, 100, dim).astype(float)
        b = r.integers(-100, 100, dim).astype(float)
        ab = b - a
        w = np.array([-ab[1], ab[0]]) if dim == 2 else np.cross(ab, r.integers(-5, 5, 3).astype(float))
        base = a if r.random() < 0.5 else b
        return a, b, base + r.integers(-3, 4) * w
    if family == "huge":
        m = _log_uniform(r, 1e150, 1e307)
        return (u() - 0.5) * m, (u() - 0.5) * m, (u() - 0.5) * m
    if family == "tiny":
        m = _log_uniform(r, 1e-307, 1e-150)
        return (u() - 0.5) * m, (u() - 0.5) * m, (u() - 0.5) * m
    if family == "ab_squared_underflows":
        a = (u() - 0.5) * 2
        b = a + (u() - 0.5) * 1e-170
        p = a + np.array([(r.random() - 0.5) * _log_uniform(r, 1e-175, 1e-160) for _ in range(dim)])
        return a, b, p
    if family == "mixed_magnitudes":
        g = lambda: np.array(  # noqa: E731
            [0.0 if r.integers(4) == 0 else _sign(r) * _log_uniform(r, 1e-300, 1e300) for _ in range(dim)]
        )
        return g(), g(), g()
    if family == "any_finite_bits":
        g = lambda: np.array([_finite_bits(r) for _ in range(dim)])  # noqa: E731
        return g(), g(), g()
    if family == "ties":
        scale = 2.0 ** int(r.integers(-60, 60)) * _sign(r)
        j = float(r.integers(0, 1 << 20))
        length = float(r.integers(1, 64))
        x = float(r.integers(1, max(int(length), 2))) - 0.5 * int(r.integers(0, 2))
        a, b, p = np.zeros(dim), np.zeros(dim), np.zeros(dim)
        a[1] = b[1] = 2.0**-53 * scale
        b[0] = length * scale
        p[0] = (length + 1.0) * scale if i % 3 == 0 else x * scale
        p[1] = (1.0 + (j + 1.0) * 2.0**-52) * scale
        return a, b, p
    raise ValueError(family)


def cases(family: str, n: int, dim: int, seed: int = 7):
    """``n`` cases of a family as three ``(n, dim)`` float64 arrays."""
    r = np.random.default_rng([seed, dim, FAMILIES.index(family)])
    rows = [case(family, r, i, dim) for i in range(n)]
    return tuple(np.array([c[k] for c in rows], dtype=np.float64) for k in range(3))


def to_f32(x: np.ndarray) -> np.ndarray:
    """Rounded to float32, kept finite (overflow clamps to ±max)."""
    with np.errstate(over="ignore"):
        y = x.astype(np.float32)
    m = np.finfo(np.float32).max
    return np.where(np.isinf(y), np.copysign(m, x), y).astype(np.float32)
