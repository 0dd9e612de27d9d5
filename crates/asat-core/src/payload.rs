//! Dropping panic payloads the runtime catches.
//!
//! The runtime catches panics of user code (region bodies, policy and wait-strategy callbacks,
//! thread hooks) and either re-raises the first one on the thread that started the region or
//! drops the payload. A payload is any `Box<dyn Any + Send>`, and its `Drop` is user code too:
//! dropped bare on a worker, a payload whose destructor panics would end the worker thread, and
//! the next region posted to it would wait for it forever. Every payload the runtime drops goes
//! through [`drop_payload`].

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A caught panic's payload.
pub(crate) type Payload = Box<dyn Any + Send>;

/// Drops `payload`, catching a panic of its destructor. The second payload (from that panic)
/// is leaked rather than dropped: its destructor could panic as well.
pub(crate) fn drop_payload(payload: Payload) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

/// Runs `f`, catching a panic (after the panic hook has reported it); `None` when it panicked,
/// its payload dropped with [`drop_payload`].
pub(crate) fn catch<R>(f: impl FnOnce() -> R) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(p) => {
            drop_payload(p);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("a payload whose destructor panics");
        }
    }

    #[test]
    fn a_payload_whose_destructor_panics_is_dropped_without_unwinding() {
        let p = catch_unwind(|| std::panic::panic_any(Bomb)).unwrap_err();
        drop_payload(p);
        assert_eq!(catch(|| -> u8 { std::panic::panic_any(Bomb) }), None);
        assert_eq!(catch(|| 7), Some(7));
    }
}
