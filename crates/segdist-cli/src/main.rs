//! The `segdist` command line.
//!
//! Errors are printed as one line on stderr and exit with code 2; a broken
//! pipe on stdout (`segdist pairs big.csv | head`) exits quietly with 0.

mod output;
mod pairs;

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
    Pairs(pairs::PairsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Pairs(args) => pairs::run(&args),
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
