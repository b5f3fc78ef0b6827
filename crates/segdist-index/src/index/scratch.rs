//! Per-thread working memory of the searches: the traversal stack, the
//! candidate list, and the batch search's deferred accurate evaluations
//! ([`Resolver`]).

use super::*;

/// Room on the stack of nodes to visit: at most `B` per level of a tree
/// of at most 2^32 segments (11 levels of 8), with room to spare.
pub(super) const STACK: usize = 16 * B;

/// Reusable buffers of one search.
pub(crate) struct Scratch {
    /// `(level, node, squared box distance)` still to visit; the live part
    /// is `..top`, so that pushes can be written without a branch.
    pub(super) stack: Box<[(u32, u32, f64); STACK]>,
    pub(super) top: usize,
    /// The path of a single query's descent (see `Index::descend`).
    pub(super) path: [([f64; B], u32, u32); super::single::PATH],
    /// `(lower bound, slot)` of segments that may be in the answer.
    pub(super) cands: Vec<(f64, u32)>,
    /// The smallest upper bounds seen, ascending (at most k); in a group
    /// search, the smallest scanned d² (see `kth_least`).
    pub(super) uppers: Vec<f64>,
    /// A group's points' candidates end to end (see
    /// [`Index::search_group`]), and where each point's end.
    pub(super) group: Vec<(f64, u32)>,
    pub(super) spans: Vec<usize>,
    /// Buffers of the batch evaluation (an [`Evals`] of the index's
    /// dimension; `Any` since one thread's scratch serves both).
    pub(super) evals: Option<Box<dyn std::any::Any>>,
    /// The form of the walk's lanes (AVX2 or the portable loops: see
    /// [`Index::traverse`]) and the instruction set of its evaluations:
    /// the best the CPU has unless a batch's options say otherwise.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(super) form: Form,
    pub(super) isa: segdist::batch::Isa,
}

/// A scratch's evaluation buffers for dimension `D` (see `Scratch::evals`).
#[inline]
pub(super) fn evals_of<const D: usize>(
    evals: &mut Option<Box<dyn std::any::Any>>,
    isa: segdist::batch::Isa,
) -> &mut Evals<D> {
    if !evals.as_ref().is_some_and(|e| e.is::<Evals<D>>()) {
        *evals = Some(Box::new(Evals::<D>::default()));
    }
    let ev: &mut Evals<D> = evals.as_mut().and_then(|e| e.downcast_mut()).expect("set just above");
    ev.isa = isa;
    ev
}

/// Candidates in the batch kernel's layout, and its outputs.
#[derive(Default)]
pub(super) struct Evals<const D: usize> {
    pub(super) a: Vec<[f64; D]>,
    pub(super) b: Vec<[f64; D]>,
    pub(super) p: Vec<[f64; D]>,
    pub(super) out: segdist::batch::Projections<f64, D>,
    /// The ranking of a k-nearest or radius search: `(distance, id, j)`
    /// of the evaluated pairs, the distance by its bits (distances are
    /// never negative nor NaN, so the bits order as the numbers: integer
    /// compares), then the answers in order, kept between queries (no
    /// allocation per query).
    pub(super) ranks: Vec<(u64, u64, u32)>,
    pub(super) found: Vec<Found<D>>,
    /// The instruction set of the evaluations (one the CPU has, or `Auto`).
    pub(super) isa: segdist::batch::Isa,
}

impl<const D: usize> Evals<D> {
    /// The accurate projection of `p` onto every candidate, into `out`.
    #[inline]
    pub(super) fn project(&mut self, index: &Index<D>, p: &[f64; D], cands: &[(f64, u32)]) {
        self.clear();
        for &(_, slot) in cands {
            self.push(index, p, slot);
        }
        self.run();
    }

    #[inline]
    pub(super) fn clear(&mut self) {
        self.a.clear();
        self.b.clear();
        self.p.clear();
    }

    /// One more pair to project: `p` onto the segment in `slot`.
    #[inline]
    pub(super) fn push(&mut self, index: &Index<D>, p: &[f64; D], slot: u32) {
        let (a, b) = index.ends(slot as usize);
        self.push_pair(a, b, p);
    }

    /// One more pair to project: `p` onto the segment from `a` to `b`.
    #[inline]
    pub(super) fn push_pair(&mut self, a: [f64; D], b: [f64; D], p: &[f64; D]) {
        self.a.push(a);
        self.b.push(b);
        self.p.push(*p);
    }

    /// The accurate projection of every pair pushed, into `out`.
    pub(super) fn run(&mut self) {
        let n = self.p.len();
        let r = &mut self.out;
        r.distance.resize(n, 0.0);
        r.distance_squared.resize(n, 0.0);
        r.t.resize(n, 0.0);
        r.point.resize(n, [0.0; D]);
        let out = segdist::batch::Outputs {
            distance: Some(&mut r.distance[..n]),
            distance_squared: Some(&mut r.distance_squared[..n]),
            t: Some(&mut r.t[..n]),
            point: Some(&mut r.point[..n]),
            region: None,
        };
        let opts = segdist::batch::Options { threads: Some(1), isa: self.isa, ..Default::default() };
        // Same lengths, one thread, an instruction set the CPU has (see
        // `kernel_isa`): nothing here can make the call fail.
        segdist::batch::pairs(&self.a[..], &self.b[..], &self.p[..], out, &opts).expect("a valid batch");
    }

    /// The `j`-th projection of the last run.
    #[inline]
    pub(super) fn get(&self, j: usize) -> Proj<D> {
        let r = &self.out;
        Proj { point: r.point[j], t: r.t[j], distance: r.distance[j], distance_squared: r.distance_squared[j] }
    }
}

/// The answers of a nearest batch, made in input order from each point's
/// segment (all the search keeps): [`RESOLVE`] points at a time go through
/// the batch kernel (the scalar kernel's bits at a fraction of its time:
/// one projection is a long chain of dependent operations, the batch
/// kernel runs several side by side), then each becomes a [`Found`].
#[derive(Default)]
pub(crate) struct Resolver<const D: usize> {
    pub(super) evals: Evals<D>,
}

impl<const D: usize> Resolver<D> {
    /// A resolver whose evaluations run in `isa` (see
    /// [`QueryOptions::isa`](crate::QueryOptions::isa)).
    pub(crate) fn for_isa(isa: segdist::batch::Isa) -> Self {
        let mut r = Resolver::default();
        r.evals.isa = kernel_isa(isa);
        r
    }
}

/// Points a [`Resolver`] evaluates at once: enough to keep the batch
/// kernel's lanes busy, few enough to stay in the first-level cache.
pub(super) const RESOLVE: usize = 128;

/// How far ahead the resolver asks for a segment.
pub(super) const AHEAD: usize = 64;

/// No segment: the search found nothing for the point (see [`Resolver`]).
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// What a [`Resolver`] reads: the points, the segment the search chose
/// for each (or [`NO_SLOT`]), the runner-up bounds (empty: none), the
/// distance limit and the caller's map.
pub(crate) struct Chosen<'a, const D: usize, M> {
    pub(crate) index: &'a Index<D>,
    pub(crate) points: &'a [[f64; D]],
    pub(crate) slots: &'a [u32],
    pub(crate) runner_up: &'a [f64],
    pub(crate) limit: f64,
    pub(crate) map: &'a M,
}

impl<const D: usize> Resolver<D> {
    /// The answers for points `range`, in order, handed to `put`: each
    /// point's segment's accurate projection, mapped, or `None` where there
    /// is none or it lies beyond the limit.
    pub(crate) fn resolve<R, M: Fn(Found<D>) -> R>(
        &mut self,
        c: &Chosen<'_, D, M>,
        range: std::ops::Range<usize>,
        mut put: impl FnMut(Option<R>),
    ) {
        let n = range.end.min(c.points.len());
        let mut i = range.start;
        while i < n {
            let end = (i + RESOLVE).min(n);
            self.evals.clear();
            for j in i..end {
                // A segment further on asked for now: in input order they
                // lie anywhere in the index.
                if let Some(&ahead) = c.slots.get(j + AHEAD) {
                    c.index.prefetch_segment(ahead);
                }
                if let Some(s) = c.index.segs.get(c.slots[j] as usize) {
                    self.evals.push_pair(s.a, s.b, &c.points[j]);
                }
            }
            self.evals.run();
            let mut k = 0;
            for j in i..end {
                let slot = c.slots[j];
                let Some(s) = c.index.segs.get(slot as usize) else {
                    put(None);
                    continue;
                };
                let runner_up = c.runner_up.get(j).copied().unwrap_or(0.0);
                let f = Found { slot, id: s.id(), proj: self.evals.get(k), runner_up };
                k += 1;
                put((f.proj.distance <= c.limit).then(|| (c.map)(f)));
            }
            i = end;
        }
    }
}

/// A group search's answer for one query (see
/// [`Index::nearest_in_group`]).
pub(crate) enum Pick<const D: usize> {
    /// The answer (`None`: nothing within the limit).
    Done(Option<Found<D>>),
    /// The one candidate left: the answer if its accurate distance is
    /// within the limit; not evaluated yet (see [`Resolver`]).
    Only { slot: u32, runner_up: f64 },
    /// The group's candidates may not hold the answer (their reach was a
    /// guess, [`Group::trust_within`]): search down the tree.
    Alone,
}

thread_local! {
    /// The buffers of single-point queries, kept between calls on a thread.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch buffers (fresh ones if they are in
/// use further up the stack).
#[inline]
pub(super) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut Scratch::default()),
    })
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            stack: Box::new([(0, 0, 0.0); STACK]),
            top: 0,
            path: [([0.0; B], 0, 0); super::single::PATH],
            cands: Vec::new(),
            uppers: Vec::new(),
            group: Vec::new(),
            spans: Vec::new(),
            evals: None,
            form: best_form(),
            isa: segdist::batch::Isa::Auto,
        }
    }
}

impl Scratch {
    /// Fresh buffers for a batch asking for `isa` (see
    /// [`QueryOptions::isa`](crate::QueryOptions::isa)).
    pub(crate) fn for_isa(isa: segdist::batch::Isa) -> Self {
        Scratch { form: form_of(isa), isa: kernel_isa(isa), ..Scratch::default() }
    }
}
