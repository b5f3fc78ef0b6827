//! The `segdist` command line.
//!
//! Errors are printed as one line on stderr and exit with code 2; a broken
//! pipe on stdout (`segdist pairs big.csv | head`) exits quietly with 0.

mod demo;
mod feature_fast;
mod features;
#[cfg(test)]
mod fuzz;
mod geo;
mod geom;
mod locate;
mod matching;
mod output;
mod pairs;
mod parquet;
mod parquet_out;
mod plot;
mod points;
mod snap;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exact point-to-segment distances: where on the segment is the point
/// closest to that point, and how far is it.
#[derive(Parser, Debug)]
#[command(name = "segdist", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Snap points to the nearest line feature (CSV, GeoJSON, WKT, GeoParquet).
    Snap(snap::SnapArgs),
    /// Locate points along a line (linear referencing).
    Locate(locate::LocateArgs),
    /// Match GPS traces to the roads driven (hidden Markov model).
    Match(matching::MatchArgs),
    /// One (segment, point) query per CSV row.
    Pairs(pairs::PairsArgs),
    /// Draw lines, points and their closest points as SVG.
    Plot(plot::PlotArgs),
    /// Snap the bundled Helsinki data and draw it, in one command.
    Demo(demo::DemoArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A malformed Parquet file can make the parquet crate panic: that is
    // caught and reported as one error (parquet.rs), so its message is not
    // printed; every other panic's is.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !parquet::is_reader_panic(info) {
            default(info)
        }
    }));
    if let Err(e) = output::clean_up_on_signals() {
        eprintln!("segdist: warning: Ctrl-C will leave a temporary output behind: {e}");
    }
    let result = match cli.command {
        Command::Snap(args) => snap::run(&args),
        Command::Locate(args) => locate::run(&args),
        Command::Match(args) => matching::run(&args),
        Command::Pairs(args) => pairs::run(&args),
        Command::Plot(args) => plot::run(&args),
        Command::Demo(args) => demo::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("segdist: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<csv::Error>().is_some_and(
                |ce| matches!(ce.kind(), csv::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe),
            )
    })
}
