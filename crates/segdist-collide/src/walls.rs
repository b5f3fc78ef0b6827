//! The static level: [`WallSet`] (walls and a uniform grid over them) and
//! its builder. The grid is the broadphase: a query box gives every wall
//! whose cells it meets (a superset of the walls that can touch it; the
//! exact predicates decide).

use core::ops::Range;

use crate::point::{wide, Point};

/// One wall: the segment from `a` to `b`.
///
/// A two-sided wall blocks from both sides. A one-sided wall blocks only
/// circles whose centre is on its left (seen from `a` towards `b`) or on
/// its line, and lets a circle whose centre is strictly on its right pass
/// through, as a platform one can jump up through; a zero-length wall has
/// no sides and always blocks.
///
/// ```
/// use segdist_collide::WallSet;
///
/// let mut b = WallSet::builder();
/// b.push_one_sided_polyline(&[[0.0, 0.0], [10.0, 0.0]]);
/// let walls = b.build().unwrap();
/// assert!(walls.wall(0).one_sided);
/// assert_eq!(walls.wall(0).b, [10.0, 0.0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wall {
    /// The start vertex.
    pub a: [f64; 2],
    /// The end vertex.
    pub b: [f64; 2],
    /// Blocks only from the left of `a → b` (see above).
    pub one_sided: bool,
}

/// Why a [`WallSet`] could not be built.
///
/// ```
/// use segdist_collide::{BuildError, WallSet};
///
/// let mut b = WallSet::builder();
/// b.push_segment([0.0, 0.0], [1.0, 0.0]);
/// b.push_polyline(&[[0.0, 1.0], [f64::NAN, 2.0]]);
/// assert_eq!(b.build().unwrap_err(), BuildError::NonFinite { wall: 1, vertex: 1 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BuildError {
    /// A coordinate is NaN or infinite: the wall (its id, in push order)
    /// and which of its vertices (0 = `a`, 1 = `b`).
    NonFinite {
        /// The wall's id.
        wall: usize,
        /// 0 for `a`, 1 for `b`.
        vertex: usize,
    },
    /// A coordinate's magnitude is above `1e150`, where squared lengths
    /// would overflow the grid's arithmetic.
    TooLarge {
        /// The wall's id.
        wall: usize,
    },
    /// More than 2^28 − 1 (268,435,455) walls.
    TooMany,
    /// [`WallSetBuilder::cell_size`] was not positive and finite.
    BadCellSize,
}

impl core::fmt::Display for BuildError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            BuildError::NonFinite { wall, vertex } => {
                write!(f, "wall {wall}: vertex {vertex} has a NaN or infinite coordinate")
            }
            BuildError::TooLarge { wall } => write!(f, "wall {wall}: a coordinate is larger than 1e150"),
            BuildError::TooMany => write!(f, "more than {ID} walls"),
            BuildError::BadCellSize => write!(f, "the grid's cell size must be positive and finite"),
        }
    }
}

impl std::error::Error for BuildError {}

/// Collects walls, then [`build`](Self::build)s a [`WallSet`].
///
/// Every wall gets an id, its position in push order (from 0); the push
/// methods return the ids they gave.
///
/// ```
/// use segdist_collide::WallSet;
///
/// let mut b = WallSet::builder();
/// let floor = b.push_segment([0.0, 0.0], [10.0, 0.0]);
/// let room = b.push_polygon(&[[20.0, 0.0], [30.0, 0.0], [30.0, 10.0], [20.0, 10.0]]);
/// assert_eq!((floor, room), (0, 1..5));
/// assert_eq!(b.build().unwrap().len(), 5);
/// ```
#[derive(Clone, Debug, Default)]
pub struct WallSetBuilder {
    walls: Vec<Wall>,
    cell: Option<f64>,
}

impl WallSetBuilder {
    /// An empty builder (the same as [`WallSet::builder`]).
    ///
    /// ```
    /// assert!(segdist_collide::WallSetBuilder::new().build().unwrap().is_empty());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the grid's cell size (in the walls' units). By default it is the
    /// median wall length, raised where needed so that the grid has at most
    /// about four cells per wall; a size given here is raised only where
    /// the grid would have more than 256 cells per wall. Cells about as wide as one step of the
    /// largest agent (its diameter plus its motion) are fastest.
    ///
    /// ```
    /// let mut b = segdist_collide::WallSet::builder();
    /// b.cell_size(2.0).push_segment([0.0, 0.0], [10.0, 0.0]);
    /// assert_eq!(b.build().unwrap().cell_size(), 2.0);
    /// ```
    pub fn cell_size(&mut self, size: f64) -> &mut Self {
        self.cell = Some(size);
        self
    }

    /// Adds the two-sided wall `a → b` and returns its id. `a == b` makes a
    /// point obstacle (a pillar of radius zero).
    ///
    /// ```
    /// let mut b = segdist_collide::WallSet::builder();
    /// assert_eq!(b.push_segment([0.0f32, 0.0], [1.0, 0.0]), 0);
    /// ```
    pub fn push_segment<P: Point>(&mut self, a: P, b: P) -> usize {
        self.push(wide(a), wide(b), false)
    }

    /// Adds a two-sided wall along each edge of an open polyline and returns
    /// their ids. One vertex makes one point obstacle; none, no wall.
    ///
    /// ```
    /// let mut b = segdist_collide::WallSet::builder();
    /// assert_eq!(b.push_polyline(&[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]), 0..2);
    /// ```
    pub fn push_polyline<P: Point>(&mut self, vertices: &[P]) -> Range<usize> {
        self.chain(vertices, false, false)
    }

    /// Adds a two-sided wall along each edge of a closed ring (the last
    /// vertex joined to the first; a repeated first vertex at the end is
    /// ignored) and returns their ids.
    ///
    /// ```
    /// let mut b = segdist_collide::WallSet::builder();
    /// let square = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]];
    /// assert_eq!(b.push_polygon(&square), 0..4);
    /// ```
    pub fn push_polygon<P: Point>(&mut self, vertices: &[P]) -> Range<usize> {
        self.chain(vertices, true, false)
    }

    /// Adds a one-sided wall along each edge of an open polyline, blocking
    /// from the left of the direction of travel (see [`Wall`]), and returns
    /// their ids.
    ///
    /// ```
    /// use segdist_collide::WallSet;
    ///
    /// let mut b = WallSet::builder();
    /// b.push_one_sided_polyline(&[[0.0, 0.0], [10.0, 0.0]]); // blocks from above
    /// let walls = b.build().unwrap();
    /// assert!(walls.cast([5.0, 2.0], 0.5, [0.0, -4.0]).is_some()); // falls onto it
    /// assert!(walls.cast([5.0, -2.0], 0.5, [0.0, 4.0]).is_none()); // jumps through
    /// ```
    pub fn push_one_sided_polyline<P: Point>(&mut self, vertices: &[P]) -> Range<usize> {
        self.chain(vertices, false, true)
    }

    /// Adds a solid polygon: one-sided walls along its ring facing outwards,
    /// whatever the winding, so circles cannot enter it and one that starts
    /// inside can leave. Returns their ids.
    ///
    /// ```
    /// use segdist_collide::WallSet;
    ///
    /// let mut b = WallSet::builder();
    /// b.push_solid_polygon(&[[0.0, 0.0], [0.0, 4.0], [4.0, 4.0], [4.0, 0.0]]); // clockwise
    /// let walls = b.build().unwrap();
    /// assert!(walls.cast([-2.0, 2.0], 0.5, [3.0, 0.0]).is_some()); // stopped outside
    /// assert!(walls.cast([2.0, 2.0], 0.5, [5.0, 0.0]).is_none()); // gets out
    /// ```
    pub fn push_solid_polygon<P: Point>(&mut self, vertices: &[P]) -> Range<usize> {
        let mut v: Vec<[f64; 2]> = vertices.iter().map(|&p| wide(p)).collect();
        if v.len() > 1 && v.first() == v.last() {
            v.pop();
        }
        // Facing outwards means the interior on the right: clockwise.
        let area2: f64 = (0..v.len())
            .map(|i| {
                let (p, q) = (v[i], v[(i + 1) % v.len()]);
                p[0] * q[1] - q[0] * p[1]
            })
            .sum();
        if area2 > 0.0 {
            v.reverse();
        }
        self.chain(&v, true, true)
    }

    fn push(&mut self, a: [f64; 2], b: [f64; 2], one_sided: bool) -> usize {
        self.walls.push(Wall { a, b, one_sided });
        self.walls.len() - 1
    }

    fn chain<P: Point>(&mut self, vertices: &[P], closed: bool, one_sided: bool) -> Range<usize> {
        let start = self.walls.len();
        let mut v: Vec<[f64; 2]> = vertices.iter().map(|&p| wide(p)).collect();
        if closed && v.len() > 1 && v.first() == v.last() {
            v.pop();
        }
        match v.len() {
            0 => {}
            1 => {
                self.push(v[0], v[0], one_sided);
            }
            n => {
                for i in 0..n - 1 {
                    self.push(v[i], v[i + 1], one_sided);
                }
                if closed && n > 2 {
                    self.push(v[n - 1], v[0], one_sided);
                }
            }
        }
        start..self.walls.len()
    }

    /// Checks the walls and builds the set with its grid.
    ///
    /// # Errors
    ///
    /// [`BuildError`]: a NaN or infinite coordinate (naming the wall and the
    /// vertex), a coordinate above `1e150`, more than 2^28 − 1 walls, a
    /// cell size that is not positive and finite.
    ///
    /// ```
    /// let mut b = segdist_collide::WallSet::builder();
    /// b.push_segment([0.0, 0.0], [f64::INFINITY, 0.0]);
    /// assert!(b.build().is_err());
    /// ```
    pub fn build(self) -> Result<WallSet, BuildError> {
        if self.walls.len() > ID as usize {
            return Err(BuildError::TooMany);
        }
        for (i, w) in self.walls.iter().enumerate() {
            for (k, v) in [w.a, w.b].iter().enumerate() {
                if !v.iter().all(|x| x.is_finite()) {
                    return Err(BuildError::NonFinite { wall: i, vertex: k });
                }
                if v.iter().any(|x| x.abs() > 1e150) {
                    return Err(BuildError::TooLarge { wall: i });
                }
            }
        }
        if let Some(h) = self.cell
            && !(h.is_finite() && h > 0.0)
        {
            return Err(BuildError::BadCellSize);
        }
        let grid = Grid::new(&self.walls, self.cell);
        Ok(WallSet { walls: self.walls, grid })
    }
}

/// A static level: walls built once, answering overlap, push-out, swept
/// casts and move-and-slide for circles of any radius, `f32` or `f64`.
///
/// Built with [`WallSet::builder`]; the queries are in `query.rs`
/// ([`overlap`](Self::overlap), [`resolve`](Self::resolve),
/// [`cast`](Self::cast)) and `mover.rs`
/// ([`move_and_slide`](Self::move_and_slide),
/// [`move_and_slide_many`](Self::move_and_slide_many)).
///
/// ```
/// use segdist_collide::WallSet;
///
/// let mut b = WallSet::builder();
/// b.push_polygon(&[[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]]);
/// let room = b.build().unwrap();
/// assert_eq!(room.len(), 4);
/// assert_eq!(room.overlap([0.5, 5.0], 1.0).len(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct WallSet {
    pub(crate) walls: Vec<Wall>,
    pub(crate) grid: Grid,
}

impl WallSet {
    /// A builder for a new set.
    ///
    /// ```
    /// let mut b = segdist_collide::WallSet::builder();
    /// b.push_segment([0.0, 0.0], [1.0, 1.0]);
    /// let walls = b.build().unwrap();
    /// ```
    #[must_use]
    pub fn builder() -> WallSetBuilder {
        WallSetBuilder::new()
    }

    /// The number of walls.
    ///
    /// ```
    /// assert_eq!(segdist_collide::WallSet::builder().build().unwrap().len(), 0);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.walls.len()
    }

    /// `true` when there are no walls (every query then finds nothing).
    ///
    /// ```
    /// assert!(segdist_collide::WallSet::builder().build().unwrap().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.walls.is_empty()
    }

    /// The wall with id `id`.
    ///
    /// # Panics
    ///
    /// If `id >= self.len()`.
    ///
    /// ```
    /// let mut b = segdist_collide::WallSet::builder();
    /// b.push_segment([0.0, 0.0], [1.0, 1.0]);
    /// assert_eq!(b.build().unwrap().wall(0).a, [0.0, 0.0]);
    /// ```
    #[must_use]
    pub fn wall(&self, id: usize) -> Wall {
        self.walls[id]
    }

    /// Every wall, by id.
    ///
    /// ```
    /// let mut b = segdist_collide::WallSet::builder();
    /// b.push_polyline(&[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]);
    /// assert_eq!(b.build().unwrap().walls().len(), 2);
    /// ```
    #[must_use]
    pub fn walls(&self) -> &[Wall] {
        &self.walls
    }

    /// The grid's cell size.
    ///
    /// ```
    /// let mut b = segdist_collide::WallSet::builder();
    /// b.push_segment([0.0, 0.0], [3.0, 0.0]);
    /// assert_eq!(b.build().unwrap().cell_size(), 3.0); // the median wall length
    /// ```
    #[must_use]
    pub fn cell_size(&self) -> f64 {
        self.grid.h
    }

    /// Heap memory held, in bytes (walls and grid).
    ///
    /// ```
    /// let mut b = segdist_collide::WallSet::builder();
    /// b.push_segment([0.0, 0.0], [3.0, 0.0]);
    /// assert!(b.build().unwrap().memory_bytes() > 0);
    /// ```
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.walls.capacity() * core::mem::size_of::<Wall>()
            + (self.grid.start.capacity() + self.grid.items.capacity()) * 4
    }
}

/// The wall id in a grid entry; the bits above it say where the cell lies
/// in the wall's cover.
const ID: u32 = (1 << 28) - 1;
/// The cell is in the leftmost column of the wall's rectangle of cells.
const LEFT: u32 = 1 << 28;
/// The cell is in the bottom row of the wall's rectangle of cells.
const BOTTOM: u32 = 1 << 29;
/// The wall's cover is not a rectangle (a long diagonal wall): a query
/// removes its repeats by search (its entries carry `LEFT | BOTTOM` too, so
/// the flags never skip them).
const WALK: u32 = 1 << 30;

/// A grid entry: the wall's id and flags (`tag`), and its bounding box
/// rounded outwards to `f32`, so a query rejects most walls near it
/// without reading the walls themselves, scattered over the level (moves
/// about 12 % faster on a 100,000-wall maze than with ids alone).
#[derive(Clone, Copy, Debug)]
struct Entry {
    tag: u32,
    lo: [f32; 2],
    hi: [f32; 2],
}

/// `x` rounded down (`up = false`) or up to an `f32`.
fn f32_outward(x: f64, up: bool) -> f32 {
    let f = x as f32;
    if up && f64::from(f) < x {
        f.next_up()
    } else if !up && f64::from(f) > x {
        f.next_down()
    } else {
        f
    }
}

/// A uniform grid over the walls' bounding box, cells in compressed rows:
/// cell `c`'s entries are `items[start[c]..start[c + 1]]`. A wall covering
/// a rectangle of cells is reported by a query only in the lower-left cell
/// of that rectangle and the query's, which the flags tell without looking
/// further: no search for repeats.
#[derive(Clone, Debug)]
pub(crate) struct Grid {
    origin: [f64; 2],
    pub(crate) h: f64,
    inv_h: f64,
    n: [usize; 2],
    /// `n - 1` as `f64`: the last column and row.
    last: [f64; 2],
    start: Vec<u32>,
    items: Vec<Entry>,
}

impl Grid {
    fn new(walls: &[Wall], cell: Option<f64>) -> Grid {
        let mut lo = [f64::INFINITY; 2];
        let mut hi = [f64::NEG_INFINITY; 2];
        for w in walls {
            for v in [w.a, w.b] {
                for k in 0..2 {
                    lo[k] = lo[k].min(v[k]);
                    hi[k] = hi[k].max(v[k]);
                }
            }
        }
        if walls.is_empty() {
            lo = [0.0; 2];
            hi = [0.0; 2];
        }
        let ext = [hi[0] - lo[0], hi[1] - lo[1]];
        let max_cells = 4.0 * walls.len() as f64 + 64.0;
        let h = match cell {
            // A cell size of the caller's, raised where the grid would have
            // more than 64 cells per wall (memory), or more than 2^31 cells.
            Some(mut h) => {
                let cap = (64.0 * max_cells).min(2f64.powi(31));
                while (ext[0] / h + 2.0) * (ext[1] / h + 2.0) > cap {
                    h *= 1.25;
                }
                h
            }
            None => {
                let mut len: Vec<f64> = walls.iter().map(|w| (w.b[0] - w.a[0]).hypot(w.b[1] - w.a[1])).collect();
                len.sort_unstable_by(f64::total_cmp);
                let median = len.get(len.len() / 2).copied().unwrap_or(0.0);
                let floor = (ext[0].max(ext[1]) * 1e-9).max(1e-300);
                let mut h = median.max(floor).max((ext[0] * ext[1] / max_cells).sqrt());
                while (ext[0] / h + 2.0) * (ext[1] / h + 2.0) > max_cells {
                    h *= 1.25;
                }
                if h == 0.0 || !h.is_finite() {
                    1.0
                } else {
                    h
                }
            }
        };
        // Half a cell of border, so walls on round coordinates lie inside
        // cells rather than on their edges.
        let origin = [lo[0] - 0.5 * h, lo[1] - 0.5 * h];
        let n = [((ext[0] / h) as usize).saturating_add(2).max(1), ((ext[1] / h) as usize).saturating_add(2).max(1)];
        let last = [(n[0] - 1) as f64, (n[1] - 1) as f64];
        let mut g = Grid { origin, h, inv_h: 1.0 / h, n, last, start: Vec::new(), items: Vec::new() };
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for (i, w) in walls.iter().enumerate() {
            g.rasterize(w, |cell, flags| pairs.push((cell as u32, i as u32 | flags)));
        }
        // Counting sort by cell, walls in id order within each.
        let cells = n[0] * n[1];
        let mut start = vec![0u32; cells + 1];
        for &(c, _) in &pairs {
            start[c as usize + 1] += 1;
        }
        for c in 0..cells {
            start[c + 1] += start[c];
        }
        let mut fill = start.clone();
        let mut items = vec![Entry { tag: 0, lo: [0.0; 2], hi: [0.0; 2] }; pairs.len()];
        for &(c, tag) in &pairs {
            let w = &walls[(tag & ID) as usize];
            items[fill[c as usize] as usize] = Entry {
                tag,
                lo: [f32_outward(w.a[0].min(w.b[0]), false), f32_outward(w.a[1].min(w.b[1]), false)],
                hi: [f32_outward(w.a[0].max(w.b[0]), true), f32_outward(w.a[1].max(w.b[1]), true)],
            };
            fill[c as usize] += 1;
        }
        g.start = start;
        g.items = items;
        g
    }

    /// A margin that covers the rounding of cell arithmetic at coordinates
    /// of magnitude `m`.
    fn margin(&self, m: f64) -> f64 {
        self.h * (1.0 / 1024.0) + m * 1e-12
    }

    /// The cell column (`k = 0`) or row (`k = 1`) of coordinate `v`, clamped.
    #[inline]
    fn index(&self, v: f64, k: usize) -> usize {
        // Clamped in floating point (NaN goes to 0), then truncated, which
        // is the floor there: cheaper than a floor call on x86-64's
        // baseline and than a saturating conversion to usize.
        let f = ((v - self.origin[k]) * self.inv_h).max(0.0).min(self.last[k]);
        f as u32 as usize
    }

    /// Calls `f` with every cell the wall may meet (a conservative cover:
    /// each column's stretch of the wall, widened by the margin) and the
    /// entry's flags.
    fn rasterize(&self, w: &Wall, mut f: impl FnMut(usize, u32)) {
        let m = self.margin(w.a.iter().chain(&w.b).fold(0.0f64, |m, x| m.max(x.abs())));
        let lo = [w.a[0].min(w.b[0]) - m, w.a[1].min(w.b[1]) - m];
        let hi = [w.a[0].max(w.b[0]) + m, w.a[1].max(w.b[1]) + m];
        let (i0, i1) = (self.index(lo[0], 0), self.index(hi[0], 0));
        let (j0, j1) = (self.index(lo[1], 1), self.index(hi[1], 1));
        if i1 - i0 < 2 || j1 - j0 < 2 {
            for j in j0..=j1 {
                for i in i0..=i1 {
                    f(j * self.n[0] + i, if i == i0 { LEFT } else { 0 } | if j == j0 { BOTTOM } else { 0 });
                }
            }
            return;
        }
        // A long diagonal wall: each column gets the rows of its stretch.
        let slope = (w.b[1] - w.a[1]) / (w.b[0] - w.a[0]);
        for i in i0..=i1 {
            let x0 = (self.origin[0] + i as f64 * self.h - m).max(lo[0]);
            let x1 = (self.origin[0] + (i + 1) as f64 * self.h + m).min(hi[0]);
            let y0 = w.a[1] + (x0 - w.a[0]) * slope;
            let y1 = w.a[1] + (x1 - w.a[0]) * slope;
            let (ja, jb) = (self.index(y0.min(y1) - m, 1).max(j0), self.index(y0.max(y1) + m, 1).min(j1));
            for j in ja..=jb {
                f(j * self.n[0] + i, WALK | LEFT | BOTTOM);
            }
        }
    }

    /// Every wall whose cells and bounding box meet the box `[lo, hi]`
    /// (each once, in an order that depends only on the level and the box)
    /// into `out`, which is cleared first.
    pub(crate) fn query(&self, lo: [f64; 2], hi: [f64; 2], out: &mut Vec<u32>) {
        out.clear();
        if self.items.is_empty() {
            return;
        }
        let m = self.margin(lo[0].abs().max(lo[1].abs()).max(hi[0].abs()).max(hi[1].abs()));
        let (i0, i1) = (self.index(lo[0] - m, 0), self.index(hi[0] + m, 0));
        let (j0, j1) = (self.index(lo[1] - m, 1), self.index(hi[1] + m, 1));
        // The query box rounded outwards to f32: an entry's box (rounded
        // outwards too) that misses it misses the exact box.
        // (2^-20 of the magnitude is more than f32's rounding; the floor
        // covers f32's subnormals.)
        let pad = |x: f64| x.abs() * (1.0 / 1_048_576.0) + 1e-30;
        let qlo = [(lo[0] - pad(lo[0])) as f32, (lo[1] - pad(lo[1])) as f32];
        let qhi = [(hi[0] + pad(hi[0])) as f32, (hi[1] + pad(hi[1])) as f32];
        // Branch-free: each entry's id is written to a buffer on the stack,
        // and kept (the end moves past it) only if it counts; whether an
        // entry's box meets the query is a coin toss for the branch
        // predictor (6.7 mispredictions a query when this was a branch).
        let mut buf = [0u32; 64];
        let (mut k, mut tags) = (0, 0);
        for j in j0..j1 + 1 {
            // An entry counts where its cell is the lower-left one of the
            // wall's rectangle and the query's: in the query's first column
            // or the wall's, and in its first row or the wall's. A row's
            // cells are contiguous: the first cell, then the rest.
            let bottom = if j == j0 { 0 } else { BOTTOM };
            let row = j * self.n[0];
            let (a, b, c) =
                (self.start[row + i0] as usize, self.start[row + i0 + 1] as usize, self.start[row + i1 + 1] as usize);
            for (n, e) in self.items[a..c].iter().enumerate() {
                if k == buf.len() {
                    out.extend_from_slice(&buf);
                    k = 0;
                }
                let need = bottom | (LEFT & u32::from(a + n >= b).wrapping_neg());
                let meets = (e.lo[0] <= qhi[0]) & (e.hi[0] >= qlo[0]) & (e.lo[1] <= qhi[1]) & (e.hi[1] >= qlo[1]);
                buf[k] = e.tag & ID;
                k += usize::from(meets & (e.tag & need == need));
                tags |= e.tag;
            }
        }
        out.extend_from_slice(&buf[..k]);
        if tags & WALK != 0 {
            // A long diagonal wall is listed in every cell of its cover.
            out.sort_unstable();
            out.dedup();
        }
    }
}
