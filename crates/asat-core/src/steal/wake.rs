//! Waking threads for work: the number of threads that take tasks, a thread's mail, tasks
//! pushed from inside or outside the pool, and the wake-ups that follow each (see the module
//! docs of `steal`, "Sleep").

use super::ctx;
use super::job::TaskRef;
use crate::runtime::Inner;
use crate::sync::Ordering;
use crate::Runtime;

impl Inner {
    /// Sets how many threads may take tasks, waking the workers a rise lets in (module docs,
    /// "How many threads take tasks").
    pub(crate) fn set_task_workers(&self, n: usize) {
        let (old, new) = self.tasks().set_active(n);
        for i in old..new {
            self.idle_event(i).notify_sleepers();
        }
    }

    /// Puts `t` in thread `index`'s mail, for it alone to run, and wakes it if it sleeps.
    pub(crate) fn mail(&self, index: usize, t: TaskRef) {
        self.tasks().mail[index].push(t);
        self.idle_event(index).notify_sleepers();
    }

    /// Pushes `t` where the threads of the runtime find it: on the calling thread's deque
    /// when it runs tasks of this runtime, else in the injector (any worker takes it); and
    /// wakes a thread for it.
    pub(crate) fn push_task(&self, rt: &Runtime, t: TaskRef) {
        ctx::with(|c| match c {
            Some(c) if c.rt.id() == rt.id() => {
                c.deque.push(t);
                self.tasks_notify();
            }
            _ => {
                self.tasks().injector.push(t);
                self.calls_notify();
            }
        })
    }

    /// Wakes one sleeping worker after a call was handed in through the injector: any worker
    /// takes calls (see [`Ctx::takes_calls`](super::Ctx::takes_calls)). A searcher awake is
    /// no reason to skip the wake, as it is for a shared frame: it may be index 0's holder,
    /// which takes no calls.
    pub(crate) fn calls_notify(&self) {
        let tasks = self.tasks();
        crate::sync::fence_seq_cst();
        let n = self.max_threads;
        let start = tasks.next_wake.fetch_add(1, Ordering::Relaxed);
        for k in 0..n {
            let i = (start + k) % n;
            let ev = self.idle_event(i);
            if i != 0 && ev.has_sleepers() {
                ev.notify_sleepers();
                return;
            }
        }
    }

    /// Wakes one sleeping thread that may take tasks, unless a searcher is awake: called after
    /// a task was pushed on a deque.
    pub(crate) fn tasks_notify(&self) {
        self.wake_sleeper(0);
    }

    /// Wakes one sleeping thread that may take tasks, unless more than `shared` searchers are
    /// awake (they take the first `shared` frames pushed): called after a push.
    pub(super) fn wake_sleeper(&self, shared: usize) {
        let tasks = self.tasks();
        crate::sync::fence_seq_cst();
        if tasks.searching.load(Ordering::SeqCst) > shared
            || tasks.sleeping.load(Ordering::SeqCst) == 0
        {
            return;
        }
        let n = tasks.active();
        let start = tasks.next_wake.fetch_add(1, Ordering::Relaxed);
        for k in 0..n {
            let ev = self.idle_event((start + k) % n);
            if ev.has_sleepers() {
                ev.notify_sleepers();
                return;
            }
        }
    }
}
