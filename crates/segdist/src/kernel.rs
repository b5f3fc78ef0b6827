//! The accurate scalar kernel on `f64` coordinates, for any dimension.
//!
//! Design (see `NUMERICS.md` in the project's shared notes and
//! `ARCHITECTURE.md`):
//!
//! 1. The differences `b − a`, `p − a`, `p − b` are formed exactly as
//!    double-doubles (TwoDiff).
//! 2. If every component lies in the *window* `[2^-480, 2^500]` (or is zero),
//!    every product of two components is exact, so `|ab|²`, `ap·ab`, `bp·ab`
//!    and the cross terms are computed as double-doubles with a rigorous
//!    error bound. Otherwise the differences are rescaled by a power of two
//!    and re-checked; queries whose differences span more than the window
//!    even then go to the exact path.
//! 3. Each decision (which region, and whether the cross product, `t` and
//!    every coordinate of `q` are known to ~2^-56 relative) is certified by
//!    its error bound; anything uncertain goes to [`crate::exact`], which
//!    computes in big integers.
//! 4. Results are kept as double-double mantissas with a separate exponent
//!    until the single final rounding ([`ldexp_dd`]), so subnormal results are
//!    faithful too.
//!
//! The kernel is compiled twice, with hardware FMA and with Dekker's
//! products, and picked at run time; both give the same bits (see
//! [`crate::eft`]).

use crate::eft::{
    add_dd, cross_dd, div_dd, div_dd_inv, dot_dd, exponent, ldexp, ldexp_dd, mul_dd, pow2, sqrt_dd, sqrt_dd_inv,
    sqrt_rounded, two_diff, two_sum, Arith, Dd, Dekker,
};
use crate::exact;

/// Where on a segment the closest point lies.
///
/// # Example
///
/// ```
/// use segdist::{Region, Segment2};
///
/// let s = Segment2::new([0.0, 0.0], [2.0, 0.0]);
/// assert_eq!(s.closest_point([-1.0, 1.0]).region, Region::Start);
/// assert_eq!(s.closest_point([1.0, 1.0]).region, Region::Interior);
/// assert_eq!(s.closest_point([3.0, 1.0]).region, Region::End);
/// assert_eq!(s.closest_point([f64::NAN, 1.0]).region, Region::Undefined);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// The closest point is the start vertex `a` (`t == 0`); also every
    /// query on a zero-length segment.
    Start,
    /// The closest point lies strictly between the vertices.
    Interior,
    /// The closest point is the end vertex `b` (`t == 1`).
    End,
    /// Some input was NaN or infinite: every number in the result is NaN.
    Undefined,
}

impl Region {
    /// A short lower-case name: `start`, `interior`, `end` or `undefined`.
    ///
    /// ```
    /// assert_eq!(segdist::Region::Interior.as_str(), "interior");
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Region::Start => "start",
            Region::Interior => "interior",
            Region::End => "end",
            Region::Undefined => "undefined",
        }
    }
}

/// A kernel result in `f64` (converted to the caller's type by the API layer).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Raw<const D: usize> {
    pub point: [f64; D],
    pub t: f64,
    pub d: f64,
    pub d2: f64,
    pub region: Region,
}

impl<const D: usize> Raw<D> {
    pub(crate) const NAN: Raw<D> =
        Raw { point: [f64::NAN; D], t: f64::NAN, d: f64::NAN, d2: f64::NAN, region: Region::Undefined };
}

/// `2^k` as a constant (`-1022 <= k <= 1023`).
const fn p2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// The window: differences in `[2^-480, 2^500]` (or zero) have exact pairwise
/// products, far from overflow and underflow.
const WIN_LO: f64 = p2(-480);
const WIN_HI: f64 = p2(500);
/// A quantity whose error bound is `e` is trusted when it exceeds `TRUST·e`
/// (relative error below 2^-58).
pub(crate) const TRUST: f64 = p2(58);
/// A coordinate of `q` is trusted when the cancellation in `a + t·ab` lost
/// fewer than 44 bits.
pub(crate) const CANCEL: f64 = p2(-44);
/// Components below this (after normalisation to `[1, 2)`) cannot change a
/// faithfully rounded sum of squares; they are flushed so no product
/// underflows (which would make FMA and Dekker products differ).
const FLUSH: f64 = p2(-450);
/// Smallest |q| certified without the exact path (lower, the subnormal
/// quantum of the low parts is no longer negligible).
pub(crate) const Q_MIN: f64 = p2(-1010);

#[inline(always)]
fn in_window(x: f64) -> bool {
    let m = x.abs();
    (WIN_LO..=WIN_HI).contains(&m) | (x == 0.0)
}

#[inline(always)]
fn all_in_window<const D: usize>(v: &[Dd; D]) -> bool {
    let mut ok = true;
    for x in v {
        ok &= in_window(x.hi) & in_window(x.lo);
    }
    ok
}

#[inline(always)]
fn all_finite<const D: usize>(a: &[f64; D], b: &[f64; D], p: &[f64; D]) -> bool {
    let mut ok = true;
    for i in 0..D {
        ok &= a[i].is_finite() & b[i].is_finite() & p[i].is_finite();
    }
    ok
}

#[inline(always)]
fn diff<const D: usize>(x: &[f64; D], y: &[f64; D]) -> [Dd; D] {
    let mut r = [Dd::ZERO; D];
    for i in 0..D {
        let (h, l) = two_diff(x[i], y[i]);
        r[i] = Dd::new(h, l);
    }
    r
}

/// The accurate point–segment (`LINE = false`) or point–line projection.
/// With `FULL = false` only `d`, `d2` and `region` are meaningful.
#[inline(always)]
fn accurate<A: Arith, const D: usize, const LINE: bool, const FULL: bool>(
    a: &[f64; D],
    b: &[f64; D],
    p: &[f64; D],
) -> Raw<D> {
    let ab = diff(b, a);
    let ap = diff(p, a);
    // Non-finite input makes some difference NaN or infinite, which fails
    // this test; the careful path sorts it out.
    if hi_in(&ab, DIRECT_LO, DIRECT_HI) & hi_in(&ap, DIRECT_LO, DIRECT_HI) {
        match direct::<A, D, LINE, FULL>(a, b, p, &ab, &ap) {
            Direct::Done(r) => return r,
            Direct::Exact => return exact::project(a, b, p, LINE),
            Direct::Careful => {}
        }
    }
    careful::<A, D, LINE, FULL>(a, b, p, ab, ap)
}

/// The narrower window of the direct path: every intermediate of a certified
/// result then stays far from overflow and underflow, so no exponent needs
/// to be tracked (see [`direct`]).
pub(crate) const DIRECT_LO: f64 = p2(-200);
pub(crate) const DIRECT_HI: f64 = p2(200);
/// Below this, `t·ab` could underflow: the careful path handles it.
pub(crate) const T_MIN: f64 = p2(-300);
/// In 3D a single cross term this small could underflow when squared.
pub(crate) const C_MIN: f64 = p2(-420);

/// Are the high parts zero or inside `[lo, hi]`? (Low parts only ever enter
/// plain products, never an exact one, and are below half an ulp of their high
/// part: they need no check.)
#[inline(always)]
fn hi_in<const D: usize>(v: &[Dd; D], lo: f64, hi: f64) -> bool {
    let mut ok = true;
    for x in v {
        let h = x.hi.abs();
        ok &= (h >= lo) & (h <= hi) | (h == 0.0);
    }
    ok
}

enum Direct<const D: usize> {
    Done(Raw<D>),
    /// Not certified: only exact arithmetic can decide.
    Exact,
    /// Certified in principle, but an intermediate could leave the normal
    /// range: redo with exponent tracking.
    Careful,
}

/// The common case: every difference component in `[2^-200, 2^200]`.
///
/// Products then lie in `[2^-400, 2^400]`; a certified cross term `C` or dot
/// `N` is at least `2^-42` times its largest product (so `>= 2^-442`), the
/// distance at least `2^-42·|ap| >= 2^-242`, `t` is checked `>= 2^-300`: every
/// exact product below is far above `2^-969` (where FMA and Dekker could
/// differ) and every result is a normal double, so results are read straight
/// off the double-doubles.
///
/// The distance is one rounding of a value within `2^-57.9·d` of the
/// exact `d`, or the rounded square root of a `d²` within `2^-57` of the
/// exact one, which is faithful ([`sqrt_rounded`]):
///
/// - At a vertex, `d` is the square root of the sum of squares `|v|²`
///   (within `2^-101` before its rounding).
/// - In 3D, of `d² = Σ C_ij²/L` (within `2^-57`, the certified cross terms
///   being within `2^-58`).
/// - In the 2D interior, `d = |C|/|ab|`, rounded once: the certified `C`
///   is within `2^-58` (relative) of the exact cross product, `|ab|` (from
///   [`sqrt_dd_inv`]) within `2^-100`, and [`div_dd_inv`]'s quotient within
///   `2^-100` of theirs. A value `x` within `2^-57.9·d` of `d`, rounded to
///   nearest, is faithful: within a binade the rounding adds at most half
///   an ulp (`u·2^k` for `d` in `[2^k, 2^(k+1))`, while
///   `2^-57.9·d < 2^-56.9·2^k`), and below `2^k` it cannot fall to the
///   float under it (`x > 2^k·(1 − 2^-57.9)`, above the midpoint
///   `2^k·(1 − 2^-54)`). Cheaper than `C²/L` and its root where `d²` is
///   not asked for (the batch kernels' usual case).
#[inline(always)]
fn direct<A: Arith, const D: usize, const LINE: bool, const FULL: bool>(
    a: &[f64; D],
    b: &[f64; D],
    p: &[f64; D],
    ab: &[Dd; D],
    ap: &[Dd; D],
) -> Direct<D> {
    let (l, _) = dot_dd::<A, D>(ab, ab);
    if l.hi == 0.0 {
        return Direct::Done(endpoint_direct::<A, D>(ap, *a, 0.0, Region::Start));
    }
    let (n, en) = dot_dd::<A, D>(ap, ab);
    if !LINE {
        if n.hi < -2.0 * en || (n.hi == 0.0 && en == 0.0) {
            return Direct::Done(endpoint_direct::<A, D>(ap, *a, 0.0, Region::Start));
        }
        if n.hi <= 2.0 * en {
            return Direct::Exact;
        }
        if p == b {
            return Direct::Done(Raw { point: *b, t: 1.0, d: 0.0, d2: 0.0, region: Region::End });
        }
        // M = bp·ab = N − L, with the error bounds of both.
        let (s, f) = two_diff(n.hi, l.hi);
        let m = s + (f + (n.lo - l.lo));
        let em = 2.0 * (en + l.hi * crate::eft::ERR_DOT);
        if m >= -em {
            if m <= em {
                return Direct::Exact;
            }
            let bp = diff(p, b);
            if !hi_in(&bp, DIRECT_LO, DIRECT_HI) {
                return Direct::Careful;
            }
            return Direct::Done(endpoint_direct::<A, D>(&bp, *b, 1.0, Region::End));
        }
    }
    // Interior (or the line): d² = Σ C_ij² / L; in 2D d = |C|/|ab| too.
    let inv_l = 1.0 / l.hi;
    let (d, d2) = if D == 2 {
        let (c, ec) = cross_dd::<A>(ab[0], ab[1], ap[0], ap[1]);
        if c.hi == 0.0 && ec == 0.0 {
            (0.0, 0.0)
        } else if c.hi.abs() < TRUST * ec {
            return Direct::Exact;
        } else {
            // One rounding of |C|/|ab| (see above).
            let (m, inv_m) = sqrt_dd_inv::<A>(l, inv_l);
            let d = div_dd_inv::<A>(c, m, inv_m).hi.abs();
            (d, div_dd_inv::<A>(mul_dd::<A>(c, c), l, inv_l).hi)
        }
    } else {
        let mut sum = Dd::ZERO;
        let mut err = 0.0;
        let mut any = false;
        for i in 0..D {
            for j in i + 1..D {
                let (c, ec) = cross_dd::<A>(ab[i], ab[j], ap[i], ap[j]);
                any |= ec != 0.0;
                if c.hi != 0.0 && c.hi.abs() < C_MIN {
                    return Direct::Careful;
                }
                sum = add_dd(sum, mul_dd::<A>(c, c));
                err += (2.0 * c.hi.abs() + ec) * ec;
            }
        }
        if any && err * TRUST > sum.hi {
            return Direct::Exact;
        }
        if sum.hi == 0.0 {
            (0.0, 0.0)
        } else {
            let d2 = div_dd_inv::<A>(sum, l, inv_l);
            (sqrt_rounded(d2), d2.hi)
        }
    };
    if !FULL {
        return Direct::Done(Raw { point: [0.0; D], t: 0.0, d, d2, region: Region::Interior });
    }
    if n.hi == 0.0 && en == 0.0 {
        // Line only: N is exactly zero, so t = 0 and q = a.
        return Direct::Done(Raw { point: *a, t: 0.0, d, d2, region: Region::Interior });
    }
    // From here on the distance is settled: if t or q cannot be certified,
    // only they come from the exact path, so `distance()` and
    // `closest_point().distance` always agree bit for bit.
    if n.hi.abs() < TRUST * en {
        return Direct::Done(exact_t_q(a, b, p, LINE, d, d2));
    }
    let t = div_dd_inv::<A>(n, l, inv_l);
    if t.hi.abs() < T_MIN {
        return Direct::Done(exact_t_q(a, b, p, LINE, d, d2));
    }
    let mut q = [0.0; D];
    for i in 0..D {
        let (ph, pl) = A::two_prod(t.hi, ab[i].hi);
        let pl = pl + (t.hi * ab[i].lo + t.lo * ab[i].hi);
        let (s, f) = two_sum(a[i], ph);
        let qi = s + (f + pl);
        if ph != 0.0 && !((qi.abs() >= CANCEL * ph.abs()) & (qi.abs() >= Q_MIN)) {
            return Direct::Done(exact_t_q(a, b, p, LINE, d, d2));
        }
        q[i] = qi;
    }
    Direct::Done(Raw { point: q, t: t.hi, d, d2, region: Region::Interior })
}

/// `t` and `q` from the exact path, the (already faithful) distance kept.
#[cold]
#[inline(never)]
fn exact_t_q<const D: usize>(a: &[f64; D], b: &[f64; D], p: &[f64; D], line: bool, d: f64, d2: f64) -> Raw<D> {
    let r = exact::project(a, b, p, line);
    Raw { d, d2, ..r }
}

/// Endpoint distance on the direct path (`v` inside the direct window).
#[inline(always)]
fn endpoint_direct<A: Arith, const D: usize>(v: &[Dd; D], q: [f64; D], t: f64, region: Region) -> Raw<D> {
    let (s, _) = dot_dd::<A, D>(v, v);
    Raw { point: q, t, d: sqrt_rounded(s), d2: s.hi, region }
}

/// Everything the direct path does not take: wide or mixed magnitudes.
#[cold]
#[inline(never)]
fn careful<A: Arith, const D: usize, const LINE: bool, const FULL: bool>(
    a: &[f64; D],
    b: &[f64; D],
    p: &[f64; D],
    ab: [Dd; D],
    ap: [Dd; D],
) -> Raw<D> {
    if !all_finite(a, b, p) {
        return Raw::NAN;
    }
    let bp = if LINE { [Dd::ZERO; D] } else { diff(p, b) };
    let ok = all_in_window(&ab) & all_in_window(&ap) & all_in_window(&bp);
    let r = if ok {
        core::<A, D, LINE, FULL>(a, b, p, &ab, &ap, &bp, 0)
    } else {
        rescaled::<A, D, LINE, FULL>(a, b, p, ab, ap, bp)
    };
    match r {
        Some(r) => r,
        None => exact::project(a, b, p, LINE),
    }
}

/// Differences outside the window: scale them by a power of two so the
/// largest lies in `[1, 2)`, and retry if they now all fit.
#[cold]
#[inline(never)]
fn rescaled<A: Arith, const D: usize, const LINE: bool, const FULL: bool>(
    a: &[f64; D],
    b: &[f64; D],
    p: &[f64; D],
    mut ab: [Dd; D],
    mut ap: [Dd; D],
    mut bp: [Dd; D],
) -> Option<Raw<D>> {
    let mut m = 0.0f64;
    for x in ab.iter().chain(&ap).chain(&bp) {
        m = m.max(x.hi.abs());
    }
    if !m.is_finite() || m == 0.0 {
        return None;
    }
    let k = exponent(m);
    // A non-zero component must stay non-zero and inside the window once
    // scaled (a zero test after scaling would accept one flushed to zero).
    let scaled_ok = |x: f64, y: f64| (x == 0.0) | ((y.abs() >= WIN_LO) & (y.abs() <= WIN_HI));
    let mut ok = true;
    for x in ab.iter_mut().chain(ap.iter_mut()).chain(bp.iter_mut()) {
        let y = Dd::new(ldexp(x.hi, -k), ldexp(x.lo, -k));
        ok &= scaled_ok(x.hi, y.hi) & scaled_ok(x.lo, y.lo);
        *x = y;
    }
    if !ok {
        return None;
    }
    core::<A, D, LINE, FULL>(a, b, p, &ab, &ap, &bp, k)
}

/// `v → v·2^-e` with `e` the exponent of its largest component, small
/// components flushed to zero.
#[inline(always)]
fn normalise<const D: usize>(v: &[Dd; D]) -> Option<([Dd; D], i32)> {
    let mut m = 0.0f64;
    for x in v {
        m = m.max(x.hi.abs());
    }
    if m == 0.0 {
        return None;
    }
    let e = exponent(m);
    let s = pow2(-e);
    let flush = |x: f64| if (x * s).abs() < FLUSH { 0.0 } else { x * s };
    let mut r = [Dd::ZERO; D];
    for i in 0..D {
        r[i] = Dd::new(flush(v[i].hi), flush(v[i].lo));
    }
    Some((r, e))
}

/// Distance and squared distance to an endpoint, from the exact difference
/// vector `v` (scaled by `2^-k`).
#[inline(always)]
fn endpoint<A: Arith, const D: usize>(v: &[Dd; D], k: i32, q: [f64; D], t: f64, region: Region) -> Raw<D> {
    let Some((v, e)) = normalise(v) else {
        return Raw { point: q, t, d: 0.0, d2: 0.0, region };
    };
    let (s, _) = dot_dd::<A, D>(&v, &v);
    let r = sqrt_dd::<A>(s);
    let e = e + k;
    Raw { point: q, t, d: ldexp_dd(r, e), d2: ldexp_dd(s, 2 * e), region }
}

/// The distance from `p` to the line through `a` and `b`, as a mantissa in
/// about `[0.5, 4)` and an exponent: `d = m·2^e`. `sqrt_l` is `sqrt(L')` with
/// `L = L'·2^(2·el)`. `None` when the cross terms cannot be certified.
#[inline(always)]
fn line_distance<A: Arith, const D: usize>(ab: &[Dd; D], ap: &[Dd; D], sqrt_l: Dd, el: i32) -> Option<(Dd, i32)> {
    if D == 2 {
        let (c, ec) = cross_dd::<A>(ab[0], ab[1], ap[0], ap[1]);
        if c.hi == 0.0 && ec == 0.0 {
            return Some((Dd::ZERO, 0));
        }
        if c.hi.abs() < TRUST * ec {
            return None;
        }
        let ce = exponent(c.hi);
        let c = c.abs().scale(pow2(-ce));
        return Some((div_dd::<A>(c, sqrt_l), ce - el));
    }
    // D >= 3 (and the trivial D < 2): d² = Σ_{i<j} c_ij² / L.
    let mut cs = [Dd::ZERO; 3];
    let mut es = [0.0f64; 3];
    let mut n = 0;
    for i in 0..D {
        for j in i + 1..D {
            if n < 3 {
                let (cij, eij) = cross_dd::<A>(ab[i], ab[j], ap[i], ap[j]);
                cs[n] = cij;
                es[n] = eij;
            }
            n += 1;
        }
    }
    debug_assert!(n <= 3, "dimensions above 3 are not supported");
    let mut m = 0.0f64;
    let mut emax = 0.0f64;
    for i in 0..3 {
        m = m.max(cs[i].hi.abs());
        emax = emax.max(es[i]);
    }
    if m == 0.0 {
        return if emax == 0.0 { Some((Dd::ZERO, 0)) } else { None };
    }
    let (cn, ce) = normalise(&cs)?;
    let s = pow2(-ce);
    let (sum, _) = dot_dd::<A, 3>(&cn, &cn);
    let mut err = 0.0;
    for i in 0..3 {
        let e = es[i] * s;
        err += (2.0 * cn[i].hi.abs() + e) * e;
    }
    if err * TRUST > sum.hi {
        return None;
    }
    Some((div_dd::<A>(sqrt_dd::<A>(sum), sqrt_l), ce - el))
}

/// The certified double-double evaluation on differences scaled by `2^-k`
/// that all lie in the window. `None`: not certified, use the exact path.
#[inline(always)]
fn core<A: Arith, const D: usize, const LINE: bool, const FULL: bool>(
    a: &[f64; D],
    b: &[f64; D],
    p: &[f64; D],
    ab: &[Dd; D],
    ap: &[Dd; D],
    bp: &[Dd; D],
    k: i32,
) -> Option<Raw<D>> {
    let (l, _) = dot_dd::<A, D>(ab, ab);
    if l.hi == 0.0 {
        // a == b exactly: every non-zero component squares to at least 2^-960.
        return Some(endpoint::<A, D>(ap, k, *a, 0.0, Region::Start));
    }
    let (n, en) = dot_dd::<A, D>(ap, ab);
    if !LINE {
        if n.hi < -2.0 * en || (n.hi == 0.0 && en == 0.0) {
            return Some(endpoint::<A, D>(ap, k, *a, 0.0, Region::Start));
        }
        if n.hi <= 2.0 * en {
            return None;
        }
        let (m, em) = dot_dd::<A, D>(bp, ab);
        if m.hi > 2.0 * em || (m.hi == 0.0 && em == 0.0) {
            return Some(endpoint::<A, D>(bp, k, *b, 1.0, Region::End));
        }
        if m.hi >= -2.0 * em {
            return None;
        }
    }
    // L = L'·2^(2·el) with L' in [1, 4).
    let el = exponent(l.hi).div_euclid(2);
    let ls = l.scale(pow2(-2 * el));
    let sqrt_l = sqrt_dd::<A>(ls);
    let (dm, de) = line_distance::<A, D>(ab, ap, sqrt_l, el)?;
    let dk = de + k;
    let d = ldexp_dd(dm, dk);
    let d2 = ldexp_dd(mul_dd::<A>(dm, dm), 2 * dk);
    if !FULL {
        return Some(Raw { point: [0.0; D], t: 0.0, d, d2, region: Region::Interior });
    }
    if n.hi == 0.0 && en == 0.0 {
        // Line only: N is exactly zero, so t = 0 and q = a.
        return Some(Raw { point: *a, t: 0.0, d, d2, region: Region::Interior });
    }
    if n.hi.abs() < TRUST * en {
        return Some(exact_t_q(a, b, p, LINE, d, d2));
    }
    // t = N/L = (N'/L')·2^te
    let ne = exponent(n.hi);
    let tm = div_dd::<A>(n.scale(pow2(-ne)), ls);
    let te = ne - 2 * el;
    let t = ldexp_dd(tm, te);
    let mut q = [0.0; D];
    for i in 0..D {
        // t·ab_i, formed on the scaled values, then unscaled by 2^(te + k).
        let (ph, pl) = A::two_prod(tm.hi, ab[i].hi);
        let pl = pl + (tm.hi * ab[i].lo + tm.lo * ab[i].hi);
        let pu = ldexp(ph, te + k);
        let eu = ldexp(pl, te + k);
        let (s, f) = two_sum(a[i], pu);
        let qi = s + (f + eu);
        if pu != 0.0 && !((qi.abs() >= CANCEL * pu.abs()) & (qi.abs() >= Q_MIN)) {
            return Some(exact_t_q(a, b, p, LINE, d, d2));
        }
        q[i] = qi;
    }
    Some(Raw { point: q, t, d, d2, region: Region::Interior })
}

/// Picks the FMA build when the CPU has it. The two builds give identical
/// bits; the FMA one is about twice as fast.
macro_rules! dispatch {
    ($name:ident, $fma:ident, $line:expr_2021, $full:expr_2021) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "fma")]
        unsafe fn $fma<const D: usize>(a: &[f64; D], b: &[f64; D], p: &[f64; D]) -> Raw<D> {
            accurate::<crate::eft::Fma, D, $line, $full>(a, b, p)
        }

        #[inline]
        pub(crate) fn $name<const D: usize>(a: &[f64; D], b: &[f64; D], p: &[f64; D]) -> Raw<D> {
            #[cfg(target_arch = "x86_64")]
            {
                if has_fma() {
                    // SAFETY: the CPU supports FMA (checked at run time).
                    return unsafe { $fma(a, b, p) };
                }
                accurate::<Dekker, D, $line, $full>(a, b, p)
            }
            #[cfg(all(not(target_arch = "x86_64"), any(target_arch = "aarch64", target_feature = "fma")))]
            {
                accurate::<crate::eft::Fma, D, $line, $full>(a, b, p)
            }
            #[cfg(all(not(target_arch = "x86_64"), not(any(target_arch = "aarch64", target_feature = "fma"))))]
            {
                accurate::<Dekker, D, $line, $full>(a, b, p)
            }
        }
    };
}

dispatch!(segment, segment_fma, false, true);
dispatch!(segment_distance, segment_distance_fma, false, false);
dispatch!(line, line_fma, true, true);
dispatch!(line_distance_only, line_distance_fma, true, false);

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn has_fma() -> bool {
    std::is_x86_feature_detected!("fma")
}

/// The portable (Dekker) build of the segment kernel, for the test that
/// checks it against the dispatched one bit for bit.
#[doc(hidden)]
pub fn segment_portable<const D: usize>(a: &[f64; D], b: &[f64; D], p: &[f64; D]) -> ([f64; D], f64, f64, f64, Region) {
    let r = accurate::<Dekker, D, false, true>(a, b, p);
    (r.point, r.t, r.d, r.d2, r.region)
}

/// The dispatched build of the segment kernel (see [`segment_portable`]).
#[doc(hidden)]
pub fn segment_dispatched<const D: usize>(
    a: &[f64; D],
    b: &[f64; D],
    p: &[f64; D],
) -> ([f64; D], f64, f64, f64, Region) {
    let r = segment(a, b, p);
    (r.point, r.t, r.d, r.d2, r.region)
}

#[inline(always)]
fn as_dd<const D: usize>(x: &[f64; D]) -> [Dd; D] {
    x.map(|v| Dd::new(v, 0.0))
}

/// Signed distance from `p` to the 2D line through `a` and `b`, positive on
/// the left of `a → b`; `|p − a|` when `a == b`. Faithfully rounded.
pub(crate) fn line_signed(a: &[f64; 2], b: &[f64; 2], p: &[f64; 2]) -> f64 {
    let d = line_distance_only(a, b, p).d;
    if d.is_nan() || d == 0.0 || a == b {
        return d; // NaN, zero, or the degenerate line (distance to the point)
    }
    let ab = diff(b, a);
    let ap = diff(p, a);
    if all_in_window(&ab) & all_in_window(&ap) {
        let (c, ec) = cross_dd::<Dekker>(ab[0], ab[1], ap[0], ap[1]);
        if c.hi > 2.0 * ec {
            return d;
        }
        if c.hi < -2.0 * ec {
            return -d;
        }
    }
    exact::signed_distance_line(a, b, p)
}

/// Signed distance `(n·p − offset)/|n|` from `p` to a plane (`n != 0`, all
/// finite). Faithfully rounded.
pub(crate) fn plane_signed(n: &[f64; 3], offset: f64, p: &[f64; 3]) -> f64 {
    if !(p.iter().all(|x| x.is_finite())) {
        return f64::NAN;
    }
    let (nd, pd) = (as_dd(n), as_dd(p));
    if all_in_window(&nd) & all_in_window(&pd) & in_window(offset) {
        let (e, err) = dot_dd::<Dekker, 3>(&nd, &pd);
        let (s, f) = two_diff(e.hi, offset);
        let e = Dd::norm(s, f + e.lo);
        let err = err + offset.abs() * crate::eft::ERR_DOT;
        if e.hi == 0.0 && err == 0.0 {
            return 0.0;
        }
        if e.hi.abs() >= TRUST * err {
            let (nn, _) = dot_dd::<Dekker, 3>(&nd, &nd);
            let en = exponent(nn.hi).div_euclid(2);
            let ee = exponent(e.hi);
            let q = div_dd::<Dekker>(e.scale(pow2(-ee)), sqrt_dd::<Dekker>(nn.scale(pow2(-2 * en))));
            return ldexp_dd(q, ee - en);
        }
    }
    exact::signed_distance_plane(n, offset, p)
}
