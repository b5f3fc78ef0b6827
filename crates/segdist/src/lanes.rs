//! A few `f64` lanes at a time: the operations the batch kernel needs, for
//! one lane (tests) and for SSE2, NEON, AVX2+FMA and AVX-512 widths.
//!
//! The batch kernel (`batch_kernel.rs`) is written once over this
//! trait. Every operation is a single IEEE operation (or an exact product), in
//! the same order as the scalar kernel, so every lane gives the scalar
//! kernel's bits.
//!
//! The SSE2 and NEON lane types are plain arrays with element-wise
//! operations (see [`Arr`]): the `#[target_feature]` kernels that use them
//! are vectorised by LLVM. The AVX2 type ([`Y4`]) and the AVX-512 type
//! ([`Z8`]) are one register with one intrinsic per operation, and [`Y8`]
//! and [`Z16`] two of them side by side (two dependent chains interleaved:
//! the one-segment sweep's lane types). Either way each lane gets exactly
//! the IEEE operation the scalar kernel does, which is what bit-identity
//! rests on. (With AVX2 the array form had compiled to slower code than
//! the intrinsics: the one-segment sweep 1.3x their time, `pairs` 1.1-1.2x,
//! on a Zen 3.)

// Element-wise loops over fixed-size arrays are clearest (and vectorise most
// reliably) as index loops.
#![allow(clippy::needless_range_loop)]

/// `N` lanes of `f64` with comparison masks.
pub(crate) trait Lanes: Copy {
    type Mask: Copy;
    const N: usize;
    fn splat(x: f64) -> Self;
    /// Loads `N` values from `s[..N]`.
    fn load(s: &[f64]) -> Self;
    /// Stores `N` values to `s[..N]`.
    fn store(self, s: &mut [f64]);
    /// Stores the lanes at `p` with non-temporal stores where the lane type
    /// has them (plain stores otherwise).
    ///
    /// # Safety
    ///
    /// `p` must be valid for `N` writes and aligned to the vector's size.
    #[cfg(target_arch = "x86_64")]
    unsafe fn stream(self, p: *mut f64) {
        let mut x = [0.0; 16];
        self.store(&mut x);
        for (i, v) in x[..Self::N].iter().enumerate() {
            // SAFETY: the caller's.
            unsafe { p.add(i).write(*v) };
        }
    }
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn sqrt(self) -> Self;
    fn abs(self) -> Self;
    fn neg(self) -> Self;
    /// The exact product `a·b = hi + lo` (no overflow or underflow).
    fn two_prod(a: Self, b: Self) -> (Self, Self);
    fn lt(self, o: Self) -> Self::Mask;
    fn le(self, o: Self) -> Self::Mask;
    fn eq(self, o: Self) -> Self::Mask;
    fn ne(self, o: Self) -> Self::Mask;
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    fn or(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    fn andnot(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    fn none() -> Self::Mask;
    /// `m ? a : b`, lane by lane.
    fn select(m: Self::Mask, a: Self, b: Self) -> Self;
    /// Bit `i` set when lane `i` of the mask is.
    fn bits(m: Self::Mask) -> u32;
}

/// Dekker's exact product, in any lane type (no FMA needed).
#[inline(always)]
fn dekker<V: Lanes>(a: V, b: V) -> (V, V) {
    let s = V::splat(134_217_729.0);
    let split = |x: V| {
        let c = s.mul(x);
        let hi = c.sub(c.sub(x));
        (hi, x.sub(hi))
    };
    let p = a.mul(b);
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    let e = ah.mul(bh).sub(p).add(ah.mul(bl)).add(al.mul(bh)).add(al.mul(bl));
    (p, e)
}

/// One lane: plain `f64`, exact products by FMA or Dekker (`FMA`). Used by
/// the tests to check the lane kernel against the scalar kernel anywhere.
#[cfg(test)]
#[derive(Clone, Copy)]
pub(crate) struct Scalar1<const FMA: bool>(pub f64);

#[cfg(test)]
impl<const FMA: bool> Lanes for Scalar1<FMA> {
    type Mask = bool;
    const N: usize = 1;
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Scalar1(x)
    }
    #[inline(always)]
    fn load(s: &[f64]) -> Self {
        Scalar1(s[0])
    }
    #[inline(always)]
    fn store(self, s: &mut [f64]) {
        s[0] = self.0;
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Scalar1(self.0 + o.0)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Scalar1(self.0 - o.0)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Scalar1(self.0 * o.0)
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        Scalar1(self.0 / o.0)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Scalar1(self.0.sqrt())
    }
    #[inline(always)]
    fn abs(self) -> Self {
        Scalar1(self.0.abs())
    }
    #[inline(always)]
    fn neg(self) -> Self {
        Scalar1(-self.0)
    }
    #[inline(always)]
    fn two_prod(a: Self, b: Self) -> (Self, Self) {
        if FMA {
            let p = a.0 * b.0;
            (Scalar1(p), Scalar1(a.0.mul_add(b.0, -p)))
        } else {
            dekker(a, b)
        }
    }
    #[inline(always)]
    fn lt(self, o: Self) -> bool {
        self.0 < o.0
    }
    #[inline(always)]
    fn le(self, o: Self) -> bool {
        self.0 <= o.0
    }
    #[inline(always)]
    fn eq(self, o: Self) -> bool {
        self.0 == o.0
    }
    #[inline(always)]
    fn ne(self, o: Self) -> bool {
        self.0 != o.0
    }
    #[inline(always)]
    fn and(a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn or(a: bool, b: bool) -> bool {
        a | b
    }
    #[inline(always)]
    fn andnot(a: bool, b: bool) -> bool {
        !a & b
    }
    #[inline(always)]
    fn none() -> bool {
        false
    }
    #[inline(always)]
    fn select(m: bool, a: Self, b: Self) -> Self {
        if m {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn bits(m: bool) -> u32 {
        m as u32
    }
}

/// `N` lanes as a plain array, every operation element by element.
///
/// No intrinsics: each operation is written as the scalar IEEE operation on
/// each element, all `#[inline(always)]`, and the `#[target_feature]` kernel
/// that uses them lets LLVM's vectoriser turn them into vector instructions.
/// (Intrinsics in trait methods cannot carry a target feature on stable Rust,
/// and LLVM then left `_mm512_add_pd` and friends as real calls.) Whatever the
/// vectoriser does, every element is the same IEEE operation as the scalar
/// kernel's, so the bits cannot differ. `FMA` picks the exact product: a fused
/// multiply-add (only where the kernel is compiled with FMA) or Dekker's.
#[derive(Clone, Copy)]
pub(crate) struct Arr<const N: usize, const FMA: bool>([f64; N]);

/// Two lanes for SSE2 (no FMA).
#[cfg(target_arch = "x86_64")]
pub(crate) type Sse2 = Arr<2, false>;
/// Two lanes for NEON (AArch64), with FMA (always there). Also built in the
/// tests elsewhere, where `mul_add` is exact in software: the same
/// operations, checked against the scalar kernel on any machine.
#[cfg(any(target_arch = "aarch64", test))]
pub(crate) type Neon = Arr<2, true>;
/// Sixteen lanes for AVX-512 (two registers, see [`Z16`]).
#[cfg(target_arch = "x86_64")]
pub(crate) type Avx512 = Z16;

impl<const N: usize, const FMA: bool> Arr<N, FMA> {
    #[inline(always)]
    fn map2(self, o: Self, f: impl Fn(f64, f64) -> f64) -> Self {
        let mut r = [0.0; N];
        for i in 0..N {
            r[i] = f(self.0[i], o.0[i]);
        }
        Arr(r)
    }
    #[inline(always)]
    fn map(self, f: impl Fn(f64) -> f64) -> Self {
        let mut r = [0.0; N];
        for i in 0..N {
            r[i] = f(self.0[i]);
        }
        Arr(r)
    }
    /// A comparison as all-ones / all-zeros 64-bit lanes (what vector
    /// compares produce, so selects become blends).
    #[inline(always)]
    fn cmp(self, o: Self, f: impl Fn(f64, f64) -> bool) -> [u64; N] {
        let mut r = [0; N];
        for i in 0..N {
            r[i] = (f(self.0[i], o.0[i]) as u64).wrapping_neg();
        }
        r
    }
}

#[inline(always)]
fn mask2<const N: usize>(a: [u64; N], b: [u64; N], f: impl Fn(u64, u64) -> u64) -> [u64; N] {
    let mut r = [0; N];
    for i in 0..N {
        r[i] = f(a[i], b[i]);
    }
    r
}

impl<const N: usize, const FMA: bool> Lanes for Arr<N, FMA> {
    type Mask = [u64; N];
    const N: usize = N;
    #[inline(always)]
    fn splat(x: f64) -> Self {
        Arr([x; N])
    }
    #[inline(always)]
    fn load(s: &[f64]) -> Self {
        Arr(s[..N].try_into().expect("N lanes"))
    }
    #[inline(always)]
    fn store(self, s: &mut [f64]) {
        s[..N].copy_from_slice(&self.0);
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.map2(o, |a, b| a + b)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self.map2(o, |a, b| a - b)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self.map2(o, |a, b| a * b)
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        self.map2(o, |a, b| a / b)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        self.map(f64::sqrt)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self.map(f64::abs)
    }
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(|a| -a)
    }
    #[inline(always)]
    fn two_prod(a: Self, b: Self) -> (Self, Self) {
        if FMA {
            let p = a.mul(b);
            let mut e = [0.0; N];
            for i in 0..N {
                e[i] = a.0[i].mul_add(b.0[i], -p.0[i]);
            }
            (p, Arr(e))
        } else {
            dekker(a, b)
        }
    }
    #[inline(always)]
    fn lt(self, o: Self) -> [u64; N] {
        self.cmp(o, |a, b| a < b)
    }
    #[inline(always)]
    fn le(self, o: Self) -> [u64; N] {
        self.cmp(o, |a, b| a <= b)
    }
    #[inline(always)]
    fn eq(self, o: Self) -> [u64; N] {
        self.cmp(o, |a, b| a == b)
    }
    #[inline(always)]
    fn ne(self, o: Self) -> [u64; N] {
        self.cmp(o, |a, b| a != b)
    }
    #[inline(always)]
    fn and(a: [u64; N], b: [u64; N]) -> [u64; N] {
        mask2(a, b, |x, y| x & y)
    }
    #[inline(always)]
    fn or(a: [u64; N], b: [u64; N]) -> [u64; N] {
        mask2(a, b, |x, y| x | y)
    }
    #[inline(always)]
    fn andnot(a: [u64; N], b: [u64; N]) -> [u64; N] {
        mask2(a, b, |x, y| !x & y)
    }
    #[inline(always)]
    fn none() -> [u64; N] {
        [0; N]
    }
    #[inline(always)]
    fn select(m: [u64; N], a: Self, b: Self) -> Self {
        let mut r = [0.0; N];
        for i in 0..N {
            r[i] = f64::from_bits((a.0[i].to_bits() & m[i]) | (b.0[i].to_bits() & !m[i]));
        }
        Arr(r)
    }
    #[inline(always)]
    fn bits(m: [u64; N]) -> u32 {
        let mut r = 0;
        for (i, b) in m.iter().enumerate() {
            r |= ((*b & 1) as u32) << i;
        }
        r
    }
}

/// Eight lanes in one AVX-512 register, every operation one intrinsic (the
/// same IEEE operation as [`Arr`]'s element-wise code, so the same bits).
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

/// Four lanes in one AVX2 register, every operation one intrinsic (the same
/// IEEE operation as [`Arr`]'s element-wise code, so the same bits); masks
/// stay vectors (all-ones or all-zeros lanes), so selects are blends.
///
/// As [`Z8`]: only for code inlined into a function compiled with AVX2 and
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
/// dependent chains interleaved, as [`Z16`] does with [`Z8`]).
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
