//! The AVX2 kernels of the group scan, the point sift, the listing scan and
//! the k-th count, for CPUs without AVX-512 (chosen at run time where the
//! CPU has AVX2 and FMA). Each is the arithmetic of its AVX-512 twin in
//! `simd.rs`, four lanes a vector where that has eight, with the fused
//! multiply-adds in the same places: the same squared distances, bit for
//! bit, whichever of the two runs (the fusing only removes roundings, so
//! the scan's error bound holds, as `simd.rs` says).
//!
//! Before these, such CPUs ran the portable loops compiled for AVX2, a point
//! at a time: LLVM made two lanes of the eight-lane loops at a time, no
//! fused multiply-add, and each point waited on its own chain of reductions.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;

use super::*;

/// Whether the CPU runs this file's kernels: AVX2, FMA and POPCNT (every
/// x86-64 CPU with AVX2 has the other two but a few VIA ones; all three are
/// checked).
#[inline]
pub(super) fn has_avx2_fma() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
        && std::is_x86_feature_detected!("popcnt")
}

/// The fast squared distances, lane by lane, from points `pv` to segments
/// (`a`, `b − a`, `1/|b − a|²`): `simd.rs`'s `lanes_d2_avx512` on four
/// lanes, one point against four segments or four points against one.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn lanes_d2<const D: usize>(pv: &[__m256d; D], a: &[__m256d; D], ab: &[__m256d; D], inv: __m256d) -> __m256d {
    let (one, zero) = (_mm256_set1_pd(1.0), _mm256_setzero_pd());
    let pa: [__m256d; D] = std::array::from_fn(|k| _mm256_sub_pd(pv[k], a[k]));
    let mut dot = zero;
    for k in 0..D {
        dot = _mm256_fmadd_pd(pa[k], ab[k], dot);
    }
    // min(NaN, 1) is 1, as in the portable code: t stays in [0, 1].
    let t = _mm256_max_pd(_mm256_min_pd(_mm256_mul_pd(dot, inv), one), zero);
    let mut d2 = zero;
    for k in 0..D {
        let v = _mm256_fnmadd_pd(t, ab[k], pa[k]);
        d2 = _mm256_fmadd_pd(v, v, d2);
    }
    d2
}

/// The fast squared distances from `p` (each coordinate in all lanes of
/// `pv`) to a chunk's eight segments, as two halves.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn chunk_d2<const D: usize>(ch: &Chunk<D>, pv: &[__m256d; D]) -> [__m256d; 2] {
    const { assert!(B == 8) };
    // SAFETY: each array of the chunk holds B = 8 numbers, of which lanes
    // `4h..4h + 4` are read.
    let load = |x: &[f64; B], h: usize| unsafe { _mm256_loadu_pd(x.as_ptr().add(4 * h)) };
    let mut d2 = [_mm256_setzero_pd(); 2];
    for h in 0..2 {
        let a: [__m256d; D] = std::array::from_fn(|k| load(&ch.a[k], h));
        let ab: [__m256d; D] = std::array::from_fn(|k| load(&ch.ab[k], h));
        // SAFETY: the CPU has AVX2 and FMA (this function's contract).
        d2[h] = unsafe { lanes_d2(pv, &a, &ab, load(&ch.inv, h)) };
    }
    d2
}

/// [`Group::scan`] with AVX2 and FMA: [`chunk_d2`] on every chunk.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn scan_avx2<const D: usize>(g: &mut Group<D>, p: &[f64; D]) -> f64 {
    let n = g.chunks.len();
    g.d2.clear();
    g.d2.reserve(n);
    let out = g.d2.as_mut_ptr().cast::<f64>();
    let pv: [__m256d; D] = std::array::from_fn(|k| _mm256_set1_pd(p[k]));
    let mut least = [_mm256_set1_pd(f64::INFINITY); 2];
    for (i, ch) in g.chunks.iter().enumerate() {
        // SAFETY: the CPU has AVX2 and FMA (this function's contract);
        // `out` has room for n chunks of eight.
        unsafe {
            let d2 = chunk_d2(ch, &pv);
            for h in 0..2 {
                _mm256_storeu_pd(out.add(i * B + 4 * h), d2[h]);
                least[h] = _mm256_min_pd(least[h], d2[h]);
            }
        }
    }
    // SAFETY: the n chunks were written just above.
    unsafe { g.d2.set_len(n) };
    least_of(_mm256_min_pd(least[0], least[1]))
}

/// The least of four lanes (never NaN).
#[target_feature(enable = "avx2")]
#[inline]
fn least_of(v: __m256d) -> f64 {
    let m = _mm_min_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
    _mm_cvtsd_f64(_mm_min_sd(m, _mm_unpackhi_pd(m, m)))
}

/// The largest of four lanes (never NaN).
#[target_feature(enable = "avx2")]
#[inline]
fn most_of(v: __m256d) -> f64 {
    let m = _mm_max_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
    _mm_cvtsd_f64(_mm_max_sd(m, _mm_unpackhi_pd(m, m)))
}

/// [`Group::sift`] with AVX2 and FMA: [`scan_avx2`], then the cut.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn sift_avx2<const D: usize>(g: &mut Group<D>, p: &[f64; D], limit: f64) -> (f64, bool, usize) {
    // SAFETY: the CPU has AVX2 and FMA (this function's contract).
    let best = unsafe { scan_avx2(g, p) };
    g.sift_scanned(best, limit)
}

/// Up to [`SIFT_POINTS`] points' coordinates from `points[from..]`, four
/// points a vector (lane `i` of vector `h` is point `from + 4h + i`), `H`
/// vectors, and which lanes hold a finite point (a bit each, lane `i` of
/// vector `h` at bit `4h + i`). Lanes past the points hold zeros.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn points_in_lanes<const D: usize, const H: usize>(
    points: &[[f64; D]],
    from: usize,
) -> ([[__m256d; D]; H], u32) {
    let mut cols = [[[0.0f64; 4]; D]; H];
    let mut finite = 0u32;
    for (i, p) in points.iter().enumerate().skip(from).take(4 * H) {
        let at = i - from;
        for k in 0..D {
            cols[at / 4][k][at % 4] = p[k];
        }
        finite |= u32::from(p.iter().all(|c| c.is_finite())) << at;
    }
    let mut pv = [[_mm256_setzero_pd(); D]; H];
    for h in 0..H {
        for k in 0..D {
            // SAFETY: each column holds four numbers.
            pv[h][k] = unsafe { _mm256_loadu_pd(cols[h][k].as_ptr()) };
        }
    }
    (pv, finite)
}

/// What one pass of [`sift_points_avx2`] keeps of `4·H` points, lane by
/// lane: the least scanned `d²`, its candidate (the first of the least),
/// and the second least.
struct Pass<const H: usize> {
    least: [__m256d; H],
    second: [__m256d; H],
    first: [__m256i; H],
}

/// One pass of [`sift_points_avx2`] over the candidates that
/// [`Index::gather`] picked, for the points in `pv`.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn sift_pass<const D: usize, const H: usize>(index: &Index<D>, g: &Group<D>, pv: &[[__m256d; D]; H]) -> Pass<H> {
    let inf = _mm256_set1_pd(f64::INFINITY);
    // (`first` is written by the first candidate in every finite lane.)
    let mut s = Pass { least: [inf; H], second: [inf; H], first: [_mm256_setzero_si256(); H] };
    // Straight from the leaves, `b − a` as `fill` computes it.
    for &(j, mut mask) in &g.picked {
        let (leaf, inv) = (&index.leaves[j as usize], &index.inv[j as usize]);
        while mask != 0 {
            let c = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let a: [__m256d; D] = std::array::from_fn(|k| _mm256_set1_pd(leaf.lo[k][c]));
            let ab: [__m256d; D] = std::array::from_fn(|k| _mm256_set1_pd(leaf.hi[k][c] - leaf.lo[k][c]));
            let (inv, sv) =
                (_mm256_set1_pd(inv[c]), _mm256_castsi256_pd(_mm256_set1_epi64x((j as usize * B + c) as i64)));
            for h in 0..H {
                // SAFETY: the CPU has AVX2 and FMA (this function's contract).
                let d2 = unsafe { lanes_d2(&pv[h], &a, &ab, inv) };
                s.second[h] = _mm256_min_pd(s.second[h], _mm256_max_pd(s.least[h], d2));
                let lower = _mm256_cmp_pd::<_CMP_LT_OQ>(d2, s.least[h]);
                s.first[h] = _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(s.first[h]), sv, lower));
                s.least[h] = _mm256_min_pd(s.least[h], d2);
            }
        }
    }
    s
}

/// [`Group::sift_points`] with AVX2 and FMA, a point a lane: as
/// `simd.rs`'s `sift_points_avx512`, in passes of eight points (two
/// vectors) in 2D and four in 3D, so that a pass's points, its three
/// running values a lane and a candidate's numbers stay in the sixteen
/// registers. Each pass keeps, lane by lane, the least scanned `d²`, its
/// candidate and the second least; more than one candidate passes the cut
/// exactly when the second least does. So the masks and lanes are those of
/// the point-by-point sift with [`scan_avx2`], whose `d²` these are bit for
/// bit.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn sift_points_avx2<const D: usize>(
    index: &Index<D>,
    g: &Group<D>,
    points: &[[f64; D]],
    limit: f64,
) -> Sifted {
    // SAFETY: the CPU has AVX2 and FMA (this function's contract).
    unsafe {
        if D == 2 {
            sift_points_in::<D, 2>(index, g, points, limit)
        } else {
            sift_points_in::<D, 1>(index, g, points, limit)
        }
    }
}

/// [`sift_points_avx2`] in passes of `4·H` points.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn sift_points_in<const D: usize, const H: usize>(
    index: &Index<D>,
    g: &Group<D>,
    points: &[[f64; D]],
    limit: f64,
) -> Sifted {
    let mut out = Sifted { one: 0, many: 0, far: 0, far2: 0.0, slot: [0; SIFT_POINTS] };
    let len = points.len().min(SIFT_POINTS);
    let (a, c, limit_cut) = g.cut_terms(limit);
    let (av, cv, lv, tv) = (_mm256_set1_pd(a), _mm256_set1_pd(c), _mm256_set1_pd(limit_cut), _mm256_set1_pd(g.trust2));
    let mut from = 0;
    while from < len {
        // SAFETY (all the calls below): the CPU has AVX2 and FMA (this
        // function's contract).
        let (pv, finite) = unsafe { points_in_lanes::<D, H>(points, from) };
        if g.count == 0 {
            // No candidate: a point is searched alone where the reach was
            // a guess, else has no answer.
            if g.trust2 < f64::INFINITY {
                out.far |= finite << from;
            }
            from += 4 * H;
            continue;
        }
        let s = unsafe { sift_pass::<D, H>(index, g, &pv) };
        for h in 0..H {
            let at = from + 4 * h;
            let finite = finite >> (4 * h) & 0xf;
            // `cut2`'s arithmetic, lane by lane.
            let cut = _mm256_min_pd(_mm256_add_pd(_mm256_mul_pd(av, s.least[h]), cv), lv);
            // Where the reach was a guess, only lanes whose least is
            // trusted.
            let trusted = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LE_OQ>(s.least[h], tv)) as u32 & finite;
            out.far |= (finite & !trusted) << at;
            if trusted != 0 {
                // (Untrusted lanes count as zero: every least is at least
                // that, and `far2` starts there.)
                let lanes = trusted_lanes(trusted);
                out.far2 = fmax(out.far2, most_of(_mm256_and_pd(lanes, s.least[h])));
            }
            let any = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LE_OQ>(s.least[h], cut)) as u32 & trusted;
            let many = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LE_OQ>(s.second[h], cut)) as u32 & trusted;
            out.many |= many << at;
            out.one |= (any & !many) << at;
            let mut slots = [0i64; 4];
            // SAFETY: `slots` holds four numbers.
            unsafe { _mm256_storeu_si256(slots.as_mut_ptr().cast(), s.first[h]) };
            for i in 0..4 {
                if at + i < SIFT_POINTS {
                    out.slot[at + i] = slots[i] as u32;
                }
            }
        }
        from += 4 * H;
    }
    out
}

/// The lanes of a four-bit mask as a vector mask (all ones where set).
#[target_feature(enable = "avx2")]
#[inline]
fn trusted_lanes(mask: u32) -> __m256d {
    let bits = _mm256_set1_epi64x(i64::from(mask));
    let lane = _mm256_setr_epi64x(1, 2, 4, 8);
    _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(bits, lane), lane))
}

/// [`Index::reach_of`]'s farthest point with AVX2 and FMA, a point a lane,
/// the segments `slots` read from the index (no [`Group`]): as
/// `simd.rs`'s `farthest_avx512`, the largest over the finite points of the
/// least scanned `d²` to those segments, and the segments' largest
/// coordinate magnitude.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn farthest_avx2<const D: usize>(index: &Index<D>, slots: &[u32], points: &[[f64; D]]) -> (f64, f64) {
    const H: usize = 2;
    let mut m = 0.0f64;
    for &slot in slots {
        let (a, b) = index.ends(slot as usize);
        for k in 0..D {
            m = fmax(fmax(m, a[k].abs()), b[k].abs());
        }
    }
    let mut far = 0.0f64;
    let mut from = 0;
    while from < points.len() {
        // SAFETY (both): the CPU has AVX2 and FMA (this function's
        // contract).
        let (pv, finite) = unsafe { points_in_lanes::<D, H>(points, from) };
        let mut least = [_mm256_set1_pd(f64::INFINITY); H];
        for &slot in slots {
            let slot = slot as usize;
            let (a, b) = index.ends(slot);
            let av: [__m256d; D] = std::array::from_fn(|k| _mm256_set1_pd(a[k]));
            let ab: [__m256d; D] = std::array::from_fn(|k| _mm256_set1_pd(b[k] - a[k]));
            let inv = _mm256_set1_pd(index.inv[slot / B][slot % B]);
            for h in 0..H {
                least[h] = _mm256_min_pd(least[h], unsafe { lanes_d2(&pv[h], &av, &ab, inv) });
            }
        }
        for h in 0..H {
            let lanes = finite >> (4 * h) & 0xf;
            if lanes != 0 {
                far = fmax(far, most_of(_mm256_and_pd(trusted_lanes(lanes), least[h])));
            }
        }
        from += 4 * H;
    }
    (far, m)
}

/// Where each four-lane mask's lanes go when packed to the front: the 32-bit
/// halves of the 64-bit lanes, for `_mm256_permutevar8x32_epi32`.
const PACK: [[i32; 8]; 16] = {
    let mut t = [[0i32; 8]; 16];
    let mut mask = 0;
    while mask < 16 {
        let mut at = 0;
        let mut lane = 0i32;
        while lane < 4 {
            if mask >> lane & 1 != 0 {
                t[mask][2 * at] = 2 * lane;
                t[mask][2 * at + 1] = 2 * lane + 1;
                at += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    t
};

/// [`Group::scan_below`] with AVX2 and FMA: [`chunk_d2`] on every chunk,
/// the lanes at most `thr` listed (each half's packed to the front of a
/// register by a permutation from [`PACK`], stored whole, the count
/// advanced by the mask's popcount: no branch a lane).
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,popcnt")]
pub(super) unsafe fn scan_below_avx2<const D: usize>(g: &mut Group<D>, p: &[f64; D], thr: f64) {
    const { assert!(B == 8) };
    let n = g.chunks.len();
    g.d2.clear();
    g.d2.reserve(n);
    // A half's listed lanes are stored as a whole register, the next
    // half's written over the rest: room for four more than can be listed.
    g.below.clear();
    g.below.reserve(g.count + 4);
    g.below_d2.clear();
    g.below_d2.reserve(g.count + 4);
    let (out, at, at_d2) = (g.d2.as_mut_ptr().cast::<f64>(), g.below.as_mut_ptr(), g.below_d2.as_mut_ptr());
    let pv: [__m256d; D] = std::array::from_fn(|k| _mm256_set1_pd(p[k]));
    let t = _mm256_set1_pd(thr);
    let lanes = _mm256_setr_epi64x(0, 1, 2, 3);
    let mut listed = 0;
    for (i, ch) in g.chunks.iter().enumerate() {
        // Padding lanes (past `count`, at +inf) are never listed, even
        // where the threshold is +inf.
        let real = if (i + 1) * B <= g.count { 0xff } else { (1u32 << (g.count - i * B)) - 1 };
        // SAFETY: the CPU has AVX2 and FMA (this function's contract);
        // `out` has room for n chunks of eight, `at` and `at_d2` for
        // `count + 4` numbers, of which `listed + 4` at most are written.
        unsafe {
            let d2 = chunk_d2(ch, &pv);
            for h in 0..2 {
                _mm256_storeu_pd(out.add(i * B + 4 * h), d2[h]);
                let mask = (_mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LE_OQ>(d2[h], t)) as u32) & (real >> (4 * h)) & 0xf;
                let pack = _mm256_loadu_si256(PACK[mask as usize].as_ptr().cast());
                let j = _mm256_add_epi64(lanes, _mm256_set1_epi64x((i * B + 4 * h) as i64));
                _mm256_storeu_si256(at.add(listed).cast(), _mm256_permutevar8x32_epi32(j, pack));
                let packed = _mm256_permutevar8x32_epi32(_mm256_castpd_si256(d2[h]), pack);
                _mm256_storeu_pd(at_d2.add(listed), _mm256_castsi256_pd(packed));
                listed += mask.count_ones() as usize;
            }
        }
    }
    // SAFETY: the n chunks and `listed` lanes were written just above.
    unsafe {
        g.d2.set_len(n);
        g.below.set_len(listed);
        g.below_d2.set_len(listed);
    }
}

/// [`kth_count`] with AVX2, the other way round: each value in a lane, its
/// counts of values below it and at most it kept in the lane (a compare's
/// all-ones subtracted), every value broadcast against all the lanes in
/// use; the k-th is the value whose lane has fewer than `k` below and at
/// least `k` at most it. (A value's counts from the compare masks'
/// popcounts, a value at a time, took twice the instructions.)
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn kth_avx2(v: &[f64; KTH_BY_COUNT], n: usize, k: usize) -> f64 {
    const { assert!(KTH_BY_COUNT == 32) };
    const ROWS: usize = KTH_BY_COUNT / 4;
    // SAFETY: `v` holds eight rows of four.
    let rows: [__m256d; ROWS] = std::array::from_fn(|r| unsafe { _mm256_loadu_pd(v.as_ptr().add(r * 4)) });
    let used = n.div_ceil(4);
    let zero = _mm256_setzero_si256();
    let (mut lt, mut le) = ([zero; ROWS], [zero; ROWS]);
    for &y in &v[..n] {
        let yv = _mm256_set1_pd(y);
        for r in 0..used {
            // (A padding lane, NaN, has nothing below it nor at most it.)
            lt[r] = _mm256_sub_epi64(lt[r], _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_LT_OQ>(yv, rows[r])));
            le[r] = _mm256_sub_epi64(le[r], _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_LE_OQ>(yv, rows[r])));
        }
    }
    // The lanes holding the k-th (all of them equal, padding never: it
    // has none at most it, and k >= 1), the rest at +inf.
    let k1 = _mm256_set1_epi64x(k as i64 - 1);
    let mut kth = _mm256_set1_pd(f64::INFINITY);
    for r in 0..used {
        // lt < k and le > k - 1.
        let at = _mm256_andnot_si256(_mm256_cmpgt_epi64(lt[r], k1), _mm256_cmpgt_epi64(le[r], k1));
        kth = _mm256_min_pd(kth, _mm256_blendv_pd(_mm256_set1_pd(f64::INFINITY), rows[r], _mm256_castsi256_pd(at)));
    }
    least_of(kth)
}

/// [`places_count`](super::single::places_count) with AVX2, the other way
/// round as [`kth_avx2`] is: each pair (`d`, `id`) in a lane, its count of
/// pairs before it kept in the lane (a compare's all-ones subtracted),
/// every pair broadcast against all the lanes in use; then each lane's
/// count is its pair's place. (The pairs compared a lane at a time, each
/// one's count summed across its vector at its end, as LLVM made of the
/// portable loop: 968 instructions a point of the radius batch by callgrind
/// where this takes 638, and 263-293 ns a call against 72-78 in a scratch
/// loop of 8 to 18 pairs, on a Zen 3.)
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn places_avx2<const N: usize>(d: &[u64; N], id: &[u64; N], n: usize) -> [u32; N] {
    const { assert!(N == 32) };
    if n <= 16 {
        // SAFETY: the caller's.
        unsafe { places_rows::<N, 4>(d, id, n) }
    } else {
        // SAFETY: the caller's.
        unsafe { places_rows::<N, 8>(d, id, n) }
    }
}

/// [`places_avx2`] on the first `R` rows of four (`n <= 4R`), every row
/// whether or not in use, so that the loops unroll (with four rows, the
/// twelve vectors stay in registers).
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn places_rows<const N: usize, const R: usize>(d: &[u64; N], id: &[u64; N], n: usize) -> [u32; N] {
    const { assert!(4 * R <= N) };
    // SAFETY: `d` and `id` hold `N >= 4R` numbers.
    let (dr, ir): ([__m256i; R], [__m256i; R]) = unsafe {
        (
            std::array::from_fn(|r| _mm256_loadu_si256(d.as_ptr().add(4 * r).cast())),
            std::array::from_fn(|r| _mm256_loadu_si256(id.as_ptr().add(4 * r).cast())),
        )
    };
    let mut before = [_mm256_setzero_si256(); R];
    for j in 0..n {
        let (dj, ij) = (_mm256_set1_epi64x(d[j] as i64), _mm256_set1_epi64x(id[j] as i64));
        for r in 0..R {
            // Pair j comes before the lane's: a smaller distance, or the
            // same and a smaller id (every number below 2^63: signed
            // compares order them). (Padding lanes count too, unread.)
            let first = _mm256_or_si256(
                _mm256_cmpgt_epi64(dr[r], dj),
                _mm256_and_si256(_mm256_cmpeq_epi64(dr[r], dj), _mm256_cmpgt_epi64(ir[r], ij)),
            );
            before[r] = _mm256_sub_epi64(before[r], first);
        }
    }
    let mut count = [0u64; N];
    for (r, b) in before.iter().enumerate() {
        // SAFETY: `count` holds `N >= 4R` numbers.
        unsafe { _mm256_storeu_si256(count.as_mut_ptr().add(4 * r).cast(), *b) };
    }
    let mut at = [0u32; N];
    for (i, &c) in count[..n].iter().enumerate() {
        // (Each place below `n`: at most the n − 1 others come first.)
        at[c as usize % N] = i as u32;
    }
    at
}
