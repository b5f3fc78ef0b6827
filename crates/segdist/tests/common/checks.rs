//! The checks shared by the tests and the fuzz targets (`fuzz/`): one
//! query against the exact reference (the accuracy contract), and a batch
//! against the scalar methods, bit for bit.

use super::*;
use segdist::batch::{self, Isa, Options, Outputs, Tier};
use segdist::{Line, Region, Scalar, Segment};

pub fn fmt<T: std::fmt::Debug, const D: usize>(a: &[T; D], b: &[T; D], p: &[T; D]) -> String {
    format!("a={a:?} b={b:?} p={p:?}")
}

/// Checks one segment query in type `T` against the exact projection of the
/// (exactly widened) inputs.
pub fn check_segment<T: Scalar + F, const D: usize>(a: [T; D], b: [T; D], p: [T; D]) -> Result<(), String> {
    let w = |x: [T; D]| x.map(|v| v.to_f64());
    let ex = exact(w(a), w(b), w(p), false);
    let s = Segment::new(a, b);
    let r = s.closest_point(p);
    let ctx = || fmt(&a, &b, &p);
    if r.region != ex.region {
        return Err(format!("region {:?} != {:?}: {}", r.region, ex.region, ctx()));
    }
    if !faithful(r.t, &ex.t) {
        return Err(format!("t {:?} not faithful ({}): {}", r.t, to_f64_approx(&ex.t), ctx()));
    }
    for i in 0..D {
        if !faithful(r.point[i], &ex.point[i]) {
            return Err(format!("q[{i}] {:?} not faithful ({}): {}", r.point[i], to_f64_approx(&ex.point[i]), ctx()));
        }
    }
    match ex.region {
        Region::Start if r.point != a || r.t != T::ZERO => {
            return Err(format!("start vertex not bit-exact: {}", ctx()));
        }
        Region::End if r.point != b || r.t != T::ONE => {
            return Err(format!("end vertex not bit-exact: {}", ctx()));
        }
        _ => {}
    }
    if !faithful(r.distance_squared, &ex.d2) {
        return Err(format!("d2 {:?} not faithful ({}): {}", r.distance_squared, to_f64_approx(&ex.d2), ctx()));
    }
    if !faithful_sqrt(r.distance, &ex.d2) {
        return Err(format!("d {:?} not faithful: {}", r.distance, ctx()));
    }
    // The distance-only entry points agree with the full projection.
    if s.distance(p) != r.distance || s.distance_squared(p) != r.distance_squared {
        return Err(format!("distance-only calls disagree with closest_point: {}", ctx()));
    }
    Ok(())
}

pub fn check_line<T: Scalar + F, const D: usize>(a: [T; D], b: [T; D], p: [T; D]) -> Result<(), String> {
    let w = |x: [T; D]| x.map(|v| v.to_f64());
    let ex = exact(w(a), w(b), w(p), true);
    let l = Line::new(a, b);
    let r = l.closest_point(p);
    let ctx = || fmt(&a, &b, &p);
    if !faithful(r.t, &ex.t) {
        return Err(format!("line t {:?} not faithful ({}): {}", r.t, to_f64_approx(&ex.t), ctx()));
    }
    for i in 0..D {
        if !faithful(r.point[i], &ex.point[i]) {
            return Err(format!("line q[{i}] {:?} not faithful: {}", r.point[i], ctx()));
        }
    }
    if !faithful(r.distance_squared, &ex.d2) || !faithful_sqrt(r.distance, &ex.d2) {
        return Err(format!("line d/d2 {:?}/{:?} not faithful: {}", r.distance, r.distance_squared, ctx()));
    }
    if l.distance(p) != r.distance || l.distance_squared(p) != r.distance_squared {
        return Err(format!("line distance-only calls disagree: {}", ctx()));
    }
    Ok(())
}

pub const ISAS: [Isa; 5] = [Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512, Isa::Neon];

pub fn isas() -> Vec<Isa> {
    let v: Vec<Isa> = ISAS.into_iter().filter(|i| i.is_available()).collect();
    eprintln!("instruction sets tested here: {v:?}");
    v
}

/// What the scalar API says for one query: (d, d2, t, q, region).
pub fn scalar<T: Scalar, const D: usize>(
    a: [T; D],
    b: [T; D],
    p: [T; D],
    tier: Tier,
    line: bool,
) -> (T, T, T, [T; D], Option<Region>) {
    match (tier, line) {
        (Tier::Accurate, false) => {
            let r = Segment::new(a, b).closest_point(p);
            (r.distance, r.distance_squared, r.t, r.point, Some(r.region))
        }
        (Tier::Fast, false) => {
            let r = Segment::new(a, b).closest_point_fast(p);
            (r.distance, r.distance_squared, r.t, r.point, Some(r.region))
        }
        (Tier::Accurate, true) => {
            let r = Line::new(a, b).closest_point(p);
            (r.distance, r.distance_squared, r.t, r.point, None)
        }
        (Tier::Fast, true) => {
            let r = Line::new(a, b).closest_point_fast(p);
            (r.distance, r.distance_squared, r.t, r.point, None)
        }
    }
}

pub fn same<T: Scalar>(x: T, y: T) -> bool {
    x.to_f64().to_bits() == y.to_f64().to_bits() || (x.to_f64().is_nan() && y.to_f64().is_nan())
}

/// Runs `pairs` with every output, and again with distances only, and
/// compares both with the scalar API.
pub fn check_pairs<T: Scalar, const D: usize>(a: &[[T; D]], b: &[[T; D]], p: &[[T; D]], opts: &Options, label: &str) {
    let n = p.len();
    let mut d = vec![T::ZERO; n];
    let mut d2 = vec![T::ZERO; n];
    let mut t = vec![T::ZERO; n];
    let mut q = vec![[T::ZERO; D]; n];
    let mut region = vec![Region::Start; n];
    let out = Outputs {
        distance: Some(&mut d),
        distance_squared: Some(&mut d2),
        t: Some(&mut t),
        point: Some(&mut q),
        region: Some(&mut region),
    };
    batch::pairs(a, b, p, out, opts).unwrap();
    let mut d_only = vec![T::ZERO; n];
    let mut d2_only = vec![T::ZERO; n];
    let out = Outputs { distance: Some(&mut d_only), distance_squared: Some(&mut d2_only), ..Outputs::default() };
    batch::pairs(a, b, p, out, opts).unwrap();
    for i in 0..n {
        let (sd, sd2, st, sq, sr) = scalar(a[i], b[i], p[i], opts.tier, opts.line);
        let ctx = || format!("{label} {opts:?} query {i}: a={:?} b={:?} p={:?}", a[i], b[i], p[i]);
        assert!(same(d[i], sd) && same(d2[i], sd2), "d/d2 {:?}/{:?} vs scalar {sd:?}/{sd2:?}: {}", d[i], d2[i], ctx());
        assert!(same(d_only[i], sd) && same(d2_only[i], sd2), "distance-only {:?} vs {sd:?}: {}", d_only[i], ctx());
        assert!(same(t[i], st), "t {:?} vs {st:?}: {}", t[i], ctx());
        for k in 0..D {
            assert!(same(q[i][k], sq[k]), "q {:?} vs {sq:?}: {}", q[i], ctx());
        }
        if let Some(sr) = sr {
            assert_eq!(region[i], sr, "region: {}", ctx());
        }
    }
}

/// `one_to_many` (one segment, many points: the sweep and the lane kernel)
/// on `isa`, with every combination of outputs, against the scalar method,
/// bit for bit.
pub fn check_one_to_many<const D: usize>(a: [f64; D], b: [f64; D], p: &[[f64; D]], isa: Isa) {
    let n = p.len();
    let opts = Options { isa, threads: Some(1), ..Options::default() };
    let (mut d, mut d2, mut region) = (vec![0.0; n], vec![0.0; n], vec![Region::Undefined; n]);
    let all = Outputs {
        distance: Some(&mut d),
        distance_squared: Some(&mut d2),
        region: Some(&mut region),
        ..Outputs::default()
    };
    batch::one_to_many(a, b, p, all, &opts).unwrap();
    let mut d_only = vec![0.0; n];
    batch::one_to_many(a, b, p, Outputs { distance: Some(&mut d_only), ..Outputs::default() }, &opts).unwrap();
    let mut d2_only = vec![0.0; n];
    batch::one_to_many(a, b, p, Outputs { distance_squared: Some(&mut d2_only), ..Outputs::default() }, &opts).unwrap();
    let (mut fd, mut ft, mut fq) = (vec![0.0; n], vec![0.0; n], vec![[0.0; D]; n]);
    let full = Outputs { distance: Some(&mut fd), t: Some(&mut ft), point: Some(&mut fq), ..Outputs::default() };
    batch::one_to_many(a, b, p, full, &opts).unwrap();
    for i in 0..n {
        let e = Segment::new(a, b).closest_point(p[i]);
        let ctx = || format!("{isa:?} a={a:?} b={b:?} p={:?}", p[i]);
        assert!(same(fd[i], e.distance) && same(ft[i], e.t), "d, t {} {}: {}", fd[i], ft[i], ctx());
        for k in 0..D {
            assert!(same(fq[i][k], e.point[k]), "point {:?} vs {:?}: {}", fq[i], e.point, ctx());
        }
        assert!(same(d[i], e.distance) && same(d_only[i], e.distance), "d {} vs {}: {}", d[i], e.distance, ctx());
        assert!(same(d2[i], e.distance_squared) && same(d2_only[i], e.distance_squared), "d2: {}", ctx());
        assert_eq!(region[i], e.region, "{}", ctx());
    }
}
