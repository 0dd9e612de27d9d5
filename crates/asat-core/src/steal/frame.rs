//! A thread's pending join frames: each `join`'s second half, kept on the joining thread's
//! stack and linked to the frame of the join it is inside, newest first.
//!
//! Only the thread whose `Ctx` holds the list touches it or its frames. A join links its frame
//! ([`Frames::push`]) and unlinks it ([`Frames::pop`]) before it returns or unwinds (its
//! unwinding guard pops it too), so the frames reachable from the top are alive, in the stack
//! frames of joins still running on this thread. Shared frames are the oldest ones: the bottom
//! of the list (see the `steal` module docs).
//!
//! A thread keeps at most [`KEPT`] private frames: a join made while it has that many runs
//! its closures one after the other, with no frame (as chili does). The frame kept is the
//! oldest private one, nearest the root of the thread's recursion, which its beat shares;
//! once it is shared (or popped), the next join keeps a frame again. A balanced recursion of
//! depth `d` therefore links a frame at about `d` of its joins per `2^d` (with three frames
//! kept, about `d^2 / 2`: a sixth of a 1023-node sum's joins, which took two thirds of the
//! join's instructions there), and each of the others costs little more than calling both
//! closures. A burst of shares (several threads idle) loses nothing by it: each join of the
//! descent keeps a frame and shares it at once.

use std::cell::Cell;
use std::ptr;

use super::job::TaskRef;

/// One join's pending second half.
pub(super) struct Frame {
    task: TaskRef,
    below: *const Frame,
    shared: Cell<bool>,
}

/// The most private frames a thread keeps (module docs). One: a 1023-node sum's joins took
/// 35 instructions a node on average instead of 54 with three, 15-25% of its time (and
/// 5% of a 16.7 M-node sum's on one thread), and recursions of long leaves spread as fast.
pub(super) const KEPT: u32 = 1;

/// The list, by its newest frame.
pub(super) struct Frames {
    top: Cell<*const Frame>,
    /// How many of its frames are private.
    private: Cell<u32>,
}

impl Frame {
    /// The pending half.
    #[inline]
    pub(super) fn task(&self) -> TaskRef {
        self.task
    }
}

impl Frames {
    pub(super) fn new() -> Self {
        Frames {
            top: Cell::new(ptr::null()),
            private: Cell::new(0),
        }
    }

    /// Whether a join now keeps a frame: the thread has fewer than [`KEPT`] private ones.
    #[inline]
    pub(super) fn wanted(&self) -> bool {
        self.private.get() < KEPT
    }

    /// A frame for `task` above the present top, to [`push`](Frames::push) where it lies.
    #[inline]
    pub(super) fn frame(&self, task: TaskRef) -> Frame {
        Frame {
            task,
            below: self.top.get(),
            shared: Cell::new(false),
        }
    }

    /// Links `frame`, made by [`frame`](Frames::frame) with nothing pushed since.
    ///
    /// # Safety
    /// `frame` stays where it is, alive, until [`pop`](Frames::pop) unlinks it, on this
    /// thread; frames pushed after it are popped before it.
    #[inline]
    pub(super) unsafe fn push(&self, frame: &Frame) {
        debug_assert!(ptr::eq(frame.below, self.top.get()));
        self.top.set(frame);
        self.private.set(self.private.get() + 1);
    }

    /// Unlinks `frame`, the top one; returns whether it was shared.
    #[inline]
    pub(super) fn pop(&self, frame: &Frame) -> bool {
        debug_assert!(ptr::eq(self.top.get(), frame));
        self.top.set(frame.below);
        let shared = frame.shared.get();
        if !shared {
            self.private.set(self.private.get() - 1);
        }
        shared
    }

    /// Marks the oldest private frame shared and returns its task; `None` when every frame
    /// is shared (or there is none).
    pub(super) fn share_oldest(&self) -> Option<TaskRef> {
        let mut oldest = None;
        let mut p = self.top.get();
        // SAFETY: every frame reachable from the top is alive and stays put until its join
        // unlinks it (`push`'s contract), which cannot happen during this loop: only this
        // thread reaches the list, and it runs this loop.
        while let Some(f) = unsafe { p.as_ref() } {
            if f.shared.get() {
                break;
            }
            oldest = Some(f);
            p = f.below;
        }
        oldest.map(|f| {
            f.shared.set(true);
            self.private.set(self.private.get() - 1);
            f.task
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steal::job::StackJob;
    use crate::steal::latch::Latch;
    use crate::wait::Event;

    #[test]
    fn a_thread_keeps_one_private_frame_and_a_new_one_once_it_is_shared_or_popped() {
        assert_eq!(KEPT, 1);
        let event = Event::default();
        let job = StackJob::new(|| 1, Latch::on(&event));
        let frames = Frames::new();
        assert!(frames.wanted());
        let f1 = frames.frame(job.as_task());
        // SAFETY: each frame here is popped below, in the reverse order of the pushes, before
        // it goes out of scope.
        unsafe { frames.push(&f1) };
        assert!(!frames.wanted());
        // Sharing it frees the place: the next join keeps a frame again.
        assert!(frames.share_oldest().is_some_and(|t| t.is(f1.task())));
        assert!(frames.wanted());
        let f2 = frames.frame(job.as_task());
        // SAFETY: as above.
        unsafe { frames.push(&f2) };
        assert!(!frames.wanted());
        // The oldest private frame is the one above the shared ones.
        assert!(frames.share_oldest().is_some_and(|t| t.is(f2.task())));
        let f3 = frames.frame(job.as_task());
        // SAFETY: as above.
        unsafe { frames.push(&f3) };
        assert!(!frames.wanted());
        // Popping it frees the place too.
        assert!(!frames.pop(&f3));
        assert!(frames.wanted());
        // Shared frames were counted out when they were shared, not again when popped.
        assert!(frames.pop(&f2));
        assert!(frames.pop(&f1));
        assert_eq!(frames.private.get(), 0);
        assert!(frames.share_oldest().is_none());
    }
}
