//! Side-by-side benchmarks: segdist against the textbook loop and its peers
//! (geo, parry, kurbo), in one run on the same data.
//!
//! ```text
//! cargo run --release -p segdist-bench -- scalar [--quick]
//! cargo run --release -p segdist-bench -- batch [--quick]
//! cargo run --release -p segdist-bench -- nearest [--quick]
//! cargo run --release -p segdist-bench -- geo [--quick]
//! cargo run --release -p segdist-bench -- collide [--quick]   # circles among walls; JSON lines of their own (walls, agents, ns_per_agent_step, ...)
//! cargo run --release -p segdist-bench -- nearest-scale [--quick]   # 10 M segments, 100 M points
//! cargo run --release -p segdist-bench -- single [--quick]   # one query at a time, 10 k to 10 M segments
//! cargo run --release -p segdist-bench -- match [--city] [--quick]   # map matching on simulated traces
//! cargo run --release -p segdist-bench -- match-data DIR [TRACES] [--city]   # for crates/segdist-match/bench/bench.py
//! cargo run --release -p segdist-bench -- snap-data DIR [POINTS] [SEGMENTS]   # for scripts/snap_e2e.sh
//! ```
//!
//! `SEGDIST_BENCH_INDEX_ISA=avx2` (or `avx512`, `sse2`, `scalar`) runs the
//! index batches of `nearest`, `nearest-scale` and `single` in that form of
//! their kernels (`QueryOptions::isa`), to time each form on one CPU.
//!
//! Every result is one JSON object per line on stdout (`workload`, `impl`,
//! `n`, `threads`, `ns_per_query`, and for accuracy workloads `max_ulps` and
//! `median_ulps`); a Markdown summary with ratios goes to stderr. Timings are
//! the median of interleaved repetitions, so drift on a shared machine hits
//! every implementation alike.

mod batch;
mod collide;
mod geo;
mod mapmatch;
mod nearest;
mod peers;
mod report;
mod scalar;
mod single;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let what: Vec<&str> = args.iter().map(String::as_str).filter(|a| !a.starts_with("--")).collect();
    let mut known = false;
    if what.is_empty() || what.contains(&"scalar") {
        scalar::run(quick);
        known = true;
    }
    if what.is_empty() || what.contains(&"batch") {
        batch::run(quick);
        known = true;
    }
    if what.is_empty() || what.contains(&"nearest") {
        nearest::run(quick);
        known = true;
    }
    if what.first() == Some(&"match-data") {
        mapmatch::data(&what[1..], args.iter().any(|a| a == "--city"));
        return;
    }
    if what.first() == Some(&"snap-data") {
        nearest::snap_data(&what[1..]);
        return;
    }
    if what.is_empty() || what.contains(&"geo") {
        geo::run(quick);
        known = true;
    }
    if what.is_empty() || what.contains(&"collide") {
        collide::run(quick);
        known = true;
    }
    // Not in the default set: minutes, and gigabytes.
    // Not in the default set: the map-matching accuracy and speed.
    if what.contains(&"match") {
        mapmatch::run(quick, args.iter().any(|a| a == "--city"));
        known = true;
    }
    // Not in the default set: minutes, and a 10 M-segment rstar tree.
    if what.contains(&"single") {
        single::run(quick);
        known = true;
    }
    if what.contains(&"nearest-scale") {
        nearest::run_scale(quick);
        known = true;
    }
    if !known {
        eprintln!("usage: segdist-bench [scalar] [batch] [nearest] [geo] [collide] [nearest-scale] [single] [match [--city]] [--quick]");
        std::process::exit(2);
    }
}
