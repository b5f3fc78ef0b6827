//! Many queries at once: ordered along the index's curve so that each query
//! starts from its predecessor's answer, spread over all cores, answered in
//! input order.

use rayon::prelude::*;

use crate::index::{
    form_of, sift_points_group, Chosen, Form, Found, Group, Index, Pick, Resolver, Scratch, NO_SLOT, PORTABLE,
    SIFT_POINTS,
};
#[cfg(target_arch = "x86_64")]
use crate::index::{AVX2, AVX512};
use crate::mem::{big_vec, give_back, take, take_of, Stream};
pub use segdist::batch::Isa;

/// Options of the batch queries ([`Index::nearest_many`],
/// [`Polyline::locate_many`](crate::Polyline::locate_many)).
///
/// ```
/// let opts = segdist_index::QueryOptions { max_distance: 50.0, ..Default::default() };
/// assert_eq!(opts.threads, 0); // all cores
/// assert_eq!(opts.isa, segdist_index::Isa::Auto); // the best the CPU has
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueryOptions {
    /// Only segments at distance `<= max_distance` are answers
    /// (default `+inf`).
    pub max_distance: f64,
    /// Worker threads: `0` (the default) for rayon's global pool (all cores),
    /// `1` for the calling thread only. Results never depend on it.
    pub threads: usize,
    /// The instruction set of the batch search's kernels and of its
    /// accurate evaluations ([`segdist::batch::Isa`]): `Auto` (the default)
    /// for the best the CPU has; `Avx512` and `Avx2` for those kernels
    /// (the search's by hand, the evaluations' as `segdist::batch` runs
    /// them); `Sse2`, `Scalar` or `Neon` for the portable search loops,
    /// the evaluations in that instruction set. For tests and benchmarks:
    /// results never depend on it. One the CPU lacks answers as `Auto`.
    ///
    /// ```
    /// use segdist_index::{Index, Isa, QueryOptions};
    ///
    /// let index = Index::<2>::from_segments(&[[[0.0, 0.0], [10.0, 0.0]], [[0.0, 4.0], [10.0, 4.0]]])?;
    /// let points: Vec<[f64; 2]> = (0..1000).map(|i| [0.01 * i as f64, 0.003 * i as f64]).collect();
    /// let best = index.nearest_many(&points, &QueryOptions::default());
    /// for isa in [Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512] {
    ///     assert_eq!(index.nearest_many(&points, &QueryOptions { isa, ..Default::default() }), best);
    /// }
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub isa: Isa,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions { max_distance: f64::INFINITY, threads: 0, isa: Isa::Auto }
    }
}

/// Neighbouring queries (along the curve) that share one walk down the
/// tree.
pub(crate) const GROUP: usize = 16;
const _: () = assert!(GROUP <= SIFT_POINTS, "a group is sifted at once");
/// Beyond this many leaves, or this many candidate segments, a nearest
/// batch's group fails and its queries search the tree one by one. (64 and
/// 256 until the guessed reaches. `nearest-scale`'s 10 M segments, 0.01 to
/// 0.1 long in a square of side 10, give a group of 16 sparse points some
/// 600 candidates: a point cost 1,700 ns at 128 and 512, 340 at 256 and
/// 1,024, with the same times on the other workloads.)
pub(crate) const NEAREST_CAPS: (usize, usize) = (256, 1024);

/// The same for the k-nearest and radius batches (`lists.rs`), whose reach
/// is not guessed: there a group of sparse points fails more often, at
/// more cost the larger the caps (10 M segments, 200,000 points, k = 5:
/// 1,910-1,980 ns a point at 128 and 512, 2,070 at 256 and 1,024,
/// 2,010-2,060 at 64 and 256).
pub(crate) const LIST_CAPS: (usize, usize) = (128, 512);

/// A group's guessed reach (see `chosen_slots`): this many times the
/// distance from the last group's points to their nearest candidates (1.5,
/// 2, 2.5 and 3 measured: 2 was best at every density).
pub(crate) const GUESS: f64 = 2.0;

/// And at least this much of the group's coordinate magnitude: points on
/// their segments (distance 0) leave room for the scan's error.
pub(crate) const GUESS_FLOOR: f64 = 1e-9;

/// How many groups must work below the size at which one failed before a
/// group of that size is tried again.
const RETRY: usize = 16;

/// Queries per unit of parallel work: large enough that a chunk's first
/// query, which starts without a hint, is a small part of it.
pub(crate) const CHUNK: usize = 2048;

impl<const D: usize> Index<D> {
    /// The nearest segment to every point, in input order: the same answers
    /// as [`nearest_within`](Self::nearest_within) point by point, bit for
    /// bit, at a fraction of the cost. The points are visited along a
    /// space-filling curve so that each query starts from its neighbour's
    /// answer, and spread over `threads` cores. The batch's internal
    /// buffers (about 44 bytes a 2D point) stay with the calling thread for
    /// its next batch, up to 256 MB; the answers are the caller's.
    ///
    /// ```
    /// use segdist_index::{Index, QueryOptions};
    ///
    /// let index = Index::<2>::from_segments(&[[[0.0, 0.0], [10.0, 0.0]], [[0.0, 4.0], [10.0, 4.0]]])?;
    /// let points = [[1.0, 1.0], [2.0, 3.5], [f64::NAN, 0.0]];
    /// let hits = index.nearest_many(&points, &QueryOptions::default());
    /// assert_eq!(hits[0].unwrap().feature, 0);
    /// assert_eq!(hits[1].unwrap().feature, 1);
    /// assert!(hits[2].is_none());
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn nearest_many(&self, points: &[[f64; D]], opts: &QueryOptions) -> Vec<Option<crate::Hit<D>>> {
        let mut found = Vec::new();
        self.nearest_in_order(points, opts, &|f| self.hit(&f), false, &mut found);
        found
    }

    /// [`nearest_many`](Self::nearest_many) into `out`: cleared, then the
    /// answer of every point in input order, in the room `out` already has
    /// where it is enough. The way to stream points through in chunks (the
    /// CLI does): one buffer of answers for them all, not a fresh one a
    /// chunk, which the system must zero first (72 bytes a 2D point; 7 %
    /// of the time of a batch on one thread, 1M points over 100k
    /// segments).
    ///
    /// ```
    /// use segdist_index::{Index, QueryOptions};
    ///
    /// let index = Index::<2>::from_segments(&[[[0.0, 0.0], [10.0, 0.0]], [[0.0, 4.0], [10.0, 4.0]]])?;
    /// let chunks = [[[1.0, 1.0], [2.0, 3.5]], [[3.0, 3.0], [f64::NAN, 0.0]]];
    /// let (mut hits, mut features) = (Vec::new(), Vec::new());
    /// for chunk in &chunks {
    ///     index.nearest_many_into(chunk, &QueryOptions::default(), &mut hits);
    ///     features.extend(hits.iter().map(|h| h.map(|h| h.feature)));
    /// }
    /// assert_eq!(features, [Some(0), Some(1), Some(1), None]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub fn nearest_many_into(&self, points: &[[f64; D]], opts: &QueryOptions, out: &mut Vec<Option<crate::Hit<D>>>) {
        out.clear();
        self.nearest_in_order(points, opts, &|f| self.hit(&f), false, out);
    }

    /// [`nearest_many`](Self::nearest_many), each answer with a lower bound
    /// on the distance from its point to every *other* segment, found on
    /// the way at no extra search (`0.0` where the batch did not establish
    /// one: a query answered on its own, or a tie). Where the bound exceeds
    /// the answer's distance, the nearest segment wins by at least the
    /// difference: map matching's "is this snap ambiguous?", and how
    /// `segdist-geo` skips most of its margin searches.
    ///
    /// ```
    /// use segdist_index::{Index, QueryOptions};
    ///
    /// let index = Index::<2>::from_segments(&[[[0.0, 0.0], [10.0, 0.0]], [[0.0, 4.0], [10.0, 4.0]]])?;
    /// let points: Vec<[f64; 2]> = (0..100).map(|i| [0.1 * i as f64, 1.0]).collect();
    /// for (hit, runner_up) in index.nearest_many_with_runner_up(&points, &QueryOptions::default()).into_iter().flatten() {
    ///     assert_eq!(hit.feature, 0);
    ///     assert!(runner_up <= 3.0); // the other segment is 3 away
    /// }
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn nearest_many_with_runner_up(
        &self,
        points: &[[f64; D]],
        opts: &QueryOptions,
    ) -> Vec<Option<(crate::Hit<D>, f64)>> {
        let mut found = Vec::new();
        self.nearest_in_order(points, opts, &|f| (self.hit(&f), f.runner_up), true, &mut found);
        found
    }

    /// Runs the coherent batch search; the results, mapped by `map`,
    /// appended to `found`. `runner_up`: also bound every other segment's
    /// distance (see
    /// [`nearest_many_with_runner_up`](Self::nearest_many_with_runner_up)).
    pub(crate) fn nearest_in_order<R: Copy + Send + Sync>(
        &self,
        points: &[[f64; D]],
        opts: &QueryOptions,
        map: &(impl Fn(Found<D>) -> R + Sync),
        runner_up: bool,
        found: &mut Vec<Option<R>>,
    ) {
        // Positions are held as u32: beyond that, batch by batch.
        const MAX: usize = 1 << 31;
        if points.len() > MAX {
            for part in points.chunks(MAX) {
                self.nearest_in_order(part, opts, map, runner_up, found);
            }
            return;
        }
        if points.is_empty() {
            return;
        }
        // A buffer of the caller's, too small, grows as any vector does; a
        // new one is a big one. Answers go into room written before (a
        // buffer used again) by non-temporal stores, not into fresh memory.
        let stream = found.capacity() - found.len() >= points.len();
        if found.capacity() == 0 {
            *found = big_vec(points.len());
        } else {
            found.reserve(points.len());
        }
        // Every pass runs on all the workers (the radix sort and the scatter
        // into input order too: on one thread they kept two from scaling).
        with_threads(opts.threads, |par| self.nearest_sorted(points, opts, map, runner_up, par, stream, found));
    }

    /// [`nearest_in_order`](Self::nearest_in_order) on the current rayon
    /// pool (`par`) or the calling thread; `stream`: the answers written by
    /// non-temporal stores (see [`Stream`]).
    // (Private: the public forms take the options as one struct.)
    #[allow(clippy::too_many_arguments)]
    fn nearest_sorted<R: Copy + Send + Sync>(
        &self,
        points: &[[f64; D]],
        opts: &QueryOptions,
        map: &(impl Fn(Found<D>) -> R + Sync),
        runner_up: bool,
        par: bool,
        stream: bool,
        found: &mut Vec<Option<R>>,
    ) {
        let n = points.len();
        let limit = opts.max_distance;
        let (in_order, ups_in_order) = self.chosen_slots(points, limit, runner_up, opts.isa, par);
        let chosen = Chosen { index: self, points, slots: &in_order, runner_up: &ups_in_order, limit, map };
        // (Room for n more was made by the caller.)
        let before = found.len();
        if par {
            let spare = &mut found.spare_capacity_mut()[..n];
            spare.par_chunks_mut(CHUNK).enumerate().for_each(|(c, out)| {
                let (start, len) = (c * CHUNK, out.len());
                let mut out = Stream::new(out, stream);
                Resolver::for_isa(opts.isa).resolve(&chosen, start..start + len, |x| out.push(x));
                // (An answer for every position: the resolver makes one a
                // point.)
                assert_eq!(out.finish(), len, "an answer for every point");
            });
        } else {
            let mut out = Stream::new(&mut found.spare_capacity_mut()[..n], stream);
            Resolver::for_isa(opts.isa).resolve(&chosen, 0..n, |x| out.push(x));
            assert_eq!(out.finish(), n, "an answer for every point");
        }
        // SAFETY: the first n of the spare room were written whole just
        // above (else an assertion panicked, and this is not reached).
        unsafe { found.set_len(before + n) };
        give_back(in_order);
        give_back(ups_in_order);
    }

    /// The search of [`nearest_sorted`](Self::nearest_sorted): each
    /// point's segment (its slot, or [`NO_SLOT`]) and, with `runner_up`,
    /// its runner-up bound (else empty), in input order; not yet checked
    /// against `limit` by the accurate kernel (a [`Resolver`] does). The
    /// kernels in `isa` (see [`QueryOptions::isa`]).
    pub(crate) fn chosen_slots(
        &self,
        points: &[[f64; D]],
        limit: f64,
        runner_up: bool,
        isa: Isa,
        par: bool,
    ) -> (Vec<u32>, Vec<f64>) {
        let form = form_of(isa);
        let (order, sorted) = self.in_curve_order(points, form, par);
        let n = sorted.len();
        // The search keeps each point's segment (and runner-up bound), in a
        // buffer that stays in cache; those go back into input order, and
        // the answers are made there, in order. (Whole answers kept in
        // curve order, then copied into input order, cost 140 against 110
        // ns a query: 1M points, one thread.)
        let run = |chunk: &[[f64; D]], slots: &mut [u32], ups: &mut [f64]| {
            let mut scratch = Scratch::for_isa(isa);
            let mut leaves = Vec::with_capacity(NEAREST_CAPS.0);
            let mut cands = Group::with_form(form);
            let mut next = 0;
            let mut hint: Option<u32> = None;
            // The last group's answers, and the segments among them.
            let mut answers: Vec<u32> = Vec::with_capacity(GROUP);
            let mut near = Group::with_form(form);
            // Groups shrink while they fail (queries sparse next to the
            // segments: too many candidates) and grow back while they work.
            // Until a first answer, one point at a time (a search down the
            // tree each: nothing bounds a group yet), then whole groups:
            // each of a batch's chunks starts so (a first group searched
            // point by point cost two threads a tenth of their time).
            let mut size = 1;
            // The size of the last group that failed (past GROUP: none),
            // and how many have worked since.
            let (mut failed, mut streak) = (GROUP + 1, 0);
            // How far from a group's box its candidates are gathered where
            // the last group was sifted (`+inf`: no guess, the reach).
            let mut guess = f64::INFINITY;
            // A point searched down the tree on its own, from the last
            // answer.
            let alone = |p: &[f64; D], hint: Option<u32>, scratch: &mut Scratch| {
                self.nearest_found(p, limit, hint, scratch).map(|f| (f.slot, f.runner_up))
            };
            let mut rest = chunk;
            while !rest.is_empty() {
                let (group, tail) = rest.split_at(size.min(rest.len()));
                rest = tail;
                let cold = hint.is_none();
                // After a first answer, the group's candidates are found
                // once: each point's answer is no farther than the nearest
                // of the last group's answers (usually close, the curve
                // being continuous), so it is a segment whose box meets the
                // group's box padded by the largest such distance, in a leaf
                // that meets it too.
                if answers.is_empty() {
                    answers.extend(hint);
                }
                // Sparse points (fewer than the segments) lie farther from
                // the last group's answers than from their own segments: a
                // box padded by that reach holds too many candidates. So
                // where the last group was sifted, the candidates are
                // gathered within a guess from it (how far its points lay
                // from theirs), and a point whose answer may lie beyond
                // that is searched alone (`Sifted::far`); where that fails
                // (too many candidates, or a guess within the scan's own
                // error), within the reach. (1 M points over 10 M segments,
                // one thread: 555 -> 237 ns a point, 1 M segments 132 -> 89;
                // with the group walk's prefetches 166 and 77.)
                let shared = hint.is_some() && {
                    let bbox = bounding_box(group);
                    let guessed = guess < limit;
                    if guessed && !self.share(&bbox, guess, NEAREST_CAPS, &mut leaves, &mut cands, &mut scratch) {
                        // Too many candidates within the guess: the reach,
                        // larger, would hold more. The group fails.
                        false
                    } else if guessed && cands.trust_within() {
                        true
                    } else {
                        guess = f64::INFINITY;
                        let u = self.reach_of(group, &bbox, &answers, &mut near).min(limit);
                        self.share(&bbox, u, NEAREST_CAPS, &mut leaves, &mut cands, &mut scratch)
                    }
                };
                answers.clear();
                if hint.is_some() {
                    // A group that failed at some size is not tried again
                    // at that size before RETRY groups have worked below
                    // it: a failed walk costs up to NEAREST_CAPS.0 leaves
                    // (10,000 points over 10 M segments: 1,970-2,020 ->
                    // 1,580-1,650 ns a point).
                    if shared {
                        streak += 1;
                        if size * 2 < failed || streak >= RETRY {
                            size = (size * 2).min(GROUP);
                            streak = 0;
                        }
                    } else {
                        failed = size;
                        size = (size / 2).max(1);
                        streak = 0;
                    }
                }
                // The whole group sifted at once (without the runner-up
                // bounds, which take each point's scan): a point a lane.
                let sifted =
                    (hint.is_some() && shared && !runner_up).then(|| sift_points_group(self, &mut cands, group, limit));
                if let Some(s) = &sifted {
                    // (Where some points lay beyond the guess, at least
                    // twice it.)
                    let widen = if s.far != 0 { 2.0 * cands.reach } else { 0.0 };
                    guess = (GUESS * s.far2.sqrt()).max(GUESS_FLOOR * cands.m).max(widen);
                }
                for (i, p) in group.iter().enumerate() {
                    let picked = match (hint, &sifted) {
                        // A lone candidate is the answer if within the
                        // limit, which the `Resolver` checks.
                        (_, Some(s)) if s.one >> i & 1 != 0 => Some((s.slot[i], 0.0)),
                        (_, Some(s)) if s.far >> i & 1 != 0 => alone(p, hint, &mut scratch),
                        (_, Some(s)) if s.many >> i & 1 == 0 => None,
                        // (The group's box holds every finite point of it.)
                        (Some(_), _) if shared => match self.nearest_in_group(p, limit, &mut cands, runner_up) {
                            Pick::Done(f) => f.map(|f| (f.slot, f.runner_up)),
                            Pick::Only { slot, runner_up } => Some((slot, runner_up)),
                            Pick::Alone => alone(p, hint, &mut scratch),
                        },
                        _ => alone(p, hint, &mut scratch),
                    };
                    if let Some((slot, up)) = picked {
                        hint = Some(slot);
                        push_new(&mut answers, slot);
                        slots[next] = slot;
                        if let Some(u) = ups.get_mut(next) {
                            *u = up;
                        }
                    }
                    next += 1;
                }
                if cold && hint.is_some() {
                    size = GROUP;
                }
            }
        };
        let mut slots: Vec<u32> = take_of(NO_SLOT, n);
        let mut ups: Vec<f64> = if runner_up { take_of(0.0, n) } else { Vec::new() };
        if par {
            let up_chunks: Vec<&mut [f64]> = if runner_up {
                ups.chunks_mut(CHUNK).collect()
            } else {
                std::iter::repeat_with(|| &mut [][..]).take(n.div_ceil(CHUNK)).collect()
            };
            sorted
                .par_chunks(CHUNK)
                .zip(slots.par_chunks_mut(CHUNK))
                .zip(up_chunks)
                .for_each(|((c, s), u)| run(c, s, u));
        } else {
            run(&sorted, &mut slots, &mut ups);
        }
        // SAFETY (both): `curve_order` sorts the positions 0..n: a
        // permutation.
        let in_order = unsafe { scatter(&order, |i| slots[i], NO_SLOT, par) };
        let ups_in_order = if runner_up { unsafe { scatter(&order, |i| ups[i], 0.0, par) } } else { Vec::new() };
        // (The curve-order buffers, done with, for the thread's next batch.)
        give_back(slots);
        give_back(ups);
        give_back(order);
        give_back(sorted);
        (in_order, ups_in_order)
    }

    /// The points in curve order, gathered in one pass (loads that do not
    /// wait on each other, where the searches would take each one's cache
    /// miss in turn), and the order itself; the keys in `form`.
    pub(crate) fn in_curve_order(&self, points: &[[f64; D]], form: Form, par: bool) -> (Vec<u32>, Vec<[f64; D]>) {
        let order = self.curve_order(points, form, par);
        let gather = |&i: &u32| points[i as usize];
        let mut sorted = take(order.len());
        if par {
            sorted.par_extend(order.par_iter().map(gather));
        } else {
            sorted.extend(order.iter().map(gather));
        }
        (order, sorted)
    }

    /// An upper bound on the distance from every point of `bbox` to every
    /// segment in `slots`: distance to a segment is convex, so over a box it
    /// peaks at a corner.
    pub(crate) fn reach(&self, bbox: &([f64; D], [f64; D]), slots: &[u32]) -> f64 {
        let (glo, ghi) = bbox;
        let mut u = 0.0f64;
        for corner in 0..1usize << D {
            let c: [f64; D] = std::array::from_fn(|k| if corner >> k & 1 == 0 { glo[k] } else { ghi[k] });
            for &slot in slots {
                u = u.max(self.upper_bound(&c, slot));
            }
        }
        u
    }

    /// Gathers into `cands` every segment within `u` of some point of
    /// `bbox` (the group's candidates: every answer lies within `u` of its
    /// query, so it is a segment whose box meets the box around those
    /// balls, in a leaf that meets it too); `false` when there are more
    /// leaves or segments than `caps` allows, or the box is not finite: then
    /// the group searches query by query.
    pub(crate) fn share(
        &self,
        bbox: &([f64; D], [f64; D]),
        u: f64,
        caps: (usize, usize),
        leaves: &mut Vec<u32>,
        cands: &mut Group<D>,
        scratch: &mut Scratch,
    ) -> bool {
        let (glo, ghi) = bbox;
        let u = u * (1.0 + 1e-12);
        let (mut lo, mut hi) = ([0.0; D], [0.0; D]);
        for k in 0..D {
            // Widened by a relative 1e-15 of the coordinates: the box must
            // hold the balls despite rounding.
            let pad = u + glo[k].abs().max(ghi[k].abs()) * 1e-15;
            lo[k] = glo[k] - pad;
            hi[k] = ghi[k] + pad;
        }
        cands.reach = u;
        cands.trust2 = f64::INFINITY;
        // NaN or infinite: no finite box.
        if !lo.iter().chain(&hi).all(|c| c.is_finite()) {
            return false;
        }
        // The walk and the gather test eight boxes at a time: with AVX-512,
        // each test is a few instructions.
        #[inline(always)]
        fn walk<const D: usize, const V: Form>(
            index: &Index<D>,
            lo: &[f64; D],
            hi: &[f64; D],
            caps: (usize, usize),
            leaves: &mut Vec<u32>,
            cands: &mut Group<D>,
            scratch: &mut Scratch,
        ) -> bool {
            index.group_leaves::<V>(lo, hi, leaves, caps.0, scratch) && index.gather::<V>(lo, hi, leaves, caps.1, cands)
        }
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f")]
            unsafe fn avx512<const D: usize>(
                index: &Index<D>,
                lo: &[f64; D],
                hi: &[f64; D],
                caps: (usize, usize),
                leaves: &mut Vec<u32>,
                cands: &mut Group<D>,
                scratch: &mut Scratch,
            ) -> bool {
                walk::<D, AVX512>(index, lo, hi, caps, leaves, cands, scratch)
            }
            #[target_feature(enable = "avx2")]
            unsafe fn avx2<const D: usize>(
                index: &Index<D>,
                lo: &[f64; D],
                hi: &[f64; D],
                caps: (usize, usize),
                leaves: &mut Vec<u32>,
                cands: &mut Group<D>,
                scratch: &mut Scratch,
            ) -> bool {
                walk::<D, AVX2>(index, lo, hi, caps, leaves, cands, scratch)
            }
            if cands.form == AVX512 && std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F, checked just above.
                return unsafe { avx512(self, &lo, &hi, caps, leaves, cands, scratch) };
            }
            if cands.form >= AVX2 && std::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                return unsafe { avx2(self, &lo, &hi, caps, leaves, cands, scratch) };
            }
        }
        walk::<D, PORTABLE>(self, &lo, &hi, caps, leaves, cands, scratch)
    }

    /// Input positions sorted by the curve key of their point, the curve
    /// cut to about one cell per point: a stable radix sort on that key.
    fn curve_order(&self, points: &[[f64; D]], form: Form, par: bool) -> Vec<u32> {
        let curve = self.curve();
        // Bits of the full key kept: about log2(n), at most 32 (a cell or
        // so a point; with two bits more, four cells a point, a batch took
        // 1/0.966 the time on uniform points and 1/0.983 on road fixes,
        // 1M points, one thread; two digits of 10 bits for a million).
        let bits = (usize::BITS - points.len().leading_zeros()).clamp(2 * D as u32, 32);
        // (A kept buffer, or a fresh one; the fill is what gives it its
        // length, every key being written below.)
        let mut keyed: Vec<u64> = take_of(0, points.len());
        if par {
            const PIECE: usize = 1 << 14;
            keyed.par_chunks_mut(PIECE).zip(points.par_chunks(PIECE)).enumerate().for_each(|(c, (out, pts))| {
                curve.sort_keys(pts, bits, c * PIECE, out, form);
            });
        } else {
            curve.sort_keys(points, bits, 0, &mut keyed, form);
        }
        radix_sort_high(&mut keyed, bits, par);
        let mut order = take(keyed.len());
        if par {
            order.par_extend(keyed.par_iter().map(|&k| k as u32));
        } else {
            order.extend(keyed.iter().map(|&k| k as u32));
        }
        give_back(keyed);
        order
    }
}

/// A buffer written by several workers at once, each to elements no other
/// touches (what makes that so is said where one is made).
struct Shared<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: only used for writes to disjoint elements of a buffer that
// outlives the workers (see the uses).
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T: Copy> Shared<T> {
    /// Over the elements of `buf`, which must outlive every write.
    fn new(buf: &mut [T]) -> Self {
        Shared { ptr: buf.as_mut_ptr(), len: buf.len() }
    }

    /// Writes `x` at `i`; an `i` out of range (which the callers never
    /// make) is skipped rather than written out of bounds.
    ///
    /// # Safety
    /// No other worker writes element `i` meanwhile, and the buffer is
    /// still alive.
    #[inline(always)]
    unsafe fn set(&self, i: usize, x: T) {
        if i < self.len {
            // SAFETY: in bounds (checked); alone on this element and the
            // buffer alive (this function's contract).
            unsafe { *self.ptr.add(i) = x };
        }
    }
}

/// The inverse of the permutation `order` of `0..order.len()`:
/// `at[order[i]] = i` (see [`scatter`]).
///
/// # Safety
/// As [`scatter`].
pub(crate) unsafe fn inverse(order: &[u32], par: bool) -> Vec<u32> {
    // SAFETY: this function's contract.
    unsafe { scatter(order, |i| i as u32, 0, par) }
}

/// Values in curve order put back in input order: element `order[i]` of
/// the result is `value(i)`; on all the workers where `par` (random
/// writes, but of a few bytes into a buffer that stays in cache: on one
/// thread this pass alone kept two threads from scaling).
///
/// # Safety
/// `order` must hold each value at most once (a permutation, as
/// `curve_order` makes): the workers write element `order[i]` unlocked.
unsafe fn scatter<T: Copy + Send + Sync + 'static>(
    order: &[u32],
    value: impl Fn(usize) -> T + Sync,
    fill: T,
    par: bool,
) -> Vec<T> {
    let n = order.len();
    // Filled, not left to the system's zeroed pages: faulted in by a
    // sequential pass, the pages cost less than faulted by the random
    // writes below (two threads, 1M points, medians of three runs: 68-70
    // against 67-75 ns a query).
    let mut at = take_of(fill, n);
    if !par {
        for (i, &o) in order.iter().enumerate() {
            at[o as usize] = value(i);
        }
        return at;
    }
    // The workers write disjoint elements (this function's contract), and
    // `at` outlives them (`for_each` returns after all).
    let out = Shared::new(&mut at);
    const PIECE: usize = 1 << 16;
    order.par_chunks(PIECE).enumerate().for_each(|(c, piece)| {
        let out = &out;
        for (j, &o) in piece.iter().enumerate() {
            // SAFETY: no other worker writes element `o` (this function's
            // contract); `at` outlives the workers.
            unsafe { out.set(o as usize, value(c * PIECE + j)) };
        }
    });
    at
}

/// Appends `slot` unless it repeats the last one: neighbouring points
/// mostly share their answer, and `reach_of` skips repeats anyway, at a
/// search through the list (and a mispredicted branch) each.
#[inline(always)]
fn push_new(answers: &mut Vec<u32>, slot: u32) {
    // Written, then kept or not: a branch here mispredicts as often as
    // the one it saves in `reach_of`.
    let repeat = answers.last() == Some(&slot);
    answers.push(slot);
    answers.truncate(answers.len() - usize::from(repeat));
}

/// The bounding box of the finite coordinates of `points`.
pub(crate) fn bounding_box<const D: usize>(points: &[[f64; D]]) -> ([f64; D], [f64; D]) {
    let (mut lo, mut hi) = ([f64::INFINITY; D], [f64::NEG_INFINITY; D]);
    for p in points {
        for k in 0..D {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    (lo, hi)
}

/// Sorts `v` stably by bits `32..32 + bits` (a key above 32-bit positions),
/// least significant digit first, each pass over pieces of `v` on all the
/// workers where `par` (a piece's counts and its share of each digit's
/// room, pieces in order: still stable). Hand-written: a comparison sort
/// took a quarter of a batch's time, and no well-kept crate sorts `u64` by
/// a bit range.
pub(crate) fn radix_sort_high(v: &mut Vec<u64>, bits: u32, par: bool) {
    // (Two passes of 10 bits sort a million points' 20.)
    const DIGIT: u32 = 10;
    const DIGITS: usize = 1 << DIGIT;
    if v.len() < 1 << 12 {
        v.sort_unstable();
        return;
    }
    let n = v.len();
    let pieces = if par { rayon::current_num_threads().clamp(1, 64) } else { 1 };
    let piece = n.div_ceil(pieces);
    let mut tmp = take_of(0u64, n);
    let mut shift = 32;
    while shift < 32 + bits {
        let digit = |x: u64| ((x >> shift) & (DIGITS as u64 - 1)) as usize;
        let count = |p: &[u64]| {
            let mut c = vec![0usize; DIGITS];
            for &x in p {
                c[digit(x)] += 1;
            }
            c
        };
        let mut counts: Vec<Vec<usize>> =
            if par { v.par_chunks(piece).map(count).collect() } else { v.chunks(piece).map(count).collect() };
        // Each piece's first place for each digit: digits in order, and
        // within a digit, pieces in order.
        let mut sum = 0;
        for d in 0..DIGITS {
            for c in &mut counts {
                (c[d], sum) = (sum, sum + c[d]);
            }
        }
        // The workers write disjoint elements (each its own share of every
        // digit's room), and the buffer outlives them.
        let out = Shared::new(&mut tmp);
        let scatter = |(p, mut at): (&[u64], Vec<usize>)| {
            let out = &out;
            for &x in p {
                let d = digit(x);
                // SAFETY: the places of all digits of all pieces are a
                // permutation of 0..n: no other piece writes this one;
                // `tmp` outlives the workers.
                unsafe { out.set(at[d], x) };
                at[d] += 1;
            }
        };
        if par {
            v.par_chunks(piece).zip(counts).for_each(scatter);
        } else {
            v.chunks(piece).zip(counts).for_each(scatter);
        }
        std::mem::swap(v, &mut tmp);
        shift += DIGIT;
    }
    give_back(tmp);
}

/// Runs `run(true)` on `threads` workers (0: the global pool), or
/// `run(false)` on the calling thread for one.
pub(crate) fn with_threads<R: Send>(threads: usize, run: impl FnOnce(bool) -> R + Send) -> R {
    match threads {
        1 => run(false),
        0 => run(true),
        n if n == rayon::current_num_threads() => run(true),
        n => match rayon::ThreadPoolBuilder::new().num_threads(n).build() {
            Ok(pool) => pool.install(|| run(true)),
            // No threads to be had: the answer is the same on one.
            Err(_) => run(false),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn radix_sort_is_a_stable_sort_on_every_number_of_workers() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(21);
        for (n, bits) in [(5000, 13), (100_000, 22), (70_001, 32)] {
            // Few distinct keys: stability shows in the low 32 bits.
            let keys: Vec<u64> = (0..n).map(|i| (r.gen_range(0..1u64 << bits.min(12)) << 32) | i as u64).collect();
            let mut want = keys.clone();
            want.sort_by_key(|k| k >> 32);
            for threads in [1, 2, 3] {
                let sort = |par| {
                    let mut got = keys.clone();
                    radix_sort_high(&mut got, bits, par);
                    got
                };
                let got = with_threads(threads, sort);
                assert_eq!(got, want, "{n} keys, {threads} threads");
            }
        }
    }

    #[test]
    fn inverse_undoes_the_permutation() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(22);
        let n = 200_000u32;
        let mut order: Vec<u32> = (0..n).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, r.gen_range(0..=i));
        }
        for par in [false, true] {
            // SAFETY: a permutation, shuffled above.
            let at = unsafe { inverse(&order, par) };
            assert!(order.iter().enumerate().all(|(i, &o)| at[o as usize] == i as u32));
        }
    }
}
