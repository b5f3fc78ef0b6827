//! Batch answers written where the caller keeps them: [`Sink`] and
//! [`Index::nearest_many_to`].
//!
//! [`Index::nearest_many`] hands back a vector of [`Hit`]s, 72 bytes a 2D
//! point, which a caller holding columns (Python's arrays, Arrow's) then
//! copies out of: a second pass over fresh memory, about a tenth of a
//! batch's time. A sink takes each answer as it is made, on the search's
//! threads, into the caller's own buffers.

use rayon::join;

use crate::batch::{with_threads, QueryOptions, CHUNK};
use crate::index::{Chosen, Resolver};
use crate::{Hit, Index};

/// Where [`Index::nearest_many_to`] puts its answers: a run of consecutive
/// rows, one a point, which the batch splits between its workers
/// ([`split_at`](Sink::split_at)) and fills row by row
/// ([`put`](Sink::put)). Typically a struct of mutable slices, one a
/// column.
///
/// ```
/// use segdist_index::{Hit, Index, QueryOptions, Sink};
///
/// /// Two columns: the feature (-1: none) and the distance (NaN: none).
/// struct Columns<'a> {
///     feature: &'a mut [i64],
///     distance: &'a mut [f64],
/// }
///
/// impl Sink<2> for Columns<'_> {
///     fn len(&self) -> usize {
///         self.feature.len()
///     }
///     fn split_at(self, mid: usize) -> (Self, Self) {
///         let (f0, f1) = self.feature.split_at_mut(mid);
///         let (d0, d1) = self.distance.split_at_mut(mid);
///         (Columns { feature: f0, distance: d0 }, Columns { feature: f1, distance: d1 })
///     }
///     fn put(&mut self, i: usize, hit: Option<Hit<2>>) {
///         self.feature[i] = hit.map_or(-1, |h| h.feature as i64);
///         self.distance[i] = hit.map_or(f64::NAN, |h| h.distance);
///     }
/// }
///
/// let index = Index::<2>::from_segments(&[[[0.0, 0.0], [10.0, 0.0]], [[0.0, 4.0], [10.0, 4.0]]])?;
/// let points = [[1.0, 1.0], [2.0, 3.5], [f64::NAN, 0.0]];
/// let (mut feature, mut distance) = (vec![0; 3], vec![0.0; 3]);
/// index.nearest_many_to(&points, &QueryOptions::default(), Columns { feature: &mut feature, distance: &mut distance });
/// assert_eq!(feature, [0, 1, -1]);
/// assert_eq!(distance[..2], [1.0, 0.5]);
/// # Ok::<(), segdist_index::BuildError>(())
/// ```
pub trait Sink<const D: usize>: Send + Sized {
    /// The number of rows.
    fn len(&self) -> usize;

    /// Whether there are no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows `..mid` and rows `mid..`, as two sinks (`mid <= len`).
    fn split_at(self, mid: usize) -> (Self, Self);

    /// Row `i`'s answer (`None`: nothing within the limit, or a point with
    /// a NaN or infinite coordinate). Every row is put exactly once, in
    /// order (row 0 first) within each sink the batch fills without
    /// splitting it further.
    fn put(&mut self, i: usize, hit: Option<Hit<D>>);

    /// Called once after the last [`put`](Sink::put) into a sink the batch
    /// filled (not on the sinks it split): for sinks that hold rows back,
    /// to ask memory for what they need ahead of writing them. Does nothing
    /// unless implemented.
    fn flush(&mut self) {}
}

impl<const D: usize> Index<D> {
    /// The nearest segment to every point, each answer put into `sink`'s
    /// row of the same position as it is made, on the search's threads:
    /// the answers of [`nearest_many`](Self::nearest_many), bit for bit,
    /// without a vector of them in between (see [`Sink`] for an example).
    /// `sink` must have a row per point; rows beyond the points are left as
    /// they are, points beyond the rows are not searched.
    pub fn nearest_many_to<S: Sink<D>>(&self, points: &[[f64; D]], opts: &QueryOptions, sink: S) {
        let points = &points[..points.len().min(sink.len())];
        // Positions are held as u32: beyond that, batch by batch.
        const MAX: usize = 1 << 31;
        if points.len() > MAX {
            let (head, tail) = sink.split_at(MAX);
            self.nearest_many_to(&points[..MAX], opts, head);
            self.nearest_many_to(&points[MAX..], opts, tail);
            return;
        }
        if points.is_empty() {
            return;
        }
        let limit = opts.max_distance;
        with_threads(opts.threads, |par| {
            let (slots, runner_up) = self.chosen_slots(points, limit, false, opts.isa, par);
            let map = |f| self.hit(&f);
            let chosen = Chosen { index: self, points, slots: &slots, runner_up: &runner_up, limit, map: &map };
            fill(&chosen, 0, sink, opts.isa, par);
            crate::mem::give_back(slots);
        });
    }
}

/// Rows `from..` (as many as `sink` has) of `chosen`'s answers into
/// `sink`: halves on two workers down to [`CHUNK`] rows (with `par`).
fn fill<const D: usize, M: Fn(crate::index::Found<D>) -> Hit<D> + Sync, S: Sink<D>>(
    chosen: &Chosen<'_, D, M>,
    from: usize,
    mut sink: S,
    isa: crate::Isa,
    par: bool,
) {
    let n = sink.len();
    if par && n > CHUNK {
        // A cut on a multiple of CHUNK, as the search's own pieces.
        let mid = (n / 2).next_multiple_of(CHUNK).min(n);
        let (head, tail) = sink.split_at(mid);
        join(|| fill(chosen, from, head, isa, true), || fill(chosen, from + mid, tail, isa, true));
        return;
    }
    let mut i = 0;
    Resolver::for_isa(isa).resolve(chosen, from..from + n, |hit| {
        sink.put(i, hit);
        i += 1;
    });
    sink.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Whole answers, as `nearest_many` gives them.
    struct Rows<'a>(&'a mut [Option<Hit<2>>], &'a mut [u32]);

    impl Sink<2> for Rows<'_> {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn split_at(self, mid: usize) -> (Self, Self) {
            let (a0, a1) = self.0.split_at_mut(mid);
            let (b0, b1) = self.1.split_at_mut(mid);
            (Rows(a0, b0), Rows(a1, b1))
        }
        fn put(&mut self, i: usize, hit: Option<Hit<2>>) {
            self.0[i] = hit;
            self.1[i] += 1;
        }
    }

    #[test]
    fn a_sink_gets_the_answers_of_nearest_many_once_a_row() {
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let segs: Vec<[[f64; 2]; 2]> = (0..3000)
            .map(|_| {
                let a = [r.gen_range(0.0..1.0), r.gen_range(0.0..1.0)];
                [a, [a[0] + r.gen_range(-0.02..0.02), a[1] + r.gen_range(-0.02..0.02)]]
            })
            .collect();
        let index = Index::<2>::from_segments(&segs).unwrap();
        let mut points: Vec<[f64; 2]> = (0..20_000).map(|_| [r.gen_range(-0.1..1.1), r.gen_range(-0.1..1.1)]).collect();
        points[7] = [f64::NAN, 0.5];
        points[9000] = [0.5, f64::INFINITY];
        for threads in [1, 2, 3] {
            for max_distance in [f64::INFINITY, 0.01, 0.0] {
                let opts = QueryOptions { max_distance, threads, ..Default::default() };
                let want = index.nearest_many(&points, &opts);
                let (mut got, mut times) = (vec![None; points.len() + 5], vec![0u32; points.len() + 5]);
                index.nearest_many_to(&points, &opts, Rows(&mut got, &mut times));
                assert_eq!(got[..points.len()], want[..], "{threads} threads, limit {max_distance}");
                assert!(times[..points.len()].iter().all(|&t| t == 1), "each row once");
                assert!(times[points.len()..].iter().all(|&t| t == 0), "rows beyond the points untouched");
                // Fewer rows than points: only those points.
                let (mut got, mut times) = (vec![None; 1234], vec![0u32; 1234]);
                index.nearest_many_to(&points, &opts, Rows(&mut got, &mut times));
                assert_eq!(got[..], want[..1234]);
            }
        }
    }
}
