//! The exact path: every query the double-double kernel cannot certify ends
//! here.
//!
//! All coordinates of one query are put on a common binary grid (`x = X·2^e`,
//! `X` an integer), so differences, dot and cross products are exact big
//! integers. Only the final well-conditioned steps (one division, one square
//! root) are done in floating point, on double-doubles with a separate
//! exponent, which keeps their relative error near `2^-100` whatever the
//! magnitudes: every output is then faithfully rounded.
//!
//! This code is `#[cold]`: on ordinary data it runs for points within about
//! `1e-13` (relative) of a segment's line or of an endpoint's perpendicular,
//! and for queries whose coordinates span more than ~900 binades.

use core::cmp::Ordering;

use num_bigint::{BigInt, Sign};
use num_traits::{Signed, Zero};

use crate::eft::{div_dd, ldexp_dd, sqrt_dd, Dd, Dekker};
use crate::kernel::{Raw, Region};

/// `x = mantissa·2^exp` exactly, for a finite `x`.
fn decompose(x: f64) -> (i64, i32) {
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    let m = (bits & ((1u64 << 52) - 1)) as i64;
    let (m, e) = if e == 0 { (m, -1074) } else { (m | (1i64 << 52), e - 1075) };
    (if x < 0.0 { -m } else { m }, e)
}

/// Puts a set of finite doubles on the grid `2^e` of the smallest of them.
struct Grid {
    e: i32,
}

impl Grid {
    fn new(xs: impl IntoIterator<Item = f64>) -> Grid {
        let e = xs.into_iter().filter(|x| *x != 0.0).map(|x| decompose(x).1).min().unwrap_or(0);
        Grid { e }
    }

    fn int(&self, x: f64) -> BigInt {
        let (m, e) = decompose(x);
        if m == 0 {
            return BigInt::zero();
        }
        BigInt::from(m) << ((e - self.e) as usize)
    }
}

/// A double-double mantissa with a wide exponent: `(m.hi + m.lo)·2^e`.
#[derive(Clone, Copy, Debug)]
struct Ext {
    m: Dd,
    e: i64,
}

impl Ext {
    const ZERO: Ext = Ext { m: Dd::ZERO, e: 0 };

    /// `x·2^scale`, keeping the top 126 bits of `x` (relative error < 2^-125).
    fn from_big(x: &BigInt, scale: i64) -> Ext {
        if x.is_zero() {
            return Ext::ZERO;
        }
        let mag = x.magnitude();
        let bits = mag.bits() as i64;
        let shift = bits - 127;
        let top = if shift > 0 { mag >> (shift as usize) } else { mag << ((-shift) as usize) };
        let digits = top.to_u64_digits();
        let top: u128 = digits[0] as u128 | (digits.get(1).copied().unwrap_or(0) as u128) << 64;
        // top < 2^127 with its leading bit at 126.
        let hi = top as f64;
        let lo = (top as i128 - hi as i128) as f64;
        let k = 2f64.powi(-126);
        let mut m = Dd::norm(hi * k, lo * k);
        if x.sign() == Sign::Minus {
            m = Dd::new(-m.hi, -m.lo);
        }
        Ext { m, e: shift + 126 + scale }
    }

    fn is_zero(self) -> bool {
        self.m.hi == 0.0
    }

    fn div(self, o: Ext) -> Ext {
        if self.is_zero() {
            return Ext::ZERO;
        }
        Ext { m: div_dd::<Dekker>(self.m, o.m), e: self.e - o.e }
    }

    fn sqrt(self) -> Ext {
        if self.is_zero() {
            return Ext::ZERO;
        }
        let (m, e) = if self.e % 2 != 0 { (self.m.scale(2.0), self.e - 1) } else { (self.m, self.e) };
        Ext { m: sqrt_dd::<Dekker>(m), e: e / 2 }
    }

    fn to_f64(self) -> f64 {
        if self.is_zero() {
            return self.m.hi;
        }
        ldexp_dd(self.m, self.e.clamp(-4000, 4000) as i32)
    }
}

fn sq_norm(v: &[BigInt]) -> BigInt {
    v.iter().map(|x| x * x).sum()
}

fn dot(u: &[BigInt], v: &[BigInt]) -> BigInt {
    u.iter().zip(v).map(|(x, y)| x * y).sum()
}

/// `Σ_{i<j} (u_i v_j − u_j v_i)²` = `|u|²|v|² − (u·v)²` (Lagrange).
fn cross_sq<const D: usize>(u: &[BigInt], v: &[BigInt]) -> BigInt {
    let mut s = BigInt::zero();
    for i in 0..D {
        for j in i + 1..D {
            let c = &u[i] * &v[j] - &u[j] * &v[i];
            s += &c * &c;
        }
    }
    s
}

/// Exact point–segment (`line == false`) or point–line projection.
#[cold]
#[inline(never)]
pub(crate) fn project<const D: usize>(a: &[f64; D], b: &[f64; D], p: &[f64; D], line: bool) -> Raw<D> {
    let g = Grid::new(a.iter().chain(b).chain(p).copied());
    let ai: Vec<BigInt> = a.iter().map(|&x| g.int(x)).collect();
    let ab: Vec<BigInt> = (0..D).map(|i| g.int(b[i]) - &ai[i]).collect();
    let ap: Vec<BigInt> = (0..D).map(|i| g.int(p[i]) - &ai[i]).collect();
    let e = g.e as i64;

    let l = sq_norm(&ab);
    let n = dot(&ap, &ab);
    let endpoint = |v: &[BigInt], q: [f64; D], t: f64, region: Region| {
        let d2 = Ext::from_big(&sq_norm(v), 2 * e);
        Raw { point: q, t, d: d2.sqrt().to_f64(), d2: d2.to_f64(), region }
    };
    if l.is_zero() || (!line && !n.is_positive()) {
        return endpoint(&ap, *a, 0.0, Region::Start);
    }
    if !line && n >= l {
        let bp: Vec<BigInt> = (0..D).map(|i| &ap[i] - &ab[i]).collect();
        return endpoint(&bp, *b, 1.0, Region::End);
    }
    let le = Ext::from_big(&l, 0);
    let d2 = Ext::from_big(&cross_sq::<D>(&ab, &ap), 2 * e).div(le);
    let t = Ext::from_big(&n, 0).div(le).to_f64();
    let mut q = [0.0; D];
    for i in 0..D {
        let num = &ai[i] * &l + &n * &ab[i];
        q[i] = Ext::from_big(&num, e).div(le).to_f64();
    }
    Raw { point: q, t, d: d2.sqrt().to_f64(), d2: d2.to_f64(), region: Region::Interior }
}

/// Exact signed distance from `p` to the 2D line through `a`, `b`
/// (`a != b`): positive on the left of `a → b`.
#[cold]
#[inline(never)]
pub(crate) fn signed_distance_line(a: &[f64; 2], b: &[f64; 2], p: &[f64; 2]) -> f64 {
    let g = Grid::new(a.iter().chain(b).chain(p).copied());
    let ab = [g.int(b[0]) - g.int(a[0]), g.int(b[1]) - g.int(a[1])];
    let ap = [g.int(p[0]) - g.int(a[0]), g.int(p[1]) - g.int(a[1])];
    let c = &ab[0] * &ap[1] - &ab[1] * &ap[0];
    let e = g.e as i64;
    Ext::from_big(&c, 2 * e).div(Ext::from_big(&sq_norm(&ab), 2 * e).sqrt()).to_f64()
}

/// Exact signed distance `(n·p − offset)/|n|` (`n != 0`).
#[cold]
#[inline(never)]
pub(crate) fn signed_distance_plane(n: &[f64; 3], offset: f64, p: &[f64; 3]) -> f64 {
    let gn = Grid::new(n.iter().copied());
    let gp = Grid::new(p.iter().copied().chain([offset]));
    let ni: Vec<BigInt> = n.iter().map(|&x| gn.int(x)).collect();
    let pi: Vec<BigInt> = p.iter().map(|&x| gp.int(x)).collect();
    // n·p is on the grid 2^(en+ep); the offset on 2^ep, i.e. OFF·2^-en there.
    let np = dot(&ni, &pi);
    let off = gp.int(offset);
    let (num, e) = if gn.e <= 0 {
        (np - (off << ((-gn.e) as usize)), gn.e as i64 + gp.e as i64)
    } else {
        ((np << (gn.e as usize)) - off, gp.e as i64)
    };
    let norm = Ext::from_big(&sq_norm(&ni), 2 * gn.e as i64).sqrt();
    Ext::from_big(&num, e).div(norm).to_f64()
}

/// Exact comparison of `dist(p, segment)²` with `r²` (`r >= 0`).
#[cold]
#[inline(never)]
pub(crate) fn segment_cmp<const D: usize>(a: &[f64; D], b: &[f64; D], p: &[f64; D], r: f64) -> Ordering {
    let g = Grid::new(a.iter().chain(b).chain(p).copied().chain([r]));
    let ai: Vec<BigInt> = a.iter().map(|&x| g.int(x)).collect();
    let ab: Vec<BigInt> = (0..D).map(|i| g.int(b[i]) - &ai[i]).collect();
    let ap: Vec<BigInt> = (0..D).map(|i| g.int(p[i]) - &ai[i]).collect();
    let rr = {
        let r = g.int(r);
        &r * &r
    };
    let l = sq_norm(&ab);
    let n = dot(&ap, &ab);
    if l.is_zero() || !n.is_positive() {
        return sq_norm(&ap).cmp(&rr);
    }
    if n >= l {
        let bp: Vec<BigInt> = (0..D).map(|i| &ap[i] - &ab[i]).collect();
        return sq_norm(&bp).cmp(&rr);
    }
    cross_sq::<D>(&ab, &ap).cmp(&(rr * l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decompose_round_trips() {
        for x in [1.0, -0.1, 3e300, -5e-324, 2.2250738585072014e-308, 123.456] {
            let (m, e) = decompose(x);
            assert_eq!(crate::eft::ldexp(m as f64, e), x);
        }
    }

    #[test]
    fn ext_from_big_keeps_precision() {
        let x = (BigInt::from(1u8) << 200) + BigInt::from(3u8);
        let v = Ext::from_big(&x, -200);
        assert_eq!(v.to_f64(), 1.0);
        let x = BigInt::from(-12345i64);
        assert_eq!(Ext::from_big(&x, -3).to_f64(), -12345.0 / 8.0);
    }
}
