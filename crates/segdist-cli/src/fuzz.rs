//! Mutation fuzzing of every reader (a test module): valid CSV (x/y and
//! WKT columns), GeoJSON, WKT and GPX inputs, bytes flipped, inserted, deleted, duplicated or cut
//! at random, fed to the line reader, the point reader and the trace
//! reader. None may panic, and every error must name the file.
//!
//! `SEGDIST_FUZZ=100000 cargo test -p segdist-cli --release fuzz` runs
//! longer (the default is 2,000 inputs per format and reader).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use clap::Parser;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::geom::{read_lines, InputOpts};
use crate::matching::MatchArgs;
use crate::points::{KeepAs, KeepOpts, PointReader};

const CSV_LINES: &str = "id,x,y,oneway\nA,0,0,yes\nA,10,0,yes\nB,10,0,\nB,10,10,\n";
const CSV_POINTS: &str = "trace,time,id,lon,lat\nt1,0,1,24.9,60.1\nt1,1,2,24.91,60.1\nt2,5,3,24.92,60.11\n";
const CSV_WKT_LINES: &str = "id,WKT\nA,\"LINESTRING (0 0, 10 0)\"\nB,\"MULTILINESTRING ((0 1, 1 1), (2 2, 3 3))\"\n";
const CSV_WKT_POINTS: &str = "id,note,geometry\n1,a,POINT (1 2)\n2,\"b, c\",POINT Z (3 4 5)\n";
const GEOJSON: &str = r#"{"type":"FeatureCollection","features":[
{"type":"Feature","id":"a","properties":{"oneway":"yes"},"geometry":{"type":"LineString","coordinates":[[24.9,60.1],[24.91,60.1]]}},
{"type":"Feature","properties":{"name":"p"},"geometry":{"type":"MultiPoint","coordinates":[[24.9,60.1],[24.95,60.12]]}}]}"#;
const WKT: &str = "LINESTRING (0 0, 10 0, 10 10)\nMULTILINESTRING ((0 1, 1 1), (2 2, 3 3))\nPOINT (1 2)\n";
const GPX: &str = r#"<?xml version="1.0"?>
<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><name>a</name><trkseg>
<trkpt lat="60.1" lon="24.9"><time>2026-11-25T08:00:00Z</time></trkpt>
<trkpt lat="60.2" lon="24.91"><time>2026-11-25T08:00:05Z</time></trkpt></trkseg></trk></gpx>"#;

fn mutate(rng: &mut ChaCha8Rng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..rng.gen_range(1..6) {
        let i = rng.gen_range(0..=b.len());
        match rng.gen_range(0..6) {
            0 if i < b.len() => b[i] ^= 1 << rng.gen_range(0..8),
            1 => b.insert(i, *b"\",\n{}[]-.0e9\x00\xff:".get(rng.gen_range(0..19)).unwrap_or(&b'x')),
            2 if i < b.len() => {
                b.remove(i);
            }
            3 => b.truncate(i),
            4 if i < b.len() => {
                let j = rng.gen_range(i..b.len());
                let piece = b[i..=j].to_vec();
                b.splice(i..i, piece);
            }
            _ => b.insert(i, rng.gen()),
        }
    }
    b
}

fn opts() -> InputOpts {
    #[derive(Parser)]
    struct O {
        #[command(flatten)]
        input: InputOpts,
    }
    O::parse_from(["t"]).input
}

/// Runs `read` on `n` mutations of `seed` written to `dir/name`: no panic,
/// and every error names the file.
fn fuzz(dir: &Path, name: &str, seed: impl AsRef<[u8]>, n: usize, read: &dyn Fn(&Path) -> anyhow::Result<()>) {
    let seed = seed.as_ref();
    let mut rng = ChaCha8Rng::seed_from_u64(name.len() as u64 * 7919);
    let path = dir.join(name);
    read(&{
        std::fs::write(&path, seed).unwrap();
        path.clone()
    })
    .unwrap_or_else(|e| panic!("the seed {name} must read: {e:#}"));
    for _ in 0..n {
        let input = mutate(&mut rng, seed);
        std::fs::write(&path, &input).unwrap();
        match catch_unwind(AssertUnwindSafe(|| read(&path))) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let text = format!("{e:#}");
                assert!(text.contains(name), "{name}: an error that does not name the file: {text}\ninput: {input:?}");
            }
            Err(_) => panic!("{name}: a reader panicked on {:?}", String::from_utf8_lossy(&input)),
        }
    }
}

#[test]
fn no_reader_panics_and_every_error_names_the_file() {
    let n: usize = std::env::var("SEGDIST_FUZZ").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let lines = |p: &Path| read_lines(p, &o).map(|_| ());
    let points = |p: &Path| -> anyhow::Result<()> {
        let mut r = PointReader::open(p, &o)?;
        // Kept columns as CSV fields, kept properties as JSON.
        let to = if p.extension().is_some_and(|e| e == "csv") { KeepAs::Csv } else { KeepAs::Json };
        r.keep(&KeepOpts { keep: "all".into() }, to)?;
        let mut chunk = Vec::new();
        loop {
            r.next_chunk(2, &mut chunk)?;
            if chunk.is_empty() {
                return Ok(());
            }
        }
    };
    let traces = |p: &Path| -> anyhow::Result<()> {
        #[derive(Parser)]
        struct M {
            #[command(flatten)]
            args: MatchArgs,
        }
        let args = M::parse_from(["match", "--points", p.to_str().unwrap(), "--lines", "unused.csv"]).args;
        let mut r = crate::matching::TraceReader::open(&args)?;
        let mut batch = Vec::new();
        while !r.next_batch(&mut batch, 1 << 16)? {}
        Ok(())
    };
    fuzz(dir.path(), "lines.csv", CSV_LINES, n, &lines);
    fuzz(dir.path(), "lines.geojson", GEOJSON.split("},\n{").next().map(|f| format!("{f}}}]}}")).unwrap(), n, &lines);
    fuzz(dir.path(), "lines.wkt", &WKT[..WKT.find("POINT").unwrap()], n, &lines);
    fuzz(dir.path(), "lines_wkt.csv", CSV_WKT_LINES, n, &lines);
    fuzz(dir.path(), "points.csv", CSV_POINTS, n, &points);
    fuzz(dir.path(), "points_wkt.csv", CSV_WKT_POINTS, n, &points);
    fuzz(dir.path(), "points.geojson", GEOJSON.replace("LineString", "MultiPoint"), n, &points);
    fuzz(dir.path(), "points.wkt", "POINT (1 2)\nMULTIPOINT ((3 4), (5 6))\n", n, &points);
    // Parquet: fewer inputs (each costs more), WKB and x/y columns.
    let (lines_pq, points_pq) = parquet_seeds();
    fuzz(dir.path(), "lines.parquet", lines_pq, n / 4, &lines);
    fuzz(dir.path(), "points.parquet", points_pq, n / 4, &points);
    fuzz(dir.path(), "traces.csv", CSV_POINTS, n, &traces);
    fuzz(dir.path(), "traces.geojson", GEOJSON.replace("LineString", "MultiPoint"), n, &traces);
    fuzz(dir.path(), "traces.gpx", GPX, n, &traces);
}

/// Small valid Parquet files: lines as WKB with GeoParquet metadata, points
/// as lon/lat columns with an id and a note.
fn parquet_seeds() -> (Vec<u8>, Vec<u8>) {
    use arrow_array::{ArrayRef, BinaryArray, Float64Array, RecordBatch, StringArray};
    use std::sync::Arc;
    let file = |cols: Vec<(&str, ArrayRef)>, geo: Option<&str>| -> Vec<u8> {
        let batch = RecordBatch::try_from_iter(cols).unwrap();
        let kv = geo.map(|g| vec![parquet::file::metadata::KeyValue::new("geo".into(), g.to_string())]);
        let props = parquet::file::properties::WriterProperties::builder().set_key_value_metadata(kv).build();
        let mut buf = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        buf
    };
    let mut line = vec![1u8];
    line.extend(2u32.to_le_bytes());
    line.extend(2u32.to_le_bytes());
    for c in [24.9f64, 60.1, 24.95, 60.12] {
        line.extend(c.to_le_bytes());
    }
    let geo = r#"{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB"}}}"#;
    let lines = file(
        vec![
            ("id", Arc::new(StringArray::from(vec!["a"])) as ArrayRef),
            ("geometry", Arc::new(BinaryArray::from(vec![line.as_slice()]))),
        ],
        Some(geo),
    );
    let points = file(
        vec![
            ("id", Arc::new(StringArray::from(vec!["p", "q"])) as ArrayRef),
            ("note", Arc::new(StringArray::from(vec![Some("x"), None]))),
            ("lon", Arc::new(Float64Array::from(vec![24.91, 24.93]))),
            ("lat", Arc::new(Float64Array::from(vec![60.1, 60.11]))),
        ],
        None,
    );
    (lines, points)
}

#[test]
fn the_fast_geojson_path_never_disagrees_with_geojson() {
    // Features of every shape the fast path takes, mutated: whatever it
    // takes must read as geojson reads it (and the rest goes to geojson).
    let seeds = [
        r#"{"type":"Feature","id":"a","properties":{"oneway":"yes","k":[1,{"x":null}]},"geometry":{"type":"LineString","coordinates":[[24.9,60.1],[24.91,60.1]]}}"#,
        r#"{"type":"Feature","id":7,"properties":null,"geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[0,1],[0,0]]],[]]}}"#,
        r#"{"geometry":{"coordinates":[[1,2,3],[4e-3,-5.5]],"type":"MultiPoint"},"type":"Feature","properties":{}}"#,
        r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[-0.0,1e300]},"properties":null}"#,
    ];
    let n: usize = std::env::var("SEGDIST_FUZZ").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (mut taken, mut agreed) = (0, 0);
    for seed in seeds {
        for _ in 0..n {
            let text = mutate(&mut rng, seed.as_bytes());
            let fast = crate::feature_fast::parse(&text);
            let slow = serde_json::from_slice::<geojson::Feature>(&text).ok();
            if let Some(f) = fast {
                taken += 1;
                assert!(Some(&f) == slow.as_ref(), "{}", String::from_utf8_lossy(&text));
                agreed += 1;
            }
        }
    }
    // Some mutants keep their shape (a digit changed, a property added).
    assert!(taken > n / 100 && agreed == taken, "{taken} {agreed}");
}
