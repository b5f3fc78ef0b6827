//! Large buffers backed by huge pages where the kernel allows.
//!
//! A batch of a million points touches over 100 MB of fresh memory (the
//! points in curve order, the sort's keys, the answers). In 4 KB pages that is some 50,000 page faults a call,
//! which cost a quarter of `nearest_many` on one thread and more on two
//! (the faults contend in the kernel). Linux backs memory advised with
//! `MADV_HUGEPAGE` by 2 MB pages where it can; the allocator's own
//! behaviour is left alone otherwise, and an error just means 4 KB pages.

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

/// `n` copies of `x` in a [`big_vec`].
pub(crate) fn big_vec_of<T: Clone>(x: T, n: usize) -> Vec<T> {
    let mut v = big_vec(n);
    v.resize(n, x);
    v
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
    }
}
