//! The index against brute force: nearest, nearest within a radius, k
//! nearest (2, 3, 5), within a radius, and their batch forms (a `Vec` a
//! point, and flat `HitLists`) on one and two threads and in every form of
//! the batch kernels the CPU has (`QueryOptions::isa`: AVX-512, AVX2, the
//! portable loops), every answer the same feature, part, segment and bits as
//! a scan of all segments with ties to the lowest id.
#![no_main]

use libfuzzer_sys::fuzz_target;
use segdist_fuzz::index_checks::{check, Features};
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
    let mut features: Features<D> = Vec::new();
    for _ in 0..1 + bytes.u8() % 6 {
        let mut parts = Vec::new();
        for _ in 0..1 + bytes.u8() % 3 {
            let n = 2 + usize::from(bytes.u8() % 5);
            parts.push((0..n).map(|_| bytes.point::<D>(base, true)).collect::<Vec<_>>());
        }
        features.push(parts);
    }
    let first = features[0][0].clone();
    // Finite queries only: a non-finite one is refused, which the tests check.
    // Up to 40: past the first groups of a batch, whose sift gives the
    // next groups their guessed reach.
    let queries: Vec<[f64; D]> = (0..1 + bytes.u8() % 40)
        .map(|_| bytes.query(first[0], first[1], base, true))
        .map(|q| if q.iter().all(|c| c.is_finite()) { q } else { first[0] })
        .collect();
    let radius = bytes.coord(base, true).abs();
    check(&features, &queries, radius);
}
