//! The batch driver: resolves the instruction set, splits the queries over
//! threads (rayon), gathers each block of [`BLOCK`] queries into columns of
//! `f64` ([`Block`]), hands the block to a tier's kernel (`tiers`) and writes
//! the answers the caller asked for into their slices (non-temporal stores
//! for large calls).

use super::{BatchError, Isa, Options, Outputs, Points, Tier, BLOCK, PAR_MIN};
use crate::kernel::{Raw, Region};
use crate::scalar::{Dim, Scalar};

mod tiers;
use tiers::{accurate_block, fast_block, fast_direct, Ends};

/// Where the segments' vertices come from.
#[derive(Clone, Copy)]
pub(super) enum Src<'a, T, const D: usize> {
    Fixed([T; D]),
    Points(Points<'a, T, D>),
}

impl<'a, T: Copy, const D: usize> Src<'a, T, D> {
    fn slice(&self, start: usize, end: usize) -> Self {
        match self {
            Src::Fixed(x) => Src::Fixed(*x),
            Src::Points(p) => Src::Points(p.slice(start, end)),
        }
    }
}

pub(super) fn run<T: Scalar, const D: usize>(
    a: Src<'_, T, D>,
    b: Src<'_, T, D>,
    p: Points<'_, T, D>,
    n: usize,
    out: Outputs<'_, T, D>,
    opts: &Options,
) -> Result<(), BatchError> {
    let () = Dim::<D>::CHECK;
    out.check(n)?;
    let isa = match opts.isa {
        Isa::Auto => Isa::detect(),
        isa if isa.is_available() => isa,
        isa => return Err(BatchError::IsaUnavailable(isa)),
    };
    let job = Job { a, b, p, isa, tier: opts.tier, line: opts.line, full: out.needs_t_or_point() };
    match opts.threads {
        Some(1) => job.serial(out),
        _ if n < PAR_MIN => job.serial(out),
        None => job.parallel(out, n),
        Some(k) => pool(k)?.install(|| job.parallel(out, n)),
    }
    Ok(())
}

/// A rayon pool of `k` threads, built once per `k` and kept (building one per
/// call costs more than a small batch).
fn pool(k: usize) -> Result<std::sync::Arc<rayon::ThreadPool>, BatchError> {
    use std::sync::{Arc, Mutex};
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == k) {
        return Ok(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new().num_threads(k).build().map_err(|e| BatchError::ThreadPool(e.to_string()))?,
    );
    pools.push((k, p.clone()));
    Ok(p)
}

struct Job<'a, T, const D: usize> {
    a: Src<'a, T, D>,
    b: Src<'a, T, D>,
    p: Points<'a, T, D>,
    isa: Isa,
    tier: Tier,
    line: bool,
    full: bool,
}

impl<T: Scalar, const D: usize> Job<'_, T, D> {
    fn parallel(&self, out: Outputs<'_, T, D>, n: usize) {
        // Halve until pieces are small enough for every thread to get several.
        let grain = (n / (4 * rayon::current_num_threads())).max(PAR_MIN / 4);
        self.split(out, 0, n, grain);
    }

    fn split(&self, out: Outputs<'_, T, D>, start: usize, end: usize, grain: usize) {
        if end - start <= grain {
            return self.range(out, start, end);
        }
        // Split on a block boundary so the pieces match a serial run's blocks.
        let mid = start + ((end - start) / 2).div_ceil(BLOCK) * BLOCK;
        let (lo, hi) = out.split_at(mid - start);
        rayon::join(|| self.split(lo, start, mid, grain), || self.split(hi, mid, end, grain));
    }

    fn serial(&self, out: Outputs<'_, T, D>) {
        self.range(out, 0, self.p.len());
    }

    /// Queries `start..end`, block by block.
    fn range(&self, mut out: Outputs<'_, T, D>, start: usize, end: usize) {
        if self.tier == Tier::Fast
            && !self.full
            && out.region.is_none()
            && let Points::Rows(p) = self.p
        {
            let p = &p[start..end];
            match (self.a, self.b) {
                (Src::Fixed(a), Src::Fixed(b)) => return fast_direct(Ends::One(a, b), p, self.line, out, self.isa),
                (Src::Points(Points::Rows(a)), Src::Points(Points::Rows(b))) => {
                    return fast_direct(Ends::Many(&a[start..end], &b[start..end]), p, self.line, out, self.isa);
                }
                _ => {}
            }
        }
        let (a, b, p) = (self.a.slice(start, end), self.b.slice(start, end), self.p.slice(start, end));
        with_block::<D>(|blk| {
            blk.wants_d2 = out.distance_squared.is_some();
            blk.wants_code = out.region.is_some();
            blk.stream = self.p.len() >= STREAM_MIN;
            // The copies into and out of the block are compiled for the
            // instruction set too (as SSE2 they were a sixth of a
            // one-segment batch's time).
            match self.isa {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: `run` resolved `isa` to one this CPU supports.
                Isa::Avx512 => unsafe { self.blocks_avx512(blk, &a, &b, &p, &mut out, end - start) },
                #[cfg(target_arch = "x86_64")]
                // SAFETY: as above.
                Isa::Avx2 => unsafe { self.blocks_avx2(blk, &a, &b, &p, &mut out, end - start) },
                _ => self.blocks(blk, &a, &b, &p, &mut out, end - start),
            }
        });
    }

    /// Queries `0..n` of the (already sliced) inputs, block by block.
    #[inline(always)]
    fn blocks(
        &self,
        blk: &mut Block<D>,
        a: &Src<'_, T, D>,
        b: &Src<'_, T, D>,
        p: &Points<'_, T, D>,
        out: &mut Outputs<'_, T, D>,
        n: usize,
    ) {
        let mut i = 0;
        while i < n {
            #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
            let mut m = (n - i).min(BLOCK);
            #[cfg(target_arch = "x86_64")]
            {
                blk.direct = None;
                // (Taken afresh from `out` for every block: the pointer is
                // used only until `out` is next written through.)
                if let Some(dc) = self.direct_column(blk, out) {
                    // SAFETY: `i < n`, the column's length.
                    let at = unsafe { dc.at.add(i) };
                    let misaligned = (at as usize % 64) / 8;
                    if misaligned != 0 {
                        // A short block through the columns, up to the
                        // next 64-byte boundary of the output.
                        m = m.min(8 - misaligned);
                    } else if m == BLOCK {
                        blk.direct = Some(crate::sweep::Direct { at, d2: dc.d2 });
                    }
                }
            }
            #[cfg(target_arch = "x86_64")]
            let offered = blk.direct.is_some();
            #[cfg(not(target_arch = "x86_64"))]
            let offered = false;
            blk.fill(a, b, p, i, m);
            self.block(blk, m);
            // The sweep takes the column it writes (a segment it cannot
            // take leaves it): only then is there nothing to copy out.
            #[cfg(target_arch = "x86_64")]
            let written = offered && blk.direct.is_none();
            #[cfg(not(target_arch = "x86_64"))]
            let written = offered;
            if !written {
                blk.write(out, i, m);
            }
            i += m;
        }
        #[cfg(target_arch = "x86_64")]
        {
            blk.direct = None;
        }
        #[cfg(target_arch = "x86_64")]
        if blk.stream {
            // Non-temporal stores are weakly ordered: done before anyone
            // reads the results.
            // SAFETY: SSE is part of x86-64.
            unsafe { core::arch::x86_64::_mm_sfence() };
        }
    }

    /// The caller's output column the sweep writes into directly,
    /// if this call allows it: accurate tier, one segment, AVX-512 or AVX2, a
    /// streaming-sized call, `f64` results, and only `d` or only `d²`
    /// asked for (the other outputs go through the block's columns). Full
    /// blocks whose output starts on a 64-byte boundary then skip the
    /// block's column and its copy; a short first block reaches that
    /// boundary.
    #[cfg(target_arch = "x86_64")]
    fn direct_column(&self, blk: &Block<D>, out: &mut Outputs<'_, T, D>) -> Option<crate::sweep::Direct> {
        let one_segment = matches!((&self.a, &self.b), (Src::Fixed(_), Src::Fixed(_)));
        let f64_out = core::any::TypeId::of::<T>() == core::any::TypeId::of::<f64>();
        if !(matches!(self.isa, Isa::Avx512 | Isa::Avx2)
            && self.tier == Tier::Accurate
            && !self.line
            && !self.full
            && one_segment
            && blk.stream
            && f64_out
            && out.t.is_none()
            && out.point.is_none()
            && out.region.is_none())
        {
            return None;
        }
        let (col, d2) = match (out.distance.as_deref_mut(), out.distance_squared.as_deref_mut()) {
            (Some(c), None) => (c, false),
            (None, Some(c)) => (c, true),
            _ => return None,
        };
        // (`T` is `f64`: checked above.)
        Some(crate::sweep::Direct { at: col.as_mut_ptr().cast::<f64>(), d2 })
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,popcnt")]
    unsafe fn blocks_avx512(
        &self,
        blk: &mut Block<D>,
        a: &Src<'_, T, D>,
        b: &Src<'_, T, D>,
        p: &Points<'_, T, D>,
        out: &mut Outputs<'_, T, D>,
        n: usize,
    ) {
        self.blocks(blk, a, b, p, out, n);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn blocks_avx2(
        &self,
        blk: &mut Block<D>,
        a: &Src<'_, T, D>,
        b: &Src<'_, T, D>,
        p: &Points<'_, T, D>,
        out: &mut Outputs<'_, T, D>,
        n: usize,
    ) {
        self.blocks(blk, a, b, p, out, n);
    }

    fn block(&self, blk: &mut Block<D>, m: usize) {
        match (self.tier, self.line, self.full) {
            (Tier::Accurate, false, true) => accurate_block::<D, false, true>(blk, m, self.isa),
            (Tier::Accurate, false, false) => accurate_block::<D, false, false>(blk, m, self.isa),
            (Tier::Accurate, true, true) => accurate_block::<D, true, true>(blk, m, self.isa),
            (Tier::Accurate, true, false) => accurate_block::<D, true, false>(blk, m, self.isa),
            (Tier::Fast, line, _) => fast_block::<T, D>(blk, m, self.isa, line),
        }
    }
}

/// Runs `f` on this thread's spare block of dimension `D` (a new one the
/// first time): a block is about 50–65 KB, and allocating and zeroing one per
/// call cost more than the kernels on calls of a few dozen queries (the
/// index evaluates its candidates this way). Lanes past a block's queries
/// hold the last call's numbers, whose results are never read.
fn with_block<const D: usize>(f: impl FnOnce(&mut Block<D>)) {
    use std::any::Any;
    use std::cell::RefCell;
    thread_local! {
        static SPARE: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
    }
    let spare = SPARE.with(|s| {
        let mut s = s.borrow_mut();
        let i = s.iter().position(|b| b.is::<Block<D>>())?;
        s.swap_remove(i).downcast::<Block<D>>().ok()
    });
    let mut blk = spare.unwrap_or_else(Block::new);
    f(&mut blk);
    SPARE.with(|s| s.borrow_mut().push(blk));
}

/// Inputs and outputs of up to [`BLOCK`] queries, as `f64` columns (exact for
/// `f32` too). `fixed_a`/`fixed_b` hold the shared vertices of one-to-many
/// batches, which are never copied per query.
struct Block<const D: usize> {
    a: [[f64; BLOCK]; D],
    b: [[f64; BLOCK]; D],
    p: [[f64; BLOCK]; D],
    fixed_a: Option<[f64; D]>,
    fixed_b: Option<[f64; D]>,
    d: [f64; BLOCK],
    d2: [f64; BLOCK],
    t: [f64; BLOCK],
    q: [[f64; BLOCK]; D],
    /// Region per query as the lane kernels give it: 0 start, 1 interior,
    /// 2 end, 3 undefined (converted only if the caller wants regions).
    code: [f64; BLOCK],
    /// Which of `d2` and `code` the caller reads (the sweep skips the
    /// others).
    wants_d2: bool,
    wants_code: bool,
    /// Write results with non-temporal stores (see [`STREAM_MIN`]).
    stream: bool,
    /// The caller's column the sweep (AVX-512 or AVX2) may write straight into (see
    /// [`Job::direct_column`]); the sweep takes it when it does (then the
    /// block's columns hold nothing to copy out).
    #[cfg(target_arch = "x86_64")]
    direct: Option<crate::sweep::Direct>,
}

impl<const D: usize> Block<D> {
    fn new() -> Box<Self> {
        Box::new(Block {
            a: [[0.0; BLOCK]; D],
            b: [[0.0; BLOCK]; D],
            p: [[0.0; BLOCK]; D],
            fixed_a: None,
            fixed_b: None,
            d: [0.0; BLOCK],
            d2: [0.0; BLOCK],
            t: [0.0; BLOCK],
            q: [[0.0; BLOCK]; D],
            code: [0.0; BLOCK],
            wants_d2: true,
            wants_code: true,
            stream: false,
            #[cfg(target_arch = "x86_64")]
            direct: None,
        })
    }

    #[inline(always)]
    fn fill<T: Scalar>(&mut self, a: &Src<'_, T, D>, b: &Src<'_, T, D>, p: &Points<'_, T, D>, i: usize, m: usize) {
        // Inlined, so that it takes the caller's target features (the block
        // loops run inside the AVX2 / AVX-512 wrappers).
        #[inline(always)]
        fn cols<T: Scalar, const D: usize>(dst: &mut [[f64; BLOCK]; D], src: &Points<'_, T, D>, i: usize, m: usize) {
            match src {
                Points::Rows(r) => {
                    for (j, row) in r[i..i + m].iter().enumerate() {
                        for k in 0..D {
                            dst[k][j] = row[k].to_f64();
                        }
                    }
                }
                Points::Columns(c) => {
                    for k in 0..D {
                        for (x, v) in dst[k][..m].iter_mut().zip(&c[k][i..i + m]) {
                            *x = v.to_f64();
                        }
                    }
                }
            }
        }
        // Both set on every fill: a reused block may hold the last call's.
        self.fixed_a = match a {
            Src::Fixed(v) => Some(v.map(T::to_f64)),
            Src::Points(pts) => {
                cols(&mut self.a, pts, i, m);
                None
            }
        };
        self.fixed_b = match b {
            Src::Fixed(v) => Some(v.map(T::to_f64)),
            Src::Points(pts) => {
                cols(&mut self.b, pts, i, m);
                None
            }
        };
        cols(&mut self.p, p, i, m);
    }

    #[inline(always)]
    fn vertex(&self, fixed: Option<[f64; D]>, cols: &[[f64; BLOCK]; D], j: usize) -> [f64; D] {
        match fixed {
            Some(v) => v,
            None => core::array::from_fn(|k| cols[k][j]),
        }
    }

    #[inline(always)]
    fn query(&self, j: usize) -> ([f64; D], [f64; D], [f64; D]) {
        (
            self.vertex(self.fixed_a, &self.a, j),
            self.vertex(self.fixed_b, &self.b, j),
            core::array::from_fn(|k| self.p[k][j]),
        )
    }

    #[inline(always)]
    fn put(&mut self, j: usize, r: &Raw<D>) {
        self.d[j] = r.d;
        self.d2[j] = r.d2;
        self.t[j] = r.t;
        for k in 0..D {
            self.q[k][j] = r.point[k];
        }
        self.code[j] = region_code(r.region);
    }

    #[inline(always)]
    fn write<T: Scalar>(&self, out: &mut Outputs<'_, T, D>, i: usize, m: usize) {
        if let Some(o) = out.distance.as_deref_mut() {
            put_col(&mut o[i..i + m], &self.d[..m], self.stream);
        }
        if let Some(o) = out.distance_squared.as_deref_mut() {
            put_col(&mut o[i..i + m], &self.d2[..m], self.stream);
        }
        if let Some(o) = out.t.as_deref_mut() {
            put_col(&mut o[i..i + m], &self.t[..m], self.stream);
        }
        if let Some(o) = out.point.as_deref_mut() {
            for (j, x) in o[i..i + m].iter_mut().enumerate() {
                *x = core::array::from_fn(|k| T::from_f64(self.q[k][j]));
            }
        }
        if let Some(o) = out.region.as_deref_mut() {
            for (x, c) in o[i..i + m].iter_mut().zip(&self.code) {
                *x = match *c as u8 {
                    0 => Region::Start,
                    1 => Region::Interior,
                    2 => Region::End,
                    _ => Region::Undefined,
                };
            }
        }
    }
}

/// Calls with at least this many queries write their `f64` result columns
/// (distance, squared distance, `t`) with non-temporal stores: at 8 MB a
/// column and up, the results would push the inputs (and everything else)
/// out of the cache, and skipping the read of each destination line before
/// writing it saves memory traffic. One segment, 10M points, one thread:
/// 2.90 → 2.54 ns a query (two threads: 1.59 → 1.32).
const STREAM_MIN: usize = 1 << 20;

/// `dst[j] = src[j]` in the caller's type; for `f64` with `stream`, by
/// non-temporal stores.
#[inline(always)]
fn put_col<T: Scalar>(dst: &mut [T], src: &[f64], stream: bool) {
    #[cfg(target_arch = "x86_64")]
    if stream && core::any::TypeId::of::<T>() == core::any::TypeId::of::<f64>() {
        // SAFETY: `T` is `f64`.
        let dst = unsafe { core::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<f64>(), dst.len()) };
        stream_f64(dst, src);
        return;
    }
    let _ = stream;
    for (x, v) in dst.iter_mut().zip(src) {
        *x = T::from_f64(*v);
    }
}

/// `dst.copy_from_slice(src)` by 16-byte non-temporal stores (SSE2, so any
/// x86-64; the callers fence once the call's blocks are done).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stream_f64(dst: &mut [f64], src: &[f64]) {
    use core::arch::x86_64::{_mm_loadu_pd, _mm_stream_pd};
    let n = dst.len().min(src.len());
    let mut j = 0;
    if n > 0 && !(dst.as_ptr() as usize).is_multiple_of(16) {
        dst[0] = src[0];
        j = 1;
    }
    while j + 2 <= n {
        // SAFETY: SSE2 is part of x86-64; `dst[j..j + 2]` is in bounds and
        // 16-byte aligned (an `f64` slice is 8-byte aligned, and `j` moved
        // it onto 16), `src[j..j + 2]` in bounds.
        unsafe { _mm_stream_pd(dst.as_mut_ptr().add(j), _mm_loadu_pd(src.as_ptr().add(j))) };
        j += 2;
    }
    if j < n {
        dst[j] = src[j];
    }
}

#[inline(always)]
fn region_code(r: Region) -> f64 {
    match r {
        Region::Start => 0.0,
        Region::Interior => 1.0,
        Region::End => 2.0,
        Region::Undefined => 3.0,
    }
}
