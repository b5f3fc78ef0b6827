//! The k-nearest and radius search among a group's candidates
//! ([`Index::search_group`]): each point's scan lists the few lanes under
//! a threshold (a radius's cut, or a guess at the k-th distance), without
//! a branch; the k-th is found among them by counting ([`kth_of`]); and
//! the survivors of all the group's points go through the accurate batch
//! kernel in one call, then are ranked point by point (`Index::order`).

use super::*;

impl<const D: usize> Group<D> {
    /// [`scan`](Self::scan), also listing in `below` the lanes whose `d²` is
    /// at most `thr`.
    #[inline(always)]
    pub(super) fn scan_below(&mut self, p: &[f64; D], thr: f64) {
        self.d2.clear();
        self.below.clear();
        self.below_d2.clear();
        for (i, ch) in self.chunks.iter().enumerate() {
            let d2 = ch.distances(p);
            let mut mask = passing(&d2, thr);
            while mask != 0 {
                let j = i * B + mask.trailing_zeros() as usize;
                mask &= mask - 1;
                if j < self.count {
                    self.below.push(j as u64);
                    self.below_d2.push(d2[j % B]);
                }
            }
            self.d2.push(d2);
        }
    }
}

/// [`Group::scan_below`] in the group's form, as [`scan_group`].
pub(super) fn scan_below_group<const D: usize>(g: &mut Group<D>, p: &[f64; D], thr: f64) {
    #[cfg(target_arch = "x86_64")]
    {
        if g.form == AVX512 && std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            return unsafe { scan_below_avx512(g, p, thr) };
        }
        if g.form >= AVX2 && has_avx2_fma() {
            // SAFETY: the CPU has AVX2 and FMA, checked just above.
            return unsafe { scan_below_avx2(g, p, thr) };
        }
    }
    g.scan_below(p, thr);
}

impl<const D: usize> Index<D> {
    /// [`search`](Self::search) for each of `points` in turn among a
    /// group's candidates, which must hold every segment that can be in
    /// the answer (see `gather`): for `k` nearest, every segment within the
    /// group's reach of each point, and at least `k` of them; for a radius,
    /// every segment within it. The fast scan of all candidates at once
    /// stands in for the walk down the tree. The answers are handed to
    /// `emit` with their point; every point's survivors are evaluated
    /// together, in one call of the batch kernel (a call a point, for the
    /// five survivors of a k = 5 point, spent about as much in the call as
    /// in the projections).
    /// `last` is the point before them and a bound on its k-th distance
    /// (k nearest only): a guess that saves work when right. Where the
    /// candidates were gathered within a guess (`g.trust2`, k nearest only),
    /// a point whose k-th candidate is not surely within it is searched
    /// down the tree with `lone`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn search_group(
        &self,
        points: &[[f64; D]],
        want: Want,
        limit: f64,
        mut last: Option<([f64; D], f64)>,
        g: &mut Group<D>,
        s: &mut Scratch,
        lone: &mut Scratch,
        mut emit: impl FnMut(&[f64; D], &[Found<D>]),
    ) {
        debug_assert!(points.len() <= 64, "a group's points, a bit each");
        let ev = evals_of::<D>(&mut s.evals, s.isa);
        ev.clear();
        s.group.clear();
        s.spans.clear();
        let mut alone = 0u64;
        for (i, p) in points.iter().enumerate() {
            // The previous point's k answers are within its bound plus the
            // step between the points (rounded up with room): usually far
            // tighter than the reach.
            let near = last.map_or(f64::INFINITY, |(q, d)| {
                let step = (0..D).map(|i| (p[i] - q[i]).powi(2)).sum::<f64>().sqrt();
                (d + step) * (1.0 + 1e-12)
            });
            last = None;
            let listed = self.group_cands(p, want, limit, near, g, &mut s.cands, &mut s.uppers);
            alone |= u64::from(matches!(listed, Listed::Alone)) << i;
            if let Listed::Within(bound) = listed {
                keep_within(&mut s.cands, bound);
                for &(lower, slot) in &s.cands {
                    // Its record is read for the answer: asked for now.
                    self.prefetch_segment(slot);
                    ev.push(self, p, slot);
                    s.group.push((lower, slot));
                }
                last = Some((*p, bound));
            }
            s.spans.push(s.group.len());
        }
        ev.run();
        let mut start = 0;
        for (i, (p, &end)) in points.iter().zip(&s.spans).enumerate() {
            if alone >> i & 1 != 0 {
                emit(p, self.search(p, want, limit, lone));
            } else {
                emit(p, self.order(want, limit, &s.group[start..end], ev, start));
            }
            start = end;
        }
    }

    /// A point's candidates among a group's (see
    /// [`search_group`](Self::search_group)) into `cands`, with a
    /// lower bound on the distance of each (see [`Listed`]). `near` (k
    /// nearest only) is a guess at the k-th distance that saves work when
    /// right; `uppers` is a working list.
    #[allow(clippy::too_many_arguments)]
    fn group_cands(
        &self,
        p: &[f64; D],
        want: Want,
        limit: f64,
        near: f64,
        g: &mut Group<D>,
        cands: &mut Vec<(f64, u32)>,
        uppers: &mut Vec<f64>,
    ) -> Listed {
        if p.iter().any(|c| !c.is_finite()) || limit.is_nan() || limit < 0.0 {
            return Listed::Nothing;
        }
        if g.count == 0 {
            // Nothing within a guess says nothing of what lies beyond it.
            // (`trust2` is +inf where the reach bounds every answer.)
            return if g.trust2 < f64::INFINITY { Listed::Alone } else { Listed::Nothing };
        }
        self.fill(g);
        let m = g.m;
        // The scan lists the lanes at most a threshold: for a radius, the
        // cut every candidate must pass; for the k nearest, a guess at
        // where the k-th lies (the group's reach and `near` each bound the
        // distance of k segments from `p`). The search then looks again at
        // those few (13 of 164 candidates a point in the `nearest` bench's
        // k = 5 batch) rather than at every lane, twice.
        let thr = match want {
            Want::All => cut2(limit, m),
            Want::Nearest(_) => {
                let r = fmin(g.reach, near);
                ((r + K_GROUP * (m + r) + E_FLOOR) * (1.0 + SLACK)).powi(2) * (1.0 + SLACK)
            }
        };
        scan_below_group(g, p, thr);
        cands.clear();
        let mut bound = limit;
        if let Want::Nearest(k) = want {
            // The bound is the upper bound of the k-th smallest scanned d²:
            // among the listed lanes where k of them are (every lane not
            // listed is larger), else among them all.
            let kth =
                if g.below.len() >= k { Some(kth_of(&g.below_d2, k, uppers, g.form)) } else { kth_least(g, k, uppers) };
            // (`trust2` is +inf where the reach bounds every answer.)
            if g.trust2 < f64::INFINITY && !kth.is_some_and(|kth| kth <= g.trust2) {
                return Listed::Alone;
            }
            if let Some(kth) = kth {
                let d = kth.sqrt();
                bound = fmin(bound, (d + K_GROUP * (m + d) + E_FLOOR) * (1.0 + SLACK));
            }
        }
        let cut2 = cut2(bound, m);
        let lower = |d2: f64| {
            let d = d2.sqrt();
            d - K_GROUP * (m + d) - E_FLOOR
        };
        if cut2 <= thr {
            // Every lane that can pass is listed: all of them offered, the
            // ones beyond the bound left to [`keep_within`] (which a lane
            // beyond `cut2` never passes), so that no branch guesses which.
            cands.extend(g.below.iter().zip(&g.below_d2).map(|(&j, &d2)| (lower(d2), g.slot[j as usize])));
        } else {
            for (i, d2) in g.d2.iter().enumerate() {
                let mut mask = passing(d2, cut2);
                while mask != 0 {
                    let c = mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    // (Padding lanes have d² = +inf and never pass.)
                    if let Some(&slot) = g.slot.get(i * B + c) {
                        cands.push((lower(d2[c]), slot));
                    }
                }
            }
        }
        Listed::Within(bound)
    }
}

/// What [`Index::group_cands`] found for a point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Listed {
    /// No answer can be found: a non-finite point, a negative or NaN
    /// limit, or no candidates within a reach that bounds the answers.
    Nothing,
    /// The candidates, each with a lower bound on its distance, and a bound
    /// on the answers' distance.
    Within(f64),
    /// The candidates were gathered within a guess (`Group::trust2`, k
    /// nearest only) and the point's k-th is not surely within it: it is
    /// searched down the tree.
    Alone,
}

/// Keeps the candidates whose lower bound is within `bound` (with room for
/// its rounding), in order, with no branch a candidate: `rank`'s cut
/// (`retain` there, where a walk's candidates mostly pass) for a group's
/// listed lanes, of which a k = 5 point keeps about one in three.
#[inline]
pub(super) fn keep_within(cands: &mut Vec<(f64, u32)>, bound: f64) {
    let cut = bound * (1.0 + SLACK);
    let mut kept = 0;
    for i in 0..cands.len() {
        let c = cands[i];
        cands[kept] = c;
        kept += usize::from(c.0 <= cut);
    }
    cands.truncate(kept);
}

/// The `k`-th smallest of the group's scanned d², if it has `k` candidates
/// (`least` is the working list of the smallest, sorted).
pub(super) fn kth_least<const D: usize>(g: &Group<D>, k: usize, least: &mut Vec<f64>) -> Option<f64> {
    least.clear();
    let mut kth = f64::INFINITY;
    for (i, d2) in g.d2.iter().enumerate() {
        // The chunk's lanes below the k-th so far, a bit each: most chunks
        // have none (a lane is checked again as the k-th falls).
        let mut mask = 0u32;
        for c in 0..B {
            mask |= u32::from(d2[c] < kth) << c;
        }
        while mask != 0 {
            let c = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let d2 = d2[c];
            if d2 < kth && i * B + c < g.count {
                insert_least(least, k, d2);
                if least.len() == k {
                    kth = least[k - 1];
                }
            }
        }
    }
    (least.len() == k).then_some(kth)
}

/// Up to this many values, [`kth_of`] counts; more, it keeps the `k` least
/// in a list.
pub(super) const KTH_BY_COUNT: usize = 32;

/// The `k`-th smallest of `v` (`1 <= k <= v.len()`, no NaN; `least` a
/// working list). Up to [`KTH_BY_COUNT`] values by counting, with no
/// branch a value: the one with fewer than `k` values below it and at
/// least `k` at most it (the dozen values of a k = 5 batch's point, put
/// into a sorted list one by one, mispredicted a branch most times).
/// In `form` (AVX-512 or AVX2 where the CPU has it, chosen at run time).
pub(super) fn kth_of(v: &[f64], k: usize, least: &mut Vec<f64>, form: Form) -> f64 {
    if v.len() > KTH_BY_COUNT {
        least.clear();
        for &x in v {
            if least.len() < k || x < least[k - 1] {
                insert_least(least, k, x);
            }
        }
        return least[k - 1];
    }
    #[cfg(target_arch = "x86_64")]
    if form == AVX512 && std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F, checked just above.
        return unsafe { super::simd::kth_gathered_avx512(v, k) };
    }
    let mut w = [f64::NAN; KTH_BY_COUNT];
    w[..v.len()].copy_from_slice(v);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = form;
    #[cfg(target_arch = "x86_64")]
    {
        if form >= AVX2 && super::avx2::has_avx2_fma() {
            // SAFETY: the CPU has AVX2 and POPCNT, checked just above.
            return unsafe { super::avx2::kth_avx2(&w, v.len(), k) };
        }
    }
    kth_count(&w, v.len(), k)
}

/// [`kth_of`]'s count, for whatever the caller is compiled for: the `k`-th
/// smallest of the first `n` of `v` (`1 <= k <= n`), the rest NaN.
#[inline(always)]
pub(super) fn kth_count(v: &[f64; KTH_BY_COUNT], n: usize, k: usize) -> f64 {
    // Whole rows of four: the padding (NaN) is below and at most nothing,
    // and never picked.
    let m = n.div_ceil(4) * 4;
    let mut kth = f64::INFINITY;
    for &x in &v[..n] {
        let (mut lt, mut le) = (0usize, 0usize);
        for &y in &v[..m] {
            lt += usize::from(y < x);
            le += usize::from(y <= x);
        }
        kth = if lt < k && le >= k { x } else { kth };
    }
    kth
}
