//! segdist's scalar SQL functions: exact point–segment distance, squared
//! distance and closest point (2D and 3D), geodesic distance on WGS84, and
//! linear referencing on line geometries.
//!
//! Every function takes whole Arrow columns and answers a batch at once
//! through segdist's batch layer (the same answers, bit for bit, as the
//! library's scalar methods). The rules, shared by all:
//! - NULL in any argument gives NULL in that row;
//! - a non-finite number (NaN, ±∞) or an invalid geometry is an error
//!   naming the function, the argument and the row, never a wrong row;
//! - integers and `float` are widened to `double`.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryBuilder, Float64Array, StringArray, StringBuilder, StructArray,
};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::datatypes::{DataType, Field, Fields, Float64Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature, Volatility,
};
use segdist::batch::{self, Options, Outputs};
use segdist::Region;

use crate::geometry;

/// Every scalar function segdist-sql registers.
///
/// ```
/// let names: Vec<String> = segdist_sql::functions::all().iter().map(|f| f.name().to_string()).collect();
/// assert!(names.contains(&"segdist_distance".to_string()));
/// ```
pub fn all() -> Vec<Arc<ScalarUDF>> {
    let k = |kind| Arc::new(ScalarUDF::new_from_impl(Kernel::new(kind)));
    vec![
        k(Kind::Distance),
        k(Kind::DistanceSquared),
        k(Kind::ClosestPoint),
        k(Kind::Geodesic),
        k(Kind::LocatePoint),
        k(Kind::InterpolatePoint),
    ]
}

/// Which function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Distance,
    DistanceSquared,
    ClosestPoint,
    Geodesic,
    LocatePoint,
    InterpolatePoint,
}

/// One of segdist's scalar functions.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Kernel {
    kind: Kind,
    signature: Signature,
}

impl Kernel {
    fn new(kind: Kind) -> Kernel {
        let f64s = |n| TypeSignature::Uniform(n, vec![DataType::Float64]);
        let signature = match kind {
            Kind::Distance | Kind::DistanceSquared | Kind::ClosestPoint => {
                Signature::one_of(vec![f64s(6), f64s(9)], Volatility::Immutable)
            }
            Kind::Geodesic => Signature::one_of(vec![f64s(6)], Volatility::Immutable),
            Kind::LocatePoint | Kind::InterpolatePoint => Signature::any(2, Volatility::Immutable),
        };
        Kernel { kind, signature }
    }
}

/// The struct `segdist_closest_point` returns.
fn closest_fields(three_d: bool) -> Fields {
    let f = |n: &str| Field::new(n, DataType::Float64, true);
    let mut v = vec![f("x"), f("y")];
    if three_d {
        v.push(f("z"));
    }
    v.extend([f("t"), f("distance"), Field::new("region", DataType::Utf8, true)]);
    v.into()
}

impl ScalarUDFImpl for Kernel {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Distance => "segdist_distance",
            Kind::DistanceSquared => "segdist_distance_squared",
            Kind::ClosestPoint => "segdist_closest_point",
            Kind::Geodesic => "segdist_geodesic_distance",
            Kind::LocatePoint => "segdist_line_locate_point",
            Kind::InterpolatePoint => "segdist_line_interpolate_point",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::ClosestPoint => DataType::Struct(closest_fields(args.len() == 9)),
            Kind::InterpolatePoint => match args.first() {
                Some(DataType::Binary | DataType::LargeBinary | DataType::BinaryView) => DataType::Binary,
                _ => DataType::Utf8,
            },
            _ => DataType::Float64,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let name = self.name();
        let out = match self.kind {
            Kind::Distance | Kind::DistanceSquared | Kind::ClosestPoint => {
                let cols = numbers(name, &args.args, n)?;
                if cols.cols.len() == 9 {
                    segment::<3>(self.kind, &cols)?
                } else {
                    segment::<2>(self.kind, &cols)?
                }
            }
            Kind::Geodesic => geodesic(name, &numbers(name, &args.args, n)?)?,
            Kind::LocatePoint => locate(name, &args.args, n)?,
            Kind::InterpolatePoint => interpolate(name, &args.args, n)?,
        };
        Ok(ColumnarValue::Array(out))
    }
}

/// Numeric arguments as `f64` columns of `n` rows with their joint
/// validity; an error for a non-finite value in a valid row.
struct Numbers {
    cols: Vec<Float64Array>,
    nulls: Option<NullBuffer>,
}

impl Numbers {
    fn col(&self, i: usize) -> &[f64] {
        self.cols[i].values()
    }
}

fn numbers(name: &str, args: &[ColumnarValue], n: usize) -> Result<Numbers> {
    let mut cols = Vec::with_capacity(args.len());
    let mut nulls: Option<NullBuffer> = None;
    for a in args {
        let a = a.to_array(n)?;
        let a = datafusion::arrow::compute::cast(&a, &DataType::Float64)?;
        let a = a.as_primitive::<Float64Type>().clone();
        nulls = NullBuffer::union(nulls.as_ref(), a.nulls());
        cols.push(a);
    }
    for (k, c) in cols.iter().enumerate() {
        let bad = c
            .values()
            .iter()
            .enumerate()
            .find(|(i, x)| !x.is_finite() && nulls.as_ref().is_none_or(|m| m.is_valid(*i)));
        if let Some((row, x)) = bad {
            return exec_err!("{name}: argument {} is {x} in row {row}; coordinates must be finite", k + 1);
        }
    }
    Ok(Numbers { cols, nulls })
}

fn region_name(r: Region) -> &'static str {
    match r {
        Region::Start => "start",
        Region::Interior => "interior",
        Region::End => "end",
        // Only for non-finite input, which is refused before.
        Region::Undefined => "undefined",
    }
}

/// Point `p` against segment `a → b`, columns `p…, a…, b…`.
fn segment<const D: usize>(kind: Kind, c: &Numbers) -> Result<ArrayRef> {
    let n = c.cols[0].len();
    let cols = |first: usize| -> [&[f64]; D] { std::array::from_fn(|k| c.col(first + k)) };
    let (p, a, b) = (cols(0), cols(D), cols(2 * D));
    let mut value = vec![0.0; n];
    let opts = Options::default();
    let run = |out: Outputs<'_, f64, D>| {
        batch::pairs(a, b, p, out, &opts).map_err(|e| datafusion::error::DataFusionError::Execution(e.to_string()))
    };
    let array: ArrayRef = match kind {
        Kind::Distance => {
            run(Outputs { distance: Some(&mut value), ..Outputs::default() })?;
            Arc::new(Float64Array::new(value.into(), c.nulls.clone()))
        }
        Kind::DistanceSquared => {
            run(Outputs { distance_squared: Some(&mut value), ..Outputs::default() })?;
            Arc::new(Float64Array::new(value.into(), c.nulls.clone()))
        }
        _ => {
            let mut t = vec![0.0; n];
            let mut point = vec![[0.0; D]; n];
            let mut region = vec![Region::Start; n];
            run(Outputs {
                distance: Some(&mut value),
                t: Some(&mut t),
                point: Some(&mut point),
                region: Some(&mut region),
                ..Outputs::default()
            })?;
            let f = |v: Vec<f64>| Arc::new(Float64Array::new(v.into(), c.nulls.clone())) as ArrayRef;
            let mut children: Vec<ArrayRef> = (0..D).map(|k| f(point.iter().map(|q| q[k]).collect())).collect();
            children.push(f(t));
            children.push(f(value));
            let names: StringArray = region
                .iter()
                .enumerate()
                .map(|(i, r)| c.nulls.as_ref().is_none_or(|m| m.is_valid(i)).then(|| region_name(*r)))
                .collect();
            children.push(Arc::new(names));
            Arc::new(StructArray::try_new(closest_fields(D == 3), children, c.nulls.clone())?)
        }
    };
    Ok(array)
}

/// Geodesic distance (metres, WGS84) from `(lon, lat)` to the geodesic
/// `(alon, alat) → (blon, blat)`.
fn geodesic(name: &str, c: &Numbers) -> Result<ArrayRef> {
    use rayon::prelude::*;
    let n = c.cols[0].len();
    let valid = |i: usize| c.nulls.as_ref().is_none_or(|m| m.is_valid(i));
    let d: Vec<Option<f64>> = (0..n)
        .into_par_iter()
        .map(|i| {
            if !valid(i) {
                return Ok(None);
            }
            let v = |k: usize| c.col(k)[i];
            match segdist_geo::geodesic([v(2), v(3)], [v(4), v(5)], [v(0), v(1)]) {
                Some(r) => Ok(Some(r.distance)),
                None => exec_err!("{name}: row {i}: a latitude is outside [-90, 90]"),
            }
        })
        .collect::<Result<_>>()?;
    Ok(Arc::new(Float64Array::from(d)))
}

/// A line argument: one geometry per row, read and checked.
fn line_at(name: &str, col: &ArrayRef, row: usize) -> Result<Option<segdist_index::Polyline<2>>> {
    let place = || format!("{name}: argument 1, row {row}");
    let Some((parts, _)) = geometry::read(col, row, &place)? else {
        return Ok(None);
    };
    if parts.len() != 1 {
        return exec_err!("{}: a LINESTRING is needed, not {} parts", place(), parts.len());
    }
    let v: Vec<[f64; 2]> = parts[0].iter().map(|p| [p[0], p[1]]).collect();
    match segdist_index::Polyline::<2>::new(&v) {
        Ok(l) => Ok(Some(l)),
        Err(e) => exec_err!("{}: {e}", place()),
    }
}

/// A point argument: WKB or WKT POINT, or NULL.
fn point_at(name: &str, col: &ArrayRef, row: usize) -> Result<Option<[f64; 2]>> {
    use geo_traits::{CoordTrait, GeometryTrait, GeometryType, PointTrait};
    if col.is_null(row) {
        return Ok(None);
    }
    fn xy(g: &impl GeometryTrait<T = f64>) -> Option<[f64; 2]> {
        match g.as_type() {
            GeometryType::Point(p) => p.coord().map(|c| [c.x(), c.y()]),
            _ => None,
        }
    }
    let place = format!("{name}: argument 2, row {row}");
    let p = match col.data_type() {
        DataType::Binary => wkb::reader::read_wkb(col.as_binary::<i32>().value(row)).ok().and_then(|g| xy(&g)),
        DataType::LargeBinary => wkb::reader::read_wkb(col.as_binary::<i64>().value(row)).ok().and_then(|g| xy(&g)),
        DataType::Utf8 => col.as_string::<i32>().value(row).parse::<wkt::Wkt<f64>>().ok().and_then(|g| xy(&g)),
        DataType::LargeUtf8 => col.as_string::<i64>().value(row).parse::<wkt::Wkt<f64>>().ok().and_then(|g| xy(&g)),
        DataType::Utf8View => col.as_string_view().value(row).parse::<wkt::Wkt<f64>>().ok().and_then(|g| xy(&g)),
        other => return exec_err!("{place}: a point geometry (WKB or WKT) is needed, not {other}"),
    };
    match p {
        Some(p) if p.iter().all(|x| x.is_finite()) => Ok(Some(p)),
        Some(p) => exec_err!("{place}: coordinate {p:?} is not finite"),
        None => exec_err!("{place}: not a non-empty POINT in WKB or WKT"),
    }
}

/// `segdist_line_locate_point(line, point)`: PostGIS's `ST_LineLocatePoint`.
fn locate(name: &str, args: &[ColumnarValue], n: usize) -> Result<ArrayRef> {
    let point = args[1].to_array(n)?;
    let mut out = Vec::with_capacity(n);
    if let ColumnarValue::Scalar(_) = &args[0] {
        // One line for every row: made once, asked in one batch.
        let line = line_at(name, &args[0].to_array(1)?, 0)?;
        let pts: Vec<Option<[f64; 2]>> = (0..n).map(|i| point_at(name, &point, i)).collect::<Result<_>>()?;
        let Some(line) = line else {
            return Ok(Arc::new(Float64Array::new_null(n)));
        };
        let dense: Vec<[f64; 2]> = pts.iter().map(|p| p.unwrap_or([0.0, 0.0])).collect();
        let hits = line.locate_many(&dense, &segdist_index::QueryOptions::default());
        out.extend(pts.iter().zip(hits).map(|(p, h)| p.and(h).map(|h| h.fraction)));
    } else {
        let lines = args[0].to_array(n)?;
        for i in 0..n {
            let (l, p) = (line_at(name, &lines, i)?, point_at(name, &point, i)?);
            out.push(match (l, p) {
                (Some(l), Some(p)) => l.locate(p).map(|h| h.fraction),
                _ => None,
            });
        }
    }
    Ok(Arc::new(Float64Array::from(out)))
}

/// `segdist_line_interpolate_point(line, fraction)`: PostGIS's
/// `ST_LineInterpolatePoint`; the point in the line's encoding.
fn interpolate(name: &str, args: &[ColumnarValue], n: usize) -> Result<ArrayRef> {
    let lines = args[0].to_array(n)?;
    let fr = datafusion::arrow::compute::cast(&args[1].to_array(n)?, &DataType::Float64)
        .map_err(|_| datafusion::error::DataFusionError::Execution(format!("{name}: argument 2 must be a number")))?;
    let fr = fr.as_primitive::<Float64Type>();
    let binary = matches!(lines.data_type(), DataType::Binary | DataType::LargeBinary | DataType::BinaryView);
    let mut points = Vec::with_capacity(n);
    for i in 0..n {
        if fr.is_null(i) {
            points.push(None);
            continue;
        }
        let f = fr.value(i);
        if !(0.0..=1.0).contains(&f) {
            return exec_err!("{name}: row {i}: the fraction {f} is not in [0, 1]");
        }
        let Some(line) = line_at(name, &lines, i)? else {
            points.push(None);
            continue;
        };
        points.push(line.point_at_fraction(f));
    }
    if binary {
        let mut b = BinaryBuilder::new();
        for p in points {
            match p {
                Some(p) => {
                    let mut buf = Vec::with_capacity(21);
                    let pt = wkt::types::Point::from_coord(wkt::types::Coord { x: p[0], y: p[1], z: None, m: None });
                    wkb::writer::write_point(&mut buf, &pt, &Default::default())
                        .map_err(|e| datafusion::error::DataFusionError::Execution(format!("{name}: {e}")))?;
                    b.append_value(buf);
                }
                None => b.append_null(),
            }
        }
        Ok(Arc::new(b.finish()))
    } else {
        let mut b = StringBuilder::new();
        for p in points {
            match p {
                Some(p) => b.append_value(format!("POINT({} {})", p[0], p[1])),
                None => b.append_null(),
            }
        }
        Ok(Arc::new(b.finish()))
    }
}
