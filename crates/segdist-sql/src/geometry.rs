//! Line geometries out of Arrow columns: WKB (binary), WKT (text) and
//! GeoArrow's native line layouts, read through `geo-traits` (the `wkb` and
//! `wkt` crates implement it), into segdist's flat vertex runs.
//!
//! The same rules as `segdist snap`'s readers: LineString, MultiLineString,
//! Polygon and MultiPolygon (rings as lines); every part has at least two
//! vertices; every coordinate is finite; a z is used only when every vertex
//! has one.

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, FixedSizeListArray, GenericListArray, OffsetSizeTrait, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::{exec_err, plan_err, Result};
use geo_traits::{
    CoordTrait, Dimensions, GeometryTrait, GeometryType, LineStringTrait, MultiLineStringTrait, MultiPolygonTrait,
    PolygonTrait,
};

/// Line features, flattened: vertex runs per part, part runs per feature.
///
/// ```
/// let mut lines = segdist_sql::geometry::Lines::new();
/// lines.push(&[vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]], false, &|| "row 0".into())?;
/// assert!(lines.push(&[vec![[0.0, 0.0, 0.0]]], false, &|| "row 1".into()).is_err());
/// assert_eq!((lines.len(), lines.parts(0).next()), (1, Some(0..2)));
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
#[derive(Debug, Default)]
pub struct Lines {
    /// `[x, y, z]` (z is 0 where absent).
    pub vertices: Vec<[f64; 3]>,
    /// First vertex of every part, then the number of vertices.
    pub part_start: Vec<usize>,
    /// First part of every feature, then the number of parts.
    pub feature_start: Vec<usize>,
    /// Every vertex had a z.
    pub has_z: bool,
}

impl Lines {
    /// No features yet.
    pub fn new() -> Lines {
        Lines { vertices: Vec::new(), part_start: vec![0], feature_start: vec![0], has_z: true }
    }

    /// The number of features.
    pub fn len(&self) -> usize {
        self.feature_start.len() - 1
    }

    /// No features.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The parts of feature `f`, as vertex ranges.
    pub fn parts(&self, f: usize) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        (self.feature_start[f]..self.feature_start[f + 1]).map(|q| self.part_start[q]..self.part_start[q + 1])
    }

    /// Appends one feature made of `parts`; `place` names it in errors.
    /// Nothing is appended when an error is returned.
    pub fn push(&mut self, parts: &[Vec<[f64; 3]>], has_z: bool, place: &dyn Fn() -> String) -> Result<()> {
        for (k, part) in parts.iter().enumerate() {
            if part.len() < 2 {
                return exec_err!("{}: part {k} has {} vertex(es), a line needs at least 2", place(), part.len());
            }
            if let Some((v, c)) = part.iter().enumerate().find(|(_, c)| !c.iter().all(|x| x.is_finite())) {
                return exec_err!("{}: part {k}, vertex {v}: coordinate {:?} is not finite", place(), c);
            }
        }
        for part in parts {
            self.vertices.extend_from_slice(part);
            self.part_start.push(self.vertices.len());
        }
        self.has_z &= has_z;
        self.feature_start.push(self.part_start.len() - 1);
        Ok(())
    }
}

/// How a column holds its geometries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Well-known binary (GeoParquet's default).
    Wkb,
    /// Well-known text.
    Wkt,
    /// GeoArrow's native layout: a list of coordinates (LineString) or a
    /// list of lists (MultiLineString); coordinates as a struct of x, y(, z)
    /// or a fixed-size list of 2 or 3 values.
    GeoArrow,
}

/// The encoding of a geometry column of type `t`, or a planning error.
///
/// ```
/// use datafusion::arrow::datatypes::DataType;
/// use segdist_sql::geometry::{encoding, Encoding};
///
/// assert_eq!(encoding("geometry", &DataType::Binary)?, Encoding::Wkb);
/// assert!(encoding("geometry", &DataType::Int64).is_err());
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
pub fn encoding(column: &str, t: &DataType) -> Result<Encoding> {
    match t {
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Ok(Encoding::Wkb),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Ok(Encoding::Wkt),
        DataType::List(_) | DataType::LargeList(_) => Ok(Encoding::GeoArrow),
        // A column of NULLs only (what CSV inference makes of an empty one).
        DataType::Null => Ok(Encoding::Wkt),
        other => plan_err!(
            "segdist: geometry column \"{column}\" is {other}; expected WKB (binary), WKT (text) or a GeoArrow line list"
        ),
    }
}

/// A geometry's parts, each a run of `[x, y, z]`, and whether every vertex
/// had a z (see [`read`]).
pub type Geometry = (Vec<Vec<[f64; 3]>>, bool);

/// Reads one geometry, or `None` for NULL. `place` names the row in errors.
///
/// ```
/// use std::sync::Arc;
/// use datafusion::arrow::array::{ArrayRef, StringArray};
///
/// let col: ArrayRef = Arc::new(StringArray::from(vec![Some("MULTILINESTRING Z((0 0 1, 1 1 1), (2 2 5, 3 3 5))"), None]));
/// let (parts, has_z) = segdist_sql::geometry::read(&col, 0, &|| "row 0".into())?.unwrap();
/// assert_eq!((parts.len(), parts[1][0], has_z), (2, [2.0, 2.0, 5.0], true));
/// assert!(segdist_sql::geometry::read(&col, 1, &|| "row 1".into())?.is_none());
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
pub fn read(col: &ArrayRef, row: usize, place: &dyn Fn() -> String) -> Result<Option<Geometry>> {
    if col.is_null(row) || col.data_type() == &DataType::Null {
        return Ok(None);
    }
    let mut out = Parts::default();
    match col.data_type() {
        DataType::Binary => out.wkb(col.as_binary::<i32>().value(row), place)?,
        DataType::LargeBinary => out.wkb(col.as_binary::<i64>().value(row), place)?,
        DataType::BinaryView => out.wkb(col.as_binary_view().value(row), place)?,
        DataType::Utf8 => out.wkt(col.as_string::<i32>().value(row), place)?,
        DataType::LargeUtf8 => out.wkt(col.as_string::<i64>().value(row), place)?,
        DataType::Utf8View => out.wkt(col.as_string_view().value(row), place)?,
        DataType::List(_) => out.geoarrow(&col.as_list::<i32>().value(row), place)?,
        DataType::LargeList(_) => out.geoarrow(&col.as_list::<i64>().value(row), place)?,
        other => return exec_err!("{}: a geometry cannot be {other}", place()),
    }
    Ok(Some((out.parts, out.has_z)))
}

/// Parts being read.
struct Parts {
    parts: Vec<Vec<[f64; 3]>>,
    has_z: bool,
}

impl Default for Parts {
    fn default() -> Self {
        Parts { parts: Vec::new(), has_z: true }
    }
}

impl Parts {
    fn wkb(&mut self, buf: &[u8], place: &dyn Fn() -> String) -> Result<()> {
        match wkb::reader::read_wkb(buf) {
            Ok(g) => self.geometry(&g, place),
            Err(e) => exec_err!("{}: not WKB: {e}", place()),
        }
    }

    fn wkt(&mut self, text: &str, place: &dyn Fn() -> String) -> Result<()> {
        match text.parse::<wkt::Wkt<f64>>() {
            Ok(g) => self.geometry(&g, place),
            Err(e) => exec_err!("{}: not WKT: {e}", place()),
        }
    }

    fn geometry(&mut self, g: &impl GeometryTrait<T = f64>, place: &dyn Fn() -> String) -> Result<()> {
        match g.as_type() {
            GeometryType::LineString(l) => self.line(l),
            GeometryType::MultiLineString(m) => m.line_strings().for_each(|l| self.line(&l)),
            GeometryType::Polygon(p) => self.polygon(p),
            GeometryType::MultiPolygon(m) => m.polygons().for_each(|p| self.polygon(&p)),
            GeometryType::Point(_) => return exec_err!("{}: a POINT where lines are expected", place()),
            GeometryType::MultiPoint(_) => return exec_err!("{}: a MULTIPOINT where lines are expected", place()),
            _ => return exec_err!("{}: not a line, polygon or multi- of them", place()),
        }
        Ok(())
    }

    fn polygon(&mut self, p: &impl PolygonTrait<T = f64>) {
        if let Some(r) = p.exterior() {
            self.line(&r);
        }
        p.interiors().for_each(|r| self.line(&r));
    }

    fn line(&mut self, l: &impl LineStringTrait<T = f64>) {
        let part = l
            .coords()
            .map(|c| {
                let z = matches!(c.dim(), Dimensions::Xyz | Dimensions::Xyzm);
                self.has_z &= z;
                [c.x(), c.y(), if z { c.nth_or_panic(2) } else { 0.0 }]
            })
            .collect();
        self.parts.push(part);
    }

    /// One GeoArrow geometry: a list of coordinates or of lists of them.
    fn geoarrow(&mut self, v: &ArrayRef, place: &dyn Fn() -> String) -> Result<()> {
        match v.data_type() {
            DataType::List(_) => self.geoarrow_parts(v.as_list::<i32>(), place),
            DataType::LargeList(_) => self.geoarrow_parts(v.as_list::<i64>(), place),
            _ => {
                let part = coords(v, place)?;
                self.parts.push(part.0);
                self.has_z &= part.1;
                Ok(())
            }
        }
    }

    fn geoarrow_parts<O: OffsetSizeTrait>(
        &mut self,
        l: &GenericListArray<O>,
        place: &dyn Fn() -> String,
    ) -> Result<()> {
        for i in 0..l.len() {
            let (part, z) = coords(&l.value(i), place)?;
            self.parts.push(part);
            self.has_z &= z;
        }
        Ok(())
    }
}

/// GeoArrow coordinates: a struct of x, y(, z) or fixed-size lists of 2 or 3.
fn coords(v: &ArrayRef, place: &dyn Fn() -> String) -> Result<(Vec<[f64; 3]>, bool)> {
    let f64s = |a: &ArrayRef| -> Result<Vec<f64>> {
        let a = datafusion::arrow::compute::cast(a, &DataType::Float64)?;
        if a.null_count() > 0 {
            return exec_err!("{}: a NULL coordinate", place());
        }
        Ok(a.as_primitive::<Float64Type>().values().to_vec())
    };
    match v.data_type() {
        DataType::Struct(_) => {
            let s: &StructArray = v.as_struct();
            let col = |n: &str| s.column_by_name(n).map(f64s).transpose();
            let (Some(x), Some(y)) = (col("x")?, col("y")?) else {
                return exec_err!("{}: GeoArrow coordinates need fields x and y", place());
            };
            let z = col("z")?;
            let pts = (0..x.len()).map(|i| [x[i], y[i], z.as_ref().map_or(0.0, |z| z[i])]).collect();
            Ok((pts, z.is_some()))
        }
        DataType::FixedSizeList(_, n @ (2 | 3)) => {
            let l: &FixedSizeListArray = v.as_fixed_size_list();
            let n = *n as usize;
            let flat = f64s(l.values())?;
            let start = l.value_offset(0) as usize;
            let pts = (0..l.len())
                .map(|i| {
                    let c = &flat[start + i * n..start + (i + 1) * n];
                    [c[0], c[1], if n == 3 { c[2] } else { 0.0 }]
                })
                .collect();
            Ok((pts, n == 3))
        }
        other => exec_err!("{}: GeoArrow coordinates cannot be {other}", place()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Array, ArrayRef, FixedSizeListArray, Float64Array, ListArray, StructArray};
    use datafusion::arrow::buffer::OffsetBuffer;
    use datafusion::arrow::datatypes::{DataType, Field};

    use super::read;

    #[test]
    fn geoarrow_structs_and_fixed_size_lists_read_as_lines() {
        // LineString as a list of {x, y, z} structs: one row of 3 vertices.
        let f = |n: &str| Arc::new(Field::new(n, DataType::Float64, false));
        let xs: ArrayRef = Arc::new(Float64Array::from(vec![0.0, 1.0, 2.0]));
        let ys: ArrayRef = Arc::new(Float64Array::from(vec![5.0, 6.0, 7.0]));
        let zs: ArrayRef = Arc::new(Float64Array::from(vec![9.0, 9.0, 9.0]));
        let coords = StructArray::from(vec![(f("x"), xs), (f("y"), ys), (f("z"), zs)]);
        let item = Arc::new(Field::new("vertices", coords.data_type().clone(), false));
        let col: ArrayRef = Arc::new(ListArray::new(item, OffsetBuffer::from_lengths([3]), Arc::new(coords), None));
        let (parts, has_z) = read(&col, 0, &|| "row 0".into()).unwrap().unwrap();
        assert_eq!((parts, has_z), (vec![vec![[0.0, 5.0, 9.0], [1.0, 6.0, 9.0], [2.0, 7.0, 9.0]]], true));

        // MultiLineString as a list of lists of [x, y]: two parts of 2.
        let flat = Float64Array::from(vec![0.0, 0.0, 1.0, 0.0, 5.0, 5.0, 6.0, 5.0]);
        let xy = FixedSizeListArray::new(Arc::new(Field::new("xy", DataType::Float64, false)), 2, Arc::new(flat), None);
        let inner_item = Arc::new(Field::new("vertices", xy.data_type().clone(), false));
        let inner = ListArray::new(inner_item, OffsetBuffer::from_lengths([2, 2]), Arc::new(xy), None);
        let outer_item = Arc::new(Field::new("parts", inner.data_type().clone(), false));
        let col: ArrayRef =
            Arc::new(ListArray::new(outer_item, OffsetBuffer::from_lengths([2]), Arc::new(inner), None));
        let (parts, has_z) = read(&col, 0, &|| "row 0".into()).unwrap().unwrap();
        assert_eq!(parts, vec![vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], vec![[5.0, 5.0, 0.0], [6.0, 5.0, 0.0]]]);
        assert!(!has_z);
    }
}
