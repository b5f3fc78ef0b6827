//! The k-nearest and radius batches: every point's list of answers, in input
//! order, either as a `Vec` a point ([`Index::k_nearest_many`],
//! [`Index::within_many`]) or flat in one buffer the caller keeps from call
//! to call ([`HitLists`], [`Index::k_nearest_many_into`],
//! [`Index::within_many_into`]). Both run the same search
//! ([`Index::search_run`]): the points in curve order, a group of
//! neighbours sharing one walk down the tree and one scan, each point's
//! survivors evaluated by the accurate kernel and ranked.

use rayon::prelude::*;

use crate::batch::{bounding_box, inverse, with_threads, CHUNK, GROUP, GUESS, GUESS_FLOOR, LIST_CAPS};
use crate::index::{form_of, Found, Group, Index, Scratch, Want};
use crate::mem::{big_vec_of, fence, give_back, prefetch_slice, reserve_big, stream_extend, stream_to, take, take_of};
use crate::{Hit, Isa, QueryOptions};

/// The answers of a batch of k-nearest or radius queries, flat: point `i`'s
/// list is `hits()[offsets()[i]..offsets()[i + 1]]`, nearest first (ties by
/// lowest id). Filled by [`Index::k_nearest_many_into`] and
/// [`Index::within_many_into`], which clear it first and keep its room:
/// passed again call after call, it costs no allocation once grown, where a
/// `Vec` a point cost two a point (an allocation and its release). It keeps
/// the search's own buffers too (the answers in curve order, before they
/// are put in input order): about twice the memory of its answers, held
/// until it is dropped.
///
/// ```
/// use segdist_index::{HitLists, Index, QueryOptions};
///
/// let index = Index::<2>::from_segments(&[[[0.0, 0.0], [10.0, 0.0]], [[0.0, 4.0], [10.0, 4.0]]])?;
/// let mut lists = HitLists::new();
/// index.within_many_into(&[[1.0, 1.0], [5.0, 2.0], [5.0, 9.0]], 2.0, &QueryOptions::default(), &mut lists);
/// assert_eq!(lists.len(), 3);
/// assert_eq!(lists.offsets(), [0, 1, 3, 3]);
/// assert_eq!(lists.get(1).unwrap().iter().map(|h| h.feature).collect::<Vec<_>>(), [0, 1]);
/// assert!(lists.get(2).unwrap().is_empty());
/// # Ok::<(), segdist_index::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct HitLists<const D: usize> {
    offsets: Vec<usize>,
    hits: Vec<Hit<D>>,
    /// The answers of each run of points in curve order, before they are
    /// put in input order: kept for the next batch (written afresh, their
    /// pages faulted in each time, they made the flat form slower than a
    /// `Vec` a point).
    runs: Vec<Vec<Hit<D>>>,
}

impl<const D: usize> Default for HitLists<D> {
    fn default() -> Self {
        HitLists { offsets: vec![0], hits: Vec::new(), runs: Vec::new() }
    }
}

/// Lists are equal when their offsets and answers are.
impl<const D: usize> PartialEq for HitLists<D> {
    fn eq(&self, other: &Self) -> bool {
        self.offsets == other.offsets && self.hits == other.hits
    }
}

impl<const D: usize> HitLists<D> {
    /// No lists.
    ///
    /// ```
    /// let lists = segdist_index::HitLists::<2>::new();
    /// assert!(lists.is_empty());
    /// assert_eq!(lists.offsets(), [0]);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How many lists (queries).
    ///
    /// ```
    /// assert_eq!(segdist_index::HitLists::<3>::new().len(), 0);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are no lists.
    ///
    /// ```
    /// assert!(segdist_index::HitLists::<2>::default().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Query `i`'s answers, nearest first; `None` past the end.
    ///
    /// ```
    /// let lists = segdist_index::HitLists::<2>::new();
    /// assert!(lists.get(0).is_none());
    /// ```
    #[must_use]
    pub fn get(&self, i: usize) -> Option<&[Hit<D>]> {
        let (&a, &b) = (self.offsets.get(i)?, self.offsets.get(i + 1)?);
        Some(&self.hits[a..b])
    }

    /// Every query's answers, in order.
    ///
    /// ```
    /// use segdist_index::{HitLists, Index, QueryOptions};
    ///
    /// let index = Index::<2>::from_segments(&[[[0.0, 0.0], [10.0, 0.0]], [[0.0, 4.0], [10.0, 4.0]]])?;
    /// let mut lists = HitLists::new();
    /// index.k_nearest_many_into(&[[1.0, 1.0], [5.0, 3.0]], 1, &QueryOptions::default(), &mut lists);
    /// let nearest: Vec<usize> = lists.iter().map(|l| l[0].feature).collect();
    /// assert_eq!(nearest, [0, 1]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[Hit<D>]> + '_ {
        self.offsets.windows(2).map(|w| &self.hits[w[0]..w[1]])
    }

    /// Every answer, list after list.
    ///
    /// ```
    /// assert!(segdist_index::HitLists::<2>::new().hits().is_empty());
    /// ```
    #[must_use]
    pub fn hits(&self) -> &[Hit<D>] {
        &self.hits
    }

    /// Where each list starts in [`hits`](Self::hits), and, last, where the
    /// last ends: `len() + 1` numbers from 0.
    ///
    /// ```
    /// assert_eq!(segdist_index::HitLists::<2>::new().offsets(), [0]);
    /// ```
    #[must_use]
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Empties the lists, keeping their room.
    ///
    /// ```
    /// let mut lists = segdist_index::HitLists::<2>::new();
    /// lists.clear();
    /// assert!(lists.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.offsets.clear();
        self.offsets.push(0);
        self.hits.clear();
    }
}

impl<const D: usize> Index<D> {
    /// The `k` nearest segments to every point (each list nearest first,
    /// ties by lowest id), in input order: the same answers as
    /// [`k_nearest_within`](Self::k_nearest_within) point by point, bit for
    /// bit. Coherent like [`nearest_many`](Self::nearest_many): a group of
    /// neighbouring points shares one walk down the tree, bounded by the
    /// previous point's `k` answers, and the fast kernel scans the group's
    /// candidates for all of them at once. For a stream of batches,
    /// [`k_nearest_many_into`](Self::k_nearest_many_into) answers into a
    /// buffer kept from call to call, without a `Vec` a point.
    ///
    /// ```
    /// use segdist_index::{Index, QueryOptions};
    ///
    /// let index = Index::<2>::from_segments(&[
    ///     [[0.0, 0.0], [10.0, 0.0]],
    ///     [[0.0, 4.0], [10.0, 4.0]],
    ///     [[0.0, 9.0], [10.0, 9.0]],
    /// ])?;
    /// let hits = index.k_nearest_many(&[[1.0, 1.0], [5.0, 8.0]], 2, &QueryOptions::default());
    /// assert_eq!(hits[0].iter().map(|h| h.feature).collect::<Vec<_>>(), [0, 1]);
    /// assert_eq!(hits[1].iter().map(|h| h.feature).collect::<Vec<_>>(), [2, 1]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn k_nearest_many(&self, points: &[[f64; D]], k: usize, opts: &QueryOptions) -> Vec<Vec<Hit<D>>> {
        if k == 0 {
            return vec![Vec::new(); points.len()];
        }
        self.search_many(points, Want::Nearest(k), opts.max_distance, opts)
    }

    /// Every segment within `radius` of every point (each list nearest
    /// first, ties by lowest id), in input order: the same answers as
    /// [`within`](Self::within) point by point, bit for bit, a group of
    /// neighbouring points sharing one walk down the tree and one scan.
    /// `opts.max_distance` lowers the radius further if smaller. For a
    /// stream of batches, [`within_many_into`](Self::within_many_into)
    /// answers into a buffer kept from call to call.
    ///
    /// ```
    /// use segdist_index::{Index, QueryOptions};
    ///
    /// let index = Index::<2>::from_segments(&[[[0.0, 0.0], [10.0, 0.0]], [[0.0, 4.0], [10.0, 4.0]]])?;
    /// let hits = index.within_many(&[[1.0, 1.0], [5.0, 2.0]], 2.0, &QueryOptions::default());
    /// assert_eq!(hits[0].len(), 1);
    /// assert_eq!(hits[1].iter().map(|h| h.distance).collect::<Vec<_>>(), [2.0, 2.0]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    #[must_use]
    pub fn within_many(&self, points: &[[f64; D]], radius: f64, opts: &QueryOptions) -> Vec<Vec<Hit<D>>> {
        let limit = if radius.is_nan() { radius } else { radius.min(opts.max_distance) };
        self.search_many(points, Want::All, limit, opts)
    }

    /// [`k_nearest_many`](Self::k_nearest_many) into `out`: cleared, then
    /// every point's list in input order, flat (see [`HitLists`]), in the
    /// room `out` already has where it is enough. The same answers, bit for
    /// bit; a list a point without a `Vec` a point.
    ///
    /// ```
    /// use segdist_index::{HitLists, Index, QueryOptions};
    ///
    /// let index = Index::<2>::from_segments(&[
    ///     [[0.0, 0.0], [10.0, 0.0]],
    ///     [[0.0, 4.0], [10.0, 4.0]],
    ///     [[0.0, 9.0], [10.0, 9.0]],
    /// ])?;
    /// let mut lists = HitLists::new();
    /// for chunk in [[[1.0, 1.0], [5.0, 8.0]], [[2.0, 5.0], [f64::NAN, 0.0]]] {
    ///     index.k_nearest_many_into(&chunk, 2, &QueryOptions::default(), &mut lists);
    ///     assert_eq!(lists.len(), 2);
    /// }
    /// assert_eq!(lists.get(0).unwrap().iter().map(|h| h.feature).collect::<Vec<_>>(), [1, 2]);
    /// assert!(lists.get(1).unwrap().is_empty()); // not a finite point: no answer
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub fn k_nearest_many_into(&self, points: &[[f64; D]], k: usize, opts: &QueryOptions, out: &mut HitLists<D>) {
        out.clear();
        if k == 0 {
            out.offsets.resize(points.len() + 1, 0);
            return;
        }
        self.search_flat(points, Want::Nearest(k), opts.max_distance, opts, out);
    }

    /// [`within_many`](Self::within_many) into `out`: cleared, then every
    /// point's list in input order, flat (see [`HitLists`]). The same
    /// answers, bit for bit.
    ///
    /// ```
    /// use segdist_index::{HitLists, Index, QueryOptions};
    ///
    /// let index = Index::<2>::from_segments(&[[[0.0, 0.0], [10.0, 0.0]], [[0.0, 4.0], [10.0, 4.0]]])?;
    /// let mut lists = HitLists::new();
    /// index.within_many_into(&[[1.0, 1.0], [5.0, 2.0]], 2.0, &QueryOptions::default(), &mut lists);
    /// assert_eq!(lists.get(0).unwrap().len(), 1);
    /// assert_eq!(lists.get(1).unwrap().iter().map(|h| h.distance).collect::<Vec<_>>(), [2.0, 2.0]);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub fn within_many_into(&self, points: &[[f64; D]], radius: f64, opts: &QueryOptions, out: &mut HitLists<D>) {
        out.clear();
        let limit = if radius.is_nan() { radius } else { radius.min(opts.max_distance) };
        self.search_flat(points, Want::All, limit, opts, out);
    }

    /// The coherent k-nearest or radius search, in input order (`opts`:
    /// its threads and instruction set; the limit is `limit`).
    fn search_many(&self, points: &[[f64; D]], want: Want, limit: f64, opts: &QueryOptions) -> Vec<Vec<Hit<D>>> {
        if points.len() > MAX {
            return points.chunks(MAX).flat_map(|part| self.search_many(part, want, limit, opts)).collect();
        }
        if points.is_empty() {
            return Vec::new();
        }
        with_threads(opts.threads, |par| self.search_sorted(points, want, limit, opts.isa, par))
    }

    /// [`search_many`](Self::search_many) on the current rayon pool (`par`)
    /// or the calling thread.
    fn search_sorted(&self, points: &[[f64; D]], want: Want, limit: f64, isa: Isa, par: bool) -> Vec<Vec<Hit<D>>> {
        let (order, sorted) = self.in_curve_order(points, form_of(isa), par);
        let group = list_group(sorted.len(), self.len());
        let run = |(chunk, out): (&[[f64; D]], &mut [Vec<Hit<D>>])| {
            let mut next = 0;
            self.search_run(chunk, want, limit, isa, group, |found| {
                out[next] = found.iter().map(|f| self.hit(f)).collect();
                next += 1;
            });
        };
        let mut results: Vec<Vec<Hit<D>>> = big_vec_of(Vec::new(), sorted.len());
        if par {
            sorted.par_chunks(CHUNK).zip(results.par_chunks_mut(CHUNK)).for_each(run);
        } else {
            run((&sorted, &mut results));
        }
        // Back to input order: moving each list (three words) into place.
        let mut back: Vec<Vec<Hit<D>>> = big_vec_of(Vec::new(), results.len());
        for (hits, &o) in results.into_iter().zip(&order) {
            back[o as usize] = hits;
        }
        give_back(order);
        give_back(sorted);
        back
    }

    /// The coherent k-nearest or radius search, appended to `out` in input
    /// order (`opts` as in [`search_many`](Self::search_many)).
    fn search_flat(&self, points: &[[f64; D]], want: Want, limit: f64, opts: &QueryOptions, out: &mut HitLists<D>) {
        if points.len() > MAX {
            for part in points.chunks(MAX) {
                self.search_flat(part, want, limit, opts, out);
            }
            return;
        }
        if !points.is_empty() {
            with_threads(opts.threads, |par| self.search_sorted_flat(points, want, limit, opts.isa, par, out));
        }
    }

    /// [`search_flat`](Self::search_flat) on the current rayon pool (`par`)
    /// or the calling thread. Each worker answers a run of points in curve
    /// order into its own flat buffer, with a count a point; then the lists
    /// are copied into `out` in input order, each from where its point's
    /// run put it.
    fn search_sorted_flat(
        &self,
        points: &[[f64; D]],
        want: Want,
        limit: f64,
        isa: Isa,
        par: bool,
        out: &mut HitLists<D>,
    ) {
        let (order, sorted) = self.in_curve_order(points, form_of(isa), par);
        // Where every point has exactly k answers, each list's place is
        // known before the search.
        let (order, sorted) = match want {
            Want::Nearest(k)
                if limit == f64::INFINITY && self.len() >= k && sorted.iter().flatten().all(|c| c.is_finite()) =>
            {
                match self.k_nearest_in_place(order, sorted, k, isa, par, out) {
                    Ok(()) => return,
                    Err(back) => back,
                }
            }
            _ => (order, sorted),
        };
        let n = sorted.len();
        let group = list_group(n, self.len());
        let mut counts: Vec<u32> = take_of(0, n);
        let run = |((run, counts), hits): (RunOf<'_, D>, &mut Vec<Hit<D>>)| {
            hits.clear();
            let mut next = 0;
            // A point's answers, made here, then streamed to the run's
            // buffer (read back only by the copy into input order).
            let mut stage: Vec<Hit<D>> = Vec::new();
            self.search_run(run, want, limit, isa, group, |found| {
                counts[next] = found.len() as u32;
                next += 1;
                stage.clear();
                stage.extend(found.iter().map(|f| self.hit(f)));
                stream_extend(hits, &stage);
            });
            fence();
        };
        // Runs of whole chunks, a few a worker (each run fills one buffer).
        let per = if par { n.div_ceil(4 * rayon::current_num_threads()).div_ceil(CHUNK).max(1) * CHUNK } else { n };
        let mut runs = std::mem::take(&mut out.runs);
        runs.resize_with(n.div_ceil(per), Vec::new);
        if par {
            sorted.par_chunks(per).zip(counts.par_chunks_mut(per)).zip(runs.par_iter_mut()).for_each(run);
        } else {
            run(((&sorted, &mut counts), &mut runs[0]));
        }
        // Where each point's list starts in its run's buffer (run `j / per`).
        // (`usize`: a run's answers may pass 2^32 where its points cannot.)
        let mut starts: Vec<usize> = take(n);
        // SAFETY: `curve_order` sorts the positions 0..n: a permutation.
        let inverse = unsafe { inverse(&order, par) };
        let mut at = 0;
        for (j, &c) in counts.iter().enumerate() {
            if j % per == 0 {
                at = 0;
            }
            starts.push(at);
            at += c as usize;
        }
        if par {
            copy_in_order(&inverse, &counts, &starts, &runs, per, out);
        } else {
            out.offsets.reserve(n);
            reserve_big(&mut out.hits, runs.iter().map(Vec::len).sum());
            for (i, &j) in inverse.iter().enumerate() {
                // The list a few ahead is asked for now: each is read from
                // anywhere in the runs, mostly from memory.
                if let Some(&a) = inverse.get(i + AHEAD) {
                    prefetch_slice(list_of(&runs, &counts, &starts, per, a));
                }
                out.hits.extend_from_slice(list_of(&runs, &counts, &starts, per, j));
                out.offsets.push(out.hits.len());
            }
        }
        out.runs = runs;
        give_back(starts);
        give_back(inverse);
        give_back(counts);
        give_back(order);
        give_back(sorted);
    }

    /// The k nearest of every point of `sorted` (in curve order, `order`
    /// their places in the input), each list written straight to its place
    /// in `out`, where every point has exactly `k` answers: finite points,
    /// no limit, and at least `k` segments (the caller's checks). Point
    /// `i`'s list is then `k·i..k·(i + 1)` of the hits appended, known
    /// before the search, and the answers need neither a buffer in curve
    /// order nor a copy out of it (a fifth of a k = 5 batch). Should a
    /// point have another number of answers all the same, nothing is kept
    /// and the two vectors are handed back for the general way.
    fn k_nearest_in_place(
        &self,
        order: Vec<u32>,
        sorted: Vec<[f64; D]>,
        k: usize,
        isa: Isa,
        par: bool,
        out: &mut HitLists<D>,
    ) -> Result<(), (Vec<u32>, Vec<[f64; D]>)> {
        let n = sorted.len();
        let group = list_group(n, self.len());
        let total = n * k;
        let base = out.hits.len();
        reserve_big(&mut out.hits, total);
        let room = Room(out.hits.spare_capacity_mut()[..total].as_mut_ptr().cast::<Hit<D>>());
        let whole = std::sync::atomic::AtomicBool::new(true);
        let run = |(at, run): (usize, &[[f64; D]])| {
            let mut next = at;
            let mut stage: Vec<Hit<D>> = Vec::with_capacity(k);
            self.search_run(run, Want::Nearest(k), f64::INFINITY, isa, group, |found| {
                let i = order[next] as usize;
                next += 1;
                if found.len() != k {
                    whole.store(false, std::sync::atomic::Ordering::Relaxed);
                    return;
                }
                stage.clear();
                stage.extend(found.iter().map(|f| self.hit(f)));
                // SAFETY: input point `i`'s `k` places, within the `total`
                // reserved; each point is in one run only, so no two
                // writers share a place.
                // Streamed: written plainly, each point's lines, scattered
                // over the lists, were read from memory first, and the stores
                // waiting on them stalled the search (1.3 times the time).
                unsafe { stream_to(room.at(i * k), &stage) };
            });
            fence();
        };
        let per = if par { n.div_ceil(4 * rayon::current_num_threads()).div_ceil(CHUNK).max(1) * CHUNK } else { n };
        if par {
            sorted.par_chunks(per).enumerate().for_each(|(c, part)| run((c * per, part)));
        } else {
            run((0, &sorted));
        }
        if !whole.into_inner() {
            return Err((order, sorted));
        }
        // SAFETY: every point had `k` answers, written to its `k` places:
        // the `total` places after `base` are written.
        unsafe { out.hits.set_len(base + total) };
        out.offsets.extend((1..=n).map(|i| base + i * k));
        give_back(order);
        give_back(sorted);
        Ok(())
    }

    /// Searches `points` (in curve order) one after the other, groups of
    /// up to `most` neighbours sharing a walk (see [`list_group`]), and
    /// hands each point's answers to `emit` in turn; the kernels in `isa`
    /// (see [`QueryOptions::isa`]).
    fn search_run(
        &self,
        points: &[[f64; D]],
        want: Want,
        limit: f64,
        isa: Isa,
        most: usize,
        mut emit: impl FnMut(&[Found<D>]),
    ) {
        let mut scratch = Scratch::for_isa(isa);
        // (For the points of a group searched alone: `scratch` holds the
        // group's evaluations until its last point is answered.)
        let mut lone = Scratch::for_isa(isa);
        let mut leaves = Vec::with_capacity(LIST_CAPS.0);
        let mut cands = Group::with_form(form_of(isa));
        // The previous point's answers: the k nearest bound the next
        // group's search.
        let mut prev: Vec<u32> = Vec::new();
        // That point and its k-th distance, when it has k answers.
        let mut last: Option<([f64; D], f64)> = None;
        // A guess at how far the next group's k-th answers lie: twice the
        // farthest k-th distance of the group before (k nearest only; +inf
        // where there is none).
        let mut guess = f64::INFINITY;
        // (One point at a time until a first point has k answers, as
        // in `nearest_sorted`.)
        let mut size = if matches!(want, Want::Nearest(_)) { 1 } else { most };
        let mut rest = points;
        while !rest.is_empty() {
            let (group, tail) = rest.split_at(size.min(rest.len()));
            rest = tail;
            let bbox = bounding_box(group);
            // How far the answers of any point of the group's box can
            // be: the radius, or (k nearest) the farthest of the
            // previous point's k answers.
            let reach = match want {
                Want::All => Some(limit),
                Want::Nearest(k) if prev.len() == k => Some(self.reach(&bbox, &prev).min(limit)),
                Want::Nearest(_) => None,
            };
            // Where points are fewer than segments the group's box is wide
            // and that bound far larger than the distances to the points'
            // own answers: the candidates are gathered within the guess
            // instead, where it is smaller, and a point whose k-th
            // candidate is not surely within it is searched alone (as the
            // nearest batch does, `chosen_slots`).
            let shared = match reach {
                Some(u) if guess < u => {
                    self.share(&bbox, guess, LIST_CAPS, &mut leaves, &mut cands, &mut scratch) && {
                        if !cands.trust_within() {
                            // (No distance trusted within the guess: the
                            // bound after all.)
                            self.share(&bbox, u, LIST_CAPS, &mut leaves, &mut cands, &mut scratch)
                        } else {
                            true
                        }
                    }
                }
                Some(u) => self.share(&bbox, u, LIST_CAPS, &mut leaves, &mut cands, &mut scratch),
                None => false,
            };
            if reach.is_some() {
                size = if shared { (size * 2).min(most) } else { (size / 2).max(1) };
            }
            // The previous point's answers bound the next group's search.
            let before = last;
            let mut far = 0.0f64;
            let mut answer = |p: &[f64; D], found: &[Found<D>]| {
                if let Want::Nearest(k) = want {
                    prev.clear();
                    prev.extend(found.iter().map(|f| f.slot));
                    last = (found.len() == k).then(|| (*p, found[k - 1].proj.distance));
                    far = far.max(last.map_or(f64::INFINITY, |(_, d)| d));
                }
                emit(found);
            };
            if shared {
                self.search_group(group, want, limit, before, &mut cands, &mut scratch, &mut lone, answer);
            } else {
                for p in group {
                    answer(p, self.search(p, want, limit, &mut scratch));
                }
            }
            if matches!(want, Want::Nearest(_)) {
                guess = (GUESS * far).max(GUESS_FLOOR * cands.m);
            }
            if reach.is_none() && matches!(want, Want::Nearest(k) if prev.len() == k) {
                size = most;
            }
        }
    }
}

/// The lists of [`search_sorted_flat`](Index::search_sorted_flat)'s runs
/// (point `j` of the curve order: `counts[j]` answers from `starts[j]` in
/// run `j / per`) appended to `out` in input order (`inverse[i]`: the
/// place of input point `i` on the curve), on every worker. Each list ends
/// where its predecessor's ended plus its count; then pieces of `PIECE`
/// points are copied, each into its own part of `out.hits`. (One thread
/// copying them all, as it still does where the batch runs on one, took a
/// radius batch on two threads 433-461 ns a point against 381-382 now:
/// 100,000 segments, 200,000 points.)
fn copy_in_order<const D: usize>(
    inverse: &[u32],
    counts: &[u32],
    starts: &[usize],
    runs: &[Vec<Hit<D>>],
    per: usize,
    out: &mut HitLists<D>,
) {
    const PIECE: usize = 4096;
    let n = inverse.len();
    let base = out.hits.len();
    out.offsets.reserve(n);
    out.offsets.extend(inverse.iter().scan(base, |end, &j| {
        *end += counts[j as usize] as usize;
        Some(*end)
    }));
    let total = out.offsets.last().map_or(0, |&end| end - base);
    reserve_big(&mut out.hits, total);
    let ends = &out.offsets[out.offsets.len() - n..];
    // The room after the hits, cut where each piece's lists start.
    let mut room = &mut out.hits.spare_capacity_mut()[..total];
    let mut parts = Vec::with_capacity(n.div_ceil(PIECE));
    for c in 0..n.div_ceil(PIECE) {
        let start = if c == 0 { 0 } else { ends[c * PIECE - 1] - base };
        let end = ends[((c + 1) * PIECE).min(n) - 1] - base;
        let (part, rest) = std::mem::take(&mut room).split_at_mut(end - start);
        parts.push(part);
        room = rest;
    }
    parts.into_par_iter().enumerate().for_each(|(c, part)| {
        let mut at = 0;
        let piece = &inverse[c * PIECE..((c + 1) * PIECE).min(n)];
        for (i, &j) in piece.iter().enumerate() {
            if let Some(&a) = piece.get(i + AHEAD) {
                prefetch_slice(list_of(runs, counts, starts, per, a));
            }
            let from = list_of(runs, counts, starts, per, j);
            let count = from.len();
            let to = &mut part[at..at + count];
            // SAFETY: `to` and `from` both hold `count` places (sliced just
            // above), in different buffers; `MaybeUninit<Hit>` is laid out
            // as `Hit`, which is `Copy`. (`write_copy_of_slice` is the safe
            // form, past this crate's minimum Rust.)
            unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), to.as_mut_ptr().cast::<Hit<D>>(), count) };
            at += count;
        }
        // (Every place of the part written: its counts sum to its length.)
        assert_eq!(at, part.len(), "a piece's lists fill its part");
    });
    // SAFETY: the `total` places after the first `base` were written whole
    // just above (each piece's part, its lists end to end; else an
    // assertion panicked, and this is not reached).
    unsafe { out.hits.set_len(base + total) };
}

/// The list of the point at `j` on the curve in
/// [`search_sorted_flat`](Index::search_sorted_flat)'s runs: `counts[j]`
/// answers from `starts[j]` in run `j / per`.
#[inline(always)]
fn list_of<'a, const D: usize>(
    runs: &'a [Vec<Hit<D>>],
    counts: &[u32],
    starts: &[usize],
    per: usize,
    j: u32,
) -> &'a [Hit<D>] {
    let j = j as usize;
    &runs[j / per][starts[j]..starts[j] + counts[j] as usize]
}

/// At most this many neighbouring points share a k-nearest or radius
/// group where the batch has at least as many points as the index has
/// segments (see [`list_group`]).
const DENSE_GROUP: usize = 2 * GROUP;
// (A group's points are a bit each in `Index::search_group`.)
const _: () = assert!(DENSE_GROUP <= 64);

/// The most points of a k-nearest or radius group: [`DENSE_GROUP`] where
/// the batch has at least a point a segment, else the nearest batch's
/// [`GROUP`]. Where points are dense a larger group's walk and candidates
/// are shared by more points, for little more scanning each; where they
/// are sparse its box holds too many candidates and more groups fail.
/// (One thread, 200,000 uniform points over segments at the density of
/// the bench's, alternated calls, best of 8-12; k = 5 and radius 0.005,
/// ns a point with 16 → 32: 10,000 segments 242 → 226 and 457 → 441;
/// 100,000 301-320 → 288-311 and 487-516 → 470-496; 200,000 361 → 348
/// and 523 → 510; 400,000 405 → 415 and 549 → 553; 1 M 487 → 598 and
/// 609 → 690. 48 and 64 were no better than 32 where points are dense.)
fn list_group(points: usize, segments: usize) -> usize {
    if points >= segments {
        DENSE_GROUP
    } else {
        GROUP
    }
}

/// How many lists ahead the copy into input order asks for the one it
/// will copy (see [`prefetch_slice`]).
const AHEAD: usize = 8;

/// A run of points in curve order and its count of answers a point.
type RunOf<'a, const D: usize> = (&'a [[f64; D]], &'a mut [u32]);

/// At most this many points a search (positions along the curve are `u32`).
const MAX: usize = 1 << 31;

/// Where [`Index::k_nearest_in_place`]'s workers write: the room after a
/// `HitLists`' hits, each worker its own points' places.
#[derive(Clone, Copy)]
struct Room<T>(*mut T);

// SAFETY: the workers write disjoint places (each point's own), and the
// room outlives them (they are joined before it is used).
unsafe impl<T: Send> Send for Room<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Room<T> {}

impl<T> Room<T> {
    /// The place `i` of the room.
    ///
    /// # Safety
    /// `i` must lie within the room.
    unsafe fn at(self, i: usize) -> *mut T {
        // SAFETY: this function's contract.
        unsafe { self.0.add(i) }
    }
}
