//! CSV coordinate columns found by name when not given: x/y, lon/lat,
//! lng/lat, long/lat, longitude/latitude, easting/northing, in any case;
//! lon/lat names make `snap` and `locate` geographic (said on stderr;
//! `--planar` overrides). Without an x/y pair, a WKT column (`wkt`,
//! `geometry`, `geom`, `the_geom`, or `--geometry-column`) holds the
//! geometry. Each answer equals the run with the columns and the mode
//! spelt out.

use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_segdist")).current_dir(dir).args(args).output().unwrap()
}

fn ok(o: &Output) -> (String, String) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (String::from_utf8(o.stdout.clone()).unwrap(), String::from_utf8(o.stderr.clone()).unwrap())
}

/// Lines and points near Helsinki with the coordinate columns named `x`
/// and `y` as given.
fn write(dir: &Path, x: &str, y: &str) {
    let lines = format!("id,{x},{y}\nA,24.90,60.16\nA,24.96,60.17\nB,24.90,60.20\nB,24.95,60.21\n");
    let points = format!("id,{x},{y}\n1,24.93,60.18\n2,24.91,60.15\n3,24.97,60.205\n");
    std::fs::write(dir.join("lines.csv"), lines).unwrap();
    std::fs::write(dir.join("points.csv"), points).unwrap();
}

#[test]
fn lon_lat_names_in_any_case_make_snap_geographic() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "lon", "lat");
    let spelt = ok(&run(
        dir.path(),
        &[
            "snap",
            "--keep",
            "none",
            "--geographic",
            "--x-column",
            "lon",
            "--y-column",
            "lat",
            "--points",
            "points.csv",
            "--lines",
            "lines.csv",
        ],
    ))
    .0;
    assert!(spelt.starts_with("point_id,line_id,part,segment,distance_m,"), "{spelt}");
    for (x, y) in [("lon", "lat"), ("Longitude", "LATITUDE"), ("lng", "lat"), ("long", "lat")] {
        write(dir.path(), x, y);
        let (out, err) =
            ok(&run(dir.path(), &["snap", "--keep", "none", "--points", "points.csv", "--lines", "lines.csv"]));
        assert!(err.contains("geographic"), "{x}/{y}: {err}");
        assert_eq!(out, spelt, "{x}/{y}");
    }
    // --planar keeps the numbers as they are.
    let (out, err) = ok(&run(dir.path(), &["snap", "--planar", "--points", "points.csv", "--lines", "lines.csv"]));
    assert!(err.contains("planar"), "{err}");
    assert!(out.starts_with("id,long,input_lat,point_id,line_id,part,segment,distance,"), "{out}");
}

#[test]
fn lon_lat_names_make_locate_geographic_too() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "lon", "lat");
    let auto = ok(&run(dir.path(), &["locate", "--keep", "none", "--line", "lines.csv", "--points", "points.csv"]));
    assert!(auto.1.contains("geographic"), "{}", auto.1);
    let spelt = ok(&run(
        dir.path(),
        &[
            "locate",
            "--keep",
            "none",
            "--geographic",
            "--x-column",
            "lon",
            "--y-column",
            "lat",
            "--line",
            "lines.csv",
            "--points",
            "points.csv",
        ],
    ));
    assert_eq!(auto.0, spelt.0);
}

#[test]
fn easting_northing_are_found_and_stay_planar() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "x", "y");
    let none = ["--keep", "none", "--points", "points.csv", "--lines", "lines.csv"];
    let spelt = ok(&run(dir.path(), &[&["snap"], &none[..]].concat()));
    assert!(spelt.1.contains("planar"), "{}", spelt.1);
    write(dir.path(), "Easting", "Northing");
    let (out, err) = ok(&run(dir.path(), &[&["snap"], &none[..]].concat()));
    assert!(err.contains("planar"), "{err}");
    assert_eq!(out, spelt.0);
}

#[test]
fn no_coordinate_columns_is_an_error_naming_what_was_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a", "b");
    let o = run(dir.path(), &["snap", "--points", "points.csv", "--lines", "lines.csv", "-o", "out.csv"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("lines.csv: line 1: no coordinate columns: none of x/y, lon/lat"), "{err}");
    assert!(!dir.path().join("out.csv").exists());
}

/// The same lines and points as [`write`]'s, as WKT in a column `name`
/// (lines one feature per row).
fn write_wkt(dir: &Path, name: &str) {
    let lines = format!(
        "id,{name}\nA,\"LINESTRING (24.90 60.16, 24.96 60.17)\"\nB,\"LINESTRING (24.90 60.20, 24.95 60.21)\"\n"
    );
    let points = format!("id,{name}\n1,POINT (24.93 60.18)\n2,POINT(24.91 60.15)\n3,POINT (24.97 60.205)\n");
    std::fs::write(dir.join("lines.csv"), lines).unwrap();
    std::fs::write(dir.join("points.csv"), points).unwrap();
}

#[test]
fn a_wkt_column_is_read_as_geometry_like_x_and_y_columns() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "x", "y");
    let none = ["--keep", "none", "--points", "points.csv", "--lines", "lines.csv"];
    let xy = ok(&run(dir.path(), &[&["snap"], &none[..]].concat())).0;
    let xy_geo = ok(&run(dir.path(), &[&["snap", "--geographic"], &none[..]].concat())).0;
    for name in ["wkt", "WKT", "geometry", "geom", "the_geom"] {
        write_wkt(dir.path(), name);
        let (out, err) = ok(&run(dir.path(), &[&["snap"], &none[..]].concat()));
        assert!(err.contains("planar"), "{name}: {err}");
        assert_eq!(out, xy, "{name}");
        let out = ok(&run(dir.path(), &[&["snap", "--geographic"], &none[..]].concat())).0;
        assert_eq!(out, xy_geo, "{name}");
    }
    // Any column, named.
    write_wkt(dir.path(), "shape");
    let out = ok(&run(dir.path(), &[&["snap", "--geometry-column", "shape"], &none[..]].concat())).0;
    assert_eq!(out, xy);
    // Kept by default, like every column.
    let kept =
        ok(&run(dir.path(), &["snap", "--geometry-column", "shape", "--points", "points.csv", "--lines", "lines.csv"]))
            .0;
    assert!(kept.starts_with("id,shape,point_id,line_id,"), "{kept}");
    assert!(kept.contains("\n2,POINT(24.91 60.15),2,A,"), "{kept}");
}

#[test]
fn a_bad_wkt_cell_names_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    write_wkt(dir.path(), "wkt");
    let points = "id,note,wkt\n1,ok,POINT (24.93 60.18)\n2,bad,POINT (24.91 x)\n";
    std::fs::write(dir.path().join("points.csv"), points).unwrap();
    let o = run(dir.path(), &["snap", "--points", "points.csv", "--lines", "lines.csv", "-o", "out.csv"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("points.csv: line 3, column 3 (wkt): not WKT"), "{err}");
    assert!(!dir.path().join("out.csv").exists());
    let points = "id,wkt\n1,\"LINESTRING (1 2, 3 4)\"\n";
    std::fs::write(dir.path().join("points.csv"), points).unwrap();
    let err =
        String::from_utf8_lossy(&run(dir.path(), &["snap", "--points", "points.csv", "--lines", "lines.csv"]).stderr)
            .into_owned();
    assert!(err.contains("points.csv: line 2, column 2 (wkt): a LINESTRING where points are expected"), "{err}");
    let lines = "id,wkt\nA,POINT (1 2)\n";
    std::fs::write(dir.path().join("lines.csv"), lines).unwrap();
    let err =
        String::from_utf8_lossy(&run(dir.path(), &["snap", "--points", "points.csv", "--lines", "lines.csv"]).stderr)
            .into_owned();
    assert!(err.contains("lines.csv: line 2, column 2 (wkt): a POINT where lines are expected"), "{err}");
}
