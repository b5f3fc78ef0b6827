//! The road graph: lines cut at their junctions into pieces, each piece one
//! or two directed arcs between nodes, and the exact segment index that
//! finds a fix's candidate positions on them.
//!
//! A node is a coordinate where lines meet. Every part's two ends are
//! nodes. With [`Junctions::SharedVertices`] (the default) an interior
//! vertex is a node too when the same coordinates, bit for bit, occur at
//! another vertex (of another line, or elsewhere on the same one): the way
//! OpenStreetMap data says two ways meet, while a bridge over a road shares
//! no vertex with it. With [`Junctions::Ends`] only ends are nodes.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;
use segdist_geo::{geodesic, GeoGrid, GeoHit, GeoIndex, GeoPoint};

use crate::table::{RouteTable, TABLE_ENTRIES};
use segdist_index::{Index, IndexBuilder};

use crate::candidates::CandidateGrid;

mod build;

/// How coordinates are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// x/y in one unit (metres, for the defaults to make sense), Euclidean.
    Planar,
    /// Longitude/latitude in degrees; metres on the WGS84 ellipsoid.
    Geographic,
}

/// Which ways a line may be driven, relative to its vertex order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Direction {
    /// Both ways.
    #[default]
    Both,
    /// From the first vertex to the last only.
    Forward,
    /// From the last vertex to the first only.
    Backward,
}

impl Direction {
    /// OpenStreetMap's `oneway` tag: `yes`, `true` and `1` are
    /// [`Forward`](Direction::Forward), `-1` and `reverse` are
    /// [`Backward`](Direction::Backward), anything else (`no`, empty, absent)
    /// is [`Both`](Direction::Both). Case and surrounding blanks are ignored.
    ///
    /// ```
    /// use segdist_match::Direction;
    /// assert_eq!(Direction::from_oneway("yes"), Direction::Forward);
    /// assert_eq!(Direction::from_oneway(" -1"), Direction::Backward);
    /// assert_eq!(Direction::from_oneway("no"), Direction::Both);
    /// ```
    #[must_use]
    pub fn from_oneway(value: &str) -> Direction {
        match value.trim().to_ascii_lowercase().as_str() {
            "yes" | "true" | "1" => Direction::Forward,
            "-1" | "reverse" => Direction::Backward,
            _ => Direction::Both,
        }
    }
}

/// Which vertices are nodes (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Junctions {
    /// Ends, and interior vertices whose coordinates occur elsewhere too.
    #[default]
    SharedVertices,
    /// Ends only.
    Ends,
}

/// Why a graph could not be built.
#[derive(Clone, Debug, PartialEq)]
pub enum GraphError {
    /// A part with fewer than two vertices.
    ShortPart { line: usize, part: usize },
    /// A vertex that is not finite, or not a longitude/latitude in a
    /// geographic graph.
    BadVertex { line: usize, part: usize, vertex: usize },
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::ShortPart { line, part } => {
                write!(f, "line {line}, part {part}: fewer than two vertices")
            }
            GraphError::BadVertex { line, part, vertex } => {
                write!(f, "line {line}, part {part}, vertex {vertex}: not a finite coordinate (or not lon/lat)")
            }
        }
    }
}

impl std::error::Error for GraphError {}

/// A stretch of one line part between two nodes, with no node inside.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Piece {
    pub(crate) line: u32,
    /// Global vertex range `v0..=v1`.
    pub(crate) v0: u32,
    pub(crate) v1: u32,
    pub(crate) from: u32,
    pub(crate) to: u32,
    pub(crate) len: f64,
}

/// The candidate search: planar or geodesic.
enum Search {
    Planar(Index<2>),
    Geographic(GeoIndex),
}

/// A fix's position on a line: where the index put it, and on which piece.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// The line (push order).
    pub line: usize,
    /// The part within the line.
    pub part: usize,
    /// The segment within the part.
    pub segment: usize,
    /// Where on the segment, in `[0, 1]`.
    pub t: f64,
    /// The closest point.
    pub point: [f64; 2],
    /// The fix's distance to it (metres when geographic).
    pub distance: f64,
    /// The distance along the part from its first vertex.
    pub along: f64,
    pub(crate) piece: u32,
    /// The distance along the piece from its first vertex.
    pub(crate) offset: f64,
}

/// Lines to build a [`RoadGraph`] from.
///
/// ```
/// use segdist_match::{Direction, GraphBuilder, Space};
/// let mut b = GraphBuilder::new(Space::Planar);
/// b.push_line(vec![vec![[0.0, 0.0], [100.0, 0.0], [200.0, 0.0]]], Direction::Both);
/// b.push_line(vec![vec![[100.0, 0.0], [100.0, 100.0]]], Direction::Forward);
/// let g = b.build()?;
/// // The T junction at (100, 0) is an interior vertex of line 0 shared with
/// // line 1's end: 4 nodes, 3 pieces, 5 arcs.
/// assert_eq!((g.nodes(), g.pieces(), g.arcs()), (4, 3, 5));
/// # Ok::<(), segdist_match::GraphError>(())
/// ```
pub struct GraphBuilder {
    space: Space,
    junctions: Junctions,
    lines: Vec<(Vec<Vec<[f64; 2]>>, Direction)>,
    /// Per line, its end nodes' ids when given ([`push_line_between`](Self::push_line_between)).
    ends: Vec<Option<(u64, u64)>>,
}

impl GraphBuilder {
    /// An empty builder for coordinates in `space`, with
    /// [`Junctions::SharedVertices`].
    #[must_use]
    pub fn new(space: Space) -> Self {
        GraphBuilder { space, junctions: Junctions::default(), lines: Vec::new(), ends: Vec::new() }
    }

    /// Which vertices are nodes.
    #[must_use]
    pub fn junctions(mut self, junctions: Junctions) -> Self {
        self.junctions = junctions;
        self
    }

    /// Adds a line of one or more parts; returns its id (push order).
    pub fn push_line(&mut self, parts: Vec<Vec<[f64; 2]>>, direction: Direction) -> usize {
        self.lines.push((parts, direction));
        self.ends.push(None);
        self.lines.len() - 1
    }

    /// Adds a line of one part from node `from` to node `to`, as data with
    /// node-id columns says (OpenStreetMap-derived networks, FMM's input):
    /// lines with ids meet where their ids are equal, whatever their
    /// coordinates, and only there (never at interior vertices, nor with
    /// lines pushed without ids). Returns its id (push order).
    ///
    /// ```
    /// use segdist_match::{Direction, GraphBuilder, Space};
    /// let mut b = GraphBuilder::new(Space::Planar);
    /// // Two lines that cross at (50, 0) without meeting (a bridge), and a
    /// // third sharing node 2 with the first.
    /// b.push_line_between(vec![[0.0, 0.0], [50.0, 0.0], [100.0, 0.0]], Direction::Both, 1, 2);
    /// b.push_line_between(vec![[50.0, -50.0], [50.0, 0.0], [50.0, 50.0]], Direction::Both, 3, 4);
    /// b.push_line_between(vec![[100.0, 0.0], [100.0, 80.0]], Direction::Forward, 2, 5);
    /// let g = b.build()?;
    /// assert_eq!((g.nodes(), g.pieces(), g.arcs()), (5, 3, 5));
    /// # Ok::<(), segdist_match::GraphError>(())
    /// ```
    pub fn push_line_between(&mut self, vertices: Vec<[f64; 2]>, direction: Direction, from: u64, to: u64) -> usize {
        self.lines.push((vec![vertices], direction));
        self.ends.push(Some((from, to)));
        self.lines.len() - 1
    }

    /// The graph and its index.
    ///
    /// # Errors
    /// A part of fewer than two vertices, or a vertex that is not finite
    /// (or not a longitude/latitude when geographic).
    pub fn build(self) -> Result<RoadGraph, GraphError> {
        RoadGraph::build(self)
    }
}

/// An arc out of a node: its number, head node and length.
#[derive(Clone, Copy)]
pub(crate) struct OutArc {
    pub(crate) arc: u32,
    pub(crate) head: u32,
    pub(crate) len: f64,
}

/// A road network: nodes, directed arcs, and the index over its segments.
/// Built by [`GraphBuilder`].
pub struct RoadGraph {
    pub(crate) space: Space,
    pub(crate) vertices: Vec<[f64; 2]>,
    /// Distance from the part's first vertex, per vertex.
    pub(crate) cum: Vec<f64>,
    /// First vertex of every part, then the number of vertices.
    pub(crate) part_start: Vec<usize>,
    /// First part of every line, then the number of parts.
    pub(crate) line_start: Vec<usize>,
    /// The piece of the segment from each global vertex (0 at a part's
    /// last vertex, where no segment starts): one load where the
    /// candidates had searched the part's pieces.
    segment_piece: Vec<u32>,
    pub(crate) pieces: Vec<Piece>,
    /// Arc `2p` drives piece `p` forward, `2p + 1` backward; whether each
    /// may be driven.
    pub(crate) open: Vec<bool>,
    /// Outgoing open arcs of every node (CSR), each with what a route
    /// search reads of it: in one place, where the pieces' lengths and
    /// nodes were a cache miss an arc (7 % of a lon/lat match's time at
    /// 5 s between fixes).
    pub(crate) out_start: Vec<u32>,
    pub(crate) out: Vec<OutArc>,
    search: Search,
    /// See [`id`](Self::id).
    id: u64,
    /// The candidate grids made for matchers, by radius (the last few):
    /// made once, however many matchers a program makes.
    grids: Mutex<Vec<(u64, Option<Arc<Grid>>)>>,
    /// The route tables made for matchers, by reach (the last few).
    tables: Mutex<Vec<(u64, Option<Arc<RouteTable>>)>>,
}

/// A matcher's candidate search for one radius, laid once: the planar
/// graph's grid, or the geographic index's ([`segdist_geo::GeoGrid`]).
pub(crate) enum Grid {
    Planar(CandidateGrid),
    Geographic(GeoGrid),
}

/// A cell of a [`Grid`], for asking for its memory ahead of its query.
#[derive(Clone, Copy)]
pub(crate) enum GridCell {
    Planar(u32),
    Geographic(segdist_geo::GridCell),
}

impl Grid {
    /// The cell of `p`, if on the grid; a geographic grid's from `geo`,
    /// `p` prepared (`None`: not lon/lat).
    pub(crate) fn cell(&self, p: [f64; 2], geo: Option<&GeoPoint>) -> Option<GridCell> {
        match self {
            Grid::Planar(g) => g.cell(p).map(GridCell::Planar),
            Grid::Geographic(g) => g.cell_of(geo?).map(GridCell::Geographic),
        }
    }

    /// Asks for a cell's list: two queries ahead.
    pub(crate) fn prefetch_list(&self, c: GridCell) {
        match (self, c) {
            (Grid::Planar(g), GridCell::Planar(c)) => g.prefetch_list(c),
            (Grid::Geographic(g), GridCell::Geographic(c)) => g.prefetch_list(c),
            _ => {}
        }
    }

    /// Asks for the segments a cell lists: one query ahead.
    pub(crate) fn prefetch_segments(&self, c: GridCell) {
        match (self, c) {
            (Grid::Planar(g), GridCell::Planar(c)) => g.prefetch_segments(c),
            (Grid::Geographic(g), GridCell::Geographic(c)) => g.prefetch_chords(c),
            _ => {}
        }
    }
}

/// The next graph's [`RoadGraph::id`] (from 1: 0 is no graph).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl RoadGraph {
    /// The number of nodes.
    ///
    /// See [`GraphBuilder`] for an example.
    #[must_use]
    pub fn nodes(&self) -> usize {
        self.out_start.len() - 1
    }

    /// The number of pieces (stretches of a line between two nodes).
    ///
    /// See [`GraphBuilder`] for an example.
    #[must_use]
    pub fn pieces(&self) -> usize {
        self.pieces.len()
    }

    /// The number of arcs that may be driven (one per one-way piece, two
    /// per two-way piece).
    ///
    /// See [`GraphBuilder`] for an example.
    #[must_use]
    pub fn arcs(&self) -> usize {
        self.out.len()
    }

    /// How coordinates are measured.
    ///
    /// ```
    /// use segdist_match::{GraphBuilder, Space};
    /// let g = GraphBuilder::new(Space::Geographic).build()?;
    /// assert_eq!(g.space(), Space::Geographic);
    /// # Ok::<(), segdist_match::GraphError>(())
    /// ```
    #[must_use]
    pub fn space(&self) -> Space {
        self.space
    }

    /// The distance between two points (metres on WGS84 when geographic);
    /// `None` for a point that is not finite (or not lon/lat).
    ///
    /// ```
    /// use segdist_match::{GraphBuilder, Space};
    /// let g = GraphBuilder::new(Space::Planar).build()?;
    /// assert_eq!(g.distance([0.0, 0.0], [3.0, 4.0]), Some(5.0));
    /// # Ok::<(), segdist_match::GraphError>(())
    /// ```
    #[must_use]
    pub fn distance(&self, a: [f64; 2], b: [f64; 2]) -> Option<f64> {
        let ok =
            |p: [f64; 2]| p[0].is_finite() && p[1].is_finite() && (self.space == Space::Planar || p[1].abs() <= 90.0);
        (ok(a) && ok(b)).then(|| seg_len(self.space, a, b))
    }

    /// Up to `k` candidate positions of `p` within `radius`, nearest first,
    /// at most one per piece (its nearest segment), into `out` (cleared
    /// first). None for a point that is not finite (or not lon/lat). The
    /// index is asked for `2k` segments, as a curving piece near the fix
    /// has several among the nearest.
    pub(crate) fn candidates(&self, p: [f64; 2], k: usize, radius: f64, out: &mut Vec<Candidate>) {
        out.clear();
        match &self.search {
            Search::Planar(index) => {
                for h in index.k_nearest_within(p, 2 * k, radius) {
                    let along = self.along_planar(self.vertex_of(h.feature, h.part, h.segment), h.t);
                    let piece = self.piece_of(h.feature, h.part, h.segment);
                    let (line, part, segment) = (h.feature, h.part, h.segment);
                    let (t, point, distance) = (h.t, h.point, h.distance);
                    let c = Candidate { line, part, segment, t, point, distance, along, piece, offset: 0.0 };
                    self.push_candidate(out, k, c);
                }
            }
            Search::Geographic(index) => self.push_geographic(&index.k_nearest_within(p, 2 * k, radius), k, out),
        }
    }

    /// The candidates among `hits`, the geographic index's `2k` nearest
    /// segments within the radius, into `out` (as
    /// [`candidates`](Self::candidates)).
    pub(crate) fn push_geographic(&self, hits: &[GeoHit], k: usize, out: &mut Vec<Candidate>) {
        out.clear();
        for h in hits {
            let q = self.line_start[h.feature] + h.part;
            let v = self.part_start[q] + h.segment;
            let pr = &h.projection;
            let along = if pr.t == 1.0 { self.cum[v + 1] } else { (self.cum[v] + pr.along).min(self.cum[v + 1]) };
            let piece = self.segment_piece[v];
            let (line, part, segment) = (h.feature, h.part, h.segment);
            let (t, point, distance) = (pr.t, pr.point, pr.distance);
            let c = Candidate { line, part, segment, t, point, distance, along, piece, offset: 0.0 };
            self.push_candidate(out, k, c);
        }
    }

    /// `p`'s position on piece `pc`: its nearest segment of the piece (the
    /// lowest on a tie), measured as the candidate search measures (the
    /// accurate kernel, or the geodesic). `None` for a point the search
    /// would not take (not finite, or not lon/lat).
    pub(crate) fn candidate_on(&self, pc: u32, p: [f64; 2]) -> Option<Candidate> {
        let piece = &self.pieces[pc as usize];
        let (v0, v1) = (piece.v0 as usize, piece.v1 as usize);
        // A geodesic costs a few hundred nanoseconds: of a piece of several
        // segments, only those near the nearest on the local plane are
        // measured (see `skip`).
        let mut plane = [0.0; 16];
        let least = if self.space == Space::Geographic && v1 - v0 > 1 && v1 - v0 <= plane.len() {
            self.plane_distances(v0, v1, p, &mut plane)
        } else {
            None
        };
        let mut best: Option<(usize, f64, [f64; 2], f64, f64)> = None; // v, t, point, distance, along
        for v in v0..v1 {
            if least.is_some_and(|least| skip(plane[v - v0], least)) {
                continue;
            }
            let (a, b) = self.segment_ends(v);
            let m = match self.space {
                Space::Planar => {
                    let pr = segdist::Segment::new(a, b).closest_point(p);
                    (v, pr.t, pr.point, pr.distance, self.along_planar(v, pr.t))
                }
                Space::Geographic => {
                    let pr = match &self.search {
                        Search::Geographic(index) => {
                            let (line, part, segment) = self.segment_of(pc, v);
                            index.segment(p, line, part, segment)?.projection
                        }
                        Search::Planar(_) => geodesic(a, b, p)?,
                    };
                    let along =
                        if pr.t == 1.0 { self.cum[v + 1] } else { (self.cum[v] + pr.along).min(self.cum[v + 1]) };
                    (v, pr.t, pr.point, pr.distance, along)
                }
            };
            if !m.3.is_finite() {
                return None;
            }
            if best.is_none_or(|b| m.3 < b.3) {
                best = Some(m);
            }
        }
        let (v, t, point, distance, along) = best?;
        let (line, part, segment) = self.segment_of(pc, v);
        let offset = (along - self.cum[piece.v0 as usize]).clamp(0.0, piece.len);
        Some(Candidate { line, part, segment, t, point, distance, along, piece: pc, offset })
    }

    /// (line, part, segment) of the segment from global vertex `v` of piece
    /// `pc`.
    fn segment_of(&self, pc: u32, v: usize) -> (usize, usize, usize) {
        let line = self.pieces[pc as usize].line as usize;
        let (first, last) = (self.line_start[line], self.line_start[line + 1]);
        let q = first + self.part_start[first..=last].partition_point(|&s| s <= v) - 1;
        (line, q - first, v - self.part_start[q])
    }

    /// The squared distances from `p` to the segments from vertex `v0` to
    /// `v1` on the plane tangent at `p` (metres; longitudes unwrapped) into
    /// `out`, and their least (squared); `None` where that plane is not
    /// trusted to rank them: above 70° of latitude, or a segment's end over
    /// 10 km away. (The textbook clamp: its rounding is far below the 2 %
    /// that `skip` leaves.)
    fn plane_distances(&self, v0: usize, v1: usize, p: [f64; 2], out: &mut [f64]) -> Option<f64> {
        if !(p[1].abs() <= 70.0 && p[0].is_finite()) {
            return None;
        }
        let (kx, ky) = metres_per_degree(p[1].to_radians());
        let local = |q: [f64; 2]| {
            let mut dlon = q[0] - p[0];
            if dlon.abs() > 180.0 {
                dlon -= 360.0 * (dlon / 360.0).round();
            }
            [dlon * kx, (q[1] - p[1]) * ky]
        };
        let far = |a: [f64; 2]| a[0] * a[0] + a[1] * a[1] > 1e8;
        let mut least = f64::INFINITY;
        let mut a = local(self.vertices[v0]);
        for (v, o) in (v0..v1).zip(out.iter_mut()) {
            let b = local(self.vertices[v + 1]);
            if far(a) || far(b) {
                return None;
            }
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let len2 = dx * dx + dy * dy;
            let t = if len2 > 0.0 { (-(a[0] * dx + a[1] * dy) / len2).clamp(0.0, 1.0) } else { 0.0 };
            let (x, y) = (a[0] + t * dx, a[1] + t * dy);
            *o = x * x + y * y;
            least = least.min(*o);
            a = b;
        }
        Some(least)
    }

    /// The global index of the first vertex of segment `segment` of part
    /// `part` of line `line`.
    #[inline]
    pub(crate) fn vertex_of(&self, line: usize, part: usize, segment: usize) -> usize {
        self.part_start[self.line_start[line] + part] + segment
    }

    /// The ends of the segment from global vertex `v`.
    #[inline]
    pub(crate) fn segment_ends(&self, v: usize) -> ([f64; 2], [f64; 2]) {
        (self.vertices[v], self.vertices[v + 1])
    }

    /// Every segment as (line, part, segment, first vertex), in index order.
    pub(crate) fn segments(&self) -> impl Iterator<Item = (usize, usize, usize, usize)> + '_ {
        (0..self.line_start.len() - 1).flat_map(move |l| {
            (self.line_start[l]..self.line_start[l + 1]).flat_map(move |q| {
                (self.part_start[q]..self.part_start[q + 1] - 1)
                    .map(move |v| (l, q - self.line_start[l], v - self.part_start[q], v))
            })
        })
    }

    /// The candidate grid for `radius` (`None` where the index is asked),
    /// made on first use and kept for the next matchers (the last four
    /// radii).
    pub(crate) fn grid(&self, radius: f64) -> Option<Arc<Grid>> {
        let key = radius.to_bits();
        let mut grids = self.grids.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, g)) = grids.iter().find(|(r, _)| *r == key) {
            return g.clone();
        }
        let g = match &self.search {
            Search::Planar(_) => CandidateGrid::new(self, radius).map(Grid::Planar),
            Search::Geographic(index) => index.grid(radius).map(Grid::Geographic),
        }
        .map(Arc::new);
        if grids.len() == 4 {
            grids.remove(0);
        }
        grids.push((key, g.clone()));
        g
    }

    /// The table of routes within `reach` (`None` for a graph whose table
    /// would hold more than [`TABLE_ENTRIES`] entries), made on first use
    /// and kept for the next matchers (the last four reaches).
    pub(crate) fn route_table(&self, reach: f64) -> Option<Arc<RouteTable>> {
        let key = reach.to_bits();
        let mut tables = self.tables.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, t)) = tables.iter().find(|(r, _)| *r == key) {
            return t.clone();
        }
        let t = RouteTable::new(self, reach, TABLE_ENTRIES).map(Arc::new);
        if tables.len() == 4 {
            tables.remove(0);
        }
        tables.push((key, t.clone()));
        t
    }

    /// The planar index, or `None` for a geographic graph.
    pub(crate) fn planar_index(&self) -> Option<&Index<2>> {
        match &self.search {
            Search::Planar(index) => Some(index),
            Search::Geographic(_) => None,
        }
    }

    /// A number no other graph of this process has, for caches kept across
    /// calls to tell graphs apart.
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Adds candidate `c` (its `offset` set here from `along` and its
    /// `piece`) unless `k` are in or a nearer segment of its piece is.
    pub(crate) fn push_candidate(&self, out: &mut Vec<Candidate>, k: usize, mut c: Candidate) {
        if !Self::takes(out, k, c.piece) {
            return;
        }
        let pc = &self.pieces[c.piece as usize];
        c.offset = (c.along - self.cum[pc.v0 as usize]).clamp(0.0, pc.len);
        out.push(c);
    }

    /// Whether [`push_candidate`](Self::push_candidate) would take a
    /// candidate on `piece`: not when `out` is full, or a nearer segment of
    /// the same piece is in already.
    #[inline]
    pub(crate) fn takes(out: &[Candidate], k: usize, piece: u32) -> bool {
        out.len() < k && out.iter().all(|o| o.piece != piece)
    }

    /// The piece holding segment `segment` of part `part` of line `line`.
    pub(crate) fn piece_of(&self, line: usize, part: usize, segment: usize) -> u32 {
        self.segment_piece[self.part_start[self.line_start[line] + part] + segment]
    }

    /// The distance along the part at `t` on the segment from global vertex
    /// `v`, as the planar candidates measure it.
    #[inline]
    pub(crate) fn along_planar(&self, v: usize, t: f64) -> f64 {
        let along = self.cum[v] + t * (self.cum[v + 1] - self.cum[v]);
        along.min(self.cum[v + 1])
    }

    /// The tail (start node) of arc `a`.
    #[inline]
    pub(crate) fn tail(&self, a: u32) -> u32 {
        let p = &self.pieces[(a / 2) as usize];
        if a.is_multiple_of(2) {
            p.from
        } else {
            p.to
        }
    }

    /// The head (end node) of arc `a`.
    #[inline]
    pub(crate) fn head(&self, a: u32) -> u32 {
        let p = &self.pieces[(a / 2) as usize];
        if a.is_multiple_of(2) {
            p.to
        } else {
            p.from
        }
    }

    /// The point `off` along piece `p` from its first vertex (clamped to
    /// the piece), interpolated linearly in the coordinates.
    pub(crate) fn point_on(&self, p: u32, off: f64) -> [f64; 2] {
        let pc = &self.pieces[p as usize];
        let (v0, v1) = (pc.v0 as usize, pc.v1 as usize);
        let s = self.cum[v0] + off;
        let i = (v0 + self.cum[v0..=v1].partition_point(|&c| c <= s)).clamp(v0 + 1, v1);
        let (a, b) = (self.vertices[i - 1], self.vertices[i]);
        let len = self.cum[i] - self.cum[i - 1];
        let f = if len > 0.0 { ((s - self.cum[i - 1]) / len).clamp(0.0, 1.0) } else { 0.0 };
        [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])]
    }

    /// The vertices of piece `p` from `off0` to `off1` along it (either
    /// order: reversed when `off1 < off0`), for drawing a matched path.
    pub(crate) fn piece_path(&self, p: u32, off0: f64, off1: f64, out: &mut Vec<[f64; 2]>) {
        let pc = &self.pieces[p as usize];
        let (v0, v1) = (pc.v0 as usize, pc.v1 as usize);
        let base = self.cum[v0];
        let at = |off: f64| self.point_on(p, off);
        let push = |out: &mut Vec<[f64; 2]>, q: [f64; 2]| {
            if out.last() != Some(&q) {
                out.push(q);
            }
        };
        push(out, at(off0));
        if off0 <= off1 {
            for v in v0 + 1..v1 {
                let c = self.cum[v] - base;
                if c > off0 && c < off1 {
                    push(out, self.vertices[v]);
                }
            }
        } else {
            for v in (v0 + 1..v1).rev() {
                let c = self.cum[v] - base;
                if c < off0 && c > off1 {
                    push(out, self.vertices[v]);
                }
            }
        }
        push(out, at(off1));
    }
}

/// Whether a segment at `d` metres on the tangent plane cannot be the
/// nearest of segments the least of which is at `least`. Within 10 km of
/// the point and up to 70° of latitude, the plane's distances are within
/// 0.5 % of the geodesic's (WGS84's radii of curvature at the point; the
/// longitude scale changes by tan 70° × 10 km / 6,371 km = 0.43 % over
/// the 10 km, the ellipsoid's curvature adds parts per million): a segment
/// farther than the least by over 2 % and 2 m is not the nearest.
/// (Both squared.)
fn skip(d2: f64, least2: f64) -> bool {
    let m = least2.sqrt() * 1.02 + 2.0;
    d2 > m * m
}

/// WGS84's radii of curvature at latitude `lat` (radians): the prime
/// vertical's and the meridian's, in metres.
pub(crate) fn radii(lat: f64) -> (f64, f64) {
    let e2 = 0.006_694_379_990_14;
    let w = (1.0 - e2 * lat.sin() * lat.sin()).sqrt();
    (6_378_137.0 / w, 6_378_137.0 * (1.0 - e2) / (w * w * w))
}

/// Metres per degree of longitude and of latitude at latitude `lat`
/// (radians).
pub(crate) fn metres_per_degree(lat: f64) -> (f64, f64) {
    let (n, m) = radii(lat);
    ((n * lat.cos()).to_radians(), m.to_radians())
}

/// The length of segment `a`–`b`.
fn seg_len(space: Space, a: [f64; 2], b: [f64; 2]) -> f64 {
    match space {
        Space::Planar => (b[0] - a[0]).hypot(b[1] - a[1]),
        Space::Geographic => geodesic(a, a, b).map_or(0.0, |r| r.distance),
    }
}
