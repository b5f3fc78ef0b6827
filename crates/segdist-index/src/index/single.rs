//! One query at a time: `nearest`, `k_nearest`, `within` and their
//! `_within` forms. A greedy descent to the leaf whose box is nearest
//! gives a first bound; then a best-first walk of the tree, eight boxes or
//! segments at a time (`lanes`, AVX2 where the CPU has it), with the fast
//! kernel and a certified bound; then the accurate kernel on the few
//! segments left.

use super::*;

/// Levels below the root a descent's path keeps (a tree of 2^32 segments
/// has 11).
pub(super) const PATH: usize = 16;

/// What a search looks for.
#[derive(Clone, Copy)]
pub(crate) enum Want {
    /// The `k` nearest within the limit.
    Nearest(usize),
    /// Everything within the limit.
    All,
}

/// Up to this many survivors are ranked by counting (each one's place is
/// the number before it), more by sorting.
pub(super) const RANK_BY_COUNT: usize = 32;

/// Which of the first `n` of (`d`, `id`) comes at each place, in the order
/// of `d` then `id` (pairs all distinct, every number below 2^63): each
/// one's place is how many come before it. With AVX-512 (eight compares at
/// once, the place a popcount: `simd::places_avx512`) or AVX2 (each pair's
/// count in a lane of its own: `avx2::places_avx2`) where the CPU has them,
/// chosen at run time.
fn places(d: &[u64; RANK_BY_COUNT], id: &[u64; RANK_BY_COUNT], n: usize) -> [u32; RANK_BY_COUNT] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has AVX-512F and POPCNT, checked just above.
            return unsafe { super::simd::places_avx512(d, id, n) };
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { super::avx2::places_avx2(d, id, n) };
        }
    }
    places_count(d, id, n)
}

/// [`places`] for whatever the caller is compiled for.
#[inline(always)]
pub(super) fn places_count(d: &[u64; RANK_BY_COUNT], id: &[u64; RANK_BY_COUNT], n: usize) -> [u32; RANK_BY_COUNT] {
    let mut at = [0u32; RANK_BY_COUNT];
    // Whole rows of four: the padding (`i64::MAX`, above every real
    // pair) counts before none of them.
    let m = n.div_ceil(4) * 4;
    for i in 0..n {
        let (di, ii) = (d[i] as i64, id[i] as i64);
        let mut place = 0u64;
        for j in 0..m {
            let (e, jd) = (d[j] as i64, id[j] as i64);
            place += u64::from((e < di) | ((e == di) & (jd < ii)));
        }
        at[place as usize] = i as u32;
    }
    at
}

impl<const D: usize> Index<D> {
    /// The segment nearest to `p`, or `None` when the index is empty or `p`
    /// has a NaN or infinite coordinate. Ties go to the lowest id.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_segments(&[
    ///     [[0.0, 1.0], [2.0, 1.0]],
    ///     [[0.0, -1.0], [2.0, -1.0]],
    /// ])?;
    /// // Equidistant: the lower feature id wins.
    /// assert_eq!(index.nearest([1.0, 0.0]).unwrap().feature, 0);
    /// assert!(index.nearest([f64::NAN, 0.0]).is_none());
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn nearest(&self, p: [f64; D]) -> Option<Hit<D>> {
        self.nearest_within(p, f64::INFINITY)
    }

    /// The nearest segment at distance `<= max_distance`, or `None`. The
    /// limit prunes the search, so a small one makes the query cheaper.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_segments(&[[[0.0, 0.0], [1.0, 0.0]]])?;
    /// assert!(index.nearest_within([0.5, 2.0], 1.5).is_none());
    /// assert_eq!(index.nearest_within([0.5, 2.0], 2.0).unwrap().distance, 2.0);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn nearest_within(&self, p: [f64; D], max_distance: f64) -> Option<Hit<D>> {
        with_scratch(|s| self.nearest_found(&p, max_distance, None, s)).map(|f| self.hit(&f))
    }

    /// The `k` nearest segments, nearest first (ties by lowest id); fewer
    /// when the index holds fewer, none for a non-finite `p`.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_polylines(&[
    ///     vec![[0.0, 0.0], [10.0, 0.0]],
    ///     vec![[0.0, 3.0], [10.0, 3.0]],
    ///     vec![[0.0, 7.0], [10.0, 7.0]],
    /// ])?;
    /// let hits = index.k_nearest([5.0, 4.0], 2);
    /// assert_eq!(hits.iter().map(|h| (h.feature, h.distance)).collect::<Vec<_>>(), [(1, 1.0), (2, 3.0)]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn k_nearest(&self, p: [f64; D], k: usize) -> Vec<Hit<D>> {
        self.k_nearest_within(p, k, f64::INFINITY)
    }

    /// The `k` nearest segments at distance `<= max_distance`, nearest first.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_segments(&[
    ///     [[0.0, 0.0], [1.0, 0.0]],
    ///     [[0.0, 5.0], [1.0, 5.0]],
    /// ])?;
    /// assert_eq!(index.k_nearest_within([0.5, 1.0], 2, 2.0).len(), 1);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn k_nearest_within(&self, p: [f64; D], k: usize, max_distance: f64) -> Vec<Hit<D>> {
        if k == 0 {
            return Vec::new();
        }
        with_scratch(|s| self.search(&p, Want::Nearest(k), max_distance, s).iter().map(|f| self.hit(f)).collect())
    }

    /// Every segment at distance `<= radius` from `p` (the exact distance,
    /// faithfully rounded, compared with `radius`), nearest first, ties by
    /// lowest id.
    ///
    /// ```
    /// let index = segdist_index::Index::<2>::from_segments(&[
    ///     [[0.0, 0.0], [1.0, 0.0]],
    ///     [[0.0, 1.0], [1.0, 1.0]],
    ///     [[0.0, 9.0], [1.0, 9.0]],
    /// ])?;
    /// let near = index.within([0.5, 0.5], 0.5);
    /// assert_eq!(near.iter().map(|h| h.feature).collect::<Vec<_>>(), [0, 1]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn within(&self, p: [f64; D], radius: f64) -> Vec<Hit<D>> {
        with_scratch(|s| self.search(&p, Want::All, radius, s).iter().map(|f| self.hit(f)).collect())
    }

    /// The public form of a search result.
    pub(crate) fn hit(&self, f: &Found<D>) -> Hit<D> {
        let t = &self.topology;
        let s = &self.segs[f.slot as usize];
        let (feature, part, segment) = t.locate(s.feature, s.local);
        Hit {
            feature,
            part,
            segment,
            t: f.proj.t,
            point: f.proj.point,
            distance: f.proj.distance,
            distance_squared: f.proj.distance_squared,
        }
    }

    /// Nearest segment, starting from the segment in slot `hint` (a good
    /// guess, such as the previous query's answer in a coherent batch).
    #[inline]
    pub(crate) fn nearest_found(
        &self,
        p: &[f64; D],
        limit: f64,
        hint: Option<u32>,
        s: &mut Scratch,
    ) -> Option<Found<D>> {
        let st = self.traverse(p, Want::Nearest(1), limit, hint, s)?;
        self.pick(p, &st, limit, s)
    }

    /// The candidate with the least `(distance, id)`: candidates in
    /// ascending order of lower bound, stopping as soon as none can tie.
    #[inline]
    pub(super) fn pick(&self, p: &[f64; D], st: &State<'_, D>, limit: f64, s: &mut Scratch) -> Option<Found<D>> {
        let cut = st.bound * (1.0 + SLACK);
        if s.cands.len() > 1 {
            s.cands.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        }
        // The best so far as a slot and projection: its id (a read of the
        // segment's record, a cache miss in a large index) is looked up
        // only to break an exact tie, and once for the answer.
        let mut best: Option<(u32, Proj<D>)> = None;
        for &(lower, slot) in &s.cands {
            if lower > cut {
                continue;
            }
            if let Some((_, b)) = &best
                && lower * (1.0 - SLACK) > b.distance
            {
                break;
            }
            let proj = self.projection(p, slot);
            if proj.distance > limit {
                continue;
            }
            let better = match &best {
                None => true,
                Some((bs, bp)) => {
                    proj.distance < bp.distance || (proj.distance == bp.distance && self.id(slot) < self.id(*bs))
                }
            };
            if better {
                // Its record is read for the answer: asked for now, it
                // arrives while the other candidates are evaluated.
                self.prefetch_segment(slot);
                best = Some((slot, proj));
            }
        }
        best.map(|(slot, proj)| self.found(slot, proj))
    }

    /// The accurate projection onto the segment in `slot`, with its id.
    #[inline]
    pub(super) fn evaluate(&self, p: &[f64; D], slot: u32) -> Found<D> {
        self.found(slot, self.projection(p, slot))
    }

    /// The accurate projection onto the segment in `slot`.
    #[inline]
    fn projection(&self, p: &[f64; D], slot: u32) -> Proj<D> {
        let (a, b) = self.ends(slot as usize);
        Segment::new(a, b).closest_point(*p).into()
    }

    /// The segment in `slot` found with projection `proj`, with the id of
    /// the tie rule.
    #[inline]
    pub(super) fn found(&self, slot: u32, proj: Proj<D>) -> Found<D> {
        Found { slot, id: self.id(slot), proj, runner_up: 0.0 }
    }

    /// The id of the tie rule of the segment in `slot`: `(feature, local)`
    /// as one number.
    #[inline]
    pub(super) fn id(&self, slot: u32) -> u64 {
        self.segs[slot as usize].id()
    }

    /// The k-nearest and radius searches: every candidate that survives the
    /// final bound, evaluated and ranked.
    pub(crate) fn search<'s>(&self, p: &[f64; D], want: Want, limit: f64, s: &'s mut Scratch) -> &'s [Found<D>] {
        let Some(st) = self.traverse(p, want, limit, None, s) else {
            return &[];
        };
        self.rank(p, want, limit, st.bound, s)
    }

    /// The end of a k-nearest or radius search: the candidates in `s.cands`
    /// (with a lower bound on their distance each; every segment that may be
    /// in the answer among them) and `bound` (no answer is farther),
    /// evaluated and ranked.
    /// The answers are left in this thread's scratch buffers: the caller
    /// converts them (a `Vec` of them a query was a third of a radius
    /// batch, with the sort moving whole answers and the allocations).
    pub(super) fn rank<'s>(
        &self,
        p: &[f64; D],
        want: Want,
        limit: f64,
        bound: f64,
        s: &'s mut Scratch,
    ) -> &'s [Found<D>] {
        let cut = bound * (1.0 + SLACK);
        s.cands.retain(|c| c.0 <= cut);
        // Their records are read for the ids and the answers: asked for
        // together now, their cache misses overlap the projections.
        for &(_, slot) in &s.cands {
            self.prefetch_segment(slot);
        }
        // Every survivor is evaluated, by the batch kernel (the scalar
        // kernel's bits, several at a time), then ranked.
        let ev = evals_of::<D>(&mut s.evals, s.isa);
        ev.project(self, p, &s.cands);
        self.order(want, limit, &s.cands, ev, 0)
    }

    /// The answers among `cands`, evaluated (their projections at `base..`
    /// of `ev`'s last run): those within `limit`, ranked by (distance, id),
    /// the first `k` for the k nearest. Ids are unique, so the order is
    /// total. Left in `ev.found`.
    #[inline]
    pub(super) fn order<'e>(
        &self,
        want: Want,
        limit: f64,
        cands: &[(f64, u32)],
        ev: &'e mut Evals<D>,
        base: usize,
    ) -> &'e [Found<D>] {
        let keep = match want {
            Want::Nearest(k) => k,
            Want::All => usize::MAX,
        };
        ev.found.clear();
        if cands.len() <= RANK_BY_COUNT {
            // Few enough candidates that the survivors surely fit the
            // count's arrays: each candidate written at the next place and
            // that place taken only if it survives (no branch a candidate,
            // no list of ranks in between: by callgrind on a Zen 3, 1,382
            // instructions a point of the radius batch in this function
            // became 1,157, and 588 of the k = 5 batch 503).
            let (mut d, mut id) = ([i64::MAX as u64; RANK_BY_COUNT], [i64::MAX as u64; RANK_BY_COUNT]);
            let mut js = [0u32; RANK_BY_COUNT];
            let mut n = 0;
            for (j, &(_, slot)) in cands.iter().enumerate() {
                let dist = ev.out.distance[base + j];
                // (`+ 0.0` makes a zero positive, should one be -0; never
                // NaN: the query point is finite.)
                (d[n], id[n], js[n]) = ((dist + 0.0).to_bits(), self.id(slot), j as u32);
                n += usize::from(dist <= limit);
            }
            // (A candidate left out leaves its pair at place `n`, where the
            // count may compare it as padding: it lies beyond the limit,
            // farther than every survivor, so it comes before none.)
            let at = places(&d, &id, n);
            debug_assert!(at[..n]
                .windows(2)
                .all(|w| (d[w[0] as usize], id[w[0] as usize]) < (d[w[1] as usize], id[w[1] as usize])));
            for &i in &at[..n.min(keep)] {
                let j = js[i as usize] as usize;
                let (slot, proj) = (cands[j].1, ev.get(base + j));
                ev.found.push(Found { slot, id: id[i as usize], proj, runner_up: 0.0 });
            }
            return &ev.found;
        }
        ev.ranks.clear();
        for (j, &(_, slot)) in cands.iter().enumerate() {
            let d = ev.out.distance[base + j];
            // (Never NaN: the query point is finite.)
            if d <= limit {
                // (`+ 0.0` makes a zero positive, should one be -0.)
                ev.ranks.push(((d + 0.0).to_bits(), self.id(slot), j as u32));
            }
        }
        let n = ev.ranks.len();
        if n <= RANK_BY_COUNT {
            // Each survivor's place is how many rank before it: compares
            // that never branch, where sorting the dozen survivors of a
            // radius query mispredicted most of its compares (a seventh of
            // a radius batch's time). Ids are unique: so are the places.
            let (mut d, mut id) = ([i64::MAX as u64; RANK_BY_COUNT], [i64::MAX as u64; RANK_BY_COUNT]);
            for (i, &(di, ii, _)) in ev.ranks.iter().enumerate() {
                (d[i], id[i]) = (di, ii);
            }
            let at = places(&d, &id, n);
            // (Each survivor once: its place is taken by no other.)
            debug_assert!(at[..n]
                .windows(2)
                .all(|w| (d[w[0] as usize], id[w[0] as usize]) < (d[w[1] as usize], id[w[1] as usize])));
            for &i in &at[..n.min(keep)] {
                let (_, id, j) = ev.ranks[i as usize];
                let (slot, proj) = (cands[j as usize].1, ev.get(base + j as usize));
                ev.found.push(Found { slot, id, proj, runner_up: 0.0 });
            }
            return &ev.found;
        }
        ev.ranks.sort_unstable();
        ev.ranks.truncate(keep);
        for &(_, id, j) in &ev.ranks {
            let (slot, proj) = (cands[j as usize].1, ev.get(base + j as usize));
            ev.found.push(Found { slot, id, proj, runner_up: 0.0 });
        }
        &ev.found
    }

    /// Walks the tree, leaving in `s.cands` every segment that may be in the
    /// answer; returns the final state, or `None` when nothing can be found.
    /// Compiled for AVX2 where the CPU has it and `s.form` allows it
    /// (chosen at run time): the
    /// eight lanes of a node or a leaf then take a few vector instructions
    /// where the default build's SSE2 code took them one by one (10,000
    /// segments: some 650 instructions a leaf).
    #[inline]
    pub(super) fn traverse<'p>(
        &self,
        p: &'p [f64; D],
        want: Want,
        limit: f64,
        hint: Option<u32>,
        s: &mut Scratch,
    ) -> Option<State<'p, D>> {
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx2")]
            unsafe fn avx2<'p, const D: usize>(
                index: &Index<D>,
                p: &'p [f64; D],
                want: Want,
                limit: f64,
                hint: Option<u32>,
                s: &mut Scratch,
            ) -> Option<State<'p, D>> {
                index.walk::<true>(p, want, limit, hint, s)
            }
            if s.form >= AVX2 && std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                return unsafe { avx2(self, p, want, limit, hint, s) };
            }
        }
        self.walk::<false>(p, want, limit, hint, s)
    }

    /// [`traverse`](Self::traverse) for whatever the caller is compiled for.
    #[inline(always)]
    pub(super) fn walk<'p, const AVX2: bool>(
        &self,
        p: &'p [f64; D],
        want: Want,
        limit: f64,
        hint: Option<u32>,
        s: &mut Scratch,
    ) -> Option<State<'p, D>> {
        let mut st = self.start(p, want, limit, hint, s)?;
        let top = self.levels.len() - 1;
        // A first bound from the leaf a greedy descent reaches: without
        // one, every child of every node on the way down passed and was
        // pushed, sorted and popped again (10,000 segments: some 50 pushes
        // a query for 7 nodes visited). Not where a hint gave one (a
        // batch's previous answer, close by), nor for a radius, which
        // bounds the search from the start.
        let first = match want {
            Want::Nearest(_) if hint.is_none() && top <= PATH => {
                let first = self.descend::<AVX2>(p, &mut s.path);
                self.scan_leaf::<AVX2>(first, &mut st, s);
                first
            }
            // (A tree deeper than `PATH` levels, which 2^32 segments do
            // not make, is walked from the root without a descent.)
            _ => usize::MAX,
        };
        if first != usize::MAX && matches!(want, Want::Nearest(1)) {
            // The walk goes on from the descent's path, not from the root:
            // each node on it has been entered (its children's box
            // distances worked out), so its other children are pushed,
            // with the first leaf's bound, and no node is visited twice
            // (10,000 segments: 6.1 nodes entered a query become 3.4, 300
            // instructions fewer of some 3,300). Nearest on top over all
            // levels, a leaf before a node at the same distance: in the
            // order of the levels (the leaf's siblings on top) more leaves
            // were scanned than by the walk from the root (3.3 a query
            // against 3.1; so ordered, 3.1). The k nearest walk from the
            // root: their looser first bound lets more of the path's other
            // children pass, and sorting them cost more than the visits
            // saved (k = 5: 4.6 leaves a query instead of 4.8, no faster).
            s.top = 0;
            for l in (0..top).rev() {
                let (d2, j, c) = s.path[l];
                self.push_lanes::<AVX2>(l, j as usize, &d2, 1 << c, &st, s);
            }
            s.stack[..s.top].sort_unstable_by(|x, y| y.2.total_cmp(&x.2).then(y.0.cmp(&x.0)));
        } else {
            s.stack[0] = (top as u32, 0, 0.0);
            s.top = 1;
        }
        while s.top > 0 {
            s.top -= 1;
            let (l, j, bd2) = s.stack[s.top];
            if bd2 * (1.0 - SLACK) > st.bound2() || (l == 0 && j as usize == first) {
                continue;
            }
            if l == 0 {
                self.scan_leaf::<AVX2>(j as usize, &mut st, s);
            } else {
                self.push_children::<AVX2>(l as usize - 1, j as usize, &st, s);
            }
        }
        Some(st)
    }

    /// The leaf reached from the root by always entering the child whose
    /// box is nearest to `p` (the first such): where the answer most
    /// likely lies. Keeps in `path[l]`, for each level `l` below the root,
    /// the block of level `l` it entered, its children's squared box
    /// distances and the child it took: `(d², block, child)`.
    #[inline(always)]
    fn descend<const AVX2: bool>(&self, p: &[f64; D], path: &mut [([f64; B], u32, u32); PATH]) -> usize {
        let mut j = 0;
        for l in (0..self.levels.len() - 1).rev() {
            let d2 = lanes::box_d2::<D, AVX2>(&self.levels[l].blocks[j], p);
            // The first lane at the least distance (padding boxes are at
            // +inf, and lane 0 is always a real box): no branch a lane.
            let near = lanes::at_most::<AVX2>(&d2, 1.0, lanes::least::<AVX2>(&d2));
            let c = near.trailing_zeros() as usize;
            if l == 0 {
                // The leaf next nearest is the one the walk most often
                // scans next: asked for now, its cache misses overlap the
                // first leaf's instead of following its scan.
                // (Only a finite distance: padding lanes are at +inf.)
                let mut rest = d2;
                rest[c] = f64::INFINITY;
                let second = lanes::least::<AVX2>(&rest);
                if second < f64::INFINITY {
                    let next = lanes::at_most::<AVX2>(&rest, 1.0, second);
                    let n = j * B + next.trailing_zeros() as usize;
                    Self::prefetch_block(&self.leaves[n]);
                    self.prefetch_inv(n);
                }
            }
            path[l] = (d2, j as u32, c as u32);
            j = j * B + c;
        }
        j
    }

    /// Checks the query and sets up a search, the `hint` offered first.
    #[inline(always)]
    pub(super) fn start<'p>(
        &self,
        p: &'p [f64; D],
        want: Want,
        limit: f64,
        hint: Option<u32>,
        s: &mut Scratch,
    ) -> Option<State<'p, D>> {
        if self.segs.is_empty() || p.iter().any(|c| !c.is_finite()) || limit.is_nan() || limit < 0.0 {
            return None;
        }
        s.top = 0;
        s.cands.clear();
        s.uppers.clear();
        let mut st = State { p, mp: p.iter().fold(0.0f64, |m, c| m.max(c.abs())), bound: limit, want, skip: u32::MAX };
        if let Some(h) = hint {
            st.skip = h;
            let (lower, upper) = self.fast_bounds(h as usize, h as usize / B, &st);
            st.offer(s, lower, upper, h);
        }
        Some(st)
    }

    /// Largest coordinate magnitude in leaf `j`'s box.
    #[inline(always)]
    pub(super) fn leaf_m(&self, j: usize) -> f64 {
        let boxes = &self.levels[0];
        (0..D).fold(0.0f64, |m, k| m.max(boxes.lo(k, j).abs()).max(boxes.hi(k, j).abs()))
    }

    /// `(lower, upper)` bounds on the exact distance to the segment in
    /// `slot` (of leaf `j`), from the fast kernel and its error bound.
    #[inline(always)]
    pub(super) fn fast_bounds(&self, slot: usize, j: usize, st: &State<'_, D>) -> (f64, f64) {
        let (a, b) = self.ends(slot);
        let seg = Segment::new(a, b);
        let d2 = seg.distance_squared_fast(*st.p);
        let m = self.leaf_m(j).max(st.mp);
        if !(d2 < f64::INFINITY && m < FAST_RANGE) {
            // Overflow, or magnitudes where the bound is not trusted.
            return (0.0, f64::INFINITY);
        }
        let d = d2.sqrt();
        let e = K_FAST * (m + d) + E_FLOOR;
        (d - e, (d + e) * (1.0 + SLACK))
    }

    /// Offers the segments of leaf `j` to the search: the fast distances of
    /// all eight lanes at once, by the clamped projection with the leaf's
    /// `1/|b − a|²` and the group scan's bound `K_GROUP·(M + d)` (see
    /// [`Index::nearest_in_group`]), no division and no branch a lane; then
    /// the bound tightened by the least upper bound (or the k least) and the
    /// lanes that may still be in the answer kept as candidates. (Each lane
    /// one after the other, through its own box test and the fast kernel's
    /// division, was a long chain of dependent steps: 10,000 segments, one
    /// query at a time, 1.2 µs a query with 7.5 segments scanned.)
    #[inline(always)]
    pub(super) fn scan_leaf<const AVX2: bool>(&self, j: usize, st: &mut State<'_, D>, s: &mut Scratch) {
        let base = j * B;
        let (lower, upper) = lanes::leaf_bounds::<D, AVX2>(&self.leaves[j], &self.inv[j], st.p, st.mp);
        // Padding lanes (at the origin) past the last segment are never
        // offered; nor the hint, offered already.
        let mut real = if self.segs.len() - base >= B { FULL } else { (1 << (self.segs.len() - base)) - 1 };
        if st.skip as usize / B == j {
            real &= !(1 << (st.skip as usize % B));
        }
        match st.want {
            Want::Nearest(1) => {
                let least = if real == FULL {
                    lanes::least::<AVX2>(&upper)
                } else {
                    (0..B).filter(|c| real >> c & 1 == 1).fold(f64::INFINITY, |m, c| fmin(m, upper[c]))
                };
                if least < st.bound {
                    // The likely answer: its record (the id, read for the
                    // answer; a cache miss in a large index) asked for now,
                    // while the walk goes on.
                    let c = (lanes::at_most::<AVX2>(&upper, 1.0, least) & real).trailing_zeros();
                    self.prefetch_segment((base + c as usize) as u32);
                }
                st.bound = fmin(st.bound, least);
            }
            Want::Nearest(k) => {
                let mut mask = lanes::below::<AVX2>(&upper, st.bound) & real;
                while mask != 0 {
                    let c = mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    st.tighten(s, k, upper[c]);
                }
            }
            Want::All => {}
        }
        let mut mask = lanes::at_most::<AVX2>(&lower, 1.0, st.bound * (1.0 + SLACK)) & real;
        // A k-nearest or radius candidate's record is read for its id once
        // the walk is done: asked for now, its cache miss overlaps the walk
        // (one query at a time, k = 5, 1 M segments: 0.92-0.98 of the time;
        // 100,000 and 10 M: within the runs' spread).
        let pf = !matches!(st.want, Want::Nearest(1));
        while mask != 0 {
            let c = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            if pf {
                self.prefetch_segment((base + c) as u32);
            }
            s.cands.push((lower[c], (base + c) as u32));
        }
    }

    /// Pushes the children of node `j` of level `l + 1` (nodes `j·B…` of
    /// level `l`) that may hold a result, the nearest on top: the passing
    /// ones sorted in registers, then written once (swapping the last two
    /// on the stack read back what had just been written, in pieces: a
    /// stalled store forwarding a node).
    #[inline(always)]
    pub(super) fn push_children<const AVX2: bool>(&self, l: usize, j: usize, st: &State<'_, D>, s: &mut Scratch) {
        let d2 = lanes::box_d2::<D, AVX2>(&self.levels[l].blocks[j], st.p);
        self.push_lanes::<AVX2>(l, j, &d2, 0, st, s);
    }

    /// [`push_children`](Self::push_children) given the children's squared
    /// box distances `d2`, leaving out the lanes of `except`.
    #[inline(always)]
    pub(super) fn push_lanes<const AVX2: bool>(
        &self,
        l: usize,
        j: usize,
        d2: &[f64; B],
        except: u32,
        st: &State<'_, D>,
        s: &mut Scratch,
    ) {
        let block = &self.levels[l].blocks[j];
        let base = j * B;
        // Padding boxes (lo = +inf) are never entered (with no bound yet
        // their +inf distance would pass).
        let real = lanes::below::<AVX2>(&block.lo[0], f64::INFINITY) & !except;
        let mut mask = lanes::at_most::<AVX2>(d2, 1.0 - SLACK, st.bound2()) & real;
        // The passing children, farthest first (in any order for a radius
        // search, which visits all of them).
        let sorted = !matches!(st.want, Want::All);
        let mut order = [(0.0f64, 0u32); B];
        let mut n = 0;
        while mask != 0 {
            let c = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            // Every child that may be entered is asked for now: their
            // cache misses overlap instead of coming one after another.
            let child = base + c;
            if l == 0 {
                Self::prefetch_block(&self.leaves[child]);
                self.prefetch_inv(child);
            } else {
                Self::prefetch_block(&self.levels[l - 1].blocks[child]);
            }
            let mut i = n;
            while sorted && i > 0 && order[i - 1].0 < d2[c] {
                order[i] = order[i - 1];
                i -= 1;
            }
            order[i] = (d2[c], child as u32);
            n += 1;
        }
        for (i, &(d2, child)) in order[..n].iter().enumerate() {
            s.stack[s.top + i] = (l as u32, child, d2);
        }
        s.top += n;
    }
}

/// The state of one search: the query, what is wanted and the current bound.
pub(super) struct State<'p, const D: usize> {
    pub(super) p: &'p [f64; D],
    /// Largest coordinate magnitude of `p`.
    pub(super) mp: f64,
    /// Upper bound on the exact distance of the last wanted result.
    pub(super) bound: f64,
    pub(super) want: Want,
    /// A slot already offered (the hint).
    pub(super) skip: u32,
}

impl<const D: usize> State<'_, D> {
    /// `bound²`, rounded up, never below the underflow floor.
    #[inline(always)]
    pub(super) fn bound2(&self) -> f64 {
        self.bound * self.bound * (1.0 + SLACK) + TINY
    }

    /// Records a segment: a candidate if it may be in the answer, and its
    /// upper bound may tighten `bound`.
    #[inline(always)]
    pub(super) fn offer(&mut self, s: &mut Scratch, lower: f64, upper: f64, slot: u32) {
        if lower > self.bound * (1.0 + SLACK) {
            return;
        }
        s.cands.push((lower, slot));
        if let Want::Nearest(k) = self.want
            && upper < self.bound
        {
            if k == 1 {
                self.bound = upper;
            } else {
                self.tighten(s, k, upper);
            }
        }
    }

    /// A k-nearest search's bound, given one more segment's upper bound:
    /// the k-th least of those seen (`s.uppers`, ascending).
    #[inline(always)]
    pub(super) fn tighten(&mut self, s: &mut Scratch, k: usize, upper: f64) {
        // For small k, inserted in place by a few moves: `Vec::insert`
        // called `memmove` for every upper bound offered, a sixteenth of a
        // single k = 5 query's time.
        let u = &mut s.uppers;
        if k > 32 {
            let at = u.partition_point(|&x| x <= upper);
            if at < k {
                u.insert(at, upper);
                u.truncate(k);
                if u.len() == k {
                    self.bound = self.bound.min(u[k - 1]);
                }
            }
            return;
        }
        if u.len() == k && u[k - 1] <= upper {
            return;
        }
        // (After the equal ones: the order `partition_point(|u| u <= upper)`
        // gave, the last dropped when there were k.)
        group::insert_least(u, k, upper);
        if u.len() == k {
            self.bound = self.bound.min(u[k - 1]);
        }
    }
}
