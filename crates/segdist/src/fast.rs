//! The fast tier: the textbook clamp-`t` formula, branch-free, in the
//! caller's own type, with the few guards that keep it total.
//!
//! Deliberately no fused multiply-add: the same operations in the same order
//! on every CPU and in every SIMD path give the same bits everywhere, which is
//! what lock-step simulations and reproducible pipelines need, and costs
//! nothing here (the loop is bound by memory, not arithmetic).

use crate::scalar::Scalar;
use crate::Region;

/// `(q, t, d², region)` of the fast segment projection.
#[inline(always)]
pub(crate) fn segment<T: Scalar, const D: usize>(a: &[T; D], b: &[T; D], p: &[T; D]) -> ([T; D], T, T, Region) {
    let r = segment_unchecked(a, b, p);
    // Finite input gives a non-finite d² only by overflow; only then are the
    // inputs looked at (a well-predicted branch instead of a check per query).
    if !r.2.is_finite() && !all_finite(a, b, p) {
        return ([T::NAN; D], T::NAN, T::NAN, Region::Undefined);
    }
    r
}

/// [`segment`] without the non-finite check: branch-free, so a loop of it
/// vectorises (the batch layer re-checks non-finite d² afterwards).
#[inline(always)]
pub(crate) fn segment_unchecked<T: Scalar, const D: usize>(
    a: &[T; D],
    b: &[T; D],
    p: &[T; D],
) -> ([T; D], T, T, Region) {
    let (_, l, n) = prologue(a, b, p);
    // clamp(t, 0, 1) by comparisons (minsd/maxsd); 0/0 and inf/inf clamp too.
    let t = if l > T::ZERO { n / l } else { T::ZERO };
    let t = if t < T::ONE { t } else { T::ONE };
    let t = if t > T::ZERO { t } else { T::ZERO };
    let mut q = [T::ZERO; D];
    let mut d2 = T::ZERO;
    let s = T::ONE - t;
    for i in 0..D {
        // The two-sided lerp is exact at both ends (t = 0 gives a, t = 1
        // gives b) with no select, which compilers turn into a branch.
        q[i] = s * a[i] + t * b[i];
        let v = p[i] - q[i];
        d2 = d2 + v * v;
    }
    let region = if t <= T::ZERO {
        Region::Start
    } else if t >= T::ONE {
        Region::End
    } else {
        Region::Interior
    };
    (q, t, d2, region)
}

/// Inline on purpose: an out-of-line call would need the inputs' addresses
/// and force them through memory on every query (a store-forwarding stall
/// that tripled the 3D cost).
#[inline(always)]
fn all_finite<T: Scalar, const D: usize>(a: &[T; D], b: &[T; D], p: &[T; D]) -> bool {
    a.iter().chain(b).chain(p).all(|x| x.is_finite())
}

/// `(q, t, d²)` of the fast line projection (`t` unclamped).
#[inline(always)]
pub(crate) fn line<T: Scalar, const D: usize>(a: &[T; D], b: &[T; D], p: &[T; D]) -> ([T; D], T, T) {
    let r = line_unchecked(a, b, p);
    if !r.2.is_finite() && !all_finite(a, b, p) {
        return ([T::NAN; D], T::NAN, T::NAN);
    }
    r
}

/// [`line`] without the non-finite check (see [`segment_unchecked`]).
#[inline(always)]
pub(crate) fn line_unchecked<T: Scalar, const D: usize>(a: &[T; D], b: &[T; D], p: &[T; D]) -> ([T; D], T, T) {
    let (ab, l, n) = prologue(a, b, p);
    let t = if l > T::ZERO { n / l } else { T::ZERO };
    let t = if t.is_finite() { t } else { T::ZERO };
    let mut q = [T::ZERO; D];
    let mut d2 = T::ZERO;
    for i in 0..D {
        q[i] = a[i] + t * ab[i];
        let v = p[i] - q[i];
        d2 = d2 + v * v;
    }
    (q, t, d2)
}

/// Does the ball of radius `r` around `p` touch the segment? Ericson's test:
/// no division, no square root (`r < 0` and NaN never touch).
#[inline(always)]
pub(crate) fn touches<T: Scalar, const D: usize>(a: &[T; D], b: &[T; D], p: &[T; D], r: T) -> bool {
    let mut ab = [T::ZERO; D];
    let mut ap = [T::ZERO; D];
    let mut bp = [T::ZERO; D];
    for i in 0..D {
        ab[i] = b[i] - a[i];
        ap[i] = p[i] - a[i];
        bp[i] = p[i] - b[i];
    }
    let rr = r * r;
    let n = dot(&ap, &ab);
    let l = dot(&ab, &ab);
    let inside = if n <= T::ZERO {
        dot(&ap, &ap) <= rr
    } else if n >= l {
        dot(&bp, &bp) <= rr
    } else {
        // |ap|²·L − N² = |ab × ap|², compared with r²·L.
        dot(&ap, &ap) * l - n * n <= rr * l
    };
    inside & (r >= T::ZERO)
}

/// `b − a`, `|b − a|²` and `(p − a)·(b − a)`: what both projections start from.
#[inline(always)]
fn prologue<T: Scalar, const D: usize>(a: &[T; D], b: &[T; D], p: &[T; D]) -> ([T; D], T, T) {
    let mut ab = [T::ZERO; D];
    let mut ap = [T::ZERO; D];
    for i in 0..D {
        ab[i] = b[i] - a[i];
        ap[i] = p[i] - a[i];
    }
    (ab, dot(&ab, &ab), dot(&ap, &ab))
}

#[inline(always)]
fn dot<T: Scalar, const D: usize>(x: &[T; D], y: &[T; D]) -> T {
    let mut s = T::ZERO;
    for i in 0..D {
        s = s + x[i] * y[i];
    }
    s
}
