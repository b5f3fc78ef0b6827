//! Large buffers backed by huge pages where the kernel allows.
//!
//! A batch of a million points touches over 100 MB of fresh memory (the
//! points in curve order, the sort's keys, the answers). In 4 KB pages that is some 50,000 page faults a call,
//! which cost a quarter of `nearest_many` on one thread and more on two
//! (the faults contend in the kernel). Linux backs memory advised with
//! `MADV_HUGEPAGE` by 2 MB pages where it can; the allocator's own
//! behaviour is left alone otherwise, and an error just means 4 KB pages.
//!
//! The index's own arrays (its leaves, their `1/|b − a|²`, the levels of
//! boxes, the segments' records) are advised too: every query reads them
//! at random, and in 4 KB pages a query over 10 million segments missed
//! the TLB on nearly every node (one query at a time: 5.5–6.0 → 4.4–4.7
//! µs).
//!
//! A batch's internal buffers (not the answers it returns) are given back
//! to their thread when it ends and taken again by the thread's next
//! batch: up to 256 MB a thread stay allocated between calls.

use std::any::Any;
use std::cell::RefCell;
use std::mem::MaybeUninit;

/// An empty vector with room for `n` elements, its buffer advised for
/// huge pages when it is large.
pub(crate) fn big_vec<T>(n: usize) -> Vec<T> {
    let v = Vec::with_capacity(n);
    advise(v.as_ptr() as usize, n.saturating_mul(std::mem::size_of::<T>()));
    v
}

/// `vec![x; n]` advised for huge pages when large. For a zero `x` (of a
/// number type or arrays of them) that is memory the system hands over
/// zeroed, not written here: its pages are faulted in by whichever threads
/// write them first.
pub fn vec_of<T: Clone>(x: T, n: usize) -> Vec<T> {
    let v = vec![x; n];
    advise(v.as_ptr() as usize, n.saturating_mul(std::mem::size_of::<T>()));
    v
}

/// Room for `extra` more elements in `v`, as `Vec::reserve` gives, but
/// where it must grow its new buffer is a [`big_vec`] (twice the old room
/// at least): the answers of a k-nearest or radius batch, over 100 MB for
/// 200,000 radius queries, are read back at random, a list a point, and in
/// 4 KB pages nearly every list missed the TLB.
#[inline]
pub(crate) fn reserve_big<T>(v: &mut Vec<T>, extra: usize) {
    let need = v.len().saturating_add(extra);
    if need > v.capacity() {
        grow_big(v, need);
    }
}

/// [`reserve_big`]'s growth, out of line: a new advised buffer of at least
/// `need` elements, the old ones moved into it.
#[cold]
#[inline(never)]
fn grow_big<T>(v: &mut Vec<T>, need: usize) {
    let mut grown = big_vec(need.max(v.capacity().saturating_mul(2)));
    grown.append(v);
    *v = grown;
}

/// Asks for every cache line of `s` ahead of a read: a hint (nothing
/// where the CPU has no such instruction).
#[inline(always)]
pub(crate) fn prefetch_slice<T>(s: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let (p, bytes) = (s.as_ptr().cast::<i8>(), std::mem::size_of_val(s));
        let mut at = 0;
        while at < bytes {
            // SAFETY: a prefetch never faults; the address lies within `s`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.add(at)) };
            at += 64;
        }
        if bytes > 0 {
            // (The last line, where `s` does not start on one.)
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.add(bytes - 1)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = s;
}

/// `n` copies of `x` in a [`big_vec`].
pub(crate) fn big_vec_of<T: Clone>(x: T, n: usize) -> Vec<T> {
    let mut v = big_vec(n);
    v.resize(n, x);
    v
}

/// What a thread keeps of the buffers given back ([`give_back`]), in
/// bytes: a batch of a million 2D points uses some 44 MB of them.
const KEEP_BYTES: usize = 256 << 20;

/// At most this many buffers kept a thread.
const KEEP_BUFFERS: usize = 12;

thread_local! {
    /// The buffers a thread's batches gave back, for its next batch: fresh
    /// memory costs its page faults and the system's zeroing every call
    /// (1M points, 100k segments, one thread, calls in a loop: 3 % of a
    /// call, median ratio of 25 alternating runs). Any type: each a
    /// `Vec<T>` boxed, with its size in bytes.
    static SPARE: RefCell<Vec<(usize, Box<dyn Any>)>> = const { RefCell::new(Vec::new()) };
}

/// An empty vector with room for `n` elements: one this thread gave back
/// (the smallest that fits), else a new [`big_vec`].
pub(crate) fn take<T: Copy + 'static>(n: usize) -> Vec<T> {
    let kept = SPARE.try_with(|spare| {
        let mut spare = spare.try_borrow_mut().ok()?;
        let fits = |b: &Box<dyn Any>| b.downcast_ref::<Vec<T>>().is_some_and(|v| v.capacity() >= n);
        let (_, i) = spare.iter().enumerate().filter(|(_, (_, b))| fits(b)).map(|(i, (bytes, _))| (*bytes, i)).min()?;
        spare.swap_remove(i).1.downcast::<Vec<T>>().ok()
    });
    match kept {
        Ok(Some(mut v)) => {
            v.clear();
            *v
        }
        _ => big_vec(n),
    }
}

/// `n` copies of `x` in a vector from [`take`].
pub(crate) fn take_of<T: Copy + 'static>(x: T, n: usize) -> Vec<T> {
    let mut v = take(n);
    v.resize(n, x);
    v
}

/// Keeps `v`'s buffer for this thread's next [`take`], within
/// [`KEEP_BYTES`] and [`KEEP_BUFFERS`] (the smallest make room first: the
/// next batch is most likely as large as this one).
pub(crate) fn give_back<T: Copy + 'static>(v: Vec<T>) {
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes == 0 || bytes > KEEP_BYTES {
        return;
    }
    let _ = SPARE.try_with(|spare| {
        let Ok(mut spare) = spare.try_borrow_mut() else { return };
        spare.push((bytes, Box::new(v)));
        while spare.len() > KEEP_BUFFERS || spare.iter().map(|(b, _)| b).sum::<usize>() > KEEP_BYTES {
            let Some((i, _)) = spare.iter().enumerate().min_by_key(|(_, (b, _))| *b) else { break };
            spare.swap_remove(i);
        }
    });
}

/// Values written in order into room that is not read again soon (a
/// batch's answers: 72 MB for a million points, more than the caches),
/// through non-temporal stores where the CPU has them: the lines go to
/// memory without being read first, and without pushing the index and
/// the batch's own buffers out of the caches (1M points, 100k segments,
/// one thread, answering into a buffer used again: 0.953 of the time).
/// Values are staged eight at a time, then copied out a word at a time.
pub(crate) struct Stream<'a, T> {
    room: &'a mut [MaybeUninit<T>],
    /// Whether to stream (see [`new`](Self::new)), and `T` allows it
    /// (`WORDS`).
    stream: bool,
    /// Values written to `room`.
    at: usize,
    stage: [MaybeUninit<T>; STAGE],
    /// Values in `stage`.
    staged: usize,
}

/// Values a [`Stream`] stages before copying them out.
const STAGE: usize = 8;

impl<'a, T: Copy> Stream<'a, T> {
    /// Streams into `room`, from its start; `stream`: by non-temporal
    /// stores (where `T` allows). Memory fresh from the system is better
    /// written plainly: its pages are faulted in and zeroed through the
    /// caches anyway (a new vector each call: 1.02 of the time streamed).
    pub(crate) fn new(room: &'a mut [MaybeUninit<T>], stream: bool) -> Self {
        Stream { room, stream: stream && Self::WORDS, at: 0, stage: [MaybeUninit::uninit(); STAGE], staged: 0 }
    }

    /// Whether `T` goes out in whole words of 8 bytes, aligned (else
    /// every value is written as it comes).
    const WORDS: bool = cfg!(target_arch = "x86_64")
        && std::mem::size_of::<T>().is_multiple_of(8)
        && std::mem::size_of::<T>() > 0
        && std::mem::align_of::<T>() >= 8;

    /// Writes `x` after the values written so far; past the end of the
    /// room, it is dropped.
    #[inline(always)]
    pub(crate) fn push(&mut self, x: T) {
        if !self.stream {
            if let Some(slot) = self.room.get_mut(self.at) {
                slot.write(x);
                self.at += 1;
            }
            return;
        }
        self.stage[self.staged].write(x);
        self.staged += 1;
        if self.staged == STAGE {
            self.flush();
        }
    }

    /// Copies the staged values out: a full stage by non-temporal stores,
    /// the rest (at the end, or where the room runs out) plainly.
    #[inline(never)]
    fn flush(&mut self) {
        let n = self.staged.min(self.room.len() - self.at);
        let (src, dst) = (self.stage.as_ptr(), self.room[self.at..].as_mut_ptr());
        self.at += n;
        self.staged = 0;
        #[cfg(target_arch = "x86_64")]
        if n == STAGE {
            // SAFETY: `dst` has room for the `STAGE` values (taken above)
            // and is aligned to 8 bytes, as `src` is (`WORDS`: values are
            // staged only when streaming); their bytes, `STAGE` times a
            // multiple of 8, are a whole number of 64-byte runs.
            unsafe { stream_lines(dst.cast(), src.cast(), std::mem::size_of::<T>() * STAGE / 64) };
            return;
        }
        // SAFETY: `n` values staged, room for them at `dst`; two buffers.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
    }

    /// Writes out what is staged and returns how many values were
    /// written, from the start of the room (all of them were written, in
    /// order, up to the room's end). After it, the values written can be
    /// read by any thread once it is told so through the usual
    /// synchronisation.
    pub(crate) fn finish(mut self) -> usize {
        // (Fewer than a full stage: copied plainly.)
        self.flush();
        // The non-temporal stores are ordered before what follows.
        #[cfg(target_arch = "x86_64")]
        if self.stream {
            // SAFETY: SSE2 is part of x86-64.
            unsafe { std::arch::x86_64::_mm_sfence() };
        }
        self.at
    }
}

/// Copies `runs` runs of 64 bytes from `src` to `dst` with non-temporal
/// stores (`movnti`, SSE2), eight words a run. In assembly: the words are
/// those of values that may hold padding, which Rust code may not read as
/// numbers.
///
/// # Safety
/// Both must be valid for `64 · runs` bytes and aligned to 8 bytes, and
/// not overlap; `runs` more than 0.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn stream_lines(dst: *mut u64, src: *const u64, runs: usize) {
    // SAFETY: this function's contract; the loop reads and writes only
    // those bytes, and touches no stack.
    unsafe {
        std::arch::asm!(
            "2:",
            "mov {a}, qword ptr [{s}]",
            "mov {b}, qword ptr [{s} + 8]",
            "movnti qword ptr [{d}], {a}",
            "movnti qword ptr [{d} + 8], {b}",
            "mov {a}, qword ptr [{s} + 16]",
            "mov {b}, qword ptr [{s} + 24]",
            "movnti qword ptr [{d} + 16], {a}",
            "movnti qword ptr [{d} + 24], {b}",
            "mov {a}, qword ptr [{s} + 32]",
            "mov {b}, qword ptr [{s} + 40]",
            "movnti qword ptr [{d} + 32], {a}",
            "movnti qword ptr [{d} + 40], {b}",
            "mov {a}, qword ptr [{s} + 48]",
            "mov {b}, qword ptr [{s} + 56]",
            "movnti qword ptr [{d} + 48], {a}",
            "movnti qword ptr [{d} + 56], {b}",
            "add {s}, 64",
            "add {d}, 64",
            "dec {n}",
            "jnz 2b",
            s = inout(reg) src => _,
            d = inout(reg) dst => _,
            n = inout(reg) runs => _,
            a = out(reg) _,
            b = out(reg) _,
            options(nostack),
        );
    }
}

/// Appends `src` to `v` by non-temporal stores where the CPU has them
/// (x86-64, and `T` in whole aligned words of 8 bytes), else as
/// `extend_from_slice`: for values written once and read back only much
/// later, from memory (a k-nearest or radius batch's answers in curve
/// order). Plain stores to such cold lines each wait for the line to be
/// read first, and fill the store buffer meanwhile: every later store and
/// any load that must wait for one stalls behind them. The caller must
/// [`fence`] before the values are read by another thread.
#[inline]
pub(crate) fn stream_extend<T: Copy>(v: &mut Vec<T>, src: &[T]) {
    #[cfg(target_arch = "x86_64")]
    if Stream::<T>::WORDS {
        reserve_big(v, src.len());
        let words = std::mem::size_of_val(src) / 8;
        if words > 0 {
            // SAFETY: room for `src.len()` more values after `len` (just
            // reserved), aligned to 8 as `src` is (`WORDS`); two buffers.
            unsafe {
                stream_words(v.as_mut_ptr().add(v.len()).cast(), src.as_ptr().cast(), words);
                v.set_len(v.len() + src.len());
            }
        }
        return;
    }
    reserve_big(v, src.len());
    v.extend_from_slice(src);
}

/// Writes `src` at `dst` by non-temporal stores where the CPU has them
/// (as [`stream_extend`]), else plainly.
///
/// # Safety
/// `dst` must be valid for `src.len()` values and not overlap `src`.
#[inline]
pub(crate) unsafe fn stream_to<T: Copy>(dst: *mut T, src: &[T]) {
    #[cfg(target_arch = "x86_64")]
    if Stream::<T>::WORDS {
        let words = std::mem::size_of_val(src) / 8;
        if words > 0 {
            // SAFETY: this function's contract; aligned to 8 (`WORDS`).
            unsafe { stream_words(dst.cast(), src.as_ptr().cast(), words) };
        }
        return;
    }
    // SAFETY: this function's contract.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
}

/// Orders the non-temporal stores of [`stream_extend`] before what
/// follows (nothing where there are none).
#[inline]
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Copies `words` words of 8 bytes from `src` to `dst` with non-temporal
/// stores (`movnti`, SSE2), in assembly as [`stream_lines`].
///
/// # Safety
/// Both must be valid for `8 · words` bytes and aligned to 8 bytes, and not
/// overlap; `words` more than 0.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn stream_words(dst: *mut u64, src: *const u64, words: usize) {
    // SAFETY: this function's contract; the loop reads and writes only
    // those bytes, and touches no stack.
    unsafe {
        std::arch::asm!(
            "2:",
            "mov {a}, qword ptr [{s}]",
            "movnti qword ptr [{d}], {a}",
            "add {s}, 8",
            "add {d}, 8",
            "dec {n}",
            "jnz 2b",
            s = inout(reg) src => _,
            d = inout(reg) dst => _,
            n = inout(reg) words => _,
            a = out(reg) _,
            options(nostack),
        );
    }
}

/// Below this, a system call costs more than the faults it saves (a 4 MB
/// buffer holds at least one whole, aligned 2 MB page; a column of a
/// million `f64`, 8,000,000 bytes, must be in).
#[cfg(target_os = "linux")]
const MIN_BYTES: usize = 4 << 20;

#[cfg(target_os = "linux")]
fn advise(addr: usize, len: usize) {
    if len < MIN_BYTES {
        return;
    }
    // SAFETY: sysconf reads a constant of the system.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => return,
    };
    let start = addr.next_multiple_of(page);
    let end = (addr + len) / page * page;
    if end > start {
        // SAFETY: the whole pages inside one live allocation of ours;
        // MADV_HUGEPAGE changes how they are backed, never their contents,
        // and a failure (the kernel built without it, say) changes nothing.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_addr: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_vectors_are_ordinary_vectors() {
        let v: Vec<u64> = big_vec(3 << 20);
        assert!(v.is_empty() && v.capacity() >= 3 << 20);
        let w = big_vec_of(7u32, 5 << 20);
        assert!(w.len() == 5 << 20 && w.iter().all(|&x| x == 7));
        assert_eq!(big_vec_of(1u8, 3), [1, 1, 1]);
        // Growing keeps what was there, in order, and makes room.
        let mut v: Vec<u32> = (0..10).collect();
        reserve_big(&mut v, 6 << 20);
        assert!(v.capacity() >= 10 + (6 << 20) && v == (0..10).collect::<Vec<_>>());
        let at = v.as_ptr();
        reserve_big(&mut v, 5);
        assert_eq!(v.as_ptr(), at, "room enough: the same buffer");
    }

    /// A stream writes every value pushed, in order, up to the end of its
    /// room (the rest dropped), whatever the size of the values (with
    /// padding, in whole words or not) and whether it streams or not.
    #[test]
    fn streams_write_what_is_pushed_in_order() {
        fn check<T: Copy + PartialEq + std::fmt::Debug>(value: impl Fn(usize) -> T) {
            for room in [0, 1, 5, 8, 9, 16, 17, 100] {
                for pushed in [0, 3, room, room + 9] {
                    for stream in [false, true] {
                        let mut buf: Vec<T> = Vec::with_capacity(room);
                        let mut out = Stream::new(&mut buf.spare_capacity_mut()[..room], stream);
                        for i in 0..pushed {
                            out.push(value(i));
                        }
                        let written = out.finish();
                        assert_eq!(written, pushed.min(room));
                        // SAFETY: `finish` says the first `written` were written.
                        unsafe { buf.set_len(written) };
                        assert!(buf.iter().enumerate().all(|(i, x)| *x == value(i)), "{room} {pushed} {stream}");
                    }
                }
            }
        }
        // (An `Option` of a tuple with a byte: padding; 72 bytes like the
        // answers; 16; one byte.)
        check(|i| (i % 3 != 0).then_some((i as u8, i as f64, [i as u64; 6])));
        check(|i| Some(i as f64 * 0.5));
        check(|i| i as u8);
    }

    /// A buffer given back is the next one taken of its type and size or
    /// less (not of another type), emptied; beyond the limits the smallest
    /// go, and one larger than all the room is not kept.
    #[test]
    fn buffers_given_back_are_taken_again_within_the_limits() {
        // (A thread of its own: nothing else gives back on it.)
        std::thread::spawn(|| {
            let v: Vec<u32> = take_of(7, 1000);
            let at = v.as_ptr();
            give_back(v);
            let w: Vec<u64> = take(10);
            assert_ne!(w.as_ptr().cast::<u32>(), at);
            let u: Vec<u32> = take(2000);
            assert_ne!(u.as_ptr(), at, "too small");
            let v: Vec<u32> = take(500);
            assert_eq!((v.as_ptr(), v.len()), (at, 0));
            give_back(v);
            // Over the count: the smallest go first.
            for i in 0..KEEP_BUFFERS {
                give_back(Vec::<f64>::with_capacity(2000 + i));
            }
            let kept = SPARE.with(|s| s.borrow().iter().map(|(b, _)| *b).collect::<Vec<_>>());
            assert_eq!(kept.len(), KEEP_BUFFERS);
            assert!(!kept.contains(&4000), "the u32 buffer, the smallest, went");
            // Over the bytes: the rest make room; too large is dropped.
            give_back(Vec::<u8>::with_capacity(KEEP_BYTES - 1000));
            let total: usize = SPARE.with(|s| s.borrow().iter().map(|(b, _)| *b).sum());
            assert!(total <= KEEP_BYTES);
            give_back(Vec::<u8>::with_capacity(KEEP_BYTES + 1));
            assert!(SPARE.with(|s| s.borrow().iter().all(|(b, _)| *b <= KEEP_BYTES)));
        })
        .join()
        .expect("the test thread");
    }
}
