//! The exact rational reference and the adversarial input families shared by
//! the integration tests.
//!
//! The reference is written independently of the library: plain rational
//! arithmetic (num-rational) on the exact values of the input floats, with
//! faithfulness checked by comparing rationals, never by a tolerance.
#![allow(dead_code)]

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, Zero};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist::Region;

mod checks;
#[allow(unused_imports)]
pub use checks::*;

pub type Q = BigRational;

/// The exact value of a finite float.
pub fn q(x: f64) -> Q {
    Q::from_float(x).expect("finite")
}

/// Exact point–segment (or point–line) projection.
pub struct Exact<const D: usize> {
    pub region: Region,
    pub t: Q,
    pub point: [Q; D],
    pub d2: Q,
}

pub fn exact<const D: usize>(a: [f64; D], b: [f64; D], p: [f64; D], line: bool) -> Exact<D> {
    let a = a.map(q);
    let b = b.map(q);
    let p = p.map(q);
    let ab: Vec<Q> = (0..D).map(|i| &b[i] - &a[i]).collect();
    let ap: Vec<Q> = (0..D).map(|i| &p[i] - &a[i]).collect();
    let l: Q = ab.iter().map(|x| x * x).sum();
    let n: Q = ab.iter().zip(&ap).map(|(x, y)| x * y).sum();
    let (t, region) = if l.is_zero() {
        (Q::zero(), Region::Start)
    } else if line {
        (&n / &l, Region::Interior)
    } else if !n.is_positive() {
        (Q::zero(), Region::Start)
    } else if n >= l {
        (Q::from_integer(1.into()), Region::End)
    } else {
        (&n / &l, Region::Interior)
    };
    let point: [Q; D] = std::array::from_fn(|i| match region {
        Region::Start => a[i].clone(),
        Region::End => b[i].clone(),
        _ => &a[i] + &t * &ab[i],
    });
    let d2 = (0..D).map(|i| (&p[i] - &point[i]) * (&p[i] - &point[i])).sum();
    Exact { region, t, point, d2 }
}

/// A float type under test, as far as the reference needs it.
pub trait F: Copy + PartialEq + std::fmt::Debug {
    fn to_q(self) -> Option<Q>;
    fn next_up(self) -> Self;
    fn next_down(self) -> Self;
    fn is_inf(self) -> bool;
    fn max_q() -> Q;
    fn zero() -> Self;
}

impl F for f64 {
    fn to_q(self) -> Option<Q> {
        Q::from_float(self)
    }
    fn next_up(self) -> Self {
        if self == 0.0 {
            return f64::from_bits(1);
        }
        let b = self.to_bits();
        f64::from_bits(if self > 0.0 { b + 1 } else { b - 1 })
    }
    fn next_down(self) -> Self {
        -F::next_up(-self)
    }
    fn is_inf(self) -> bool {
        self.is_infinite()
    }
    fn max_q() -> Q {
        q(f64::MAX)
    }
    fn zero() -> Self {
        0.0
    }
}

impl F for f32 {
    fn to_q(self) -> Option<Q> {
        Q::from_float(self as f64)
    }
    fn next_up(self) -> Self {
        if self == 0.0 {
            return f32::from_bits(1);
        }
        let b = self.to_bits();
        f32::from_bits(if self > 0.0 { b + 1 } else { b - 1 })
    }
    fn next_down(self) -> Self {
        -F::next_up(-self)
    }
    fn is_inf(self) -> bool {
        self.is_infinite()
    }
    fn max_q() -> Q {
        q(f32::MAX as f64)
    }
    fn zero() -> Self {
        0.0
    }
}

/// Is `f` a faithful rounding of the exact `v` (one of the two floats around
/// it, or `v` itself when representable)?
pub fn faithful<T: F>(f: T, v: &Q) -> bool {
    if f.is_inf() {
        return v.abs() > T::max_q() && (f.to_q().is_none());
    }
    let Some(fq) = f.to_q() else { return false };
    if &fq == v {
        return true;
    }
    if &fq < v {
        match f.next_up().to_q() {
            Some(u) => &u > v,
            None => v > &T::max_q(), // f is MAX and v beyond it
        }
    } else {
        match f.next_down().to_q() {
            Some(d) => &d < v,
            None => v < &-T::max_q(), // f is -MAX and v beyond it
        }
    }
}

/// Is `f` a faithful rounding of `sqrt(v2)` (`v2 >= 0` exact)? Compares
/// squares exactly.
pub fn faithful_sqrt<T: F>(f: T, v2: &Q) -> bool {
    if f.is_inf() {
        // Overflow is the right answer only when sqrt(v2) exceeds MAX.
        return f.to_q().is_none() && v2 > &(T::max_q() * T::max_q());
    }
    let Some(fq) = f.to_q() else { return false };
    if fq.is_negative() {
        return false;
    }
    let sq = |x: &Q| x * x;
    if &sq(&fq) == v2 {
        return true;
    }
    if &sq(&fq) < v2 {
        match f.next_up().to_q() {
            Some(u) => &sq(&u) > v2,
            None => true,
        }
    } else {
        if fq.is_zero() {
            return false;
        }
        match f.next_down().to_q() {
            Some(d) => &sq(&d) < v2,
            None => false,
        }
    }
}

/// How many ulps `f` is from `v` (for reporting the fast tier), as f64.
pub fn abs_err(f: f64, v: &Q) -> f64 {
    let d = q(f) - v;
    let (n, den) = (d.numer().clone(), d.denom().clone());
    ratio_to_f64(&n.abs(), &den)
}

pub fn ratio_to_f64(n: &BigInt, d: &BigInt) -> f64 {
    // Good enough for error reporting: scale to keep ~60 bits.
    let nb = n.bits() as i64;
    let db = d.bits() as i64;
    let shift = nb - db - 60;
    let (n2, d2) = if shift > 0 { (n.clone(), d << (shift as usize)) } else { (n << ((-shift) as usize), d.clone()) };
    let qq = &n2 / &d2;
    let v: f64 = qq.to_string().parse().unwrap_or(f64::INFINITY);
    v * 2f64.powi(shift.clamp(-1100, 1100) as i32)
}

pub fn to_f64_approx(v: &Q) -> f64 {
    let s = if v.is_negative() { -1.0 } else { 1.0 };
    s * ratio_to_f64(&v.numer().abs(), v.denom())
}

// ---------------------------------------------------------------- families

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// One query: segment `a → b` and point `p`.
pub type Case<const D: usize> = ([f64; D], [f64; D], [f64; D]);

/// The adversarial families of NUMERICS.md.
pub const FAMILIES: &[&str] = &[
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
];

fn unit<R: Rng>(r: &mut R) -> f64 {
    r.r#gen::<f64>()
}

fn log_uniform<R: Rng>(r: &mut R, lo: f64, hi: f64) -> f64 {
    (lo.ln() + r.r#gen::<f64>() * (hi.ln() - lo.ln())).exp()
}

fn sign<R: Rng>(r: &mut R) -> f64 {
    if r.r#gen::<bool>() {
        1.0
    } else {
        -1.0
    }
}

fn vec_of<R: Rng, const D: usize>(r: &mut R, f: impl Fn(&mut R) -> f64) -> [f64; D] {
    let mut v = [0.0; D];
    for x in &mut v {
        *x = f(r);
    }
    v
}

/// A unit vector perpendicular to `v` (approximately; only its direction
/// matters to the generators).
fn perp<const D: usize>(v: &[f64; D], r: &mut impl Rng) -> [f64; D] {
    let mut w = [0.0; D];
    if D == 2 {
        w[0] = -v[1];
        w[1] = v[0];
    } else {
        let mut x: [f64; D] = vec_of(r, |r| unit(r) - 0.5);
        let vv: f64 = v.iter().map(|a| a * a).sum();
        let xv: f64 = x.iter().zip(v).map(|(a, b)| a * b).sum();
        for i in 0..D {
            x[i] -= xv / vv * v[i];
        }
        w = x;
    }
    let n = w.iter().map(|a| a * a).sum::<f64>().sqrt();
    w.map(|a| a / n)
}

fn along<const D: usize>(a: &[f64; D], b: &[f64; D], t: f64) -> [f64; D] {
    std::array::from_fn(|i| a[i] + t * (b[i] - a[i]))
}

pub fn generate<const D: usize>(family: &str, seed: u64, n: usize) -> Vec<Case<D>> {
    let mut r = rng(seed ^ (family.len() as u64) << 32 ^ family.bytes().map(u64::from).sum::<u64>());
    (0..n).map(|i| one::<D>(family, &mut r, i)).collect()
}

fn one<const D: usize>(family: &str, r: &mut ChaCha8Rng, i: usize) -> Case<D> {
    match family {
        "uniform" => (vec_of(r, unit), vec_of(r, unit), vec_of(r, unit)),
        "utm" => {
            let a: [f64; D] = vec_of(r, |r| 1e6 + unit(r) * 9e6);
            let b = std::array::from_fn(|i| a[i] + (unit(r) - 0.5) * 20.0);
            let p = std::array::from_fn(|i| a[i] + (unit(r) - 0.5) * 200.0);
            (a, b, p)
        }
        "near_degenerate" => {
            let a: [f64; D] = vec_of(r, |r| sign(r) * log_uniform(r, 1e-3, 1e6));
            let b =
                if i.is_multiple_of(5) { a } else { std::array::from_fn(|i| a[i] * (1.0 + (unit(r) - 0.5) * 1e-12)) };
            let p = std::array::from_fn(|i| a[i] + (unit(r) - 0.5) * a[i].abs() * 1e-9);
            (a, b, p)
        }
        "collinear_beyond" => {
            let a: [f64; D] = vec_of(r, |r| (unit(r) - 0.5) * 100.0);
            let b: [f64; D] = vec_of(r, |r| (unit(r) - 0.5) * 100.0);
            let s = if r.r#gen::<bool>() { -log_uniform(r, 1e-6, 1e6) } else { 1.0 + log_uniform(r, 1e-6, 1e6) };
            (a, b, along(&a, &b, s))
        }
        "near_interior" => {
            let a: [f64; D] = vec_of(r, |r| (unit(r) - 0.5) * 1e3);
            let b: [f64; D] = vec_of(r, |r| (unit(r) - 0.5) * 1e3);
            let t = unit(r);
            let len = (0..D).map(|i| (b[i] - a[i]).powi(2)).sum::<f64>().sqrt();
            let n = perp(&std::array::from_fn::<f64, D, _>(|i| b[i] - a[i]), r);
            let off = sign(r) * log_uniform(r, 1e-16, 1e-8) * len;
            let base = along(&a, &b, t);
            (a, b, std::array::from_fn(|i| base[i] + off * n[i]))
        }
        "on_segment" => {
            if i.is_multiple_of(2) {
                // Exactly on: small-integer vertices, dyadic t.
                let a: [f64; D] = vec_of(r, |r| (r.gen_range(-1000i32..1000)) as f64);
                let b: [f64; D] = vec_of(r, |r| (r.gen_range(-1000i32..1000)) as f64);
                let t = r.gen_range(1u32..1024) as f64 / 1024.0;
                (a, b, along(&a, &b, t))
            } else {
                // Rounded onto the segment (within half an ulp of it).
                let a: [f64; D] = vec_of(r, |r| (unit(r) - 0.5) * 10.0);
                let b: [f64; D] = vec_of(r, |r| (unit(r) - 0.5) * 10.0);
                (a, b, along(&a, &b, unit(r)))
            }
        }
        "one_ulp_off" => {
            let a: [f64; D] = vec_of(r, |r| (r.gen_range(-1000i32..1000)) as f64);
            let b: [f64; D] = vec_of(r, |r| (r.gen_range(-1000i32..1000)) as f64);
            let t = r.gen_range(1u32..1024) as f64 / 1024.0;
            let mut p = along(&a, &b, t);
            let k = r.gen_range(0..D);
            p[k] = if r.r#gen::<bool>() { F::next_up(p[k]) } else { F::next_down(p[k]) };
            (a, b, p)
        }
        "perpendicular_at_vertex" => {
            let a: [f64; D] = vec_of(r, |r| (r.gen_range(-100i32..100)) as f64);
            let b: [f64; D] = vec_of(r, |r| (r.gen_range(-100i32..100)) as f64);
            let ab: [f64; D] = std::array::from_fn(|i| b[i] - a[i]);
            // An integer vector perpendicular to ab.
            let w: [f64; D] = if D == 2 {
                std::array::from_fn(|i| if i == 0 { -ab[1] } else { ab[0] })
            } else {
                let e: [f64; D] = vec_of(r, |r| (r.gen_range(-5i32..5)) as f64);
                std::array::from_fn(|i| ab[(i + 1) % 3] * e[(i + 2) % 3] - ab[(i + 2) % 3] * e[(i + 1) % 3])
            };
            let base = if r.r#gen::<bool>() { a } else { b };
            let s = r.gen_range(-3i32..=3) as f64;
            (a, b, std::array::from_fn(|i| base[i] + s * w[i]))
        }
        "huge" => {
            let m = log_uniform(r, 1e150, 1e307);
            (vec_of(r, |r| (unit(r) - 0.5) * m), vec_of(r, |r| (unit(r) - 0.5) * m), vec_of(r, |r| (unit(r) - 0.5) * m))
        }
        "tiny" => {
            let m = log_uniform(r, 1e-307, 1e-150);
            (vec_of(r, |r| (unit(r) - 0.5) * m), vec_of(r, |r| (unit(r) - 0.5) * m), vec_of(r, |r| (unit(r) - 0.5) * m))
        }
        "ab_squared_underflows" => {
            let a: [f64; D] = vec_of(r, |r| (unit(r) - 0.5) * 2.0);
            let b = std::array::from_fn(|i| a[i] + (unit(r) - 0.5) * 1e-170);
            let p = std::array::from_fn(|i| a[i] + (unit(r) - 0.5) * log_uniform(r, 1e-175, 1e-160));
            (a, b, p)
        }
        "mixed_magnitudes" => {
            let g = |r: &mut ChaCha8Rng| {
                if r.gen_range(0..4) == 0 {
                    0.0
                } else {
                    sign(r) * log_uniform(r, 1e-300, 1e300)
                }
            };
            (vec_of(r, g), vec_of(r, g), vec_of(r, g))
        }
        "any_finite_bits" => {
            let g = |r: &mut ChaCha8Rng| loop {
                let x = f64::from_bits(r.r#gen::<u64>());
                if x.is_finite() {
                    return x;
                }
            };
            (vec_of(r, g), vec_of(r, g), vec_of(r, g))
        }
        "ties" => {
            // The distance is exactly halfway between two doubles: a runs along
            // y = 2^-53·s, p sits at y = (1 + (j+1)·2^-52)·s, so the exact
            // p_y − a_y is (1 + (2j+1)·2^-53)·s. Scaled by powers of two, both
            // signs; rounding decisions that differ only on ties show here.
            let scale = 2f64.powi(r.gen_range(-60..60)) * sign(r);
            let j = r.gen_range(0u64..1 << 20) as f64;
            let len = r.gen_range(1u32..64) as f64;
            let x = r.gen_range(1u32..(len as u32).max(2)) as f64 - 0.5 * r.gen_range(0..2) as f64;
            let y0 = 2f64.powi(-53);
            let py = 1.0 + (j + 1.0) * 2f64.powi(-52);
            let mut a = [0.0; D];
            let mut b = [0.0; D];
            let mut p = [0.0; D];
            a[1] = y0 * scale;
            b[0] = len * scale;
            b[1] = y0 * scale;
            p[0] = x * scale;
            p[1] = py * scale;
            if i.is_multiple_of(3) {
                // Past the end vertex along x: the tie is in the vertex distance.
                p[0] = (len + 1.0) * scale;
            }
            (a, b, p)
        }
        other => panic!("unknown family {other}"),
    }
}

/// Rounds a case to f32 (for the f32 families), keeping it finite.
pub fn to_f32<const D: usize>(c: &Case<D>) -> ([f32; D], [f32; D], [f32; D]) {
    let f = |x: f64| {
        let y = x as f32;
        if y.is_finite() {
            y
        } else {
            f32::MAX.copysign(x as f32)
        }
    };
    (c.0.map(f), c.1.map(f), c.2.map(f))
}

/// Distances at, just below and just above powers of two (where the ulp
/// changes, and a rounded square root of a rounded `d²` would be the first
/// to stop being faithful, see `eft::sqrt_rounded` in the library), and a
/// few hundred ulps from them: at both vertices and in the interior, exact
/// and not, on the segment from the origin to `(1, 0, …)`, then the same
/// on a slanted one.
pub fn binade_edges<const D: usize>() -> Vec<Case<D>> {
    let (a, mut b) = ([0.0; D], [0.0; D]);
    b[0] = 1.0;
    let mut slant = [0.0; D];
    slant[0] = 3.0;
    slant[1] = 4.0;
    let steps = (-12i64..=12).chain((240..=270).flat_map(|j| [j, -j]));
    let mut out = Vec::new();
    for k in [-90, -20, -1, 0, 1, 5, 40, 90] {
        let base = 2f64.powi(k).to_bits() as i64;
        for j in steps.clone() {
            let x = f64::from_bits((base + j) as u64);
            let mut points = Vec::new();
            let mut p = [0.0; D];
            p[0] = -x;
            points.push(p); // start, exactly x
            p[1] = x * 2f64.powi(-30);
            points.push(p); // start, a hair above x
            p[0] = -0.6 * x;
            p[1] = -0.8 * x;
            points.push(p); // start, about x
            let mut p = [0.0; D];
            p[0] = 1.0 + x;
            points.push(p); // end
            let mut p = [0.0; D];
            p[0] = 0.5;
            p[1] = x;
            points.push(p); // interior, exactly x
            p[D - 1] += x * 2f64.powi(-30);
            points.push(p); // interior, about x
            for p in points {
                out.push((a, b, p));
                // The slanted segment: its interior distances are not exact.
                let mut ps = p;
                ps[0] += 1.5;
                ps[1] += 2.0;
                out.push((a, slant, ps));
            }
        }
    }
    out
}
