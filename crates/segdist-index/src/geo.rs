//! `geo-types` geometries in and out (the optional feature `geo-types`):
//! `LineString`, `MultiLineString` and `Line` pushed into an index or made
//! a `Polyline`. Queries need nothing here: geo-types converts a `Point` or
//! `Coord` into `[f64; 2]` (`p.into()`) and back (`Point::from(hit.point)`).

use geo_types::{Line, LineString, MultiLineString};

use crate::{BuildError, Index, IndexBuilder, Polyline};

fn vertices(l: &LineString<f64>) -> Vec<[f64; 2]> {
    l.0.iter().map(|c| [c.x, c.y]).collect()
}

impl IndexBuilder<2> {
    /// Adds a `LineString` as a feature of one part (see
    /// [`push_polyline`](Self::push_polyline)).
    ///
    /// ```
    /// use geo_types::{line_string, Point};
    /// let mut b = segdist_index::IndexBuilder::<2>::new();
    /// let id = b.push_line_string(&line_string![(x: 0.0, y: 0.0), (x: 10.0, y: 0.0)]);
    /// let hit = b.build()?.nearest(Point::new(4.0, 3.0).into()).unwrap();
    /// assert_eq!((hit.feature, hit.distance), (id, 3.0));
    /// assert_eq!(Point::from(hit.point), Point::new(4.0, 0.0));
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub fn push_line_string(&mut self, line: &LineString<f64>) -> usize {
        self.push_polyline(&vertices(line))
    }

    /// Adds a `MultiLineString` as a feature of its parts (see
    /// [`push_multi_polyline`](Self::push_multi_polyline)).
    ///
    /// ```
    /// use geo_types::{line_string, MultiLineString};
    /// let mut b = segdist_index::IndexBuilder::<2>::new();
    /// let m = MultiLineString::new(vec![
    ///     line_string![(x: 0.0, y: 0.0), (x: 1.0, y: 0.0)],
    ///     line_string![(x: 5.0, y: 0.0), (x: 5.0, y: 1.0)],
    /// ]);
    /// let id = b.push_multi_line_string(&m);
    /// let hit = b.build()?.nearest([6.0, 0.5]).unwrap();
    /// assert_eq!((hit.feature, hit.part), (id, 1));
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub fn push_multi_line_string(&mut self, lines: &MultiLineString<f64>) -> usize {
        self.push_multi_polyline(lines.0.iter().map(vertices))
    }

    /// Adds a `Line` (one segment) as a feature (see
    /// [`push_segment`](Self::push_segment)).
    ///
    /// ```
    /// use geo_types::{coord, Line};
    /// let mut b = segdist_index::IndexBuilder::<2>::new();
    /// b.push_geo_line(&Line::new(coord! { x: 0.0, y: 0.0 }, coord! { x: 2.0, y: 0.0 }));
    /// assert_eq!(b.build()?.nearest([1.0, 1.0]).unwrap().t, 0.5);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub fn push_geo_line(&mut self, line: &Line<f64>) -> usize {
        self.push_segment([line.start.x, line.start.y], [line.end.x, line.end.y])
    }
}

impl Index<2> {
    /// An index over `LineString`s, feature `i` being `lines[i]`.
    ///
    /// # Errors
    /// As [`IndexBuilder::build`]: a line of fewer than two points, or a
    /// coordinate that is not finite.
    ///
    /// ```
    /// use geo_types::line_string;
    /// let roads = segdist_index::Index::from_line_strings(&[
    ///     line_string![(x: 0.0, y: 0.0), (x: 10.0, y: 0.0)],
    ///     line_string![(x: 0.0, y: 5.0), (x: 10.0, y: 5.0)],
    /// ])?;
    /// assert_eq!(roads.nearest([3.0, 4.0]).unwrap().feature, 1);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    pub fn from_line_strings(lines: &[LineString<f64>]) -> Result<Self, BuildError> {
        let mut b = IndexBuilder::new();
        for l in lines {
            b.push_line_string(l);
        }
        b.build()
    }
}

impl TryFrom<&LineString<f64>> for Polyline<2> {
    type Error = BuildError;

    /// A polyline through the `LineString`'s points.
    ///
    /// ```
    /// use geo_types::line_string;
    /// use segdist_index::Polyline;
    /// let route = Polyline::try_from(&line_string![(x: 0.0, y: 0.0), (x: 3.0, y: 4.0)])?;
    /// assert_eq!(route.length(), 5.0);
    /// # Ok::<(), segdist_index::BuildError>(())
    /// ```
    fn try_from(line: &LineString<f64>) -> Result<Self, BuildError> {
        Polyline::new(&vertices(line))
    }
}
