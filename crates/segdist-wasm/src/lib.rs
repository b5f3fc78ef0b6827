//! What the interactive page (`web/`) asks of segdist, compiled to
//! WebAssembly: every number the page shows is computed here, by segdist's
//! own crates, unchanged.
//!
//! Two layers:
//! - this file, safe Rust: the projections the figures draw
//!   ([`project2`], [`project3`]), the distance in ulps between two answers
//!   ([`ulps`]), the game's walls ([`Level`]), snapping lon/lat points to
//!   lines on the WGS84 ellipsoid ([`Snapper`]) and the shortest-text
//!   formatting `segdist snap` uses ([`format_rows`]);
//! - [`ffi`], the `extern "C"` functions the page calls, which read and
//!   write `f64` arrays in the module's memory and call this layer.
//!
//! The layer is tested natively (`cargo test -p segdist-wasm`) and through
//! the page in Chromium against the `segdist` CLI (`web/tests/`).

use segdist::{Line2, Line3, Region, Segment2, Segment3};
use segdist_collide::{MoveOptions, WallSet};
use segdist_geo::GeoIndex;

pub mod ffi;

/// The region of a projection as a number for JavaScript: 0 start vertex,
/// 1 interior, 2 end vertex, 3 undefined (non-finite input).
fn region_code(r: Region) -> f64 {
    match r {
        Region::Start => 0.0,
        Region::Interior => 1.0,
        Region::End => 2.0,
        _ => 3.0,
    }
}

/// Everything the 2D figure shows for one point `p` and the segment (and
/// infinite line) through `a` and `b`, as 16 numbers:
///
/// - `0..6`: the segment, accurate tier: closest point x, y, `t`, distance,
///   squared distance, region (0 start, 1 interior, 2 end, 3 undefined);
/// - `6..11`: the infinite line: closest point x, y, unclamped `t`,
///   distance, squared distance;
/// - `11..16`: the segment by the textbook formula (segdist's fast tier):
///   x, y, `t`, distance, squared distance.
///
/// Non-finite input gives NaN numbers and region 3, never a panic.
///
/// ```
/// let r = segdist_wasm::project2([0.0, 0.0], [4.0, 0.0], [1.0, 2.0]);
/// assert_eq!(&r[..6], &[1.0, 0.0, 0.25, 2.0, 4.0, 1.0]);
/// ```
#[must_use]
pub fn project2(a: [f64; 2], b: [f64; 2], p: [f64; 2]) -> [f64; 16] {
    let s = Segment2::new(a, b);
    let h = s.closest_point(p);
    let l = Line2::new(a, b).closest_point(p);
    let f = s.closest_point_fast(p);
    [
        h.point[0],
        h.point[1],
        h.t,
        h.distance,
        h.distance_squared,
        region_code(h.region),
        l.point[0],
        l.point[1],
        l.t,
        l.distance,
        l.distance_squared,
        f.point[0],
        f.point[1],
        f.t,
        f.distance,
        f.distance_squared,
    ]
}

/// The 3D figure's numbers for one point, as 13 numbers: the segment's
/// closest point x, y, z, `t`, distance, squared distance, region (as in
/// [`project2`]), then the infinite line's x, y, z, `t`, distance, squared
/// distance.
///
/// ```
/// let r = segdist_wasm::project3([-3.0, -2.0, -1.0], [1.0, 2.0, 3.0], [7.0, -2.0, -1.0]);
/// assert_eq!(r[6], 1.0); // interior
/// ```
#[must_use]
pub fn project3(a: [f64; 3], b: [f64; 3], p: [f64; 3]) -> [f64; 13] {
    let h = Segment3::new(a, b).closest_point(p);
    let l = Line3::new(a, b).closest_point(p);
    [
        h.point[0],
        h.point[1],
        h.point[2],
        h.t,
        h.distance,
        h.distance_squared,
        region_code(h.region),
        l.point[0],
        l.point[1],
        l.point[2],
        l.t,
        l.distance,
        l.distance_squared,
    ]
}

/// How many representable `f64` values lie between `x` and `y` (0 when
/// they are equal, `+0` and `-0` included); NaN if either is NaN.
///
/// ```
/// assert_eq!(segdist_wasm::ulps(1.0, 1.0 + f64::EPSILON), 1.0);
/// assert_eq!(segdist_wasm::ulps(-0.0, 0.0), 0.0);
/// ```
#[must_use]
pub fn ulps(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    // Maps the floats onto the integers in order (negative values below
    // zero, both zeros onto 0), so the difference counts the steps.
    let key = |v: f64| {
        let bits = v.to_bits() as i64;
        if bits < 0 {
            i64::MIN - bits
        } else {
            bits
        }
    };
    (i128::from(key(x)) - i128::from(key(y))).unsigned_abs() as f64
}

/// A game level: walls the circle is pushed out of and slides along
/// (segdist-collide's [`WallSet`]).
///
/// ```
/// let Ok(level) = segdist_wasm::Level::new(&[[0.0, 0.0, 10.0, 0.0]]) else { panic!() };
/// let (x, y, free) = level.push_out([5.0, 0.5], 1.0);
/// assert!(free && x == 5.0 && y >= 1.0 && y < 1.0 + 1e-9);
/// ```
pub struct Level {
    walls: WallSet,
}

impl Level {
    /// A level of two-sided walls, each `[ax, ay, bx, by]`; an error names
    /// the first wall that is not finite.
    pub fn new(walls: &[[f64; 4]]) -> Result<Level, String> {
        let mut b = WallSet::builder();
        for (i, w) in walls.iter().enumerate() {
            if w.iter().any(|c| !c.is_finite()) {
                return Err(format!("wall {i}: a coordinate is not a finite number"));
            }
            b.push_segment([w[0], w[1]], [w[2], w[3]]);
        }
        b.build().map(|walls| Level { walls }).map_err(|e| e.to_string())
    }

    /// The circle at `center` pushed out of every wall it overlaps:
    /// `(x, y, converged)`.
    #[must_use]
    pub fn push_out(&self, center: [f64; 2], radius: f64) -> (f64, f64, bool) {
        let r = self.walls.resolve(center, radius);
        (r.position[0], r.position[1], r.converged)
    }

    /// The walls the circle at `center` touches, each as 5 numbers: the
    /// closest point x, y, the unit normal towards the centre x, y, and the
    /// depth.
    #[must_use]
    pub fn contacts(&self, center: [f64; 2], radius: f64) -> Vec<[f64; 5]> {
        self.walls
            .overlap(center, radius)
            .iter()
            .map(|c| [c.point[0], c.point[1], c.normal[0], c.normal[1], c.depth])
            .collect()
    }

    /// The circle moved by `motion`, stopping at walls and sliding along
    /// them: `(x, y, contacts met)`.
    #[must_use]
    pub fn slide(&self, position: [f64; 2], radius: f64, motion: [f64; 2]) -> (f64, f64, u32) {
        let m = self.walls.move_and_slide(position, radius, motion, &MoveOptions::default());
        (m.position[0], m.position[1], m.hits)
    }
}

/// Lon/lat line features to snap points to, on the WGS84 ellipsoid, as
/// `segdist snap` does for geographic input: the same index, the same
/// answers, bit for bit.
///
/// ```
/// // One feature of one part: a road along the equator.
/// let Ok(s) = segdist_wasm::Snapper::new(&[[0.0, 0.0], [0.01, 0.0]], &[2], &[1]) else { panic!() };
/// let r = s.snap(&[[0.005, 0.001]], f64::INFINITY).unwrap();
/// assert_eq!(r[0][0], 0.0); // feature 0
/// assert!((r[0][3] - 110.57).abs() < 0.01); // metres
/// ```
pub struct Snapper {
    index: GeoIndex,
    /// Every vertex's distance along its part (m).
    cum: Vec<f64>,
    /// The first vertex of every part, then the number of vertices.
    part_start: Vec<usize>,
    /// The first part of every feature, then the number of parts.
    feature_start: Vec<usize>,
}

/// The numbers per point of [`Snapper::snap`].
pub const SNAP_COLUMNS: usize = 9;

impl Snapper {
    /// Features from lon/lat `vertices`: part `k` ends before vertex
    /// `part_ends[k]`, feature `f` before part `feature_ends[f]` (both
    /// increasing, the last equal to the number of vertices, of parts).
    pub fn new(vertices: &[[f64; 2]], part_ends: &[u32], feature_ends: &[u32]) -> Result<Snapper, String> {
        let ends = |e: &[u32], n: usize, what: &str| -> Result<Vec<usize>, String> {
            let mut starts = vec![0usize];
            for &x in e {
                let x = x as usize;
                if x < *starts.last().unwrap_or(&0) || x > n {
                    return Err(format!("the {what} ends are not increasing up to {n}"));
                }
                starts.push(x);
            }
            if *starts.last().unwrap_or(&0) != n {
                return Err(format!("the {what} ends stop before {n}"));
            }
            Ok(starts)
        };
        let part_start = ends(part_ends, vertices.len(), "parts'")?;
        let feature_start = ends(feature_ends, part_ends.len(), "features'")?;
        let parts = |f: usize| (feature_start[f]..feature_start[f + 1]).map(|q| part_start[q]..part_start[q + 1]);
        let features: Vec<Vec<&[[f64; 2]]>> =
            (0..feature_ends.len()).map(|f| parts(f).map(|r| &vertices[r]).collect()).collect();
        let index = GeoIndex::from_multi_polylines(features.iter().map(Vec::as_slice)).map_err(|e| e.to_string())?;
        let mut cum = Vec::with_capacity(vertices.len());
        for w in part_start.windows(2) {
            cum.extend(segdist_geo::geodesic_lengths(&vertices[w[0]..w[1]]));
        }
        Ok(Snapper { index, cum, part_start, feature_start })
    }

    /// The nearest feature of every lon/lat point within `max_distance`
    /// metres, [`SNAP_COLUMNS`] numbers each: feature (−1 for none), part,
    /// segment, distance (m), closest lon, lat, `t` on the segment, distance
    /// along the part (m) and as a fraction of its length. A point that is
    /// not a finite lon/lat (|lat| ≤ 90) is an error naming it.
    pub fn snap(&self, points: &[[f64; 2]], max_distance: f64) -> Result<Vec<[f64; SNAP_COLUMNS]>, String> {
        if let Some(i) = points.iter().position(|p| !(p[0].is_finite() && p[1].is_finite() && p[1].abs() <= 90.0)) {
            let p = points[i];
            return Err(format!("point {i} ({}, {}) is not a longitude/latitude", p[0], p[1]));
        }
        if max_distance.is_nan() || max_distance < 0.0 {
            return Err(format!("the largest distance must be a number >= 0, not {max_distance}"));
        }
        Ok(self
            .index
            .nearest_many(points, max_distance)
            .into_iter()
            .map(|h| match h {
                None => {
                    let mut row = [f64::NAN; SNAP_COLUMNS];
                    row[0] = -1.0;
                    row
                }
                Some(h) => {
                    let part = self.feature_start[h.feature] + h.part;
                    let cum = &self.cum[self.part_start[part]..self.part_start[part + 1]];
                    let along = segdist_geo::along_line(cum, h.segment, &h.projection);
                    let pr = &h.projection;
                    [
                        h.feature as f64,
                        h.part as f64,
                        h.segment as f64,
                        pr.distance,
                        pr.point[0],
                        pr.point[1],
                        pr.t,
                        along,
                        segdist_index::fraction(cum, along),
                    ]
                }
            })
            .collect())
    }
}

/// `values` as text, `columns` numbers per row joined by `,`, each row
/// ending in `\n`: every number in the shortest form that reads back to it,
/// as `segdist snap` writes it (`ryu`: `1.0`, `0.25`, `1e-7`); NaN as an
/// empty field.
///
/// ```
/// assert_eq!(segdist_wasm::format_rows(&[1.0, 0.25, 1e-7, f64::NAN], 2), "1.0,0.25\n1e-7,\n");
/// ```
#[must_use]
pub fn format_rows(values: &[f64], columns: usize) -> String {
    let columns = columns.max(1);
    let mut out = String::with_capacity(values.len() * 20);
    let mut buf = ryu::Buffer::new();
    for row in values.chunks(columns) {
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if !v.is_nan() {
                out.push_str(buf.format(*v));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project2_matches_the_kernels() {
        let (a, b, p) = ([500_000.1, 6_700_000.3], [500_010.7, 6_700_004.9], [500_004.022, 6_700_002.002]);
        let r = project2(a, b, p);
        let h = Segment2::new(a, b).closest_point(p);
        assert_eq!((r[0], r[1], r[2], r[3], r[4]), (h.point[0], h.point[1], h.t, h.distance, h.distance_squared));
        assert_eq!(r[5], 1.0);
        // Past the end: the segment clamps to b, the line does not.
        let r = project2([0.0, 0.0], [1.0, 0.0], [3.0, 1.0]);
        assert_eq!((r[0], r[1], r[2], r[5]), (1.0, 0.0, 1.0, 2.0));
        assert_eq!((r[6], r[7], r[8]), (3.0, 0.0, 3.0));
    }

    #[test]
    fn project2_non_finite_is_nan_not_a_panic() {
        let r = project2([0.0, 0.0], [f64::INFINITY, 0.0], [1.0, 1.0]);
        assert!(r[3].is_nan());
        assert_eq!(r[5], 3.0);
    }

    #[test]
    fn project3_seed_example() {
        // The seed's line (-3,-2,-1)-(1,2,3): (7,-2,-1) projects inside,
        // (-7,-10,-4) before the start.
        let (a, b) = ([-3.0, -2.0, -1.0], [1.0, 2.0, 3.0]);
        let r = project3(a, b, [-7.0, -10.0, -4.0]);
        assert_eq!((r[0], r[1], r[2], r[3], r[6]), (-3.0, -2.0, -1.0, 0.0, 0.0));
        assert!(r[10] < 0.0);
        let h = Segment3::new(a, b).closest_point([7.0, -2.0, -1.0]);
        let r = project3(a, b, [7.0, -2.0, -1.0]);
        assert_eq!(&r[..3], &h.point);
        assert_eq!(r[12], Line3::new(a, b).closest_point([7.0, -2.0, -1.0]).distance_squared);
    }

    #[test]
    fn ulps_counts_steps_across_zero() {
        let tiny = f64::from_bits(1);
        assert_eq!(ulps(tiny, -tiny), 2.0);
        assert_eq!(ulps(1.0, 2.0), (1u64 << 52) as f64);
        assert!(ulps(f64::NAN, 1.0).is_nan());
    }

    #[test]
    fn level_pushes_out_and_slides() {
        let Ok(level) = Level::new(&[[0.0, 0.0, 10.0, 0.0], [10.0, 0.0, 10.0, 10.0]]) else { panic!() };
        assert_eq!(level.contacts([5.0, 0.5], 1.0).len(), 1);
        let (x, y, hits) = level.slide([5.0, 2.0], 1.0, [10.0, -1.0]);
        assert!(x < 9.0 && y >= 1.0 && hits > 0, "{x} {y} {hits}");
        assert!(level.contacts([x, y], 1.0).is_empty());
        let err = Level::new(&[[0.0, f64::NAN, 1.0, 1.0]]).err().unwrap_or_default();
        assert!(err.contains("wall 0"), "{err}");
    }

    #[test]
    fn snapper_matches_the_index_and_names_bad_input() {
        let v = [[24.94, 60.16], [24.95, 60.17], [24.96, 60.17], [24.94, 60.18], [24.95, 60.18]];
        // A part of one vertex (2..3) is refused by the index.
        assert!(Snapper::new(&v, &[2, 3, 5], &[1, 3]).is_err());
        let Ok(s) = Snapper::new(&v, &[3, 5], &[1, 2]) else { panic!("two good features") };
        let p = [24.945, 60.179];
        let r = s.snap(&[p], f64::INFINITY).unwrap()[0];
        let idx = GeoIndex::from_polylines(&[&v[..3], &v[3..]]).unwrap();
        let h = idx.nearest(p).unwrap();
        assert_eq!(r[0], h.feature as f64);
        assert_eq!(r[3], h.projection.distance);
        assert_eq!(s.snap(&[p], 1.0).unwrap()[0][0], -1.0);
        assert!(s.snap(&[[0.0, 91.0]], 1.0).unwrap_err().contains("point 0"));
        assert!(Snapper::new(&v, &[3, 6], &[2]).is_err());
    }

    #[test]
    fn format_rows_is_snaps_text() {
        assert_eq!(format_rows(&[110.57, -0.0, 3.0], 3), "110.57,-0.0,3.0\n");
        assert_eq!(format_rows(&[], 3), "");
    }
}
