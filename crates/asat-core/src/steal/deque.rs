//! The queues: crossbeam-deque's work-stealing deque and injector, and under loom and Miri
//! stand-ins with the same calls on a mutex. Under loom the mutex is loom's, so that the model
//! sees the happens-before edge from a push to the steal or pop that takes the task
//! (crossbeam's own atomics are not loom's). Under Miri it is std's: crossbeam-epoch, under
//! crossbeam-deque, breaks Stacked Borrows' rules (crossbeam-rs/crossbeam#545, known upstream;
//! crossbeam checks itself under Tree Borrows), which would stop every run at its first
//! steal; with the stand-ins Miri checks asat's own code around the queues.

#[cfg(not(any(loom, miri)))]
pub(crate) use crossbeam_deque::{Injector, Steal, Stealer, Worker};

#[cfg(any(loom, miri))]
pub(crate) use model::{Injector, Steal, Stealer, Worker};

#[cfg(any(loom, miri))]
mod model {
    use std::collections::VecDeque;
    use std::sync::Arc;

    pub(crate) use crossbeam_deque::Steal;
    #[cfg(loom)]
    use loom::sync::Mutex;
    #[cfg(not(loom))]
    use std::sync::Mutex;

    type Shared<T> = Arc<Mutex<VecDeque<T>>>;

    /// The owner's end: pushes and pops at the back.
    pub(crate) struct Worker<T>(Shared<T>);
    /// A thief's end: steals from the front.
    pub(crate) struct Stealer<T>(Shared<T>);
    /// Calls from outside: pushed at the back (through its `Worker`), stolen from the front.
    pub(crate) struct Injector<T>(Worker<T>);

    fn steal_front<T>(q: &Shared<T>) -> Steal<T> {
        q.lock()
            .unwrap()
            .pop_front()
            .map_or(Steal::Empty, Steal::Success)
    }

    fn is_empty<T>(q: &Shared<T>) -> bool {
        q.lock().unwrap().is_empty()
    }

    impl<T> Worker<T> {
        pub(crate) fn new_lifo() -> Self {
            Worker(Arc::new(Mutex::new(VecDeque::new())))
        }
        pub(crate) fn stealer(&self) -> Stealer<T> {
            Stealer(Arc::clone(&self.0))
        }
        pub(crate) fn push(&self, t: T) {
            self.0.lock().unwrap().push_back(t);
        }
        pub(crate) fn pop(&self) -> Option<T> {
            self.0.lock().unwrap().pop_back()
        }
        pub(crate) fn is_empty(&self) -> bool {
            is_empty(&self.0)
        }
    }

    impl<T> Stealer<T> {
        pub(crate) fn steal(&self) -> Steal<T> {
            steal_front(&self.0)
        }
        pub(crate) fn is_empty(&self) -> bool {
            is_empty(&self.0)
        }
    }

    impl<T> Injector<T> {
        pub(crate) fn new() -> Self {
            Injector(Worker::new_lifo())
        }
        pub(crate) fn push(&self, t: T) {
            self.0.push(t);
        }
        pub(crate) fn steal(&self) -> Steal<T> {
            steal_front(&self.0 .0)
        }
        pub(crate) fn is_empty(&self) -> bool {
            self.0.is_empty()
        }
    }
}
