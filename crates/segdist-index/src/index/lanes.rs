//! Eight lanes at once for the one-query search (`single`): a node's eight
//! box distances, a leaf's eight fast distance bounds, and masks of them.
//!
//! Each comes in two forms chosen by the caller's `AVX2` parameter (set
//! where the CPU has AVX2, see `Index::traverse`): AVX2 intrinsics, or
//! portable loops for the default SSE2 build. LLVM compiled the portable
//! loops lane by lane even for AVX2 (10,000 segments: some 5,000
//! instructions a query), so the vector form is written out. Both do the
//! same operations in the same order (no fused multiply-add), so their
//! results are the same bits; `tests::both_forms_of_the_lanes_agree`
//! checks that.

use super::*;

/// Squared distances from `p` to the eight boxes of `block` (`lo`, `hi`
/// corners); `+inf` for padding boxes (`lo = +inf`, `hi = −inf`).
#[inline(always)]
pub(super) fn box_d2<const D: usize, const AVX2: bool>(block: &Block<D>, p: &[f64; D]) -> [f64; B] {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: the caller sets `AVX2` only where the CPU has it.
        return unsafe { avx2::box_d2(block, p) };
    }
    let mut d2 = [0.0; B];
    for k in 0..D {
        for c in 0..B {
            let v = fmax(fmax(block.lo[k][c] - p[k], p[k] - block.hi[k][c]), 0.0);
            d2[c] += v * v;
        }
    }
    d2
}

/// Lower and upper bounds on the exact distances from `p` (whose largest
/// coordinate magnitude is `mp`) to the eight segments of `leaf` (`inv`
/// their `1/|b − a|²`): the clamped projection's distance `d` and its
/// bound `K_GROUP·(M + d) + E_FLOOR` (see `Index::nearest_in_group`), `M`
/// the largest magnitude of the lane's ends and `p`. Where that bound is
/// not trusted (overflow, magnitudes from `FAST_RANGE`): `0` and `+inf`.
#[inline(always)]
pub(super) fn leaf_bounds<const D: usize, const AVX2: bool>(
    leaf: &Block<D>,
    inv: &[f64; B],
    p: &[f64; D],
    mp: f64,
) -> ([f64; B], [f64; B]) {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: the caller sets `AVX2` only where the CPU has it.
        return unsafe { avx2::leaf_bounds(leaf, inv, p, mp) };
    }
    let mut dot = [0.0; B];
    let mut m = [mp; B];
    for k in 0..D {
        for c in 0..B {
            let (a, b) = (leaf.lo[k][c], leaf.hi[k][c]);
            dot[c] += (p[k] - a) * (b - a);
            m[c] = fmax(m[c], fmax(a.abs(), b.abs()));
        }
    }
    let mut t = [0.0; B];
    for c in 0..B {
        // NaN (0·inf) clamps to 1: t stays in [0, 1] whatever happens.
        #[allow(clippy::manual_clamp)]
        let tc = (dot[c] * inv[c]).min(1.0).max(0.0);
        t[c] = tc;
    }
    let mut d2 = [0.0; B];
    for k in 0..D {
        for c in 0..B {
            let (a, b) = (leaf.lo[k][c], leaf.hi[k][c]);
            let v = (p[k] - a) - t[c] * (b - a);
            d2[c] += v * v;
        }
    }
    let (mut lower, mut upper) = ([0.0; B], [0.0; B]);
    for c in 0..B {
        let d = d2[c].sqrt();
        let e = K_GROUP * (m[c] + d) + E_FLOOR;
        let trusted = (d2[c] < f64::INFINITY) & (m[c] < FAST_RANGE);
        lower[c] = if trusted { d - e } else { 0.0 };
        upper[c] = if trusted { (d + e) * (1.0 + SLACK) } else { f64::INFINITY };
    }
    (lower, upper)
}

/// The lanes (a bit each) where `x·scale <= y`.
#[inline(always)]
pub(super) fn at_most<const AVX2: bool>(x: &[f64; B], scale: f64, y: f64) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: the caller sets `AVX2` only where the CPU has it.
        return unsafe { avx2::at_most(x, scale, y) };
    }
    let mut mask = 0;
    for c in 0..B {
        mask |= u32::from(x[c] * scale <= y) << c;
    }
    mask
}

/// The lanes (a bit each) where `x < y`.
#[inline(always)]
pub(super) fn below<const AVX2: bool>(x: &[f64; B], y: f64) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: the caller sets `AVX2` only where the CPU has it.
        return unsafe { avx2::below(x, y) };
    }
    let mut mask = 0;
    for c in 0..B {
        mask |= u32::from(x[c] < y) << c;
    }
    mask
}

/// The least of `x` (never NaN).
#[inline(always)]
pub(super) fn least<const AVX2: bool>(x: &[f64; B]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: the caller sets `AVX2` only where the CPU has it.
        return unsafe { avx2::least(x) };
    }
    x.iter().fold(f64::INFINITY, |m, &v| fmin(m, v))
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;
    use std::arch::x86_64::*;

    /// Lanes `0..4` and `4..8` of a column.
    #[inline(always)]
    unsafe fn load(x: &[f64; B]) -> [__m256d; 2] {
        // SAFETY: a column holds B = 8 numbers.
        unsafe { [_mm256_loadu_pd(x.as_ptr()), _mm256_loadu_pd(x.as_ptr().add(4))] }
    }

    #[inline(always)]
    unsafe fn store(v: [__m256d; 2]) -> [f64; B] {
        let mut x = [0.0; B];
        // SAFETY: `x` holds B = 8 numbers.
        unsafe {
            _mm256_storeu_pd(x.as_mut_ptr(), v[0]);
            _mm256_storeu_pd(x.as_mut_ptr().add(4), v[1]);
        }
        x
    }

    /// `[e(0), e(1)]` for an expression `e` of the half `h`, written out:
    /// `[0, 1].map(|h| …)` is a closure, a function without this module's
    /// target features, which LLVM inlined or not as the code around it
    /// changed (2026-12-04: an unrelated change left `below`'s compares a
    /// call in every node and leaf of a walk).
    macro_rules! halves {
        ($h:ident => $e:expr) => {
            [
                {
                    let $h = 0;
                    $e
                },
                {
                    let $h = 1;
                    $e
                },
            ]
        };
    }

    /// A bit a lane from two halves of compares.
    #[inline(always)]
    unsafe fn bits(v: [__m256d; 2]) -> u32 {
        unsafe { (_mm256_movemask_pd(v[0]) | _mm256_movemask_pd(v[1]) << 4) as u32 }
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn box_d2<const D: usize>(block: &Block<D>, p: &[f64; D]) -> [f64; B] {
        let zero = _mm256_setzero_pd();
        let mut d2 = [zero; 2];
        for k in 0..D {
            let pk = _mm256_set1_pd(p[k]);
            // SAFETY: columns of B numbers.
            let (lo, hi) = unsafe { (load(&block.lo[k]), load(&block.hi[k])) };
            for h in 0..2 {
                // `max_pd(a, b)` is `if a > b { a } else { b }`, as `fmax`.
                let v = _mm256_max_pd(_mm256_max_pd(_mm256_sub_pd(lo[h], pk), _mm256_sub_pd(pk, hi[h])), zero);
                d2[h] = _mm256_add_pd(d2[h], _mm256_mul_pd(v, v));
            }
        }
        // SAFETY: as above.
        unsafe { store(d2) }
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn leaf_bounds<const D: usize>(
        leaf: &Block<D>,
        inv: &[f64; B],
        p: &[f64; D],
        mp: f64,
    ) -> ([f64; B], [f64; B]) {
        let zero = _mm256_setzero_pd();
        let sign = _mm256_set1_pd(-0.0);
        let mut dot = [zero; 2];
        let mut m = [_mm256_set1_pd(mp); 2];
        for k in 0..D {
            let pk = _mm256_set1_pd(p[k]);
            // SAFETY: columns of B numbers.
            let (a, b) = unsafe { (load(&leaf.lo[k]), load(&leaf.hi[k])) };
            for h in 0..2 {
                dot[h] = _mm256_add_pd(dot[h], _mm256_mul_pd(_mm256_sub_pd(pk, a[h]), _mm256_sub_pd(b[h], a[h])));
                let mag = _mm256_max_pd(_mm256_andnot_pd(sign, a[h]), _mm256_andnot_pd(sign, b[h]));
                m[h] = _mm256_max_pd(m[h], mag);
            }
        }
        // SAFETY: as above.
        let inv = unsafe { load(inv) };
        let one = _mm256_set1_pd(1.0);
        // `min_pd(x, 1)` is 1 for a NaN `x`, as `f64::min`; `max_pd(·, 0)`
        // then sees no NaN.
        let t = halves!(h => _mm256_max_pd(_mm256_min_pd(_mm256_mul_pd(dot[h], inv[h]), one), zero));
        let mut d2 = [zero; 2];
        for k in 0..D {
            let pk = _mm256_set1_pd(p[k]);
            // SAFETY: as above.
            let (a, b) = unsafe { (load(&leaf.lo[k]), load(&leaf.hi[k])) };
            for h in 0..2 {
                let v = _mm256_sub_pd(_mm256_sub_pd(pk, a[h]), _mm256_mul_pd(t[h], _mm256_sub_pd(b[h], a[h])));
                d2[h] = _mm256_add_pd(d2[h], _mm256_mul_pd(v, v));
            }
        }
        let (kg, floor, s1) = (_mm256_set1_pd(K_GROUP), _mm256_set1_pd(E_FLOOR), _mm256_set1_pd(1.0 + SLACK));
        let (inf, range) = (_mm256_set1_pd(f64::INFINITY), _mm256_set1_pd(FAST_RANGE));
        let (mut lower, mut upper) = ([zero; 2], [zero; 2]);
        for h in 0..2 {
            let d = _mm256_sqrt_pd(d2[h]);
            let e = _mm256_add_pd(_mm256_mul_pd(kg, _mm256_add_pd(m[h], d)), floor);
            let trusted =
                _mm256_and_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(d2[h], inf), _mm256_cmp_pd::<_CMP_LT_OQ>(m[h], range));
            lower[h] = _mm256_and_pd(trusted, _mm256_sub_pd(d, e));
            upper[h] = _mm256_blendv_pd(inf, _mm256_mul_pd(_mm256_add_pd(d, e), s1), trusted);
        }
        // SAFETY: as above.
        unsafe { (store(lower), store(upper)) }
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn at_most(x: &[f64; B], scale: f64, y: f64) -> u32 {
        let (scale, y) = (_mm256_set1_pd(scale), _mm256_set1_pd(y));
        // SAFETY: `x` holds B numbers.
        let x = unsafe { load(x) };
        unsafe { bits(halves!(h => _mm256_cmp_pd::<_CMP_LE_OQ>(_mm256_mul_pd(x[h], scale), y))) }
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn below(x: &[f64; B], y: f64) -> u32 {
        let y = _mm256_set1_pd(y);
        // SAFETY: `x` holds B numbers.
        let x = unsafe { load(x) };
        unsafe { bits(halves!(h => _mm256_cmp_pd::<_CMP_LT_OQ>(x[h], y))) }
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn least(x: &[f64; B]) -> f64 {
        // SAFETY: `x` holds B numbers.
        let x = unsafe { load(x) };
        let m = _mm256_min_pd(x[0], x[1]);
        let m = _mm_min_pd(_mm256_castpd256_pd128(m), _mm256_extractf128_pd::<1>(m));
        _mm_cvtsd_f64(_mm_min_sd(m, _mm_unpackhi_pd(m, m)))
    }
}
