//! Telling a `fork`ed child from its parent: a generation number that a `pthread_atfork` child
//! handler moves on. A runtime remembers the generation it was built in; in a child made by
//! `fork` (without `exec`) its worker threads do not exist, so it must neither post regions to
//! them nor join them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

static GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();

extern "C" fn in_child() {
    // Async-signal-safe: one atomic add, no allocation, no lock.
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The process's fork generation: 0 in the process that first asked, one more in each child
/// forked since (from any thread). Registers the handler at the first call; a fork before that
/// call is not counted, which is harmless: no runtime existed yet to remember a generation.
pub(crate) fn generation() -> u64 {
    REGISTER.call_once(|| {
        // SAFETY: `in_child` is an `extern "C" fn()` that only touches a static atomic, which
        // is valid in the child after `fork`; the prepare and parent handlers are null.
        // pthread_atfork fails only with ENOMEM; the handler is then missing and a child is
        // not recognised, as before this module existed.
        let _ = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
    });
    GENERATION.load(Ordering::Relaxed)
}
