//! The batch search's groups: the segments near a run of nearby queries
//! gathered into columns ([`Group`], [`Chunk`]), scanned with the fast
//! kernel for every query of the run, and the few candidates that could
//! still win resolved with the accurate kernel.

use super::*;

/// Eight candidate segments of a group, in columns.
#[derive(Clone, Copy)]
pub(crate) struct Chunk<const D: usize> {
    pub(super) a: [[f64; B]; D],
    pub(super) ab: [[f64; B]; D],
    /// `1/|b − a|²` (0 for a zero-length segment).
    pub(super) inv: [f64; B],
}

/// `1/|b − a|²`, or 0 where that is zero: what the group scan multiplies
/// by to find `t`.
#[inline(always)]
pub(super) fn inv_length2<const D: usize>(a: &[f64; D], b: &[f64; D]) -> f64 {
    let l: f64 = (0..D).map(|k| (b[k] - a[k]) * (b[k] - a[k])).sum();
    if l > 0.0 {
        1.0 / l
    } else {
        0.0
    }
}

/// Appends a candidate to a group's columns (`chunks`, padded with lanes
/// far away) and its slot to `slots`.
#[inline(always)]
pub(super) fn push_lane<const D: usize>(
    chunks: &mut Vec<Chunk<D>>,
    slots: &mut Vec<u32>,
    a: [f64; D],
    ab: [f64; D],
    inv: f64,
    slot: u32,
) {
    let c = slots.len() % B;
    if c == 0 {
        chunks.push(Chunk { a: [[f64::MAX; B]; D], ab: [[0.0; B]; D], inv: [0.0; B] });
    }
    let ch = chunks.last_mut().expect("pushed above");
    for k in 0..D {
        ch.a[k][c] = a[k];
        ch.ab[k][c] = ab[k];
    }
    ch.inv[c] = inv;
    slots.push(slot);
}

/// The candidate segments of a group of neighbouring queries, padded to a
/// multiple of `B` with lanes far away (their d² is +inf).
pub(crate) struct Group<const D: usize> {
    /// What [`Index::gather`] found: each leaf with candidates, and which
    /// of its lanes (a bit each). The batch's sift reads the candidates
    /// from the leaves themselves; `chunks` and `slot` are filled from
    /// these only where a search needs them (see [`Index::fill`]).
    pub(super) picked: Vec<(u32, u32)>,
    /// Whether `chunks` and `slot` hold the candidates.
    pub(super) filled: bool,
    pub(super) chunks: Vec<Chunk<D>>,
    pub(super) slot: Vec<u32>,
    /// Real candidates (before padding).
    pub(super) count: usize,
    /// At least the largest coordinate magnitude of the candidates and the
    /// group box (after `gather`, that of their leaves' boxes).
    pub(crate) m: f64,
    /// Per-query squared distances.
    pub(super) d2: Vec<[f64; B]>,
    /// Every segment left out is farther than this from every point of the
    /// group's box (the padding of the box the candidates were gathered
    /// from).
    pub(crate) reach: f64,
    /// Where `reach` was a guess (see [`trust_within`](Self::trust_within)),
    /// the largest scanned `d²` whose candidate is surely within it: a
    /// point whose least scanned `d²` is larger may have its answer among
    /// the segments left out, and is searched alone. `+inf` where the
    /// reach bounds every point's answer.
    pub(crate) trust2: f64,
    /// The lanes (`i·B + c`, real candidates only) whose scanned `d²` is at
    /// most the threshold of the last [`scan_below_group`], in order: the
    /// few a k-nearest or radius search looks at again.
    pub(super) below: Vec<u64>,
    /// Their scanned `d²`, in the same order.
    pub(super) below_d2: Vec<f64>,
    /// The form its kernels take (see [`form_of`]): the best the CPU has
    /// unless a batch's options say otherwise.
    pub(crate) form: Form,
}

impl<const D: usize> Default for Group<D> {
    fn default() -> Self {
        Group {
            picked: Vec::new(),
            filled: true,
            chunks: Vec::new(),
            slot: Vec::new(),
            count: 0,
            m: 0.0,
            d2: Vec::new(),
            reach: 0.0,
            trust2: f64::INFINITY,
            below: Vec::new(),
            below_d2: Vec::new(),
            form: best_form(),
        }
    }
}

impl<const D: usize> Group<D> {
    /// An empty group whose kernels take `form`.
    pub(crate) fn with_form(form: Form) -> Self {
        Group { form, ..Group::default() }
    }
}

impl<const D: usize> Group<D> {
    /// Marks the candidates, gathered within `reach` of the group's box
    /// (after [`Index::share`], which sets `m`), as gathered within a guess
    /// rather than a bound on every point's answer: only a point whose
    /// least scanned `d²` is at most `trust2` has its answer among them.
    /// That is a `d̃` whose upper bound `(d̃ + K·(m + d̃) + floor)·(1 + S)`
    /// (as in [`Index::reach_of`]) is at most the reach, rounded down with
    /// room. `false` (and nothing marked) where no distance is trusted: a
    /// reach within the scan's own error.
    pub(crate) fn trust_within(&mut self) -> bool {
        const S1: f64 = 1.0 + SLACK;
        let d = (self.reach / S1 - K_GROUP * self.m - E_FLOOR) / (1.0 + K_GROUP) * (1.0 - 4.0 * SLACK);
        // (A NaN reach trusts nothing either.)
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        self.trust2 = d * d * (1.0 - 4.0 * SLACK);
        true
    }

    /// Whether the last scan ([`scan`](Self::scan)) found its point's
    /// answer among the candidates for sure: always where the reach is a
    /// bound, else where its least `d²` is at most `trust2` (see
    /// [`trust_within`](Self::trust_within)).
    #[inline]
    pub(super) fn trusts_scan(&self) -> bool {
        self.trust2 == f64::INFINITY || self.d2.iter().any(|d2| passing(d2, self.trust2) != 0)
    }

    /// Adds the segment from `a` to `b` (in `slot`) with what the scan
    /// needs precomputed; returns its largest coordinate magnitude (the
    /// index's coordinates are finite: never NaN).
    #[inline(always)]
    pub(super) fn add(&mut self, a: [f64; D], b: [f64; D], slot: u32) -> f64 {
        self.add_with(a, b, inv_length2(&a, &b), slot)
    }

    /// [`add`](Self::add) given `inv = inv_length2(a, b)`.
    #[inline(always)]
    pub(super) fn add_with(&mut self, a: [f64; D], b: [f64; D], inv: f64, slot: u32) -> f64 {
        let ab: [f64; D] = std::array::from_fn(|k| b[k] - a[k]);
        self.push(a, ab, inv, slot);
        (0..D).fold(0.0, |m, k| fmax(fmax(m, a[k].abs()), b[k].abs()))
    }

    pub(super) fn push(&mut self, a: [f64; D], ab: [f64; D], inv: f64, slot: u32) {
        push_lane(&mut self.chunks, &mut self.slot, a, ab, inv, slot);
    }

    /// Fills `d2` with the scan's squared distances from `p`; returns the
    /// smallest.
    #[inline(always)]
    pub(super) fn scan(&mut self, p: &[f64; D]) -> f64 {
        self.d2.clear();
        let mut least = [f64::INFINITY; B];
        for ch in &self.chunks {
            let d2 = ch.distances(p);
            for c in 0..B {
                least[c] = fmin(least[c], d2[c]);
            }
            self.d2.push(d2);
        }
        least.iter().fold(f64::INFINITY, |m, &d| fmin(m, d))
    }
}

impl<const D: usize> Group<D> {
    /// The largest over `points` (those with finite coordinates) of the
    /// least squared distance to a candidate, by the scan's arithmetic.
    #[inline(always)]
    pub(super) fn farthest(&self, points: &[[f64; D]]) -> f64 {
        let mut far = 0.0f64;
        for p in points {
            if !p.iter().all(|c| c.is_finite()) {
                continue;
            }
            let mut least = [f64::INFINITY; B];
            for ch in &self.chunks {
                let d2 = ch.distances(p);
                for c in 0..B {
                    least[c] = fmin(least[c], d2[c]);
                }
            }
            far = fmax(far, least.iter().fold(f64::INFINITY, |m, &d| fmin(m, d)));
        }
        far
    }
}

impl<const D: usize> Chunk<D> {
    /// The fast squared distances from `p` to the chunk's segments.
    #[inline(always)]
    pub(super) fn distances(&self, p: &[f64; D]) -> [f64; B] {
        let mut dot = [0.0; B];
        for k in 0..D {
            for c in 0..B {
                dot[c] += (p[k] - self.a[k][c]) * self.ab[k][c];
            }
        }
        let mut t = [0.0; B];
        for c in 0..B {
            // NaN (0·inf) clamps to 1: t stays in [0, 1] whatever
            // happens (`clamp` would pass the NaN on).
            #[allow(clippy::manual_clamp)]
            let tc = (dot[c] * self.inv[c]).min(1.0).max(0.0);
            t[c] = tc;
        }
        let mut d2 = [0.0; B];
        for k in 0..D {
            for c in 0..B {
                let v = (p[k] - self.a[k][c]) - t[c] * self.ab[k][c];
                d2[c] += v * v;
            }
        }
        d2
    }
}

impl<const D: usize> Group<D> {
    /// The scan of `p` ([`scan`](Self::scan)), then the cut on its squared
    /// distances that every segment within the answer's bound passes (see
    /// [`Index::nearest_in_group`]): the cut, whether more than one lane
    /// passes, and the first that does (`usize::MAX` if none).
    #[inline(always)]
    pub(super) fn sift(&mut self, p: &[f64; D], limit: f64) -> (f64, bool, usize) {
        let best = scan_group(self, p);
        self.sift_scanned(best, limit)
    }

    /// [`sift`](Self::sift) after the scan (`d2` filled, `best` its least).
    #[inline(always)]
    pub(super) fn sift_scanned(&self, best: f64, limit: f64) -> (f64, bool, usize) {
        let cut2 = self.cut2(best, limit);
        // Whether one or more pass, not how many, without a branch (which
        // lane passes is unpredictable; that one does is not; and the
        // default build has no popcount instruction).
        let (mut many, mut first) = (false, usize::MAX);
        for (i, d2) in self.d2.iter().enumerate() {
            let mask = passing(d2, cut2);
            (many, first) = tally(mask, i, many, first);
        }
        (cut2, many, first)
    }

    /// The cut on squared distances for a scan whose least is `best` (see
    /// [`Index::nearest_in_group`]). Padding lanes give +inf; real ones are
    /// finite (no overflow below `FAST_RANGE`, checked by `gather`).
    ///
    /// That cut is `(α·d + β)²` with `d = √best`: the bound
    /// `(d + K·(m + d) + floor)·(1 + S)` through [`cut2`]. Since
    /// `2·α·β·d <= ε·α²·d² + β²/ε` for any `ε > 0`, it is at most
    /// `(1 + ε)·α²·best + (1 + 1/ε)·β²`, used instead: a little looser (with
    /// `ε = 2^-20`, `d²` a relative `1e-6` more, plus a negligible constant),
    /// so that no square root and no chain of roundings stands between a
    /// query's scan and its compares (the batch's longest chain of
    /// dependent operations a query; 1M points, 100k segments, one thread:
    /// medians of seven alternating runs, 96.1 → 92.1 ns a query). Where
    /// `limit` is the smaller, [`cut2`] of it.
    #[inline(always)]
    pub(super) fn cut2(&self, best: f64, limit: f64) -> f64 {
        let (a, c, limit_cut) = self.cut_terms(limit);
        // (best = +inf, no scanned lane: the limit's cut.)
        fmin(a * best + c, limit_cut)
    }

    /// The numbers of [`cut2`](Self::cut2), which is
    /// `fmin(a·best + c, limit_cut)`: `(a, c, limit_cut)`.
    #[inline(always)]
    pub(super) fn cut_terms(&self, limit: f64) -> (f64, f64, f64) {
        const EPS: f64 = 1.0 / (1u64 << 20) as f64;
        const S1: f64 = 1.0 + SLACK;
        // α, and everything rounded here with room: (1 + S)² more.
        const ALPHA: f64 = (1.0 + K_GROUP) * S1 * S1 * S1 * (1.0 + 2.0 * K_GROUP);
        const A: f64 = ALPHA * ALPHA * (1.0 + EPS) * S1 * S1;
        // β = (K·m + floor)·(1 + 2K)·(1 + S)·((1 + S)² + 1).
        let beta = (K_GROUP * self.m + E_FLOOR) * (1.0 + 2.0 * K_GROUP) * S1 * (2.0 + 3.0 * SLACK);
        let c = (1.0 + 1.0 / EPS) * beta * beta * S1 * S1;
        (A, c, cut2(limit, self.m))
    }

    /// [`sift`](Self::sift) for each of `points` (at most [`SIFT_POINTS`]),
    /// told as a [`Sifted`]: point by point, the portable form of
    /// [`sift_points_group`].
    pub(super) fn sift_points(&mut self, points: &[[f64; D]], limit: f64) -> Sifted {
        let mut out = Sifted { one: 0, many: 0, far: 0, far2: 0.0, slot: [0; SIFT_POINTS] };
        for (i, p) in points.iter().enumerate().take(SIFT_POINTS) {
            if !p.iter().all(|c| c.is_finite()) {
                continue;
            }
            if self.count == 0 {
                if self.trust2 < f64::INFINITY {
                    out.far |= 1 << i;
                }
                continue;
            }
            let (_, many, first) = sift_group(self, p, limit);
            // (The scan's least, once: trusted exactly when `trusts_scan`
            // says so.)
            let least = self.d2.iter().flatten().fold(f64::INFINITY, |m, &d| fmin(m, d));
            if least > self.trust2 {
                out.far |= 1 << i;
                continue;
            }
            out.far2 = fmax(out.far2, least);
            if many {
                out.many |= 1 << i;
            } else if first < self.count {
                out.one |= 1 << i;
                out.slot[i] = self.slot[first];
            }
        }
        out
    }
}

/// The most points [`sift_points_group`] takes at once.
pub(crate) const SIFT_POINTS: usize = 2 * B;

/// What the group sift ([`Group::sift`]) leaves of each of a group's
/// points, bit `i` for point `i`: in neither mask, no candidate passes
/// (or the point is not finite, or there are no candidates): no answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sifted {
    /// One candidate passes, segment `slot[i]`: the answer if within the
    /// limit.
    pub(crate) one: u32,
    /// More than one passes: the point is searched alone
    /// ([`Index::nearest_in_group`]).
    pub(crate) many: u32,
    /// The candidates may not hold the answer (their reach was a guess,
    /// and the point's least scanned `d²` is above the group's `trust2`):
    /// the point is searched down the tree.
    pub(crate) far: u32,
    /// The largest least scanned `d²` of the finite points not in `far`:
    /// how far the group's answers lie, for the next group's guess.
    pub(crate) far2: f64,
    /// The segment that passes, where one does.
    pub(crate) slot: [u32; SIFT_POINTS],
}

/// The lanes of a chunk of scanned d² that pass the cut `cut2`, a bit each.
#[inline(always)]
pub(super) fn passing(d2: &[f64; B], cut2: f64) -> u32 {
    let mut mask = 0u32;
    for c in 0..B {
        mask |= u32::from(d2[c] <= cut2) << c;
    }
    mask
}

/// One chunk's lanes that pass (`mask`, chunk `i`) added to the tally of
/// [`Group::sift`].
#[inline(always)]
pub(super) fn tally(mask: u32, i: usize, many: bool, first: usize) -> (bool, usize) {
    let lane = i * B + mask.trailing_zeros() as usize;
    let many = many | (mask & mask.wrapping_sub(1) != 0) | (first != usize::MAX && mask != 0);
    (many, if first == usize::MAX && mask != 0 { lane } else { first })
}

/// [`Group::sift`] for the CPU: by hand with AVX-512 (half the
/// instructions of what LLVM makes of the portable loops; the fused
/// multiply-adds only remove roundings, so the scan's error bound holds),
/// else with AVX2 and FMA (`avx2.rs`, the same bits), else the portable
/// code.
pub(super) fn sift_group<const D: usize>(g: &mut Group<D>, p: &[f64; D], limit: f64) -> (f64, bool, usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if g.form == AVX512 && std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            return unsafe { sift_avx512(g, p, limit) };
        }
        if g.form >= AVX2 && has_avx2_fma() {
            // SAFETY: the CPU has AVX2 and FMA, checked just above.
            return unsafe { sift_avx2(g, p, limit) };
        }
    }
    g.sift(p, limit)
}

/// [`Group::scan`] in the group's form: by hand with AVX-512, else with
/// AVX2 and FMA (chosen at run time; the default build targets SSE2 only),
/// else the portable loops.
pub(super) fn scan_group<const D: usize>(g: &mut Group<D>, p: &[f64; D]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if g.form == AVX512 && std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            return unsafe { scan_avx512(g, p) };
        }
        if g.form >= AVX2 && has_avx2_fma() {
            // SAFETY: the CPU has AVX2 and FMA, checked just above.
            return unsafe { scan_avx2(g, p) };
        }
    }
    g.scan(p)
}

/// `max(a, b)` for numbers that are never NaN, as one instruction (the
/// NaN-aware `f64::max` costs three).
#[inline(always)]
pub(super) fn fmax(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// `min(a, b)` likewise.
#[inline(always)]
pub(super) fn fmin(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

impl<const D: usize> Index<D> {
    /// Gathers into `g` every segment of `leaves` whose own box meets
    /// `[lo, hi]` (as leaves and lanes: [`fill`](Self::fill) makes them
    /// columns); `false` if there are more than `cap` or their magnitudes
    /// are beyond the fast kernel's trusted range.
    #[inline(always)]
    pub(crate) fn gather<const V: Form>(
        &self,
        lo: &[f64; D],
        hi: &[f64; D],
        leaves: &[u32],
        cap: usize,
        g: &mut Group<D>,
    ) -> bool {
        g.picked.clear();
        g.chunks.clear();
        g.slot.clear();
        g.filled = false;
        let mut m = lo.iter().chain(hi).fold(0.0f64, |m, c| m.max(c.abs()));
        let mut count = 0;
        for &j in leaves {
            let base = j as usize * B;
            let leaf = &self.leaves[j as usize];
            // Which of the leaf's segments have a box meeting `[lo, hi]`: all
            // eight lanes at once, branch-free (most fail, unpredictably);
            // not the padding lanes past the last segment.
            let real = if self.segs.len() - base >= B { u32::MAX } else { (1 << (self.segs.len() - base)) - 1 };
            let mask = leaf.meets::<V>(lo, hi, true) & real;
            if mask != 0 {
                count += mask.count_ones() as usize;
                if count > cap {
                    return false;
                }
                g.picked.push((j, mask));
                // (The leaf's box bounds its segments' coordinates: a
                // little looser than the lanes picked, and cheaper.)
                let level = &self.levels[0];
                for k in 0..D {
                    m = fmax(m, fmax(level.lo(k, j as usize).abs(), level.hi(k, j as usize).abs()));
                }
            }
        }
        g.m = m;
        g.count = count;
        m < FAST_RANGE
    }

    /// Makes the columns of `g`'s candidates (`chunks`, `slot`) from what
    /// [`gather`](Self::gather) picked, if not made yet: the scans of one
    /// point at a time read those.
    pub(crate) fn fill(&self, g: &mut Group<D>) {
        if g.filled {
            return;
        }
        g.filled = true;
        for &(j, mut mask) in &g.picked {
            let (j, leaf) = (j as usize, &self.leaves[j as usize]);
            while mask != 0 {
                let c = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let a: [f64; D] = std::array::from_fn(|k| leaf.lo[k][c]);
                let ab: [f64; D] = std::array::from_fn(|k| leaf.hi[k][c] - a[k]);
                let slot = (j * B + c) as u32;
                // (`push` is the chunks' and the slots' own: the same
                // order as the lanes of `picked`.)
                push_lane(&mut g.chunks, &mut g.slot, a, ab, self.inv[j][c], slot);
            }
        }
    }

    /// An upper bound on the distance from each of `points` (those with
    /// finite coordinates, all inside `bbox`) to its nearest segment: the
    /// largest over the points of the distance to the nearest of `slots`
    /// (the previous group's answers), by the group scan with its error
    /// bound (see [`nearest_in_group`](Self::nearest_in_group)); `+inf`
    /// beyond the scan's trusted range. `g`: its form, and room for those
    /// segments in the portable form (the vector forms, a point a lane,
    /// read them from the index).
    pub(crate) fn reach_of(
        &self,
        points: &[[f64; D]],
        bbox: &([f64; D], [f64; D]),
        slots: &[u32],
        g: &mut Group<D>,
    ) -> f64 {
        let mut m = bbox.0.iter().chain(&bbox.1).fold(0.0f64, |m, c| m.max(c.abs()));
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_labels))]
        let far = 'far: {
            #[cfg(target_arch = "x86_64")]
            if g.form == AVX512 && std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F, checked just above.
                let (far, ms) = unsafe { farthest_avx512(self, slots, points) };
                m = fmax(m, ms);
                break 'far far;
            }
            #[cfg(target_arch = "x86_64")]
            if g.form >= AVX2 && has_avx2_fma() {
                // SAFETY: the CPU has AVX2 and FMA, checked just above.
                let (far, ms) = unsafe { farthest_avx2(self, slots, points) };
                m = fmax(m, ms);
                break 'far far;
            }
            g.picked.clear();
            g.chunks.clear();
            g.slot.clear();
            g.filled = true;
            for &slot in slots {
                if !g.slot.contains(&slot) {
                    let (a, b) = self.ends(slot as usize);
                    m = fmax(m, g.add(a, b, slot));
                }
            }
            g.count = g.slot.len();
            g.m = m;
            g.farthest(points)
        };
        if slots.is_empty() || m >= FAST_RANGE {
            return f64::INFINITY;
        }
        let d = far.sqrt();
        (d + K_GROUP * (m + d) + E_FLOOR) * (1.0 + SLACK)
    }

    /// Nearest segment to `p` among the group's candidates, which must hold
    /// every segment within the group bound of `p` (see `gather`). Where
    /// the scan leaves one candidate it is the answer if within `limit`,
    /// and is returned unevaluated ([`Pick::Only`]).
    ///
    /// The scan is the clamped projection with `b − a` and `1/|b − a|²`
    /// precomputed, over all candidates at once. Its error: `t̃` lies in
    /// `[0, 1]` whatever the rounding, so the point `a + t̃·(b − a)` is on the
    /// segment and the computed distance to it exceeds `d` by at most the
    /// evaluation error (about `15·u·(M + d)` in 2D, `17·u·(M + d)` in 3D)
    /// plus `|t̃ − t|·|b − a|` (at most `16·u·M`, or `|b − a| < 2^-484` where
    /// `|b − a|²` underflows). `K_GROUP = 64·u` covers both with room.
    #[inline]
    pub(crate) fn nearest_in_group(&self, p: &[f64; D], limit: f64, g: &mut Group<D>, runner_up: bool) -> Pick<D> {
        self.fill(g);
        if p.iter().any(|c| !c.is_finite()) {
            return Pick::Done(None);
        }
        if g.count == 0 {
            return if g.trust2 == f64::INFINITY { Pick::Done(None) } else { Pick::Alone };
        }
        // Which lanes pass: one that passes alone is the answer, evaluated
        // later in a batch.
        let (cut2, many, first) = sift_group(g, p, limit);
        if !g.trusts_scan() {
            return Pick::Alone;
        }
        // (A padding lane never passes: its d² is +inf.)
        let mut found: Option<(Found<D>, usize)> = None;
        if many {
            for (i, d2) in g.d2.iter().enumerate() {
                let mut mask = passing(d2, cut2);
                while mask != 0 {
                    let c = i * B + mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    let f = self.evaluate(p, g.slot[c]);
                    if f.proj.distance <= limit && found.as_ref().is_none_or(|(b, _)| f.before(b)) {
                        found = Some((f, c));
                    }
                }
            }
        }
        let only = !many && first < g.count;
        let mut bound = |lane| if runner_up { runner_up_bound(g, lane) } else { 0.0 };
        if only {
            let runner_up = bound(first);
            return Pick::Only { slot: g.slot[first], runner_up };
        }
        Pick::Done(found.map(|(mut f, lane)| {
            f.runner_up = bound(lane);
            f
        }))
    }

    /// An upper bound on the exact distance from `p` to the segment in
    /// `slot` (`+inf` where the fast kernel's bound is not trusted).
    #[inline]
    pub(crate) fn upper_bound(&self, p: &[f64; D], slot: u32) -> f64 {
        let st = State {
            p,
            mp: p.iter().fold(0.0f64, |m, c| m.max(c.abs())),
            bound: f64::INFINITY,
            want: Want::Nearest(1),
            skip: u32::MAX,
        };
        self.fast_bounds(slot as usize, slot as usize / B, &st).1
    }

    /// Every leaf whose box meets the box `[lo, hi]`, into `out`; `false`
    /// (and `out` incomplete) if there are more than `cap`.
    #[inline(always)]
    pub(crate) fn group_leaves<const V: Form>(
        &self,
        lo: &[f64; D],
        hi: &[f64; D],
        out: &mut Vec<u32>,
        cap: usize,
        s: &mut Scratch,
    ) -> bool {
        out.clear();
        if self.segs.is_empty() {
            return true;
        }
        let top = self.levels.len() - 1;
        s.stack[0] = (top as u32, 0, 0.0);
        s.top = 1;
        while s.top > 0 {
            s.top -= 1;
            let (l, j, _) = s.stack[s.top];
            if l == 0 {
                if out.len() == cap {
                    return false;
                }
                out.push(j);
                continue;
            }
            let block = &self.levels[l as usize - 1].blocks[j as usize];
            let base = j as usize * B;
            let mut mask = block.meets::<V>(lo, hi, false);
            while mask != 0 {
                let c = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let child = base + c;
                // Every child asked for as it is pushed, so that their
                // cache misses overlap (in a large index most are).
                if l == 1 {
                    Self::prefetch_block(&self.leaves[child]);
                    self.prefetch_inv(child);
                } else {
                    Self::prefetch_block(&self.levels[l as usize - 2].blocks[child]);
                }
                s.stack[s.top] = (l - 1, child as u32, 0.0);
                s.top += 1;
            }
        }
        true
    }
}

/// The largest scanned d² of a segment that may lie within `bound`, for a
/// scan whose magnitudes are at most `m` (see
/// [`Index::nearest_in_group`]): its lower bound `d̃ − K(m + d̃) − floor` is
/// at most `bound` exactly when `d̃ <= (bound + K·m + floor) / (1 − K)`.
/// Dividing by `1 − K` is multiplying by at most `1 + 2K` (`K < 1/2`),
/// which is cheaper; the rounding of all this is far inside `SLACK`.
#[inline(always)]
pub(super) fn cut2(bound: f64, m: f64) -> f64 {
    let cut = (bound * (1.0 + SLACK) + K_GROUP * m + E_FLOOR) * (1.0 + 2.0 * K_GROUP) * (1.0 + SLACK);
    cut * cut * (1.0 + SLACK)
}

/// Puts `x` (never NaN) into `least` (ascending, at most `k` long): in
/// place of the largest when the list is full (the caller has checked that
/// `x` is below it), else one longer. Without a branch a value: each place
/// takes the least of its own value and the greater of `x` and the value
/// below it, from the top down. (Moving the larger values up one by one
/// until `x`'s place stopped at a branch that went either way; one query
/// at a time, k = 5: 0.89-0.94 of the time, 10,000 to 1 M segments.)
#[inline(always)]
pub(super) fn insert_least(least: &mut Vec<f64>, k: usize, x: f64) {
    if least.len() < k {
        least.push(f64::INFINITY);
    }
    let n = least.len();
    for i in (1..n).rev() {
        least[i] = fmax(least[i - 1], fmin(x, least[i]));
    }
    least[0] = fmin(x, least[0]);
}

/// A lower bound on the distance from the query just scanned to every
/// segment of the index but the one in `lane`: the least of the other
/// candidates' lower bounds (the fast distance less its error bound) and
/// the group's reach (segments not gathered are farther).
pub(super) fn runner_up_bound<const D: usize>(g: &mut Group<D>, lane: usize) -> f64 {
    // The winner's lane out of the way, then a lane-wise minimum.
    let saved = std::mem::replace(&mut g.d2[lane / B][lane % B], f64::INFINITY);
    let mut least = [f64::INFINITY; B];
    for d2 in &g.d2 {
        for c in 0..B {
            least[c] = fmin(least[c], d2[c]);
        }
    }
    g.d2[lane / B][lane % B] = saved;
    let d = least.iter().fold(f64::INFINITY, |a, &b| fmin(a, b)).sqrt();
    let lower = if d.is_finite() { d - K_GROUP * (g.m + d) - E_FLOOR } else { f64::INFINITY };
    (lower.min(g.reach) * (1.0 - SLACK)).max(0.0)
}
