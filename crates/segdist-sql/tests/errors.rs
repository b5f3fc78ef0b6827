//! Bad input to `segdist-sql query`: one clear error on stderr, exit
//! status 2, and nothing written (an existing output file is left as it
//! was). NULLs are not errors: a point with a NULL coordinate gets a row of
//! NULLs, a line with a NULL geometry is never matched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn query(dir: &Path, tables: &[(&str, &str, &str)], sql: &str, out: Option<&Path>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_segdist-sql"));
    c.arg("query");
    for (name, file, text) in tables {
        let p = dir.join(file);
        std::fs::write(&p, text).unwrap();
        c.arg(format!("--table={name}={}", p.display()));
    }
    if let Some(o) = out {
        c.arg("--out").arg(o);
    }
    c.arg(sql).output().unwrap()
}

const LINES: &str = "id,geometry\nA,\"LINESTRING(0 0, 10 0)\"\nB,\"LINESTRING(0 5, 10 5)\"\n";

/// Runs a failing query with `--out` to CSV and to Parquet (each written
/// its own way), and checks exit 2, the message, and that the old output is
/// untouched and nothing else is left beside it.
fn fails(tables: &[(&str, &str, &str)], sql: &str, want: &str) {
    for name in ["out.csv", "out.parquet"] {
        let dir = tempfile::tempdir().unwrap();
        let out: PathBuf = dir.path().join(name);
        std::fs::write(&out, "old\n").unwrap();
        let o = query(dir.path(), tables, sql, Some(&out));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{sql}: {err}");
        assert!(err.contains(want), "{sql}: expected {want:?} in {err:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "one error line: {err}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
        let mut left: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        let mut want_left: Vec<String> = tables.iter().map(|t| t.1.to_string()).chain([name.to_string()]).collect();
        left.sort();
        want_left.sort();
        want_left.dedup();
        assert_eq!(left, want_left, "{sql}: only the tables and the old output");
    }
}

#[test]
fn a_missing_table_is_named() {
    fails(&[("l", "l.csv", LINES)], "SELECT * FROM segdist_snap('nope', 'l')", "no table named 'nope'");
}

#[test]
fn a_missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_segdist-sql"))
        .args(["query", "--table", "p=/no/such/points.parquet", "SELECT 1"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/no/such/points.parquet: no such file"));
}

#[test]
fn missing_columns_are_named_with_the_columns_there_are() {
    let p = ("p", "p.csv", "id,a,b\n1,2,3\n");
    fails(
        &[p, ("l", "l.csv", LINES)],
        "SELECT * FROM segdist_snap('p', 'l')",
        "needs x and y, or lon and lat, columns; it has id, a, b",
    );
    let p = ("p", "p.csv", "id,x,y\n1,2,3\n");
    let l = ("l", "l.csv", "id,shape\nA,x\n");
    fails(&[p, l], "SELECT * FROM segdist_snap('p', 'l')", "needs a geometry column");
}

#[test]
fn wrong_types_are_refused_when_planned() {
    let p = ("p", "p.csv", "id,x,y\n1,east,3\n");
    fails(
        &[p, ("l", "l.csv", LINES)],
        "SELECT * FROM segdist_snap('p', 'l')",
        "points column \"x\" is Utf8, not a number",
    );
    let l = ("l", "l.csv", "id,geometry\nA,5\n");
    fails(
        &[("p", "p.csv", "id,x,y\n1,2,3\n"), l],
        "SELECT * FROM segdist_snap('p', 'l')",
        "geometry column \"geometry\" is Int64",
    );
    fails(&[("l", "l.csv", LINES)], "SELECT * FROM segdist_snap('l', 'l', 0)", "k must be an integer >= 1");
    fails(
        &[("l", "l.csv", LINES)],
        "SELECT * FROM segdist_snap('l', 'l', 1, -2)",
        "max_distance must be a number >= 0",
    );
}

#[test]
fn non_finite_coordinates_are_errors_naming_the_point() {
    let p = ("p", "p.csv", "id,x,y\n1,2,3\n7,inf,3\n");
    fails(
        &[p, ("l", "l.csv", LINES)],
        "SELECT * FROM segdist_snap('p', 'l')",
        "point 7: x is inf; coordinates must be finite",
    );
    let l = ("l", "l.csv", "id,geometry\nA,\"LINESTRING(0 0, 1e400 0)\"\n");
    fails(&[("p", "p.csv", "id,x,y\n1,2,3\n"), l], "SELECT * FROM segdist_snap('p', 'l')", "segdist_snap: lines row 0");
}

#[test]
fn bad_geometry_is_an_error_naming_the_row() {
    let l = ("l", "l.csv", "id,geometry\nA,\"LINESTRING(0 0, 1 1)\"\nB,\"LINESTRING(0 0, 1\"\n");
    fails(&[("p", "p.csv", "id,x,y\n1,2,3\n"), l], "SELECT * FROM segdist_snap('p', 'l')", "lines row 1: not WKT");
    let l = ("l", "l.csv", "id,geometry\nA,\"LINESTRING(0 0)\"\n");
    fails(&[("p", "p.csv", "id,x,y\n1,2,3\n"), l], "SELECT * FROM segdist_snap('p', 'l')", "a line needs at least 2");
    let l = ("l", "l.csv", "id,geometry\nA,\"POINT(0 0)\"\n");
    fails(
        &[("p", "p.csv", "id,x,y\n1,2,3\n"), l],
        "SELECT * FROM segdist_snap('p', 'l')",
        "a POINT where lines are expected",
    );
}

#[test]
fn an_empty_lines_table_is_an_error() {
    let l = ("l", "l.csv", "id,geometry\nA,\n");
    fails(
        &[("p", "p.csv", "id,x,y\n1,2,3\n"), l],
        "SELECT * FROM segdist_snap('p', 'l')",
        "the lines table has no geometry to snap to",
    );
}

#[test]
fn latitudes_beyond_90_are_errors() {
    let p = ("p", "p.csv", "id,lon,lat\n1,24.9,95\n");
    let l = ("l", "l.csv", "id,geometry\nA,\"LINESTRING(24 60, 25 60)\"\n");
    fails(&[p, l], "SELECT * FROM segdist_snap('p', 'l')", "point 1: latitude 95 is not in [-90, 90]");
}

#[test]
fn nulls_give_rows_of_nulls_and_null_lines_are_never_matched() {
    let dir = tempfile::tempdir().unwrap();
    let p = ("p", "p.csv", "id,x,y\n1,2,1\n2,,1\n3,4,4\n");
    let l = ("l", "l.csv", "id,geometry\nA,\"LINESTRING(0 0, 10 0)\"\nN,\nB,\"LINESTRING(0 5, 10 5)\"\n");
    let o = query(dir.path(), &[p, l], "SELECT * FROM segdist_snap('p', 'l') ORDER BY point_id", None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[0], "point_id,line_id,part,segment,distance,x,y,t,along,fraction");
    assert!(rows[1].starts_with("1,A,0,0,1.0,2.0,0.0,0.2,2.0,0.2"), "{text}");
    assert_eq!(rows[2], "2,,,,,,,,,");
    assert!(rows[3].starts_with("3,B,0,0,1.0,4.0,5.0"), "{text}");
}

#[test]
fn an_error_after_rows_were_written_leaves_nothing() {
    // A million rows, the last one bad: most of the result (some 30 MB
    // as Arrow) has gone to the Parquet writer when the error comes.
    use std::fmt::Write as _;
    let mut p = String::from("id,x,y\n");
    for i in 0..1_000_000 {
        writeln!(p, "{i},{}.5,{}.25", i % 1000, i / 1000).unwrap();
    }
    p.push_str("1000000,inf,0.5\n");
    fails(
        &[("p", "p.csv", &p)],
        "SELECT id, x, y, segdist_distance(x, y, 0, 0, 1, 1) AS d FROM p",
        "segdist_distance: argument 1 is inf",
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_or_sigterm_mid_query_leaves_nothing_and_exits_128_plus_the_signal() {
    use std::time::{Duration, Instant};
    for (name, signal, code) in [("out.csv", "-INT", 130), ("out.parquet", "-TERM", 143)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join(name);
        std::fs::write(&out, "old\n").unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_segdist-sql"))
            .args(["query", "--out"])
            .arg(&out)
            .arg("SELECT value, segdist_distance(value, 1, 0, 0, 1, 0) AS d FROM generate_series(1, 1000000000)")
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the temporary output holds something, then interrupt.
        let start = Instant::now();
        let started = |d: &Path| {
            std::fs::read_dir(d).unwrap().flatten().any(|e| {
                e.file_name().to_string_lossy().contains(".segdist-sql-") && e.metadata().is_ok_and(|m| m.len() > 0)
            })
        };
        while !started(dir.path()) {
            assert!(start.elapsed() < Duration::from_secs(120), "{name}: no temporary output appeared");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap().success());
        assert_eq!(child.wait().unwrap().code(), Some(code), "{name}");
        let left: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(left, [name], "{name}: only the old output");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    }
}

#[test]
fn a_killed_runs_temporary_is_removed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    // Process ids no system hands out; the second is an object store's
    // staging file beside a temporary.
    for stale in [".out.csv.segdist-sql-999999999.tmp", ".out.csv.segdist-sql-999999998.tmp#1"] {
        std::fs::write(dir.path().join(stale), "half").unwrap();
    }
    let o = query(dir.path(), &[], "SELECT 1 AS one", Some(&out));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("left by an earlier run"));
    let left: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(left, ["out.csv"]);
}
