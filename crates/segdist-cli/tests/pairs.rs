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

/// A tiny deterministic generator (xorshift) of awkward coordinates.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn coord(&mut self, kind: u64) -> f64 {
        match kind {
            0 => loop {
                let x = f64::from_bits(self.next());
                if x.is_finite() {
                    return x;
                }
            },
            1 => f64::from_bits(self.next() % 4_000_000), // subnormals and zero
            2 => (self.unit() - 0.5) * 1e300,
            3 => 5e5 + self.unit() * 1e1,
            4 => -0.0,
            _ => self.unit(),
        }
    }
}

#[test]
fn adversarial_rows_read_back_to_the_library_bits() {
    let mut g = Gen(0x2545f4914f6cdd1d);
    let mut csv = String::from("ax,ay,az,bx,by,bz,px,py,pz\n");
    let mut rows = Vec::new();
    for i in 0..3000 {
        let kind = g.next() % 6;
        let a: [f64; 3] = std::array::from_fn(|_| g.coord(kind));
        let b: [f64; 3] = std::array::from_fn(|_| g.coord(kind));
        let mut p: [f64; 3] = std::array::from_fn(|_| g.coord(kind));
        if i % 4 == 0 {
            // Within ~1e-16 (relative) of the segment.
            let t = g.unit();
            p = std::array::from_fn(|k| a[k] + t * (b[k] - a[k]));
        }
        let f = |x: f64| format!("{x:e}");
        csv.push_str(&[a, b, p].iter().flatten().map(|x| f(*x)).collect::<Vec<_>>().join(","));
        csv.push('\n');
        rows.push((a, b, p));
    }
    let o = segdist(&["pairs"], Some(&csv));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), rows.len() + 1);
    for (line, (a, b, p)) in stdout(&o).lines().skip(1).zip(&rows) {
        let fld: Vec<&str> = line.split(',').collect();
        let n = |i: usize| fld[i].parse::<f64>().unwrap();
        let r = segdist::Segment3::new(*a, *b).closest_point(*p);
        assert_eq!(n(9).to_bits(), r.distance.to_bits(), "{line}");
        assert_eq!(n(10).to_bits(), r.distance_squared.to_bits(), "{line}");
        assert_eq!([n(11), n(12), n(13)].map(f64::to_bits), r.point.map(f64::to_bits), "{line}");
        assert_eq!(n(14).to_bits(), r.t.to_bits(), "{line}");
        assert_eq!(fld[15], r.region.as_str());
        // The inputs themselves read back exactly (the kernel saw the values written).
        assert_eq!([n(0), n(1), n(2)].map(f64::to_bits), a.map(f64::to_bits));
    }
    // 2D through the same path, from the first two coordinates.
    let csv2: String = std::iter::once("ax,ay,bx,by,px,py\n".to_string())
        .chain(
            rows.iter().map(|(a, b, p)| format!("{:e},{:e},{:e},{:e},{:e},{:e}\n", a[0], a[1], b[0], b[1], p[0], p[1])),
        )
        .collect();
    let o = segdist(&["pairs"], Some(&csv2));
    assert!(o.status.success(), "{}", stderr(&o));
    for (line, (a, b, p)) in stdout(&o).lines().skip(1).zip(&rows) {
        let fld: Vec<&str> = line.split(',').collect();
        let n = |i: usize| fld[i].parse::<f64>().unwrap();
        let r = segdist::Segment2::new([a[0], a[1]], [b[0], b[1]]).closest_point([p[0], p[1]]);
        assert_eq!(
            [n(6), n(7), n(8), n(9), n(10)].map(f64::to_bits),
            [r.distance, r.distance_squared, r.point[0], r.point[1], r.t].map(f64::to_bits),
            "{line}"
        );
    }
}

/// `--out` naming something that is not a regular file (a named pipe
/// here; `/dev/null` alike) is written in place: a temporary renamed over
/// it would replace the pipe, or the device, with a file.
#[cfg(unix)]
#[test]
fn an_output_that_is_a_named_pipe_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("rows.csv");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // Blocks until the command opens the pipe to write, then reads it all.
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = segdist(&["pairs", "--out", fifo.to_str().unwrap(), "examples/pairs.csv"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    // (Checked before the reader is joined: had the pipe been replaced,
    // the reader would wait on it for ever.)
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the pipe was replaced by a file");
    assert_eq!(reader.join().unwrap(), golden("pairs.csv"));
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["rows.csv"], "nothing but the pipe");
}
