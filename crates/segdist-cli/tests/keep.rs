//! The points file's columns kept in `snap`'s and `locate`'s output
//! (`--keep`, all by default): golden files with clashing names, the kept
//! fields equal to the input's field by field, chosen columns, GeoJSON
//! properties with their JSON types, and the errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn data() -> PathBuf {
    root().join("crates/segdist-cli/tests/data")
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_segdist")).args(args).current_dir(dir).stdin(Stdio::null()).output().unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(root().join("crates/segdist-cli/tests/golden").join(name)).unwrap()
}

fn rows(text: &str) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    r.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect()
}

#[test]
fn golden_snap_keeps_every_column_and_prefixes_clashing_names() {
    let args = ["snap", "--planar", "-q", "--points", "points.csv", "--lines", "lines.geojson", "--k", "2"];
    let text = ok(&run(&data(), &[&args[..], &["--max-distance", "5"]].concat()));
    // id,x,y,note: x and y are segdist's names too.
    assert!(text.starts_with("id,input_x,input_y,note,point_id,rank,line_id,"), "{text}");
    assert_eq!(text, golden("snap_keep_k2.csv"));
    // The unmatched point keeps its columns too.
    assert!(text.contains("\np6,100,100,far from everything,p6,,,,,,,,,,\n"), "{text}");
}

#[test]
fn golden_locate_keeps_every_column() {
    let o =
        run(&data(), &["locate", "--planar", "--line", "lines.geojson", "--line-id", "main", "--points", "points.csv"]);
    assert_eq!(ok(&o), golden("locate_keep.csv"));
}

#[test]
fn golden_geojson_keeps_properties() {
    let o = run(
        &data(),
        &[
            "snap",
            "-q",
            "--points",
            "points.geojson",
            "--lines",
            "lines.geojson",
            "--output-format",
            "geojson",
            "--connectors",
        ],
    );
    assert_eq!(ok(&o), golden("snap_keep.geojson"));
}

/// Every kept row is the input row's fields, then `--keep none`'s row.
#[test]
fn kept_fields_equal_the_input_and_the_rest_equals_keep_none() {
    let dir = tempfile::tempdir().unwrap();
    // Semicolons, commas and quotes inside fields, an empty field.
    let points = "id;x;y;note;when\n1;1.5;2;\"a, b\";2024-01-01\n2;-3;0.25;\"say \"\"hi\"\"\";\n3;10;10;;x\n";
    std::fs::write(dir.path().join("p.csv"), points).unwrap();
    std::fs::write(dir.path().join("l.wkt"), "LINESTRING (0 0, 10 0)\nLINESTRING (0 5, 5 5, 5 20)\n").unwrap();
    for k in ["1", "2"] {
        let base = ["snap", "-q", "--points", "p.csv", "--lines", "l.wkt", "--k", k];
        let all = rows(&ok(&run(dir.path(), &base)));
        let none = rows(&ok(&run(dir.path(), &[&base[..], &["--keep", "none"]].concat())));
        let mut semis = csv::ReaderBuilder::new().delimiter(b';').has_headers(false).from_reader(points.as_bytes());
        let input: Vec<Vec<String>> =
            semis.records().map(|r| r.unwrap().iter().map(str::to_string).collect()).collect();
        assert_eq!(all.len(), none.len());
        assert_eq!(all[0][..5], ["id", "input_x", "input_y", "note", "when"]);
        for (a, n) in all.iter().zip(&none).skip(1) {
            let row = input.iter().find(|r| r[0] == n[0]).expect("a point's row");
            assert_eq!(a[..5], row[..], "k={k}");
            assert_eq!(a[5..], n[..], "k={k}");
        }
    }
}

#[test]
fn chosen_columns_come_in_the_order_given() {
    let base = ["snap", "--planar", "-q", "--points", "points.csv", "--lines", "lines.geojson"];
    let chosen = rows(&ok(&run(&data(), &[&base[..], &["--keep", "note,x"]].concat())));
    let none = rows(&ok(&run(&data(), &[&base[..], &["--keep", "none"]].concat())));
    assert_eq!(chosen[0][..3], ["note", "input_x", "point_id"]);
    assert_eq!(chosen[1][..2], ["above main", "5"]);
    for (c, n) in chosen.iter().zip(&none) {
        assert_eq!(c[2..], n[..]);
    }
}

#[test]
fn geojson_properties_keep_their_types_and_missing_ones_are_empty() {
    let dir = tempfile::tempdir().unwrap();
    let points = r#"{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"osm_id":12,"name":"a, b","distance":3.5,"tags":{"k":"v"},"gone":null},"geometry":{"type":"Point","coordinates":[24.94,60.17]}},
{"type":"Feature","properties":{"osm_id":13,"extra":true},"geometry":{"type":"Point","coordinates":[24.95,60.18]}}
]}"#;
    std::fs::write(dir.path().join("p.geojson"), points).unwrap();
    std::fs::write(dir.path().join("l.csv"), "id,lon,lat\nA,24.90,60.16\nA,24.96,60.17\n").unwrap();
    let csv = rows(&ok(&run(dir.path(), &["snap", "-q", "--points", "p.geojson", "--lines", "l.csv"])));
    // The first feature's properties, in its order; "distance" clashes.
    assert_eq!(csv[0][..6], ["osm_id", "name", "input_distance", "tags", "gone", "point_id"]);
    assert_eq!(csv[1][..5], ["12", "a, b", "3.5", "{\"k\":\"v\"}", ""]);
    assert_eq!(csv[2][..5], ["13", "", "", "", ""]);
    let args = ["snap", "-q", "--points", "p.geojson", "--lines", "l.csv", "--output-format", "geojson"];
    let gj: serde_json::Value = serde_json::from_str(&ok(&run(dir.path(), &args))).unwrap();
    let props = |i: usize| gj["features"][i]["properties"].clone();
    assert_eq!(props(0)["osm_id"], 12);
    assert_eq!(props(0)["input_distance"], 3.5);
    assert_eq!(props(0)["tags"]["k"], "v");
    assert!(props(0)["gone"].is_null());
    assert!(props(0)["distance_m"].as_f64().unwrap() > 0.0);
    assert_eq!(props(1)["osm_id"], 13);
    assert!(props(1)["name"].is_null());
    // Named properties are taken from every feature.
    let gj: serde_json::Value =
        serde_json::from_str(&ok(&run(dir.path(), &[&args[..], &["--keep", "extra"]].concat()))).unwrap();
    assert!(gj["features"][0]["properties"]["extra"].is_null());
    assert_eq!(gj["features"][1]["properties"]["extra"], true);
}

#[test]
fn lon_lat_columns_are_prefixed_in_geographic_output() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("l.csv"), "id,lon,lat\nA,24.90,60.16\nA,24.96,60.17\n").unwrap();
    std::fs::write(
        dir.path().join("p.csv"),
        "trace_id,point_id,time,lon,lat\nt1,0,10,24.93,60.18\nt2,0,11,24.91,60.15\n",
    )
    .unwrap();
    let text = ok(&run(dir.path(), &["snap", "-q", "--points", "p.csv", "--lines", "l.csv"]));
    assert!(
        text.starts_with(
            "trace_id,input_point_id,time,input_lon,input_lat,point_id,line_id,part,segment,distance_m,lon,lat,"
        ),
        "{text}"
    );
    assert!(text.contains("\nt2,0,11,24.91,60.15,1,A,"), "{text}");
    // README shows the first two lines of this output.
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let shown: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    assert!(readme.contains(&shown), "README's example is not this output:\n{shown}");
}

#[test]
fn a_column_to_keep_that_is_not_there_is_an_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    let out = out.to_str().unwrap();
    let o =
        run(&data(), &["snap", "--points", "points.csv", "--lines", "lines.csv", "--keep", "note,colour", "-o", out]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("points.csv: line 1: no column \"colour\" to keep (--keep; the columns are id, x, y, note)"),
        "{err}"
    );
    assert!(!Path::new(out).exists());
    let o = run(&data(), &["snap", "--points", "points.wkt", "--lines", "lines.csv", "--keep", "a"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("points.wkt: WKT points have no columns to keep"));
    // WKT has none to keep: all keeps nothing.
    let wkt = ok(&run(&data(), &["snap", "-q", "--points", "points.wkt", "--lines", "lines.wkt"]));
    assert!(wkt.starts_with("point_id,line_id,"), "{wkt}");
}
