//! The index against brute force, shared by the tests and the fuzz target
//! (`fuzz/`): every query answered by a scan of all segments with segdist's
//! accurate kernel, ranked by (distance, id), must give the same feature,
//! part, segment and the same bits.
#![allow(dead_code)]

use segdist::Segment;
use segdist_index::{Hit, HitLists, Index, IndexBuilder, Isa, QueryOptions, Sink};

/// Features → parts → vertices.
pub type Features<const D: usize> = Vec<Vec<Vec<[f64; D]>>>;

pub fn build<const D: usize>(features: &Features<D>) -> Index<D> {
    let mut b = IndexBuilder::<D>::new();
    for f in features {
        b.push_multi_polyline(f.iter().map(Vec::as_slice));
    }
    b.build().expect("valid input")
}

/// Every segment's hit for `p`, in id order.
pub fn all_hits<const D: usize>(features: &Features<D>, p: [f64; D]) -> Vec<Hit<D>> {
    let mut hits = Vec::new();
    for (feature, parts) in features.iter().enumerate() {
        for (part, v) in parts.iter().enumerate() {
            for segment in 0..v.len() - 1 {
                let r = Segment::new(v[segment], v[segment + 1]).closest_point(p);
                hits.push(Hit {
                    feature,
                    part,
                    segment,
                    t: r.t,
                    point: r.point,
                    distance: r.distance,
                    distance_squared: r.distance_squared,
                });
            }
        }
    }
    // Stable: equal distances keep id order.
    hits.sort_by(|x, y| x.distance.total_cmp(&y.distance));
    hits
}

/// Whole answers put into a slice: [`Index::nearest_many_to`]'s sink at
/// its plainest.
pub struct Answers<'a, const D: usize>(pub &'a mut [Option<Hit<D>>]);

impl<const D: usize> Sink<D> for Answers<'_, D> {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (a, b) = self.0.split_at_mut(mid);
        (Answers(a), Answers(b))
    }
    fn put(&mut self, i: usize, hit: Option<Hit<D>>) {
        self.0[i] = hit;
    }
}

/// The instruction sets a batch is checked in: each vector form of the
/// search the CPU has (AVX-512, AVX2) and the portable one (SSE2's
/// evaluations on x86-64, the scalar kernel's elsewhere).
pub fn isas() -> Vec<Isa> {
    let portable = if cfg!(target_arch = "x86_64") { Isa::Sse2 } else { Isa::Scalar };
    [Isa::Avx512, Isa::Avx2].into_iter().filter(|i| i.is_available()).chain([portable]).collect()
}

pub fn bits<const D: usize>(h: &Hit<D>) -> (usize, usize, usize, u64, [u64; D], u64, u64) {
    (
        h.feature,
        h.part,
        h.segment,
        h.t.to_bits(),
        h.point.map(f64::to_bits),
        h.distance.to_bits(),
        h.distance_squared.to_bits(),
    )
}

pub fn same<const D: usize>(got: &[Hit<D>], want: &[Hit<D>], what: &str, p: [f64; D]) {
    let got: Vec<_> = got.iter().map(bits).collect();
    let want: Vec<_> = want.iter().map(bits).collect();
    assert_eq!(got, want, "{what} at {p:?}");
}

/// Checks nearest, nearest_within, k_nearest, within and the batch form at
/// every query point.
pub fn check<const D: usize>(features: &Features<D>, queries: &[[f64; D]], radius: f64) {
    let index = build(features);
    let mut singles = Vec::new();
    // Brute force's k = 2, k = 5, within-radius and k = 3 within-radius
    // lists, for the batch forms.
    let mut lists: [Vec<Vec<Hit<D>>>; 4] = Default::default();
    for &p in queries {
        let all = all_hits(features, p);
        let nearest: Vec<Hit<D>> = index.nearest(p).into_iter().collect();
        same(&nearest, &all[..all.len().min(1)], "nearest", p);
        singles.push(nearest.first().copied());
        for (k, list) in [2, 5].into_iter().zip(&mut lists) {
            same(&index.k_nearest(p, k), &all[..all.len().min(k)], "k_nearest", p);
            list.push(all[..all.len().min(k)].to_vec());
        }
        let inside: Vec<Hit<D>> = all.iter().copied().filter(|h| h.distance <= radius).collect();
        same(&index.within(p, radius), &inside, "within", p);
        let limited: Vec<Hit<D>> = index.nearest_within(p, radius).into_iter().collect();
        same(&limited, &inside[..inside.len().min(1)], "nearest_within", p);
        same(&index.k_nearest_within(p, 3, radius), &inside[..inside.len().min(3)], "k_nearest_within", p);
        lists[3].push(inside[..inside.len().min(3)].to_vec());
        lists[2].push(inside);
    }
    for (isa, threads) in isas().into_iter().flat_map(|isa| [(isa, 1), (isa, 2)]) {
        let opts = QueryOptions { threads, isa, ..Default::default() };
        let within = QueryOptions { threads, max_distance: radius, isa };
        let batches = [
            index.k_nearest_many(queries, 2, &opts),
            index.k_nearest_many(queries, 5, &opts),
            index.within_many(queries, radius, &opts),
            index.k_nearest_many(queries, 3, &within),
        ];
        for (what, (got, want)) in ["k_nearest_many 2", "k_nearest_many 5", "within_many", "k_nearest_many 3 within"]
            .into_iter()
            .zip(batches.iter().zip(&lists))
        {
            assert_eq!(got.len(), queries.len());
            for ((g, w), p) in got.iter().zip(want).zip(queries) {
                same(g, w, &format!("{what}, {isa:?}"), *p);
            }
        }
        // The flat forms, into one buffer used again batch after batch:
        // the same lists, bit for bit, nothing of the batch before left.
        let mut flat = HitLists::new();
        for (what, got) in ["k 2", "k 5", "within", "k 3 within"].into_iter().zip(&batches) {
            match what {
                "k 2" => index.k_nearest_many_into(queries, 2, &opts, &mut flat),
                "k 5" => index.k_nearest_many_into(queries, 5, &opts, &mut flat),
                "within" => index.within_many_into(queries, radius, &opts, &mut flat),
                _ => index.k_nearest_many_into(queries, 3, &within, &mut flat),
            }
            assert_eq!(flat.len(), got.len(), "{what}, flat");
            assert!(flat.iter().zip(got).all(|(f, g)| f == &g[..]), "{what}, flat");
            assert_eq!(flat.hits().len(), got.iter().map(Vec::len).sum::<usize>(), "{what}, flat");
        }
        let batch = index.nearest_many(queries, &opts);
        assert_eq!(batch.len(), queries.len());
        // Answers put into a sink are nearest_many's, in the same order.
        let mut put = vec![None; queries.len()];
        index.nearest_many_to(queries, &opts, Answers(&mut put));
        assert_eq!(put, batch, "nearest_many_to");
        for ((b, s), p) in batch.iter().zip(&singles).zip(queries) {
            let what = format!("nearest_many, {isa:?}");
            same(&b.iter().copied().collect::<Vec<_>>(), &s.iter().copied().collect::<Vec<_>>(), &what, *p);
        }
        // Into a buffer: into an empty one, and into one that held a
        // longer batch (the second half's answers, then the whole), the
        // same answers as nearest_many, nothing of the old left over.
        let mut into = Vec::new();
        index.nearest_many_into(queries, &opts, &mut into);
        assert_eq!(into, batch, "nearest_many_into, a new buffer");
        let half = &queries[queries.len() / 2..];
        index.nearest_many_into(half, &opts, &mut into);
        assert_eq!(into, batch[queries.len() / 2..], "nearest_many_into, a used buffer");
        index.nearest_many_into(queries, &opts, &mut into);
        assert_eq!(into, batch, "nearest_many_into, a used, shorter buffer");
        // The runner-up bound never exceeds the second nearest segment's
        // distance (every other segment's, ties and duplicates included).
        let with = index.nearest_many_with_runner_up(queries, &opts);
        for ((w, b), p) in with.iter().zip(&batch).zip(queries) {
            assert_eq!(w.map(|(h, _)| bits(&h)), b.map(|h| bits(&h)), "nearest_many_with_runner_up at {p:?}");
            if let Some((_, runner_up)) = w {
                let all = all_hits(features, *p);
                let second = all.get(1).map_or(f64::INFINITY, |h| h.distance);
                assert!(*runner_up >= 0.0 && *runner_up <= second, "runner-up {runner_up} > {second} at {p:?}");
            }
        }
    }
}
