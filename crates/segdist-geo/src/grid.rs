//! A grid for many k-nearest queries of one radius: the answers of
//! [`GeoIndex::k_nearest_within`] for that radius, bit for bit, without
//! the index's descent.
//!
//! The segments' chords (Earth-centred, as the index keeps them) are
//! projected onto the plane tangent to the Earth at the network's middle.
//! A projection onto a plane shortens no distance more than it is, so a
//! chord within `r` of a point (in 3D) projects within `r` of the point's
//! projection: each cell of a grid over that plane lists every chord whose
//! projected box comes within the radius's reach of the cell, and no chord
//! a query needs is missed, however far the network reaches round the
//! Earth (far from the middle, the projection only lengthens the lists).
//!
//! A query bounds each listed chord's distance with the fast 3D kernel
//! and its error bound, then walks them by that lower bound as the index
//! walks its chords by their exact distance: each segment is evaluated
//! (the geodesic kernel) until the next bound is past the reach of the
//! k-th distance found. Every segment the index's walk evaluates and
//! could keep, this walk evaluates too, and both rank by `(distance, id)`:
//! the same answers (`tests/grid.rs`). For map matching, which asks this
//! of every fix: the index's search had been a third of a lon/lat match.

use segdist::Segment;

use crate::index::{keep, reach};
use crate::{GeoHit, GeoIndex, GeoPoint};

/// At most this many list entries per segment (on average), as the
/// planar matcher's grid.
const BUDGET: usize = 64;

/// At most this many cells per segment.
const CELLS: usize = 16;

/// Relative allowance for the rounding of projected coordinates.
const ROUNDING: f64 = 1e-9;

/// One segment: its ends in lon/lat and Earth-centred, its ids.
#[derive(Clone, Copy)]
struct Chord {
    a: [f64; 2],
    b: [f64; 2],
    xa: [f64; 3],
    xb: [f64; 3],
    /// Its box in the plane: a chord within `r` of a point projects
    /// within `r` of the point's projection, so its box does too.
    lo: [f64; 2],
    hi: [f64; 2],
    feature: u32,
    part: u32,
    segment: u32,
}

// The size the docs below give.
const _: () = assert!(std::mem::size_of::<Chord>() == 128);

/// The k nearest segments within one radius, fast, for many queries: see
/// the module docs. Made by [`GeoIndex::grid`].
///
/// Memory: 128 bytes a segment (its ends, lon/lat and Earth-centred, its
/// box and ids) and 4 bytes a list entry (a segment is listed in every
/// cell its box comes within the radius of: with cells half the radius
/// wide, some 20 to 40 for street-sized segments; at most 64 a segment on
/// average, and 16 cells a segment, else the cells widen).
///
/// ```
/// let index = segdist_geo::GeoIndex::from_polylines(&[
///     vec![[24.94, 60.17], [24.941, 60.17]],
///     vec![[24.94, 60.1702], [24.941, 60.1702]],
/// ])?;
/// let grid = index.grid(50.0).expect("a small network");
/// let p = [24.9405, 60.1701];
/// let mut hits = Vec::new();
/// grid.k_nearest_within(p, 2, &mut hits);
/// assert_eq!(hits, index.k_nearest_within(p, 2, 50.0));
/// assert_eq!(hits.len(), 2);
/// # Ok::<(), segdist_geo::GeoBuildError>(())
/// ```
pub struct GeoGrid {
    radius: f64,
    /// The index's reach for a bound (its largest sagitta).
    sag: f64,
    /// The tangent plane: a point of it and two directions in it.
    origin: [f64; 3],
    east: [f64; 3],
    north: [f64; 3],
    /// The grid's corner in the plane, its cells' width and number.
    corner: [f64; 2],
    cell: f64,
    nx: usize,
    ny: usize,
    /// Cell `x + y·nx` lists `items[start[c]..start[c + 1]]`.
    start: Vec<u32>,
    items: Vec<u32>,
    chords: Vec<Chord>,
}

impl GeoIndex {
    /// A grid answering [`k_nearest_within`](Self::k_nearest_within) for
    /// `radius` (metres), for many queries of that one radius; `None` for
    /// an empty index (or one of 2^32 segments or more) or a radius not
    /// finite and positive. Cells start half the radius wide and widen
    /// until the lists hold at most 64 entries a segment on average and
    /// the cells number at most 16 a segment (a network much wider than
    /// its density gets long lists: correct, slower).
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[24.94, 60.17], [24.941, 60.17]]])?;
    /// assert!(index.grid(50.0).is_some());
    /// assert!(index.grid(0.0).is_none());
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn grid(&self, radius: f64) -> Option<GeoGrid> {
        GeoGrid::new(self, radius)
    }
}

/// The point `x` in the plane: its offsets from `origin` along `east` and
/// `north`.
fn plane(x: &[f64; 3], origin: &[f64; 3], east: &[f64; 3], north: &[f64; 3]) -> [f64; 2] {
    let d = [x[0] - origin[0], x[1] - origin[1], x[2] - origin[2]];
    [d[0] * east[0] + d[1] * east[1] + d[2] * east[2], d[0] * north[0] + d[1] * north[1] + d[2] * north[2]]
}

impl GeoGrid {
    fn new(index: &GeoIndex, radius: f64) -> Option<GeoGrid> {
        if !(radius.is_finite() && radius > 0.0) {
            return None;
        }
        let mut chords: Vec<Chord> = index
            .segments()
            .map(|(feature, part, segment, v)| Chord {
                a: index.vertices[v],
                b: index.vertices[v + 1],
                xa: index.vertices_ecef[v],
                xb: index.vertices_ecef[v + 1],
                // Set below, once the plane is known.
                lo: [0.0; 2],
                hi: [0.0; 2],
                feature: feature as u32,
                part: part as u32,
                segment: segment as u32,
            })
            .collect();
        if chords.is_empty() || chords.len() >= u32::MAX as usize {
            return None;
        }
        // The plane at the middle of the vertices' Earth-centred box.
        let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
        for x in &index.vertices_ecef {
            for k in 0..3 {
                lo[k] = lo[k].min(x[k]);
                hi[k] = hi[k].max(x[k]);
            }
        }
        let mid = [(lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0, (lo[2] + hi[2]) / 2.0];
        let n = mid[0].hypot(mid[1]).hypot(mid[2]);
        let up = if n > 0.0 { [mid[0] / n, mid[1] / n, mid[2] / n] } else { [0.0, 0.0, 1.0] };
        // East and north from the up direction: any two orthonormal
        // directions across it would do (the projection onto them then
        // shortens every distance; their rounding is in the allowance).
        let h = up[0].hypot(up[1]);
        let east = if h > 1e-9 { [-up[1] / h, up[0] / h, 0.0] } else { [0.0, 1.0, 0.0] };
        let north =
            [up[1] * east[2] - up[2] * east[1], up[2] * east[0] - up[0] * east[2], up[0] * east[1] - up[1] * east[0]];
        let origin = mid;
        let boxes: Vec<([f64; 2], [f64; 2])> = chords
            .iter()
            .map(|c| {
                let (pa, pb) = (plane(&c.xa, &origin, &east, &north), plane(&c.xb, &origin, &east, &north));
                ([pa[0].min(pb[0]), pa[1].min(pb[1])], [pa[0].max(pb[0]), pa[1].max(pb[1])])
            })
            .collect();
        for (c, (l, h)) in chords.iter_mut().zip(&boxes) {
            (c.lo, c.hi) = (*l, *h);
        }
        let (mut blo, mut bhi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for (l, h) in &boxes {
            for k in 0..2 {
                blo[k] = blo[k].min(l[k]);
                bhi[k] = bhi[k].max(h[k]);
            }
        }
        // Listed when within `reach` of a cell, box to box: the chord's
        // reach for the radius, the rounding of the projection (coordinates
        // of some 6.4e6 m) and of the cell a query falls in.
        let reach = index.reach(radius) * (1.0 + ROUNDING) + crate::A * 2.0 * ROUNDING;
        let corner = [blo[0] - reach, blo[1] - reach];
        let extent = [bhi[0] + reach - corner[0], bhi[1] + reach - corner[1]];
        // Entries and cells (4 bytes each) within budgets per segment: a
        // wide, sparse network gets wider cells, not gigabytes of them.
        // (Lists are indexed by `u32`.)
        let budget = (BUDGET * chords.len() + (1 << 16)).min(u32::MAX as usize);
        let cells = (CELLS * chords.len() + (1 << 16)).min(u32::MAX as usize - 1);
        let mut cell = reach / 2.0;
        loop {
            let n = [(extent[0] / cell).floor() + 1.0, (extent[1] / cell).floor() + 1.0];
            if n[0] * n[1] > cells as f64 {
                cell *= 2.0;
                continue;
            }
            let (nx, ny) = (n[0] as usize, n[1] as usize);
            let range = |(l, h): &([f64; 2], [f64; 2])| {
                let r = |k: usize, n: usize| {
                    let a = ((l[k] - reach - corner[k]) / cell).floor().max(0.0) as usize;
                    let b = ((h[k] + reach - corner[k]) / cell).floor().max(0.0) as usize;
                    (a.min(n - 1), b.min(n - 1))
                };
                (r(0, nx), r(1, ny))
            };
            // Each cell's count, then (if within budget) where its list starts.
            let mut start = vec![0u32; nx * ny + 1];
            let mut total = 0usize;
            for b in &boxes {
                let ((x0, x1), (y0, y1)) = range(b);
                total += (x1 - x0 + 1) * (y1 - y0 + 1);
                if total > budget {
                    break;
                }
                for y in y0..=y1 {
                    for x in x0..=x1 {
                        start[y * nx + x + 1] += 1;
                    }
                }
            }
            if total > budget {
                if cell > extent[0].max(extent[1]) {
                    return None;
                }
                cell *= 2.0;
                continue;
            }
            for c in 0..nx * ny {
                start[c + 1] += start[c];
            }
            let mut fill = start.clone();
            let mut items = vec![0u32; start[nx * ny] as usize];
            for (i, b) in boxes.iter().enumerate() {
                let ((x0, x1), (y0, y1)) = range(b);
                for y in y0..=y1 {
                    for x in x0..=x1 {
                        let c = y * nx + x;
                        items[fill[c] as usize] = i as u32;
                        fill[c] += 1;
                    }
                }
            }
            let sag = index.sag;
            return Some(GeoGrid { radius, sag, origin, east, north, corner, cell, nx, ny, start, items, chords });
        }
    }

    /// The radius the grid answers for (metres).
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[0.0, 0.0], [0.001, 0.0]]])?;
    /// assert_eq!(index.grid(30.0).unwrap().radius(), 30.0);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// The cell `p` falls in, for asking for its memory ahead of its
    /// query ([`prefetch_list`](Self::prefetch_list), then
    /// [`prefetch_chords`](Self::prefetch_chords)); `None` for a point off
    /// the grid (beyond the radius of every segment) or not lon/lat.
    ///
    /// A query reads its cell's list, then the segments it lists, each a
    /// cache miss in a large network when the queries move on (a map
    /// matcher's fixes at 5 s apart are some 70 m apart, in other cells):
    /// asked for two and one queries ahead, the misses overlap the work.
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[0.0, 0.0], [0.001, 0.0]]])?;
    /// let grid = index.grid(30.0).unwrap();
    /// let cell = grid.cell([0.0005, 0.0001]).unwrap();
    /// grid.prefetch_list(cell); // two queries ahead
    /// grid.prefetch_chords(cell); // one query ahead
    /// assert!(grid.cell([1.0, 1.0]).is_none()); // far from the segment
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn cell(&self, p: [f64; 2]) -> Option<GridCell> {
        self.cell_of(&GeoPoint::new(p)?)
    }

    /// [`cell`](Self::cell) of a prepared point.
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[0.0, 0.0], [0.001, 0.0]]])?;
    /// let grid = index.grid(30.0).unwrap();
    /// let p = [0.0005, 0.0001];
    /// assert_eq!(grid.cell_of(&segdist_geo::GeoPoint::new(p).unwrap()), grid.cell(p));
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    #[must_use]
    pub fn cell_of(&self, p: &GeoPoint) -> Option<GridCell> {
        let at = plane(p.ecef(), &self.origin, &self.east, &self.north);
        self.cell_at(&at).map(|c| GridCell(c as u32))
    }

    /// Asks for the memory of `cell`'s list (a hint: nothing is read).
    pub fn prefetch_list(&self, cell: GridCell) {
        let c = cell.0 as usize;
        if let (Some(s), Some(e)) = (self.start.get(c), self.start.get(c + 1)) {
            prefetch(s);
            for i in (*s as usize..*e as usize).step_by(16) {
                prefetch(&self.items[i]);
            }
        }
    }

    /// Asks for the segments `cell` lists (reads the list, best asked for
    /// by [`prefetch_list`](Self::prefetch_list) a query before).
    pub fn prefetch_chords(&self, cell: GridCell) {
        let c = cell.0 as usize;
        if let (Some(&s), Some(&e)) = (self.start.get(c), self.start.get(c + 1)) {
            for &i in &self.items[s as usize..e as usize] {
                // Its box is in its second line, its ends span both.
                let ch = &self.chords[i as usize];
                prefetch(ch);
                prefetch(&ch.lo);
            }
        }
    }

    /// The cell of a point projected onto the plane, if on the grid.
    #[inline]
    fn cell_at(&self, at: &[f64; 2]) -> Option<usize> {
        let (fx, fy) = ((at[0] - self.corner[0]) / self.cell, (at[1] - self.corner[1]) / self.cell);
        (fx >= 0.0 && fy >= 0.0 && fx < self.nx as f64 && fy < self.ny as f64)
            .then(|| fy as usize * self.nx + fx as usize)
    }

    /// The index's reach (as `GeoIndex::reach`, from the same sagitta).
    fn reach(&self, bound: f64) -> f64 {
        reach(self.sag, bound)
    }

    /// Into `out` (cleared first): what
    /// [`GeoIndex::k_nearest_within`]`(p, k, self.radius())` answers, the
    /// `k` nearest segments within the radius, nearest first, ties by
    /// lowest id; none for `k == 0` or a point that is not lon/lat.
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[0.0, 0.0], [0.001, 0.0]]])?;
    /// let grid = index.grid(30.0).unwrap();
    /// let mut hits = Vec::new();
    /// grid.k_nearest_within([0.0005, 0.0001], 3, &mut hits); // 11 m away
    /// assert_eq!(hits.len(), 1);
    /// grid.k_nearest_within([0.0005, 0.001], 3, &mut hits); // 110 m away
    /// assert!(hits.is_empty());
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    pub fn k_nearest_within(&self, p: [f64; 2], k: usize, out: &mut Vec<GeoHit>) {
        match GeoPoint::new(p) {
            Some(p) => self.k_nearest_within_of(&p, k, out),
            None => out.clear(),
        }
    }

    /// [`k_nearest_within`](Self::k_nearest_within) of a prepared point.
    ///
    /// ```
    /// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[0.0, 0.0], [0.001, 0.0]]])?;
    /// let grid = index.grid(30.0).unwrap();
    /// let (mut hits, mut again) = (Vec::new(), Vec::new());
    /// let p = [0.0005, 0.0001];
    /// grid.k_nearest_within(p, 3, &mut hits);
    /// grid.k_nearest_within_of(&segdist_geo::GeoPoint::new(p).unwrap(), 3, &mut again);
    /// assert_eq!(hits, again);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    pub fn k_nearest_within_of(&self, point: &GeoPoint, k: usize, out: &mut Vec<GeoHit>) {
        self.search(point, k, None::<fn(usize, usize, usize) -> u32>, out);
    }

    /// [`k_nearest_within_of`](Self::k_nearest_within_of) less, where no
    /// more than `k` segments can be within the radius, each segment
    /// surely farther than one listed before it in the same group
    /// (`group(feature, part, segment)`: say, the piece of road between
    /// two junctions the segment lies on). Such a segment would come after
    /// that one, and with no more than `k` in all it moves no other out:
    /// what is left is the same list with those segments taken out, and
    /// what a caller keeping the nearest of each group keeps is the same.
    /// Their geodesics are not worked out (a map matcher wants one
    /// candidate a piece; a city block's line of two segments then costs
    /// one geodesic in most places, not two).
    ///
    /// ```
    /// // One line of two segments, a group; another line, a second group.
    /// let index = segdist_geo::GeoIndex::from_polylines(&[
    ///     vec![[0.0, 0.0], [0.0005, 0.0], [0.001, 0.0]],
    ///     vec![[0.0, 0.0002], [0.001, 0.0002]],
    /// ])?;
    /// let grid = index.grid(50.0).unwrap();
    /// let p = segdist_geo::GeoPoint::new([0.0002, 0.00005]).unwrap();
    /// let (mut all, mut grouped) = (Vec::new(), Vec::new());
    /// grid.k_nearest_within_of(&p, 8, &mut all);
    /// grid.k_nearest_within_of_grouped(&p, 8, |line, _, _| line as u32, &mut grouped);
    /// assert_eq!(all.len(), 3);
    /// // The first line's far segment is left out; the nearest of each line stay.
    /// assert_eq!(grouped, [all[0], all[1]]);
    /// # Ok::<(), segdist_geo::GeoBuildError>(())
    /// ```
    pub fn k_nearest_within_of_grouped(
        &self,
        point: &GeoPoint,
        k: usize,
        group: impl Fn(usize, usize, usize) -> u32,
        out: &mut Vec<GeoHit>,
    ) {
        self.search(point, k, Some(group), out);
    }

    /// The search of both: with `group`, leaving out what
    /// [`k_nearest_within_of_grouped`](Self::k_nearest_within_of_grouped)
    /// does.
    #[inline(always)]
    fn search(
        &self,
        point: &GeoPoint,
        k: usize,
        group: Option<impl Fn(usize, usize, usize) -> u32>,
        out: &mut Vec<GeoHit>,
    ) {
        out.clear();
        if k == 0 {
            return;
        }
        let (p, q) = (point.lonlat(), *point.ecef());
        let at = plane(&q, &self.origin, &self.east, &self.north);
        // Off the grid: farther than the reach from every chord.
        let Some(c) = self.cell_at(&at) else { return };
        let list = &self.items[self.start[c] as usize..self.start[c + 1] as usize];
        let mut cut = self.reach(self.radius);
        // The fast 3D kernel's error bound (16·u·(M + d)), doubled; `M`
        // about the Earth's radius and the point's.
        let m = q[0].abs().max(q[1].abs()).max(q[2].abs()).max(crate::A);
        SCRATCH.with(|s| {
            let mut keys = s.borrow_mut();
            keys.clear();
            // The boxes first: their distance in the plane, less the
            // projection's rounding, bounds the chord's from below.
            let slack = self.reach(self.radius) * ROUNDING + crate::A * 2.0 * ROUNDING;
            let box_cut = (cut + slack) * (cut + slack);
            for &i in list {
                let ch = &self.chords[i as usize];
                let dx = (ch.lo[0] - at[0]).max(at[0] - ch.hi[0]).max(0.0);
                let dy = (ch.lo[1] - at[1]).max(at[1] - ch.hi[1]).max(0.0);
                if dx * dx + dy * dy > box_cut {
                    continue;
                }
                let d = Segment::new(ch.xa, ch.xb).distance_fast(q);
                let lo = d - 16.0 * f64::EPSILON * (m + d);
                if lo <= cut {
                    // A lower bound of at least 0 orders as its bits do;
                    // its low 32 bits cleared (a lower bound still) leave
                    // room for the chord's number.
                    keys.push((lo.max(0.0).to_bits() & !u64::from(u32::MAX)) | u64::from(i));
                }
            }
            keys.sort_unstable();
            // With no more than `k` keys, nothing is ever pushed out.
            let group = group.filter(|_| keys.len() <= k);
            // The groups' measured segments: (group, distance); past the
            // first 16, nothing more is left out (a matcher's k is 16).
            let mut seen = [(0u32, 0.0f64); 16];
            let mut n_seen = 0;
            for &key in keys.iter() {
                let lo = f64::from_bits(key & !u64::from(u32::MAX));
                if lo > cut {
                    break;
                }
                let ch = &self.chords[(key as u32) as usize];
                let (feature, part, segment) = (ch.feature as usize, ch.part as usize, ch.segment as usize);
                let id = group.as_ref().map(|group| group(feature, part, segment));
                // Farther than its group's segment measured before (the
                // reach, as the cut: beyond it, surely farther).
                if let Some(id) = id
                    && seen[..n_seen].iter().any(|&(other, d)| other == id && lo > self.reach(d))
                {
                    continue;
                }
                let x = [&ch.xa, &ch.xb, &q];
                let Some(projection) = crate::ellipsoid::geodesic_from(ch.a, ch.b, p, Some(x)) else { continue };
                if let Some(id) = id
                    && n_seen < seen.len()
                {
                    seen[n_seen] = (id, projection.distance);
                    n_seen += 1;
                }
                if projection.distance > self.radius {
                    continue;
                }
                let g = GeoHit { feature, part, segment, projection };
                if let Some(kth) = keep(out, g, k) {
                    cut = cut.min(self.reach(kth));
                }
            }
        });
    }
}

/// A cell of a [`GeoGrid`], from [`GeoGrid::cell`]: what its prefetches
/// take.
///
/// ```
/// let index = segdist_geo::GeoIndex::from_polylines(&[vec![[0.0, 0.0], [0.001, 0.0]]])?;
/// let grid = index.grid(30.0).unwrap();
/// // Two points a metre apart: the same cell (cells are 15 m wide here).
/// assert_eq!(grid.cell([0.0005, 0.0001]), grid.cell([0.000509, 0.0001]));
/// # Ok::<(), segdist_geo::GeoBuildError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridCell(u32);

/// Asks for the cache line holding `x` (a hint: nothing where the CPU has
/// no such instruction).
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((x as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}
