"""The accuracy contract from Python: every output faithfully rounded,
checked against exact rational arithmetic over the adversarial families of
NUMERICS.md, in 2-D and 3-D, float64 and float32, segments and lines."""

import numpy as np
import pytest

import segdist
from exact import FAMILIES, cases, exact, faithful, faithful_sqrt, to_f32

N = 300  # cases per family, dimension and dtype (each checked exactly)


def check(a, b, p, line, dtype):
    r = (segdist.line_closest_point if line else segdist.closest_point)(a, b, p)
    d2 = None if line else segdist.distance_squared(a, b, p)
    bad = []
    for i in range(len(p)):
        t, q, v2 = exact(a[i], b[i], p[i], line)
        checks = {
            "t": faithful(r.t[i], t, dtype),
            "distance": faithful_sqrt(r.distance[i], v2, dtype),
            "point": all(faithful(r.point[i][k], q[k], dtype) for k in range(p.shape[1])),
        }
        if not line:
            checks["distance_squared"] = faithful(d2[i], v2, dtype)
        failed = [k for k, ok in checks.items() if not ok]
        if failed:
            bad.append((i, failed, a[i], b[i], p[i]))
    return bad


def test_the_checker_rejects_two_ulps():
    from fractions import Fraction

    tenth = Fraction(1, 10)  # between two doubles: both are faithful, no other
    lo, hi = (0.1, np.nextafter(0.1, 1)) if Fraction(0.1) < tenth else (np.nextafter(0.1, 0), 0.1)
    assert faithful(lo, tenth) and faithful(hi, tenth)
    assert not faithful(np.nextafter(hi, 1), tenth) and not faithful(np.nextafter(lo, 0), tenth)
    assert faithful(0.5, Fraction(1, 2)) and not faithful(np.nextafter(0.5, 1), Fraction(1, 2))
    assert faithful_sqrt(3.0, Fraction(9)) and not faithful_sqrt(3.0, Fraction(9) + Fraction(1, 10**6))
    assert faithful(np.float32(0.1), Fraction(float(np.float32(0.1))) + Fraction(1, 10**12), np.float32)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dim", [2, 3])
def test_segment_f64_faithful(family, dim):
    a, b, p = cases(family, N, dim)
    assert check(a, b, p, False, np.float64) == []


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dim", [2, 3])
def test_segment_f32_faithful(family, dim):
    a, b, p = (to_f32(x) for x in cases(family, N, dim, seed=11))
    r = segdist.closest_point(a, b, p)
    assert r.distance.dtype == np.float32 and r.point.dtype == np.float32
    assert check(a, b, p, False, np.float32) == []


@pytest.mark.parametrize("family", ["uniform", "utm", "near_interior", "on_segment", "one_ulp_off", "tiny"])
@pytest.mark.parametrize("dim", [2, 3])
def test_line_f64_faithful(family, dim):
    a, b, p = cases(family, N, dim, seed=5)
    r = segdist.line_closest_point(a, b, p)
    for i in range(len(p)):
        t, q, v2 = exact(a[i], b[i], p[i], line=True)
        assert faithful(r.t[i], t), (i, a[i], b[i], p[i])
        assert faithful_sqrt(r.distance[i], v2), (i, a[i], b[i], p[i])


@pytest.mark.parametrize("family", ["utm", "near_interior", "one_ulp_off", "on_segment"])
def test_signed_distance_exact_sign(family):
    from fractions import Fraction

    a, b, p = cases(family, N, 2, seed=3)
    s = segdist.signed_distance(a, b, p)
    for i in range(len(p)):
        A, B, P = ([Fraction(float(x)) for x in v] for v in (a[i], b[i], p[i]))
        cross = (B[0] - A[0]) * (P[1] - A[1]) - (B[1] - A[1]) * (P[0] - A[0])
        _, _, v2 = exact(a[i], b[i], p[i], line=True)
        assert np.sign(s[i]) == (cross > 0) - (cross < 0), i
        if np.any(a[i] != b[i]):
            assert faithful_sqrt(abs(s[i]), v2), i


def test_textbook_formula_fails_where_segdist_does_not():
    # The reason for the package: near the segment the textbook loop in
    # numpy loses every digit (here: the distance of a point 1e-12 off a
    # long segment at UTM coordinates), segdist does not.
    a, b, p = cases("near_interior", 200, 2, seed=1)
    ab, ap = b - a, p - a
    t = np.clip(np.sum(ap * ab, 1) / np.sum(ab * ab, 1), 0, 1)
    textbook = np.linalg.norm(a + t[:, None] * ab - p, axis=1)
    ours = segdist.distance(a, b, p)
    wrong_textbook = wrong_ours = 0
    for i in range(len(p)):
        _, _, v2 = exact(a[i], b[i], p[i])
        wrong_textbook += not faithful_sqrt(textbook[i], v2)
        wrong_ours += not faithful_sqrt(ours[i], v2)
    assert wrong_ours == 0
    assert wrong_textbook > 100


@pytest.mark.parametrize("family", ["uniform", "near_degenerate", "huge", "tiny", "any_finite_bits"])
def test_fast_tier_total(family):
    # The fast tier is not faithful, but it is never NaN or negative, and
    # t stays in [0, 1], for finite input.
    a, b, p = cases(family, 500, 2)
    d = segdist.distance(a, b, p, fast=True)
    r = segdist.closest_point(a, b, p, fast=True)
    assert not np.isnan(d).any() and (d >= 0).all()
    assert ((r.t >= 0) & (r.t <= 1)).all()
    assert not np.isnan(r.point).any()
