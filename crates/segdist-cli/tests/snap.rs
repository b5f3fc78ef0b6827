//! End-to-end tests of `segdist snap`, `locate`, `plot` and `demo`: golden
//! outputs for each format, 2D and 3D, k > 1, max-distance and ties; each
//! class of bad input (message, exit code, no output file); and agreement
//! with a brute-force computation on generated data. The points' kept
//! columns are tested in tests/keep.rs.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use segdist::Segment;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs segdist in the test data folder. `snap` and `locate` get
/// `--keep none` unless the arguments say `--keep`: the golden files hold
/// segdist's own columns (tests/keep.rs tests the kept ones).
fn segdist(args: &[&str]) -> Output {
    let mut args = args.to_vec();
    if matches!(args.first(), Some(&"snap" | &"locate")) && !args.contains(&"--keep") {
        args.extend(["--keep", "none"]);
    }
    Command::new(env!("CARGO_BIN_EXE_segdist"))
        .args(args)
        .current_dir(root().join("crates/segdist-cli/tests/data"))
        .stdin(Stdio::null())
        .output()
        .expect("segdist runs")
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(root().join("crates/segdist-cli/tests/golden").join(name)).unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The one error line, after checking exit code 2 and empty stdout.
fn err(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(2), "stdout: {}", String::from_utf8_lossy(&o.stdout));
    assert!(o.stdout.is_empty());
    String::from_utf8(o.stderr.clone()).unwrap()
}

#[test]
fn golden_csv_points_geojson_lines_with_rings_parts_and_ties() {
    // p3 inside the ring, p4 between two parts, p5 equidistant from "main"
    // and "twin" (the lower id wins), p6 tied between "loop" and "multi".
    assert_eq!(
        ok(&segdist(&["snap", "--planar", "--points", "points.csv", "--lines", "lines.geojson"])),
        golden("snap_csv_geojson.csv")
    );
}

#[test]
fn golden_wkt_in_and_geojson_points_with_csv_lines() {
    assert_eq!(ok(&segdist(&["snap", "--points", "points.wkt", "--lines", "lines.wkt"])), golden("snap_wkt.csv"));
    let o =
        segdist(&["snap", "--planar", "--points", "points.geojson", "--lines", "lines.csv", "--id-property", "name"]);
    assert_eq!(ok(&o), golden("snap_geojson_csv.csv"));
}

#[test]
fn golden_3d() {
    assert_eq!(
        ok(&segdist(&["snap", "--planar", "--points", "points3d.csv", "--lines", "lines3d.geojson"])),
        golden("snap_3d.csv")
    );
}

#[test]
fn golden_k_nearest_within_a_distance() {
    let o = segdist(&[
        "snap",
        "--planar",
        "--points",
        "points.csv",
        "--lines",
        "lines.geojson",
        "--k",
        "2",
        "--max-distance",
        "5",
    ]);
    let text = ok(&o);
    assert_eq!(text, golden("snap_k2_max5.csv"));
    // The far point keeps its row, empty.
    assert!(text.lines().any(|l| l == "p6,,,,,,,,,,"));
}

#[test]
fn golden_geojson_output_with_connectors() {
    let o = segdist(&[
        "snap",
        "--planar",
        "--points",
        "points.geojson",
        "--lines",
        "lines.geojson",
        "--output-format",
        "geojson",
        "--connectors",
        "--max-distance",
        "3",
    ]);
    let text = ok(&o);
    assert_eq!(text, golden("snap_connectors.geojson"));
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid GeoJSON");
    let kinds: Vec<&str> =
        v["features"].as_array().unwrap().iter().filter_map(|f| f["properties"]["kind"].as_str()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "connector").count(), 2);
}

#[test]
fn geojson_input_is_geographic_by_default() {
    let o = segdist(&["snap", "--points", "points.geojson", "--lines", "lines.geojson"]);
    let text = ok(&o);
    // The geodesic kernel goes through the platform's sin, cos and atan2:
    // the last bits may differ between machines, micrometres do not.
    close_csv(&text, &golden("snap_geographic.csv"), 1e-6);
    assert!(String::from_utf8_lossy(&o.stderr).contains("geographic: lon/lat, distances in metres"));
    // p1 (5°E, 1°N) is 1° of latitude north of the equator road: the
    // meridian arc from 0° to 1°, 110,574.4 m.
    let p1 = text.lines().nth(1).unwrap();
    let d: f64 = p1.split(',').nth(4).unwrap().parse().unwrap();
    assert!((d - 110_574.389).abs() < 0.01, "{p1}");
    assert!(text.starts_with("point_id,line_id,part,segment,distance_m,lon,lat,t,along_m,fraction\n"));
    // A latitude out of range is an error in geographic mode, with nothing written.
    let e = err(&segdist(&["snap", "--points", "points.csv", "--lines", "lines.geojson"]));
    assert!(e.contains("points.csv: point \"p6\": latitude 100 is not in [-90, 90]"), "{e}");
    // --geographic for CSV, --planar for GeoJSON.
    let csv = ok(&segdist(&["snap", "--geographic", "--points", "points.wkt", "--lines", "lines.wkt", "--quiet"]));
    assert!(csv.starts_with("point_id,line_id,part,segment,distance_m"), "{csv}");
}

/// Same CSV, numbers within `tol` (relative, and absolute near zero).
fn close_csv(got: &str, want: &str, tol: f64) {
    assert_eq!(got.lines().count(), want.lines().count(), "{got}");
    for (g, w) in got.lines().zip(want.lines()) {
        let (gf, wf): (Vec<&str>, Vec<&str>) = (g.split(',').collect(), w.split(',').collect());
        assert_eq!(gf.len(), wf.len(), "{g} / {w}");
        for (x, y) in gf.iter().zip(&wf) {
            match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(a), Ok(b)) => assert!((a - b).abs() <= tol * b.abs().max(1.0), "{g} / {w}"),
                _ => assert_eq!(x, y, "{g} / {w}"),
            }
        }
    }
}

#[test]
fn golden_locate() {
    let o = segdist(&["locate", "--planar", "--line", "lines.geojson", "--line-id", "main", "--points", "points.csv"]);
    assert_eq!(ok(&o), golden("locate_main.csv"));
    // GeoJSON: metres along the geodesics. p1 projects onto the equator at
    // 5°E: the equatorial arc of 5°, 556,597.45 m.
    let o = segdist(&["locate", "--line", "lines.geojson", "--line-id", "main", "--points", "points.geojson"]);
    let text = ok(&o);
    assert!(text.starts_with("point_id,line_id,segment,t,along_m,fraction,distance_m,lon,lat\n"), "{text}");
    let along: f64 = text.lines().nth(1).unwrap().split(',').nth(4).unwrap().parse().unwrap();
    assert!((along - 556_597.454).abs() < 0.01, "{text}");
    let e = err(&segdist(&["locate", "--planar", "--line", "lines.geojson", "--points", "points.csv"]));
    assert!(e.contains("line \"multi\" has 2 parts; locate needs a LineString"), "{e}");
}

/// `text` written to `name` in `dir` (a test's own temporary folder, removed
/// when the test ends).
fn temp(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn bad_input_names_the_place_and_leaves_no_output() {
    let cases: [(&str, &str, bool, &str); 9] = [
        (
            "bad_number.csv",
            "id,x,y\na,1,2\nb,x1,3\n",
            true,
            "bad_number.csv: line 3, column 2 (x): cannot read \"x1\" as a number",
        ),
        ("nan.csv", "id,x,y\na,NaN,2\n", true, "nan.csv: line 2, column 2 (x): \"NaN\" is not a finite number"),
        ("no_y.csv", "id,x\na,1\n", true, "no_y.csv: line 1: missing column(s) y"),
        ("short.csv", "id,x,y\na,1\n", true, "short.csv: line 2: 2 fields where the header has 3"),
        (
            "wrong_type.wkt",
            "LINESTRING (0 0, 1 1)\nPOINT (1 2)\n",
            false,
            "wrong_type.wkt: line 2: a POINT where lines are expected",
        ),
        (
            "one_vertex.geojson",
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0]]}}]}"#,
            false,
            "one_vertex.geojson: feature 0: part 0 has 1 vertex(es), a line needs at least 2",
        ),
        (
            "line_as_point.geojson",
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}]}"#,
            true,
            "line_as_point.geojson: feature 0: a LineString where points are expected",
        ),
        (
            "broken_point.geojson",
            "{\"type\":\"FeatureCollection\",\"features\":[\n{\"type\":\"Feature\",\"properties\":{},\"geometry\":{\"type\":\"Point\",\"coordinates\":[0,0]}},\n{\"type\":\"Feature\",\"properties\":{},\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,]}}]}",
            true,
            "broken_point.geojson: feature 1 (line 3, column 79): trailing comma",
        ),
        (
            "cut_lines.geojson",
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,"#,
            false,
            "cut_lines.geojson: line 1, column 41: feature 0: the file ends inside it",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, text, as_points, want) in cases {
        let p = temp(&dir, name, text);
        let out = p.with_extension("out.csv");
        let p = p.to_str().unwrap();
        let o = out.to_str().unwrap();
        let args = if as_points {
            vec!["snap", "--points", p, "--lines", "lines.geojson", "--out", o]
        } else {
            vec!["snap", "--points", "points.csv", "--lines", p, "--out", o]
        };
        let e = err(&segdist(&args));
        assert!(e.contains(want), "{name}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(!out.exists(), "{name}: output left behind");
        let folder = out.parent().unwrap();
        let left: Vec<_> = std::fs::read_dir(folder)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }
    let e = err(&segdist(&["snap", "--points", "points.csv", "--lines", "lines.txt2"]));
    assert!(e.contains("cannot tell the format"), "{e}");
    let e = err(&segdist(&["snap", "--points", "points.csv", "--lines", "missing.geojson"]));
    assert!(e.contains("cannot open missing.geojson"), "{e}");
    let e = err(&segdist(&["snap", "--points", "points.csv", "--lines", "lines.wkt", "--max-distance=-1"]));
    assert!(e.contains("--max-distance"), "{e}");
}

/// 10,000 points against 5,000 segments (as WKT lines of 1 to 4 segments),
/// every output row checked against a brute-force scan with the accurate
/// kernel.
#[test]
fn snap_agrees_with_brute_force() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut lines: Vec<Vec<[f64; 2]>> = Vec::new();
    let mut segments = 0;
    while segments < 5000 {
        let n = 1 + (rnd() * 4.0) as usize;
        let mut v = vec![[rnd() * 1000.0, rnd() * 1000.0]];
        for _ in 0..n {
            let last = v[v.len() - 1];
            v.push([last[0] + (rnd() - 0.5) * 40.0, last[1] + (rnd() - 0.5) * 40.0]);
        }
        segments += n;
        lines.push(v);
    }
    let mut wkt = String::new();
    for l in &lines {
        let pts: Vec<String> = l.iter().map(|p| format!("{:?} {:?}", p[0], p[1])).collect();
        let _ = writeln!(wkt, "LINESTRING ({})", pts.join(", "));
    }
    // 2,000 points: the brute force below is compiled with this test at
    // the command line's opt-level 0 (10,000 took CI a minute on one core).
    let points: Vec<[f64; 2]> = (0..2_000).map(|_| [rnd() * 1000.0, rnd() * 1000.0]).collect();
    let mut csv = String::from("x,y\n");
    for p in &points {
        let _ = writeln!(csv, "{:?},{:?}", p[0], p[1]);
    }
    let dir = tempfile::tempdir().unwrap();
    let (lp, pp) = (temp(&dir, "e2e_lines.wkt", &wkt), temp(&dir, "e2e_points.csv", &csv));
    let text = ok(&segdist(&["snap", "--points", pp.to_str().unwrap(), "--lines", lp.to_str().unwrap()]));
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), points.len());
    for (row, p) in rows.iter().zip(&points) {
        let f: Vec<&str> = row.split(',').collect();
        // Brute force: every segment, lowest (line, segment) wins ties.
        let mut best = (f64::INFINITY, 0, 0, None);
        for (li, l) in lines.iter().enumerate() {
            for s in 0..l.len() - 1 {
                let r = Segment::new(l[s], l[s + 1]).closest_point(*p);
                if r.distance < best.0 {
                    best = (r.distance, li, s, Some(r));
                }
            }
        }
        let r = best.3.unwrap();
        let num = |i: usize| f[i].parse::<f64>().unwrap();
        assert_eq!((f[1], f[3]), (best.1.to_string().as_str(), best.2.to_string().as_str()), "{row}");
        assert_eq!((num(4), num(5), num(6), num(7)), (r.distance, r.point[0], r.point[1], r.t), "{row}");
        let l = &lines[best.1];
        let cum = segdist_index::cumulative_lengths(l);
        assert_eq!(num(8), segdist_index::along(&cum, best.2, r.t), "{row}");
    }
}

#[test]
fn plot_draws_every_element_and_samples_beyond_the_limit() {
    let svg = ok(&segdist(&["plot", "--points", "points.csv", "--lines", "lines.geojson"]));
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    // 5 lines (the multi-line has two parts), 6 points and 6 connectors.
    assert_eq!(svg.matches("<polyline").count(), 5);
    assert_eq!(svg.matches("<line ").count(), 6);
    assert_eq!(svg.matches("<circle").count(), 12);
    let o = segdist(&["plot", "--points", "points.csv", "--lines", "lines.geojson", "--max-points", "2"]);
    let svg = ok(&o);
    assert!(svg.contains("a sample of 2 of 6 points"), "{svg}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("drawing 2 of 6 points"));
}

#[test]
fn demo_writes_its_files_and_credits_the_data() {
    let dir = std::env::temp_dir().join(format!("segdist-demo-test-{}", std::process::id()));
    let text = ok(&segdist(&["demo", "--dir", dir.to_str().unwrap()]));
    assert!(text.contains("Snapped 2311 points to the nearest of 2577 roads"), "{text}");
    assert!(text.contains("© OpenStreetMap contributors"));
    let csv = std::fs::read_to_string(dir.join("snapped.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2312);
    let svg = std::fs::read_to_string(dir.join("snapped.svg")).unwrap();
    assert!(svg.contains("Open Database License"));
    let _ = std::fs::remove_dir_all(dir);
}

/// Many points, as CSV text: more than one chunk and more than a pipe holds.
fn many_points(n: usize, bad_at: Option<usize>) -> String {
    let mut csv = String::from("id,x,y\n");
    for i in 0..n {
        if Some(i) == bad_at {
            csv.push_str("bad,1.5,oops\n");
        } else {
            let _ = writeln!(csv, "{i},{},{}", (i % 997) as f64 * 0.03, (i % 89) as f64 * 0.3);
        }
    }
    csv
}

#[test]
fn a_bad_row_in_a_later_chunk_still_leaves_no_output() {
    let dir = tempfile::tempdir().unwrap();
    // Past the first chunk of 262,144 rows (`snap::CHUNK`), whose answers
    // are written before the bad row is read.
    let p = temp(&dir, "late_bad.csv", &many_points(300_000, Some(290_000)));
    let out = p.with_extension("out.csv");
    let e = err(&segdist(&[
        "snap",
        "--points",
        p.to_str().unwrap(),
        "--lines",
        "lines.geojson",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(e.contains("late_bad.csv: line 290002, column 3 (y): cannot read \"oops\" as a number"), "{e}");
    assert!(!out.exists());
}

#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let p = temp(&dir, "pipe.csv", &many_points(300_000, None));
    let mut child = Command::new(env!("CARGO_BIN_EXE_segdist"))
        .args(["snap", "--quiet", "--points", p.to_str().unwrap(), "--lines", "lines.geojson"])
        .current_dir(root().join("crates/segdist-cli/tests/data"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    use std::io::Read;
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// segdist-sql's tests check `segdist_snap` against these files, bit for
/// bit; this test keeps them what `segdist snap` prints today.
#[test]
fn the_sql_crates_golden_files_are_this_cli_output() {
    let h = root().join("examples/helsinki");
    let (points, roads) = (h.join("points.geojson"), h.join("roads.geojson"));
    let (points, roads) = (points.to_str().unwrap(), roads.to_str().unwrap());
    let sql_golden =
        |name: &str| std::fs::read_to_string(root().join("crates/segdist-sql/tests/golden").join(name)).unwrap();
    let o = segdist(&["snap", "--points", points, "--lines", roads, "-q"]);
    assert_eq!(ok(&o), sql_golden("helsinki_geographic.csv"));
    let o = segdist(&[
        "snap",
        "--points",
        points,
        "--lines",
        roads,
        "--planar",
        "--k",
        "3",
        "--max-distance",
        "0.0003",
        "-q",
    ]);
    assert_eq!(ok(&o), sql_golden("helsinki_planar_k3.csv"));
}
