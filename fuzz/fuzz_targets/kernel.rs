//! The accurate kernel against the exact rational reference: region, t,
//! closest point, d² and d faithful (within one ulp of the exact value),
//! vertices bit for bit, for segments and lines, 2D and 3D, f64 and f32;
//! non-finite input gives NaN and region Undefined, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use segdist::{Region, Segment};
use segdist_fuzz::kernel_checks::{check_line, check_segment};
use segdist_fuzz::Bytes;

fuzz_target!(|data: &[u8]| {
    let mut bytes = Bytes::new(data);
    let base = bytes.base();
    if bytes.u8().is_multiple_of(2) {
        one::<2>(&mut bytes, base);
    } else {
        one::<3>(&mut bytes, base);
    }
});

fn one<const D: usize>(bytes: &mut Bytes, base: f64) {
    let a = bytes.point::<D>(base, false);
    let b = bytes.point::<D>(base, false);
    let p = bytes.query(a, b, base, false);
    let finite = |x: &[f64; D]| x.iter().all(|c| c.is_finite());
    if !(finite(&a) && finite(&b) && finite(&p)) {
        let r = Segment::new(a, b).closest_point(p);
        assert!(r.distance.is_nan() && r.t.is_nan() && r.region == Region::Undefined, "{a:?} {b:?} {p:?}: {r:?}");
        return;
    }
    check_segment::<f64, D>(a, b, p).unwrap_or_else(|e| panic!("{e}"));
    check_line::<f64, D>(a, b, p).unwrap_or_else(|e| panic!("{e}"));
    let (a, b, p) = (a.map(|c| c as f32), b.map(|c| c as f32), p.map(|c| c as f32));
    let finite32 = |x: &[f32; D]| x.iter().all(|c| c.is_finite());
    if finite32(&a) && finite32(&b) && finite32(&p) {
        check_segment::<f32, D>(a, b, p).unwrap_or_else(|e| panic!("{e}"));
        check_line::<f32, D>(a, b, p).unwrap_or_else(|e| panic!("{e}"));
    }
}
