//! A real Ballista cluster on loopback: one scheduler and two executors,
//! each its own `segdist-sql` process. `segdist_snap` over a points table
//! of 8 Parquet files runs on it; both executors must have run tasks, and
//! the answer must equal the embedded one (and `segdist snap`'s), bit for
//! bit.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{assert_same, batch_rows, csv_rows, golden, helsinki};

/// A child process, stopped when dropped (a failed test leaves none
/// behind): SIGTERM, as a service manager would, then SIGKILL after 20 s.
struct Proc(Child);

impl Proc {
    fn stop(&mut self) {
        if let Ok(Some(_)) = self.0.try_wait() {
            return; // stopped already (and its pid perhaps another's now)
        }
        let _ = Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop();
    }
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_segdist-sql"))
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The status code of `GET path`, or `None` when nothing answers.
fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").ok()?;
    let mut head = [0u8; 12];
    s.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

/// The Helsinki points as a folder of 8 Parquet files, the roads as one.
fn tables(dir: &Path) {
    let sql = |q: &str, out: &Path| {
        let o = bin()
            .arg("query")
            .arg(format!("--table=p={}", helsinki("points.geojson").display()))
            .arg(format!("--table=r={}", helsinki("roads.geojson").display()))
            .arg("--out")
            .arg(out)
            .arg(q)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    std::fs::create_dir(dir.join("points")).unwrap();
    for i in 0..8 {
        let q = format!("SELECT * FROM p WHERE CAST(id AS BIGINT) % 8 = {i}");
        sql(&q, &dir.join(format!("points/part-{i}.parquet")));
    }
    sql("SELECT * FROM r", &dir.join("roads.parquet"));
}

#[test]
fn segdist_snap_on_a_scheduler_and_two_executors_equals_the_embedded_answer() {
    let dir = tempfile::tempdir().unwrap();
    tables(dir.path());
    let sched = free_port();
    let _scheduler = Proc(
        bin()
            .args(["scheduler", "--bind", &format!("127.0.0.1:{sched}"), "--min-executors", "2"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // The executors' temporary folder: what they leave there is checked.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut executors = Vec::new();
    for _ in 0..2 {
        let (flight, grpc) = (free_port(), free_port());
        executors.push(Proc(
            bin()
                .args(["executor", "--scheduler", &format!("127.0.0.1:{sched}")])
                .args(["--bind", &format!("127.0.0.1:{flight}"), "--grpc-port", &grpc.to_string()])
                // One task at a time each: the 8 partitions must be shared.
                .args(["--concurrent-tasks", "1"])
                .env("TMPDIR", &tmp)
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        ));
    }
    let start = Instant::now();
    while http_status(sched, "/readyz") != Some(200) {
        assert!(start.elapsed() < Duration::from_secs(60), "the executors did not register");
        std::thread::sleep(Duration::from_millis(100));
    }

    let query = |scheduler: Option<u16>, out: &Path| {
        let mut c = bin();
        c.arg("query")
            .arg(format!("--table=p={}", dir.path().join("points").display()))
            .arg(format!("--table=r={}", dir.path().join("roads.parquet").display()))
            .args(["--partitions", "8", "--out"])
            .arg(out)
            .arg("SELECT * FROM segdist_snap('p', 'r')");
        if let Some(s) = scheduler {
            c.args(["--scheduler", &format!("127.0.0.1:{s}")]);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stderr).unwrap()
    };
    let embedded = dir.path().join("embedded.csv");
    query(None, &embedded);
    let distributed = dir.path().join("distributed.csv");
    let report = query(Some(sched), &distributed);

    // Both executors ran tasks, and stderr says so.
    let lines: Vec<&str> = report.lines().filter(|l| l.contains("executor ") && l.contains("task(s)")).collect();
    assert_eq!(lines.len(), 2, "{report}");
    let tasks: usize =
        lines.iter().map(|l| l.rsplit(": ").next().unwrap().split(' ').next().unwrap().parse::<usize>().unwrap()).sum();
    assert_eq!(tasks, 8, "{report}");

    let read = |p: &Path| csv_rows(&std::fs::read_to_string(p).unwrap());
    assert_same(&read(&distributed), &read(&embedded));
    assert_same(&read(&distributed), &golden("helsinki_geographic.csv"));

    // Parquet is written on the client as the rows arrive from the executors.
    let parquet = dir.path().join("distributed.parquet");
    query(Some(sched), &parquet);
    let reader = datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(&parquet).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let batches: Vec<_> = reader.map(Result::unwrap).collect();
    assert_same(&batch_rows(&batches), &golden("helsinki_geographic.csv"));

    // A folder: every task writes its own Parquet files on the executors,
    // and only their names and row counts come back; embedded, the threads
    // write them. Both hold the golden answer, and a second run replaces the
    // first's files.
    let read_parts = |d: &Path| {
        let mut files: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        assert!(files.iter().all(|f| f.extension().is_some_and(|e| e == "parquet")), "only parts: {files:?}");
        let mut batches = Vec::new();
        for f in &files {
            let r = datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                std::fs::File::open(f).unwrap(),
            )
            .unwrap()
            .build()
            .unwrap();
            batches.extend(r.map(Result::unwrap));
        }
        (files.len(), batch_rows(&batches))
    };
    let parts = dir.path().join("parts/");
    let report = query(Some(sched), &parts);
    assert!(report.contains("Parquet file(s) under"), "{report}");
    let (n, rows) = read_parts(&parts);
    assert_eq!(n, 8, "one file per partition");
    assert_same(&rows, &golden("helsinki_geographic.csv"));
    query(Some(sched), &parts);
    assert_eq!(read_parts(&parts).0, 8, "the first run's files replaced");
    let local = dir.path().join("local/");
    query(None, &local);
    let (n, rows) = read_parts(&local);
    assert_eq!(n, 8);
    assert_same(&rows, &golden("helsinki_geographic.csv"));

    // The executors kept the jobs' results in their work folders; stopped,
    // they leave nothing behind.
    let left = |tmp: &Path| std::fs::read_dir(tmp).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>();
    let work = left(&tmp);
    assert_eq!(work.len(), 2, "one work folder each: {work:?}");
    assert!(work.iter().all(|w| w.to_string_lossy().starts_with("segdist-executor-")), "{work:?}");
    for mut e in executors {
        e.stop();
    }
    assert_eq!(left(&tmp), Vec::<std::ffi::OsString>::new(), "left behind by the executors");
}
