//! The AVX-512 lane types: [`Z8`], one `__m512d` with one intrinsic per
//! operation and masks in mask registers, and [`Z16`], two of them side by
//! side (the lane kernel's and the one-segment sweep's type on CPUs with
//! AVX-512).

use super::Lanes;

/// Eight lanes in one AVX-512 register, every operation one intrinsic (the
/// same IEEE operation as [`Arr`](super::Arr)'s element-wise code, so the same bits).
///
/// Only for code inlined into a function compiled with AVX-512 F and DQ (the
/// sweep, see `sweep.rs`, and the lane kernel's blocks): the methods carry no
/// target feature of their own (trait methods cannot), and their intrinsics
/// are inlined once they sit in such a function. That holds as long as no
/// closure stands between: `array::from_fn(|i| …)` over these lanes left
/// every operation an out-of-line call (a closure is a function of its own,
/// without the caller's features), so the kernels use plain loops.
/// Eight lanes per dependent chain is what pays: the kernels are long
/// dependent chains and the reorder window holds about two of them.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Z8(core::arch::x86_64::__m512d);

// SAFETY (every `unsafe` below): the intrinsics need AVX-512 F (DQ for none
// of them), which the functions these are inlined into enable; loads and
// stores go through slices of at least eight elements (checked).
#[cfg(target_arch = "x86_64")]
impl Lanes for Z8 {
    type Mask = u8;
    const N: usize = 8;
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Z8(unsafe { core::arch::x86_64::_mm512_set1_pd(x) })
    }
    #[inline(always)]
    fn load(s: &[f64]) -> Self {
        let s = &s[..8];
        Z8(unsafe { core::arch::x86_64::_mm512_loadu_pd(s.as_ptr()) })
    }
    #[inline(always)]
    fn store(self, s: &mut [f64]) {
        let s = &mut s[..8];
        unsafe { core::arch::x86_64::_mm512_storeu_pd(s.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    unsafe fn stream(self, p: *mut f64) {
        // (The caller's safety conditions: `p` valid for 8 writes, 64-byte
        // aligned.)
        unsafe { core::arch::x86_64::_mm512_stream_pd(p, self.0) }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Z8(unsafe { core::arch::x86_64::_mm512_add_pd(self.0, o.0) })
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Z8(unsafe { core::arch::x86_64::_mm512_sub_pd(self.0, o.0) })
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Z8(unsafe { core::arch::x86_64::_mm512_mul_pd(self.0, o.0) })
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        Z8(unsafe { core::arch::x86_64::_mm512_div_pd(self.0, o.0) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Z8(unsafe { core::arch::x86_64::_mm512_sqrt_pd(self.0) })
    }
    #[inline(always)]
    fn abs(self) -> Self {
        Z8(unsafe { core::arch::x86_64::_mm512_abs_pd(self.0) })
    }
    #[inline(always)]
    fn neg(self) -> Self {
        use core::arch::x86_64::*;
        Z8(unsafe { _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(self.0), _mm512_set1_epi64(i64::MIN))) })
    }
    #[inline(always)]
    fn two_prod(a: Self, b: Self) -> (Self, Self) {
        use core::arch::x86_64::*;
        unsafe {
            let p = _mm512_mul_pd(a.0, b.0);
            (Z8(p), Z8(_mm512_fmsub_pd(a.0, b.0, p)))
        }
    }
    #[inline(always)]
    fn lt(self, o: Self) -> u8 {
        use core::arch::x86_64::*;
        unsafe { _mm512_cmp_pd_mask::<_CMP_LT_OQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn le(self, o: Self) -> u8 {
        use core::arch::x86_64::*;
        unsafe { _mm512_cmp_pd_mask::<_CMP_LE_OQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn eq(self, o: Self) -> u8 {
        use core::arch::x86_64::*;
        unsafe { _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn ne(self, o: Self) -> u8 {
        use core::arch::x86_64::*;
        unsafe { _mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(self.0, o.0) }
    }
    #[inline(always)]
    fn and(a: u8, b: u8) -> u8 {
        a & b
    }
    #[inline(always)]
    fn or(a: u8, b: u8) -> u8 {
        a | b
    }
    #[inline(always)]
    fn andnot(a: u8, b: u8) -> u8 {
        !a & b
    }
    #[inline(always)]
    fn none() -> u8 {
        0
    }
    #[inline(always)]
    fn select(m: u8, a: Self, b: Self) -> Self {
        Z8(unsafe { core::arch::x86_64::_mm512_mask_blend_pd(m, b.0, a.0) })
    }
    #[inline(always)]
    fn bits(m: u8) -> u32 {
        u32::from(m)
    }
}

/// Sixteen lanes as two [`Z8`] registers, every operation issued on both
/// back to back: two independent dependent chains side by side in the
/// instruction stream, so the core always has the other one's work at hand
/// while one waits on a latency.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Z16(Z8, Z8);

#[cfg(target_arch = "x86_64")]
impl Z16 {
    #[inline(always)]
    fn mask(lo: u8, hi: u8) -> u16 {
        u16::from(lo) | u16::from(hi) << 8
    }
}

#[cfg(target_arch = "x86_64")]
impl Lanes for Z16 {
    type Mask = u16;
    const N: usize = 16;
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Z16(Z8::splat(x), Z8::splat(x))
    }
    #[inline(always)]
    fn load(s: &[f64]) -> Self {
        Z16(Z8::load(&s[..8]), Z8::load(&s[8..16]))
    }
    #[inline(always)]
    fn store(self, s: &mut [f64]) {
        let (lo, hi) = s[..16].split_at_mut(8);
        self.0.store(lo);
        self.1.store(hi);
    }
    #[inline(always)]
    unsafe fn stream(self, p: *mut f64) {
        // SAFETY: the caller's: 16 values from a 64-byte aligned `p`.
        unsafe {
            self.0.stream(p);
            self.1.stream(p.add(8));
        }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Z16(self.0.add(o.0), self.1.add(o.1))
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Z16(self.0.sub(o.0), self.1.sub(o.1))
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Z16(self.0.mul(o.0), self.1.mul(o.1))
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        Z16(self.0.div(o.0), self.1.div(o.1))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Z16(self.0.sqrt(), self.1.sqrt())
    }
    #[inline(always)]
    fn abs(self) -> Self {
        Z16(self.0.abs(), self.1.abs())
    }
    #[inline(always)]
    fn neg(self) -> Self {
        Z16(self.0.neg(), self.1.neg())
    }
    #[inline(always)]
    fn two_prod(a: Self, b: Self) -> (Self, Self) {
        let (p0, e0) = Z8::two_prod(a.0, b.0);
        let (p1, e1) = Z8::two_prod(a.1, b.1);
        (Z16(p0, p1), Z16(e0, e1))
    }
    #[inline(always)]
    fn lt(self, o: Self) -> u16 {
        Z16::mask(self.0.lt(o.0), self.1.lt(o.1))
    }
    #[inline(always)]
    fn le(self, o: Self) -> u16 {
        Z16::mask(self.0.le(o.0), self.1.le(o.1))
    }
    #[inline(always)]
    fn eq(self, o: Self) -> u16 {
        Z16::mask(self.0.eq(o.0), self.1.eq(o.1))
    }
    #[inline(always)]
    fn ne(self, o: Self) -> u16 {
        Z16::mask(self.0.ne(o.0), self.1.ne(o.1))
    }
    #[inline(always)]
    fn and(a: u16, b: u16) -> u16 {
        a & b
    }
    #[inline(always)]
    fn or(a: u16, b: u16) -> u16 {
        a | b
    }
    #[inline(always)]
    fn andnot(a: u16, b: u16) -> u16 {
        !a & b
    }
    #[inline(always)]
    fn none() -> u16 {
        0
    }
    #[inline(always)]
    fn select(m: u16, a: Self, b: Self) -> Self {
        Z16(Z8::select(m as u8, a.0, b.0), Z8::select((m >> 8) as u8, a.1, b.1))
    }
    #[inline(always)]
    fn bits(m: u16) -> u32 {
        u32::from(m)
    }
}
