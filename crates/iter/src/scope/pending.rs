//! rayon's `current_thread_has_pending_tasks`: whether the scope the calling member works in
//! has jobs queued that this member could take.
//!
//! A scope's [`Queue`](super::queue) keeps counts of its queued jobs in a [`Pending`] shared
//! with the members (the counts change under the queue's lock; they are read without it, so a
//! reading is a snapshot, as rayon's is). Each member of a scope's region records the scope's
//! `Pending` and its own index in a thread-local stack for as long as it takes part (a scope
//! run inline inside a job stacks on its outer one); the innermost one answers.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use asat_core::Runtime;

/// The counts a scope's queue keeps up to date.
#[derive(Debug, Default)]
pub(super) struct Pending {
    /// Jobs in the shared queue, which any member may take.
    queued: AtomicUsize,
    /// Broadcast jobs queued for each member of the team (sized when the team is known).
    broadcasts: OnceLock<Box<[AtomicUsize]>>,
}

impl Pending {
    /// Sizes the broadcast counts for a team of `size` (the first call wins: every member of
    /// one team gives the same size).
    pub(super) fn team(&self, size: usize) {
        self.broadcasts
            .get_or_init(|| (0..size).map(|_| AtomicUsize::new(0)).collect());
    }

    /// A job entered (`+1`) or left (`-1`) the shared queue.
    pub(super) fn queued(&self, delta: isize) {
        add(&self.queued, delta);
    }

    /// A broadcast job entered every member's list (`member` `None`, `+1`) or left `member`'s.
    pub(super) fn broadcast(&self, member: Option<usize>, delta: isize) {
        let Some(counts) = self.broadcasts.get() else {
            return;
        };
        match member {
            Some(m) => add(&counts[m], delta),
            None => counts.iter().for_each(|c| add(c, delta)),
        }
    }

    /// Whether `member` could take a job now: one is in the shared queue or in its own list.
    fn has_work_for(&self, member: usize) -> bool {
        self.queued.load(Ordering::Relaxed) > 0
            || self
                .broadcasts
                .get()
                .and_then(|c| c.get(member))
                .is_some_and(|c| c.load(Ordering::Relaxed) > 0)
    }
}

fn add(counter: &AtomicUsize, delta: isize) {
    if delta >= 0 {
        counter.fetch_add(delta.unsigned_abs(), Ordering::Relaxed);
    } else {
        counter.fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
    }
}

thread_local! {
    /// The scopes this thread takes part in, innermost last, with its member index in each.
    static SCOPES: RefCell<Vec<(Arc<Pending>, usize)>> = const { RefCell::new(Vec::new()) };
}

/// Records, until dropped, that the calling thread is `member` of the scope counted by
/// `pending`.
pub(super) struct Member(());

impl Member {
    pub(super) fn enter(pending: &Arc<Pending>, member: usize) -> Self {
        SCOPES.with(|s| s.borrow_mut().push((Arc::clone(pending), member)));
        Member(())
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        SCOPES.with(|s| s.borrow_mut().pop());
    }
}

/// Whether the innermost scope the calling thread takes part in has a job it could take
/// (`false` outside every scope).
fn in_scope() -> bool {
    SCOPES.with(|s| {
        s.borrow()
            .last()
            .is_some_and(|(p, member)| p.has_work_for(*member))
    })
}

/// rayon's `current_thread_has_pending_tasks`: `None` when the calling thread runs no member
/// of a parallel call (of any runtime); otherwise whether the innermost [`scope`](super::scope)
/// it takes part in has jobs queued that it could take now (a job in the scope's shared queue,
/// or a [`spawn_broadcast`](super::Scope::spawn_broadcast) job of its own), `Some(false)`
/// outside every scope. A snapshot: other members may take the jobs meanwhile, as in rayon.
/// asat has no per-thread deques, so "pending" means the scope's queue, which every member of
/// its team takes from.
///
/// ```
/// use asat_iter::prelude::*;
///
/// assert_eq!(asat_iter::current_thread_has_pending_tasks(), None);
/// asat_iter::ThreadPoolBuilder::new().num_threads(1).build().unwrap().scope(|s| {
///     assert_eq!(asat_iter::current_thread_has_pending_tasks(), Some(false));
///     s.spawn(|_| {});
///     // on one thread, the job waits for `op` to return
///     assert_eq!(asat_iter::current_thread_has_pending_tasks(), Some(true));
/// });
/// ```
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    asat_core::current_thread_index().map(|_| in_scope())
}

/// [`current_thread_has_pending_tasks`] for a given runtime: `None` unless the calling thread
/// runs a member of one of `rt`'s calls.
pub(super) fn on(rt: &Runtime) -> Option<bool> {
    rt.current_thread_index().map(|_| in_scope())
}
