//! The functions the page calls (`web/segdist.js` wraps them): plain
//! `extern "C"`, numbers in, numbers out, arrays as pointers into the
//! module's memory.
//!
//! The protocol, the same for every function:
//! - arrays go in and out through buffers from [`sd_alloc`] (8-byte aligned,
//!   so a `Float64Array` or `Uint32Array` can view them), given back with
//!   [`sd_free`];
//! - a level or a snapper lives behind an opaque pointer from its `_new`
//!   function until its `_free`;
//! - text (formatted rows, error messages) is left in one buffer read with
//!   [`sd_text_ptr`] and [`sd_text_len`] until the next call that writes it;
//! - a `_new` returning null, or a status of −1, means an error whose message
//!   is that text. Nothing panics on any input.
//!
//! Native tests call these as JavaScript would (`tests` below).

use std::cell::RefCell;

use crate::{Level, Snapper, SNAP_COLUMNS};

thread_local! {
    static TEXT: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_text(s: String) {
    TEXT.with(|t| *t.borrow_mut() = s);
}

/// `n` values at `ptr`, or none when `n` is 0.
///
/// # Safety
/// When `n > 0`, `ptr` must point to `n` initialised values.
unsafe fn slice<'a, T>(ptr: *const T, n: usize) -> &'a [T] {
    if n == 0 || ptr.is_null() {
        &[]
    } else {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(ptr, n) }
    }
}

/// Writes `values` at `out`.
///
/// # Safety
/// `out` must have room for `values.len()` values.
unsafe fn write(out: *mut f64, values: &[f64]) {
    if !out.is_null() {
        // SAFETY: the caller's promise.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), out, values.len()) }
    }
}

/// A buffer of `bytes` bytes (rounded up to whole `f64`s), 8-byte aligned.
#[unsafe(no_mangle)]
pub extern "C" fn sd_alloc(bytes: usize) -> *mut u8 {
    let mut v: Vec<f64> = Vec::with_capacity(bytes.div_ceil(8).max(1));
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p.cast()
}

/// Gives back a buffer from [`sd_alloc`].
///
/// # Safety
/// `ptr` and `bytes` must be those of one [`sd_alloc`] call, given back once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_free(ptr: *mut u8, bytes: usize) {
    if !ptr.is_null() {
        // SAFETY: made by sd_alloc with this capacity.
        drop(unsafe { Vec::<f64>::from_raw_parts(ptr.cast(), 0, bytes.div_ceil(8).max(1)) });
    }
}

/// The start of the text buffer (UTF-8).
#[unsafe(no_mangle)]
pub extern "C" fn sd_text_ptr() -> *const u8 {
    TEXT.with(|t| t.borrow().as_ptr())
}

/// The length of the text buffer in bytes.
#[unsafe(no_mangle)]
pub extern "C" fn sd_text_len() -> usize {
    TEXT.with(|t| t.borrow().len())
}

/// [`crate::project2`] into `out` (16 numbers).
///
/// # Safety
/// `out` must have room for 16 `f64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_project2(ax: f64, ay: f64, bx: f64, by: f64, px: f64, py: f64, out: *mut f64) {
    // SAFETY: the caller's promise.
    unsafe { write(out, &crate::project2([ax, ay], [bx, by], [px, py])) }
}

/// [`crate::project3`] into `out` (13 numbers); `abp` holds a, b and p
/// (9 numbers).
///
/// # Safety
/// `abp` must point to 9 `f64`, `out` have room for 13.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_project3(abp: *const f64, out: *mut f64) {
    // SAFETY: the caller's promise.
    let v = unsafe { slice(abp, 9) };
    if v.len() == 9 {
        let r = crate::project3([v[0], v[1], v[2]], [v[3], v[4], v[5]], [v[6], v[7], v[8]]);
        // SAFETY: the caller's promise.
        unsafe { write(out, &r) }
    }
}

/// [`crate::ulps`].
#[unsafe(no_mangle)]
pub extern "C" fn sd_ulps(x: f64, y: f64) -> f64 {
    crate::ulps(x, y)
}

/// A [`Level`] of `n` walls, `[ax, ay, bx, by]` each; null on error.
///
/// # Safety
/// `walls` must point to `4 n` `f64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_level_new(walls: *const f64, n: usize) -> *mut Level {
    // SAFETY: the caller's promise.
    let w: Vec<[f64; 4]> = unsafe { slice(walls, 4 * n) }.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    match Level::new(&w) {
        Ok(level) => Box::into_raw(Box::new(level)),
        Err(e) => {
            set_text(e);
            std::ptr::null_mut()
        }
    }
}

/// Frees a level.
///
/// # Safety
/// `level` must come from [`sd_level_new`], freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_level_free(level: *mut Level) {
    if !level.is_null() {
        // SAFETY: made by Box::into_raw in sd_level_new.
        drop(unsafe { Box::from_raw(level) });
    }
}

/// [`Level::push_out`]: the position into `out` (2 numbers); 1 when the
/// circle ends free, 0 when the pushes ran out.
///
/// # Safety
/// `level` from [`sd_level_new`]; `out` room for 2 `f64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_level_push_out(level: *const Level, x: f64, y: f64, radius: f64, out: *mut f64) -> i32 {
    // SAFETY: the caller's promise.
    let Some(level) = (unsafe { level.as_ref() }) else { return 0 };
    let (px, py, free) = level.push_out([x, y], radius);
    // SAFETY: the caller's promise.
    unsafe { write(out, &[px, py]) };
    i32::from(free)
}

/// [`Level::contacts`]: how many walls the circle touches; the first
/// `max` of them into `out`, 5 numbers each.
///
/// # Safety
/// `level` from [`sd_level_new`]; `out` room for `5 max` `f64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_level_contacts(
    level: *const Level,
    x: f64,
    y: f64,
    radius: f64,
    out: *mut f64,
    max: usize,
) -> usize {
    // SAFETY: the caller's promise.
    let Some(level) = (unsafe { level.as_ref() }) else { return 0 };
    let c = level.contacts([x, y], radius);
    let flat: Vec<f64> = c.iter().take(max).flatten().copied().collect();
    // SAFETY: the caller's promise.
    unsafe { write(out, &flat) };
    c.len()
}

/// [`Level::slide`]: the new position into `out` (2 numbers); returns the
/// contacts met.
///
/// # Safety
/// `level` from [`sd_level_new`]; `out` room for 2 `f64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_level_slide(
    level: *const Level,
    x: f64,
    y: f64,
    radius: f64,
    dx: f64,
    dy: f64,
    out: *mut f64,
) -> u32 {
    // SAFETY: the caller's promise.
    let Some(level) = (unsafe { level.as_ref() }) else { return 0 };
    let (px, py, hits) = level.slide([x, y], radius, [dx, dy]);
    // SAFETY: the caller's promise.
    unsafe { write(out, &[px, py]) };
    hits
}

/// A [`Snapper`] over `n_vertices` lon/lat vertices (2 numbers each),
/// `n_parts` part ends and `n_features` feature ends (see
/// [`Snapper::new`]); null on error.
///
/// # Safety
/// Each pointer must hold as many values as its count says.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_snapper_new(
    vertices: *const f64,
    n_vertices: usize,
    part_ends: *const u32,
    n_parts: usize,
    feature_ends: *const u32,
    n_features: usize,
) -> *mut Snapper {
    // SAFETY: the caller's promise.
    let (v, p, f) =
        unsafe { (slice(vertices, 2 * n_vertices), slice(part_ends, n_parts), slice(feature_ends, n_features)) };
    let v: Vec<[f64; 2]> = v.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
    match Snapper::new(&v, p, f) {
        Ok(s) => Box::into_raw(Box::new(s)),
        Err(e) => {
            set_text(e);
            std::ptr::null_mut()
        }
    }
}

/// Frees a snapper.
///
/// # Safety
/// `snapper` must come from [`sd_snapper_new`], freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_snapper_free(snapper: *mut Snapper) {
    if !snapper.is_null() {
        // SAFETY: made by Box::into_raw in sd_snapper_new.
        drop(unsafe { Box::from_raw(snapper) });
    }
}

/// [`Snapper::snap`] of `n` lon/lat points into `out` ([`SNAP_COLUMNS`]
/// numbers each); 0, or −1 on error (the message in the text buffer).
///
/// # Safety
/// `snapper` from [`sd_snapper_new`]; `points` holds `2 n` `f64`, `out` has
/// room for `9 n`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_snap(
    snapper: *const Snapper,
    points: *const f64,
    n: usize,
    max_distance: f64,
    out: *mut f64,
) -> i32 {
    // SAFETY: the caller's promise.
    let Some(s) = (unsafe { snapper.as_ref() }) else { return -1 };
    // SAFETY: the caller's promise.
    let p: Vec<[f64; 2]> = unsafe { slice(points, 2 * n) }.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
    match s.snap(&p, max_distance) {
        Ok(rows) => {
            let flat: Vec<f64> = rows.iter().flatten().copied().collect();
            debug_assert_eq!(flat.len(), SNAP_COLUMNS * n);
            // SAFETY: the caller's promise.
            unsafe { write(out, &flat) };
            0
        }
        Err(e) => {
            set_text(e);
            -1
        }
    }
}

/// [`crate::format_rows`] of `n` values, `columns` per row, into the text
/// buffer; returns its length.
///
/// # Safety
/// `values` must hold `n` `f64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sd_format_rows(values: *const f64, n: usize, columns: usize) -> usize {
    // SAFETY: the caller's promise.
    set_text(crate::format_rows(unsafe { slice(values, n) }, columns));
    sd_text_len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> String {
        // SAFETY: the buffer holds sd_text_len bytes of UTF-8.
        let b = unsafe { slice(sd_text_ptr(), sd_text_len()) };
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn buffers_round_trip() {
        let p = sd_alloc(24).cast::<f64>();
        // SAFETY: 3 f64 of room, then given back once.
        unsafe {
            sd_project3([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0, 7.0, -2.0, -1.0].as_ptr(), std::ptr::null_mut());
            p.write(1.0);
            sd_free(p.cast(), 24);
        }
        let mut out = [0.0; 16];
        // SAFETY: 16 f64 of room.
        unsafe { sd_project2(0.0, 0.0, 4.0, 0.0, 1.0, 2.0, out.as_mut_ptr()) };
        assert_eq!(out, crate::project2([0.0, 0.0], [4.0, 0.0], [1.0, 2.0]));
    }

    #[test]
    fn errors_come_back_as_text() {
        let walls = [0.0, 0.0, f64::INFINITY, 1.0];
        // SAFETY: 4 f64.
        let l = unsafe { sd_level_new(walls.as_ptr(), 1) };
        assert!(l.is_null());
        assert!(text().contains("wall 0"));
        // SAFETY: counts match the arrays.
        let s = unsafe { sd_snapper_new([0.0, 0.0, 0.01, 0.0].as_ptr(), 2, [2u32].as_ptr(), 1, [1u32].as_ptr(), 1) };
        assert!(!s.is_null());
        let mut out = [0.0; 9];
        // SAFETY: 1 point, 9 f64 of room; the snapper freed once.
        unsafe {
            assert_eq!(sd_snap(s, [0.0, 95.0].as_ptr(), 1, f64::INFINITY, out.as_mut_ptr()), -1);
            assert!(text().contains("point 0"));
            assert_eq!(sd_snap(s, [0.005, 0.001].as_ptr(), 1, f64::INFINITY, out.as_mut_ptr()), 0);
            assert_eq!(out[0], 0.0);
            sd_snapper_free(s);
        }
        // SAFETY: null is allowed.
        unsafe { sd_level_free(std::ptr::null_mut()) };
    }

    #[test]
    fn level_through_the_exports() {
        let walls = [0.0, 0.0, 10.0, 0.0];
        // SAFETY: 4 f64; out has room for what each call writes.
        unsafe {
            let l = sd_level_new(walls.as_ptr(), 1);
            let mut out = [0.0; 10];
            assert_eq!(sd_level_contacts(l, 5.0, 0.5, 1.0, out.as_mut_ptr(), 2), 1);
            assert_eq!(&out[..5], &[5.0, 0.0, 0.0, 1.0, 0.5]);
            assert_eq!(sd_level_push_out(l, 5.0, 0.5, 1.0, out.as_mut_ptr()), 1);
            // Out by the radius, and by no more than a hair.
            assert!(out[0] == 5.0 && out[1] >= 1.0 && out[1] < 1.0 + 1e-9, "{out:?}");
            sd_level_slide(l, 5.0, 2.0, 1.0, 0.0, -5.0, out.as_mut_ptr());
            assert!(out[1] >= 1.0 && out[1] < 1.1, "{}", out[1]);
            sd_level_free(l);
        }
        // SAFETY: 3 values.
        let n = unsafe { sd_format_rows([1.0, 2.5, f64::NAN].as_ptr(), 3, 3) };
        assert_eq!(text(), "1.0,2.5,\n");
        assert_eq!(n, 9);
    }
}
