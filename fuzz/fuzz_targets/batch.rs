//! Every batch instruction set this CPU has against the scalar kernel, bit
//! for bit: pairs (both tiers, segment and line, every output and distances
//! only, f64 and f32, 2D and 3D) and one segment against many points (the
//! branch-free sweep).
#![no_main]

use libfuzzer_sys::fuzz_target;
use segdist::batch::{Options, Tier};
use segdist_fuzz::kernel_checks::{check_one_to_many, check_pairs, ISAS};
use segdist_fuzz::Bytes;

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes::new(data);
    let base = bytes.base();
    if bytes.u8().is_multiple_of(2) {
        run::<2>(&mut bytes, base);
    } else {
        run::<3>(&mut bytes, base);
    }
});

fn run<const D: usize>(bytes: &mut Bytes, base: f64) {
    let n = 1 + usize::from(bytes.u8() % 40);
    let (mut a, mut b, mut p) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let (x, y) = (bytes.point::<D>(base, false), bytes.point::<D>(base, false));
        p.push(bytes.query(x, y, base, false));
        a.push(x);
        b.push(y);
    }
    let narrow = |v: &[[f64; D]]| -> Vec<[f32; D]> { v.iter().map(|x| x.map(|c| c as f32)).collect() };
    let (a32, b32, p32) = (narrow(&a), narrow(&b), narrow(&p));
    for isa in ISAS.into_iter().filter(|i| i.is_available()) {
        for tier in [Tier::Accurate, Tier::Fast] {
            for line in [false, true] {
                let opts = Options { line, tier, threads: Some(1), isa };
                check_pairs(&a, &b, &p, &opts, "fuzz f64");
                check_pairs(&a32, &b32, &p32, &opts, "fuzz f32");
            }
        }
        check_one_to_many(a[0], b[0], &p, isa);
    }
}
