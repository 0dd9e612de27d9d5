//! The coordinated switching protocol: how the threads of a slot are stopped and resumed
//! together, how asat-gang's stop signals are told from anyone else's, and why none of it can
//! deadlock.
//!
//! # State
//!
//! Every cell of the matrix (slot `s`, column `c`) has a `CellCtl` with a state word: `BOUND`
//! while a thread is bound to it, plus `PARKED` (the thread is stopped), `IDLE` (the thread
//! declared itself blocked or idle: it is not runnable and is not signalled), `SIGNALED` (a stop
//! signal is on its way), `KILLING` (the scheduler is inside the system call that sends it),
//! `CLAIMING` (a thread is binding itself to the cell) and, with `IDLE`, `ORPHAN` (the cell's
//! gang was dropped while its thread was still bound: that thread is never stopped again, and
//! the cell stays reserved in the matrix, given to no new gang, until the thread leaves). Every
//! slot has a word `run` (1 while the slot runs), a futex word `epoch` that moves whenever its
//! parked threads have something new to look at, and a count of its runnable threads. A thread
//! finds its cell through a thread-local binding (`crate::binding`).
//!
//! # A switch from slot A to slot B (scheduler thread)
//!
//! 0. Query the stop signal's action (`sigaction`): if the handler is no longer asat-gang's
//!    (see [Signals](#signals)), count the switch in `handler_replaced` and send no signal in
//!    step 2.
//! 1. `A.run = 0` (`SeqCst`).
//! 2. For each cell of A that is `BOUND` and neither `PARKED`, `IDLE` nor already `SIGNALED`:
//!    CAS in `SIGNALED | KILLING`, queue the stop signal to the thread (`rt_tgsigqueueinfo`),
//!    clear `KILLING` (and `SIGNALED` too if that failed, so that a later switch signals the
//!    thread again). The broadcast time is taken before the first signal.
//! 3. Wait (futex on the `ack` word, with a short timeout as a safety net) until every cell of
//!    A is unbound, `PARKED` or `IDLE`. The switch's stop time is the last `PARKED` timestamp
//!    minus the broadcast time. After `stop_timeout` the scheduler gives up waiting and counts
//!    a late stop (a thread that blocks the signal for that long, or that no signal reached).
//! 4. `B.run = 1`, then bump `B.epoch` and futex-wake every thread sleeping on it.
//!
//! # How a thread stops
//!
//! A thread parks (`park_if_stopped`) by stamping its cell, setting `PARKED`, bumping and
//! waking `ack`, and then, in a loop, reading its slot's `epoch`, then `run` and its cell's
//! `ORPHAN`, and futex-waiting on `epoch` while it still holds the value read, until `run` is 1
//! or the cell is orphaned. Then it clears `PARKED` and reads `run` again: a slot stopped again
//! in between saw the thread parked and sent it no signal, so the thread parks again. An `IDLE`
//! thread never parks (it parks when it leaves the idle state, if its slot is stopped then). It
//! gets there from:
//!
//! - the signal handler (`on_stop_signal`), unless the thread is inside a
//!   [`preempt_off`](crate::preempt_off) section: then the handler only records a pending stop,
//!   which the thread takes when the outermost section ends (counted as a deferred stop);
//! - a cooperative safe point ([`safe_point`](crate::safe_point), called by the asat-core
//!   runtime at chunk boundaries and before barriers), which costs one load when the slot runs;
//! - joining a gang, or leaving an idle/blocking section, while its slot is stopped.
//!
//! Both sides follow "write mine, then read theirs" with `SeqCst`: a thread sets its state
//! (`BOUND`, clears `IDLE`) before it reads `run`; the scheduler stores `run = 0` before it
//! reads the states. So either the thread sees the stop and parks, or the scheduler sees a
//! runnable thread and signals it.
//!
//! A parked thread sleeps until something happens for it, with no timeout and no periodic
//! wake-up, and no wake-up is lost: whoever makes its condition true (`run = 1` when the slot
//! starts or the scheduler shuts down; `ORPHAN` when its gang is dropped) writes the condition
//! and then bumps `epoch`, both `SeqCst`, before waking. A thread that read the condition before
//! it was written had read `epoch` before that, so the bump comes after its read of `epoch`:
//! its futex wait either finds `epoch` moved and returns at once (the kernel compares the word
//! atomically with queueing the sleeper), or is queued already and is woken.
//!
//! The interleavings that broke earlier versions of this protocol (a thread woken just as its
//! slot is stopped again, a gang placed in a slot whose gangs were gone, a stop deferred as a
//! thread goes idle, a failed signal, a gang dropped under a parked thread, a stop signal sent
//! as its thread enters a blocking call, an orphaned thread leaving a blocking call) are
//! regression tests in `tests/inject`, which widens each window with a pause injected at its
//! place (compiled only under `--cfg asat_inject`).
//!
//! # Signals
//!
//! The stop signal (`SIGRTMIN + 6` by default) is a real-time signal: its instances queue, none
//! is merged or lost. The scheduler sends it to one thread with `rt_tgsigqueueinfo`, as
//! `pthread_sigqueue` does: `si_code = SI_QUEUE`, `si_pid` the scheduler's process, and
//! `si_value` a token drawn at random when the scheduler is built. The handler is installed
//! with `SA_SIGINFO` and acts only on a signal whose code, sender and value match the scheduler
//! of the thread that receives it. Any other signal of that number (a `pthread_kill` or `tgkill`
//! from a thread of the process, `kill` or `sigqueue` from anywhere) is ignored, and counted in
//! `ignored_signals` if the receiving thread is bound. It is not chained to another handler:
//! [`build`](crate::GangSchedulerBuilder::build) refuses a signal that already has one, so
//! there is none to chain to, and the default action of a real-time signal, ending the
//! process, is what nobody sending a stray signal wants. An ignored signal still interrupts the
//! system call its thread was in, as any handled signal does (see
//! [Blocking calls](#blocking-calls)).
//!
//! A handler installed after the scheduler's replaces it. Signals sent then would run that
//! handler, or end the process if the default action was restored, and no thread would stop
//! (every switch waiting out `stop_timeout`). Hence step 0: a switch that finds another action
//! sends no signal (the outgoing threads stop at safe points, or the switch is late), and the
//! scheduler records that the handler was lost. From then on, [`GangScheduler::gang`], building
//! a runtime with the policy and [`Gang::join`] query the action themselves (`gang` and `join`
//! always do) and fail with an error that names the signal, until asat-gang's handler is back.
//! The check and the sends are not atomic: a handler replaced between them gets that one
//! switch's signals.
//!
//! [`GangScheduler::gang`]: crate::GangScheduler::gang
//! [`Gang::join`]: crate::Gang::join
//!
//! # Blocking calls
//!
//! The handler is installed with `SA_RESTART`, so a thread stopped inside a call the kernel
//! restarts (`read` on a pipe, `write`, `wait`, `flock`, ...) resumes it when its slot runs
//! again. Calls the kernel never restarts after a handler (the list is in the crate docs:
//! `poll`, `epoll_wait`, `nanosleep`, ...) return `EINTR` instead. [`blocking`](crate::blocking)
//! keeps them from it: it sets `IDLE`, then blocks the stop signal in the thread until the call
//! returns. `IDLE` keeps switches from signalling the thread (step 2) or waiting for it (step 3
//! counts it stopped); the mask holds back the one signal `IDLE` cannot stop, that of a switch
//! whose step 2 CAS came before the thread set `IDLE` and whose send comes after (and foreign
//! signals). A held signal stays pending and is delivered on the way out, when the stop signal
//! is unblocked first, while the thread is still idle: the handler finds `IDLE` and returns.
//! Then `IDLE` is cleared, and the thread parks if its slot is stopped.
//!
//! # Fork
//!
//! A child made by `fork()` has one thread, the one that forked, and no scheduler thread. A
//! `pthread_atfork` child handler (registered when the first scheduler is built) unbinds that
//! thread and moves a process generation that every scheduler compares with the one it was
//! built in. In the child the thread is no longer a gang member
//! ([`safe_point`](crate::safe_point), [`blocking`](crate::blocking) and a pending stop of
//! [`preempt_off`](crate::preempt_off) do nothing), the parent's schedulers refuse new gangs
//! and joins, and dropping their copies of a scheduler or a gang does nothing (there is no
//! thread to join, and their locks may be held by threads the child does not have). A raw
//! `clone` that skips the atfork handlers gets none of this.
//!
//! # The handler is async-signal-safe
//!
//! It reads const-initialized thread-locals, does atomic operations, `clock_gettime` and futex
//! system calls, and saves and restores `errno`. It never allocates, locks or panics.
//!
//! # Why a stopped thread holding a lock cannot deadlock the process
//!
//! A thread may be stopped anywhere, including inside `malloc` with an arena lock held, or in
//! `println!` with the stdout lock held. Other threads that want that lock wait. This is safe
//! because of two rules:
//!
//! 1. **The scheduler thread, the only party every stopped thread depends on, takes no lock and
//!    never allocates while scheduling.** Its loop uses atomics, futexes, the clock, a
//!    `sigaction` query and `rt_tgsigqueueinfo` (system calls that take no user-space lock). It
//!    never touches the matrix's mutex: slot usage is mirrored in per-slot atomic counters. So
//!    rotation always goes on, and a stopped lock holder runs again within one round and
//!    releases the lock; its waiters lose at most their quantum. A waiter that is itself a gang
//!    thread is stopped by the signal like any other (a futex wait is interruptible), so
//!    switches are never held up by it.
//! 2. **A stop is deferred only inside sections that never wait for another thread:** the
//!    crate's own bookkeeping (binding, idle marking) and user sections marked with
//!    `preempt_off`. If such a section waited for a lock held by a stopped thread, the switch
//!    that would resume the holder would wait for the section: that is the one deadlock this
//!    design admits, so `preempt_off` sections must not block, allocate, or take locks (see
//!    its docs). The scheduler's `stop_timeout` turns such a mistake into a counted late stop
//!    instead of a hang. (A `blocking` call is no such section: its thread counts as stopped.)
//!
//! Deferring stops around every `malloc` (for instance with a wrapping global allocator) would
//! not be enough anyway (C code calls `malloc` directly) and is not needed: the test
//! `heavy_allocation_under_a_1ms_quantum_does_not_deadlock` allocates and frees across gangs
//! under a 1 ms quantum for seconds.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::shared::{CellCtl, BOUND, IDLE, KILLING, NO_SLOT, ORPHAN, PARKED, SIGNALED};
pub(crate) use crate::shared::{Config, Shared};
use crate::{binding, sys};

impl Shared {
    /// Stops every runnable thread of `from` (steps 0-3 of the protocol). Called by the
    /// scheduler thread only. Allocation-free and lock-free. Returns when the last thread that
    /// parked for this stop did (`CLOCK_MONOTONIC` ns), if any did.
    pub(crate) fn stop_slot(&self, from: usize) -> Option<u64> {
        let slot = &self.slots[from];
        let signals = self.check_handler();
        if !signals {
            self.stats.handler_replaced.fetch_add(1, Ordering::Relaxed);
        }
        slot.run.store(0, Ordering::SeqCst);
        let t0 = sys::now_ns();
        let mut signalled = 0u64;
        // With another handler installed, no signal (step 0).
        let to_signal = if signals { &slot.cells[..] } else { &[] };
        for cell in to_signal {
            loop {
                let st = cell.state.load(Ordering::SeqCst);
                if st & BOUND == 0 || st & (PARKED | IDLE | SIGNALED) != 0 {
                    break;
                }
                if cell
                    .state
                    .compare_exchange(
                        st,
                        st | SIGNALED | KILLING,
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    )
                    .is_ok()
                {
                    // The cell is BOUND with KILLING set, and `leave` waits for KILLING to
                    // clear before the thread may leave the cell (and so exit): `tid` is the
                    // bound thread's, alive during the call.
                    let tid = cell.tid.load(Ordering::Relaxed);
                    if send(self.pid, tid, self.signal, self.uid, self.token) {
                        signalled += 1;
                        cell.state.fetch_and(!KILLING, Ordering::SeqCst);
                    } else {
                        // No signal is on its way (the queue of real-time signals is full):
                        // clear SIGNALED too, or no later switch would signal this thread.
                        cell.state
                            .fetch_and(!(KILLING | SIGNALED), Ordering::SeqCst);
                    }
                    break;
                }
            }
        }
        self.stats.signals.fetch_add(signalled, Ordering::Relaxed);
        let deadline = t0 + self.stop_timeout.as_nanos() as u64;
        let stopped = |c: &CellCtl| {
            let st = c.state.load(Ordering::SeqCst);
            st & BOUND == 0 || st & (PARKED | IDLE) != 0
        };
        loop {
            let seen = self.ack.load(Ordering::SeqCst);
            if slot.cells.iter().all(stopped) {
                break;
            }
            if sys::now_ns() > deadline {
                self.stats.late_stops.fetch_add(1, Ordering::Relaxed);
                break;
            }
            sys::futex_wait(&self.ack, seen, Some(Duration::from_micros(200)));
        }
        let last = slot
            .cells
            .iter()
            .filter(|c| c.state.load(Ordering::Relaxed) & PARKED != 0)
            .map(|c| c.stopped_ns.load(Ordering::Relaxed))
            .filter(|&t| t >= t0)
            .max();
        if let Some(last) = last {
            let ns = last - t0;
            self.stats.timed_switches.fetch_add(1, Ordering::Relaxed);
            self.stats.stop_ns_total.fetch_add(ns, Ordering::Relaxed);
            self.stats.stop_ns_max.fetch_max(ns, Ordering::Relaxed);
        }
        last
    }

    /// Lets the threads of `to` run (step 4).
    pub(crate) fn start_slot(&self, to: usize) {
        let slot = &self.slots[to];
        self.current.store(to, Ordering::SeqCst);
        slot.run.store(1, Ordering::SeqCst);
        slot.wake_parked();
    }

    /// Lets every thread run (the scheduler is shutting down).
    pub(crate) fn release_all(&self) {
        self.current.store(NO_SLOT, Ordering::SeqCst);
        for slot in self.slots.iter() {
            slot.run.store(1, Ordering::SeqCst);
            slot.wake_parked();
        }
    }
}

/// Why a thread parks (for the counters).
#[derive(Clone, Copy)]
pub(crate) enum Cause {
    Signal,
    SafePoint,
    Deferred,
    Join,
}

/// Parks the calling thread while its slot is stopped. Async-signal-safe.
///
/// An idle thread never parks here (it is not runnable, and the scheduler need not resume its
/// slot soon): a stop deferred just as the thread went idle is dropped, and the thread parks,
/// if its slot is stopped, when it leaves the idle state.
pub(crate) fn park_if_stopped(shared: &Shared, slot: usize, col: usize, cause: Cause) -> bool {
    let s = &shared.slots[slot];
    if s.run.load(Ordering::SeqCst) != 0 {
        return false;
    }
    let cell = &s.cells[col];
    if cell.state.load(Ordering::SeqCst) & IDLE != 0 {
        return false;
    }
    let counter = match cause {
        Cause::Signal => Some(&shared.stats.signal_stops),
        Cause::SafePoint => Some(&shared.stats.cooperative_stops),
        Cause::Deferred | Cause::Join => None,
    };
    if let Some(c) = counter {
        c.fetch_add(1, Ordering::Relaxed);
    }
    let go_on =
        || s.run.load(Ordering::SeqCst) != 0 || cell.state.load(Ordering::SeqCst) & ORPHAN != 0;
    loop {
        cell.stopped_ns.store(sys::now_ns(), Ordering::Relaxed);
        cell.state.fetch_or(PARKED, Ordering::SeqCst);
        shared.ack.fetch_add(1, Ordering::SeqCst);
        sys::futex_wake(&shared.ack, 1);
        loop {
            // The epoch first, then the condition: a change made after this read of the
            // condition moves the epoch after this read of it (module docs).
            let epoch = s.epoch.load(Ordering::SeqCst);
            if go_on() {
                break;
            }
            #[cfg(asat_inject)]
            crate::inject::pause(crate::inject::Point::ParkWait);
            sys::futex_wait(&s.epoch, epoch, None);
        }
        #[cfg(asat_inject)]
        crate::inject::pause(crate::inject::Point::ParkWoken);
        // Clear PARKED, then look at `run` again (both SeqCst, against the scheduler's
        // `run = 0`, then its read of the state): a slot stopped again before PARKED was
        // cleared found this thread parked and sent no signal, so it must park again here.
        cell.state.fetch_and(!PARKED, Ordering::SeqCst);
        if go_on() {
            return true;
        }
    }
}

/// Queues the stop signal for thread `tid` ([`sys::queue_signal`]); with injected faults,
/// after the test's pause before it, and failing where the test says.
fn send(
    pid: libc::pid_t,
    tid: libc::pid_t,
    sig: libc::c_int,
    uid: libc::uid_t,
    token: usize,
) -> bool {
    #[cfg(asat_inject)]
    if crate::inject::before_kill(tid) {
        return false;
    }
    sys::queue_signal(pid, tid, sig, uid, token)
}

/// The stop signal's handler, after `sys` has read who sent the signal. Async-signal-safe:
/// see the module docs.
pub(crate) fn on_stop_signal(from: sys::Sender) {
    let Some((shared, slot, col)) = binding::binding() else {
        return;
    };
    if !shared.sent_by_us(from) {
        shared.stats.ignored_signals.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let cell = &shared.slots[slot].cells[col];
    let st = cell.state.fetch_and(!SIGNALED, Ordering::SeqCst);
    if st & IDLE != 0 {
        return;
    }
    if binding::preempted() {
        binding::defer_stop();
        shared.stats.deferred_stops.fetch_add(1, Ordering::Relaxed);
        return;
    }
    park_if_stopped(shared, slot, col, Cause::Signal);
}

/// Called as a gang is dropped, for its cells (`cols` of `slot`), with the matrix locked: a
/// thread still bound to one (its `Member` was forgotten) is marked `IDLE | ORPHAN`, so it is
/// never stopped again, and a parked one resumes. Returns the columns so marked: the caller
/// keeps them reserved in the matrix, and each thread frees its own when it leaves.
pub(crate) fn orphan(shared: &Shared, slot: usize, cols: &[usize]) -> Vec<usize> {
    let s = &shared.slots[slot];
    let mut kept = Vec::new();
    for &c in cols {
        let cell = &s.cells[c];
        let mut st = cell.state.load(Ordering::SeqCst);
        while st & BOUND != 0 && st & ORPHAN == 0 {
            match cell.state.compare_exchange(
                st,
                st | IDLE | ORPHAN,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => {
                    if st & IDLE == 0 {
                        shared.runnable_dec(slot);
                    }
                    kept.push(c);
                    break;
                }
                Err(now) => st = now,
            }
        }
    }
    if !kept.is_empty() {
        s.wake_parked();
    }
    kept
}
