//! `batch`: one segment against many points (and many pairs), through
//! `segdist::batch`, against loops over the textbook formula (default build
//! and compiled for the CPU's best instruction set) and over the peers.

use std::hint::black_box;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist::batch::{self, Options, Outputs, Tier};

use crate::peers;
use crate::report::{interleaved, markdown, Record};

type Loop<'a> = (&'static str, usize, Box<dyn FnMut() + 'a>);

fn points<const D: usize>(n: usize, seed: u64) -> Vec<[f64; D]> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| std::array::from_fn(|_| r.gen::<f64>())).collect()
}

/// The textbook loop over one segment and many points.
#[inline(always)]
fn textbook_loop<T: peers::Num, const D: usize>(a: &[T; D], b: &[T; D], pts: &[[T; D]], out: &mut [T]) {
    for (o, p) in out.iter_mut().zip(pts) {
        *o = peers::textbook(a, b, p);
    }
}

/// The same loop compiled for AVX-512 (what `-C target-cpu=native` gives on
/// this machine), chosen at run time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx2,fma")]
unsafe fn textbook_avx512<T: peers::Num, const D: usize>(a: &[T; D], b: &[T; D], pts: &[[T; D]], out: &mut [T]) {
    textbook_loop(a, b, pts, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn textbook_avx2<T: peers::Num, const D: usize>(a: &[T; D], b: &[T; D], pts: &[[T; D]], out: &mut [T]) {
    textbook_loop(a, b, pts, out);
}

fn textbook_native<T: peers::Num, const D: usize>(a: &[T; D], b: &[T; D], pts: &[[T; D]], out: &mut [T]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512dq")
        {
            // SAFETY: checked just above.
            return unsafe { textbook_avx512(a, b, pts, out) };
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: checked just above.
            return unsafe { textbook_avx2(a, b, pts, out) };
        }
    }
    textbook_loop(a, b, pts, out);
}

/// segdist's batch call as a timed loop.
fn segdist_loop<'a, T: segdist::Scalar, const D: usize>(
    a: [T; D],
    b: [T; D],
    pts: &'a [[T; D]],
    tier: Tier,
    threads: usize,
) -> Box<dyn FnMut() + 'a> {
    let mut out = vec![T::ZERO; pts.len()];
    let opts = Options { tier, threads: Some(threads), ..Options::default() };
    Box::new(move || {
        batch::one_to_many(a, b, pts, Outputs { distance: Some(&mut out), ..Outputs::default() }, &opts)
            .expect("valid batch");
        black_box(&out);
    })
}

fn scalar_loop<'a, T: Copy + Default + 'a, const D: usize>(
    a: [T; D],
    b: [T; D],
    pts: &'a [[T; D]],
    f: impl Fn(&[T; D], &[T; D], &[T; D]) -> T + 'a,
) -> Box<dyn FnMut() + 'a> {
    let mut out = vec![T::default(); pts.len()];
    Box::new(move || {
        for (o, p) in out.iter_mut().zip(pts) {
            *o = f(&a, &b, p);
        }
        black_box(&out);
    })
}

fn time(workload: &str, n: usize, reps: usize, mut loops: Vec<Loop<'_>>, rec: &mut Vec<Record>) {
    let mut refs: Vec<&mut dyn FnMut()> = loops.iter_mut().map(|(_, _, c)| &mut **c as &mut dyn FnMut()).collect();
    let secs = interleaved(reps, &mut refs);
    for ((name, threads, _), s) in loops.iter().zip(secs) {
        let r = Record {
            workload: workload.to_string(),
            imp: name,
            n,
            threads: *threads,
            ns_per_query: s * 1e9 / n as f64,
            extra: vec![],
        };
        r.print();
        rec.push(r);
    }
}

fn segdist_loops<'a, T: segdist::Scalar, const D: usize>(
    a: [T; D],
    b: [T; D],
    pts: &'a [[T; D]],
    cores: usize,
) -> Vec<Loop<'a>> {
    let mut v: Vec<Loop<'a>> = vec![
        ("segdist-accurate", 1, segdist_loop(a, b, pts, Tier::Accurate, 1)),
        ("segdist-fast", 1, segdist_loop(a, b, pts, Tier::Fast, 1)),
    ];
    if cores > 1 {
        v.push(("segdist-accurate", cores, segdist_loop(a, b, pts, Tier::Accurate, cores)));
        v.push(("segdist-fast", cores, segdist_loop(a, b, pts, Tier::Fast, cores)));
    }
    v
}

fn textbook_loops<'a, T: peers::Num + 'a, const D: usize>(a: [T; D], b: [T; D], pts: &'a [[T; D]]) -> Vec<Loop<'a>> {
    let mut o1 = vec![T::default(); pts.len()];
    let mut o2 = vec![T::default(); pts.len()];
    vec![
        (
            "textbook-native",
            1,
            Box::new(move || {
                textbook_native(&a, &b, pts, &mut o1);
                black_box(&o1);
            }),
        ),
        (
            "textbook",
            1,
            Box::new(move || {
                textbook_loop(&a, &b, pts, &mut o2);
                black_box(&o2);
            }),
        ),
    ]
}

/// `SEGDIST_BENCH_ONLY=pairs` (a substring of workload names) runs only
/// the matching workloads.
fn wanted(workload: &str) -> bool {
    std::env::var("SEGDIST_BENCH_ONLY").map_or(true, |f| workload.contains(&f))
}

pub fn run(quick: bool) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let big = if quick { 1_000_000 } else { 10_000_000 };
    let reps = if quick { 3 } else { 7 };
    let mut rec = Vec::new();
    let (a2, b2) = ([0.25, 0.4], [0.75, 0.6]);

    for (n, workload) in [(big, "one_segment_2d_f64"), (200_000, "one_segment_2d_f64_in_cache")] {
        if !wanted(workload) {
            continue;
        }
        let pts = points::<2>(n, 11);
        let mut loops = segdist_loops(a2, b2, &pts, cores);
        loops.extend(textbook_loops(a2, b2, &pts));
        loops.push(("geo", 1, scalar_loop(a2, b2, &pts, peers::geo)));
        loops.push(("parry", 1, scalar_loop(a2, b2, &pts, peers::parry2)));
        loops.push(("kurbo", 1, scalar_loop(a2, b2, &pts, peers::kurbo)));
        time(workload, n, if n == big { reps } else { 15 }, loops, &mut rec);
    }

    let (a3, b3) = ([0.25, 0.4, 0.1], [0.75, 0.6, 0.9]);
    if wanted("one_segment_3d_f64") {
        let pts3 = points::<3>(big, 12);
        let mut loops = segdist_loops(a3, b3, &pts3, cores);
        loops.extend(textbook_loops(a3, b3, &pts3));
        loops.push(("parry", 1, scalar_loop(a3, b3, &pts3, peers::parry3)));
        time("one_segment_3d_f64", big, reps, loops, &mut rec);
        drop(pts3);
    }

    if wanted("one_segment_2d_f32") {
        let pts32: Vec<[f32; 2]> = points::<2>(big, 13).iter().map(|p| p.map(|x| x as f32)).collect();
        let (a32, b32) = ([0.25f32, 0.4], [0.75f32, 0.6]);
        let mut loops = segdist_loops(a32, b32, &pts32, cores);
        loops.extend(textbook_loops(a32, b32, &pts32));
        time("one_segment_2d_f32", big, reps, loops, &mut rec);
        drop(pts32);
    }

    // Many pairs: every query its own segment.
    if !wanted("pairs_2d_f64") {
        return markdown_batch(&rec);
    }
    let n = big / 4;
    let (pa, pb, pp) = (points::<2>(n, 14), points::<2>(n, 15), points::<2>(n, 16));
    let mut loops: Vec<Loop<'_>> = Vec::new();
    for (tier, name) in [(Tier::Accurate, "segdist-accurate"), (Tier::Fast, "segdist-fast")] {
        for threads in if cores > 1 { vec![1, cores] } else { vec![1] } {
            let (pa, pb, pp) = (&pa, &pb, &pp);
            let mut out = vec![0.0; n];
            let opts = Options { tier, threads: Some(threads), ..Options::default() };
            loops.push((
                name,
                threads,
                Box::new(move || {
                    batch::pairs(pa, pb, pp, Outputs { distance: Some(&mut out), ..Outputs::default() }, &opts)
                        .expect("valid batch");
                    black_box(&out);
                }),
            ));
        }
    }
    let mut out = vec![0.0; n];
    let (ra, rb, rp) = (&pa, &pb, &pp);
    loops.push((
        "textbook",
        1,
        Box::new(move || {
            for i in 0..n {
                out[i] = peers::textbook(&ra[i], &rb[i], &rp[i]);
            }
            black_box(&out);
        }),
    ));
    let mut out = vec![0.0; n];
    loops.push((
        "geo",
        1,
        Box::new(move || {
            for i in 0..n {
                out[i] = peers::geo(&ra[i], &rb[i], &rp[i]);
            }
            black_box(&out);
        }),
    ));
    time("pairs_2d_f64", n, reps, loops, &mut rec);

    markdown_batch(&rec);
}

/// The Markdown summary: ns/query and the ratio to textbook-native.
fn markdown_batch(rec: &[Record]) {
    eprintln!("\n| workload | impl | threads | ns/query | × textbook-native |");
    eprintln!("|---|---|---:|---:|---:|");
    for r in rec {
        let base = rec.iter().find(|b| b.workload == r.workload && b.imp == "textbook-native").map(|b| b.ns_per_query);
        let ratio = base.map_or("—".to_string(), |b| format!("{:.2}", r.ns_per_query / b));
        eprintln!("| {} | {} | {} | {:.2} | {} |", r.workload, r.imp, r.threads, r.ns_per_query, ratio);
    }
    let _ = markdown;
}
