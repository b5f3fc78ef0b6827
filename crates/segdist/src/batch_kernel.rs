//! The accurate kernel's direct path, `N` queries at a time.
//!
//! This is [`crate::kernel`]'s `direct` function rewritten without branches:
//! every region is computed for every lane and the right one selected.
//! Each value is produced by the same IEEE operations in the same order as
//! the scalar kernel, so the selected lanes carry the scalar kernel's bits.
//! Lanes the scalar kernel would send elsewhere (outside the direct window,
//! not certified, or needing the exact path for `t`/`q`) are flagged; the
//! batch driver recomputes those with the scalar kernel itself.

// Index loops over coordinates: clearest here, and no closure (see
// `lanes::Z8`) stands between the kernels and their target features.
#![allow(clippy::needless_range_loop)]

use crate::kernel::{CANCEL, C_MIN, DIRECT_HI, DIRECT_LO, Q_MIN, TRUST, T_MIN};
use crate::lanes::Lanes;
#[cfg(target_arch = "x86_64")]
use crate::sweep::Wants;

const ERR_DOT: f64 = crate::eft::ERR_DOT;

/// A double-double per lane.
#[derive(Clone, Copy)]
struct Dd<V> {
    hi: V,
    lo: V,
}

#[inline(always)]
fn two_sum<V: Lanes>(a: V, b: V) -> (V, V) {
    let s = a.add(b);
    let bb = s.sub(a);
    let e = a.sub(s.sub(bb)).add(b.sub(bb));
    (s, e)
}

#[inline(always)]
fn two_diff<V: Lanes>(a: V, b: V) -> (V, V) {
    two_sum(a, b.neg())
}

#[inline(always)]
fn norm<V: Lanes>(hi: V, lo: V) -> Dd<V> {
    let s = hi.add(lo);
    Dd { hi: s, lo: lo.sub(s.sub(hi)) }
}

#[inline(always)]
fn diff<V: Lanes, const D: usize>(x: &[V; D], y: &[V; D]) -> [Dd<V>; D] {
    // (Loops rather than `array::from_fn` here and below: a closure is a
    // function of its own, without the caller's target features, and with
    // intrinsic lanes LLVM then left the operations as calls.)
    let zero = V::splat(0.0);
    let mut r = [Dd { hi: zero, lo: zero }; D];
    for i in 0..D {
        let (h, l) = two_diff(x[i], y[i]);
        r[i] = Dd { hi: h, lo: l };
    }
    r
}

#[inline(always)]
fn dot_dd<V: Lanes, const D: usize>(x: &[Dd<V>; D], y: &[Dd<V>; D]) -> (Dd<V>, V) {
    let mut s = V::splat(0.0);
    let mut c = V::splat(0.0);
    let mut mag = V::splat(0.0);
    for i in 0..D {
        let (p, e) = V::two_prod(x[i].hi, y[i].hi);
        let (s2, f) = two_sum(s, p);
        s = s2;
        c = c.add(f.add(e).add(x[i].hi.mul(y[i].lo).add(x[i].lo.mul(y[i].hi))));
        mag = mag.add(p.abs());
    }
    (norm(s, c), mag.mul(V::splat(ERR_DOT)))
}

/// [`dot_dd`]`(v, v)`, bit for bit, with its first step written out: with
/// `s = 0` and `p0 = v0.hi² >= +0`, `two_sum(0, p0)` is `(p0, +0)`, and
/// `c = 0 + ((+0 + e0) + x0)` is `(e0 + x0) + 0` (the same value, the sign
/// of a zero included: both turn a zero into `+0`). Seven additions fewer.
#[inline(always)]
fn sq_dd<V: Lanes, const D: usize>(v: &[Dd<V>; D]) -> Dd<V> {
    let zero = V::splat(0.0);
    let (mut s, e0) = V::two_prod(v[0].hi, v[0].hi);
    let mut c = e0.add(v[0].hi.mul(v[0].lo).add(v[0].lo.mul(v[0].hi))).add(zero);
    for i in 1..D {
        let (p, e) = V::two_prod(v[i].hi, v[i].hi);
        let (s2, f) = two_sum(s, p);
        s = s2;
        c = c.add(f.add(e).add(v[i].hi.mul(v[i].lo).add(v[i].lo.mul(v[i].hi))));
    }
    norm(s, c)
}

#[inline(always)]
fn cross_dd<V: Lanes>(xi: Dd<V>, xj: Dd<V>, yi: Dd<V>, yj: Dd<V>) -> (Dd<V>, V) {
    let (p1, e1) = V::two_prod(xi.hi, yj.hi);
    let (p2, e2) = V::two_prod(xj.hi, yi.hi);
    let (s, f) = two_diff(p1, p2);
    let c = f.add(e1.sub(e2)).add(xi.hi.mul(yj.lo).add(xi.lo.mul(yj.hi)).sub(xj.hi.mul(yi.lo).add(xj.lo.mul(yi.hi))));
    (norm(s, c), p1.abs().add(p2.abs()).mul(V::splat(ERR_DOT)))
}

#[inline(always)]
fn mul_dd<V: Lanes>(x: Dd<V>, y: Dd<V>) -> Dd<V> {
    let (p, e) = V::two_prod(x.hi, y.hi);
    let e = e.add(x.hi.mul(y.lo).add(x.lo.mul(y.hi)));
    norm(p, e)
}

#[inline(always)]
fn add_dd<V: Lanes>(x: Dd<V>, y: Dd<V>) -> Dd<V> {
    let (s, e) = two_sum(x.hi, y.hi);
    norm(s, e.add(x.lo.add(y.lo)))
}

#[inline(always)]
fn div_dd_inv<V: Lanes>(x: Dd<V>, y: Dd<V>, inv: V) -> Dd<V> {
    let q = x.hi.mul(inv);
    let (p, e) = V::two_prod(q, y.hi);
    let r = x.hi.sub(p).sub(e).add(x.lo).sub(q.mul(y.lo));
    norm(q, r.mul(inv))
}

#[inline(always)]
fn hi_in<V: Lanes, const D: usize>(v: &[Dd<V>; D]) -> V::Mask {
    let (lo, hi, zero) = (V::splat(DIRECT_LO), V::splat(DIRECT_HI), V::splat(0.0));
    let mut ok = zero.eq(zero);
    for x in v {
        let h = x.hi.abs();
        let inside = V::and(lo.le(h), h.le(hi));
        ok = V::and(ok, V::or(inside, h.eq(zero)));
    }
    ok
}

/// The 3D interior's `Σ C_ij²` (the squared cross terms of `ab` and `ap`,
/// a double-double) and the lanes where the scalar kernel would not trust
/// it (they go to the exact path there, so they fall back here).
#[inline(always)]
fn interior_sum<V: Lanes, const D: usize>(ab: &[Dd<V>; D], ap: &[Dd<V>; D]) -> (Dd<V>, V::Mask) {
    let zero = V::splat(0.0);
    let two = V::splat(2.0);
    let trust = V::splat(TRUST);
    let mut sum = Dd { hi: zero, lo: zero };
    let mut err = zero;
    let mut any = V::none();
    let mut tiny = V::none();
    let c_min = V::splat(C_MIN);
    for i in 0..D {
        for j in i + 1..D {
            let (c, ec) = cross_dd(ab[i], ab[j], ap[i], ap[j]);
            any = V::or(any, ec.ne(zero));
            tiny = V::or(tiny, V::and(c.hi.ne(zero), c.hi.abs().lt(c_min)));
            sum = add_dd(sum, mul_dd(c, c));
            err = err.add(two.mul(c.hi.abs()).add(ec).mul(ec));
        }
    }
    (sum, V::or(tiny, V::and(any, sum.hi.lt(err.mul(trust)))))
}

/// [`crate::eft::sqrt_dd_inv`] per lane: `|ab|` as a double-double and an
/// approximate inverse of its high part.
#[inline(always)]
fn sqrt_dd_inv<V: Lanes>(l: Dd<V>, inv_l: V) -> (Dd<V>, V) {
    let r = l.hi.sqrt();
    let inv = r.mul(inv_l);
    let (p, e) = V::two_prod(r, r);
    let res = l.hi.sub(p).sub(e).add(l.lo);
    (Dd { hi: r, lo: V::splat(0.5).mul(res.mul(inv)) }, inv)
}

/// The interior's first part, from `ap`: in 2D the certified cross product
/// `C` itself, in 3D `d² = Σ C_ij²/L` (double-doubles); and the lanes whose
/// cross terms the scalar kernel would not trust (they go to its exact path
/// there, so fall back here). Where `C` or `d²` is exactly zero the scalar
/// kernel returns `+0` for `d` and `d²` without computing; so do
/// [`interior_d`] and [`interior_d2`], computing (`0·x` and `0 + 0` are `+0`
/// there, and `d` takes an absolute value).
#[inline(always)]
fn interior_start<V: Lanes, const D: usize>(ab: &[Dd<V>; D], ap: &[Dd<V>; D], l: Dd<V>, inv_l: V) -> (Dd<V>, V::Mask) {
    if D == 2 {
        let (c, ec) = cross_dd(ab[0], ab[1], ap[0], ap[1]);
        // The scalar kernel's test, its `c.hi == 0 && ec == 0` case aside:
        // with `ec == 0` the comparison is false anyway.
        (c, c.hi.abs().lt(V::splat(TRUST).mul(ec)))
    } else {
        let (s, unc) = interior_sum(ab, ap);
        (div_dd_inv(s, l, inv_l), unc)
    }
}

/// The interior's `d` from [`interior_start`]'s `x`: in 2D `|C|/|ab|`
/// rounded once (`m = |ab|`, `inv_m` from [`sqrt_dd_inv`]), in 3D the
/// rounded square root of `d²` (see [`crate::eft::sqrt_rounded`]).
#[inline(always)]
fn interior_d<V: Lanes, const D: usize>(x: Dd<V>, m: Dd<V>, inv_m: V) -> V {
    if D == 2 {
        div_dd_inv(x, m, inv_m).hi.abs()
    } else {
        x.hi.sqrt()
    }
}

/// The interior's `d²` from [`interior_start`]'s `x` (in 2D `C²/L`).
#[inline(always)]
fn interior_d2<V: Lanes, const D: usize>(x: Dd<V>, l: Dd<V>, inv_l: V) -> V {
    if D == 2 {
        div_dd_inv(mul_dd(x, x), l, inv_l).hi
    } else {
        x.hi
    }
}

/// `t = N/L` (a double-double) and the closest point `a + t·ab` of an
/// interior lane, as the scalar kernel forms them, and the lanes where it
/// would take them from the exact path instead.
#[inline(always)]
fn t_and_q<V: Lanes, const D: usize>(
    a: &[V; D],
    ab: &[Dd<V>; D],
    n: Dd<V>,
    en: V,
    l: Dd<V>,
    inv_l: V,
) -> (Dd<V>, [V; D], V::Mask) {
    let zero = V::splat(0.0);
    let mut tq_exact = n.hi.abs().lt(V::splat(TRUST).mul(en));
    let t = div_dd_inv(n, l, inv_l);
    tq_exact = V::or(tq_exact, t.hi.abs().lt(V::splat(T_MIN)));
    let mut q = *a;
    for i in 0..D {
        let (ph, pl) = V::two_prod(t.hi, ab[i].hi);
        let pl = pl.add(t.hi.mul(ab[i].lo).add(t.lo.mul(ab[i].hi)));
        let (s, f) = two_sum(a[i], ph);
        let qi = s.add(f.add(pl));
        let good = V::and(V::splat(CANCEL).mul(ph.abs()).le(qi.abs()), V::splat(Q_MIN).le(qi.abs()));
        tq_exact = V::or(tq_exact, V::andnot(good, ph.ne(zero)));
        q[i] = qi;
    }
    (t, q, tq_exact)
}

/// Results for `N` lanes. `fallback` marks the lanes to recompute with the
/// scalar kernel; their other fields are meaningless.
pub(crate) struct Out<V: Lanes, const D: usize> {
    pub d: V,
    pub d2: V,
    pub t: V,
    pub q: [V; D],
    /// 0 start, 1 interior, 2 end.
    pub region: V,
    pub fallback: V::Mask,
}

/// `N` accurate point–segment (`LINE = false`) or point–line projections.
/// With `FULL = false`, `t` and `q` are not computed.
#[inline(always)]
pub(crate) fn accurate<V: Lanes, const D: usize, const LINE: bool, const FULL: bool>(
    a: &[V; D],
    b: &[V; D],
    p: &[V; D],
) -> Out<V, D> {
    let zero = V::splat(0.0);
    let one = V::splat(1.0);
    let two = V::splat(2.0);
    let ab = diff(b, a);
    let ap = diff(p, a);
    let all = zero.eq(zero);
    let in_window = V::and(hi_in(&ab), hi_in(&ap));
    let mut fallback = V::andnot(in_window, all);

    let l = sq_dd(&ab);
    let l_zero = l.hi.eq(zero);
    let (n, en) = dot_dd(&ap, &ab);

    let n_zero = V::and(n.hi.eq(zero), en.eq(zero));
    let (start, end, p_is_b, bp, interior) = if LINE {
        let none = V::none();
        (l_zero, none, none, ap, V::andnot(l_zero, all))
    } else {
        let two_en = two.mul(en);
        let start = V::or(V::or(l_zero, n.hi.lt(two_en.neg())), n_zero);
        let exact1 = V::andnot(start, n.hi.le(two_en));
        let mut p_is_b = all;
        for i in 0..D {
            p_is_b = V::and(p_is_b, p[i].eq(b[i]));
        }
        let open = V::andnot(V::or(start, exact1), all);
        let p_is_b = V::and(open, p_is_b);
        let (s, f) = two_diff(n.hi, l.hi);
        let m = s.add(f.add(n.lo.sub(l.lo)));
        let em = two.mul(en.add(l.hi.mul(V::splat(ERR_DOT))));
        let end_side = V::andnot(p_is_b, V::and(open, em.neg().le(m)));
        let exact2 = V::and(end_side, m.le(em));
        let bp = diff(p, b);
        let careful = V::andnot(exact2, V::andnot(hi_in(&bp), end_side));
        fallback = V::or(fallback, V::or(exact1, V::or(exact2, careful)));
        let end = V::or(p_is_b, end_side);
        let interior = V::andnot(V::or(p_is_b, end_side), open);
        (start, end, p_is_b, bp, interior)
    };

    // A vertex's distance: |ap|² or |bp|², one dot product for both (the
    // operands are chosen per lane first, which gives the same bits as
    // computing both and choosing after).
    let mut v = ap;
    for i in 0..D {
        v[i] = Dd { hi: V::select(end, bp[i].hi, ap[i].hi), lo: V::select(end, bp[i].lo, ap[i].lo) };
    }
    let s_vertex = sq_dd(&v);

    // Interior: d² = Σ C_ij² / L, and in 2D d = |C|/|ab|.
    let inv_l = one.div(l.hi);
    let (x, uncertain) = interior_start(&ab, &ap, l, inv_l);
    fallback = V::or(fallback, V::and(interior, uncertain));
    let (m, inv_m) = if D == 2 { sqrt_dd_inv(l, inv_l) } else { (l, inv_l) };
    let d_in = interior_d::<V, D>(x, m, inv_m);
    let d2_in = interior_d2::<V, D>(x, l, inv_l);
    let d_vertex = s_vertex.hi.sqrt();
    let d = V::select(p_is_b, zero, V::select(interior, d_in, d_vertex));
    let d2 = V::select(p_is_b, zero, V::select(interior, d2_in, s_vertex.hi));
    let region = V::select(start, zero, V::select(end, two, one));
    if !FULL {
        return Out { d, d2, t: zero, q: *a, region, fallback };
    }

    // t and q, as the scalar kernel forms them; anything it would send to
    // the exact path falls back here.
    let (t, mut q, tq_exact) = t_and_q(a, &ab, n, en, l, inv_l);
    // The line's exactly-zero N: t = 0 and q = a (as the scalar kernel).
    let tq_exact = V::andnot(n_zero, tq_exact);
    fallback = V::or(fallback, V::and(interior, tq_exact));
    let t_in = V::select(n_zero, zero, t.hi);
    let t = V::select(start, zero, V::select(end, one, t_in));
    for i in 0..D {
        let qi = V::select(n_zero, a[i], q[i]);
        q[i] = V::select(start, a[i], V::select(end, b[i], qi));
    }
    Out { d, d2, t, q, region, fallback }
}

/// [`Shared::distance_start`]'s results, for [`Shared::distance_end`].
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Half<V: Lanes, const D: usize> {
    /// The points.
    p: [V; D],
    inner: V::Mask,
    end: V::Mask,
    /// The lanes to recompute, a bit each (bits, not a mask: the masks
    /// that live from one half to the other are what the eight mask
    /// registers hold).
    rest: u32,
}

/// [`Shared::distance_end`]'s results (`t` and `q` only with `FULL`).
#[cfg(target_arch = "x86_64")]
pub(crate) struct Ends<V: Lanes, const D: usize> {
    pub d: V,
    pub d2: V,
    pub code: V,
    pub t: V,
    pub q: [V; D],
    /// The lanes to recompute, a bit each.
    pub rest: u32,
}

/// One segment shared by many queries: what depends on the segment alone,
/// computed once, and both regions' operations on every lane from a cheap
/// region estimate (for [`crate::sweep`]).
///
/// [`accurate`] computes every region for every lane, with every test of
/// the scalar kernel, and selects. Once a lane's region is known (and that
/// the scalar kernel would certify it on its direct path),
/// [`Shared::distance_end`] runs the same operations on the same values as
/// [`accurate`] does there, hence the scalar kernel's bits.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Shared<V: Lanes, const D: usize> {
    a: [V; D],
    b: [V; D],
    ab: [Dd<V>; D],
    l: Dd<V>,
    inv_l: V,
    /// `|ab|` (used in 2D) and its approximate inverse.
    m: Dd<V>,
    inv_m: V,
}

/// A coordinate the sweep takes: zero, or `2^-147 <= |x| <= 2^198`.
/// When every coordinate of `a`, `b` and `p` is one, every difference of
/// two of them is zero or in `[2^-199, 2^199]` (a non-zero difference of
/// multiples of `2^-199` is at least that), inside the scalar kernel's direct
/// window `[2^-200, 2^200]`: its window tests pass and need not be repeated
/// per lane.
#[cfg(target_arch = "x86_64")]
pub(crate) fn routable(x: f64) -> bool {
    let m = x.abs();
    x == 0.0 || (ROUTABLE_LO..=ROUTABLE_HI).contains(&m)
}

/// Whether every value of `cols` is [`routable`] (what the vectoriser
/// makes of it: an integer minimum and maximum of the magnitudes' bits).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn all_routable(cols: &[&[f64]]) -> bool {
    let (mut most, mut least) = (0u64, u64::MAX);
    for col in cols {
        for &x in *col {
            let m = x.to_bits() & !(1 << 63);
            most = most.max(m);
            // Zero wraps to the largest value: it passes.
            least = least.min(m.wrapping_sub(1));
        }
    }
    // (NaN and infinity: above `ROUTABLE_HI`'s bits.)
    most <= ROUTABLE_HI.to_bits() && least.wrapping_add(1) >= ROUTABLE_LO.to_bits()
}

/// The bounds of [`routable`].
#[cfg(target_arch = "x86_64")]
pub(crate) const ROUTABLE_LO: f64 = 1.0 / (1u128 << 127) as f64 / (1u64 << 20) as f64;
#[cfg(target_arch = "x86_64")]
pub(crate) const ROUTABLE_HI: f64 = (1u128 << 127) as f64 * (1u128 << 71) as f64;

/// The margin by which a plain-`f64` estimate of `N = ap·ab` must clear a
/// region boundary before a lane is given that region without the scalar
/// kernel's tests ([`Shared::distance_start`]), relative to the estimate's magnitude.
///
/// Why such a verdict is the scalar kernel's: every coordinate of the
/// segment and of the point is [`routable`], so every difference lies in
/// the scalar kernel's direct window and is exact as a double-double, and
/// every product of two is far from underflow. The estimate
/// `ñ = fl(Σ fl(fl(p_i − a_i)·abh_i))` is then within `2^-50·M` of the exact
/// `N`, `M = Σ|fl(p_i − a_i)·abh_i|`. A lane is placed only when `ñ` clears
/// `0` or `L` by `2^-44·M` (and `L` by `2^-44·L`), far more than the scalar
/// kernel's own error bounds on `N` and `N − L` (about `2^-99` relative), so
/// its certified tests pick the same region, and none of its uncertain bands
/// (which go to the exact path) can hold the lane.
#[cfg(target_arch = "x86_64")]
pub(crate) const MARGIN: f64 = 1.0 / (1u64 << 44) as f64;

#[cfg(target_arch = "x86_64")]
impl<V: Lanes, const D: usize> Shared<V, D> {
    /// `None` unless every coordinate of the segment is [`routable`] and
    /// its length is not zero (then every lane takes [`accurate`]).
    #[inline(always)]
    pub(crate) fn new(a: &[f64; D], b: &[f64; D]) -> Option<Self> {
        if !(a.iter().chain(b).all(|&x| routable(x)) && a != b) {
            return None;
        }
        Some(Self::of(a, b))
    }

    /// The same segment in another lane type (the region kernels may run
    /// wider than the routing).
    #[inline(always)]
    pub(crate) fn widen<W: Lanes>(&self) -> Shared<W, D> {
        Shared::of(&self.a_hi(), &self.b_hi())
    }

    /// The segment-only steps of [`accurate`], unchecked.
    #[inline(always)]
    fn of(ah: &[f64; D], bh: &[f64; D]) -> Self {
        let mut a = [V::splat(0.0); D];
        let mut b = a;
        for i in 0..D {
            a[i] = V::splat(ah[i]);
            b[i] = V::splat(bh[i]);
        }
        let ab = diff(&b, &a);
        let l = sq_dd(&ab);
        let inv_l = V::splat(1.0).div(l.hi);
        let (m, inv_m) = sqrt_dd_inv(l, inv_l);
        Shared { a, b, ab, l, inv_l, m, inv_m }
    }

    /// The start vertex.
    #[inline(always)]
    pub(crate) fn a_hi(&self) -> [f64; D] {
        self.a.map(lane0)
    }

    /// Any lanes, in one pass without branches or routing (for
    /// [`crate::sweep`]), first half: the region from a plain-`f64`
    /// estimate of `N` (lanes it cannot place by [`MARGIN`], or with a
    /// coordinate not [`routable`], are flagged). [`Shared::distance_end`]
    /// does the rest. (The shorter this half, the faster the pipelined
    /// loop: with the exact difference and the vertex sum here too, 6 %
    /// more cycles; with the cross product too, 9 %.)
    ///
    /// `CHECK = false`: the caller has checked that every coordinate is
    /// [`routable`].
    #[inline(always)]
    pub(crate) fn distance_start<const CHECK: bool>(&self, p: &[V; D]) -> Half<V, D> {
        let zero = V::splat(0.0);
        let (lo, hi) = (V::splat(ROUTABLE_LO), V::splat(ROUTABLE_HI));
        let margin = V::splat(MARGIN);
        let l_below = self.l.hi.mul(V::splat(1.0 - MARGIN));
        let l_above = self.l.hi.mul(V::splat(1.0 + MARGIN));
        let mut ok = zero.eq(zero);
        // (The sums start from their first terms: no `0 + x`.)
        let (mut n, mut mag) = (zero, zero);
        for i in 0..D {
            if CHECK {
                let x = p[i].abs();
                // Routable: |x| <= hi (false for NaN), and not 0 < |x| < lo.
                let tiny = V::and(x.lt(lo), x.ne(zero));
                ok = V::and(ok, V::andnot(tiny, x.le(hi)));
            }
            let aph = p[i].sub(self.a[i]);
            // (|fl(x·y)| = fl(|x|·|y|): rounding is symmetric.)
            let t = aph.mul(self.ab[i].hi);
            let u = t.abs();
            (n, mag) = if i == 0 { (t, u) } else { (n.add(t), mag.add(u)) };
        }
        let e = mag.mul(margin);
        let inner = V::and(e.lt(n), n.add(e).lt(l_below));
        let start = n.lt(e.neg());
        let end = l_above.lt(n.sub(e));
        ok = V::and(ok, V::or(inner, V::or(start, end)));
        Half { p: *p, inner, end, rest: V::bits(V::andnot(ok, zero.eq(zero))) }
    }

    /// The second half: one exact difference from the chosen vertex (`a`
    /// for the interior and the start, `b` for the end, as the scalar
    /// kernel takes them), both regions' double-double steps on it, `d`,
    /// `d²` (when asked for), the region code (0 start, 1 interior, 2 end,
    /// when asked for) and, with `FULL`, `t` and the closest point: the same
    /// IEEE operations as [`accurate`] in those regions, hence
    /// the scalar kernel's bits. Flagged lanes (also those the scalar
    /// kernel would finish on its exact path, for any of these) have their
    /// bit set in `rest` and other fields meaningless.
    #[inline(always)]
    pub(crate) fn distance_end<const FULL: bool>(&self, h: Half<V, D>, wants: Wants) -> Ends<V, D> {
        let zero = V::splat(0.0);
        let Half { p, inner, end, mut rest } = h;
        let v = self.vertex_diff(&p, end);
        let xv = sq_dd(&v);
        let (xi, uncertain) = interior_start(&self.ab, &v, self.l, self.inv_l);
        rest |= V::bits(V::and(inner, uncertain));
        let d_in = interior_d::<V, D>(xi, self.m, self.inv_m);
        let d = V::select(inner, d_in, xv.hi.sqrt());
        let d2 = if wants.d2 { V::select(inner, interior_d2::<V, D>(xi, self.l, self.inv_l), xv.hi) } else { zero };
        let code = if wants.code { V::select(inner, V::splat(1.0), V::select(end, V::splat(2.0), zero)) } else { zero };
        let (mut t, mut q) = (zero, self.a);
        if FULL {
            // `v` is `ap` in the interior lanes.
            let (n, en) = dot_dd(&v, &self.ab);
            let (ti, qi, tq_exact) = t_and_q(&self.a, &self.ab, n, en, self.l, self.inv_l);
            rest |= V::bits(V::and(inner, tq_exact));
            let one = V::splat(1.0);
            t = V::select(inner, ti.hi, V::select(end, one, zero));
            for i in 0..D {
                q[i] = V::select(inner, qi[i], V::select(end, self.b[i], self.a[i]));
            }
        }
        Ends { d, d2, code, t, q, rest }
    }

    /// The end vertex.
    #[inline(always)]
    pub(crate) fn b_hi(&self) -> [f64; D] {
        self.b.map(lane0)
    }

    /// `p − b` (exact) in the `end` lanes, `p − a` in the others.
    #[inline(always)]
    fn vertex_diff(&self, p: &[V; D], end: V::Mask) -> [Dd<V>; D] {
        let mut vtx = self.a;
        for i in 0..D {
            vtx[i] = V::select(end, self.b[i], self.a[i]);
        }
        diff(p, &vtx)
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lane0<V: Lanes>(v: V) -> f64 {
    let mut x = [0.0; 16];
    v.store(&mut x);
    x[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel;
    use crate::lanes::Scalar1;

    /// A small deterministic generator of awkward inputs (the integration
    /// tests run the full adversarial families through every ISA).
    fn inputs() -> Vec<([f64; 2], [f64; 2], [f64; 2])> {
        let mut s = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut v = Vec::new();
        for i in 0..20_000 {
            let mut f = |scale: f64| ((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * scale;
            let scale = [1.0, 1e6, 1e-3, 1e100][i % 4];
            let a = [f(scale), f(scale)];
            let b = if i % 7 == 0 { a } else { [f(scale), f(scale)] };
            let p = if i % 5 == 0 {
                [a[0] + 0.5 * (b[0] - a[0]), a[1] + 0.5 * (b[1] - a[1])]
            } else {
                [f(scale), f(scale)]
            };
            v.push((a, b, p));
        }
        v
    }

    fn one_lane<const FMA: bool>() {
        for (a, b, p) in inputs() {
            let w = |x: [f64; 2]| x.map(Scalar1::<FMA>);
            let r = accurate::<Scalar1<FMA>, 2, false, true>(&w(a), &w(b), &w(p));
            if r.fallback {
                continue;
            }
            let s = kernel::segment(&a, &b, &p);
            assert_eq!(r.d.0.to_bits(), s.d.to_bits(), "{a:?} {b:?} {p:?}");
            assert_eq!(r.d2.0.to_bits(), s.d2.to_bits());
            assert_eq!(r.t.0.to_bits(), s.t.to_bits());
            assert_eq!([r.q[0].0.to_bits(), r.q[1].0.to_bits()], s.point.map(f64::to_bits));
        }
    }

    #[test]
    fn one_lane_with_fma_is_the_scalar_kernel() {
        one_lane::<true>();
    }

    #[test]
    fn one_lane_with_dekker_is_the_scalar_kernel() {
        one_lane::<false>();
    }

    /// The NEON build's lanes (two, with FMA; `mul_add` is exact in
    /// software where the CPU has no FMA) give the scalar kernel's bits:
    /// its operations checked here on any machine.
    #[test]
    fn neon_lanes_are_the_scalar_kernel() {
        use crate::lanes::{Lanes, Neon};
        let v = inputs();
        for pair in v.chunks_exact(2) {
            // Lane l of each coordinate: query l of the pair.
            let (mut a, mut b, mut p) = ([Neon::splat(0.0); 2], [Neon::splat(0.0); 2], [Neon::splat(0.0); 2]);
            for k in 0..2 {
                a[k] = Neon::load(&[pair[0].0[k], pair[1].0[k]]);
                b[k] = Neon::load(&[pair[0].1[k], pair[1].1[k]]);
                p[k] = Neon::load(&[pair[0].2[k], pair[1].2[k]]);
            }
            let r = accurate::<Neon, 2, false, true>(&a, &b, &p);
            let fallback = Neon::bits(r.fallback);
            let (mut d, mut t, mut q0) = ([0.0; 2], [0.0; 2], [0.0; 2]);
            r.d.store(&mut d);
            r.t.store(&mut t);
            r.q[0].store(&mut q0);
            for (l, (a, b, p)) in pair.iter().enumerate() {
                if fallback & (1 << l) != 0 {
                    continue;
                }
                let s = kernel::segment(a, b, p);
                assert_eq!(d[l].to_bits(), s.d.to_bits(), "{a:?} {b:?} {p:?}");
                assert_eq!((t[l].to_bits(), q0[l].to_bits()), (s.t.to_bits(), s.point[0].to_bits()));
            }
        }
    }
}
