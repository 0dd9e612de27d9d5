//! A thread's pending join frames: each `join`'s second half, kept on the joining thread's
//! stack and linked to the frame of the join it is inside, newest first.
//!
//! Only the thread whose `Ctx` holds the list touches it or its frames. A join links its frame
//! ([`Frames::push`]) and unlinks it ([`Frames::pop`]) before it returns or unwinds (its
//! unwinding guard pops it too), so the frames reachable from the top are alive, in the stack
//! frames of joins still running on this thread. Shared frames are the oldest ones: the bottom
//! of the list (see the `steal` module docs).

use std::cell::Cell;
use std::ptr;

use super::job::TaskRef;

/// One join's pending second half.
pub(super) struct Frame {
    task: TaskRef,
    below: *const Frame,
    shared: Cell<bool>,
}

/// The list, by its newest frame.
pub(super) struct Frames {
    top: Cell<*const Frame>,
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
        }
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
    }

    /// Unlinks `frame`, the top one; returns whether it was shared.
    #[inline]
    pub(super) fn pop(&self, frame: &Frame) -> bool {
        debug_assert!(ptr::eq(self.top.get(), frame));
        self.top.set(frame.below);
        frame.shared.get()
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
            f.task
        })
    }
}
