//! The Linux futex a [`FutexWord`](crate::FutexWord) sleeps on: `FUTEX_WAIT` and `FUTEX_WAKE`
//! on a word private to the process, given the word's address as the `*mut u32` the system
//! call reads (passed through its variable arguments, the address must have exactly that
//! type: Miri rejects a reference there).

use std::sync::atomic::AtomicU32;

/// Sleeps while `word` holds `expected` (the kernel compares atomically with going to
/// sleep); returns on a wake, on a signal, or spuriously.
pub(crate) fn wait(word: &AtomicU32, expected: u32) {
    // SAFETY: the address is that of a live, aligned `AtomicU32`, borrowed for the whole call;
    // FUTEX_WAIT only reads it, atomically, and the null timeout is none. The result (a wake,
    // EAGAIN when the word had changed, EINTR) needs no handling: callers re-check.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes up to `n` threads asleep on `word`.
pub(crate) fn wake(word: &AtomicU32, n: i32) {
    // SAFETY: the address is that of a live, aligned `AtomicU32`; FUTEX_WAKE does not touch
    // the memory, it only finds the threads waiting on that address.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            n,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    #[test]
    fn a_wait_on_a_changed_word_returns_at_once() {
        let w = AtomicU32::new(1);
        wait(&w, 0);
        wake(&w, 1);
    }

    #[test]
    fn a_sleeper_is_woken_by_a_change_and_a_wake() {
        let w = Arc::new(AtomicU32::new(0));
        let t = {
            let w = Arc::clone(&w);
            std::thread::spawn(move || {
                while w.load(Ordering::Acquire) == 0 {
                    wait(&w, 0);
                }
            })
        };
        w.store(1, Ordering::Release);
        wake(&w, i32::MAX);
        t.join().unwrap();
    }
}
