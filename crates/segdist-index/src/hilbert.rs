//! Space-filling-curve keys that put nearby boxes and query points next to
//! each other in memory: a Hilbert curve in 2D, a Morton (Z-order) curve in
//! 3D. Only locality depends on them, never a result.
//!
//! Written here rather than taken from a crate: it is twenty lines, and the
//! crates that offer it (`hilbert_2d`, `fast_hilbert`) would be a dependency
//! for one function.

use crate::index::Form;
#[cfg(target_arch = "x86_64")]
use crate::index::{AVX2, AVX512};

/// Bits per axis of the 2D Hilbert key.
const BITS_2D: u32 = 16;
/// Bits per axis of the 3D Morton key.
const BITS_3D: u32 = 21;

/// Maps coordinates to integer grid cells inside a bounding box and then to
/// a curve key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Curve<const D: usize> {
    lo: [f64; D],
    scale: [f64; D],
}

impl<const D: usize> Curve<D> {
    /// A curve over the box `[lo, hi]`; an empty or flat box maps every
    /// point of its flat axes to cell 0.
    pub(crate) fn new(lo: [f64; D], hi: [f64; D]) -> Self {
        let cells = if D == 2 { ((1u64 << BITS_2D) - 1) as f64 } else { ((1u64 << BITS_3D) - 1) as f64 };
        let mut scale = [0.0; D];
        for k in 0..D {
            let w = hi[k] - lo[k];
            // `w` may overflow to inf for boxes spanning the whole f64
            // range; the scale is then 0 and locality is lost, not results.
            scale[k] = if w > 0.0 && w.is_finite() { cells / w } else { 0.0 };
        }
        Curve { lo, scale }
    }

    /// The top `bits` bits (at most 32) of [`key`](Self::key), computed
    /// from as many levels of the curve as they need.
    #[inline]
    pub(crate) fn key_prefix(&self, p: &[f64; D], bits: u32) -> u64 {
        if D == 2 {
            let levels = bits.div_ceil(2);
            let cell = self.cells(p);
            hilbert2_top(cell[0], cell[1], levels) >> (2 * levels - bits)
        } else {
            self.key(p) >> (63 - bits)
        }
    }

    /// The radix sort's keys of `points`, into `out` (as long): each
    /// point's [`key_prefix`](Self::key_prefix) in the high 32 bits, its
    /// position `first + i` in the low. In 2D with AVX-512 or AVX2 (as
    /// `form` allows and the CPU has), eight points at a time (the same
    /// keys: the cells by the same two
    /// roundings, the curve through the same table; a batch's scalar keys
    /// cost ~140 instructions a point more).
    pub(crate) fn sort_keys(&self, points: &[[f64; D]], bits: u32, first: usize, out: &mut [u64], form: Form) {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut done = 0;
        #[cfg(not(target_arch = "x86_64"))]
        let _ = form;
        #[cfg(target_arch = "x86_64")]
        if D == 2 && form == AVX512 && std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above; D is 2.
            done = unsafe { self.sort_keys_avx512(points.as_flattened(), bits, first, out) };
        } else if D == 2 && form >= AVX2 && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above; D is 2.
            done = unsafe { self.sort_keys_avx2(points.as_flattened(), bits, first, out) };
        }
        for (i, (p, o)) in points.iter().zip(out.iter_mut()).enumerate().skip(done) {
            *o = (self.key_prefix(p, bits) << 32) | (first + i) as u64;
        }
    }

    /// [`sort_keys`](Self::sort_keys) for 2D points (`xy`: their coordinates
    /// in a row) eight at a time; returns how many points it did (the rest,
    /// fewer than eight, are left).
    ///
    /// # Safety
    /// The CPU must have AVX-512F, and `D` must be 2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn sort_keys_avx512(&self, xy: &[f64], bits: u32, first: usize, out: &mut [u64]) -> usize {
        use std::arch::x86_64::*;
        let n = (xy.len() / 2).min(out.len()) / 8 * 8;
        let levels = bits.div_ceil(2);
        let steps = levels.div_ceil(4);
        // What `hilbert2_top` and `key_prefix` shift off, together.
        let drop = _mm_cvtsi32_si128((8 * steps).saturating_sub(bits) as i32);
        let (lo, scale) = (self.lo, self.scale);
        let (lx, ly) = (_mm512_set1_pd(lo[0]), _mm512_set1_pd(lo[1 % D]));
        let (sx, sy) = (_mm512_set1_pd(scale[0]), _mm512_set1_pd(scale[1 % D]));
        let (zero, top) = (_mm512_setzero_pd(), _mm512_set1_pd(f64::from((1u32 << BITS_2D) - 1)));
        let (even, odd) = (_mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15));
        let lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
        let fifteen = _mm256_set1_epi32(15);
        let byte = _mm256_set1_epi32(0xff);
        // Cell of a coordinate as `cells` has it: `as u32` sends NaN and
        // negatives to 0 and saturates, then `min` caps; the max first (NaN
        // gives its second operand, 0), the min, then an exact truncation.
        let cell = |v: __m512d, l: __m512d, s: __m512d| {
            _mm512_cvttpd_epu32(_mm512_min_pd(_mm512_max_pd(_mm512_mul_pd(_mm512_sub_pd(v, l), s), zero), top))
        };
        for at in (0..n).step_by(8) {
            // SAFETY: points at..at + 8 lie within `xy` (16 numbers from
            // 2·at) and their keys within `out`: at + 8 <= n.
            unsafe {
                let a = _mm512_loadu_pd(xy.as_ptr().add(2 * at));
                let b = _mm512_loadu_pd(xy.as_ptr().add(2 * at + 8));
                let x = cell(_mm512_permutex2var_pd(a, even, b), lx, sx);
                let y = cell(_mm512_permutex2var_pd(a, odd, b), ly, sy);
                let (mut d, mut state) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                for s in 1..=steps {
                    let shift = _mm_cvtsi32_si128((BITS_2D - 4 * s) as i32);
                    let xs = _mm256_and_si256(_mm256_srl_epi32(x, shift), fifteen);
                    let ys = _mm256_and_si256(_mm256_srl_epi32(y, shift), fifteen);
                    let entry =
                        _mm256_or_si256(_mm256_slli_epi32::<8>(state), _mm256_or_si256(_mm256_slli_epi32::<4>(xs), ys));
                    // Entries are below 1024: within the table.
                    let e = _mm256_i32gather_epi32::<4>(HILBERT4_32.as_ptr().cast::<i32>(), entry);
                    d = _mm256_or_si256(_mm256_slli_epi32::<8>(d), _mm256_and_si256(e, byte));
                    state = _mm256_srli_epi32::<8>(e);
                }
                let key = _mm512_slli_epi64::<32>(_mm512_cvtepu32_epi64(_mm256_srl_epi32(d, drop)));
                let pos = _mm512_add_epi64(_mm512_set1_epi64((first + at) as i64), lanes);
                _mm512_storeu_si512(out.as_mut_ptr().add(at).cast(), _mm512_or_si512(key, pos));
            }
        }
        n
    }

    /// [`sort_keys_avx512`](Self::sort_keys_avx512) with AVX2: the same
    /// steps, the eight points' `x` and `y` each converted four at a time.
    ///
    /// # Safety
    /// The CPU must have AVX2, and `D` must be 2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn sort_keys_avx2(&self, xy: &[f64], bits: u32, first: usize, out: &mut [u64]) -> usize {
        use std::arch::x86_64::*;
        let n = (xy.len() / 2).min(out.len()) / 8 * 8;
        let levels = bits.div_ceil(2);
        let steps = levels.div_ceil(4);
        // What `hilbert2_top` and `key_prefix` shift off, together.
        let drop = _mm_cvtsi32_si128((8 * steps).saturating_sub(bits) as i32);
        let (lo, scale) = (self.lo, self.scale);
        let (lx, ly) = (_mm256_set1_pd(lo[0]), _mm256_set1_pd(lo[1 % D]));
        let (sx, sy) = (_mm256_set1_pd(scale[0]), _mm256_set1_pd(scale[1 % D]));
        let (zero, top) = (_mm256_setzero_pd(), _mm256_set1_pd(f64::from((1u32 << BITS_2D) - 1)));
        let lanes = _mm256_setr_epi64x(0, 1, 2, 3);
        let fifteen = _mm256_set1_epi32(15);
        let byte = _mm256_set1_epi32(0xff);
        // Cell of a coordinate as `cells` has it: the max first (NaN gives
        // its second operand, 0), the min, then an exact truncation (below
        // 2^16: the signed conversion is the unsigned one).
        let cell = |v: __m256d, l: __m256d, s: __m256d| {
            _mm256_cvttpd_epi32(_mm256_min_pd(_mm256_max_pd(_mm256_mul_pd(_mm256_sub_pd(v, l), s), zero), top))
        };
        for at in (0..n).step_by(8) {
            // SAFETY: points at..at + 8 lie within `xy` (16 numbers from
            // 2·at) and their keys within `out`: at + 8 <= n.
            unsafe {
                let q: [__m256d; 4] = std::array::from_fn(|i| _mm256_loadu_pd(xy.as_ptr().add(2 * at + 4 * i)));
                // `unpacklo` of two rows of two points gives lanes 0, 2, 1,
                // 3 of their `x`: put back in order.
                let order = |v: __m256d| _mm256_permute4x64_pd::<0b11_01_10_00>(v);
                let (x0, x1) = (order(_mm256_unpacklo_pd(q[0], q[1])), order(_mm256_unpacklo_pd(q[2], q[3])));
                let (y0, y1) = (order(_mm256_unpackhi_pd(q[0], q[1])), order(_mm256_unpackhi_pd(q[2], q[3])));
                let x = _mm256_set_m128i(cell(x1, lx, sx), cell(x0, lx, sx));
                let y = _mm256_set_m128i(cell(y1, ly, sy), cell(y0, ly, sy));
                let (mut d, mut state) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                for s in 1..=steps {
                    let shift = _mm_cvtsi32_si128((BITS_2D - 4 * s) as i32);
                    let xs = _mm256_and_si256(_mm256_srl_epi32(x, shift), fifteen);
                    let ys = _mm256_and_si256(_mm256_srl_epi32(y, shift), fifteen);
                    let entry =
                        _mm256_or_si256(_mm256_slli_epi32::<8>(state), _mm256_or_si256(_mm256_slli_epi32::<4>(xs), ys));
                    // Entries are below 1024: within the table.
                    let e = _mm256_i32gather_epi32::<4>(HILBERT4_32.as_ptr().cast::<i32>(), entry);
                    d = _mm256_or_si256(_mm256_slli_epi32::<8>(d), _mm256_and_si256(e, byte));
                    state = _mm256_srli_epi32::<8>(e);
                }
                let d = _mm256_srl_epi32(d, drop);
                let halves = [_mm256_castsi256_si128(d), _mm256_extracti128_si256::<1>(d)];
                for (h, half) in halves.into_iter().enumerate() {
                    let key = _mm256_slli_epi64::<32>(_mm256_cvtepu32_epi64(half));
                    let pos = _mm256_add_epi64(_mm256_set1_epi64x((first + at + 4 * h) as i64), lanes);
                    _mm256_storeu_si256(out.as_mut_ptr().add(at + 4 * h).cast(), _mm256_or_si256(key, pos));
                }
            }
        }
        n
    }

    /// Grid cells of `p` per axis.
    #[inline]
    fn cells(&self, p: &[f64; D]) -> [u32; D] {
        let mut cell = [0u32; D];
        for k in 0..D {
            // `as` saturates: negative and NaN → 0, too large → u32::MAX.
            let max = if D == 2 { (1u32 << BITS_2D) - 1 } else { (1u32 << BITS_3D) - 1 };
            cell[k] = (((p[k] - self.lo[k]) * self.scale[k]) as u32).min(max);
        }
        cell
    }

    /// The key of point `p` (points outside the box are clamped to it; NaN
    /// goes to cell 0).
    #[inline]
    pub(crate) fn key(&self, p: &[f64; D]) -> u64 {
        let cell = self.cells(p);
        if D == 2 {
            hilbert2(cell[0], cell[1])
        } else {
            morton3(cell[0], cell[1], cell[2 % D])
        }
    }
}

/// The index of cell `(x, y)` along a Hilbert curve over a 2^16 × 2^16 grid.
#[inline]
fn hilbert2(x: u32, y: u32) -> u64 {
    hilbert2_top(x, y, BITS_2D)
}

/// The first `levels` levels of [`hilbert2`]: its top `2·levels` bits.
///
/// Four levels at a time through [`HILBERT4`]: a level's digit depends on
/// the bits of `x` and `y` at that level and on the orientation the levels
/// above left (a swap of the axes and a reflection of both, which commute,
/// so two flags hold their composition); the table holds, for every
/// orientation and four bits of each coordinate, the four digits and the
/// orientation after them. (Level by level, the key cost about 12 ns.)
#[inline]
fn hilbert2_top(x: u32, y: u32, levels: u32) -> u64 {
    let steps = levels.div_ceil(4);
    let (mut d, mut state) = (0u64, 0usize);
    for s in 1..=steps {
        let shift = BITS_2D - 4 * s;
        let xy = (((x >> shift) & 15) << 4 | ((y >> shift) & 15)) as usize;
        let e = HILBERT4[state << 8 | xy];
        d = d << 8 | u64::from(e & 0xff);
        state = usize::from(e >> 8);
    }
    // The levels past `levels` in the last step are dropped.
    d >> (2 * (4 * steps - levels))
}

/// See [`hilbert2_top`]: entry `state·256 + x·16 + y` (four bits each of
/// `x` and `y`, the coarsest first) holds four digits in its low byte and
/// the next state above. State bit 0: the axes are swapped; bit 1: both
/// are reflected.
static HILBERT4: [u16; 1024] = hilbert4();

/// [`HILBERT4`] widened, for the eight-lane gathers of
/// [`Curve::sort_keys`].
#[cfg(target_arch = "x86_64")]
static HILBERT4_32: [u32; 1024] = {
    let (t, mut w, mut i) = (hilbert4(), [0u32; 1024], 0);
    while i < 1024 {
        w[i] = t[i] as u32;
        i += 1;
    }
    w
};

const fn hilbert4() -> [u16; 1024] {
    let mut t = [0u16; 1024];
    let mut e = 0;
    while e < 1024 {
        let (xs, ys) = ((e as u32 >> 4) & 15, e as u32 & 15);
        let (mut swap, mut flip) = ((e >> 8) as u32 & 1, (e >> 9) as u32 & 1);
        let mut d = 0u32;
        let mut i = 4;
        while i > 0 {
            i -= 1;
            let (xb, yb) = (((xs >> i) & 1) ^ flip, ((ys >> i) & 1) ^ flip);
            let diff = (xb ^ yb) & swap;
            let (rx, ry) = (xb ^ diff, yb ^ diff);
            d = (d << 2) | ((3 * rx) ^ ry);
            let turn = ry ^ 1;
            flip ^= turn & rx;
            swap ^= turn;
        }
        t[e] = (d | (swap | flip << 1) << 8) as u16;
        e += 1;
    }
    t
}

/// Interleaves the low 21 bits of three integers (Morton order).
#[inline]
fn morton3(x: u32, y: u32, z: u32) -> u64 {
    fn spread(v: u32) -> u64 {
        let mut v = u64::from(v) & 0x1f_ffff;
        v = (v | (v << 32)) & 0x001f_0000_0000_ffff;
        v = (v | (v << 16)) & 0x001f_0000_ff00_00ff;
        v = (v | (v << 8)) & 0x100f_00f0_0f00_f00f;
        v = (v | (v << 4)) & 0x10c3_0c30_c30c_30c3;
        v = (v | (v << 2)) & 0x1249_2492_4924_9249;
        v
    }
    spread(x) | (spread(y) << 1) | (spread(z) << 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hilbert_visits_every_cell_of_a_small_grid_once_by_unit_steps() {
        // On the top-left 2^k × 2^k block of the full curve's first quarter…
        // simpler: the whole curve restricted to keys < 4^4 stays in a 16 × 16
        // block, each key once, consecutive keys in adjacent cells.
        let mut seen = vec![None; 256];
        for x in 0..16u32 {
            for y in 0..16u32 {
                let d = hilbert2(x, y);
                if d < 256 {
                    assert!(seen[d as usize].is_none());
                    seen[d as usize] = Some((x, y));
                }
            }
        }
        let cells: Vec<(u32, u32)> = seen.into_iter().map(|c| c.expect("every key below 256 is hit")).collect();
        for w in cells.windows(2) {
            let step = w[0].0.abs_diff(w[1].0) + w[0].1.abs_diff(w[1].1);
            assert_eq!(step, 1, "{:?} → {:?}", w[0], w[1]);
        }
    }

    /// The textbook construction (reflect and swap the coordinates
    /// themselves), as the reference.
    fn hilbert2_textbook(mut x: u32, mut y: u32) -> u64 {
        let mut d = 0u64;
        let mut s = 1u32 << (BITS_2D - 1);
        while s > 0 {
            let rx = u32::from(x & s != 0);
            let ry = u32::from(y & s != 0);
            d += u64::from(s) * u64::from(s) * u64::from((3 * rx) ^ ry);
            if ry == 0 {
                if rx == 1 {
                    x = !x;
                    y = !y;
                }
                std::mem::swap(&mut x, &mut y);
            }
            s >>= 1;
        }
        d
    }

    #[test]
    fn table_driven_hilbert_matches_the_textbook_one() {
        let mut v = 0x1234_5678u32;
        for _ in 0..100_000 {
            v ^= v << 13;
            v ^= v >> 17;
            v ^= v << 5;
            let (x, y) = (v & 0xffff, v >> 16);
            assert_eq!(hilbert2(x, y), hilbert2_textbook(x, y), "({x}, {y})");
        }
    }

    #[test]
    fn every_number_of_levels_gives_the_top_of_the_key() {
        let mut v = 0x9e37_79b9u32;
        for _ in 0..20_000 {
            v ^= v << 13;
            v ^= v >> 17;
            v ^= v << 5;
            let (x, y) = (v & 0xffff, v >> 16);
            for levels in 1..=BITS_2D {
                let top = hilbert2_textbook(x, y) >> (2 * (BITS_2D - levels));
                assert_eq!(hilbert2_top(x, y, levels), top, "({x}, {y}), {levels} levels");
            }
        }
    }

    #[test]
    fn key_prefixes_are_the_top_bits_of_the_key() {
        let c = Curve::<2>::new([0.0, 0.0], [1.0, 1.0]);
        let c3 = Curve::<3>::new([0.0; 3], [1.0; 3]);
        for i in 0..1000 {
            let p = [f64::from(i) * 0.000_997 % 1.0, f64::from(i) * 0.003_1 % 1.0];
            let q = [p[0], p[1], f64::from(i) * 0.0007 % 1.0];
            for bits in [4, 9, 22, 32] {
                assert_eq!(c.key_prefix(&p, bits), c.key(&p) >> (32 - bits));
                assert_eq!(c3.key_prefix(&q, bits), c3.key(&q) >> (63 - bits));
            }
        }
    }

    #[test]
    fn sort_keys_are_the_scalar_keys_in_every_lane() {
        // Inside and outside the box, on cell edges, NaN and infinities;
        // lengths that leave a tail; the AVX-512 and AVX2 forms where the
        // CPU has them.
        let c = Curve::<2>::new([-1.5, 2.0], [3.0, 2.5]);
        let mut v = 0x2545_f491u32;
        let mut pts: Vec<[f64; 2]> = (0..997)
            .map(|_| {
                v ^= v << 13;
                v ^= v >> 17;
                v ^= v << 5;
                [f64::from(v % 1000) * 0.006 - 2.0, f64::from(v / 1000 % 1000) * 0.0007 + 1.9]
            })
            .collect();
        let odd = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.5, 3.0, 2.0, 2.5, -0.0, 1e300, -1e300];
        for (i, &a) in odd.iter().enumerate() {
            pts[3 * i] = [a, 2.2];
            pts[3 * i + 1] = [0.5, a];
            pts[3 * i + 2] = [a, odd[(i + 3) % odd.len()]];
        }
        // (Each form the CPU lacks is the portable one.)
        for form in [crate::index::PORTABLE, crate::index::AVX2, crate::index::AVX512] {
            for bits in [4, 9, 21, 22, 32] {
                for len in [0, 7, 8, 9, 64, 997] {
                    let mut got = vec![0u64; len];
                    c.sort_keys(&pts[..len], bits, 1000, &mut got, form);
                    for (i, (p, g)) in pts.iter().zip(&got).enumerate() {
                        let want = (c.key_prefix(p, bits) << 32) | (1000 + i) as u64;
                        assert_eq!(*g, want, "{p:?}, {bits} bits, form {form}");
                    }
                }
            }
        }
    }

    #[test]
    fn morton_interleaves_bits() {
        assert_eq!(morton3(1, 0, 0), 1);
        assert_eq!(morton3(0, 1, 0), 2);
        assert_eq!(morton3(0, 0, 1), 4);
        assert_eq!(morton3(3, 0, 0), 0b1001);
        assert_eq!(morton3(0x1f_ffff, 0x1f_ffff, 0x1f_ffff), (1u64 << 63) - 1);
    }

    #[test]
    fn keys_of_points_outside_the_box_and_nan_are_clamped() {
        let c = Curve::<2>::new([0.0, 0.0], [1.0, 1.0]);
        assert_eq!(c.key(&[-5.0, -5.0]), c.key(&[0.0, 0.0]));
        assert_eq!(c.key(&[f64::NAN, f64::NAN]), c.key(&[0.0, 0.0]));
        assert_eq!(c.key(&[7.0, 9.0]), c.key(&[1.0, 1.0]));
    }
}
