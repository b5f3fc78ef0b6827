//! `segdist match`: simulated traces with known truth through the binary
//! (CSV and GeoJSON in, a row per fix and the paths out), the library's
//! answer reproduced, one-way columns obeyed, and bad input named by file
//! and line with nothing written.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

use segdist_match::simulate::{simulate, SimOptions};
use segdist_match::{Direction, Fix, GraphBuilder, MatchOptions, Matcher, Space};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_segdist")).current_dir(dir).args(args).output().unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// A 6 × 6 grid of 100 m blocks as lines CSV (id, x, y, oneway: the
/// horizontal lines of odd rows one-way eastward), and the same as a graph.
fn grid(dir: &Path) -> segdist_match::RoadGraph {
    let mut csv = String::from("id,x,y,oneway\n");
    let mut b = GraphBuilder::new(Space::Planar);
    let mut id = 0;
    for i in 0..=6 {
        for j in 0..6 {
            let (x, y) = (f64::from(i) * 100.0, f64::from(j) * 100.0);
            for (a, c, oneway) in
                [([x, y], [x, y + 100.0], "no"), ([y, x], [y + 100.0, x], if i % 2 == 1 { "yes" } else { "" })]
            {
                let _ = writeln!(csv, "L{id},{},{},{oneway}\nL{id},{},{},{oneway}", a[0], a[1], c[0], c[1]);
                b.push_line(vec![vec![a, c]], Direction::from_oneway(oneway));
                id += 1;
            }
        }
    }
    std::fs::write(dir.join("roads.csv"), csv).unwrap();
    b.build().unwrap()
}

#[test]
fn match_follows_simulated_traces_and_equals_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let g = grid(dir.path());
    // Enough fixes for the first three batches (2,048, 4,096, 8,192) and
    // part of a fourth: rows stay in input order across them.
    let traces = simulate(&g, &[9.37; 84], 300, &SimOptions { interval: 3.0, noise: 5.0, legs: 3, seed: 9 });
    let n: usize = traces.iter().map(Vec::len).sum();
    assert!(n > 2048 + 4096 + 8192, "{n} fixes");
    let mut csv = String::from("trace,time,x,y\n");
    for (t, tr) in traces.iter().enumerate() {
        for f in tr {
            let _ = writeln!(csv, "T{t},{:?},{:?},{:?}", f.fix.time.unwrap(), f.fix.point[0], f.fix.point[1]);
        }
    }
    std::fs::write(dir.path().join("traces.csv"), csv).unwrap();
    let args = ["match", "--points", "traces.csv", "--lines", "roads.csv", "--sigma", "5", "-o", "out.csv"];
    let o = run(dir.path(), &[&args[..], &["--paths-out", "paths.geojson"]].concat());
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("planar"));
    let out = std::fs::read_to_string(dir.path().join("out.csv")).unwrap();
    let mut rows = out.lines();
    assert_eq!(rows.next(), Some("trace_id,point_id,line_id,part,segment,t,distance,x,y,along,sub_match,state"));
    let rows: Vec<Vec<&str>> = rows.map(|r| r.split(',').collect()).collect();
    assert_eq!(rows.len(), traces.iter().map(Vec::len).sum::<usize>());

    // Row by row: the input's trace and row, the library's answer.
    let m = Matcher::new(&g, MatchOptions { sigma: 5.0, radius: 50.0, ..Default::default() }).unwrap();
    let (mut k, mut right, mut sub_matches) = (0, 0, 0);
    for (t, tr) in traces.iter().enumerate() {
        let fixes: Vec<Fix> = tr.iter().map(|f| f.fix).collect();
        let want = m.match_trace(&fixes, true).unwrap();
        sub_matches += want.paths.len();
        for (f, w) in tr.iter().zip(&want.fixes) {
            let r = &rows[k];
            assert_eq!(r[0], format!("T{t}"));
            assert_eq!(r[1], k.to_string(), "point ids are row numbers");
            let c = w.candidate.unwrap();
            assert_eq!(r[2], format!("L{}", c.line));
            assert_eq!(r[6].parse::<f64>().unwrap(), c.distance);
            assert_eq!(r[11], w.state.name());
            right += usize::from(c.line == f.line);
            k += 1;
        }
    }
    assert!(right as f64 / k as f64 > 0.9, "{right} of {k}");

    let paths: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("paths.geojson")).unwrap()).unwrap();
    let features = paths["features"].as_array().unwrap();
    assert_eq!(features.len(), sub_matches);
    assert!(features.iter().all(|f| !f["properties"]["line_ids"].as_array().unwrap().is_empty()));
}

#[test]
fn match_obeys_the_oneway_column() {
    let dir = tempfile::tempdir().unwrap();
    // Eastbound at y = 0 (oneway=yes), westbound at y = 12 (drawn west to
    // east, oneway=-1), joined at the ends.
    let roads =
        "id,x,y,oneway\nE,0,0,yes\nE,1000,0,yes\nW,0,12,-1\nW,1000,12,-1\nA,0,0,\nA,0,12,\nB,1000,0,\nB,1000,12,\n";
    std::fs::write(dir.path().join("roads.csv"), roads).unwrap();
    let mut west = String::from("x,y\n");
    for i in 0..20 {
        let _ = writeln!(west, "{},4", 900 - 40 * i);
    }
    std::fs::write(dir.path().join("west.csv"), west).unwrap();
    let text = ok(&run(dir.path(), &["match", "-q", "--points", "west.csv", "--lines", "roads.csv", "--sigma", "5"]));
    assert!(text.lines().skip(1).all(|r| r.split(',').nth(2) == Some("W")), "{text}");
    // Without the one-way rule, the nearer eastbound line.
    let text = ok(&run(
        dir.path(),
        &["match", "-q", "--points", "west.csv", "--lines", "roads.csv", "--sigma", "5", "--oneway", "none"],
    ));
    assert!(text.lines().skip(1).all(|r| r.split(',').nth(2) == Some("E")), "{text}");
}

#[test]
fn match_reads_geojson_traces_as_lon_lat() {
    let dir = tempfile::tempdir().unwrap();
    let roads = r#"{"type":"FeatureCollection","features":[
      {"type":"Feature","id":"main","properties":{},"geometry":{"type":"LineString","coordinates":[[24.94,60.17],[24.96,60.17]]}}]}"#;
    let traces = r#"{"type":"FeatureCollection","features":[
      {"type":"Feature","id":"drive","properties":{},"geometry":{"type":"LineString","coordinates":[[24.945,60.17003],[24.946,60.16998],[24.947,60.17002]]}},
      {"type":"Feature","id":"stop","properties":{},"geometry":{"type":"MultiPoint","coordinates":[[24.95,60.17004]]}}]}"#;
    std::fs::write(dir.path().join("roads.geojson"), roads).unwrap();
    std::fs::write(dir.path().join("traces.geojson"), traces).unwrap();
    let o = run(dir.path(), &["match", "--points", "traces.geojson", "--lines", "roads.geojson"]);
    let text = ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("geographic"));
    let rows: Vec<Vec<&str>> = text.lines().map(|r| r.split(',').collect()).collect();
    assert_eq!(
        rows[0],
        "trace_id,point_id,line_id,part,segment,t,distance_m,lon,lat,along_m,sub_match,state"
            .split(',')
            .collect::<Vec<_>>()
    );
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[1][..3], ["drive", "0", "main"]);
    assert_eq!(rows[4][..3], ["stop", "0", "main"]);
    // 0.00003° of latitude is 3.34 m, less the few centimetres the
    // geodesic bows north of the parallel there: metres on WGS84.
    let d: f64 = rows[1][6].parse().unwrap();
    assert!(d > 3.25 && d < 3.34, "{d}");
}

#[test]
fn bad_traces_name_the_place_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("roads.csv"), "id,x,y\nA,0,0\nA,1000,0\n").unwrap();
    let cases = [
        (
            "again.csv",
            "trace,x,y\na,1,0\nb,2,0\na,3,0\n",
            "again.csv: line 4: trace \"a\" appears again after other traces",
        ),
        (
            "back.csv",
            "trace,time,x,y\na,5,1,0\na,4,2,0\n",
            "back.csv: line 3: the time goes back from the fix before (trace \"a\")",
        ),
        (
            "time.csv",
            "trace,time,x,y\na,noon,1,0\n",
            "time.csv: line 2, column 2 (time): cannot read \"noon\" as seconds or an RFC 3339 time",
        ),
        (
            "iso.csv",
            "trace,time,x,y\na,2026-11-25T08:00:05Z,1,0\na,2026-11-25T10:00:04+02:00,2,0\n",
            "iso.csv: line 3: the time goes back from the fix before (trace \"a\")",
        ),
        ("num.csv", "trace,x,y\na,1,zero\n", "num.csv: line 2, column 3 (y): cannot read \"zero\" as a number"),
    ];
    for (name, text, want) in cases {
        std::fs::write(dir.path().join(name), text).unwrap();
        let o = run(
            dir.path(),
            &["match", "--points", name, "--lines", "roads.csv", "-o", "out.csv", "--paths-out", "p.geojson"],
        );
        assert_eq!(o.status.code(), Some(2), "{name}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(want), "{name}: {e}");
        assert_eq!(e.lines().filter(|l| l.contains("error")).count(), 1, "{e}");
        assert!(!dir.path().join("out.csv").exists() && !dir.path().join("p.geojson").exists(), "{name}");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
    // RFC 3339 times in order are read as seconds.
    let iso = "trace,time,x,y\na,2026-11-25T08:00:05Z,1,0\na,2026-11-25T10:00:06.5+02:00,2,0\n";
    std::fs::write(dir.path().join("iso_ok.csv"), iso).unwrap();
    ok(&run(dir.path(), &["match", "--points", "iso_ok.csv", "--lines", "roads.csv"]));
    let o = run(dir.path(), &["match", "--points", "again.csv", "--lines", "roads.csv", "--sigma", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--sigma must be a number > 0"));
    let o = run(dir.path(), &["match", "--points", "again.csv", "--lines", "roads.csv", "--acceleration=-1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--acceleration must be a number >= 0"));
    std::fs::write(dir.path().join("lat.csv"), "trace,lon,lat\na,24.9,95\n").unwrap();
    let o = run(dir.path(), &["match", "--points", "lat.csv", "--lines", "roads.csv", "--geographic"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("lat.csv: line 2: latitude 95 is not in [-90, 90]"));
}

#[test]
fn match_reads_gpx_tracks_with_their_times() {
    let dir = tempfile::tempdir().unwrap();
    let roads = r#"{"type":"FeatureCollection","features":[
      {"type":"Feature","id":"main","properties":{},"geometry":{"type":"LineString","coordinates":[[24.94,60.17],[24.96,60.17]]}}]}"#;
    std::fs::write(dir.path().join("roads.geojson"), roads).unwrap();
    let pt =
        |lon: f64, t: &str| format!("<trkpt lat=\"60.17002\" lon=\"{lon}\"><time>2026-11-25T08:00:{t}Z</time></trkpt>");
    let gpx = |first: &str, second: &str| {
        format!(
            "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" creator=\"test\" xmlns=\"http://www.topografix.com/GPX/1/1\">\
             <trk><name>morning</name><trkseg>{}{}</trkseg><trkseg>{}</trkseg></trk>\
             <trk><trkseg>{}</trkseg></trk></gpx>",
            pt(24.945, "00"),
            pt(24.9451, second),
            pt(24.95, "30"),
            pt(24.955, first)
        )
    };
    std::fs::write(dir.path().join("drive.gpx"), gpx("40", "05")).unwrap();
    let o = run(dir.path(), &["match", "--points", "drive.gpx", "--lines", "roads.geojson"]);
    let text = ok(&o);
    assert!(String::from_utf8_lossy(&o.stderr).contains("geographic"));
    let ids: Vec<(&str, &str, &str)> = text
        .lines()
        .skip(1)
        .map(|r| {
            let f: Vec<&str> = r.split(',').collect();
            (f[0], f[1], f[2])
        })
        .collect();
    assert_eq!(
        ids,
        [("morning/0", "0", "main"), ("morning/0", "1", "main"), ("morning/1", "0", "main"), ("1", "0", "main")]
    );
    // A time going back inside a segment is named by track, segment, point.
    std::fs::write(
        dir.path().join("back.gpx"),
        gpx("40", "00").replace(":00Z</time></trkpt><trkpt", ":09Z</time></trkpt><trkpt"),
    )
    .unwrap();
    let o = run(dir.path(), &["match", "--points", "back.gpx", "--lines", "roads.geojson", "-o", "out.csv"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("back.gpx: track 0, segment 0, point 1: the time goes back"), "{e}");
    assert!(!dir.path().join("out.csv").exists());
}

#[test]
fn match_joins_lines_by_node_id_columns() {
    let dir = tempfile::tempdir().unwrap();
    // A bridge (B) over a road (R) at (50, 0) sharing a vertex there but no
    // node; R continues into S at node n2.
    let roads = "id,x,y,u,v\nR,0,0,n1,n2\nR,50,0,n1,n2\nR,100,0,n1,n2\nB,50,-50,n3,n4\nB,50,0,n3,n4\nB,50,50,n3,n4\nS,100,0,n2,n5\nS,100,80,n2,n5\n";
    std::fs::write(dir.path().join("roads.csv"), roads).unwrap();
    std::fs::write(dir.path().join("turn.csv"), "x,y\n20,1\n45,1\n51,20\n51,45\n").unwrap();
    let args = ["match", "-q", "--points", "turn.csv", "--lines", "roads.csv", "--radius", "15"];
    let states =
        |text: &str| text.lines().skip(1).map(|r| r.rsplit(',').next().unwrap().to_string()).collect::<Vec<_>>();
    // By coordinates the shared vertex joins them: one sub-match.
    let text = ok(&run(dir.path(), &args));
    assert_eq!(states(&text), ["matched"; 4]);
    // By node ids they do not meet: a break where the trace turns.
    let text = ok(&run(dir.path(), &[&args[..], &["--from-column", "u", "--to-column", "v"]].concat()));
    assert_eq!(states(&text), ["matched", "matched", "break", "matched"]);
    std::fs::write(dir.path().join("bad.csv"), "id,x,y,u,v\nR,0,0,n1,\nR,100,0,n1,\n").unwrap();
    let o = run(
        dir.path(),
        &["match", "--points", "turn.csv", "--lines", "bad.csv", "--from-column", "u", "--to-column", "v"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("bad.csv: line \"R\" has no v"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// An error found while matching stops the command at once, though its
/// standard input is still open (the reading thread, waiting there for
/// the next batch, is not waited for): exit 2, the error named.
#[test]
fn an_error_does_not_wait_for_an_endless_standard_input() {
    use std::io::Write as _;
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    grid(dir.path());
    // A first batch (65,536 fixes and more) whose first trace goes back in
    // time; then the input stays open.
    let mut csv = String::from("trace,time,x,y\na,5,10,0\na,4,20,0\n");
    for i in 0..70_000 {
        let _ = writeln!(csv, "t{i},0,{},{}", 5 + i % 590, 3 + (i / 590) % 590);
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_segdist"))
        .current_dir(dir.path())
        .args(["match", "--points", "-", "--points-format", "csv", "--lines", "roads.csv", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // (A write may fail once the command has stopped: its error says why.)
    let _ = stdin.write_all(csv.as_bytes()).and_then(|()| stdin.flush());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(120) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    let Some(status) = status else {
        child.kill().unwrap();
        panic!("segdist match still waits on its input two minutes after the error");
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("line 3: the time goes back from the fix before (trace \"a\")"), "{err}");
}

/// The reader runs ahead of the matching, and the batches it has ready are
/// matched together: of two errors, the one earlier in the file is the one
/// named, whichever was found first; one late in a long file is named by
/// its line once the fixes before it are matched; nothing is written.
#[test]
fn the_earlier_of_two_errors_is_named_though_read_ahead() {
    let dir = tempfile::tempdir().unwrap();
    grid(dir.path());
    // Roads enough for the command's start to take longer than reading
    // the traces (far from them), so the reader has found its error by
    // the time the first batches are matched.
    let mut roads = std::fs::read_to_string(dir.path().join("roads.csv")).unwrap();
    for i in 0..100_000 {
        let (x, y) = (1e6 + f64::from(i % 300) * 10.0, f64::from(i / 300) * 10.0);
        let _ = writeln!(roads, "F{i},{x},{y},\nF{i},{},{y},", x + 5.0);
    }
    std::fs::write(dir.path().join("roads.csv"), roads).unwrap();
    let good = |csv: &mut String, from: usize, to: usize| {
        for i in from..to {
            let _ = writeln!(csv, "t{},{i},{},{}", i / 500, 5 + i % 590, 3 + (i / 590) % 590);
        }
    };
    // Line 3,002 goes back in time; line 40,002 is not a number.
    let mut both = String::from("trace,time,x,y\n");
    good(&mut both, 0, 3000);
    both.push_str("t5,1,10,0\n");
    good(&mut both, 3001, 40_000);
    both.push_str("t80,40000,10,zero\n");
    good(&mut both, 40_001, 50_000);
    let mut late = String::from("trace,time,x,y\n");
    good(&mut late, 0, 40_000);
    late.push_str("t80,40000,10,zero\n");
    good(&mut late, 40_001, 50_000);
    for (name, text, want) in [
        ("both.csv", both, "both.csv: line 3002: the time goes back from the fix before (trace \"t5\")"),
        ("late.csv", late, "late.csv: line 40002, column 4 (y): cannot read \"zero\" as a number"),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
        let o = run(dir.path(), &["match", "--points", name, "--lines", "roads.csv", "-o", "out.csv", "-q"]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {e}");
        assert!(e.contains(want), "{name}: {e}");
        assert!(!dir.path().join("out.csv").exists(), "{name}");
    }
}
