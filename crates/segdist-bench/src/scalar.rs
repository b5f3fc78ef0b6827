//! `scalar`: per-query cost of one (segment, point) distance, called in a
//! loop over independent pairs, and the accuracy of every implementation on
//! points near the segment.

use std::hint::black_box;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use segdist::Segment;

use crate::peers;
use crate::report::{interleaved, markdown, Record};

type Pairs<T, const D: usize> = (Vec<[T; D]>, Vec<[T; D]>, Vec<[T; D]>);
/// A named, timed loop over a workload.
type Loop<'a> = (&'static str, Box<dyn FnMut() + 'a>);
/// A named point–segment distance in 2D f64.
type Impl2<'a> = (&'static str, &'a dyn Fn(&[f64; 2], &[f64; 2], &[f64; 2]) -> f64);

fn uniform<const D: usize>(n: usize, seed: u64) -> Pairs<f64, D> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let mut v = || -> Vec<[f64; D]> { (0..n).map(|_| std::array::from_fn(|_| r.gen::<f64>())).collect() };
    (v(), v(), v())
}

/// UTM-like: coordinates 1e6..1e7, segments ~10 long, points within ~100.
fn utm(n: usize, seed: u64) -> Pairs<f64, 2> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let mut a = Vec::with_capacity(n);
    let mut b = Vec::with_capacity(n);
    let mut p = Vec::with_capacity(n);
    for _ in 0..n {
        let x: [f64; 2] = [r.gen_range(1e6..1e7), r.gen_range(1e6..1e7)];
        a.push(x);
        b.push([x[0] + r.gen_range(-10.0..10.0), x[1] + r.gen_range(-10.0..10.0)]);
        p.push([x[0] + r.gen_range(-100.0..100.0), x[1] + r.gen_range(-100.0..100.0)]);
    }
    (a, b, p)
}

/// Points within 1e-16..1e-8 (relative to the segment's length) of the
/// interior of segments with coordinates in [-1000, 1000].
fn near_segment(n: usize, seed: u64) -> Pairs<f64, 2> {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let mut out: Pairs<f64, 2> = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let a: [f64; 2] = [r.gen_range(-1e3..1e3), r.gen_range(-1e3..1e3)];
        let b: [f64; 2] = [r.gen_range(-1e3..1e3), r.gen_range(-1e3..1e3)];
        let t: f64 = r.gen_range(0.05..0.95);
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len = dx.hypot(dy);
        let off = 10f64.powf(r.gen_range(-16.0..-8.0)) * if r.gen::<bool>() { 1.0 } else { -1.0 };
        let p = [a[0] + t * dx - off * dy, a[1] + t * dy + off * dx];
        let _ = len;
        out.0.push(a);
        out.1.push(b);
        out.2.push(p);
    }
    out
}

fn to_f32<const D: usize>(x: &[[f64; D]]) -> Vec<[f32; D]> {
    x.iter().map(|v| v.map(|c| c as f32)).collect()
}

/// A timed loop over all pairs for one implementation, monomorphised so the
/// kernel inlines into the loop as it would in a caller's code.
fn looped<'a, T: Copy + Default + 'a, const D: usize, F: Fn(&[T; D], &[T; D], &[T; D]) -> T + 'a>(
    data: &'a Pairs<T, D>,
    f: F,
) -> Box<dyn FnMut() + 'a> {
    let mut buf = vec![T::default(); data.0.len()];
    Box::new(move || {
        let (a, b, p) = (&data.0, &data.1, &data.2);
        for i in 0..buf.len() {
            buf[i] = f(&a[i], &b[i], &p[i]);
        }
        black_box(&buf);
    })
}

/// Times the loops, interleaved, and records ns/query for each.
fn time(workload: &str, n: usize, reps: usize, mut loops: Vec<Loop<'_>>, out: &mut Vec<Record>) {
    let mut refs: Vec<&mut dyn FnMut()> = loops.iter_mut().map(|(_, c)| &mut **c as &mut dyn FnMut()).collect();
    let secs = interleaved(reps, &mut refs);
    for ((name, _), s) in loops.iter().zip(secs) {
        let r = Record {
            workload: workload.to_string(),
            imp: name,
            n,
            threads: 1,
            ns_per_query: s * 1e9 / n as f64,
            extra: vec![],
        };
        r.print();
        out.push(r);
    }
}

/// The loops every workload of one type and dimension runs.
macro_rules! segdist_loops {
    ($data:expr, $t:ty, $d:literal) => {
        vec![
            (
                "segdist-accurate",
                looped($data, |a: &[$t; $d], b: &[$t; $d], p: &[$t; $d]| Segment::new(*a, *b).distance(*p)),
            ),
            (
                "segdist-fast",
                looped($data, |a: &[$t; $d], b: &[$t; $d], p: &[$t; $d]| Segment::new(*a, *b).distance_fast(*p)),
            ),
            ("textbook", looped($data, |a: &[$t; $d], b: &[$t; $d], p: &[$t; $d]| peers::textbook(a, b, p))),
        ]
    };
}

fn ulps(x: f64, reference: f64) -> f64 {
    if x == reference {
        return 0.0;
    }
    if !x.is_finite() {
        return f64::INFINITY;
    }
    let ulp = f64::from_bits(reference.abs().to_bits() + 1) - reference.abs();
    (x - reference).abs() / ulp
}

/// Error in ulps of each implementation's distance against segdist's
/// accurate tier (itself within one ulp of the exact value).
fn accuracy(workload: &str, data: &Pairs<f64, 2>, impls: &[Impl2<'_>]) {
    let n = data.0.len();
    let reference: Vec<f64> = (0..n).map(|i| Segment::new(data.0[i], data.1[i]).distance(data.2[i])).collect();
    for (name, f) in impls {
        let mut errs: Vec<f64> = (0..n).map(|i| ulps(f(&data.0[i], &data.1[i], &data.2[i]), reference[i])).collect();
        errs.sort_by(f64::total_cmp);
        let max = errs[n - 1];
        let med = errs[n / 2];
        let fmt = |x: f64| {
            if x.is_finite() {
                format!("{x:.3e}")
            } else {
                "null".into()
            }
        };
        Record {
            workload: workload.to_string(),
            imp: name,
            n,
            threads: 1,
            ns_per_query: f64::NAN,
            extra: vec![("max_ulps".into(), fmt(max)), ("median_ulps".into(), fmt(med))],
        }
        .print_accuracy();
        eprintln!("| {workload} | {name} | {} | {} |", fmt(med), fmt(max));
    }
}

impl Record {
    fn print_accuracy(&self) {
        let mut s = format!(
            "{{\"workload\":\"{}\",\"impl\":\"{}\",\"n\":{},\"threads\":{}",
            self.workload, self.imp, self.n, self.threads
        );
        for (k, v) in &self.extra {
            s.push_str(&format!(",\"{k}\":{v}"));
        }
        s.push('}');
        println!("{s}");
    }
}

pub fn run(quick: bool) {
    let n = if quick { 50_000 } else { 200_000 };
    let reps = if quick { 5 } else { 15 };
    let mut rec = Vec::new();

    for (workload, data) in [("pairs_2d_f64", uniform::<2>(n, 1)), ("pairs_2d_f64_utm", utm(n, 2))] {
        let mut loops = segdist_loops!(&data, f64, 2);
        loops.push(("geo", looped(&data, peers::geo)));
        loops.push(("parry", looped(&data, peers::parry2)));
        loops.push(("kurbo", looped(&data, peers::kurbo)));
        time(workload, n, reps, loops, &mut rec);
    }
    let data = uniform::<3>(n, 3);
    let mut loops = segdist_loops!(&data, f64, 3);
    loops.push(("parry", looped(&data, peers::parry3)));
    time("pairs_3d_f64", n, reps, loops, &mut rec);

    let u2 = uniform::<2>(n, 4);
    let data = (to_f32(&u2.0), to_f32(&u2.1), to_f32(&u2.2));
    time("pairs_2d_f32", n, reps, segdist_loops!(&data, f32, 2), &mut rec);
    let u3 = uniform::<3>(n, 5);
    let data = (to_f32(&u3.0), to_f32(&u3.1), to_f32(&u3.2));
    time("pairs_3d_f32", n, reps, segdist_loops!(&data, f32, 3), &mut rec);

    markdown(&rec, "textbook");

    eprintln!("\n| workload | impl | median error (ulps) | worst error (ulps) |");
    eprintln!("|---|---|---:|---:|");
    let acc = |a: &[f64; 2], b: &[f64; 2], p: &[f64; 2]| Segment::new(*a, *b).distance(*p);
    let fast = |a: &[f64; 2], b: &[f64; 2], p: &[f64; 2]| Segment::new(*a, *b).distance_fast(*p);
    let impls: [Impl2<'_>; 6] = [
        ("segdist-accurate", &acc),
        ("segdist-fast", &fast),
        ("textbook", &peers::textbook::<2, f64>),
        ("geo", &peers::geo),
        ("parry", &peers::parry2),
        ("kurbo", &peers::kurbo),
    ];
    let m = if quick { 5_000 } else { 20_000 };
    accuracy("accuracy_near_segment_2d_f64", &near_segment(m, 6), &impls);
    accuracy("accuracy_utm_2d_f64", &utm(m, 7), &impls);
}
