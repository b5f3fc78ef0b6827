//! Every node's short routes, searched once for the graph: a row per node
//! of the nodes within a reach and their route lengths (FMM's UBODT, cut
//! to the short routes of fixes 1–5 s apart). The matchers' threads share
//! it; a step whose routes it cannot answer (a longer bound with a target
//! beyond the reach) searches as before ([`Routes`](crate::route::Routes)).
//!
//! Why: a match's kept searches are a table filled where traces go, but the
//! first trace through a place pays for its searches, and each kept search
//! stops a little past its own targets; at 5 s between fixes a lon/lat
//! match on the bench's city spent about a third of its transitions'
//! time searching (0.45 searches a fix). Searched for every node up front,
//! on all cores, the same routes cost a 100,800-segment grid's 50,625
//! nodes about 0.03 s on 2 cores (its matcher made in 0.05–0.07 s where it
//! was 0.03 s; PERFORMANCE-NOTES.md, session W).

use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::graph::RoadGraph;
use crate::route::Dijkstra;

/// At most this many entries in a table (12 bytes each: 100 MiB, three
/// threads' kept searches); a graph whose rows would hold more has none,
/// and its matchers search. The bench's city (9,999 nodes) holds 0.22 M
/// at 350 m and 0.53 M at 530 m, the 100,800-segment grid 1.25 M, the
/// Helsinki roads 73,000 and 145,000; a network in units other than
/// metres, with the default penalty of 50 units, may reach its whole self
/// from a node.
pub(crate) const TABLE_ENTRIES: usize = 1 << 23;

/// A chunk of rows: each row's size, then their nodes and lengths.
type Rows = (Vec<u32>, Vec<u32>, Vec<f64>);

/// Every node's route lengths to the nodes within `reach` of it, each row
/// nearest first.
pub(crate) struct RouteTable {
    reach: f64,
    /// First entry of every node's row, then the number of entries.
    start: Vec<u32>,
    nodes: Vec<u32>,
    lengths: Vec<f64>,
}

impl RouteTable {
    /// The table of `g` within `reach`; `None` for a reach that is not
    /// positive and finite, or rows of more than `most` entries in all.
    pub(crate) fn new(g: &RoadGraph, reach: f64, most: usize) -> Option<RouteTable> {
        if !(reach.is_finite() && reach > 0.0) {
            return None;
        }
        let n = g.nodes();
        // Rows of 64 nodes spread over the graph first: a graph whose rows
        // would plainly be too many is turned down before it is searched.
        let mut d = Dijkstra::new(n);
        let sample: usize = (0..64.min(n))
            .map(|i| {
                d.run(g, (i * n / 64.min(n)) as u32, reach, None);
                d.reached().count()
            })
            .sum();
        if sample * n > most * 64.min(n).max(1) {
            return None;
        }
        let held = AtomicUsize::new(0);
        let sources: Vec<u32> = (0..n as u32).collect();
        // Rows by chunks of nodes, each thread with its own search.
        let chunks: Vec<Option<Rows>> = sources
            .par_chunks(256)
            .map_init(
                || Dijkstra::new(n),
                |d, chunk| {
                    let (mut sizes, mut nodes, mut lengths) = (Vec::with_capacity(chunk.len()), Vec::new(), Vec::new());
                    let mut row = Vec::new();
                    for &s in chunk {
                        if held.load(Ordering::Relaxed) > most {
                            return None;
                        }
                        // Every node it reaches is within the reach, its
                        // length final (a longer one is never put in).
                        d.run(g, s, reach, None);
                        // Nearest first: a lookup reads the row only as
                        // far as its bound.
                        row.clear();
                        row.extend(d.reached());
                        row.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
                        nodes.extend(row.iter().map(|e| e.0));
                        lengths.extend(row.iter().map(|e| e.1));
                        sizes.push(row.len() as u32);
                    }
                    (held.fetch_add(nodes.len(), Ordering::Relaxed) + nodes.len() <= most)
                        .then_some((sizes, nodes, lengths))
                },
            )
            .collect();
        let mut t = RouteTable { reach, start: Vec::with_capacity(n + 1), nodes: Vec::new(), lengths: Vec::new() };
        t.start.push(0);
        for chunk in chunks {
            let (sizes, nodes, lengths) = chunk?;
            for size in sizes {
                t.start.push(t.start.last().copied().unwrap_or(0) + size);
            }
            t.nodes.extend(nodes);
            t.lengths.extend(lengths);
        }
        Some(t)
    }

    /// How far every row reaches: a node not in a row is farther.
    #[inline]
    pub(crate) fn reach(&self) -> f64 {
        self.reach
    }

    /// The row of `source`: its nodes and their route lengths, nearest
    /// first.
    #[inline]
    pub(crate) fn row(&self, source: u32) -> (&[u32], &[f64]) {
        let (s, e) = (self.start[source as usize] as usize, self.start[source as usize + 1] as usize);
        (&self.nodes[s..e], &self.lengths[s..e])
    }

    /// Entries in all.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Asks for the cache lines of `source`'s row: with `entries`, its
    /// first entries (the row's place must already be near: the caller
    /// asked for it a while before), otherwise the row's place. A hint.
    #[inline]
    pub(crate) fn prefetch(&self, source: u32, entries: bool) {
        let s = source as usize;
        if !entries {
            if let Some(p) = self.start.get(s) {
                crate::prefetch(std::ptr::from_ref(p).cast());
            }
        } else if let (Some(&a), Some(&b)) = (self.start.get(s), self.start.get(s + 1)) {
            let (a, b) = (a as usize, (b as usize).min(a as usize + 32));
            for i in (a..b).step_by(16) {
                crate::prefetch(std::ptr::from_ref(&self.nodes[i]).cast());
            }
            for i in (a..b).step_by(8) {
                crate::prefetch(std::ptr::from_ref(&self.lengths[i]).cast());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::Routes;
    use rand::{Rng, SeedableRng};

    /// A table answers as a fresh search to the bound, at bounds within its
    /// reach and past it (then searching for a target beyond it), with
    /// one-way streets; a table of more entries than allowed is none.
    #[test]
    fn tables_answer_as_fresh_searches() {
        let g = crate::route::tests::lattice();
        let table = RouteTable::new(&g, 150.0, TABLE_ENTRIES).expect("a small table");
        // Every row holds its source, nearest first.
        for s in 0..g.nodes() as u32 {
            let (nodes, lengths) = table.row(s);
            assert_eq!((nodes[0], lengths[0]), (s, 0.0));
            assert!(lengths.windows(2).all(|w| w[0] <= w[1]) && lengths.iter().all(|&d| d <= 150.0));
        }
        assert!(RouteTable::new(&g, 150.0, table.len() - 1).is_none());
        assert!(RouteTable::new(&g, 0.0, TABLE_ENTRIES).is_none() && RouteTable::new(&g, f64::NAN, 1 << 20).is_none());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let nodes = g.nodes() as u32;
        let (mut tabled, mut fresh) = (Routes::new(g.nodes()), Routes::new(g.nodes()));
        let (mut a, mut f) = (Vec::new(), Vec::new());
        let (mut within, mut past) = (0, 0);
        for _ in 0..5000 {
            let source = rng.gen_range(0..nodes);
            let targets: Vec<u32> = (0..rng.gen_range(1..12)).map(|_| rng.gen_range(0..nodes)).collect();
            let bound = rng.gen_range(10.0..400.0);
            tabled.lengths(&g, source, bound, 100.0, true, Some(&table), targets.iter().copied(), &mut a);
            fresh.lengths(&g, source, bound, 100.0, false, None, targets.iter().copied(), &mut f);
            for (x, y) in a.iter().zip(&f) {
                assert!(x == y || (*x > bound && *y > bound), "{x} {y}, bound {bound}");
                within += usize::from(*y <= bound && *y <= 150.0);
                past += usize::from(*y <= bound && *y > 150.0);
            }
            assert_eq!(a.len(), targets.len());
        }
        assert!(within > 1000 && past > 1000, "{within} answered within the reach, {past} past it");
    }
}
