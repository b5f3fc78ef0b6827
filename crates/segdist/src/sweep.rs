//! One segment against many points, on x86-64 with AVX-512 or AVX2: one
//! branch-free pass over a block, sixteen lanes at a time (AVX-512) or eight
//! (AVX2), software-pipelined.
//!
//! Each vector of queries takes its region from a plain-`f64` estimate of
//! `N = ap·ab` (placed only with the margin of
//! [`MARGIN`](crate::batch_kernel::MARGIN), which makes the verdict the
//! scalar kernel's), then one exact difference from the chosen vertex, both
//! regions' double-double steps, the vertex's square root and (2D) the
//! interior's quotient ([`Shared::distance_start`],
//! [`Shared::distance_end`]). Lanes the
//! estimate cannot place, with a coordinate outside the routable range, or
//! that the scalar kernel would finish on its exact path, go to the scalar
//! kernel afterwards.
//!
//! Why not route the queries by region first, each region's kernel on its
//! own lanes (as an AVX2 pass did until 2026-12-04): the work of the region
//! a lane does not need costs less than sorting the lanes out and back
//! (shuffles, stores and reloads of every coordinate). On the Zen 5
//! measured, per query on one segment and 200,000 points in cache,
//! distances: routed 10.9 cycles, this pass 8.6 (3D: 20.8 and 18.2); on a
//! Zen 3 with AVX2 (in-process alternation of the two, the same bits):
//! 2D distances 6.0-6.4 ns a query routed against 4.7-4.9 here, 10 M
//! points 7.1-7.4 against 5.3-5.4 (writing the caller's column directly,
//! below), 2D with `t` and the point 11.4-12.2 against 9.8-11.0, 3D
//! distances 17.5-18.5 against 14.4-14.7, 3D with `t` and the point the
//! same (22-27 both). The kernel is one long dependent chain per vector,
//! so what counts is how many chains the core sees at once: sixteen lanes
//! as two registers ([`Z16`], 2D; eight in 3D, whose longer kernel fills
//! the registers with one), each operation issued on both, and the second
//! half of one vector's chain interleaved with the first half of the next
//! (software pipelining); with AVX2, two four-lane registers ([`Y8`], 2D;
//! one, [`Y4`], in 3D: eight lanes there took 1.06-1.2x the time for
//! distances, the same with `t` and the point). 6.9 cycles (3D 17.0) on
//! the Zen 5 since distances take no residual test
//! (`crate::eft::sqrt_rounded`), 6.3 (3D 14.8) with the first half cut to
//! the region estimate. (Lanes written as intrinsics,
//! not arrays left to LLVM's vectoriser: the array form of the same pass on
//! AVX2 had been no faster than the routing.)

// Index loops over coordinates: clearest here, and no closure (see
// `lanes::Z8`) stands between the kernels and their target features.
#![allow(clippy::needless_range_loop)]

use crate::batch_kernel::{all_routable, Shared};
use crate::lanes::{Lanes, Y4, Y8, Z16, Z8};

/// Queries per block (the batch driver's block size).
pub(crate) const BLOCK: usize = 256;

/// What the block needs back besides `d`.
#[derive(Clone, Copy)]
pub(crate) struct Wants {
    pub d2: bool,
    pub code: bool,
}

/// A result column the sweep writes straight into the caller's
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
    /// The direct column, if any.
    pub direct: Option<Direct>,
}

/// Runs a block's `m` queries (coordinate columns `p`) into `out`; returns
/// the queries left for the scalar kernel, one bit each (a `u64` per 64
/// queries).
///
/// # Safety
///
/// The CPU must have AVX-512 F, VL, DQ and BW (hence AVX2 and FMA).
#[inline]
#[target_feature(enable = "avx2,fma,avx512f,avx512vl,avx512dq,avx512bw")]
pub(crate) unsafe fn run_avx512<const D: usize, const FULL: bool>(
    seg: &Shared<Y4, D>,
    p: &[[f64; BLOCK]; D],
    m: usize,
    out: Outs<'_, D>,
    wants: Wants,
) -> [u64; BLOCK / 64] {
    // Sixteen lanes in 2D; in 3D the kernel's live values fill the
    // registers with eight (sixteen spilled: 3.96 against 3.63 G cycles on
    // the harness).
    pick::<Z16, Z8, D, FULL>(seg, p, m, out, wants)
}

/// [`run_avx512`] on a CPU with AVX2 and FMA but not AVX-512: eight lanes
/// as two four-lane registers ([`Y8`]; four in 3D, [`Y4`]).
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[inline]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn run_avx2<const D: usize, const FULL: bool>(
    seg: &Shared<Y4, D>,
    p: &[[f64; BLOCK]; D],
    m: usize,
    out: Outs<'_, D>,
    wants: Wants,
) -> [u64; BLOCK / 64] {
    pick::<Y8, Y4, D, FULL>(seg, p, m, out, wants)
}

/// The pass on `W` lanes in 2D and `N` in 3D, with the per-lane range
/// tests only where a coordinate needs them (rare).
#[inline(always)]
fn pick<W: Lanes, N: Lanes, const D: usize, const FULL: bool>(
    seg: &Shared<Y4, D>,
    p: &[[f64; BLOCK]; D],
    m: usize,
    out: Outs<'_, D>,
    wants: Wants,
) -> [u64; BLOCK / 64] {
    let mut cols: [&[f64]; D] = [&[]; D];
    for i in 0..D {
        cols[i] = &p[i][..m];
    }
    match (D, all_routable(&cols)) {
        (2, true) => pass::<W, D, false, FULL>(seg, p, m, out, wants),
        (2, false) => pass::<W, D, true, FULL>(seg, p, m, out, wants),
        (_, true) => pass::<N, D, false, FULL>(seg, p, m, out, wants),
        (_, false) => pass::<N, D, true, FULL>(seg, p, m, out, wants),
    }
}

/// Lanes `j..j + K::N` of the columns `p` (a function, not a closure: a
/// closure does not take the caller's target features, see `lanes::Z8`).
#[inline(always)]
fn load<K: Lanes, const D: usize>(p: &[[f64; BLOCK]; D], j: usize) -> [K; D] {
    let mut v = [K::splat(0.0); D];
    for i in 0..D {
        v[i] = K::load(&p[i][j..]);
    }
    v
}

/// The pass: vector `j + 1`'s first half, then vector `j`'s second half, so
/// that two vectors' chains are in flight at once.
#[inline(always)]
fn pass<K: Lanes, const D: usize, const CHECK: bool, const FULL: bool>(
    seg: &Shared<Y4, D>,
    p: &[[f64; BLOCK]; D],
    m: usize,
    out: Outs<'_, D>,
    wants: Wants,
) -> [u64; BLOCK / 64] {
    const { assert!(BLOCK.is_multiple_of(64) && 64 % K::N == 0) };
    let seg = seg.widen::<K>();
    let mut rest = [0u64; BLOCK / 64];
    let mut half = seg.distance_start::<CHECK>(&load::<K, D>(p, 0));
    let mut j = 0;
    while j < m {
        // (Lanes past `m` hold stale numbers: computed, never read back.)
        let next = if j + K::N < m { seg.distance_start::<CHECK>(&load::<K, D>(p, j + K::N)) } else { half };
        let e = seg.distance_end::<FULL>(half, wants);
        half = next;
        if let Some(direct) = out.direct {
            // Stores spread over the pass: written as a burst after it, the
            // block's column cost 0.35 ns a query at 10M points.
            let col = if direct.d2 { e.d2 } else { e.d };
            // SAFETY: `direct.at` is valid for `BLOCK` writes and 64-byte
            // aligned (see `Direct`), and `j + K::N <= BLOCK`, `j` a
            // multiple of `K::N` (eight or sixteen).
            unsafe { col.stream(direct.at.add(j)) };
        } else {
            e.d.store(&mut out.d[j..]);
            if wants.d2 {
                e.d2.store(&mut out.d2[j..]);
            }
            if wants.code {
                e.code.store(&mut out.code[j..]);
            }
        }
        if FULL {
            e.t.store(&mut out.t[j..]);
            for i in 0..D {
                e.q[i].store(&mut out.q[i][j..]);
            }
        }
        rest[j / 64] |= u64::from(e.rest) << (j % 64);
        j += K::N;
    }
    if !m.is_multiple_of(64) {
        // Lanes past `m` are not queries.
        rest[m / 64] &= (1u64 << (m % 64)) - 1;
    }
    rest
}
