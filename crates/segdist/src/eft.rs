//! Error-free transformations and the few double-double operations the
//! accurate kernel needs.
//!
//! Every operation here is written so that its result does not depend on
//! whether the CPU has a fused multiply-add: [`Arith::two_prod`] returns the
//! *exact* product split in two doubles whichever way it is computed, and the
//! residuals in [`div_dd`] and [`sqrt_dd`] are built from exact products.
//! That is what lets the kernel be compiled twice (with and without FMA) and
//! chosen at run time while staying bit-identical.

/// How the exact product `a·b = hi + lo` is obtained.
///
/// Both implementations return the same pair for every input whose product
/// neither overflows nor underflows below `2^-969` (the kernel's input window
/// guarantees that).
pub(crate) trait Arith: Copy {
    fn two_prod(a: f64, b: f64) -> (f64, f64);
}

/// Exact product through a hardware fused multiply-add.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Clone, Copy)]
pub(crate) struct Fma;

/// Exact product through Dekker's splitting (no FMA needed).
#[derive(Clone, Copy)]
pub(crate) struct Dekker;

impl Arith for Fma {
    #[inline(always)]
    fn two_prod(a: f64, b: f64) -> (f64, f64) {
        let p = a * b;
        (p, a.mul_add(b, -p))
    }
}

impl Arith for Dekker {
    #[inline(always)]
    fn two_prod(a: f64, b: f64) -> (f64, f64) {
        let p = a * b;
        let (ah, al) = split(a);
        let (bh, bl) = split(b);
        let e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
        (p, e)
    }
}

/// Veltkamp split of `a` into two 26-bit halves (valid for `|a| < 2^996`).
#[inline(always)]
fn split(a: f64) -> (f64, f64) {
    const SPLITTER: f64 = 134_217_729.0; // 2^27 + 1
    let c = SPLITTER * a;
    let hi = c - (c - a);
    (hi, a - hi)
}

/// Knuth's TwoSum: `a + b = s + e` exactly (no overflow assumed).
#[inline(always)]
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

/// `a − b = s + e` exactly.
#[inline(always)]
pub(crate) fn two_diff(a: f64, b: f64) -> (f64, f64) {
    two_sum(a, -b)
}

/// Dekker's FastTwoSum: exact when `|a| >= |b|` or `a == 0`.
#[inline(always)]
pub(crate) fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// A double-double `hi + lo` with `|lo| <= ulp(hi)/2`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub(crate) struct Dd {
    pub hi: f64,
    pub lo: f64,
}

impl Dd {
    pub const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };

    #[inline(always)]
    pub fn new(hi: f64, lo: f64) -> Dd {
        Dd { hi, lo }
    }

    /// Renormalise an unnormalised pair.
    #[inline(always)]
    pub fn norm(hi: f64, lo: f64) -> Dd {
        let (h, l) = fast_two_sum(hi, lo);
        Dd { hi: h, lo: l }
    }

    #[inline(always)]
    pub fn abs(self) -> Dd {
        if self.hi < 0.0 {
            Dd::new(-self.hi, -self.lo)
        } else {
            self
        }
    }

    #[inline(always)]
    pub fn scale(self, s: f64) -> Dd {
        Dd::new(self.hi * s, self.lo * s)
    }
}

/// `x·y` for double-doubles (relative error below `2^-102`).
#[inline(always)]
pub(crate) fn mul_dd<A: Arith>(x: Dd, y: Dd) -> Dd {
    let (p, e) = A::two_prod(x.hi, y.hi);
    let e = e + (x.hi * y.lo + x.lo * y.hi);
    Dd::norm(p, e)
}

/// `x/y` for double-doubles (relative error below `2^-100`).
#[inline(always)]
pub(crate) fn div_dd<A: Arith>(x: Dd, y: Dd) -> Dd {
    let q = x.hi / y.hi;
    // r = x − q·y, with q·y.hi formed exactly.
    let (p, e) = A::two_prod(q, y.hi);
    let r = ((x.hi - p) - e) + x.lo - q * y.lo;
    let q2 = r / y.hi;
    Dd::norm(q, q2)
}

/// `x/y` given `inv = 1/y.hi` (rounded): one division shared by several
/// quotients with the same divisor (relative error below `2^-100`).
#[inline(always)]
pub(crate) fn div_dd_inv<A: Arith>(x: Dd, y: Dd, inv: f64) -> Dd {
    let q = x.hi * inv;
    // r = x − q·y: x.hi − p is exact (Sterbenz), the rest is second order.
    let (p, e) = A::two_prod(q, y.hi);
    let r = ((x.hi - p) - e) + x.lo - q * y.lo;
    Dd::norm(q, r * inv)
}

/// `x + y` for double-doubles of the same sign (relative error below `2^-104`).
#[inline(always)]
pub(crate) fn add_dd(x: Dd, y: Dd) -> Dd {
    let (s, e) = two_sum(x.hi, y.hi);
    Dd::norm(s, e + (x.lo + y.lo))
}

/// `sqrt(x)` for a non-negative double-double (relative error below `2^-100`).
#[inline(always)]
pub(crate) fn sqrt_dd<A: Arith>(x: Dd) -> Dd {
    if x.hi <= 0.0 {
        return Dd::ZERO;
    }
    let r = x.hi.sqrt();
    let (p, e) = A::two_prod(r, r);
    let c = ((x.hi - p) - e + x.lo) / (2.0 * r);
    Dd::norm(r, c)
}

/// `sqrt(x)` rounded to a double, faithfully, for a double-double `x >= 0`
/// within `2^-57·x` of the exact value `x` stands for, no subnormal or
/// overflow in sight: just the square root of the high part, rounded.
///
/// Why that is enough: `h = x.hi` is `x.hi + x.lo` rounded to nearest.
/// Let `S` be the exact value and `d = sqrt(S)`, in `[2^k, 2^(k+1))`.
/// `2^2k <= S < 2^(2k+2)`, and `x` is too close to `S` to round past the
/// midpoints next to these powers of two, so `2^2k <= h <= 2^(2k+2)`:
/// `sqrt(h)`, and its rounding `r`, lie in `[2^k, 2^(k+1)]`. Then
/// `sqrt(h) − d = (h − S)/(sqrt(h) + d)`, with `|h − S|` at most half an
/// ulp of `h` plus `2^-57·S`. With `S < 2^(2k+1)`, half an ulp of `h` is
/// `2^(2k−53)` over `sqrt(h) + d >= 2^(k+1)`: a quarter of `d`'s ulp
/// (`2^(k−52)`), plus at most a 32nd from the `2^-57`. With `S` above
/// `2^(2k+1)`, `2^(2k−52)` over `sqrt(h) + d >= 2√2·2^k`: `0.36` ulp, plus
/// `0.05`. Rounding adds half an ulp: `r` is less than one ulp from `d` and
/// in its binade (or its top end), so `r` is one of `d`'s two neighbours
/// (`d` itself when `d` is a float).
#[inline(always)]
pub(crate) fn sqrt_rounded(x: Dd) -> f64 {
    x.hi.sqrt()
}

/// `sqrt(l)` as a double-double (relative error below `2^-100`) for a
/// positive double-double `l` inside the direct window, given `inv_l`
/// (`1/l.hi` rounded), and an approximate `1/sqrt(l).hi` (`sqrt(l).hi ·
/// inv_l`, relative error below `3u`: enough for [`div_dd_inv`], whose
/// remainder absorbs it). No division: `l.hi − r²` is exact (Sterbenz), and
/// the correction `(l − r²)/(2r)` needs only a few correct bits.
#[inline(always)]
pub(crate) fn sqrt_dd_inv<A: Arith>(l: Dd, inv_l: f64) -> (Dd, f64) {
    let r = l.hi.sqrt();
    let inv = r * inv_l;
    let (p, e) = A::two_prod(r, r);
    let res = ((l.hi - p) - e) + l.lo;
    (Dd { hi: r, lo: 0.5 * (res * inv) }, inv)
}

/// Dot product of double-double vectors whose component products are exact
/// (inputs inside the kernel window). Returns the sum and a bound on its
/// absolute error.
#[inline(always)]
pub(crate) fn dot_dd<A: Arith, const D: usize>(x: &[Dd; D], y: &[Dd; D]) -> (Dd, f64) {
    let mut s = 0.0;
    let mut c = 0.0;
    let mut mag = 0.0;
    for i in 0..D {
        let (p, e) = A::two_prod(x[i].hi, y[i].hi);
        let (s2, f) = two_sum(s, p);
        s = s2;
        c += f + e + (x[i].hi * y[i].lo + x[i].lo * y[i].hi);
        mag += p.abs();
    }
    // The compensation term c collects D exact errors, D rounded cross terms
    // (each below 2^-52·|p|) and the rounding of its own additions: all of it
    // is below 2^-100·Σ|p| for D <= 3, with room to spare.
    (Dd::norm(s, c), mag * ERR_DOT)
}

/// Relative error bound used for [`dot_dd`] and [`cross_dd`] results.
pub(crate) const ERR_DOT: f64 = 1.0 / (1u128 << 100) as f64;

/// The 2×2 cross term `x_i·y_j − x_j·y_i` of double-double vectors, with a
/// bound on its absolute error.
#[inline(always)]
pub(crate) fn cross_dd<A: Arith>(xi: Dd, xj: Dd, yi: Dd, yj: Dd) -> (Dd, f64) {
    let (p1, e1) = A::two_prod(xi.hi, yj.hi);
    let (p2, e2) = A::two_prod(xj.hi, yi.hi);
    let (s, f) = two_diff(p1, p2);
    let c = f + (e1 - e2) + ((xi.hi * yj.lo + xi.lo * yj.hi) - (xj.hi * yi.lo + xj.lo * yi.hi));
    (Dd::norm(s, c), (p1.abs() + p2.abs()) * ERR_DOT)
}

/// Round `(x.hi + x.lo)·2^k` to a double, faithfully, including results that
/// land in the subnormal range or overflow.
pub(crate) fn ldexp_dd(x: Dd, k: i32) -> f64 {
    if k == 0 {
        return x.hi;
    }
    let s = ldexp(x.hi, k);
    if s.abs() >= f64::MIN_POSITIVE || s == 0.0 && x.hi == 0.0 || !s.is_finite() {
        return s;
    }
    // Subnormal (or underflowed) result: the rounding of hi alone may be off by
    // the low part; correct by comparing the exact residual with half a quantum.
    let back = ldexp(s, -k); // exact: s has fewer significant bits than hi
    let r = x.hi - back; // exact
    let half = ldexp(f64::from_bits(1), -k) * 0.5; // half a quantum, unscaled
    if (r - half) + x.lo > 0.0 {
        next_up(s)
    } else if (r + half) + x.lo < 0.0 {
        next_down(s)
    } else {
        s
    }
}

/// `x·2^k` with a single rounding (no intermediate overflow or underflow).
pub(crate) fn ldexp(x: f64, k: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let e = exponent(x);
    // y = x·2^-e lies in [1, 2): both steps are exact.
    let y = x * pow2((-e).clamp(-1022, 1023)) * pow2(-e - (-e).clamp(-1022, 1023));
    let r = e.saturating_add(k);
    if r > 1023 {
        f64::INFINITY.copysign(x)
    } else if r >= -1022 {
        y * pow2(r)
    } else if r >= -1074 {
        // One rounding, by a subnormal power of two.
        y * f64::from_bits(1u64 << (r + 1074))
    } else if r == -1075 && y.abs() > 1.0 {
        f64::from_bits(1).copysign(x)
    } else {
        0.0f64.copysign(x)
    }
}

/// `2^k` for `-1022 <= k <= 1023`.
#[inline(always)]
pub(crate) fn pow2(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// The binary exponent of a finite non-zero `x` (`x = m·2^e`, `1 <= |m| < 2`).
pub(crate) fn exponent(x: f64) -> i32 {
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 {
        // Subnormal: x = m·2^-1074 with the leading bit of m at position bl − 1.
        let m = bits & ((1u64 << 52) - 1);
        let bl = 64 - m.leading_zeros() as i32;
        bl - 1 - 1074
    } else {
        e - 1023
    }
}

pub(crate) fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let b = x.to_bits();
    f64::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

pub(crate) fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fma_and_dekker_products_agree() {
        let xs = [1.0, 0.1, 3.0e100, -7.3e-200, 123456789.123, 2.0f64.powi(-480), 2.0f64.powi(499)];
        for &a in &xs {
            for &b in &xs {
                if (a * b).abs() > 2f64.powi(-960) && (a * b).abs() < 2f64.powi(990) {
                    assert_eq!(Fma::two_prod(a, b), Dekker::two_prod(a, b), "{a} * {b}");
                }
            }
        }
    }

    #[test]
    fn exponent_of_normal_and_subnormal() {
        assert_eq!(exponent(1.0), 0);
        assert_eq!(exponent(1.5), 0);
        assert_eq!(exponent(0.75), -1);
        assert_eq!(exponent(f64::MAX), 1023);
        assert_eq!(exponent(f64::MIN_POSITIVE), -1022);
        assert_eq!(exponent(f64::from_bits(1)), -1074);
        assert_eq!(exponent(f64::from_bits(3)), -1073);
    }

    #[test]
    fn ldexp_rounds_once() {
        assert_eq!(ldexp(1.0, -1074), f64::from_bits(1));
        assert_eq!(ldexp(1.0, 1023), 2f64.powi(1023));
        assert_eq!(ldexp(3.0, -1075), f64::from_bits(2)); // 1.5 quanta -> tie to even 2
        assert_eq!(ldexp(f64::MAX, -2000), f64::MAX * 2f64.powi(-1000) * 2f64.powi(-1000));
        assert_eq!(ldexp(f64::MAX, -2100), 0.0);
        assert_eq!(ldexp(2f64.powi(-1000), 1500), 2f64.powi(500));
    }

    #[test]
    fn ldexp_dd_uses_low_part_in_subnormal_range() {
        // hi sits exactly on a half-quantum boundary; lo decides.
        let hi = 1.5;
        let x = Dd::new(hi, 1e-30);
        assert_eq!(ldexp_dd(x, -1074), f64::from_bits(2));
        let x = Dd::new(hi, -1e-30);
        assert_eq!(ldexp_dd(x, -1074), f64::from_bits(1));
    }
}
