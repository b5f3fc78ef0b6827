//! The AVX2 lane types, for CPUs with AVX2 and FMA but no AVX-512: [`Y4`],
//! one `__m256d` with one intrinsic per operation and masks kept as
//! vectors, and [`Y8`], two of them side by side (the one-segment sweep's
//! type in 2D).

use super::Lanes;

/// Four lanes in one AVX2 register, every operation one intrinsic (the same
/// IEEE operation as [`Arr`](super::Arr)'s element-wise code, so the same bits); masks
/// stay vectors (all-ones or all-zeros lanes), so selects are blends.
///
/// As [`Z8`](super::Z8): only for code inlined into a function compiled with AVX2 and
/// FMA (on CPUs without AVX-512: the branch-free sweep, `sweep.rs`, and the
/// lane kernel's blocks), with no closure in between.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Y4(core::arch::x86_64::__m256d);

// SAFETY (every `unsafe` below): the intrinsics need AVX (FMA for
// `two_prod`), which the functions these are inlined into enable; loads and
// stores go through slices of at least four elements (checked).
#[cfg(target_arch = "x86_64")]
impl Lanes for Y4 {
    type Mask = core::arch::x86_64::__m256d;
    const N: usize = 4;
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Y4(unsafe { core::arch::x86_64::_mm256_set1_pd(x) })
    }
    #[inline(always)]
    fn load(s: &[f64]) -> Self {
        let s = &s[..4];
        Y4(unsafe { core::arch::x86_64::_mm256_loadu_pd(s.as_ptr()) })
    }
    #[inline(always)]
    fn store(self, s: &mut [f64]) {
        let s = &mut s[..4];
        unsafe { core::arch::x86_64::_mm256_storeu_pd(s.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    unsafe fn stream(self, p: *mut f64) {
        // (The caller's safety conditions: `p` valid for 4 writes, 32-byte
        // aligned.)
        unsafe { core::arch::x86_64::_mm256_stream_pd(p, self.0) }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Y4(unsafe { core::arch::x86_64::_mm256_add_pd(self.0, o.0) })
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Y4(unsafe { core::arch::x86_64::_mm256_sub_pd(self.0, o.0) })
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Y4(unsafe { core::arch::x86_64::_mm256_mul_pd(self.0, o.0) })
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        Y4(unsafe { core::arch::x86_64::_mm256_div_pd(self.0, o.0) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Y4(unsafe { core::arch::x86_64::_mm256_sqrt_pd(self.0) })
    }
    #[inline(always)]
    fn abs(self) -> Self {
        use core::arch::x86_64::*;
        Y4(unsafe { _mm256_andnot_pd(_mm256_set1_pd(-0.0), self.0) })
    }
    #[inline(always)]
    fn neg(self) -> Self {
        use core::arch::x86_64::*;
        Y4(unsafe { _mm256_xor_pd(_mm256_set1_pd(-0.0), self.0) })
    }
    #[inline(always)]
    fn two_prod(a: Self, b: Self) -> (Self, Self) {
        use core::arch::x86_64::*;
        unsafe {
            let p = _mm256_mul_pd(a.0, b.0);
            (Y4(p), Y4(_mm256_fmsub_pd(a.0, b.0, p)))
        }
    }
    #[inline(always)]
    fn lt(self, o: Self) -> Self::Mask {
        use core::arch::x86_64::*;
        unsafe { _mm256_cmp_pd::<_CMP_LT_OQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn le(self, o: Self) -> Self::Mask {
        use core::arch::x86_64::*;
        unsafe { _mm256_cmp_pd::<_CMP_LE_OQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn eq(self, o: Self) -> Self::Mask {
        use core::arch::x86_64::*;
        unsafe { _mm256_cmp_pd::<_CMP_EQ_OQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn ne(self, o: Self) -> Self::Mask {
        use core::arch::x86_64::*;
        unsafe { _mm256_cmp_pd::<_CMP_NEQ_UQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask {
        unsafe { core::arch::x86_64::_mm256_and_pd(a, b) }
    }
    #[inline(always)]
    fn or(a: Self::Mask, b: Self::Mask) -> Self::Mask {
        unsafe { core::arch::x86_64::_mm256_or_pd(a, b) }
    }
    #[inline(always)]
    fn andnot(a: Self::Mask, b: Self::Mask) -> Self::Mask {
        // (`_mm256_andnot_pd(a, b)` is `!a & b`.)
        unsafe { core::arch::x86_64::_mm256_andnot_pd(a, b) }
    }
    #[inline(always)]
    fn none() -> Self::Mask {
        unsafe { core::arch::x86_64::_mm256_setzero_pd() }
    }
    #[inline(always)]
    fn select(m: Self::Mask, a: Self, b: Self) -> Self {
        // (Lanes of `m` are all ones or all zeros: the sign bit decides.)
        Y4(unsafe { core::arch::x86_64::_mm256_blendv_pd(b.0, a.0, m) })
    }
    #[inline(always)]
    fn bits(m: Self::Mask) -> u32 {
        (unsafe { core::arch::x86_64::_mm256_movemask_pd(m) }) as u32
    }
}

/// Eight lanes as two [`Y4`] registers, every operation issued on both (two
/// dependent chains interleaved, as [`Z16`](super::Z16) does with [`Z8`](super::Z8)).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Y8(Y4, Y4);

#[cfg(target_arch = "x86_64")]
type Y4Mask = core::arch::x86_64::__m256d;

#[cfg(target_arch = "x86_64")]
impl Lanes for Y8 {
    type Mask = (Y4Mask, Y4Mask);
    const N: usize = 8;
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Y8(Y4::splat(x), Y4::splat(x))
    }
    #[inline(always)]
    fn load(s: &[f64]) -> Self {
        Y8(Y4::load(&s[..4]), Y4::load(&s[4..8]))
    }
    #[inline(always)]
    fn store(self, s: &mut [f64]) {
        let (lo, hi) = s[..8].split_at_mut(4);
        self.0.store(lo);
        self.1.store(hi);
    }
    #[inline(always)]
    unsafe fn stream(self, p: *mut f64) {
        // SAFETY: the caller's: 8 values from a 32-byte aligned `p`.
        unsafe {
            self.0.stream(p);
            self.1.stream(p.add(4));
        }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Y8(self.0.add(o.0), self.1.add(o.1))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Y8(self.0.sub(o.0), self.1.sub(o.1))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Y8(self.0.mul(o.0), self.1.mul(o.1))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        Y8(self.0.div(o.0), self.1.div(o.1))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Y8(self.0.sqrt(), self.1.sqrt())
    }
    #[inline(always)]
    fn abs(self) -> Self {
        Y8(self.0.abs(), self.1.abs())
    }
    #[inline(always)]
    fn neg(self) -> Self {
        Y8(self.0.neg(), self.1.neg())
    }
    #[inline(always)]
    fn two_prod(a: Self, b: Self) -> (Self, Self) {
        let (p0, e0) = Y4::two_prod(a.0, b.0);
        let (p1, e1) = Y4::two_prod(a.1, b.1);
        (Y8(p0, p1), Y8(e0, e1))
    }
    #[inline(always)]
    fn lt(self, o: Self) -> Self::Mask {
        (self.0.lt(o.0), self.1.lt(o.1))
    }
    #[inline(always)]
    fn le(self, o: Self) -> Self::Mask {
        (self.0.le(o.0), self.1.le(o.1))
    }
    #[inline(always)]
    fn eq(self, o: Self) -> Self::Mask {
        (self.0.eq(o.0), self.1.eq(o.1))
    }
    #[inline(always)]
    fn ne(self, o: Self) -> Self::Mask {
        (self.0.ne(o.0), self.1.ne(o.1))
    }
    #[inline(always)]
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask {
        (Y4::and(a.0, b.0), Y4::and(a.1, b.1))
    }
    #[inline(always)]
    fn or(a: Self::Mask, b: Self::Mask) -> Self::Mask {
        (Y4::or(a.0, b.0), Y4::or(a.1, b.1))
    }
    #[inline(always)]
    fn andnot(a: Self::Mask, b: Self::Mask) -> Self::Mask {
        (Y4::andnot(a.0, b.0), Y4::andnot(a.1, b.1))
    }
    #[inline(always)]
    fn none() -> Self::Mask {
        (Y4::none(), Y4::none())
    }
    #[inline(always)]
    fn select(m: Self::Mask, a: Self, b: Self) -> Self {
        Y8(Y4::select(m.0, a.0, b.0), Y4::select(m.1, a.1, b.1))
    }
    #[inline(always)]
    fn bits(m: Self::Mask) -> u32 {
        Y4::bits(m.0) | Y4::bits(m.1) << 4
    }
}
