//! Interrupted runs leave nothing behind: Ctrl-C or SIGTERM while `snap -o`
//! is writing removes the temporary output and exits 130 / 143, leaving an
//! older output as it was; the temporary of a run killed outright is
//! removed by the next run writing the same output.

use std::path::Path;
use std::process::{Command, Output};

const LINES: &str = "id,x,y\nA,0,0\nA,10,0\nB,0,5\nB,10,5\n";

fn snap(dir: &Path, points: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_segdist"));
    c.current_dir(dir).args(["snap", "--planar", "-q", "--points", points, "--lines", "lines.csv", "-o", "out.csv"]);
    c
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    names
}

#[test]
fn a_killed_runs_temporary_is_removed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lines.csv"), LINES).unwrap();
    std::fs::write(dir.path().join("points.csv"), "id,x,y\n1,2,1\n").unwrap();
    // A process id no system hands out (above Linux's largest pid_max).
    let stale = dir.path().join(".out.csv.segdist-999999999.tmp");
    std::fs::write(&stale, "half").unwrap();
    // Another output's temporary is not this run's business.
    std::fs::write(dir.path().join(".other.csv.segdist-999999999.tmp"), "half").unwrap();
    let o: Output = snap(dir.path(), "points.csv").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("removed") && err.contains(".out.csv.segdist-999999999.tmp"), "{err}");
    assert_eq!(files(dir.path()), [".other.csv.segdist-999999999.tmp", "lines.csv", "out.csv", "points.csv"]);
}

#[cfg(unix)]
#[test]
fn ctrl_c_or_sigterm_while_writing_removes_the_temporary() {
    use std::io::Write;
    use std::time::{Duration, Instant};
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lines.csv"), LINES).unwrap();
        std::fs::write(dir.path().join("out.csv"), "old\n").unwrap();
        // The points come through a pipe held open: snap reads its first
        // chunk (2^18 points), opens its output and writes that chunk's
        // rows, then waits for more input.
        let fifo = dir.path().join("points.csv");
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let mut child = snap(dir.path(), "points.csv").spawn().unwrap();
        let mut pipe = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        let mut text = String::from("id,x,y\n");
        for i in 0..300_000 {
            text.push_str(&format!("{i},{}.5,1\n", i % 10));
        }
        pipe.write_all(text.as_bytes()).unwrap();
        let tmp = dir.path().join(format!(".out.csv.segdist-{}.tmp", child.id()));
        let start = Instant::now();
        while std::fs::metadata(&tmp).map_or(true, |m| m.len() == 0) {
            assert!(start.elapsed() < Duration::from_secs(60), "no temporary output appeared");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap().success());
        let status = child.wait().unwrap();
        drop(pipe);
        assert_eq!(status.code(), Some(code), "{signal}");
        assert_eq!(files(dir.path()), ["lines.csv", "out.csv", "points.csv"], "{signal}");
        assert_eq!(std::fs::read_to_string(dir.path().join("out.csv")).unwrap(), "old\n");
    }
}
