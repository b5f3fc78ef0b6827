//! Shared by the tests: results as comparable rows, the golden files
//! (`segdist snap`'s own output, checked by segdist-cli's tests), and the
//! bundled Helsinki data.

#![allow(dead_code)]

use std::path::PathBuf;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};

/// One value: NULL/empty, text (ids, integers), or an f64's bits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cell {
    Null,
    Text(String),
    Bits(u64),
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn helsinki(name: &str) -> PathBuf {
    root().join("examples/helsinki").join(name)
}

/// Columns holding numbers in `segdist snap`'s output.
fn numeric(name: &str) -> bool {
    matches!(name, "distance" | "distance_m" | "x" | "y" | "z" | "lon" | "lat" | "t" | "along" | "along_m" | "fraction")
}

/// A `segdist snap` CSV: the header and its rows, sorted by point id
/// (numerically) and rank.
pub fn golden(name: &str) -> (Vec<String>, Vec<Vec<Cell>>) {
    let text = std::fs::read_to_string(root().join("crates/segdist-sql/tests/golden").join(name)).unwrap();
    csv_rows(&text)
}

/// CSV text (no quoted fields) as rows of cells, sorted.
pub fn csv_rows(text: &str) -> (Vec<String>, Vec<Vec<Cell>>) {
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(str::to_string).collect();
    let mut rows: Vec<Vec<Cell>> = lines
        .map(|l| {
            l.split(',')
                .zip(&header)
                .map(|(v, h)| match v {
                    "" => Cell::Null,
                    v if numeric(h) => Cell::Bits(v.parse::<f64>().unwrap().to_bits()),
                    v => Cell::Text(v.to_string()),
                })
                .collect()
        })
        .collect();
    sort(&mut rows);
    (header, rows)
}

/// Query results as the header and rows of cells, sorted.
pub fn batch_rows(batches: &[RecordBatch]) -> (Vec<String>, Vec<Vec<Cell>>) {
    let schema = batches[0].schema();
    let header = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut rows = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            rows.push(
                b.columns()
                    .iter()
                    .map(|c| {
                        if c.is_null(i) {
                            return Cell::Null;
                        }
                        match c.data_type() {
                            DataType::Float64 => Cell::Bits(c.as_primitive::<Float64Type>().value(i).to_bits()),
                            DataType::Int64 => Cell::Text(c.as_primitive::<Int64Type>().value(i).to_string()),
                            _ => Cell::Text(datafusion::arrow::util::display::array_value_to_string(c, i).unwrap()),
                        }
                    })
                    .collect(),
            );
        }
    }
    sort(&mut rows);
    (header, rows)
}

/// By point id (as a number when it is one), then rank.
fn sort(rows: &mut [Vec<Cell>]) {
    let key = |c: &Cell| match c {
        Cell::Text(s) => (s.parse::<i64>().unwrap_or(i64::MAX), s.clone()),
        _ => (i64::MIN, String::new()),
    };
    rows.sort_by(|a, b| (key(&a[0]), key(&a[1])).cmp(&(key(&b[0]), key(&b[1]))));
}

/// Asserts equal headers and rows, naming the first difference.
pub fn assert_same(got: &(Vec<String>, Vec<Vec<Cell>>), want: &(Vec<String>, Vec<Vec<Cell>>)) {
    assert_eq!(got.0, want.0, "columns");
    assert_eq!(got.1.len(), want.1.len(), "rows");
    for (i, (g, w)) in got.1.iter().zip(&want.1).enumerate() {
        assert_eq!(g, w, "row {i} differs");
    }
}
