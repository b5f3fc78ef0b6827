//! Every scalar function against the library, bit for bit, and the rules
//! shared by all: NULL in gives NULL out; non-finite numbers and bad
//! geometries are errors, never rows.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryArray, Float64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use segdist::{Segment2, Segment3};

/// A tiny deterministic generator (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` rows of `cols` random numbers near UTM-sized coordinates, some rows
/// with tiny offsets (where the textbook formula loses its digits).
fn table(ctx: &SessionContext, name: &str, cols: &[&str], n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut r = Rng(seed);
    let mut data = vec![Vec::with_capacity(n); cols.len()];
    let dims = if cols.len() == 9 { 3 } else { 2 };
    let base = [500_000.0, 6_700_000.0, 100.0];
    for i in 0..n {
        for (c, col) in data.iter_mut().enumerate() {
            let b = base[c % dims];
            let scale = if i % 3 == 0 { 1e-6 } else { 50.0 };
            col.push(b + (r.next() - 0.5) * scale);
        }
    }
    let schema =
        Arc::new(Schema::new(cols.iter().map(|c| Field::new(*c, DataType::Float64, false)).collect::<Vec<_>>()));
    let arrays: Vec<ArrayRef> = data.iter().map(|d| Arc::new(Float64Array::from(d.clone())) as ArrayRef).collect();
    let batch = RecordBatch::try_new(Arc::clone(&schema), arrays).unwrap();
    ctx.register_table(name, Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap())).unwrap();
    data
}

async fn column(ctx: &SessionContext, sql: &str) -> ArrayRef {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let cols: Vec<ArrayRef> = batches.iter().map(|b| Arc::clone(b.column(0))).collect();
    datafusion::arrow::compute::concat(&cols.iter().map(|a| a.as_ref()).collect::<Vec<_>>()).unwrap()
}

async fn error(ctx: &SessionContext, sql: &str) -> String {
    match ctx.sql(sql).await {
        Err(e) => e.to_string(),
        Ok(df) => df.collect().await.expect_err(sql).to_string(),
    }
}

fn f64s(a: &ArrayRef) -> Vec<f64> {
    a.as_primitive::<Float64Type>().values().to_vec()
}

#[tokio::test]
async fn distance_squared_and_closest_point_2d_equal_the_library_bit_for_bit() {
    let ctx = segdist_sql::context();
    let c = table(&ctx, "q", &["px", "py", "ax", "ay", "bx", "by"], 3000, 1);
    let args = "px, py, ax, ay, bx, by";
    let d = f64s(&column(&ctx, &format!("SELECT segdist_distance({args}) FROM q")).await);
    let d2 = f64s(&column(&ctx, &format!("SELECT segdist_distance_squared({args}) FROM q")).await);
    let cp = column(&ctx, &format!("SELECT segdist_closest_point({args}) FROM q")).await;
    let cp = cp.as_struct();
    let (x, y, t, cd) = (f64s(cp.column(0)), f64s(cp.column(1)), f64s(cp.column(2)), f64s(cp.column(3)));
    let region = cp.column(4).as_string::<i32>();
    for i in 0..d.len() {
        let s = Segment2::new([c[2][i], c[3][i]], [c[4][i], c[5][i]]);
        let p = [c[0][i], c[1][i]];
        let want = s.closest_point(p);
        assert_eq!(d[i].to_bits(), s.distance(p).to_bits(), "row {i}");
        assert_eq!(d2[i].to_bits(), s.distance_squared(p).to_bits(), "row {i}");
        assert_eq!([x[i].to_bits(), y[i].to_bits()], want.point.map(f64::to_bits), "row {i}");
        assert_eq!(t[i].to_bits(), want.t.to_bits(), "row {i}");
        assert_eq!(cd[i].to_bits(), want.distance.to_bits(), "row {i}");
        assert_eq!(region.value(i), format!("{:?}", want.region).to_lowercase(), "row {i}");
    }
}

#[tokio::test]
async fn the_3d_forms_equal_the_library_bit_for_bit() {
    let ctx = segdist_sql::context();
    let names = ["px", "py", "pz", "ax", "ay", "az", "bx", "by", "bz"];
    let c = table(&ctx, "q", &names, 2000, 2);
    let args = names.join(", ");
    let d = f64s(&column(&ctx, &format!("SELECT segdist_distance({args}) FROM q")).await);
    let cp = column(&ctx, &format!("SELECT segdist_closest_point({args}) FROM q")).await;
    let z = f64s(cp.as_struct().column_by_name("z").unwrap());
    for i in 0..d.len() {
        let v = |k: usize| [c[k][i], c[k + 1][i], c[k + 2][i]];
        let s = Segment3::new(v(3), v(6));
        assert_eq!(d[i].to_bits(), s.distance(v(0)).to_bits(), "row {i}");
        assert_eq!(z[i].to_bits(), s.closest_point(v(0)).point[2].to_bits(), "row {i}");
    }
}

#[tokio::test]
async fn geodesic_distance_equals_segdist_geo() {
    let ctx = segdist_sql::context();
    let rows = [
        (24.94, 60.17, 24.93, 60.16, 24.95, 60.18),
        (0.5, 0.001, 0.0, 0.0, 1.0, 0.0),
        (179.9, 10.0, 179.5, 10.0, -179.5, 10.2),
    ];
    for (lon, lat, alon, alat, blon, blat) in rows {
        let sql = format!("SELECT segdist_geodesic_distance({lon}, {lat}, {alon}, {alat}, {blon}, {blat})");
        let got = f64s(&column(&ctx, &sql).await)[0];
        let want = segdist_geo::geodesic([alon, alat], [blon, blat], [lon, lat]).unwrap().distance;
        assert_eq!(got.to_bits(), want.to_bits(), "{sql}");
    }
    assert!(error(&ctx, "SELECT segdist_geodesic_distance(0, 91, 0, 0, 1, 0)").await.contains("latitude"));
}

#[tokio::test]
async fn null_in_gives_null_out_in_that_row_only() {
    let ctx = segdist_sql::context();
    let sql = "SELECT segdist_distance(px, 1.0, 0.0, 0.0, 2.0, 0.0) FROM (VALUES (1.0), (NULL), (3.0)) AS t(px)";
    let d = column(&ctx, sql).await;
    let d = d.as_primitive::<Float64Type>();
    assert_eq!((d.is_null(0), d.is_null(1), d.is_null(2)), (false, true, false));
    assert_eq!((d.value(0), d.value(2)), (1.0, 2.0f64.sqrt()));
    let cp = column(&ctx, &sql.replace("segdist_distance", "segdist_closest_point")).await;
    assert!(cp.is_null(1) && !cp.is_null(0));
    let g = column(&ctx, "SELECT segdist_geodesic_distance(NULL, 0, 0, 0, 1, 0)").await;
    assert!(g.is_null(0));
}

#[tokio::test]
async fn non_finite_numbers_are_errors_naming_argument_and_row() {
    let ctx = segdist_sql::context();
    let e = error(
        &ctx,
        "SELECT segdist_distance(px, 1.0, 0.0, 0.0, 2.0, 0.0) FROM (VALUES (1.0), ('NaN'::double)) AS t(px)",
    )
    .await;
    assert!(e.contains("segdist_distance: argument 1 is NaN in row 1"), "{e}");
    let e = error(&ctx, "SELECT segdist_distance_squared(0, 0, 0, 0, 'inf'::double, 0)").await;
    assert!(e.contains("argument 5 is inf"), "{e}");
}

#[tokio::test]
async fn wrong_argument_counts_and_types_are_planning_errors() {
    let ctx = segdist_sql::context();
    let e = error(&ctx, "SELECT segdist_distance(1, 2, 3)").await;
    assert!(e.contains("segdist_distance"), "{e}");
    let e = error(&ctx, "SELECT segdist_distance('a', 0, 0, 0, 1, 0)").await;
    assert!(!e.is_empty());
}

#[tokio::test]
async fn line_locate_and_interpolate_match_the_polyline_in_wkt_and_wkb() {
    let ctx = segdist_sql::context();
    let line = segdist_index::Polyline::<2>::new(&[[0.0, 0.0], [3.0, 0.0], [3.0, 4.0]]).unwrap();
    let wkt = "LINESTRING(0 0, 3 0, 3 4)";
    let f = f64s(&column(&ctx, &format!("SELECT segdist_line_locate_point('{wkt}', 'POINT(4 2)')")).await)[0];
    assert_eq!(f.to_bits(), line.locate([4.0, 2.0]).unwrap().fraction.to_bits());
    assert_eq!(f, 5.0 / 7.0);
    let p = column(&ctx, &format!("SELECT segdist_line_interpolate_point('{wkt}', 0.5)")).await;
    let want = line.point_at_fraction(0.5).unwrap();
    assert_eq!(p.as_string::<i32>().value(0), format!("POINT({} {})", want[0], want[1]));

    // WKB in (as GeoParquet stores it), WKB out; one line against many points.
    let mut wkb_line = Vec::new();
    let ls =
        wkt::types::LineString::from_coords([(0.0, 0.0), (3.0, 0.0), (3.0, 4.0)].map(|(x, y)| wkt::types::Coord {
            x,
            y,
            z: None,
            m: None,
        }))
        .unwrap();
    wkb::writer::write_line_string(&mut wkb_line, &ls, &Default::default()).unwrap();
    let pts: Vec<Vec<u8>> = [[1.0, 1.0], [2.9, 3.5], [-1.0, 0.0]]
        .iter()
        .map(|p| {
            let mut b = Vec::new();
            let pt = wkt::types::Point::from_coord(wkt::types::Coord { x: p[0], y: p[1], z: None, m: None });
            wkb::writer::write_point(&mut b, &pt, &Default::default()).unwrap();
            b
        })
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("line", DataType::Binary, false),
        Field::new("pt", DataType::Binary, true),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(wkb_line.as_slice(), 3))),
            Arc::new(BinaryArray::from_iter_values(pts.iter().map(|b| b.as_slice()))),
        ],
    )
    .unwrap();
    ctx.register_table("g", Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap())).unwrap();
    let f = f64s(&column(&ctx, "SELECT segdist_line_locate_point(line, pt) FROM g").await);
    for (i, p) in [[1.0, 1.0], [2.9, 3.5], [-1.0, 0.0]].iter().enumerate() {
        assert_eq!(f[i].to_bits(), line.locate(*p).unwrap().fraction.to_bits(), "point {i}");
    }
    let out = column(&ctx, "SELECT segdist_line_interpolate_point(line, 0.25) FROM g").await;
    assert_eq!(out.data_type(), &DataType::Binary);
    let g = wkb::reader::read_wkb(out.as_binary::<i32>().value(0)).unwrap();
    use geo_traits::{CoordTrait, GeometryTrait, GeometryType, PointTrait};
    let GeometryType::Point(p) = g.as_type() else { panic!("not a point") };
    let c = p.coord().unwrap();
    assert_eq!([c.x(), c.y()], line.point_at_fraction(0.25).unwrap());
}

#[tokio::test]
async fn bad_geometry_and_fractions_are_errors() {
    let ctx = segdist_sql::context();
    let e = error(&ctx, "SELECT segdist_line_locate_point('LINESTRING(0 0, 1', 'POINT(0 0)')").await;
    assert!(e.contains("argument 1, row 0: not WKT"), "{e}");
    let e = error(&ctx, "SELECT segdist_line_locate_point('POINT(0 0)', 'POINT(0 0)')").await;
    assert!(e.contains("a POINT where lines are expected"), "{e}");
    let e = error(&ctx, "SELECT segdist_line_locate_point('LINESTRING(0 0, 1 1)', 'LINESTRING(0 0, 1 1)')").await;
    assert!(e.contains("argument 2, row 0: not a non-empty POINT"), "{e}");
    let e = error(&ctx, "SELECT segdist_line_interpolate_point('LINESTRING(0 0, 1 1)', 1.5)").await;
    assert!(e.contains("not in [0, 1]"), "{e}");
    let n = column(&ctx, "SELECT segdist_line_interpolate_point(CAST(NULL AS VARCHAR), 0.5)").await;
    assert!(n.is_null(0));
}
