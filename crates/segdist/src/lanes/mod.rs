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

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

#[cfg(target_arch = "x86_64")]
pub(crate) use avx2::{Y4, Y8};
#[cfg(target_arch = "x86_64")]
pub(crate) use avx512::{Z16, Z8};

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
