//! A fix's candidates from a grid of lists built for the matcher's radius.
//!
//! A fix's candidates are the index's `2k` nearest segments within the
//! radius (ties by lowest id), then at most one per piece
//! ([`RoadGraph::candidates`]). A matcher asks that of every fix with the
//! same radius, so for a planar graph it lays a grid over the roads once
//! and lists, per cell, every segment that may lie within the radius of a
//! point in the cell. A fix then bounds the few segments of its cell's list
//! (box first, then the fast kernel with its error bound) and ranks them by
//! the same `(distance, id)` rule, the index's accurate kernel deciding
//! wherever the bounds overlap and measuring the segments taken: the
//! index's answer, bit for bit
//! (`tests::the_grid_answers_as_the_index`), without its descent, which
//! cost most of a match when each fix asked it (a query within 50 m on
//! Helsinki's roads found 14 segments in about a microsecond).
//!
//! The lists hold every segment whose box is within the radius of the
//! cell's box (plus an allowance for rounding), so no segment is missed;
//! cells are half the radius wide (a list is then about 1.7× the segments
//! a fix needs), wider when the lists would grow past a budget; past that,
//! fixes ask the index. A geographic graph's matcher uses segdist-geo's
//! `GeoGrid` in the same way (`graph::Grid`).

use segdist::Segment;

use crate::graph::{Candidate, RoadGraph};

/// Relative allowance for rounding in the comparisons that decide who is
/// listed (each distance compared is within an ulp or so of the truth).
const ROUNDING: f64 = 1e-9;

/// At most this many list entries per segment of the graph (on average).
const BUDGET: usize = 64;

/// One segment of the graph, with its box (kept: a fix's scan tests the
/// boxes of some 35 listed segments, and `f64::min`/`max`, which handle
/// NaN, had taken a sixth of its instructions).
#[derive(Clone, Copy)]
struct Seg {
    a: [f64; 2],
    b: [f64; 2],
    lo: [f64; 2],
    hi: [f64; 2],
    line: u32,
    part: u32,
    segment: u32,
    /// Its first vertex (global) and its piece.
    v: u32,
    piece: u32,
}

impl Seg {
    fn new(a: [f64; 2], b: [f64; 2]) -> Self {
        let lo = [a[0].min(b[0]), a[1].min(b[1])];
        let hi = [a[0].max(b[0]), a[1].max(b[1])];
        Seg { a, b, lo, hi, line: 0, part: 0, segment: 0, v: 0, piece: 0 }
    }
}

/// The larger of `a` and `b`, for numbers that are never NaN (one `maxsd`,
/// where `f64::max` also checks for NaN).
#[inline]
fn larger(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// The grid of a planar graph for one radius.
pub(crate) struct CandidateGrid {
    radius: f64,
    origin: [f64; 2],
    cell: f64,
    nx: usize,
    ny: usize,
    /// Cell `x + y·nx`'s list is `items[start[c]..start[c + 1]]`.
    start: Vec<u32>,
    items: Vec<u32>,
    segs: Vec<Seg>,
    /// The largest coordinate magnitude of the network.
    scale: f64,
}

/// A segment near a fix: bounds on its distance from the fast kernel, and
/// once measured, the accurate kernel's distance, `t` and closest point.
#[derive(Clone, Copy)]
pub(crate) struct Near {
    lo: f64,
    hi: f64,
    i: u32,
    measured: bool,
    distance: f64,
    t: f64,
    point: [f64; 2],
}

/// A fix's scratch: the segments within the radius, as they are sifted;
/// their order as keys (a lower bound's high bits, its place in the
/// first); and a cluster's order (a distance's bits, the segment's number,
/// the place).
pub(crate) type Ranked = (Vec<Near>, (Vec<u64>, Vec<u128>));

impl CandidateGrid {
    /// The grid of `g` for `radius`, or `None` when `g` is geographic, empty,
    /// the radius is 0 or not finite, or the lists would pass the budget.
    pub(crate) fn new(g: &RoadGraph, radius: f64) -> Option<CandidateGrid> {
        g.planar_index()?;
        if !(radius.is_finite() && radius > 0.0) {
            return None;
        }
        let mut segs = Vec::new();
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for (line, part, segment, v) in g.segments() {
            let (a, b) = g.segment_ends(v);
            let piece = g.piece_of(line, part, segment);
            let (line, part, segment, v) = (line as u32, part as u32, segment as u32, v as u32);
            let s = Seg { line, part, segment, v, piece, ..Seg::new(a, b) };
            for k in 0..2 {
                lo[k] = lo[k].min(s.lo[k]);
                hi[k] = hi[k].max(s.hi[k]);
            }
            segs.push(s);
        }
        if segs.is_empty() || segs.len() >= u32::MAX as usize {
            return None;
        }
        // Listed when within `reach` of a cell, box to box: the radius and
        // the rounding of the distances and of the cell a fix falls in.
        let scale = lo.iter().chain(&hi).fold(0.0f64, |m, c| m.max(c.abs()));
        if scale.max(radius) > 1e150 {
            // Where the fast kernel may overflow.
            return None;
        }
        let reach = radius * (1.0 + ROUNDING) + scale.max(radius) * ROUNDING;
        let origin = [lo[0] - reach, lo[1] - reach];
        let extent = [hi[0] + reach - origin[0], hi[1] + reach - origin[1]];
        // (Lists are indexed by `u32`.)
        let budget = (BUDGET * segs.len() + (1 << 16)).min(u32::MAX as usize);
        let mut cell = radius / 2.0;
        loop {
            let n = [(extent[0] / cell).floor() + 1.0, (extent[1] / cell).floor() + 1.0];
            if n[0] * n[1] > budget as f64 {
                cell *= 2.0;
                continue;
            }
            let (nx, ny) = (n[0] as usize, n[1] as usize);
            // The cells a segment is listed in: a range in each axis.
            let range = |s: &Seg| {
                let (l, h) = (s.lo, s.hi);
                let r = |k: usize, n: usize| {
                    let a = ((l[k] - reach - origin[k]) / cell).floor().max(0.0) as usize;
                    let b = ((h[k] + reach - origin[k]) / cell).floor().max(0.0) as usize;
                    (a.min(n - 1), b.min(n - 1))
                };
                (r(0, nx), r(1, ny))
            };
            let total: usize = segs
                .iter()
                .map(|s| {
                    let ((x0, x1), (y0, y1)) = range(s);
                    (x1 - x0 + 1) * (y1 - y0 + 1)
                })
                .sum();
            if total > budget {
                if cell > extent[0].max(extent[1]) {
                    return None;
                }
                cell *= 2.0;
                continue;
            }
            let mut start = vec![0u32; nx * ny + 1];
            for s in &segs {
                let ((x0, x1), (y0, y1)) = range(s);
                for y in y0..=y1 {
                    for x in x0..=x1 {
                        start[y * nx + x + 1] += 1;
                    }
                }
            }
            for c in 0..nx * ny {
                start[c + 1] += start[c];
            }
            let mut fill = start.clone();
            let mut items = vec![0u32; start[nx * ny] as usize];
            for (i, s) in segs.iter().enumerate() {
                let ((x0, x1), (y0, y1)) = range(s);
                for y in y0..=y1 {
                    for x in x0..=x1 {
                        let c = y * nx + x;
                        items[fill[c] as usize] = i as u32;
                        fill[c] += 1;
                    }
                }
            }
            return Some(CandidateGrid { radius, origin, cell, nx, ny, start, items, segs, scale });
        }
    }

    /// The cell `p` falls in (`None` off the grid: no candidates).
    #[inline]
    pub(crate) fn cell(&self, p: [f64; 2]) -> Option<u32> {
        let (fx, fy) = ((p[0] - self.origin[0]) / self.cell, (p[1] - self.origin[1]) / self.cell);
        (fx >= 0.0 && fy >= 0.0 && fx < self.nx as f64 && fy < self.ny as f64)
            .then(|| (fy as usize * self.nx + fx as usize) as u32)
    }

    /// Asks for cell `c`'s list (a hint: nothing is read).
    pub(crate) fn prefetch_list(&self, c: u32) {
        let c = c as usize;
        if let (Some(s), Some(&e)) = (self.start.get(c), self.start.get(c + 1)) {
            crate::prefetch((s as *const u32).cast());
            for i in (*s as usize..e as usize).step_by(16) {
                crate::prefetch((&raw const self.items[i]).cast());
            }
        }
    }

    /// Asks for the segments cell `c` lists (reads the list: best asked
    /// for a step before by [`prefetch_list`](Self::prefetch_list)).
    pub(crate) fn prefetch_segments(&self, c: u32) {
        let c = c as usize;
        if let (Some(&s), Some(&e)) = (self.start.get(c), self.start.get(c + 1)) {
            for &i in &self.items[s as usize..e as usize] {
                let seg = &self.segs[i as usize];
                // 88 bytes, over two or three lines: both ends.
                crate::prefetch((seg as *const Seg).cast());
                crate::prefetch((&raw const seg.piece).cast());
            }
        }
    }

    /// `p`'s candidates into `out`, as [`RoadGraph::candidates`] finds them
    /// with this grid's radius.
    pub(crate) fn candidates(
        &self,
        g: &RoadGraph,
        p: [f64; 2],
        k: usize,
        scratch: &mut Ranked,
        out: &mut Vec<Candidate>,
    ) {
        let (ranked, keys) = (&mut scratch.0, &mut scratch.1);
        out.clear();
        ranked.clear();
        if !(p[0].is_finite() && p[1].is_finite()) {
            return;
        }
        // Outside the grid: farther than the radius from every segment.
        let Some(c) = self.cell(p) else { return };
        let c = c as usize;
        let radius = self.radius;
        let r2 = radius * radius * (1.0 + ROUNDING);
        // The fast kernel's error bound (`12·u·(M + d)` in 2D, doubled):
        // `M`, the largest coordinate, is bounded by the network's and the
        // fix's. The floor covers underflow at tiny scales, as the index's
        // (2^-460: an underflowing `|b − a|²` or `d²` moves the result by
        // less than 2^-484 + 2^-536).
        let m = self.scale.max(p[0].abs()).max(p[1].abs());
        let (k_fast, floor) = (32.0 * f64::EPSILON / 2.0, 1e-138);
        for &i in &self.items[self.start[c] as usize..self.start[c + 1] as usize] {
            let s = &self.segs[i as usize];
            // The segment's box first: no nearer than the segment. (Finite
            // coordinates, a finite fix: no NaN.)
            let (l, h) = (s.lo, s.hi);
            let dx = larger(larger(l[0] - p[0], p[0] - h[0]), 0.0);
            let dy = larger(larger(l[1] - p[1], p[1] - h[1]), 0.0);
            if (dx * dx + dy * dy) * (1.0 - ROUNDING) > r2 {
                continue;
            }
            let d = Segment::new(s.a, s.b).distance_fast(p);
            let e = k_fast * (m + d) + floor;
            if d - e <= radius {
                let (distance, t, point) = (0.0, 0.0, [0.0; 2]);
                // No segment is nearer than 0: a lower bound of at least 0
                // orders as its bits do. Its low 32 bits are cleared (a
                // lower bound still, by a millionth at most) so that the
                // walk below sorts 64-bit keys.
                let lo = f64::from_bits((d - e).max(0.0).to_bits() & !u64::from(u32::MAX));
                ranked.push(Near { lo, hi: d + e, i, measured: false, distance, t, point });
            }
        }
        let want = 2 * k;
        // Past the `want`-th least upper bound, no segment can rank (a cut
        // worth its selection only when it saves many evaluations: cutting
        // past 2·want survivors took 0.7 % more instructions a match at 1 s
        // than past 4·want; never cutting, the same as 4·want).
        if ranked.len() > 4 * want {
            ranked.select_nth_unstable_by(want - 1, |x, y| x.hi.total_cmp(&y.hi));
            let cut = ranked[want - 1].hi;
            ranked.retain(|r| r.lo <= cut);
        }
        // The index ranks by (accurate distance, id): segments are numbered
        // in index order, so the number is the id's order. In order of the
        // lower bounds, a segment whose bounds meet no other's ranks where
        // they put it; only where bounds overlap (a cluster), or straddle
        // the radius, does the accurate kernel decide. Otherwise it measures
        // only the segments taken: 7.4 a fix where it measured 18.1 when it
        // ranked them all (150 simulated Helsinki traces at 1 s, callgrind
        // call counts; the same
        // answers, bit for bit: `tests::the_grid_answers_as_the_index`,
        // `tests::near_ties_at_large_coordinates_answer_as_the_index`).
        let measure = |r: &mut Near| {
            let s = &self.segs[r.i as usize];
            let pr = Segment::new(s.a, s.b).closest_point(p);
            (r.distance, r.t, r.point, r.measured) = (pr.distance, pr.t, pr.point, true);
        };
        // In order of the lower bounds (their high 32 bits, then the place);
        // a cluster's measured segments by (distance, id, place).
        let key = |bits: u64, r: &Near, at: usize| u128::from(bits) << 64 | u128::from(r.i) << 32 | at as u128;
        let (keys, cluster) = keys;
        keys.clear();
        keys.extend(ranked.iter().enumerate().map(|(at, r)| r.lo.to_bits() | at as u64));
        keys.sort_unstable();
        let (n, mut ranks, mut start) = (keys.len(), 0, 0);
        while start < n && ranks < want && out.len() < k {
            let mut end = start + 1;
            let mut hi = ranked[keys[start] as u32 as usize].hi;
            while end < n && ranked[keys[end] as u32 as usize].lo <= hi {
                hi = hi.max(ranked[keys[end] as u32 as usize].hi);
                end += 1;
            }
            cluster.clear();
            if end - start > 1 || hi > radius {
                for &kj in &keys[start..end] {
                    let at = kj as u32 as usize;
                    let r = &mut ranked[at];
                    measure(r);
                    cluster.push(key((r.distance + 0.0).to_bits(), r, at));
                }
                cluster.sort_unstable();
            } else {
                cluster.push(u128::from(keys[start] as u32));
            }
            for &kj in cluster.iter() {
                let r = &mut ranked[kj as u32 as usize];
                if r.measured && r.distance > radius {
                    continue; // not within the radius: not ranked
                }
                ranks += 1;
                if ranks > want || out.len() == k {
                    break;
                }
                let s = &self.segs[r.i as usize];
                // At most one per piece, its nearest segment (asked before
                // measuring it).
                if !RoadGraph::takes(out, k, s.piece) {
                    continue;
                }
                if !r.measured {
                    measure(r);
                }
                let (line, part, segment) = (s.line as usize, s.part as usize, s.segment as usize);
                let (distance, t, point) = (r.distance, r.t, r.point);
                let along = g.along_planar(s.v as usize, t);
                let c = Candidate { line, part, segment, t, point, distance, along, piece: s.piece, offset: 0.0 };
                g.push_candidate(out, k, c);
            }
            start = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, GraphBuilder, Space};
    use rand::{Rng, SeedableRng};

    /// Random streets, some with repeated vertices and zero-length parts
    /// of segments, some crossing.
    fn streets(seed: u64) -> RoadGraph {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut b = GraphBuilder::new(Space::Planar);
        for _ in 0..300 {
            let mut p = [rng.gen_range(0.0..2000.0), rng.gen_range(0.0..2000.0)];
            let mut part = vec![p];
            for _ in 0..rng.gen_range(1..6) {
                if rng.gen_bool(0.1) {
                    part.push(p); // a repeated vertex
                    continue;
                }
                p = [p[0] + rng.gen_range(-60.0..60.0), p[1] + rng.gen_range(-60.0..60.0)];
                part.push(p);
            }
            b.push_line(vec![part], Direction::Both);
        }
        // Some on a lattice, for exact ties.
        for i in 0..20 {
            let y = 1000.0 + 10.0 * f64::from(i);
            b.push_line(vec![vec![[900.0, y], [1100.0, y]]], Direction::Both);
        }
        b.build().expect("finite")
    }

    #[test]
    fn the_grid_answers_as_the_index() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for (seed, radius, k) in [(1, 50.0, 8), (2, 15.0, 3), (3, 200.0, 4), (4, 7.5, 1)] {
            let g = streets(seed);
            let grid = CandidateGrid::new(&g, radius).expect("planar");
            let (mut a, mut b, mut ranked) = (Vec::new(), Vec::new(), Default::default());
            for i in 0..20_000 {
                let p = if i % 10 == 0 {
                    // On the lattice's grid points and halfway: ties.
                    [900.0 + 5.0 * f64::from(rng.gen_range(0..40)), 1000.0 + 5.0 * f64::from(rng.gen_range(0..40))]
                } else {
                    [rng.gen_range(-300.0..2300.0), rng.gen_range(-300.0..2300.0)]
                };
                g.candidates(p, k, radius, &mut a);
                grid.candidates(&g, p, k, &mut ranked, &mut b);
                assert_eq!(a, b, "{p:?}, radius {radius}");
                // Off the grid, no candidates; on it, the cell's memory
                // asked for (hints: nothing may change, nothing may fail).
                match grid.cell(p) {
                    None => assert!(b.is_empty(), "{p:?}"),
                    Some(c) => {
                        grid.prefetch_list(c);
                        grid.prefetch_segments(c);
                    }
                }
            }
        }
    }

    /// Streets at scales from 1e-160 (where squares underflow and the fast
    /// kernel's bound rests on its floor) to 1e140: the index's answers.
    #[test]
    fn tiny_and_huge_scales_answer_as_the_index() {
        for scale in [1e-160, 1e-157, 1e-150, 1e-100, 1e100, 1e140] {
            let mut b = GraphBuilder::new(Space::Planar);
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
            for _ in 0..60 {
                let a = [rng.gen_range(0.0..100.0) * scale, rng.gen_range(0.0..100.0) * scale];
                let d = [rng.gen_range(-10.0..10.0) * scale, rng.gen_range(-10.0..10.0) * scale];
                b.push_line(vec![vec![a, [a[0] + d[0], a[1] + d[1]]]], Direction::Both);
            }
            let g = b.build().expect("finite");
            let radius = 15.0 * scale;
            let grid = CandidateGrid::new(&g, radius).expect("planar");
            let (mut a, mut out, mut ranked) = (Vec::new(), Vec::new(), Default::default());
            for _ in 0..2000 {
                let p = [rng.gen_range(-10.0..110.0) * scale, rng.gen_range(-10.0..110.0) * scale];
                g.candidates(p, 4, radius, &mut a);
                grid.candidates(&g, p, 4, &mut ranked, &mut out);
                assert_eq!(a, out, "{p:?} at scale {scale}");
            }
        }
    }

    /// Segments nanometres apart at UTM-like coordinates, where the fast
    /// kernel's bounds overlap and its order may differ from the accurate
    /// one: the grid ranks them as the index does.
    #[test]
    fn near_ties_at_large_coordinates_answer_as_the_index() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let o = [385_000.0, 6_672_000.0];
        let mut b = GraphBuilder::new(Space::Planar);
        for _ in 0..120 {
            // Nearly parallel, nearly on top of each other, random ends.
            let y = o[1] + 20.0 + rng.gen_range(-3e-8..3e-8);
            let x0 = o[0] + rng.gen_range(0.0..40.0);
            let tilt = rng.gen_range(-1e-9..1e-9);
            b.push_line(vec![vec![[x0, y], [x0 + rng.gen_range(1.0..30.0), y + tilt]]], Direction::Both);
        }
        let g = b.build().expect("finite");
        let grid = CandidateGrid::new(&g, 50.0).expect("planar");
        let (mut a, mut out, mut ranked) = (Vec::new(), Vec::new(), Default::default());
        for _ in 0..20_000 {
            let p = [o[0] + rng.gen_range(-5.0..75.0), o[1] + rng.gen_range(0.0..40.0)];
            g.candidates(p, 8, 50.0, &mut a);
            grid.candidates(&g, p, 8, &mut ranked, &mut out);
            assert_eq!(a, out, "{p:?}");
        }
    }

    #[test]
    fn a_fix_off_the_grid_or_not_finite_has_no_candidates() {
        let g = streets(5);
        let grid = CandidateGrid::new(&g, 50.0).expect("planar");
        let (mut out, mut ranked) = (vec![], Default::default());
        for p in [[-1e6, 0.0], [f64::NAN, 1.0], [f64::INFINITY, 0.0], [1e300, -1e300]] {
            grid.candidates(&g, p, 8, &mut ranked, &mut out);
            assert!(out.is_empty());
        }
    }

    #[test]
    fn no_grid_where_the_index_is_asked() {
        let g = streets(6);
        assert!(CandidateGrid::new(&g, 0.0).is_none());
        assert!(CandidateGrid::new(&g, f64::INFINITY).is_none());
        let geo = GraphBuilder::new(Space::Geographic);
        assert!(CandidateGrid::new(&geo.build().expect("empty"), 50.0).is_none());
        // A radius far past the network: every cell would list everything.
        assert!(
            CandidateGrid::new(&g, 1e9).is_some_and(|grid| grid.items.len() <= BUDGET * grid.segs.len() + (1 << 16))
        );
    }
}
