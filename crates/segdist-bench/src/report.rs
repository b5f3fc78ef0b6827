//! Timing and output helpers shared by every benchmark.

use std::time::Instant;

/// One benchmark result.
pub struct Record {
    pub workload: String,
    pub imp: &'static str,
    pub n: usize,
    pub threads: usize,
    pub ns_per_query: f64,
    /// Extra `"key":value` pairs, already formatted.
    pub extra: Vec<(String, String)>,
}

impl Record {
    pub fn print(&self) {
        let mut s = format!(
            "{{\"workload\":\"{}\",\"impl\":\"{}\",\"n\":{},\"threads\":{},\"ns_per_query\":{:.3}",
            self.workload, self.imp, self.n, self.threads, self.ns_per_query
        );
        for (k, v) in &self.extra {
            s.push_str(&format!(",\"{k}\":{v}"));
        }
        s.push('}');
        println!("{s}");
    }
}

/// Runs every closure `reps` times, interleaved, and returns the median
/// seconds of each.
pub fn interleaved(reps: usize, fns: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    interleaved_sustained(reps, 0.0, fns)
}

/// [`interleaved`], each closure's turn repeated until it has run for
/// `min_secs` (at least once), its time per call the mean over the turn.
///
/// For workloads whose calls are much shorter than their peers' loops (an
/// indexed batch of 0.1 s beside a peer's 1.8 s loop of single queries):
/// on this machine a call that follows seconds of single-core work runs at
/// a lower clock for a while (after 1.8 s of a pure integer spin, the
/// next 0.12 s batch took 168 ns a query against 122 after a short pause),
/// which a peer's long loop averages out and a short call does not. Turns
/// of the same length put every implementation in the same steady state.
pub fn interleaved_sustained(reps: usize, min_secs: f64, fns: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut times = vec![Vec::with_capacity(reps); fns.len()];
    for f in fns.iter_mut() {
        f(); // warm up
    }
    for _ in 0..reps {
        for (i, f) in fns.iter_mut().enumerate() {
            // Let the previous closure's rayon workers stop spinning and sleep:
            // on a 2-core machine they would otherwise steal time from a
            // single-threaded measurement that follows.
            std::thread::sleep(std::time::Duration::from_millis(10));
            let t = Instant::now();
            let mut calls = 0u32;
            while calls == 0 || t.elapsed().as_secs_f64() < min_secs {
                f();
                calls += 1;
            }
            times[i].push(t.elapsed().as_secs_f64() / f64::from(calls));
        }
    }
    times.into_iter().map(|mut v| median(&mut v)).collect()
}

pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// A Markdown table of ns/query and the ratio to a baseline impl, per
/// workload, to stderr.
pub fn markdown(records: &[Record], baseline: &str) {
    let mut workloads: Vec<&str> = Vec::new();
    for r in records {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    eprintln!("\n| workload | impl | ns/query | × {baseline} |");
    eprintln!("|---|---|---:|---:|");
    for w in workloads {
        let base = records.iter().find(|r| r.workload == w && r.imp == baseline).map(|r| r.ns_per_query);
        for r in records.iter().filter(|r| r.workload == w) {
            let ratio = base.map_or("—".to_string(), |b| format!("{:.2}", r.ns_per_query / b));
            eprintln!("| {} | {} | {:.2} | {} |", w, r.imp, r.ns_per_query, ratio);
        }
    }
}

/// The index batches' instruction set for `nearest`, `nearest-scale` and
/// `single`: `SEGDIST_BENCH_INDEX_ISA` (`avx512`, `avx2`, `sse2`, `scalar`;
/// unset: `auto`), so that one CPU can time each form of the batch kernels
/// (an AVX-512 machine its AVX2 form, say). Named on stderr when set.
pub fn index_isa() -> segdist_index::Isa {
    use segdist_index::Isa;
    let Ok(name) = std::env::var("SEGDIST_BENCH_INDEX_ISA") else { return Isa::Auto };
    let isa = match name.to_ascii_lowercase().as_str() {
        "avx512" => Isa::Avx512,
        "avx2" => Isa::Avx2,
        "sse2" => Isa::Sse2,
        "scalar" => Isa::Scalar,
        _ => Isa::Auto,
    };
    let note = if isa.is_available() { "" } else { " (not on this CPU: the best it has)" };
    eprintln!("index batches: {isa:?}{note}");
    isa
}
