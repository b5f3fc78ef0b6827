//! The AVX-512 kernels of the group scan and the point sift, chosen at
//! run time (`is_x86_feature_detected!`), each the same arithmetic as its
//! scalar twin in `group.rs`, lane for lane, so the answers are bit for bit
//! the same.

use super::*;

/// The fast squared distances from `p` (each coordinate in all lanes of
/// `pv`) to a chunk's segments: [`Chunk::distances`] with AVX-512F, the
/// multiply-adds fused (which only removes roundings).
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub(super) unsafe fn chunk_d2_avx512<const D: usize>(
    ch: &Chunk<D>,
    pv: &[std::arch::x86_64::__m512d; D],
) -> std::arch::x86_64::__m512d {
    use std::arch::x86_64::*;
    const { assert!(B == 8) };
    // SAFETY: each array of the chunk holds B = 8 numbers.
    let load = |x: &[f64; B]| unsafe { _mm512_loadu_pd(x.as_ptr()) };
    let a: [__m512d; D] = std::array::from_fn(|k| load(&ch.a[k]));
    let ab: [__m512d; D] = std::array::from_fn(|k| load(&ch.ab[k]));
    // SAFETY: the CPU has AVX-512F (this function's contract).
    unsafe { lanes_d2_avx512(pv, &a, &ab, load(&ch.inv)) }
}

/// [`Index::reach_of`]'s farthest point with AVX-512F, a point a lane,
/// the segments `slots` read from the index (no [`Group`]): the largest
/// over the finite points of the least scanned `d²` to those segments (the
/// arithmetic of [`Group::farthest`] as [`chunk_d2_avx512`] does it; min
/// and max are exact, so the order changes nothing), and the segments'
/// largest coordinate magnitude.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn farthest_avx512<const D: usize>(
    index: &Index<D>,
    slots: &[u32],
    points: &[[f64; D]],
) -> (f64, f64) {
    use std::arch::x86_64::*;
    const H: usize = SIFT_POINTS / B;
    let mut m = 0.0f64;
    for &slot in slots {
        let (a, b) = index.ends(slot as usize);
        for k in 0..D {
            m = fmax(fmax(m, a[k].abs()), b[k].abs());
        }
    }
    let mut far = 0.0f64;
    for points in points.chunks(SIFT_POINTS) {
        // SAFETY (both): the CPU has AVX-512F (this function's contract).
        let (pv, finite) = unsafe { points_in_lanes(points) };
        let mut least = [_mm512_set1_pd(f64::INFINITY); H];
        for &slot in slots {
            let slot = slot as usize;
            let (a, b) = index.ends(slot);
            let av: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(a[k]));
            let ab: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(b[k] - a[k]));
            let inv = _mm512_set1_pd(index.inv[slot / B][slot % B]);
            for h in 0..H {
                least[h] = _mm512_min_pd(least[h], unsafe { lanes_d2_avx512(&pv[h], &av, &ab, inv) });
            }
        }
        for h in 0..H {
            if finite[h] != 0 {
                far = fmax(far, _mm512_mask_reduce_max_pd(finite[h], least[h]));
            }
        }
    }
    (far, m)
}

/// [`Group::sift`] with AVX-512F intrinsics: eight lanes a chunk.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn sift_avx512<const D: usize>(g: &mut Group<D>, p: &[f64; D], limit: f64) -> (f64, bool, usize) {
    use std::arch::x86_64::*;
    // SAFETY: the CPU has AVX-512F (this function's contract).
    let best = unsafe { scan_avx512(g, p) };
    let cut2 = g.cut2(best, limit);
    let cv = _mm512_set1_pd(cut2);
    // SAFETY: a chunk of `d2` holds eight numbers.
    let pass = |d2: &[f64; B]| unsafe { _mm512_cmp_pd_mask::<_CMP_LE_OQ>(_mm512_loadu_pd(d2.as_ptr()), cv) };
    if g.d2.len() <= 8 {
        // Up to 64 lanes: every chunk's mask in one word, so that "more
        // than one" and "the first" are one test each (no per-chunk tally).
        let mut all = 0u64;
        for (i, d2) in g.d2.iter().enumerate() {
            all |= u64::from(pass(d2)) << (8 * i);
        }
        let first = if all == 0 { usize::MAX } else { all.trailing_zeros() as usize };
        return (cut2, all & all.wrapping_sub(1) != 0, first);
    }
    let (mut many, mut first) = (false, usize::MAX);
    for (i, d2) in g.d2.iter().enumerate() {
        (many, first) = tally(u32::from(pass(d2)), i, many, first);
    }
    (cut2, many, first)
}

/// [`Group::sift_points`] in the group's form: with AVX-512, the points in the
/// lanes (eight a vector) and the candidates one after the other, so that
/// no query waits on a reduction across lanes and a group's sixteen
/// queries run side by side; with AVX2 and FMA the same, four a vector
/// (`avx2.rs`); else point by point.
pub(crate) fn sift_points_group<const D: usize>(
    index: &Index<D>,
    g: &mut Group<D>,
    points: &[[f64; D]],
    limit: f64,
) -> Sifted {
    #[cfg(target_arch = "x86_64")]
    {
        if g.form == AVX512 && std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            return unsafe { sift_points_avx512(index, g, points, limit) };
        }
        if g.form >= AVX2 && has_avx2_fma() {
            // SAFETY: the CPU has AVX2 and FMA, checked just above.
            return unsafe { sift_points_avx2(index, g, points, limit) };
        }
    }
    index.fill(g);
    g.sift_points(points, limit)
}

/// Up to [`SIFT_POINTS`] points' coordinates, eight points a vector (lane
/// `i` of vector `h` is point `8h + i`), and which lanes hold a finite
/// point.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub(super) unsafe fn points_in_lanes<const D: usize>(
    points: &[[f64; D]],
) -> ([[std::arch::x86_64::__m512d; D]; SIFT_POINTS / B], [u8; SIFT_POINTS / B]) {
    use std::arch::x86_64::*;
    const H: usize = SIFT_POINTS / B;
    let len = points.len().min(SIFT_POINTS);
    let mut pv = [[_mm512_setzero_pd(); D]; H];
    let mut finite = [0u8; H];
    let inf = _mm512_set1_pd(f64::INFINITY);
    let base = points.as_ptr().cast::<f64>();
    for h in 0..H {
        let lanes = len.saturating_sub(h * B).min(B);
        let mut ok = ((1u32 << lanes) - 1) as u8;
        for k in 0..D {
            // Lane i: number (8h + i)·D + k of the points' coordinates.
            let at: [i64; B] = std::array::from_fn(|i| ((h * B + i) * D + k) as i64);
            // SAFETY: `at` holds eight numbers; the lanes gathered (`ok`)
            // are coordinates of points < len.
            let v = unsafe {
                _mm512_mask_i64gather_pd::<8>(_mm512_setzero_pd(), ok, _mm512_loadu_si512(at.as_ptr().cast()), base)
            };
            ok &= _mm512_cmp_pd_mask::<_CMP_LT_OQ>(_mm512_abs_pd(v), inf);
            pv[h][k] = v;
        }
        finite[h] = ok;
    }
    (pv, finite)
}

/// The fast squared distances, lane by lane, from points `pv` to segments
/// (`a`, `b − a`, `1/|b − a|²`): one point against eight segments
/// ([`chunk_d2_avx512`]) or eight points against one segment (its numbers
/// in every lane), the same arithmetic either way, so the same bits.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub(super) unsafe fn lanes_d2_avx512<const D: usize>(
    pv: &[std::arch::x86_64::__m512d; D],
    a: &[std::arch::x86_64::__m512d; D],
    ab: &[std::arch::x86_64::__m512d; D],
    inv: std::arch::x86_64::__m512d,
) -> std::arch::x86_64::__m512d {
    use std::arch::x86_64::*;
    let (one, zero) = (_mm512_set1_pd(1.0), _mm512_setzero_pd());
    let pa: [__m512d; D] = std::array::from_fn(|k| _mm512_sub_pd(pv[k], a[k]));
    let mut dot = zero;
    for k in 0..D {
        dot = _mm512_fmadd_pd(pa[k], ab[k], dot);
    }
    // min(NaN, 1) is 1, as in the portable code: t stays in [0, 1].
    let t = _mm512_max_pd(_mm512_min_pd(_mm512_mul_pd(dot, inv), one), zero);
    let mut d2 = zero;
    for k in 0..D {
        let v = _mm512_fnmadd_pd(t, ab[k], pa[k]);
        d2 = _mm512_fmadd_pd(v, v, d2);
    }
    d2
}

/// [`Group::sift_points`] with AVX-512F, a point a lane. One pass keeps,
/// lane by lane, the least scanned `d²`, its candidate (the first of the
/// least) and the second least (of the multiset: a tie for least makes it
/// the least). The least is what the cut is made of, and it passes the
/// cut whenever anything does; more than one passes exactly when the
/// second least does. So the masks and lanes are those of the
/// point-by-point sift, whose `d²` these are bit for bit.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn sift_points_avx512<const D: usize>(
    index: &Index<D>,
    g: &Group<D>,
    points: &[[f64; D]],
    limit: f64,
) -> Sifted {
    use std::arch::x86_64::*;
    const H: usize = SIFT_POINTS / B;
    let mut out = Sifted { one: 0, many: 0, far: 0, far2: 0.0, slot: [0; SIFT_POINTS] };
    if g.count == 0 {
        if g.trust2 < f64::INFINITY {
            // SAFETY: the CPU has AVX-512F (this function's contract).
            let (_, finite) = unsafe { points_in_lanes(points) };
            for h in 0..H {
                out.far |= u32::from(finite[h]) << (h * B);
            }
        }
        return out;
    }
    // SAFETY (all the calls below): the CPU has AVX-512F (this function's
    // contract).
    let (pv, finite) = unsafe { points_in_lanes(points) };
    let inf = _mm512_set1_pd(f64::INFINITY);
    // (`first` is written by the first candidate in every finite lane.)
    let (mut least, mut second, mut first) = ([inf; H], [inf; H], [_mm512_setzero_si512(); H]);
    let mut each = |slot: usize, a: &[__m512d; D], ab: &[__m512d; D], inv: __m512d| {
        let sv = _mm512_set1_epi64(slot as i64);
        for h in 0..H {
            // SAFETY: as above.
            let d2 = unsafe { lanes_d2_avx512(&pv[h], a, ab, inv) };
            second[h] = _mm512_min_pd(second[h], _mm512_max_pd(least[h], d2));
            first[h] = _mm512_mask_mov_epi64(first[h], _mm512_cmp_pd_mask::<_CMP_LT_OQ>(d2, least[h]), sv);
            least[h] = _mm512_min_pd(least[h], d2);
        }
    };
    // Straight from the leaves (what `gather` picked; `fill` leaves it):
    // `b − a` as `fill` computes it.
    for &(j, mut mask) in &g.picked {
        let (leaf, inv) = (&index.leaves[j as usize], &index.inv[j as usize]);
        while mask != 0 {
            let c = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let a: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(leaf.lo[k][c]));
            let ab: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(leaf.hi[k][c] - leaf.lo[k][c]));
            each(j as usize * B + c, &a, &ab, _mm512_set1_pd(inv[c]));
        }
    }
    let (a, c, limit_cut) = g.cut_terms(limit);
    for h in 0..H {
        // `cut2`'s arithmetic, lane by lane.
        let cut = _mm512_min_pd(
            _mm512_add_pd(_mm512_mul_pd(_mm512_set1_pd(a), least[h]), _mm512_set1_pd(c)),
            _mm512_set1_pd(limit_cut),
        );
        // Where the reach was a guess, only lanes whose least is trusted.
        let trusted = _mm512_cmp_pd_mask::<_CMP_LE_OQ>(least[h], _mm512_set1_pd(g.trust2)) & finite[h];
        out.far |= u32::from(finite[h] & !trusted) << (h * B);
        if trusted != 0 {
            out.far2 = fmax(out.far2, _mm512_mask_reduce_max_pd(trusted, least[h]));
        }
        let any = _mm512_cmp_pd_mask::<_CMP_LE_OQ>(least[h], cut) & trusted;
        let many = _mm512_cmp_pd_mask::<_CMP_LE_OQ>(second[h], cut) & trusted;
        out.many |= u32::from(many) << (h * B);
        out.one |= u32::from(any & !many) << (h * B);
        let mut slots = [0i64; B];
        // SAFETY: `slots` holds eight numbers.
        unsafe { _mm512_storeu_si512(slots.as_mut_ptr().cast(), first[h]) };
        for i in 0..B {
            out.slot[h * B + i] = slots[i] as u32;
        }
    }
    out
}

/// [`Group::scan_below`] with AVX-512F: [`chunk_d2_avx512`] on every
/// chunk, the lanes at most `thr` listed.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn scan_below_avx512<const D: usize>(g: &mut Group<D>, p: &[f64; D], thr: f64) {
    use std::arch::x86_64::*;
    const { assert!(B == 8) };
    let n = g.chunks.len();
    g.d2.clear();
    g.d2.reserve(n);
    // Each chunk's listed lanes are packed to the front of a register and
    // the whole register stored, the next chunk's written over the rest:
    // room for eight more than can be listed.
    g.below.clear();
    g.below.reserve(g.count + B);
    g.below_d2.clear();
    g.below_d2.reserve(g.count + B);
    let (out, at, at_d2) = (g.d2.as_mut_ptr().cast::<f64>(), g.below.as_mut_ptr(), g.below_d2.as_mut_ptr());
    let pv: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(p[k]));
    let t = _mm512_set1_pd(thr);
    let lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    let mut listed = 0;
    for (i, ch) in g.chunks.iter().enumerate() {
        // Padding lanes (past `count`, at +inf) are never listed, even
        // where the threshold is +inf.
        let real = if (i + 1) * B <= g.count { 0xff } else { (1u8 << (g.count - i * B)) - 1 };
        // SAFETY: the CPU has AVX-512F (this function's contract); `out`
        // has room for n chunks of eight, `at` and `at_d2` for `count + B`
        // numbers, of which `listed + 8` at most are written.
        unsafe {
            let d2 = chunk_d2_avx512(ch, &pv);
            _mm512_storeu_pd(out.add(i * B), d2);
            let mask = _mm512_cmp_pd_mask::<_CMP_LE_OQ>(d2, t) & real;
            let j = _mm512_add_epi64(lanes, _mm512_set1_epi64((i * B) as i64));
            _mm512_storeu_si512(at.add(listed).cast(), _mm512_maskz_compress_epi64(mask, j));
            _mm512_storeu_pd(at_d2.add(listed), _mm512_maskz_compress_pd(mask, d2));
            listed += mask.count_ones() as usize;
        }
    }
    // SAFETY: the n chunks and `listed` lanes were written just above.
    unsafe {
        g.d2.set_len(n);
        g.below.set_len(listed);
        g.below_d2.set_len(listed);
    }
}

/// [`kth_count`] with AVX-512F, as [`kth_avx2`](super::avx2::kth_avx2):
/// each lane counts the values below it and at most it (a masked add of
/// one a compare), every value broadcast against all the lanes in use;
/// the k-th is the value whose lane has fewer than `k` below and at least
/// `k` at most it. (A value's counts from the popcounts of its compare
/// masks, a value at a time, were a chain of moves from mask to integer
/// registers and a popcount the target features did not include, emulated
/// by shuffles: an eighth of a k = 5 batch's time.)
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn kth_avx512(v: &[f64; KTH_BY_COUNT], n: usize, k: usize) -> f64 {
    const { assert!(KTH_BY_COUNT == 32) };
    use std::arch::x86_64::*;
    const ROWS: usize = KTH_BY_COUNT / 8;
    // SAFETY: `v` holds four rows of eight.
    let rows: [__m512d; ROWS] = std::array::from_fn(|r| unsafe { _mm512_loadu_pd(v.as_ptr().add(r * 8)) });
    let used = n.div_ceil(8);
    let (zero, one) = (_mm512_setzero_si512(), _mm512_set1_epi64(1));
    let (mut lt, mut le) = ([zero; ROWS], [zero; ROWS]);
    for &y in &v[..n] {
        let yv = _mm512_set1_pd(y);
        for r in 0..used {
            // (A padding lane, NaN, has nothing below it nor at most it.)
            lt[r] = _mm512_mask_add_epi64(lt[r], _mm512_cmp_pd_mask::<_CMP_LT_OQ>(yv, rows[r]), lt[r], one);
            le[r] = _mm512_mask_add_epi64(le[r], _mm512_cmp_pd_mask::<_CMP_LE_OQ>(yv, rows[r]), le[r], one);
        }
    }
    // The lanes holding the k-th (all of them equal, padding never: it
    // has none at most it, and k >= 1), the rest at +inf.
    let kv = _mm512_set1_epi64(k as i64);
    let mut kth = _mm512_set1_pd(f64::INFINITY);
    for r in 0..used {
        let at = _mm512_cmplt_epi64_mask(lt[r], kv) & _mm512_cmpge_epi64_mask(le[r], kv);
        kth = _mm512_mask_min_pd(kth, at, kth, rows[r]);
    }
    _mm512_reduce_min_pd(kth)
}

/// [`kth_avx512`] on `v` itself (`1 <= k <= v.len() <= 32`), its rows
/// gathered a value at a time: `v` was just written by the scan's packed
/// stores, and a whole row loaded from there, or from a copy, could not be
/// forwarded from those stores, waiting for them (and every store before
/// them, some bound for memory) to reach the cache.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn kth_gathered_avx512(v: &[f64], k: usize) -> f64 {
    use std::arch::x86_64::*;
    let n = v.len();
    debug_assert!(1 <= k && k <= n && n <= KTH_BY_COUNT);
    if n > 16 {
        let mut w = [f64::NAN; KTH_BY_COUNT];
        w[..n].copy_from_slice(v);
        // SAFETY: the CPU has AVX-512F (this function's contract).
        return unsafe { kth_avx512(&w, n, k) };
    }
    // Two rows of eight, in registers.
    let lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    let nan = _mm512_set1_pd(f64::NAN);
    let real = ((1u32 << n) - 1) as u16;
    // SAFETY: the lanes gathered (`real`) are values of `v`.
    let (r0, r1) = unsafe {
        (
            _mm512_mask_i64gather_pd::<8>(nan, real as u8, lanes, v.as_ptr()),
            _mm512_mask_i64gather_pd::<8>(
                nan,
                (real >> 8) as u8,
                _mm512_add_epi64(lanes, _mm512_set1_epi64(8)),
                v.as_ptr(),
            ),
        )
    };
    let (zero, one) = (_mm512_setzero_si512(), _mm512_set1_epi64(1));
    let (mut lt0, mut le0, mut lt1, mut le1) = (zero, zero, zero, zero);
    for &y in v {
        // (A padding lane, NaN, has nothing below it nor at most it.)
        let yv = _mm512_set1_pd(y);
        lt0 = _mm512_mask_add_epi64(lt0, _mm512_cmp_pd_mask::<_CMP_LT_OQ>(yv, r0), lt0, one);
        le0 = _mm512_mask_add_epi64(le0, _mm512_cmp_pd_mask::<_CMP_LE_OQ>(yv, r0), le0, one);
        lt1 = _mm512_mask_add_epi64(lt1, _mm512_cmp_pd_mask::<_CMP_LT_OQ>(yv, r1), lt1, one);
        le1 = _mm512_mask_add_epi64(le1, _mm512_cmp_pd_mask::<_CMP_LE_OQ>(yv, r1), le1, one);
    }
    let kv = _mm512_set1_epi64(k as i64);
    let inf = _mm512_set1_pd(f64::INFINITY);
    let at0 = _mm512_cmplt_epi64_mask(lt0, kv) & _mm512_cmpge_epi64_mask(le0, kv);
    let at1 = _mm512_cmplt_epi64_mask(lt1, kv) & _mm512_cmpge_epi64_mask(le1, kv);
    _mm512_reduce_min_pd(_mm512_min_pd(_mm512_mask_mov_pd(inf, at0, r0), _mm512_mask_mov_pd(inf, at1, r1)))
}

/// Which of the first `n` of (`d`, `id`) comes at each place, as
/// `places`' count, with AVX-512F: each pair against eight at once, its
/// place the popcount of the compare masks. The rows are gathered a value
/// at a time, as in [`kth_gathered_avx512`]: `d` and `id` were just
/// written a value at a time.
///
/// # Safety
/// The CPU must have AVX-512F and POPCNT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
pub(super) unsafe fn places_avx512<const N: usize>(d: &[u64; N], id: &[u64; N], n: usize) -> [u32; N] {
    use std::arch::x86_64::*;
    const { assert!(N == 32) };
    let used = n.div_ceil(8);
    let lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    let mut dr = [_mm512_setzero_si512(); 4];
    let mut ir = [_mm512_setzero_si512(); 4];
    for r in 0..used {
        let at = _mm512_add_epi64(lanes, _mm512_set1_epi64((r * 8) as i64));
        // SAFETY: `d` and `id` hold 32 numbers; lanes up to 8r + 7 < 32.
        unsafe {
            dr[r] = _mm512_i64gather_epi64::<8>(at, d.as_ptr().cast());
            ir[r] = _mm512_i64gather_epi64::<8>(at, id.as_ptr().cast());
        }
    }
    let mut at = [0u32; N];
    for i in 0..n {
        let (di, ii) = (_mm512_set1_epi64(d[i] as i64), _mm512_set1_epi64(id[i] as i64));
        let mut place = 0u32;
        for r in 0..used {
            // (Padding, `i64::MAX` in both, comes before none.)
            let before = _mm512_cmplt_epi64_mask(dr[r], di)
                | (_mm512_cmpeq_epi64_mask(dr[r], di) & _mm512_cmplt_epi64_mask(ir[r], ii));
            place += u32::from(before).count_ones();
        }
        at[place as usize] = i as u32;
    }
    at
}

/// [`Group::scan`] with AVX-512F: [`chunk_d2_avx512`] on every chunk.
///
/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn scan_avx512<const D: usize>(g: &mut Group<D>, p: &[f64; D]) -> f64 {
    use std::arch::x86_64::*;
    const { assert!(B == 8) };
    let n = g.chunks.len();
    g.d2.clear();
    g.d2.reserve(n);
    let out = g.d2.as_mut_ptr().cast::<f64>();
    let pv: [__m512d; D] = std::array::from_fn(|k| _mm512_set1_pd(p[k]));
    let mut least = _mm512_set1_pd(f64::INFINITY);
    for (i, ch) in g.chunks.iter().enumerate() {
        // SAFETY: the CPU has AVX-512F (this function's contract); `out`
        // has room for n chunks of eight.
        unsafe {
            let d2 = chunk_d2_avx512(ch, &pv);
            _mm512_storeu_pd(out.add(i * B), d2);
            least = _mm512_min_pd(least, d2);
        }
    }
    // SAFETY: the n chunks were written just above.
    unsafe { g.d2.set_len(n) };
    _mm512_reduce_min_pd(least)
}
