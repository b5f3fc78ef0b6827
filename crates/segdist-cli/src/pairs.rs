//! `segdist pairs`: one (segment, point) query per CSV row.

use std::fs::File;
use std::io::{self, BufRead, Read, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::ProgressBar;
use rayon::prelude::*;
use segdist::{batch, Region, Scalar};

use crate::geom::{csv_error, sniff_delimiter};
use crate::output::{progress_bar, Output};

/// For each row, the closest point on segment a→b to point p, and how far.
///
/// Reads a CSV whose header names the columns ax,ay,bx,by,px,py (add
/// az,bz,pz for 3D; other columns are kept and their order is free; the
/// delimiter is detected and used for the output too) and
/// writes the same rows followed by the columns d,d2,qx,qy,t,region (with qz
/// after qy in 3D).
/// Every number is faithfully rounded and printed in the shortest form that
/// reads back to the same value.
///
/// region is start, interior or end. With --line, t is unclamped (the
/// infinite line through a and b) and there is no region column.
///
/// A row that cannot be read stops the run with one error line naming the
/// file, line and column, exit code 2, and no output file left behind.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    segdist pairs examples/pairs.csv\n  \
    segdist pairs --line --out result.csv input.csv\n  \
    cat input.csv | segdist pairs --f32 > out.csv")]
pub struct PairsArgs {
    /// Input CSV file; '-' or nothing reads standard input.
    input: Option<PathBuf>,
    /// Write to this file (atomically) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Project onto the infinite line through a and b instead of the segment.
    #[arg(long)]
    line: bool,
    /// Read the coordinates as f32 and compute in f32 (results rounded to f32).
    #[arg(long)]
    f32: bool,
    /// Use the fast tier (textbook formula, not faithfully rounded).
    #[arg(long)]
    fast: bool,
    /// Field delimiter (default: detected from the header line among
    /// ',', ';', tab and '|').
    #[arg(short, long, value_name = "CHAR")]
    delimiter: Option<char>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

/// Rows handed to the kernels at a time.
const CHUNK: usize = 1 << 14;

pub fn run(args: &PairsArgs) -> Result<()> {
    let (name, reader, len): (String, Box<dyn Read>, Option<u64>) = match &args.input {
        Some(p) if p.as_os_str() != "-" => {
            let f = File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
            let len = f.metadata().ok().map(|m| m.len());
            (p.display().to_string(), Box::new(f), len)
        }
        _ => ("<stdin>".to_string(), Box::new(io::stdin().lock()), None),
    };
    let mut reader = io::BufReader::with_capacity(1 << 16, reader);
    let delimiter = match args.delimiter {
        Some(c) if c.is_ascii() => c as u8,
        Some(c) => bail!("--delimiter must be a single ASCII character, not {c:?}"),
        None => sniff_delimiter(reader.fill_buf().with_context(|| format!("cannot read {name}"))?),
    };
    let reader: Box<dyn Read> = Box::new(reader);
    let mut rdr = csv::ReaderBuilder::new().has_headers(true).flexible(false).delimiter(delimiter).from_reader(reader);
    let header = rdr.byte_headers().with_context(|| format!("{name}: cannot read the header"))?.clone();
    let cols = Columns::find(&header, &name)?;
    let progress = progress_bar(args.quiet, len);
    let mut out = Output::open(args.out.as_deref())?;
    let mut head = header.clone();
    for c in ["d", "d2", "qx", "qy"] {
        head.push_field(c.as_bytes());
    }
    if cols.three_d() {
        head.push_field(b"qz");
    }
    head.push_field(b"t");
    if !args.line {
        head.push_field(b"region");
    }
    let head = {
        let mut wr = csv::WriterBuilder::new().delimiter(delimiter).from_writer(Vec::new());
        wr.write_byte_record(&head)?;
        wr.into_inner().map_err(|e| anyhow::anyhow!("formatting the header: {e}"))?
    };
    let ctx =
        Ctx { name: &name, cols: &cols, header: &header, out_header: &head, delimiter, args, progress: &progress };
    match (cols.three_d(), args.f32) {
        (false, false) => process::<f64, 2>(&mut rdr, &mut out, &ctx)?,
        (true, false) => process::<f64, 3>(&mut rdr, &mut out, &ctx)?,
        (false, true) => process::<f32, 2>(&mut rdr, &mut out, &ctx)?,
        (true, true) => process::<f32, 3>(&mut rdr, &mut out, &ctx)?,
    }
    out.finish()?;
    progress.finish_and_clear();
    Ok(())
}

/// Where each coordinate lives in a row.
struct Columns {
    /// Field indices of ax, ay, (az,) bx, by, (bz,) px, py (, pz).
    idx: Vec<usize>,
}

impl Columns {
    fn find(header: &csv::ByteRecord, name: &str) -> Result<Columns> {
        let pos = |c: &str| header.iter().position(|h| h.trim_ascii() == c.as_bytes());
        let z = ["az", "bz", "pz"].map(pos);
        let three_d = z.iter().any(Option::is_some);
        let want: &[&str] = if three_d {
            &["ax", "ay", "az", "bx", "by", "bz", "px", "py", "pz"]
        } else {
            &["ax", "ay", "bx", "by", "px", "py"]
        };
        let missing: Vec<&str> = want.iter().copied().filter(|c| pos(c).is_none()).collect();
        if !missing.is_empty() {
            let hint = if three_d { " (a 3D input needs az, bz and pz)" } else { "" };
            bail!("{name}: line 1: missing column(s) {}{hint}", missing.join(", "));
        }
        Ok(Columns { idx: want.iter().map(|c| pos(c).expect("checked")).collect() })
    }

    fn three_d(&self) -> bool {
        self.idx.len() == 9
    }
}

struct Ctx<'a> {
    name: &'a str,
    cols: &'a Columns,
    header: &'a csv::ByteRecord,
    /// Written once the first chunk has parsed, so a bad first row leaves
    /// standard output empty.
    out_header: &'a [u8],
    delimiter: u8,
    args: &'a PairsArgs,
    progress: &'a ProgressBar,
}

/// A number type the CLI reads and prints.
trait CliFloat: Scalar + std::str::FromStr {
    const NAME: &'static str;
    fn write(self, buf: &mut ryu::Buffer) -> &str;
}

impl CliFloat for f64 {
    const NAME: &'static str = "f64";
    fn write(self, buf: &mut ryu::Buffer) -> &str {
        buf.format(self)
    }
}

impl CliFloat for f32 {
    const NAME: &'static str = "f32";
    fn write(self, buf: &mut ryu::Buffer) -> &str {
        buf.format(self)
    }
}

fn parse<T: CliFloat>(rec: &csv::ByteRecord, field: usize, ctx: &Ctx) -> Result<T> {
    let raw = rec.get(field).unwrap_or_default();
    let text = std::str::from_utf8(raw).unwrap_or("").trim();
    // "file: line L, column C (name)", built only for an error (this runs for
    // every field of every row).
    let place = || {
        let line = rec.position().map_or(0, |p| p.line());
        let col = String::from_utf8_lossy(ctx.header.get(field).unwrap_or_default());
        format!("{}: line {line}, column {} ({col})", ctx.name, field + 1)
    };
    let v: T = text
        .parse()
        .map_err(|_| anyhow::anyhow!("{}: cannot read {:?} as a number", place(), String::from_utf8_lossy(raw)))?;
    if !v.is_finite() {
        let why = if text.parse::<f64>().is_ok_and(f64::is_finite) {
            format!("is out of the {} range", T::NAME)
        } else {
            "is not a finite number".to_string()
        };
        bail!("{}: {text:?} {why}", place());
    }
    Ok(v)
}

fn process<T: CliFloat, const D: usize>(
    rdr: &mut csv::Reader<Box<dyn Read>>,
    sink: &mut Output,
    ctx: &Ctx,
) -> Result<()> {
    let args = ctx.args;
    let opts = batch::Options {
        line: args.line,
        tier: if args.fast { batch::Tier::Fast } else { batch::Tier::Accurate },
        threads: args.threads,
        ..batch::Options::default()
    };
    let mut records: Vec<csv::ByteRecord> = Vec::with_capacity(CHUNK);
    let (mut a, mut b, mut p) = (Vec::with_capacity(CHUNK), Vec::with_capacity(CHUNK), Vec::with_capacity(CHUNK));
    let (mut d, mut d2, mut t) = (Vec::new(), Vec::new(), Vec::new());
    let (mut q, mut region) = (Vec::new(), Vec::new());
    let mut done = false;
    let mut first = true;
    // Records are kept and refilled from chunk to chunk (a fresh one per row
    // made allocation the largest cost of a run).
    while !done {
        let mut filled = 0;
        while filled < CHUNK {
            if filled == records.len() {
                records.push(csv::ByteRecord::new());
            }
            let more = rdr.read_byte_record(&mut records[filled]).map_err(|e| csv_error(e, ctx.name))?;
            if !more {
                done = true;
                break;
            }
            filled += 1;
        }
        let records = &records[..filled];
        // Parse the whole chunk first (on all cores), then report the first bad
        // row in file order: a bad row stops the run before any of its chunk
        // is written.
        let parsed: Vec<Result<[[T; D]; 3]>> = records
            .par_iter()
            .map(|rec| {
                let mut v = [[T::ZERO; D]; 3];
                for (k, &field) in ctx.cols.idx.iter().enumerate() {
                    v[k / D][k % D] = parse::<T>(rec, field, ctx)?;
                }
                Ok(v)
            })
            .collect();
        a.clear();
        b.clear();
        p.clear();
        for row in parsed {
            let v = row?;
            a.push(v[0]);
            b.push(v[1]);
            p.push(v[2]);
        }
        let n = records.len();
        d.resize(n, T::ZERO);
        d2.resize(n, T::ZERO);
        t.resize(n, T::ZERO);
        q.resize(n, [T::ZERO; D]);
        region.resize(n, Region::Start);
        let out = batch::Outputs {
            distance: Some(&mut d[..]),
            distance_squared: Some(&mut d2[..]),
            t: Some(&mut t[..]),
            point: Some(&mut q[..]),
            region: Some(&mut region[..]),
        };
        batch::pairs(&a, &b, &p, out, &opts)?;
        if first {
            sink.write_all(ctx.out_header)?;
            first = false;
        }
        // Format rows on all cores into byte blocks, then write them in order.
        let delimiter = ctx.delimiter;
        let blocks: Vec<Vec<u8>> = records
            .par_chunks(1024)
            .enumerate()
            .map(|(c, recs)| {
                let mut buf = ryu::Buffer::new();
                let mut wr =
                    csv::WriterBuilder::new().delimiter(delimiter).from_writer(Vec::with_capacity(recs.len() * 128));
                for (k, rec) in recs.iter().enumerate() {
                    let i = c * 1024 + k;
                    // Field by field into the writer: no per-row record copy.
                    let mut field = |f: &[u8]| wr.write_field(f).expect("writing to memory");
                    for f in rec {
                        field(f);
                    }
                    field(d[i].write(&mut buf).as_bytes());
                    field(d2[i].write(&mut buf).as_bytes());
                    for x in q[i] {
                        field(x.write(&mut buf).as_bytes());
                    }
                    field(t[i].write(&mut buf).as_bytes());
                    if !args.line {
                        field(region[i].as_str().as_bytes());
                    }
                    wr.write_record(None::<&[u8]>).expect("writing to memory");
                }
                wr.into_inner().expect("writing to memory")
            })
            .collect();
        for block in &blocks {
            sink.write_all(block)?;
        }
        if let Some(pos) = records.last().and_then(|r| r.position()) {
            ctx.progress.set_position(pos.byte());
        }
    }
    Ok(())
}
