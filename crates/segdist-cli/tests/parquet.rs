//! Parquet and GeoParquet in `snap`: x/y columns, WKB with and without
//! GeoParquet metadata, GeoArrow points, the CRS deciding the mode, kept
//! columns with their types, GeoParquet output read back against the CSV
//! output bit for bit, standard input and output, and bad files (one error
//! naming the row, nothing written). GeoParquet written by geopandas is
//! tested from Python (crates/segdist-py/tests/test_parquet.py).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, FixedSizeListBuilder, Float64Builder};
use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_segdist")).args(args).current_dir(dir).stdin(Stdio::null()).output().unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn err(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Writes `columns` as a Parquet file, with GeoParquet metadata `geo`.
fn write(path: &Path, columns: Vec<(&str, ArrayRef)>, geo: Option<&str>) {
    let fields: Vec<Field> = columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), true)).collect();
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns.into_iter().map(|(_, a)| a).collect()).unwrap();
    let kv = geo.map(|g| vec![parquet::file::metadata::KeyValue::new("geo".into(), g.to_string())]);
    let props = WriterProperties::builder().set_key_value_metadata(kv).build();
    let mut w = ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

fn wkb_point(x: f64, y: f64) -> Vec<u8> {
    let mut b = vec![1];
    b.extend(1u32.to_le_bytes());
    b.extend(x.to_le_bytes());
    b.extend(y.to_le_bytes());
    b
}

fn wkb_line(points: &[(f64, f64)]) -> Vec<u8> {
    let mut b = vec![1];
    b.extend(2u32.to_le_bytes());
    b.extend((points.len() as u32).to_le_bytes());
    for (x, y) in points {
        b.extend(x.to_le_bytes());
        b.extend(y.to_le_bytes());
    }
    b
}

/// Lines and points as CSV, and as Parquet in several encodings.
struct Data {
    dir: tempfile::TempDir,
}

const LINES: [(&str, &[(f64, f64)]); 3] = [
    ("A", &[(24.90, 60.16), (24.96, 60.17)]),
    ("B", &[(24.90, 60.20), (24.95, 60.21), (24.99, 60.19)]),
    ("C", &[(24.92, 60.14), (24.93, 60.15)]),
];
const POINTS: [(i64, &str, f64, f64); 5] = [
    (10, "a", 24.93, 60.18),
    (11, "b, with a comma", 24.91, 60.15),
    (12, "c", 24.97, 60.205),
    (13, "d", 24.925, 60.141),
    (14, "e", 24.99, 60.10),
];

fn data() -> Data {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut lines = String::from("id,lon,lat\n");
    for (id, pts) in LINES {
        for (x, y) in pts {
            lines += &format!("{id},{x},{y}\n");
        }
    }
    std::fs::write(d.join("lines.csv"), lines).unwrap();
    let mut points = String::from("id,note,lon,lat\n");
    for (fix, note, x, y) in POINTS {
        points += &format!("{fix},\"{note}\",{x},{y}\n");
    }
    std::fs::write(d.join("points.csv"), points).unwrap();
    // Points: x/y columns by name; WKB without metadata; GeoArrow points.
    let fix: ArrayRef = Arc::new(Int64Array::from(POINTS.map(|p| p.0).to_vec()));
    let note: ArrayRef = Arc::new(StringArray::from(POINTS.map(|p| p.1).to_vec()));
    let lon: ArrayRef = Arc::new(Float64Array::from(POINTS.map(|p| p.2).to_vec()));
    let lat: ArrayRef = Arc::new(Float64Array::from(POINTS.map(|p| p.3).to_vec()));
    write(
        &d.join("points_xy.parquet"),
        vec![("id", fix.clone()), ("note", note.clone()), ("lon", lon), ("lat", lat)],
        None,
    );
    let mut wkb = BinaryBuilder::new();
    for p in POINTS {
        wkb.append_value(wkb_point(p.2, p.3));
    }
    let wkb: ArrayRef = Arc::new(wkb.finish());
    write(&d.join("points_wkb.parquet"), vec![("id", fix.clone()), ("note", note.clone()), ("geometry", wkb)], None);
    let mut ga = FixedSizeListBuilder::new(Float64Builder::new(), 2);
    for p in POINTS {
        ga.values().append_value(p.2);
        ga.values().append_value(p.3);
        ga.append(true);
    }
    let ga: ArrayRef = Arc::new(ga.finish());
    let geo = r#"{"version":"1.1.0","primary_column":"pos","columns":{"pos":{"encoding":"point","geometry_types":["Point"]}}}"#;
    write(&d.join("points_ga.parquet"), vec![("id", fix), ("note", note), ("pos", ga)], Some(geo));
    // Lines: WKB with GeoParquet metadata (no crs: lon/lat).
    let ids: ArrayRef = Arc::new(StringArray::from(LINES.map(|l| l.0).to_vec()));
    let mut wkb = BinaryBuilder::new();
    for (_, pts) in LINES {
        wkb.append_value(wkb_line(pts));
    }
    let wkb: ArrayRef = Arc::new(wkb.finish());
    let geo = r#"{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":["LineString"]}}}"#;
    write(&d.join("lines.parquet"), vec![("id", ids.clone()), ("geometry", wkb.clone())], Some(geo));
    // The same with a projected CRS: planar.
    let geo = r#"{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","crs":{"id":{"authority":"EPSG","code":3067}}}}}"#;
    write(&d.join("lines_tm.parquet"), vec![("id", ids), ("geometry", wkb)], Some(geo));
    Data { dir }
}

#[test]
fn every_encoding_gives_the_csv_answers_bit_for_bit() {
    let data = data();
    let d = data.dir.path();
    let csv = ok(&run(d, &["snap", "-q", "--points", "points.csv", "--lines", "lines.csv"]));
    assert!(csv.starts_with("id,note,input_lon,input_lat,point_id,line_id,part,segment,distance_m,"), "{csv}");
    let none = |p: &str, l: &str| ok(&run(d, &["snap", "-q", "--keep", "none", "--points", p, "--lines", l]));
    let want = none("points.csv", "lines.csv");
    for p in ["points_xy.parquet", "points_wkb.parquet", "points_ga.parquet"] {
        for l in ["lines.csv", "lines.parquet"] {
            let o = run(d, &["snap", "--keep", "none", "--geographic", "--points", p, "--lines", l]);
            assert_eq!(ok(&o), want, "{p} {l}");
        }
    }
    // The CRS (absent: lon/lat) and the names lon/lat make it geographic
    // without being told.
    let o = run(d, &["snap", "--keep", "none", "--points", "points_xy.parquet", "--lines", "lines.parquet"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("geographic"));
    assert_eq!(ok(&o), want);
    // A kept WKT column named geometry is not the output's geometry.
    let wkt = "id,geometry\n1,POINT (24.93 60.18)\n";
    std::fs::write(d.join("points_wkt.csv"), wkt).unwrap();
    ok(&run(d, &["snap", "-q", "--points", "points_wkt.csv", "--lines", "lines.parquet", "-o", "wkt.parquet"]));
    let (names, rows) = parquet_rows(&d.join("wkt.parquet"));
    assert_eq!(names[..3], ["id", "input_geometry", "point_id"]);
    assert_eq!(rows[0][1].as_deref(), Some("POINT (24.93 60.18)"));
    assert_eq!(names.iter().filter(|n| *n == "geometry").count(), 1);
    // Kept columns: numbers stay numbers in GeoJSON; the WKB is not kept.
    let o = run(d, &["snap", "-q", "--points", "points_wkb.parquet", "--lines", "lines.parquet"]);
    assert!(ok(&o).starts_with("id,note,point_id,line_id,"), "{}", ok(&o));
    let o = run(
        d,
        &["snap", "-q", "--points", "points_wkb.parquet", "--lines", "lines.parquet", "--output-format", "geojson"],
    );
    assert!(ok(&o).contains(r#""properties":{"id":11,"note":"b, with a comma","point_id":"11","#), "{}", ok(&o));
}

#[test]
fn a_projected_crs_is_planar_and_passes_to_the_output() {
    let data = data();
    let d = data.dir.path();
    let o = run(d, &["snap", "-q", "--keep", "none", "--points", "points_wkb.parquet", "--lines", "lines_tm.parquet"]);
    let planar = ok(&run(
        d,
        &["snap", "-q", "--planar", "--keep", "none", "--points", "points_wkb.parquet", "--lines", "lines.parquet"],
    ));
    assert_eq!(ok(&o), planar);
    assert!(planar.starts_with("point_id,line_id,part,segment,distance,x,y,"));
    ok(&run(d, &["snap", "-q", "--points", "points_wkb.parquet", "--lines", "lines_tm.parquet", "-o", "out.parquet"]));
    let geo = geo_metadata(&d.join("out.parquet"));
    assert_eq!(geo["columns"]["geometry"]["crs"]["id"]["code"], 3067);
}

fn geo_metadata(path: &Path) -> serde_json::Value {
    use parquet::file::reader::FileReader;
    let r = parquet::file::reader::SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let kv = r.metadata().file_metadata().key_value_metadata().unwrap().clone();
    serde_json::from_str(kv.iter().find(|k| k.key == "geo").unwrap().value.as_ref().unwrap()).unwrap()
}

/// The rows of a Parquet file as text, as the CSV output has them.
fn parquet_rows(path: &Path) -> (Vec<String>, Vec<Vec<Option<String>>>) {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap()).unwrap();
    let names: Vec<String> = b.schema().fields().iter().map(|f| f.name().clone()).collect();
    let mut rows = Vec::new();
    for batch in b.build().unwrap() {
        let batch = batch.unwrap();
        for r in 0..batch.num_rows() {
            let row = batch
                .columns()
                .iter()
                .map(|c| {
                    use arrow_array::cast::AsArray;
                    use arrow_array::Array;
                    if c.is_null(r) {
                        return None;
                    }
                    Some(match c.data_type() {
                        DataType::Float64 => ryu::Buffer::new()
                            .format(c.as_primitive::<arrow_array::types::Float64Type>().value(r))
                            .to_string(),
                        DataType::Binary => format!("{:?}", c.as_binary::<i32>().value(r)),
                        _ => arrow_cast::display::ArrayFormatter::try_new(c.as_ref(), &Default::default())
                            .unwrap()
                            .value(r)
                            .to_string(),
                    })
                })
                .collect();
            rows.push(row);
        }
    }
    (names, rows)
}

#[test]
fn geoparquet_output_holds_the_csv_rows_and_the_closest_points() {
    let data = data();
    let d = data.dir.path();
    for args in [vec!["--max-distance", "900"], vec!["--k", "2"]] {
        let base = ["snap", "-q", "--points", "points.csv", "--lines", "lines.parquet"];
        let csv = ok(&run(d, &[&base[..], &args[..]].concat()));
        ok(&run(d, &[&base[..], &args[..], &["-o", "out.parquet"]].concat()));
        let (names, rows) = parquet_rows(&d.join("out.parquet"));
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(names[..names.len() - 1], header[..], "{args:?}");
        assert_eq!(names.last().unwrap(), "geometry");
        let mut r = csv::ReaderBuilder::new().has_headers(true).from_reader(csv.as_bytes());
        let want: Vec<Vec<String>> = r.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect();
        assert_eq!(rows.len(), want.len());
        let lon = names.iter().position(|n| n == "lon").unwrap();
        let mut unmatched = 0;
        for (got, want) in rows.iter().zip(&want) {
            for (k, w) in want.iter().enumerate() {
                assert_eq!(got[k].as_deref().unwrap_or(""), w, "{args:?} column {}", names[k]);
            }
            // The geometry is the closest point, as WKB.
            match &got[lon] {
                Some(x) => {
                    let y = got[lon + 1].as_ref().unwrap();
                    let wkb = wkb_point(x.parse().unwrap(), y.parse().unwrap());
                    assert_eq!(got.last().unwrap().as_deref(), Some(format!("{wkb:?}").as_str()));
                }
                None => {
                    assert!(got.last().unwrap().is_none());
                    unmatched += 1;
                }
            }
        }
        assert_eq!(unmatched > 0, args[0] == "--max-distance", "{args:?}");
        let geo = geo_metadata(&d.join("out.parquet"));
        assert_eq!(geo["columns"]["geometry"]["encoding"], "WKB");
        assert!(geo["columns"]["geometry"].get("crs").is_none(), "lon/lat: GeoParquet's default CRS");
    }
}

#[test]
fn standard_input_and_output() {
    let data = data();
    let d = data.dir.path();
    let want = ok(&run(d, &["snap", "-q", "--points", "points_wkb.parquet", "--lines", "lines.parquet"]));
    let bytes = std::fs::read(d.join("points_wkb.parquet")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_segdist"))
        .args(["snap", "-q", "--points", "-", "--points-format", "parquet", "--lines", "lines.parquet"])
        .current_dir(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &bytes).unwrap();
    assert_eq!(String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap(), want);
    // Parquet to standard output: `-o -`.
    let o = run(
        d,
        &[
            "snap",
            "-q",
            "--points",
            "points_wkb.parquet",
            "--lines",
            "lines.parquet",
            "-o",
            "-",
            "--output-format",
            "parquet",
        ],
    );
    assert!(o.status.success());
    assert_eq!(&o.stdout[..4], b"PAR1");
    std::fs::write(d.join("piped.parquet"), &o.stdout).unwrap();
    assert_eq!(parquet_rows(&d.join("piped.parquet")).1.len(), POINTS.len());
}

#[test]
fn bad_files_name_the_row_and_write_nothing() {
    let data = data();
    let d = data.dir.path();
    std::fs::write(d.join("junk.parquet"), b"PAR1 this is not parquet PAR1").unwrap();
    let e = err(&run(d, &["snap", "--points", "junk.parquet", "--lines", "lines.parquet", "-o", "out.csv"]));
    assert!(e.contains("junk.parquet: not a Parquet file"), "{e}");
    assert!(!d.join("out.csv").exists());
    // A null geometry in row 1, and a line where points are expected.
    let mut wkb = BinaryBuilder::new();
    wkb.append_value(wkb_point(24.9, 60.1));
    wkb.append_null();
    let wkb: ArrayRef = Arc::new(wkb.finish());
    write(&d.join("nulls.parquet"), vec![("geometry", wkb)], None);
    let e = err(&run(d, &["snap", "--points", "nulls.parquet", "--lines", "lines.parquet", "-o", "out.parquet"]));
    assert!(e.contains("nulls.parquet: row 1, column geometry: no geometry (null)"), "{e}");
    assert!(!d.join("out.parquet").exists());
    let e = err(&run(d, &["snap", "--points", "lines.parquet", "--lines", "lines.parquet"]));
    assert!(e.contains("lines.parquet: row 0, column geometry: a LineString where points are expected"), "{e}");
    // No geometry to be found.
    let n: ArrayRef = Arc::new(Float64Array::from(vec![1.0]));
    write(&d.join("nogeom.parquet"), vec![("a", n)], None);
    let e = err(&run(d, &["snap", "--points", "nogeom.parquet", "--lines", "lines.parquet"]));
    assert!(e.contains("nogeom.parquet: no geometry: no GeoParquet metadata"), "{e}");
    // Two CRSs: GeoParquet's default (lon/lat) and EPSG:3067.
    let e = err(&run(d, &["snap", "--points", "points_ga.parquet", "--lines", "lines_tm.parquet"]));
    assert!(
        e.contains("points_ga.parquet: its CRS {\"authority\":\"OGC\",\"code\":\"CRS84\"} is not the lines'"),
        "{e}"
    );
}
