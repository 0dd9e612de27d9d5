//! Work-shared loops: the `omp parallel for` family, built on regions.
//!
//! A loop runs as a region from a thread outside every parallel call while the runtime is
//! free. Nested in another call (made by a region's member or a task), or started while the
//! region lock or calls from other threads hold the runtime, it runs on the work-stealing
//! engine instead ([`Runtime::loops_on_tasks`], [`Runtime::fold_adaptive`]): chunks of at
//! most the schedule's chunk, split as threads of the pool look for work, results combined in
//! index order. So a nested loop uses the threads its outer call leaves idle and loops from
//! several threads share the workers, where a region would run inline with a team of one or
//! wait for the lock. The `_until` reductions keep to regions: a region's dynamic schedule
//! hands out the first chunks first, which a search for the first hit counts on.

use super::*;
use crate::PieceLen;

impl Runtime {
    /// Runs `f(i)` for every `i` in `range`, shared among a team by `schedule` (`omp parallel
    /// for`). Every index runs exactly once.
    pub fn parallel_for<F>(&self, range: Range<usize>, schedule: Schedule, f: F)
    where
        F: Fn(usize) + Sync,
    {
        self.parallel_for_chunks(range, schedule, move |r| r.for_each(&f));
    }

    /// Like [`parallel_for`](Runtime::parallel_for), but `f` gets whole chunks (sub-ranges) so
    /// that its loop can be vectorized.
    pub fn parallel_for_chunks<F>(&self, range: Range<usize>, schedule: Schedule, f: F)
    where
        F: Fn(Range<usize>) + Sync,
    {
        self.chunks_region(range, schedule, f, || false);
    }

    /// Like [`parallel_for_chunks`](Runtime::parallel_for_chunks), but a member takes no more
    /// chunks once `stop()` is true (OpenMP's `cancel for`; see
    /// [`Team::for_chunks_until`]): the indices of chunks nobody took then do not run. A
    /// search stops this way once it has its answer, instead of being handed every chunk left.
    pub fn parallel_for_chunks_until<F, S>(
        &self,
        range: Range<usize>,
        schedule: Schedule,
        f: F,
        stop: S,
    ) where
        F: Fn(Range<usize>) + Sync,
        S: Fn() -> bool + Sync,
    {
        self.chunks_region(range, schedule, f, &stop);
    }

    /// The region of [`parallel_for_chunks_until`](Runtime::parallel_for_chunks_until), `stop`
    /// by value: `parallel_for_chunks`'s, which never stops, takes no room in the body and
    /// passes no argument (a reference to it would cost both, on every call).
    fn chunks_region<F, S>(&self, range: Range<usize>, schedule: Schedule, f: F, stop: S)
    where
        F: Fn(Range<usize>) + Sync,
        S: Fn() -> bool + Sync + Copy,
    {
        if range.is_empty() {
            return;
        }
        if self.loops_on_tasks() {
            return self.chunks_on_tasks(range, schedule, &f, stop);
        }
        let shape = Shape::loop_with(schedule);
        if self.inline_only() {
            let body = move |team: &Team<'_>| team.share(range.clone(), schedule, &f, stop);
            return self.run_inline(&body);
        }
        let Some(ctl) = self.loop_lock() else {
            return self.chunks_on_tasks(range, schedule, &f, stop);
        };
        // Everything the members need is moved into one closure object, so that a worker
        // reaches it with as few cache transfers from the starting thread's stack as it can.
        let body = move |team: &Team<'_>| team.share(range.clone(), schedule, &f, stop);
        self.run_locked(ctl, &body, shape, |_| ());
    }

    /// A loop of [`chunks_region`](Runtime::chunks_region) on the work-stealing engine (see
    /// [`Runtime::loops_on_tasks`]): chunks of at most the schedule's chunk, split as threads
    /// of the pool look for work.
    #[inline(never)]
    fn chunks_on_tasks<F, S>(&self, range: Range<usize>, schedule: Schedule, f: &F, stop: S)
    where
        F: Fn(Range<usize>) + Sync,
        S: Fn() -> bool + Sync,
    {
        let chunk = |(), r| f(r);
        let len = PieceLen::of(schedule);
        self.fold_adaptive(range, len, || (), chunk, |(), ()| (), |_| stop());
    }

    /// Splits `data` into chunks by `schedule` and runs `f(start, chunk)` on each, where
    /// `start` is the index of the chunk's first element in `data`.
    pub fn parallel_slice_mut<T, F>(&self, data: &mut [T], schedule: Schedule, f: F)
    where
        T: Send,
        F: Fn(usize, &mut [T]) + Sync,
    {
        let base = SlicePtr(data.as_mut_ptr());
        let len = data.len();
        self.parallel_for_chunks(0..len, schedule, move |r| {
            let base = &base;
            // SAFETY: `r` lies within `0..len`, the chunks handed out by a schedule are
            // disjoint, and `data` is mutably borrowed for the whole call, so this is the only
            // reference to these elements while `f` runs.
            let chunk = unsafe { std::slice::from_raw_parts_mut(base.0.add(r.start), r.len()) };
            f(r.start, chunk);
        });
    }

    /// A parallel reduction: each member folds the chunks it is handed into its own
    /// accumulator (starting from `identity()`), then the accumulators are combined in member
    /// order on the calling thread. Under [`Schedule::Static`] each member's chunk is one
    /// contiguous run and members are in index order, so with an associative `combine` the
    /// result equals the serial fold; under the other schedules a member's chunks are not
    /// contiguous, and `combine` must also be commutative for that.
    ///
    /// The members' results reach the calling thread through per-member slots the runtime
    /// keeps (a line each, no allocation) when a `T` fits in 96 bytes with an alignment of at
    /// most 16, else through slots allocated for the call. `combine` runs on the calling thread
    /// while it still holds the region (a region it starts runs inline).
    pub fn parallel_reduce<T, I, F, C>(
        &self,
        range: Range<usize>,
        schedule: Schedule,
        identity: I,
        fold: F,
        combine: C,
    ) -> T
    where
        T: Send,
        I: Fn() -> T + Sync,
        F: Fn(T, Range<usize>) -> T + Sync,
        C: Fn(T, T) -> T,
    {
        self.reduce_region(range, schedule, identity, fold, combine, || false, true)
    }

    /// Like [`parallel_reduce`](Runtime::parallel_reduce), but a member takes no more chunks
    /// once `stop()` is true (see
    /// [`parallel_for_chunks_until`](Runtime::parallel_for_chunks_until)): the result folds
    /// the chunks that were taken.
    pub fn parallel_reduce_until<T, I, F, C, S>(
        &self,
        range: Range<usize>,
        schedule: Schedule,
        identity: I,
        fold: F,
        combine: C,
        stop: S,
    ) -> T
    where
        T: Send,
        I: Fn() -> T + Sync,
        F: Fn(T, Range<usize>) -> T + Sync,
        C: Fn(T, T) -> T,
        S: Fn() -> bool + Sync,
    {
        self.reduce_region(range, schedule, identity, fold, combine, &stop, false)
    }

    /// The regions of [`parallel_reduce_until`](Runtime::parallel_reduce_until), `stop` by
    /// value (as for [`chunks_region`](Runtime::chunks_region)). `tasks`: the loop runs on
    /// tasks when nested or when the runtime is busy ([`Runtime::loops_on_tasks`]); not for a
    /// loop that stops, whose caller may count on the chunks taken being the first ones (a
    /// search for the first hit), as they are in a region's dynamic schedule and not on tasks.
    #[allow(clippy::too_many_arguments)]
    fn reduce_region<T, I, F, C, S>(
        &self,
        range: Range<usize>,
        schedule: Schedule,
        identity: I,
        fold: F,
        combine: C,
        stop: S,
        tasks: bool,
    ) -> T
    where
        T: Send,
        I: Fn() -> T + Sync,
        F: Fn(T, Range<usize>) -> T + Sync,
        C: Fn(T, T) -> T,
        S: Fn() -> bool + Sync + Copy,
    {
        if tasks && self.loops_on_tasks() {
            return self.reduce_on_tasks(range, schedule, &identity, &fold, combine, &stop);
        }
        let part = |team: &Team<'_>| {
            let acc = Cell::new(Some(identity()));
            let fold_chunk = |r| {
                if let Some(a) = acc.take() {
                    acc.set(Some(fold(a, r)));
                }
            };
            team.share(range.clone(), schedule, &fold_chunk, stop);
            acc.take()
        };
        let shape = Shape::loop_with(schedule);
        let lock = match (self.inline_only(), tasks) {
            (true, _) => None,
            (false, false) => self.wait_lock(),
            (false, true) => match self.loop_lock() {
                Some(ctl) => Some(ctl),
                None => {
                    return self.reduce_on_tasks(range, schedule, &identity, &fold, combine, &stop)
                }
            },
        };
        let Some(ctl) = lock else {
            // A team of one, on this thread: its one result needs no slots.
            let result = Mutex::new(None);
            self.run_inline(&|team: &Team<'_>| *result.lock() = part(team));
            return result.into_inner().unwrap_or_else(identity);
        };
        if Slots::fits::<T>() {
            let slots = &self.inner.reduce_slots;
            let body = |team: &Team<'_>| {
                if let Some(acc) = part(team) {
                    // SAFETY: `T` fits; this thread runs member `team.index()` of a region
                    // started by the holder of the region lock (the body only runs once the
                    // lock is taken; inline runs do not use the slots), which drains the slots
                    // as `T` after the join; the member puts once, at its end.
                    unsafe { slots.put(team.index(), acc) };
                }
            };
            let result = self.run_locked(ctl, &body, shape, |panicked| {
                // SAFETY: still holding the region lock, after the join of the region whose
                // members put `T`s. Dropping the drain (a panicking region, whose panic is
                // re-raised next, or a panicking `combine`) drops what is left.
                let results = unsafe { slots.drain::<T>(self.inner.max_threads) };
                if panicked {
                    return None;
                }
                results.reduce(&combine)
            });
            return result.unwrap_or_else(identity);
        }
        // A `T` too large for the slots: slots of its own for this call.
        let slots: Vec<CachePadded<Mutex<Option<T>>>> = (0..self.inner.max_threads)
            .map(|_| CachePadded::new(Mutex::new(None)))
            .collect();
        let body = |team: &Team<'_>| *slots[team.index()].lock() = part(team);
        self.run_locked(ctl, &body, shape, |_| ());
        slots
            .into_iter()
            .filter_map(|s| CachePadded::into_inner(s).into_inner())
            .reduce(combine)
            .unwrap_or_else(identity)
    }
}

impl Runtime {
    /// A reduction of [`reduce_region`](Runtime::reduce_region) on the work-stealing engine
    /// (see [`Runtime::loops_on_tasks`]): each part a thread folds keeps its result in a list
    /// (the parts' lists are joined in index order), and the results are combined in order
    /// on the calling thread, which `combine` (not `Sync`) asks for.
    #[inline(never)]
    fn reduce_on_tasks<T, I, F, C, S>(
        &self,
        range: Range<usize>,
        schedule: Schedule,
        identity: &I,
        fold: &F,
        combine: C,
        stop: &S,
    ) -> T
    where
        T: Send,
        I: Fn() -> T + Sync,
        F: Fn(T, Range<usize>) -> T + Sync,
        C: Fn(T, T) -> T,
        S: Fn() -> bool + Sync,
    {
        let fold_part = |mut parts: Vec<T>, r| {
            let acc = parts.pop().unwrap_or_else(identity);
            parts.push(fold(acc, r));
            parts
        };
        let join = |mut a: Vec<T>, mut b: Vec<T>| {
            a.append(&mut b);
            a
        };
        let len = PieceLen::of(schedule);
        let parts = self.fold_adaptive(range, len, Vec::new, fold_part, join, |_| stop());
        parts.into_iter().reduce(combine).unwrap_or_else(identity)
    }
}

/// A raw slice base pointer that may be shared: see the SAFETY argument where it is used.
struct SlicePtr<T>(*mut T);
// SAFETY: the pointer is only used to build disjoint sub-slices, one per chunk, of a slice that
// is mutably borrowed for the whole region, and `T: Send` lets the elements move to workers.
unsafe impl<T: Send> Sync for SlicePtr<T> {}
