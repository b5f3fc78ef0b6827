//! One segment against many points, on x86-64 with AVX2 (without AVX-512):
//! the queries of a block are routed to their region before any
//! double-double work, and each region's kernel then runs on its own lanes
//! only (with `t` and the closest point when asked for: `FULL`).
//!
//! The lane kernel ([`crate::batch_kernel::accurate`]) computes every region
//! for every lane and selects, as neighbouring queries rarely share a region.
//! With four lanes a vector that costs more than sorting the lanes: this pass
//! gives the same bits with less work. (With AVX-512, on the Zen 5 measured,
//! the branch-free [`crate::sweep`] is faster: there the work per lane is
//! cheap and the routing's shuffles and memory traffic are not.)
//!
//! 1. **Route** the queries, four at a time, by a plain-`f64` estimate of
//!    `N = ap·ab`: certainly interior, certainly at a vertex (past the start
//!    or past the end), or neither (see [`MARGIN`] why the verdicts are the
//!    scalar kernel's).
//! 2. **Compact** each route's coordinates into its own columns: a
//!    permutation from a table indexed by the four-lane mask (AVX2 has no
//!    compress instruction).
//! 3. **Run** the route's kernel ([`Shared::interior`], [`Shared::vertex`])
//!    over its columns. An interior and a vertex vector go side by side
//!    while both routes have lanes left: each kernel is one long dependent
//!    chain, and two side by side keep the core busy.
//! 4. **Expand** the results back into query order (the inverse
//!    permutations; at a vertex, `t` is 0 or 1 and the point is the vertex),
//!    and hand the lanes of no route, and the rare interior lanes the scalar
//!    kernel would finish on its exact path (for the distance, `t` or the
//!    point), to the scalar kernel.
//!
//! Routing, compaction and expansion are written with intrinsics (LLVM
//! turned the portable form of the routing into two-lane code with scalar
//! compares). The arithmetic that makes the results (step 3) is the lane
//! code of [`crate::batch_kernel`], the same IEEE operations as the scalar
//! kernel in any lane type, so the bits rest on the same argument as the
//! branch-free kernel's.

// Index loops over coordinates: clearest here, and no closure (see
// `lanes::Z8`) stands between the kernels and their target features.
#![allow(clippy::needless_range_loop)]

use core::arch::x86_64::*;

use crate::batch_kernel::{Shared, MARGIN, ROUTABLE_HI, ROUTABLE_LO};
use crate::lanes::{Avx2, Lanes};

/// Queries per block (the batch driver's block size).
pub(crate) const BLOCK: usize = 256;
/// A route's columns: a vector is always written whole.
const ROOM: usize = BLOCK + 8;

/// Routes: interior, at a vertex.
const ROUTES: usize = 2;

/// The scratch columns of one block, kept with the block (allocated once per
/// thread).
pub(crate) struct Scratch<const D: usize> {
    p: [[[f64; ROOM]; D]; ROUTES],
    d: [[f64; ROOM]; ROUTES],
    d2: [[f64; ROOM]; ROUTES],
    /// Per vertex lane: 1.0 at the end, 0.0 at the start.
    end: [f64; ROOM],
    /// `t` and the closest point of interior lanes (when asked for).
    t: [f64; ROOM],
    q: [[f64; ROOM]; D],
    /// Per group of four queries, the lanes of each route (four bits each).
    masks: [u8; BLOCK / 4],
}

impl<const D: usize> Scratch<D> {
    pub(crate) fn new() -> Self {
        Scratch {
            p: [[[0.0; ROOM]; D]; ROUTES],
            d: [[0.0; ROOM]; ROUTES],
            d2: [[0.0; ROOM]; ROUTES],
            end: [0.0; ROOM],
            t: [0.0; ROOM],
            q: [[0.0; ROOM]; D],
            masks: [0; BLOCK / 4],
        }
    }
}

/// Permutation tables (as 32-bit lane indices for `vpermps`), indexed by a
/// four-lane mask: `PACK[m]` moves the lanes set in `m` to the front, in
/// order; `SPREAD[m]` puts the `r`-th packed value back at the `r`-th lane
/// set in `m`. Unused slots read lane 0. `COUNT[m]`: the lanes set.
const PACK: [[i32; 8]; 16] = tables().0;
const SPREAD: [[i32; 8]; 16] = tables().1;
const COUNT: [usize; 16] = tables().2;

const fn tables() -> ([[i32; 8]; 16], [[i32; 8]; 16], [usize; 16]) {
    let mut pack = [[0i32; 8]; 16];
    let mut spread = [[0i32; 8]; 16];
    let mut count = [0usize; 16];
    let mut m = 0;
    while m < 16 {
        let mut r = 0;
        let mut l = 0;
        while l < 4 {
            if m & (1 << l) != 0 {
                pack[m][2 * r] = 2 * l as i32;
                pack[m][2 * r + 1] = 2 * l as i32 + 1;
                spread[m][2 * l] = 2 * r as i32;
                spread[m][2 * l + 1] = 2 * r as i32 + 1;
                r += 1;
            }
            l += 1;
        }
        count[m] = r;
        m += 1;
    }
    (pack, spread, count)
}

/// The lanes set in a four-bit mask, as a vector mask.
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn lane_mask(b: usize) -> __m256d {
    let lanes = _mm256_setr_epi64x(1, 2, 4, 8);
    let v = _mm256_and_si256(_mm256_set1_epi64x(b as i64), lanes);
    _mm256_castsi256_pd(_mm256_cmpeq_epi64(v, lanes))
}

/// Four values of one route back in query order: `col[at..]` spread onto
/// the lanes set in `bits` (other lanes: don't care).
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn spread(col: &[f64; ROOM], at: usize, bits: usize) -> __m256d {
    // SAFETY: AVX2; `at + 4 <= ROOM` as a route holds at most `BLOCK` lanes.
    unsafe {
        let v = _mm256_loadu_pd(col.as_ptr().add(at));
        let idx = _mm256_loadu_si256(SPREAD[bits].as_ptr().cast());
        _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(v), idx))
    }
}

/// Four results back in query order from both routes' columns `col` (`at`:
/// each route's next lane; `bits`: each route's lanes in this group; `vm`:
/// the vertex lanes as a vector mask).
#[inline]
#[target_feature(enable = "avx2,fma")]
unsafe fn back(col: &[[f64; ROOM]; ROUTES], at: [usize; ROUTES], bits: [usize; ROUTES], vm: __m256d) -> __m256d {
    // SAFETY: AVX2.
    unsafe { _mm256_blendv_pd(spread(&col[0], at[0], bits[0]), spread(&col[1], at[1], bits[1]), vm) }
}

/// The interior kernel on the interior route's lanes `k..k + K::N`; lanes the
/// scalar kernel would finish on its exact path come out NaN, and are
/// added to `uncertain`.
#[inline(always)]
fn interior_step<K: Lanes, const D: usize, const FULL: bool>(
    seg: &Shared<K, D>,
    s: &mut Scratch<D>,
    k: usize,
    uncertain: &mut K::Mask,
) {
    let mut pv = [K::splat(0.0); D];
    for i in 0..D {
        pv[i] = K::load(&s.p[0][i][k..]);
    }
    let (dv, d2v, unc) = if FULL {
        let (dv, d2v, tv, qv, unc) = seg.interior_full(&pv);
        tv.store(&mut s.t[k..]);
        for (col, v) in s.q.iter_mut().zip(qv) {
            v.store(&mut col[k..]);
        }
        (dv, d2v, unc)
    } else {
        seg.interior(&pv)
    };
    // Lanes past the route's end may be flagged too: they only cost a look
    // for NaN afterwards.
    *uncertain = K::or(*uncertain, unc);
    K::select(unc, K::splat(f64::NAN), dv).store(&mut s.d[0][k..]);
    d2v.store(&mut s.d2[0][k..]);
}

/// The vertex kernel on the vertex route's lanes `k..k + K::N`.
#[inline(always)]
fn vertex_step<K: Lanes, const D: usize>(seg: &Shared<K, D>, s: &mut Scratch<D>, k: usize) {
    let mut pv = [K::splat(0.0); D];
    for i in 0..D {
        pv[i] = K::load(&s.p[1][i][k..]);
    }
    let end = K::splat(0.0).lt(K::load(&s.end[k..]));
    let (dv, d2v) = seg.vertex(&pv, end);
    dv.store(&mut s.d[1][k..]);
    d2v.store(&mut s.d2[1][k..]);
}

/// What the routing needs of the segment, as plain numbers (splatted by
/// each routing loop to its width).
struct Consts<const D: usize> {
    a: [f64; D],
    /// The high parts of `b − a`.
    ab: [f64; D],
    /// `L·(1 ∓ margin)`: the interior ends below the first, the end region
    /// starts above the second.
    l_below: f64,
    l_above: f64,
}

impl<const D: usize> Consts<D> {
    fn of(seg: &Shared<Avx2, D>) -> Self {
        let l = seg.l_hi();
        Consts { a: seg.a_hi(), ab: seg.ab_hi(), l_below: l * (1.0 - MARGIN), l_above: l * (1.0 + MARGIN) }
    }
}

/// Steps 1–2, four lanes at a time: routes and compacts the block's
/// queries, returns each route's lane count. Lanes past `m` (stale numbers)
/// are routed too, and never read back.
#[inline(always)]
unsafe fn route_avx2<const D: usize>(
    seg: &Shared<Avx2, D>,
    s: &mut Scratch<D>,
    p: &[[f64; BLOCK]; D],
    m: usize,
) -> [usize; ROUTES] {
    // SAFETY: the caller's features; loads at `j + 4 <= BLOCK`, stores at
    // `count + 4 <= ROOM`.
    unsafe {
        let k = Consts::of(seg);
        let (mut a, mut abh, mut ab_abs) =
            ([_mm256_setzero_pd(); D], [_mm256_setzero_pd(); D], [_mm256_setzero_pd(); D]);
        for i in 0..D {
            a[i] = _mm256_set1_pd(k.a[i]);
            abh[i] = _mm256_set1_pd(k.ab[i]);
            ab_abs[i] = _mm256_set1_pd(k.ab[i].abs());
        }
        let (l_below, l_above) = (_mm256_set1_pd(k.l_below), _mm256_set1_pd(k.l_above));
        let margin = _mm256_set1_pd(MARGIN);
        let sign = _mm256_set1_pd(-0.0);
        let (lo, hi, zero) = (_mm256_set1_pd(ROUTABLE_LO), _mm256_set1_pd(ROUTABLE_HI), _mm256_setzero_pd());
        let one = _mm256_set1_pd(1.0);
        let mut count = [0usize; ROUTES];
        let mut j = 0;
        while j < m {
            let mut pv = [zero; D];
            for i in 0..D {
                pv[i] = _mm256_loadu_pd(p[i].as_ptr().add(j));
            }
            let mut n = zero;
            let mut mag = zero;
            let mut ok = _mm256_cmp_pd::<_CMP_EQ_OQ>(zero, zero);
            for i in 0..D {
                let x = _mm256_andnot_pd(sign, pv[i]);
                // routable: |x| <= hi (false for NaN), and not 0 < |x| < lo.
                let tiny = _mm256_and_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(x, lo), _mm256_cmp_pd::<_CMP_NEQ_UQ>(x, zero));
                ok = _mm256_and_pd(ok, _mm256_andnot_pd(tiny, _mm256_cmp_pd::<_CMP_LE_OQ>(x, hi)));
                let aph = _mm256_sub_pd(pv[i], a[i]);
                n = _mm256_add_pd(n, _mm256_mul_pd(aph, abh[i]));
                mag = _mm256_add_pd(mag, _mm256_mul_pd(_mm256_andnot_pd(sign, aph), ab_abs[i]));
            }
            let e = _mm256_mul_pd(mag, margin);
            let inner = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_LT_OQ>(e, n),
                _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_add_pd(n, e), l_below),
            );
            let start = _mm256_cmp_pd::<_CMP_LT_OQ>(n, _mm256_xor_pd(e, sign));
            let end = _mm256_cmp_pd::<_CMP_LT_OQ>(l_above, _mm256_sub_pd(n, e));
            let vertex = _mm256_or_pd(start, end);
            let bits = [
                _mm256_movemask_pd(_mm256_and_pd(inner, ok)) as usize,
                _mm256_movemask_pd(_mm256_and_pd(vertex, ok)) as usize,
            ];
            for r in 0..ROUTES {
                let idx = _mm256_loadu_si256(PACK[bits[r]].as_ptr().cast());
                for (col, v) in s.p[r].iter_mut().zip(&pv) {
                    let packed = _mm256_permutevar8x32_ps(_mm256_castpd_ps(*v), idx);
                    _mm256_storeu_pd(col.as_mut_ptr().add(count[r]), _mm256_castps_pd(packed));
                }
                if r == 1 {
                    // Which vertex: 1.0 for the end, 0.0 for the start.
                    let packed = _mm256_permutevar8x32_ps(_mm256_castpd_ps(_mm256_and_pd(end, one)), idx);
                    _mm256_storeu_pd(s.end.as_mut_ptr().add(count[r]), _mm256_castps_pd(packed));
                }
                count[r] += COUNT[bits[r]];
            }
            s.masks[j / 4] = (bits[0] | bits[1] << 4) as u8;
            j += 4;
        }

        count
    }
}

/// What the block needs back besides `d`.
#[derive(Clone, Copy)]
pub(crate) struct Wants {
    pub d2: bool,
    pub code: bool,
}

/// A result column the AVX-512 sweep writes straight into the caller's
/// output (non-temporal stores) instead of the block's column: `d`, or
/// `d²` if `d2`. `at` points at the block's first query, valid for
/// [`BLOCK`] writes and 64-byte aligned.
#[derive(Clone, Copy)]
pub(crate) struct Direct {
    pub at: *mut f64,
    pub d2: bool,
}

/// The block's outputs, as the batch driver holds them (`t` and `q` are
/// written only with `FULL`).
pub(crate) struct Outs<'a, const D: usize> {
    pub d: &'a mut [f64; BLOCK],
    pub d2: &'a mut [f64; BLOCK],
    pub code: &'a mut [f64; BLOCK],
    pub t: &'a mut [f64; BLOCK],
    pub q: &'a mut [[f64; BLOCK]; D],
    /// The sweep's direct column, if any (the routed pass takes none).
    pub direct: Option<Direct>,
}

/// Runs a block's `m` queries (coordinate columns `p`) into `out`; returns
/// the queries left for the scalar kernel, one bit each (a `u64` per 64
/// queries).
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn run_avx2<const D: usize, const FULL: bool>(
    seg: &Shared<Avx2, D>,
    s: &mut Scratch<D>,
    p: &[[f64; BLOCK]; D],
    m: usize,
    out: Outs<'_, D>,
    wants: Wants,
) -> [u64; BLOCK / 64] {
    debug_assert!(m <= BLOCK);
    // SAFETY: AVX2 and FMA, this function's contract; every load and store
    // below stays inside its array (`j + 4 <= BLOCK` as `j < m <= BLOCK`
    // steps by 4, and a route holds at most `BLOCK` lanes, read and written
    // up to eight at a time within `ROOM`).
    unsafe {
        let (one, zero) = (_mm256_set1_pd(1.0), _mm256_setzero_pd());
        let (va, vbh) = (seg.a_hi(), seg.b_hi());
        let (mut a, mut vb) = ([zero; D], [zero; D]);
        for i in 0..D {
            a[i] = _mm256_set1_pd(va[i]);
            vb[i] = _mm256_set1_pd(vbh[i]);
        }
        // 1–2: route and compact.
        let count = route_avx2(seg, s, p, m);

        // 3: each route's kernel over its own columns. An interior and a
        // vertex vector per step while both routes have lanes left: each
        // kernel is one long dependent chain, and two chains side by side
        // keep the core busy (one alone left it waiting on latencies).
        let mut uncertain = Avx2::none();
        let (mut ki, mut kv) = (0, 0);
        while ki < count[0] && kv < count[1] {
            interior_step::<Avx2, D, FULL>(seg, s, ki, &mut uncertain);
            vertex_step(seg, s, kv);
            ki += 4;
            kv += 4;
        }
        while ki < count[0] {
            interior_step::<Avx2, D, FULL>(seg, s, ki, &mut uncertain);
            ki += 4;
        }
        while kv < count[1] {
            vertex_step(seg, s, kv);
            kv += 4;
        }

        // 4: back into query order.
        let mut rest = [0u64; BLOCK / 64];
        let mut at = [0usize; ROUTES];
        let mut j = 0;
        while j < m {
            let mk = usize::from(s.masks[j / 4]);
            let bits = [mk & 15, mk >> 4];
            let vm = lane_mask(bits[1]);
            _mm256_storeu_pd(out.d.as_mut_ptr().add(j), back(&s.d, at, bits, vm));
            if wants.d2 {
                _mm256_storeu_pd(out.d2.as_mut_ptr().add(j), back(&s.d2, at, bits, vm));
            }
            if wants.code || FULL {
                // 1.0 where the vertex is the end (vertex lanes only).
                let end = spread(&s.end, at[1], bits[1]);
                if wants.code {
                    // 0 start, 1 interior, 2 end: 2·end where at a vertex.
                    let code = _mm256_blendv_pd(one, _mm256_add_pd(end, end), vm);
                    _mm256_storeu_pd(out.code.as_mut_ptr().add(j), code);
                }
                if FULL {
                    // At a vertex: t = 1 or 0, the point b or a.
                    let t = _mm256_blendv_pd(spread(&s.t, at[0], bits[0]), end, vm);
                    _mm256_storeu_pd(out.t.as_mut_ptr().add(j), t);
                    let em = _mm256_cmp_pd::<_CMP_LT_OQ>(zero, end);
                    for i in 0..D {
                        let v = _mm256_blendv_pd(a[i], vb[i], em);
                        let q = _mm256_blendv_pd(spread(&s.q[i], at[0], bits[0]), v, vm);
                        _mm256_storeu_pd(out.q[i].as_mut_ptr().add(j), q);
                    }
                }
            }
            let none = 15 & !(bits[0] | bits[1]);
            if none != 0 {
                rest[j / 64] |= (none as u64) << (j % 64);
            }
            at[0] += COUNT[bits[0]];
            at[1] += COUNT[bits[1]];
            j += 4;
        }
        if !m.is_multiple_of(64) {
            // Lanes past `m` are not queries.
            rest[m / 64] &= (1u64 << (m % 64)) - 1;
        }
        if Avx2::bits(uncertain) != 0 {
            for (j, x) in out.d[..m].iter().enumerate() {
                if x.is_nan() {
                    rest[j / 64] |= 1 << (j % 64);
                }
            }
        }
        rest
    }
}
