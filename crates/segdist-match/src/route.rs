//! Bounded shortest paths on the road graph: Dijkstra from one node, no
//! farther than a limit, with scratch reused from search to search (only the
//! nodes a search reached are reset), and [`Routes`], which keeps the last
//! searches' results: a trace's consecutive steps search from the same
//! nodes again and again (a car on a 30 m piece with a fix a second).
//!
//! A matcher first asks its graph's [`RouteTable`] (every node's routes up
//! to a reach, searched once: `table.rs`); what the table cannot answer (a
//! bound past its reach with a target beyond it: fixes far apart) is
//! searched here, and the search kept. Why both: kept per node by each
//! thread, searches become a table of their own, filled where traces go,
//! with no build and no memory for places no trace visits; but the first
//! trace through a place pays for its searches (a third of a lon/lat
//! match's transition time at 5 s between fixes), and searched up front
//! for every node, the short routes cost a 100,800-segment grid about
//! 0.03 s on 2 cores (PERFORMANCE-NOTES.md, "Map matching: the design's
//! measurements" and "a table of short routes").

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::graph::RoadGraph;
use crate::table::RouteTable;

/// A node and its tentative distance as one heap key, nearest first, then
/// by node. Distances are never negative, and the bits of a non-negative
/// `f64` order as its value does, so integers are compared in place of
/// `total_cmp`: the same order, so the same searches, bit for bit, in 6 %
/// fewer instructions a match at 5 s between fixes (PERFORMANCE-NOTES.md).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry(Reverse<(u64, u32)>);

impl Entry {
    #[inline]
    fn new(d: f64, n: u32) -> Self {
        debug_assert!(d >= 0.0);
        // `+ 0.0`: a -0.0 (never made here) would key as +0.0.
        Entry(Reverse(((d + 0.0).to_bits(), n)))
    }

    #[inline]
    fn get(self) -> (f64, u32) {
        let Reverse((bits, n)) = self.0;
        (f64::from_bits(bits), n)
    }
}

/// Reusable state of a bounded Dijkstra search.
pub(crate) struct Dijkstra {
    dist: Vec<f64>,
    /// The arc that reached each node (`u32::MAX` for the source).
    pred: Vec<u32>,
    touched: Vec<u32>,
    heap: BinaryHeap<Entry>,
    source: u32,
    /// Marks the targets of [`run_to`](Self::run_to) not yet settled.
    is_target: Vec<bool>,
}

impl Dijkstra {
    pub(crate) fn new(nodes: usize) -> Self {
        Dijkstra {
            dist: vec![f64::INFINITY; nodes],
            pred: vec![u32::MAX; nodes],
            touched: Vec::new(),
            heap: BinaryHeap::new(),
            source: u32::MAX,
            is_target: vec![false; nodes],
        }
    }

    /// Shortest distances from `source` to every node within `limit` (or
    /// until `target` is settled).
    pub(crate) fn run(&mut self, g: &RoadGraph, source: u32, limit: f64, target: Option<u32>) {
        self.fit(g);
        self.search(g, source, limit, target, |_| true, |_, _, _| {});
    }

    /// Shortest distances from `source` within `limit`, stopping once every
    /// one of `targets` is settled and `min_reach` is reached. Returns how
    /// far the distances are final: every node within it has its shortest
    /// distance (and a node not reached is farther); `limit` when the
    /// search ran out.
    pub(crate) fn run_to(&mut self, g: &RoadGraph, source: u32, limit: f64, targets: &[u32], min_reach: f64) -> f64 {
        self.fit(g);
        let mut left = 0usize;
        for &t in targets {
            if !self.is_target[t as usize] {
                self.is_target[t as usize] = true;
                left += 1;
            }
        }
        let mut reach = limit;
        let mut is_target = std::mem::take(&mut self.is_target);
        self.search(
            g,
            source,
            limit,
            None,
            |_| true,
            |n, d, limit| {
                if is_target[n as usize] {
                    is_target[n as usize] = false;
                    left -= 1;
                    if left == 0 {
                        // Nothing farther is needed: go on to `min_reach`,
                        // finish the nodes at the distance where it stops
                        // (ties), and stop.
                        let stop = d.max(min_reach).min(*limit);
                        *limit = stop;
                        reach = stop;
                    }
                }
            },
        );
        for &t in targets {
            is_target[t as usize] = false;
        }
        self.is_target = is_target;
        reach
    }

    /// Shortest distances from `source` to every node, over the arcs that
    /// `allow` lets through.
    pub(crate) fn run_by(&mut self, g: &RoadGraph, source: u32, allow: impl Fn(u32) -> bool) {
        self.fit(g);
        self.search(g, source, f64::INFINITY, None, allow, |_, _, _| {});
    }

    /// Scratch for a graph of `g`'s size.
    fn fit(&mut self, g: &RoadGraph) {
        if self.dist.len() < g.nodes() {
            *self = Dijkstra::new(g.nodes());
        }
    }

    /// A search within `limit` from `source` (until `target` is settled),
    /// over the arcs `allow` lets through; `settled` hears of each node as
    /// it is settled, and may lower the limit.
    fn search(
        &mut self,
        g: &RoadGraph,
        source: u32,
        mut limit: f64,
        target: Option<u32>,
        allow: impl Fn(u32) -> bool,
        mut settled: impl FnMut(u32, f64, &mut f64),
    ) {
        for &n in &self.touched {
            self.dist[n as usize] = f64::INFINITY;
            self.pred[n as usize] = u32::MAX;
        }
        self.touched.clear();
        self.heap.clear();
        self.source = source;
        self.dist[source as usize] = 0.0;
        self.touched.push(source);
        self.heap.push(Entry::new(0.0, source));
        while let Some(e) = self.heap.pop() {
            let (d, n) = e.get();
            if d > limit {
                break;
            }
            if d > self.dist[n as usize] {
                continue;
            }
            if Some(n) == target {
                break;
            }
            settled(n, d, &mut limit);
            let (s, e) = (g.out_start[n as usize] as usize, g.out_start[n as usize + 1] as usize);
            for o in &g.out[s..e] {
                let (a, h) = (o.arc, o.head as usize);
                let nd = d + o.len;
                if nd > limit || !allow(a) {
                    continue;
                }
                if nd < self.dist[h] {
                    if self.dist[h] == f64::INFINITY {
                        self.touched.push(h as u32);
                    }
                    self.dist[h] = nd;
                    self.pred[h] = a;
                    self.heap.push(Entry::new(nd, h as u32));
                }
            }
        }
    }

    /// The nodes the last run reached, with their distances.
    pub(crate) fn reached(&self) -> impl Iterator<Item = (u32, f64)> + '_ {
        self.touched.iter().map(|&n| (n, self.dist[n as usize]))
    }

    /// The distance to `node` found by the last [`run`](Self::run)
    /// (infinite when beyond its limit).
    #[inline]
    pub(crate) fn dist(&self, node: u32) -> f64 {
        self.dist[node as usize]
    }

    /// The arcs from the last run's source to `node`, in driving order,
    /// appended to `out`.
    pub(crate) fn arcs_to(&self, g: &RoadGraph, node: u32, out: &mut Vec<u32>) {
        let start = out.len();
        let mut n = node;
        while n != self.source && self.pred[n as usize] != u32::MAX {
            let a = self.pred[n as usize];
            out.push(a);
            n = g.tail(a);
        }
        out[start..].reverse();
    }
}

/// Searches kept: a direct-mapped table by source node, a slot per node
/// up to this many (a power of two). A thread matching many traces comes
/// back to the same nodes again and again: with a slot for each of the
/// Helsinki bench's 1,017 nodes instead of 64 slots in all, a match at 5 s
/// between fixes took 56 % fewer instructions (the same answers).
const KEPT_MAX: usize = 1 << 14;

/// At most this many (node, distance) entries kept per thread (16 bytes
/// each: 32 MiB); past it every kept search is let go and the slots fill
/// again. On the bench's 1,000 Helsinki traces a search reached 8 nodes
/// at 1 s between fixes, 38 at 5 s and 184 at 30 s (its bound is hundreds
/// of metres there), and the kept searches held 314,000 entries at most;
/// a large network has many more slots to fill.
const KEPT_ENTRIES: usize = 1 << 21;

/// One kept search: the nodes reached from `source`, with their distances,
/// final within `reach` (a node farther, or not reached, is farther than
/// `reach`).
#[derive(Default)]
struct Kept {
    source: u32,
    reach: f64,
    reached: Vec<(u32, f64)>,
}

/// Bounded route lengths from a node, answered from the searches kept when
/// one from the same node reached as far.
///
/// A kept search answers exactly for every target within its reach (the
/// distance up to which its answers are final: Dijkstra settles nodes in
/// the same order whatever its limit), and for every target when its reach
/// covers the bound asked for (a node it did not reach is beyond any route
/// the caller accepts). Searches stop once their targets are settled and
/// they have gone a little farther (see [`lengths`](Self::lengths)).
pub(crate) struct Routes {
    pub(crate) dijkstra: Dijkstra,
    /// The graph the kept searches are of (`RoadGraph::id`).
    graph: u64,
    kept: Vec<Kept>,
    /// Distances of one kept search, by node (infinite elsewhere).
    lookup: Vec<f64>,
    targets: Vec<u32>,
    /// Entries the kept searches hold (their capacity), and the most.
    held: usize,
    budget: usize,
}

impl Routes {
    pub(crate) fn new(nodes: usize) -> Self {
        Routes::with_slots(nodes, nodes.next_power_of_two().clamp(64, KEPT_MAX), KEPT_ENTRIES)
    }

    /// With `slots` kept searches (a power of two) holding at most `budget`
    /// entries in all.
    fn with_slots(nodes: usize, slots: usize, budget: usize) -> Self {
        debug_assert!(slots.is_power_of_two());
        Routes {
            dijkstra: Dijkstra::new(nodes),
            graph: 0,
            kept: (0..slots).map(|_| Kept { source: u32::MAX, ..Kept::default() }).collect(),
            lookup: vec![f64::INFINITY; nodes],
            targets: Vec::new(),
            held: 0,
            budget,
        }
    }

    /// Asks for the cache lines a lookup from `source` will read, ahead of
    /// it: with `reached`, the kept search's first entries (its slot must
    /// already be near: the caller asked for it a while before), otherwise
    /// the slot itself. A hint: nothing where the CPU has no such
    /// instruction, nothing for a slot of another source.
    ///
    /// Why: at 5 s between fixes each step's sources are 70 m on from the
    /// last, and a lookup's loads of its slot and of the search's entries
    /// missed the caches, one after the other (PERFORMANCE-NOTES.md, "Map
    /// matching").
    #[inline]
    pub(crate) fn prefetch(&self, source: u32, reached: bool) {
        if self.kept.is_empty() {
            return;
        }
        let k = &self.kept[source as usize & (self.kept.len() - 1)];
        if !reached {
            crate::prefetch(std::ptr::from_ref(k).cast());
        } else if k.source == source {
            // The first four lines: 16 entries, the nearest nodes'.
            let p = k.reached.as_ptr().cast::<u8>();
            let bytes = std::mem::size_of_val(&k.reached[..]);
            for off in (0..bytes.min(256)).step_by(64) {
                // In bounds: `off` < the entries' bytes.
                crate::prefetch(p.wrapping_add(off));
            }
        }
    }

    /// The route length from `source` to each of `targets` into `out`
    /// (cleared first), within `bound`: infinite for a target farther (or
    /// a length over the bound, which the caller rejects either way).
    /// Without `keep`, a fresh search to exactly `bound`, not kept.
    /// Otherwise the search runs a tenth past `bound` (so that the next,
    /// slightly longer step finds it kept; a quarter, with searches kept
    /// per node, took 0.7 % more instructions at 1 s, 2.3 % at 5 s and
    /// 5.6 % at 30 s, and twice the bound far more), but stops once the targets are
    /// settled and it has gone `min_reach` (it then serves the next steps'
    /// nearby targets): at 5 s between fixes the bound is hundreds of
    /// metres where the targets are tens.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lengths(
        &mut self,
        g: &RoadGraph,
        source: u32,
        bound: f64,
        min_reach: f64,
        keep: bool,
        table: Option<&RouteTable>,
        targets: impl Iterator<Item = u32> + Clone,
        out: &mut Vec<f64>,
    ) {
        if self.graph != g.id() || self.lookup.len() < g.nodes() {
            *self = Routes::new(g.nodes());
            self.graph = g.id();
        }
        out.clear();
        if let Some(t) = table {
            // A kept search of every node, to the table's reach, read as far
            // as the bound (a length past it is rejected as an infinite
            // one: routes add lengths that are not negative).
            let (nodes, lengths) = t.row(source);
            let nodes = &nodes[..lengths.partition_point(|&d| d <= bound)];
            let entries = nodes.iter().copied().zip(lengths.iter().copied());
            if answer(&mut self.lookup, entries, t.reach(), bound, targets.clone(), out) {
                return;
            }
        }
        if !keep {
            self.dijkstra.run(g, source, bound, None);
            out.extend(targets.map(|t| self.dijkstra.dist(t)));
            return;
        }
        // A power of two: the mask is the remainder.
        let slot = source as usize & (self.kept.len() - 1);
        let k = &mut self.kept[slot];
        if k.source == source
            && answer(&mut self.lookup, k.reached.iter().copied(), k.reach, bound, targets.clone(), out)
        {
            return;
        }
        self.targets.clear();
        self.targets.extend(targets);
        k.reach = self.dijkstra.run_to(g, source, bound * 1.1, &self.targets, min_reach);
        k.source = source;
        let had = k.reached.capacity();
        k.reached.clear();
        // Only the final distances: a node past the reach (reached, not
        // settled) answers as one not reached (beyond any bound the search
        // answers for; a farther bound searches again), and the lists are
        // about half as long to look up.
        let reach = k.reach;
        k.reached.extend(self.dijkstra.reached().filter(|&(_, d)| d <= reach));
        self.held = self.held + k.reached.capacity() - had;
        out.extend(self.targets.iter().map(|&t| self.dijkstra.dist(t)));
        if self.held > self.budget {
            for k in &mut self.kept {
                *k = Kept { source: u32::MAX, ..Kept::default() };
            }
            self.held = 0;
        }
    }
}

/// The lengths to `targets` into `out` from a search's `entries` (node,
/// length), final within `reach`, spread through `lookup` (infinite
/// everywhere, and again after); `true` when they answer for `bound`: each
/// target's length is known when within the reach, or beyond the bound
/// when the reach covers it. Otherwise `out` is left empty.
fn answer(
    lookup: &mut [f64],
    entries: impl Iterator<Item = (u32, f64)> + Clone,
    reach: f64,
    bound: f64,
    targets: impl Iterator<Item = u32>,
    out: &mut Vec<f64>,
) -> bool {
    for (n, d) in entries.clone() {
        lookup[n as usize] = d;
    }
    out.extend(targets.map(|t| lookup[t as usize]));
    for (n, _) in entries {
        lookup[n as usize] = f64::INFINITY;
    }
    if bound <= reach || out.iter().all(|&d| d <= reach) {
        return true;
    }
    out.clear();
    false
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{Direction, GraphBuilder, Space};
    use rand::{Rng, SeedableRng};

    /// A 20 × 20 lattice of 37 × 41 m blocks, some of its streets one-way:
    /// the route tests' graph.
    pub(crate) fn lattice() -> RoadGraph {
        let mut b = GraphBuilder::new(Space::Planar);
        let n = 20;
        let at = |i: usize, j: usize| [37.0 * i as f64 + 0.5 * (j % 4) as f64, 41.0 * j as f64];
        for j in 0..n {
            for i in 0..n - 1 {
                let dir = if (i + 3 * j) % 7 == 0 { Direction::Forward } else { Direction::Both };
                b.push_line(vec![vec![at(i, j), at(i + 1, j)]], dir);
                b.push_line(vec![vec![at(j, i), at(j, i + 1)]], Direction::Both);
            }
        }
        b.build().expect("finite")
    }

    /// Kept searches answer as a fresh search to the bound, whether every
    /// node has its own slot or four slots are shared by 400 nodes (kept
    /// searches evicted all the time), or the entries kept are let go every
    /// few searches, at bounds small and large.
    #[test]
    fn kept_searches_answer_as_fresh_ones() {
        let g = lattice();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let nodes = g.nodes() as u32;
        for (slots, budget) in [(4, KEPT_ENTRIES), (1 << 10, KEPT_ENTRIES), (1 << 10, 600)] {
            let mut kept = Routes::with_slots(g.nodes(), slots, budget);
            // Of this graph already (a new graph's first lookup starts afresh
            // with the default slots and budget).
            kept.graph = g.id();
            let mut cleared = 0;
            let mut fresh = Routes::new(g.nodes());
            let (mut a, mut f) = (Vec::new(), Vec::new());
            let mut source = 0;
            for q in 0..5000 {
                // Mostly nearby sources again, as a trace asks.
                if q % 3 == 0 {
                    source = rng.gen_range(0..nodes);
                }
                let targets: Vec<u32> = (0..rng.gen_range(1..12)).map(|_| rng.gen_range(0..nodes)).collect();
                let bound = rng.gen_range(10.0..400.0);
                let held = kept.held;
                kept.lengths(&g, source, bound, 100.0, true, None, targets.iter().copied(), &mut a);
                cleared += usize::from(kept.held < held);
                assert!(kept.held <= budget);
                fresh.lengths(&g, source, bound, 100.0, false, None, targets.iter().copied(), &mut f);
                // Within the bound the same lengths; beyond it, both beyond.
                for (x, y) in a.iter().zip(&f) {
                    assert!(x == y || (*x > bound && *y > bound), "{x} {y}, bound {bound}, {slots} slots");
                }
                assert_eq!(a.len(), targets.len());
            }
            assert_eq!(cleared > 0, budget < KEPT_ENTRIES, "{cleared} clearings, {slots} slots");
        }
    }

    /// The heap hands entries out nearest first, then by lowest node, as
    /// the `total_cmp` order it replaced: at 0, subnormal, tiny, huge and
    /// infinite distances, and ties.
    #[test]
    fn heap_keys_order_as_distances_then_nodes() {
        let ds = [0.0, 5e-324, 1e-300, 0.1, 0.1 + 1e-17, 1.0, 29.0, 1e300, f64::MAX, f64::INFINITY];
        let mut want = Vec::new();
        let mut heap = BinaryHeap::new();
        for (i, &d) in ds.iter().enumerate().rev() {
            for n in [7u32, 3, u32::MAX - 1, 0] {
                heap.push(Entry::new(d, n ^ i as u32));
                want.push((d, n ^ i as u32));
            }
        }
        want.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let got: Vec<(f64, u32)> = std::iter::from_fn(|| heap.pop().map(Entry::get)).collect();
        assert_eq!(got, want);
    }
}
