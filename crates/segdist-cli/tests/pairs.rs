//! End-to-end tests of `segdist pairs`: golden outputs, every class of bad
//! input (message, exit code, no output file), and pipes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn segdist(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_segdist"));
    cmd.args(args).current_dir(root()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("segdist runs");
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(root().join("crates/segdist-cli/tests/golden").join(name)).unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

#[test]
fn golden_2d() {
    let o = segdist(&["pairs", "examples/pairs.csv"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), golden("pairs.csv"));
}

#[test]
fn golden_3d_segment_and_line() {
    let o = segdist(&["pairs", "examples/pairs3d.csv"], None);
    assert_eq!(stdout(&o), golden("pairs3d.csv"));
    let o = segdist(&["pairs", "--line", "examples/pairs3d.csv"], None);
    assert_eq!(stdout(&o), golden("pairs3d_line.csv"));
}

#[test]
fn golden_f32_from_stdin() {
    let input: String = std::fs::read_to_string(root().join("examples/pairs.csv"))
        .unwrap()
        .lines()
        .take(8)
        .map(|l| format!("{l}\n"))
        .collect();
    let o = segdist(&["pairs", "--f32", "-"], Some(&input));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), golden("pairs_f32.csv"));
}

#[test]
fn output_reads_back_to_the_library_result_bit_for_bit() {
    let o = segdist(&["pairs", "examples/pairs.csv"], None);
    for line in stdout(&o).lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let n = |i: usize| f[i].parse::<f64>().unwrap();
        let s = segdist::Segment2::new([n(1), n(2)], [n(3), n(4)]);
        let r = s.closest_point([n(5), n(6)]);
        assert_eq!(n(7).to_bits(), r.distance.to_bits(), "{line}");
        assert_eq!(n(8).to_bits(), r.distance_squared.to_bits(), "{line}");
        assert_eq!([n(9).to_bits(), n(10).to_bits()], r.point.map(f64::to_bits), "{line}");
        assert_eq!(n(11).to_bits(), r.t.to_bits(), "{line}");
        assert_eq!(f[12], r.region.as_str());
    }
}

fn assert_error(args: &[&str], stdin: Option<&str>, needle: &str) {
    let o = segdist(args, stdin);
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(needle), "expected {needle:?} in {err:?}");
    assert_eq!(err.lines().count(), 1, "one error line: {err:?}");
    assert!(o.stdout.is_empty(), "nothing on stdout after an error in the first rows");
}

#[test]
fn unparseable_number_names_line_and_column() {
    assert_error(
        &["pairs"],
        Some("ax,ay,bx,by,px,py\n0,0,1,1,2,2\n1,2,3,4,5,x\n"),
        "<stdin>: line 3, column 6 (py): cannot read \"x\" as a number",
    );
}

#[test]
fn nan_coordinate_is_rejected() {
    assert_error(
        &["pairs"],
        Some("ax,ay,bx,by,px,py\nNaN,0,1,1,2,2\n"),
        "line 2, column 1 (ax): \"NaN\" is not a finite number",
    );
    assert_error(&["pairs"], Some("ax,ay,bx,by,px,py\n0,inf,1,1,2,2\n"), "column 2 (ay)");
}

#[test]
fn missing_column_is_named() {
    assert_error(&["pairs"], Some("ax,ay,bx,by,px\n0,0,1,1,2\n"), "line 1: missing column(s) py");
    assert_error(
        &["pairs"],
        Some("ax,ay,az,bx,by,px,py\n0,0,0,1,1,2,2\n"),
        "missing column(s) bz, pz (a 3D input needs az, bz and pz)",
    );
}

#[test]
fn ragged_row_is_reported() {
    assert_error(&["pairs"], Some("ax,ay,bx,by,px,py\n0,0,1,1,2\n"), "line 2: 5 fields where the header has 6");
}

#[test]
fn missing_file_is_reported() {
    assert_error(&["pairs", "no/such/file.csv"], None, "cannot open no/such/file.csv");
}

#[test]
fn f32_overflow_is_reported() {
    assert_error(&["pairs", "--f32"], Some("ax,ay,bx,by,px,py\n1e39,0,1,1,2,2\n"), "\"1e39\" is out of the f32 range");
}

#[test]
fn no_output_file_is_left_on_error() {
    let dir = std::env::temp_dir().join(format!("segdist-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("result.csv");
    let mut rows = String::from("ax,ay,bx,by,px,py\n");
    for i in 0..40_000 {
        rows.push_str(&format!("0,0,1,1,{i},2\n"));
    }
    rows.push_str("0,0,1,1,oops,2\n");
    let o = segdist(&["pairs", "--out", out.to_str().unwrap()], Some(&rows));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("line 40002"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
    // And a good run writes the whole file.
    let o = segdist(&["pairs", "--out", out.to_str().unwrap(), "examples/pairs.csv"], None);
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), golden("pairs.csv"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn header_only_input_gives_header_only_output() {
    let o = segdist(&["pairs"], Some("ax,ay,bx,by,px,py\n"));
    assert!(o.status.success());
    assert_eq!(stdout(&o), "ax,ay,bx,by,px,py,d,d2,qx,qy,t,region\n");
}

#[test]
fn broken_pipe_exits_quietly() {
    let mut rows = String::from("ax,ay,bx,by,px,py\n");
    for i in 0..200_000 {
        rows.push_str(&format!("0,0,1,1,{i},2\n"));
    }
    let input = std::env::temp_dir().join(format!("segdist-pipe-{}.csv", std::process::id()));
    std::fs::write(&input, rows).unwrap();
    let script = format!(
        "{} pairs {} | head -n 2 >/dev/null; echo ${{PIPESTATUS[0]}}",
        env!("CARGO_BIN_EXE_segdist"),
        input.display()
    );
    let o = Command::new("bash").arg("-c").arg(&script).output().unwrap();
    std::fs::remove_file(&input).unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "0", "stderr: {}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn help_shows_an_example_and_version_works() {
    let o = segdist(&["pairs", "--help"], None);
    assert!(stdout(&o).contains("segdist pairs examples/pairs.csv"));
    let o = segdist(&["--version"], None);
    assert!(stdout(&o).starts_with("segdist "));
}

#[test]
fn delimiter_is_detected_and_kept() {
    let o = segdist(&["pairs"], Some("ax;ay;bx;by;px;py\n0;0;2;0;1;3\n"));
    assert_eq!(stdout(&o), "ax;ay;bx;by;px;py;d;d2;qx;qy;t;region\n0;0;2;0;1;3;3.0;9.0;1.0;0.0;0.5;interior\n");
    let o = segdist(&["pairs"], Some("ax\tay\tbx\tby\tpx\tpy\n0\t0\t2\t0\t1\t3\n"));
    assert!(stdout(&o).starts_with("ax\tay\tbx\tby\tpx\tpy\td\t"), "{}", stdout(&o));
    let o = segdist(&["pairs", "--delimiter", "|"], Some("ax|ay|bx|by|px|py\n0|0|2|0|1|3\n"));
    assert!(stdout(&o).ends_with("|3.0|9.0|1.0|0.0|0.5|interior\n"), "{}", stdout(&o));
}

#[test]
fn bom_crlf_and_quotes_are_read() {
    let o = segdist(&["pairs"], Some("\u{feff}ax,ay,bx,by,px,py\r\n\"0\",+0,2,0,1,-3\r\n"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().nth(1), Some("0,+0,2,0,1,-3,3.0,9.0,1.0,0.0,0.5,interior"));
}
