//! What the fuzz targets share: libFuzzer's bytes turned into coordinates
//! that reach the kernels' hard cases (grids of exact ties, points a few ulps
//! off a segment, UTM-sized and extreme magnitudes, any bit pattern), and
//! the checks the tests use, included from the crates' own test folders so
//! that a fuzz target and a test can never disagree on what "right" means.

#[path = "../../crates/segdist/tests/common/mod.rs"]
pub mod kernel_checks;

#[path = "../../crates/segdist-index/tests/common/mod.rs"]
pub mod index_checks;

/// The magnitudes coordinates are taken around.
const BASES: [f64; 8] = [0.0, 1.0, 1e3, 500_000.0, 6_700_000.0, 1e15, 1e-300, 1e300];

/// libFuzzer's input, read front to back; zeros once it runs out.
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = self.u8();
        }
        u64::from_le_bytes(b)
    }

    /// A number in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A magnitude to work around.
    pub fn base(&mut self) -> f64 {
        BASES[usize::from(self.u8()) % BASES.len()]
    }

    /// One coordinate near `base`: any bit pattern (NaN and infinities
    /// included, unless `finite`), a grid value (exact ties), a few ulps
    /// from `base`, or anywhere in ±2·base.
    pub fn coord(&mut self, base: f64, finite: bool) -> f64 {
        let v = match self.u8() % 4 {
            0 => f64::from_bits(self.u64()),
            1 => base + f64::from(self.u8() as i8) * (0.5f64).powi(i32::from(self.u8() % 8)),
            2 => nudge(base, self.u8() as i8),
            _ => base + (self.unit() * 4.0 - 2.0) * base.max(1.0),
        };
        if finite && !v.is_finite() {
            base
        } else {
            v
        }
    }

    pub fn point<const D: usize>(&mut self, base: f64, finite: bool) -> [f64; D] {
        std::array::from_fn(|_| self.coord(base, finite))
    }

    /// A query for segment a–b: on or a few ulps off the segment's line
    /// (at t from the input, maybe past an end), or any point.
    pub fn query<const D: usize>(&mut self, a: [f64; D], b: [f64; D], base: f64, finite: bool) -> [f64; D] {
        if self.u8().is_multiple_of(2) {
            let t = self.unit() * 1.5 - 0.25;
            std::array::from_fn(|i| nudge(a[i] + t * (b[i] - a[i]), self.u8() as i8))
        } else {
            self.point(base, finite)
        }
    }
}

/// `x` moved by `k` representable values (stops at infinity or NaN).
pub fn nudge(mut x: f64, k: i8) -> f64 {
    for _ in 0..k.unsigned_abs() {
        x = if k > 0 { x.next_up() } else { x.next_down() };
    }
    x
}
