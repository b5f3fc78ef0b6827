//! The tiers' block kernels: the accurate tier (faithfully rounded, on
//! `crate::kernel` through SIMD lanes chosen at run time) and the fast tier
//! (`crate::fast`, the textbook formula), both bit-identical to their scalar
//! methods whatever the instruction set.

use super::{Block, Isa, Outputs};
use crate::kernel::{self, Raw, Region};
use crate::lanes::Lanes;
use crate::scalar::Scalar;
use crate::{batch_kernel, fast};

// ------------------------------------------------------------ accurate tier

pub(super) fn accurate_block<const D: usize, const LINE: bool, const FULL: bool>(
    blk: &mut Block<D>,
    m: usize,
    isa: Isa,
) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `run` resolved `isa` to one this CPU supports.
        Isa::Avx512 => unsafe { accurate_avx512::<D, LINE, FULL>(blk, m) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { accurate_avx2::<D, LINE, FULL>(blk, m) },
        #[cfg(target_arch = "x86_64")]
        Isa::Sse2 => accurate_shared_or_not::<crate::lanes::Sse2, D, LINE, FULL>(blk, m),
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => accurate_shared_or_not::<crate::lanes::Neon, D, LINE, FULL>(blk, m),
        _ => {
            for j in 0..m {
                let (a, b, p) = blk.query(j);
                blk.put(j, &scalar_accurate::<D, LINE, FULL>(&a, &b, &p));
            }
        }
    }
}

#[inline(always)]
fn scalar_accurate<const D: usize, const LINE: bool, const FULL: bool>(
    a: &[f64; D],
    b: &[f64; D],
    p: &[f64; D],
) -> Raw<D> {
    match (LINE, FULL) {
        (false, true) => kernel::segment(a, b, p),
        (false, false) => kernel::segment_distance(a, b, p),
        (true, true) => kernel::line(a, b, p),
        (true, false) => kernel::line_distance_only(a, b, p),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,popcnt")]
unsafe fn accurate_avx512<const D: usize, const LINE: bool, const FULL: bool>(blk: &mut Block<D>, m: usize) {
    // SAFETY: this function's features include AVX-512 F, VL, DQ and BW, and POPCNT.
    if !LINE && unsafe { one_segment_block::<D, FULL, true>(blk, m) } {
        return;
    }
    // Up to eight queries (the index's few candidates of one query), one
    // register: the second chain of sixteen lanes was work for none of
    // them (one to eight pairs, `pairs`: 127-137 -> 92-99 ns a call).
    if m <= 8 {
        accurate_shared_or_not::<crate::lanes::Z8, D, LINE, FULL>(blk, m);
        return;
    }
    // Sixteen lanes, two interleaved chains of eight (`Z16`): pairs 4.7 ->
    // 3.3 G cycles on 200k (3D: 9.5 -> 8.5) against one register a vector.
    accurate_shared_or_not::<crate::lanes::Avx512, D, LINE, FULL>(blk, m);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn accurate_avx2<const D: usize, const LINE: bool, const FULL: bool>(blk: &mut Block<D>, m: usize) {
    // SAFETY: this function's features include AVX2 and FMA.
    if !LINE && unsafe { one_segment_block::<D, FULL, false>(blk, m) } {
        return;
    }
    // Four lanes as one register, an intrinsic an operation (`Y4`): the
    // same bits as four-lane arrays LLVM vectorised (`lanes::Arr`), 0.85-0.90
    // of its time on `pairs` (Zen 3); eight as two registers were no faster.
    accurate_shared_or_not::<crate::lanes::Y4, D, LINE, FULL>(blk, m);
}

/// One segment: the branch-free sweep ([`crate::sweep`], AVX-512 or
/// AVX2), if the segment allows it (`false`: the caller runs the lane
/// kernel).
///
/// # Safety
///
/// AVX2 and FMA, and AVX-512 F, VL, DQ and BW if `AVX512` (inlined into
/// the `#[target_feature]` callers above).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn one_segment_block<const D: usize, const FULL: bool, const AVX512: bool>(
    blk: &mut Block<D>,
    m: usize,
) -> bool {
    let (Some(a), Some(b)) = (blk.fixed_a, blk.fixed_b) else { return false };
    let Some(seg) = batch_kernel::Shared::<crate::lanes::Y4, D>::new(&a, &b) else { return false };
    let wants = crate::sweep::Wants { d2: blk.wants_d2, code: blk.wants_code };
    // Taken, so that the caller sees the column was written (see `blocks`).
    let direct = blk.direct.take();
    let out = crate::sweep::Outs {
        d: &mut blk.d,
        d2: &mut blk.d2,
        code: &mut blk.code,
        t: &mut blk.t,
        q: &mut blk.q,
        direct,
    };
    // SAFETY: as this function.
    let rest = unsafe {
        if AVX512 {
            crate::sweep::run_avx512::<D, FULL>(&seg, &blk.p, m, out, wants)
        } else {
            crate::sweep::run_avx2::<D, FULL>(&seg, &blk.p, m, out, wants)
        }
    };
    if direct.is_some() && rest.iter().any(|&w| w != 0) {
        // The non-temporal stores first: the fixes below go to the same
        // lines.
        // SAFETY: SSE is part of x86-64.
        unsafe { core::arch::x86_64::_mm_sfence() };
    }
    for (w, mut bits) in rest.into_iter().enumerate() {
        while bits != 0 {
            let j = w * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (a, b, p) = blk.query(j);
            let r = scalar_accurate::<D, false, FULL>(&a, &b, &p);
            match direct {
                // SAFETY: `j < BLOCK`, within the column (see `Direct`).
                Some(dc) => unsafe { dc.at.add(j).write(if dc.d2 { r.d2 } else { r.d }) },
                None => blk.put(j, &r),
            }
        }
    }
    true
}

/// One segment for the whole block (`SHARED`) or one per query: as a
/// constant, so that with one segment everything that depends on it alone
/// (b − a, |ab|², its window test, 1/L) is hoisted out of the lane loop.
#[inline(always)]
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
fn accurate_shared_or_not<V: Lanes, const D: usize, const LINE: bool, const FULL: bool>(blk: &mut Block<D>, m: usize) {
    if blk.fixed_a.is_some() && blk.fixed_b.is_some() {
        accurate_lanes::<V, D, LINE, FULL, true>(blk, m);
    } else {
        accurate_lanes::<V, D, LINE, FULL, false>(blk, m);
    }
}

/// The lane kernel over a block; flagged lanes are redone by the scalar
/// kernel, which is what makes every lane the scalar kernel's bits.
#[inline(always)]
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
fn accurate_lanes<V: Lanes, const D: usize, const LINE: bool, const FULL: bool, const SHARED: bool>(
    blk: &mut Block<D>,
    m: usize,
) {
    // Loops, not closures, between the lanes and the kernel (see
    // `lanes::Z8`).
    let (fa, fb) = (blk.fixed_a.unwrap_or([0.0; D]), blk.fixed_b.unwrap_or([0.0; D]));
    let (mut shared_a, mut shared_b) = ([V::splat(0.0); D], [V::splat(0.0); D]);
    for k in 0..D {
        shared_a[k] = V::splat(fa[k]);
        shared_b[k] = V::splat(fb[k]);
    }
    let mut j = 0;
    while j < m {
        let (mut a, mut b, mut p) = (shared_a, shared_b, [V::splat(0.0); D]);
        for k in 0..D {
            if !SHARED {
                a[k] = V::load(&blk.a[k][j..]);
                b[k] = V::load(&blk.b[k][j..]);
            }
            p[k] = V::load(&blk.p[k][j..]);
        }
        let r = batch_kernel::accurate::<V, D, LINE, FULL>(&a, &b, &p);
        r.d.store(&mut blk.d[j..]);
        r.d2.store(&mut blk.d2[j..]);
        r.region.store(&mut blk.code[j..]);
        if FULL {
            r.t.store(&mut blk.t[j..]);
            for k in 0..D {
                r.q[k].store(&mut blk.q[k][j..]);
            }
        }
        let mut bits = V::bits(r.fallback);
        while bits != 0 {
            let l = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if j + l < m {
                let (a, b, p) = blk.query(j + l);
                blk.put(j + l, &scalar_accurate::<D, LINE, FULL>(&a, &b, &p));
            }
        }
        j += V::N;
    }
}

// ---------------------------------------------------------------- fast tier

pub(super) fn fast_block<T: Scalar, const D: usize>(blk: &mut Block<D>, m: usize, isa: Isa, line: bool) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `run` resolved `isa` to one this CPU supports.
        Isa::Avx512 => unsafe { fast_avx512::<T, D>(blk, m, line) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { fast_avx2::<T, D>(blk, m, line) },
        _ => fast_loop::<T, D>(blk, m, line),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn fast_avx512<T: Scalar, const D: usize>(blk: &mut Block<D>, m: usize, line: bool) {
    fast_loop::<T, D>(blk, m, line);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fast_avx2<T: Scalar, const D: usize>(blk: &mut Block<D>, m: usize, line: bool) {
    fast_loop::<T, D>(blk, m, line);
}

/// The segments of a direct fast loop: one for all points, or one per point.
#[derive(Clone, Copy)]
pub(super) enum Ends<'a, T, const D: usize> {
    One([T; D], [T; D]),
    Many(&'a [[T; D]], &'a [[T; D]]),
}

/// The fast tier's common cases, rows in and distances out: straight from the
/// caller's slices into the caller's outputs, vectorised for the instruction
/// set (no block copies).
pub(super) fn fast_direct<T: Scalar, const D: usize>(
    ends: Ends<'_, T, D>,
    p: &[[T; D]],
    line: bool,
    out: Outputs<'_, T, D>,
    isa: Isa,
) {
    let (d, d2) = (out.distance, out.distance_squared);
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `run` resolved `isa` to one this CPU supports.
        Isa::Avx512 => unsafe { fast_direct_avx512(ends, p, line, d, d2) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { fast_direct_avx2(ends, p, line, d, d2) },
        _ => fast_direct_loop(ends, p, line, d, d2),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw")]
unsafe fn fast_direct_avx512<T: Scalar, const D: usize>(
    ends: Ends<'_, T, D>,
    p: &[[T; D]],
    line: bool,
    d: Option<&mut [T]>,
    d2: Option<&mut [T]>,
) {
    fast_direct_loop(ends, p, line, d, d2);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fast_direct_avx2<T: Scalar, const D: usize>(
    ends: Ends<'_, T, D>,
    p: &[[T; D]],
    line: bool,
    d: Option<&mut [T]>,
    d2: Option<&mut [T]>,
) {
    fast_direct_loop(ends, p, line, d, d2);
}

#[inline(always)]
fn fast_direct_loop<T: Scalar, const D: usize>(
    ends: Ends<'_, T, D>,
    p: &[[T; D]],
    line: bool,
    d: Option<&mut [T]>,
    d2: Option<&mut [T]>,
) {
    // Segment or line as a constant, so no loop carries the choice.
    if line {
        fast_direct_loop_of::<T, D, true>(ends, p, d, d2);
    } else {
        fast_direct_loop_of::<T, D, false>(ends, p, d, d2);
    }
}

#[inline(always)]
fn fast_direct_loop_of<T: Scalar, const D: usize, const LINE: bool>(
    ends: Ends<'_, T, D>,
    p: &[[T; D]],
    mut d: Option<&mut [T]>,
    mut d2: Option<&mut [T]>,
) {
    let line = LINE;
    let sq = |a: &[T; D], b: &[T; D], pt: &[T; D]| {
        if LINE {
            fast::line_unchecked(a, b, pt).2
        } else {
            fast::segment_unchecked(a, b, pt).2
        }
    };
    // One pass over the points, writing every requested output in it (a
    // second pass over the outputs costs as much memory traffic as the
    // kernel), and noting whether any d² came out non-finite: inside the
    // loop for one segment; for pairs in a scan after it, since the flag kept
    // the four-way loop from vectorising (5.7 against 2.4 ns per query).
    let mut finite = true;
    match (&mut d, &mut d2, ends) {
        (Some(o), None, Ends::One(a, b)) => {
            for (x, pt) in o.iter_mut().zip(p) {
                let v = sq(&a, &b, pt);
                finite &= v.is_finite();
                *x = v.sqrt();
            }
        }
        (None, Some(o), Ends::One(a, b)) => {
            for (x, pt) in o.iter_mut().zip(p) {
                let v = sq(&a, &b, pt);
                finite &= v.is_finite();
                *x = v;
            }
        }
        (Some(o), Some(o2), Ends::One(a, b)) => {
            for ((x, y), pt) in o.iter_mut().zip(o2.iter_mut()).zip(p) {
                let v = sq(&a, &b, pt);
                finite &= v.is_finite();
                *x = v.sqrt();
                *y = v;
            }
        }
        (Some(o), None, Ends::Many(a, b)) => {
            for (((x, pt), a), b) in o.iter_mut().zip(p).zip(a).zip(b) {
                *x = sq(a, b, pt).sqrt();
            }
            finite = o.iter().all(|x| x.is_finite());
        }
        (None, Some(o), Ends::Many(a, b)) => {
            for (((x, pt), a), b) in o.iter_mut().zip(p).zip(a).zip(b) {
                *x = sq(a, b, pt);
            }
            finite = o.iter().all(|x| x.is_finite());
        }
        (Some(o), Some(o2), Ends::Many(a, b)) => {
            for ((((x, y), pt), a), b) in o.iter_mut().zip(o2.iter_mut()).zip(p).zip(a).zip(b) {
                let v = sq(a, b, pt);
                *x = v.sqrt();
                *y = v;
            }
            finite = o2.iter().all(|x| x.is_finite());
        }
        (None, None, _) => return,
    }
    if finite {
        return;
    }
    // Non-finite results: redo with the checked scalar kernel (NaN input
    // must give NaN, exactly as the scalar API does).
    for (i, pt) in p.iter().enumerate() {
        let (a, b) = match ends {
            Ends::One(a, b) => (a, b),
            Ends::Many(a, b) => (a[i], b[i]),
        };
        let v = sq(&a, &b, pt);
        if !v.is_finite() {
            let v = if line { fast::line(&a, &b, pt).2 } else { fast::segment(&a, &b, pt).2 };
            if let Some(o) = d.as_deref_mut() {
                o[i] = v.sqrt();
            }
            if let Some(o) = d2.as_deref_mut() {
                o[i] = v;
            }
        }
    }
}

/// The fast kernel over a block, as a loop the compiler vectorises for the
/// enclosing target features (no FMA is ever used, so every instruction set
/// gives the same bits). Non-finite d² is re-checked afterwards with the
/// scalar kernel, exactly as the scalar API does inline.
#[inline(always)]
fn fast_loop<T: Scalar, const D: usize>(blk: &mut Block<D>, m: usize, line: bool) {
    if line {
        fast_loop_of::<T, D, true>(blk, m);
    } else {
        fast_loop_of::<T, D, false>(blk, m);
    }
}

#[inline(always)]
fn fast_loop_of<T: Scalar, const D: usize, const LINE: bool>(blk: &mut Block<D>, m: usize) {
    for j in 0..m {
        let (a, b, p) = blk.query(j);
        let (a, b, p) = (a.map(T::from_f64), b.map(T::from_f64), p.map(T::from_f64));
        let (q, t, d2) = if LINE {
            fast::line_unchecked(&a, &b, &p)
        } else {
            let (q, t, d2, _) = fast::segment_unchecked(&a, &b, &p);
            (q, t, d2)
        };
        // The region as arithmetic, not as the scalar kernel's if-chain
        // (which compiles to a branch): t = 0 → 0, 0 < t < 1 → 1, t = 1 → 2;
        // on a line, 1 (0 on a degenerate one).
        let code = if LINE {
            let mut same = true;
            for k in 0..D {
                same &= a[k] == b[k];
            }
            1.0 - (same as u8 as f64)
        } else {
            (t > T::ZERO) as u8 as f64 + (t >= T::ONE) as u8 as f64
        };
        blk.d[j] = d2.sqrt().to_f64();
        blk.d2[j] = d2.to_f64();
        blk.t[j] = t.to_f64();
        for (col, x) in blk.q.iter_mut().zip(q) {
            col[j] = x.to_f64();
        }
        blk.code[j] = code;
    }
    for j in 0..m {
        if !blk.d2[j].is_finite() {
            let (a, b, p) = blk.query(j);
            let (a, b, p) = (a.map(T::from_f64), b.map(T::from_f64), p.map(T::from_f64));
            let (q, t, d2, region) = if LINE {
                let (q, t, d2) = fast::line(&a, &b, &p);
                let region = if d2.to_f64().is_nan() {
                    Region::Undefined
                } else if a == b {
                    Region::Start
                } else {
                    Region::Interior
                };
                (q, t, d2, region)
            } else {
                fast::segment(&a, &b, &p)
            };
            let raw = Raw { point: q.map(T::to_f64), t: t.to_f64(), d: d2.sqrt().to_f64(), d2: d2.to_f64(), region };
            blk.put(j, &raw);
        }
    }
}
