//! The simulated machine: `P` CPUs time-shared among threads, as a discrete-event model of a
//! Linux-like scheduler.
//!
//! - Each CPU runs one thread and keeps a run queue; a thread runs for at most a time slice
//!   (0.75x to 1.25x the configured one, drawn at each dispatch: the CPUs' rotations drift
//!   apart, as a kernel's do with its ticks and wake-ups) while others wait, then goes to the
//!   back of the queue (round robin: each runnable thread of a CPU gets an equal share of it).
//! - A thread that wakes (after the wake-up latency) goes to an idle CPU if there is one (its
//!   previous CPU first), else to the shorter queue of its previous CPU and one chosen at
//!   random (the periodic load balancer, in one step), at the front: the woken thread runs
//!   once the current one has had the wake-up granularity (a sleeper's credit).
//! - A CPU that runs out of work steals the tail of the longest queue (new-idle balancing).
//! - A thread's activity is CPU work, a spin (CPU time, then the driver blocks it), or forever
//!   (a CPU hog). The driver learns when an activity ends and when a thread gets a CPU.
//! - The pressure integrals follow Linux's system-wide PSI `some`: time in which a CPU had a
//!   waiting thread, over time in which CPUs were busy.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Simulated time, in nanoseconds.
pub(super) type Ns = u64;
/// A thread's number.
pub(super) type Tid = usize;

/// What a thread does while it has a CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Doing {
    /// CPU work, this much left.
    Work(Ns),
    /// Spinning, this much CPU time left before the driver blocks it.
    Spin(Ns),
    /// A CPU hog.
    Forever,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Running(usize),
    Queued(usize),
    Blocked,
    Waking,
    Gone,
}

#[derive(Debug)]
struct Thread {
    at: At,
    doing: Doing,
    prev_cpu: usize,
    /// CPU time, and time spent queued for a CPU (the kernel's `schedstat` run and delay).
    run_ns: u64,
    wait_ns: u64,
    queued_since: Ns,
}

#[derive(Debug, Default)]
struct Cpu {
    current: Option<Tid>,
    /// When `current` was last accounted (its activity reduced up to here).
    since: Ns,
    /// When `current` got this CPU.
    dispatched: Ns,
    slice_end: Ns,
    queue: VecDeque<Tid>,
    /// Invalidates the CPU's pending event when its plan changes.
    gen: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Cpu { cpu: usize, gen: u64 },
    Wake { tid: Tid },
    Timer { token: u64 },
}

/// What the driver must handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Note {
    /// A running thread's work or spin is used up.
    Done(Tid),
    /// A thread got a CPU.
    OnCpu(Tid),
    /// A timer the driver set.
    Timer(u64),
}

/// The scheduler's parameters.
#[derive(Clone, Copy, Debug)]
pub(super) struct Params {
    pub processors: usize,
    pub slice: Ns,
    pub wakeup_granularity: Ns,
}

/// The machine.
#[derive(Debug)]
pub(super) struct Engine {
    p: Params,
    now: Ns,
    cpus: Vec<Cpu>,
    threads: Vec<Thread>,
    events: BinaryHeap<Reverse<(Ns, u64, Ev)>>,
    seq: u64,
    rng: StdRng,
    busy: usize,
    waiting_cpus: usize,
    queued: usize,
    busy_ns: u128,
    some_ns: u128,
    /// Notes produced by driver calls (a thread dispatched when another blocked), handed out
    /// by the next [`next`](Engine::next) before any event.
    pending: VecDeque<Note>,
}

impl Engine {
    pub(super) fn new(p: Params, seed: u64) -> Self {
        Engine {
            cpus: (0..p.processors).map(|_| Cpu::default()).collect(),
            p,
            now: 0,
            threads: Vec::new(),
            events: BinaryHeap::new(),
            seq: 0,
            rng: StdRng::seed_from_u64(seed),
            busy: 0,
            waiting_cpus: 0,
            queued: 0,
            busy_ns: 0,
            some_ns: 0,
            pending: VecDeque::new(),
        }
    }

    pub(super) fn now(&self) -> Ns {
        self.now
    }

    /// Busy CPU time and time with a waiting thread, summed over CPUs, so far.
    pub(super) fn pressure_integrals(&self) -> (u128, u128) {
        (self.busy_ns, self.some_ns)
    }

    /// A time slice: 0.75x to 1.25x the configured one, drawn per dispatch, so that the
    /// CPUs' rotations do not stay in step (equal slices started together would gang-schedule
    /// a job whose threads share the CPUs with another's, which no kernel does on purpose).
    fn slice(&mut self) -> Ns {
        (self.p.slice as f64 * (0.75 + 0.5 * self.uniform())) as Ns
    }

    /// A uniform random number in `[0, 1)` from the machine's stream.
    pub(super) fn uniform(&mut self) -> f64 {
        self.rng.random_range(0.0..1.0)
    }

    fn push(&mut self, at: Ns, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((at, self.seq, ev)));
    }

    /// A timer: [`Note::Timer`] with `token` at `at`.
    pub(super) fn timer(&mut self, at: Ns, token: u64) {
        self.push(at.max(self.now), Ev::Timer { token });
    }

    /// A new thread, runnable at once (placed as a woken thread).
    pub(super) fn spawn(&mut self, doing: Doing) -> Tid {
        let tid = self.threads.len();
        let prev_cpu = self.rng.random_range(0..self.p.processors);
        self.threads.push(Thread {
            at: At::Waking,
            doing,
            prev_cpu,
            run_ns: 0,
            wait_ns: 0,
            queued_since: 0,
        });
        if let Some(n) = self.place(tid) {
            self.pending.push_back(n);
        }
        tid
    }

    /// A thread's CPU time and run-queue wait so far.
    pub(super) fn times(&self, tid: Tid) -> (u64, u64) {
        let t = &self.threads[tid];
        let mut run = t.run_ns;
        let mut wait = t.wait_ns;
        match t.at {
            At::Running(cpu) => run += self.now.saturating_sub(self.cpus[cpu].since),
            At::Queued(_) => wait += self.now.saturating_sub(t.queued_since),
            _ => {}
        }
        (run, wait)
    }

    pub(super) fn is_running(&self, tid: Tid) -> bool {
        matches!(self.threads[tid].at, At::Running(_))
    }

    pub(super) fn is_blocked(&self, tid: Tid) -> bool {
        self.threads[tid].at == At::Blocked
    }

    /// Sets what a thread does (a running thread's CPU event is re-planned).
    pub(super) fn set(&mut self, tid: Tid, doing: Doing) {
        if let At::Running(cpu) = self.threads[tid].at {
            self.account(cpu);
            self.threads[tid].doing = doing;
            self.arm(cpu);
        } else {
            self.threads[tid].doing = doing;
        }
    }

    /// Wakes a blocked thread after `latency`.
    pub(super) fn wake(&mut self, tid: Tid, latency: Ns) {
        if self.threads[tid].at == At::Blocked {
            self.threads[tid].at = At::Waking;
            self.push(self.now + latency, Ev::Wake { tid });
        }
    }

    /// Blocks a running or queued thread.
    pub(super) fn block(&mut self, tid: Tid) {
        self.leave(tid, At::Blocked);
    }

    /// Removes a thread for good.
    pub(super) fn exit(&mut self, tid: Tid) {
        self.leave(tid, At::Gone);
    }

    fn leave(&mut self, tid: Tid, to: At) {
        match self.threads[tid].at {
            At::Running(cpu) => {
                self.account(cpu);
                self.threads[tid].at = to;
                self.set_current(cpu, None);
                self.dispatch_next(cpu);
            }
            At::Queued(cpu) => {
                let q = &mut self.cpus[cpu].queue;
                if let Some(i) = q.iter().position(|&t| t == tid) {
                    q.remove(i);
                }
                self.queue_changed(cpu, -1);
                self.dequeued(tid);
                self.threads[tid].at = to;
            }
            At::Waking if to == At::Gone => self.threads[tid].at = to,
            _ => {}
        }
    }

    /// Advances to the next thing the driver must handle (`None`: nothing left before `until`).
    pub(super) fn next(&mut self, until: Ns) -> Option<Note> {
        if let Some(n) = self.pending.pop_front() {
            return Some(n);
        }
        loop {
            let &Reverse((at, _, ev)) = self.events.peek()?;
            if at > until {
                return None;
            }
            self.events.pop();
            self.advance(at);
            match ev {
                Ev::Timer { token } => return Some(Note::Timer(token)),
                Ev::Wake { tid } => {
                    if self.threads[tid].at == At::Waking {
                        if let Some(n) = self.place(tid) {
                            return Some(n);
                        }
                    }
                }
                Ev::Cpu { cpu, gen } => {
                    if gen == self.cpus[cpu].gen {
                        if let Some(n) = self.cpu_event(cpu) {
                            return Some(n);
                        }
                    }
                }
            }
        }
    }

    fn advance(&mut self, at: Ns) {
        let dt = u128::from(at.saturating_sub(self.now));
        self.busy_ns += dt * self.busy as u128;
        self.some_ns += dt * self.waiting_cpus as u128;
        self.now = self.now.max(at);
    }

    /// The current thread's activity ended, or its slice.
    fn cpu_event(&mut self, cpu: usize) -> Option<Note> {
        let tid = self.cpus[cpu].current?;
        self.account(cpu);
        match self.threads[tid].doing {
            Doing::Work(0) | Doing::Spin(0) => {
                // The driver decides; until then the thread keeps the CPU.
                self.cpus[cpu].gen += 1;
                Some(Note::Done(tid))
            }
            _ => {
                if let Some(next) = self.pop_queue(cpu) {
                    // Slice over: to the back of the queue.
                    self.enqueue(cpu, tid, false);
                    self.run_on(cpu, next);
                    Some(Note::OnCpu(next))
                } else {
                    let slice = self.slice();
                    let c = &mut self.cpus[cpu];
                    c.slice_end = self.now + slice;
                    self.arm(cpu);
                    None
                }
            }
        }
    }

    /// Reduces the current thread's activity by the CPU time since it was last accounted.
    fn account(&mut self, cpu: usize) {
        let c = &mut self.cpus[cpu];
        let ran = self.now.saturating_sub(c.since);
        c.since = self.now;
        if let Some(tid) = c.current {
            let t = &mut self.threads[tid];
            t.run_ns += ran;
            t.doing = match t.doing {
                Doing::Work(w) => Doing::Work(w.saturating_sub(ran)),
                Doing::Spin(s) => Doing::Spin(s.saturating_sub(ran)),
                Doing::Forever => Doing::Forever,
            };
        }
    }

    /// Plans the CPU's next event: the end of the activity or of the slice.
    fn arm(&mut self, cpu: usize) {
        let Some(tid) = self.cpus[cpu].current else {
            return;
        };
        let left = match self.threads[tid].doing {
            Doing::Work(w) | Doing::Spin(w) => Some(w),
            Doing::Forever => None,
        };
        let c = &mut self.cpus[cpu];
        c.gen += 1;
        let gen = c.gen;
        let end = left.map_or(c.slice_end, |l| (self.now + l).min(c.slice_end));
        // Alone on the CPU, a hog needs no event until a thread is queued behind it.
        if left.is_none() && c.queue.is_empty() {
            return;
        }
        self.push(end.max(self.now), Ev::Cpu { cpu, gen });
    }

    /// A runnable thread: onto an idle CPU, else into a queue.
    fn place(&mut self, tid: Tid) -> Option<Note> {
        let prev = self.threads[tid].prev_cpu;
        let idle = if self.cpus[prev].current.is_none() {
            Some(prev)
        } else if self.busy < self.p.processors {
            (0..self.p.processors)
                .map(|k| (prev + k) % self.p.processors)
                .find(|&c| self.cpus[c].current.is_none())
        } else {
            None
        };
        if let Some(cpu) = idle {
            self.run_on(cpu, tid);
            return Some(Note::OnCpu(tid));
        }
        let other = self.rng.random_range(0..self.p.processors);
        let cpu = if self.cpus[other].queue.len() < self.cpus[prev].queue.len() {
            other
        } else {
            prev
        };
        self.enqueue(cpu, tid, true);
        // The current thread keeps the CPU to the end of its slice (slices renew from its
        // dispatch while it ran alone), or for the wake-up granularity if that is shorter.
        self.account(cpu);
        let (now, slice) = (self.now, self.p.slice.max(1));
        let c = &mut self.cpus[cpu];
        let ran = now.saturating_sub(c.dispatched);
        let slice_end = c.dispatched + ran.div_ceil(slice).max(1) * slice;
        c.slice_end = slice_end.min((c.dispatched + self.p.wakeup_granularity).max(now));
        self.arm(cpu);
        None
    }

    fn run_on(&mut self, cpu: usize, tid: Tid) {
        self.threads[tid].at = At::Running(cpu);
        self.threads[tid].prev_cpu = cpu;
        self.set_current(cpu, Some(tid));
        let slice = self.slice();
        let c = &mut self.cpus[cpu];
        c.since = self.now;
        c.dispatched = self.now;
        c.slice_end = self.now + slice;
        self.arm(cpu);
    }

    /// The CPU's next thread: its own queue, else the tail of the longest queue.
    fn dispatch_next(&mut self, cpu: usize) {
        if let Some(next) = self.pop_queue(cpu).or_else(|| self.steal()) {
            self.run_on(cpu, next);
            self.pending.push_back(Note::OnCpu(next));
        }
    }

    fn pop_queue(&mut self, cpu: usize) -> Option<Tid> {
        let t = self.cpus[cpu].queue.pop_front()?;
        self.queue_changed(cpu, -1);
        self.dequeued(t);
        Some(t)
    }

    fn enqueue(&mut self, cpu: usize, tid: Tid, front: bool) {
        let t = &mut self.threads[tid];
        t.at = At::Queued(cpu);
        t.queued_since = self.now;
        let q = &mut self.cpus[cpu].queue;
        if front {
            q.push_front(tid);
        } else {
            q.push_back(tid);
        }
        self.queue_changed(cpu, 1);
    }

    fn dequeued(&mut self, tid: Tid) {
        let t = &mut self.threads[tid];
        t.wait_ns += self.now.saturating_sub(t.queued_since);
    }

    fn steal(&mut self) -> Option<Tid> {
        if self.queued == 0 {
            return None;
        }
        let from = (0..self.p.processors).max_by_key(|&c| self.cpus[c].queue.len())?;
        let t = self.cpus[from].queue.pop_back()?;
        self.queue_changed(from, -1);
        self.dequeued(t);
        Some(t)
    }

    fn set_current(&mut self, cpu: usize, tid: Option<Tid>) {
        let was = self.cpus[cpu].current.is_some();
        self.cpus[cpu].current = tid;
        match (was, tid.is_some()) {
            (false, true) => self.busy += 1,
            (true, false) => self.busy -= 1,
            _ => {}
        }
    }

    fn queue_changed(&mut self, cpu: usize, delta: isize) {
        let len = self.cpus[cpu].queue.len();
        if delta > 0 {
            self.queued += 1;
            if len == 1 {
                self.waiting_cpus += 1;
            }
        } else {
            self.queued -= 1;
            if len == 0 {
                self.waiting_cpus -= 1;
            }
        }
    }
}
