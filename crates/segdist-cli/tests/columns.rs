//! CSV coordinate columns found by name when not given: x/y, lon/lat,
//! lng/lat, long/lat, longitude/latitude, easting/northing, in any case;
//! lon/lat names make `snap` and `locate` geographic (said on stderr;
//! `--planar` overrides). Each answer equals the run with the columns and
//! the mode spelt out.

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
        let (out, err) = ok(&run(dir.path(), &["snap", "--points", "points.csv", "--lines", "lines.csv"]));
        assert!(err.contains("geographic"), "{x}/{y}: {err}");
        assert_eq!(out, spelt, "{x}/{y}");
    }
    // --planar keeps the numbers as they are.
    let (out, err) = ok(&run(dir.path(), &["snap", "--planar", "--points", "points.csv", "--lines", "lines.csv"]));
    assert!(err.contains("planar"), "{err}");
    assert!(out.starts_with("point_id,line_id,part,segment,distance,"), "{out}");
}

#[test]
fn lon_lat_names_make_locate_geographic_too() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "lon", "lat");
    let auto = ok(&run(dir.path(), &["locate", "--line", "lines.csv", "--points", "points.csv"]));
    assert!(auto.1.contains("geographic"), "{}", auto.1);
    let spelt = ok(&run(
        dir.path(),
        &[
            "locate",
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
    let spelt = ok(&run(dir.path(), &["snap", "--points", "points.csv", "--lines", "lines.csv"]));
    assert!(spelt.1.contains("planar"), "{}", spelt.1);
    write(dir.path(), "Easting", "Northing");
    let (out, err) = ok(&run(dir.path(), &["snap", "--points", "points.csv", "--lines", "lines.csv"]));
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
