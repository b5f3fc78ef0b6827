//! Space-filling-curve keys that put nearby boxes and query points next to
//! each other in memory: a Hilbert curve in 2D, a Morton (Z-order) curve in
//! 3D. Only locality depends on them, never a result.
//!
//! Written here rather than taken from a crate: it is twenty lines, and the
//! crates that offer it (`hilbert_2d`, `fast_hilbert`) would be a dependency
//! for one function.

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
///
/// Walks from the coarsest quadrant to the finest: at each level the
/// quadrant's number is appended, and the finer bits are seen through the
/// quadrant's orientation: a swap of the axes and a reflection of both,
/// which commute, so two flags hold their composition. Branch-free: the
/// textbook form's data-dependent branches mispredict about once a level.
#[inline]
fn hilbert2(x: u32, y: u32) -> u64 {
    hilbert2_top(x, y, BITS_2D)
}

/// The first `levels` levels of [`hilbert2`]: its top `2·levels` bits.
#[inline]
fn hilbert2_top(x: u32, y: u32, levels: u32) -> u64 {
    let (mut swap, mut flip) = (0u32, 0u32);
    let mut d = 0u64;
    for i in (BITS_2D - levels..BITS_2D).rev() {
        let (xb, yb) = (((x >> i) & 1) ^ flip, ((y >> i) & 1) ^ flip);
        let diff = (xb ^ yb) & swap;
        let (rx, ry) = (xb ^ diff, yb ^ diff);
        d = (d << 2) | u64::from((3 * rx) ^ ry);
        let turn = ry ^ 1;
        flip ^= turn & rx;
        swap ^= turn;
    }
    d
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
    fn branch_free_hilbert_matches_the_textbook_one() {
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
