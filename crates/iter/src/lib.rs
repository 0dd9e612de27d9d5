//! asat-iter: parallel iterators with rayon's names and semantics, on the asat runtime.
//!
//! A rayon program of the usual data-parallel kind moves to asat by changing its
//! `use rayon::...` lines and `rayon::` paths to `asat::` (and its Cargo dependency):
//!
//! ```
//! use asat_iter::prelude::*;
//!
//! let v: Vec<f64> = (0..100_000).map(|i| i as f64).collect();
//! let sum: f64 = v.par_iter().map(|x| x * x).sum();
//! let mut w = vec![0.0; v.len()];
//! w.par_iter_mut().zip(&v).for_each(|(w, v)| *w = 2.0 * v);
//! let evens: Vec<u64> = (0..1000u64).into_par_iter().filter(|i| i % 2 == 0).collect();
//! assert_eq!(evens.len(), 500);
//! assert_eq!(w[3], 6.0);
//! assert!(sum > 0.0);
//! ```
//!
//! # What is supported
//!
//! - Sources: `into_par_iter` on ranges (`a..b`, `a..=b`, of every primitive integer type
//!   and of `char`: see [`range`]), on `Vec<T>` (moving the items), on `&[T]`, `&mut [T]`,
//!   `&Vec<T>`, `&mut Vec<T>` and arrays, and on tuples of 1 to 12 indexed sources
//!   (`(&mut a, &b, &c).into_par_iter()` yields tuples); `par_iter`, `par_iter_mut`;
//!   `into_par_iter`, `par_iter` and (where rayon has it) `par_iter_mut` on `VecDeque`,
//!   `HashMap`, `HashSet`, `BTreeMap`, `BTreeSet`, `LinkedList`, `BinaryHeap`, `Option` and
//!   `Result` (the maps, sets and lists gather their items into a `Vec` first, as rayon does:
//!   see [`collections`]); [`repeat`], [`repeat_n`]
//!   (and rayon's older name `repeatn`), [`once`] and [`empty`] (see [`sources`]);
//!   `par_drain(range)` on `&mut Vec` (in place), `&mut VecDeque` and `&mut String`
//!   ([`ParallelDrainRange`]) and `par_drain()` on `&mut HashMap`, `&mut HashSet` and
//!   `&mut BinaryHeap` ([`ParallelDrainFull`]), both in the prelude as in rayon's (see
//!   [`drain`]).
//! - Slices ([`ParallelSlice`], [`ParallelSliceMut`], see [`slice`](mod@slice)): `par_chunks`,
//!   `par_chunks_exact`, `par_rchunks`, `par_rchunks_exact`, `par_windows`,
//!   `par_array_windows`, `par_split`, `par_split_inclusive`, `par_chunk_by`, and the `_mut`
//!   forms of all but the windows
//!   (the `_exact` forms keep the elements left over: `remainder`, and on the `_mut` forms
//!   `into_remainder` and `take_remainder`, as in rayon; the `_mut` splits find their pieces
//!   in a pass of their own: see [`slice::split`](mod@slice::split)).
//! - Strings ([`ParallelString`], see [`str`](mod@str)): `par_chars`, `par_char_indices`,
//!   `par_bytes`, `par_encode_utf16`, `par_split`, `par_split_inclusive`,
//!   `par_split_terminator`, `par_lines`, `par_split_whitespace`,
//!   `par_split_ascii_whitespace`, `par_matches`, `par_match_indices`, with char patterns as
//!   rayon's.
//! - [`par_bridge`](ParallelBridge::par_bridge) on any `Send` sequential iterator (members pull
//!   its items through a lock; no order, as in rayon: see [`bridge`]).
//! - [`split()`] (pieces of a value split by the user's function) and the tree walks
//!   [`walk_tree_prefix`], [`walk_tree_postfix`], [`walk_tree`], in rayon's order: the pieces
//!   or nodes are found first, then shared out (see [`recursive`]).
//! - rayon's type paths: every adapter's type at the crate root (`asat::iter::Map`,
//!   `asat::iter::Zip`, `Take`, `MinLen`, `MapInit`, `Flatten`, ...) and the sources' in
//!   modules of rayon's names ([`slice`](mod@slice), [`vec`](mod@vec), [`range`],
//!   [`range_inclusive`], [`option`], [`result`], [`array`](mod@array), [`string`],
//!   [`collections`], [`str`](mod@str)), each with rayon's generic parameters, so that a
//!   program's own `type Iter = rayon::slice::Iter<'a, T>` (in an `IntoParallelIterator` of its
//!   own) changes as its `use` lines do. Where asat has one type for several of rayon's (`take`
//!   and `skip` return a [`Slice`](indexed::Slice), `with_min_len` a
//!   [`Hinted`](indexed::Hinted), the collections a [`vec::IntoIter`]), rayon's names are
//!   aliases of it.
//! - `Debug` and `Clone` as rayon's: the iterator types are `Debug` when their parts other than
//!   closures are (the closures elided: `Map { base: .., .. }`), and `Clone` when their parts are.
//! - Adapters ([`ParallelIterator`]): `map`, `map_init`, `map_with`, `filter`, `filter_map`,
//!   `flat_map` (the inner parallel iterators run sequentially on the thread that made their
//!   item: see [`flat_map`](mod@flat_map)), `flat_map_iter`, `flatten`, `flatten_iter`,
//!   `chain`, `inspect`, `update`, `copied`, `cloned`, `fold`, `fold_with`, `try_fold`,
//!   `try_fold_with`, `while_some`, `take_any`, `skip_any` (see [`take_any`](mod@take_any)),
//!   `take_any_while`, `skip_any_while` (see [`take_any_while`](mod@take_any_while)),
//!   `panic_fuse` (indexed when its base is: see [`panic_fuse`](mod@panic_fuse)),
//!   `intersperse` (indexed when its base is; an unindexed base's items are gathered first:
//!   see [`intersperse`](mod@intersperse)), `with_schedule`; on indexed iterators
//!   ([`IndexedParallelIterator`]): `zip`, `zip_eq`, `enumerate`, `rev`, `step_by`, `take`,
//!   `skip`, `chunks`, `fold_chunks`, `fold_chunks_with` (see [`fold_chunks`](mod@fold_chunks)),
//!   `interleave`, `interleave_shortest`, `positions`, `with_min_len`, `with_max_len` (`chain`
//!   of two indexed iterators is indexed), `by_uniform_blocks` and `by_exponential_blocks` (the
//!   call runs as a sequence of rounds, each one region, and a search stops after the round
//!   with its answer: see [`blocks`](mod@blocks)).
//! - Terminals: `for_each` (`_init`, `_with`), `try_for_each` (`_init`, `_with`), `sum`,
//!   `product`, `reduce`, `reduce_with`, `try_reduce`, `try_reduce_with` (the `try_` forms on
//!   `Result`, `Option` and `ControlFlow` items stop at a failure: see
//!   [`try_ops`](mod@try_ops) for which one they return), `count`, `min`/`max` and their
//!   `_by`/`_by_key` forms, `any`, `all`, `find_any`, `find_first`, `find_last`,
//!   `find_map_any`, `find_map_first`, `find_map_last`, `position_any`, `position_first`,
//!   `position_last`, `collect` (into `Vec`, `Box<[T]>`, `Rc<[T]>`, `Arc<[T]>`, `VecDeque`,
//!   `LinkedList`, `BinaryHeap`, `String` and `OsString` from their pieces, hash and B-tree
//!   maps and sets, `Cow`, `Result<C, E>`, `Option<C>`, `()`, and a pair of collections from
//!   pairs or [`Either`]s), `opt_len`, `collect_into_vec`,
//!   `collect_vec_list`, `unzip`, `unzip_into_vecs`,
//!   `partition`, `partition_map` (with [`Either`], the `either` crate's, as rayon's
//!   `rayon::iter::Either`; see [`unzip`](mod@unzip); an `Either` of two parallel iterators
//!   with the same items is one too, indexed when both are), and on indexed iterators the
//!   comparisons `cmp`, `partial_cmp`, `eq`, `ne`, `lt`, `le`, `gt`, `ge`;
//!   [`par_extend`](ParallelExtend::par_extend) on the same collections as `collect` (a `Vec`
//!   in place; with references to `Copy` items too, as rayon's) and on an [`Either`] of two
//!   (the one it holds).
//! - Sorts ([`ParallelSliceMut`]): `par_sort`, `par_sort_by`, `par_sort_by_key`,
//!   `par_sort_by_cached_key`, `par_sort_unstable`, `par_sort_unstable_by`,
//!   `par_sort_unstable_by_key`: a merge sort of joins, parallel at any depth of nesting
//!   (see [`sort`]).
//! - [`scope()`] and [`Scope::spawn`], [`scope_fifo`] and [`ScopeFifo::spawn_fifo`],
//!   [`in_place_scope`], [`in_place_scope_fifo`] (from asat-core): spawned jobs are tasks of
//!   the work-stealing engine, which any thread of the pool may steal, also from inside
//!   another job; a FIFO scope's jobs start in spawn order (see [`Scope`]).
//!   [`Scope::spawn_broadcast`] and [`ScopeFifo::spawn_broadcast`]: a job run once by each
//!   thread of the pool (once, inside another call). [`current_thread_has_pending_tasks`]:
//!   whether the thread has queued work nobody took yet. [`ThreadPoolScopes`] (in the
//!   prelude) gives a [`ThreadPool`] rayon's `scope`, `scope_fifo`, `in_place_scope`,
//!   `in_place_scope_fifo` and `current_thread_has_pending_tasks` methods.
//! - [`join`], [`join_context`], [`ThreadPoolBuilder`] (`num_threads`, `build`,
//!   `build_global`, `thread_name`, `stack_size`, `start_handler`, `exit_handler`,
//!   `panic_handler`, `use_current_thread`, `spawn_handler` and `build_scoped` with
//!   [`ThreadBuilder`], `breadth_first`), [`ThreadPool::install`](Runtime::install),
//!   [`current_num_threads`], [`current_thread_index`], [`max_num_threads`] (from asat-core).
//!   A pool whose threads have a name or a start handler runs the closures of calls made on
//!   other threads on its own, as rayon's does ([`Runtime::hands_calls_over`]); elsewhere
//!   the calling thread takes part in its call.
//! - [`broadcast()`] and [`ThreadPool::broadcast`](Runtime::broadcast): one region, `op` once
//!   on every thread of the pool, as in rayon, whatever the policy's team; inline as a team of
//!   one inside another call.
//!   [`spawn`], [`spawn_fifo`], [`spawn_broadcast`] and their `ThreadPool` methods: detached
//!   jobs run, in spawn order, by up to `num_threads` threads of the runtime's own that exit
//!   when idle; a job's panic goes to the builder's `panic_handler`, or is reported and
//!   ignored (rayon aborts); [`yield_now`], [`yield_local`]. See [`spawn`] (asat-core's) for
//!   the design and its limits.
//!
//! - A program's own types as parallel iterators: implement [`plumbing::Producer`] (see
//!   [`plumbing`]'s "Your own parallel iterator", with an example).
//!
//! Not here: the less used `find`/`position` (deprecated in rayon); rayon's plumbing traits
//! (`Producer` with `split_at`, `Consumer`, `bridge`): a type that implements rayon's is
//! ported to [`plumbing::Producer`] instead (how: [`plumbing`]).
//!
//! # A region, or tasks
//!
//! A terminal call runs on the current runtime (the one installed on the calling thread, by
//! [`Runtime::install`] or [`Runtime::install_here`], else the global runtime, built on first
//! use from the `ASAT_*` variables), in one of two ways:
//!
//! - **One region**, for a call from a thread outside every parallel call while the runtime
//!   is free: the runtime's policy decides its team (fixed, ASAT, processor pools, gang), and
//!   its wait strategy how members wait; a call of exactly one block per thread of the pool
//!   has a member per block instead (see below). The calling thread is member 0. This is the
//!   HPC loop's way: a static split, no shared counter, each member on the same part of the
//!   data call after call.
//! - **Tasks** of the work-stealing engine that runs `join` ([`asat_core::join`]), for a call
//!   made inside another (in a region's member, another call's closure, a `join`, a scope's
//!   job) and for a call made while other threads' calls occupy the runtime: the index space
//!   is folded in pieces on the calling thread and split in halves as threads of the pool
//!   look for work ([`Runtime::fold_adaptive`](asat_core::Runtime::fold_adaptive)), so
//!   nested loops use the threads their outer call leaves idle, and calls from several
//!   threads share the workers instead of waiting for each other
//!   ([`Runtime::loops_on_tasks`](asat_core::Runtime::loops_on_tasks) says which way a call
//!   goes). A call that no thread takes work from runs on its caller alone, waking nobody.
//!
//! The options below split the index space of either; on tasks, `with_max_len` (and a
//! schedule's chunk) bounds the pieces, and `with_min_len` the halves.
//!
//! The index space is split as the [`drive`] module says: by default **statically**, one
//! contiguous run of indices per member, which is what HPC loops expect (each member touches
//! the same part of the data call after call, and no shared counter is touched). Options:
//!
//! - [`with_min_len(n)`](IndexedParallelIterator::with_min_len): indices go out in blocks of
//!   `n` to `2n - 1` (none shorter than `n`); a call with fewer
//!   than `2n` indices runs on the calling thread alone, without waking a worker (as rayon
//!   would not split it: both halves would be shorter than `n`).
//! - [`with_max_len(n)`](IndexedParallelIterator::with_max_len): pieces of at most `n` indices,
//!   handed out dynamically from a shared counter (load balance for uneven items).
//! - [`with_schedule(s)`](ParallelIterator::with_schedule) (asat's own): any
//!   [`Schedule`](asat_core::Schedule), chunk sizes in indices.
//!
//! Results are combined in index order whatever the schedule, so `reduce` needs an associative
//! operation (not a commutative one) and `collect` keeps the order, as in rayon. A panic in a
//! closure is re-raised by the terminal call once the team has stopped, and the runtime stays
//! usable. It ends the range it was raised in (the rest of a member's run under the static
//! schedule); pieces that are dealt (`with_max_len`, `with_schedule`) go on being handed out
//! and run, as rayon runs every piece but the panicking one, unless the chain has a
//! [`panic_fuse`](ParallelIterator::panic_fuse).
//!
//! Where rayon's semantics rest on work stealing, regions differ: `current_thread_index()` is
//! the member's index in the call's team (`None` outside calls), and members never wait for
//! one another inside a call, so items of one call that wait for each other need a member each.
//! Programs do that with one item per thread of the pool, `(0..current_num_threads())
//! .into_par_iter()`, whose items rayon's idle threads take as they block (NPB-RAYON's LU meets
//! at a `std::sync::Barrier` and per-thread flags inside one such call per iteration): a call
//! of exactly as many blocks as the pool has threads therefore runs each block on a member of
//! its own, all at once, whatever the policy's team
//! ([`Runtime::for_each_member`](asat_core::Runtime::for_each_member); see [`drive`]). Calls
//! of other lengths keep the policy's team: items of those that wait for each other (a
//! `Barrier` of `n` across `(0..n)` with `n` below the pool's size) hang where the team is
//! smaller than `n`, as they may in rayon when its threads are busy, and so does the idiom
//! itself where regions run inline (a call of it inside another call, a `fork`ed child, a
//! runtime another thread held for [`REGION_LOCK_WAIT`](asat_core::REGION_LOCK_WAIT)). Members that
//! must meet are best written as a [`Runtime::region`] with
//! [`Team::barrier`](asat_core::Team).
//!
//! rayon's own tests, run against asat by the repository's lab (`crates/lab`, its
//! `rayon_tests` program), show the other differences, which programs of the usual
//! data-parallel kind rarely meet:
//!
//! - `u64` and `i64` ranges are indexed (rayon's are not), so the full `0..=u64::MAX`, which
//!   has more than `usize::MAX` items, panics at the terminal call (see [`range`]); `u128` and
//!   `i128` ranges are unindexed, as rayon's, and may be of any length.
//! - A `flat_map`'s inner iterators run sequentially on the thread that made their item, so
//!   a `find_last` of a `flat_map` whose last item's inner iterator is astronomically long,
//!   or a `fold` over one before a search, does not end, where rayon splits the inner
//!   iterators too. (`any` and `find_any` deal `with_max_len` pieces from as many places as
//!   the pool has threads, so they reach the far half at once, as rayon's splits do.)
//! - `skip` makes its skipped items (a `map` before it runs for them) in the call's ranges, as
//!   rayon's and std's, but only in calls that ask for its first item (not in a search from
//!   the end that stops early, nor when it skips every item: see [`indexed::Slice`]), where
//!   rayon makes them first in every call. (A `fold` before a search stops with it, as
//!   rayon's: the search looks through each range in pieces of `with_min_len` (at least 1),
//!   twice as many, ... items; see
//!   [`Hints::late`](plumbing::Hints::late).)
//! - `par_chunk_by` and the `par_split` family call the predicate once more per range
//!   boundary than rayon's `len - 1`; how many clones of `repeat_n`'s element a `step_by`
//!   over it makes follows the split (fewer than rayon's, as its splits leave unused
//!   tails). A sort whose comparator is not a total order ends in an
//!   unspecified order, as rayon's, but std's sort of a run may first report a panic to the
//!   panic hook, which the sort catches (see [`sort`]).
//! - The pool: `install` runs `op` on a thread of the pool (with its stack size, name and
//!   start handler), but on one the pool starts itself rather than one of a spawn handler's,
//!   and `current_thread_index` there is `None` outside the calls `op` makes (see
//!   [`Runtime::install`]).

// Where the code is: the sources in `source/`, the traits and the adapters in `iter/`, the
// terminal calls and how a call runs in `terminal/`, what they share in `internal/` (each
// folder's `mod.rs` lists its files); rayon's scopes in `scope/` and the parallel sorts in
// `sort/`. Each public module is re-exported below at the path rayon gives it
// (`asat_iter::vec`, `asat_iter::slice`, ...).
mod internal;
mod iter;
pub mod scope;
pub mod sort;
mod source;
mod terminal;

pub use internal::{plumbing, splitter};
pub use iter::{
    adapters, blocks, chain, flat_map, fold_chunks, indexed, interleave, intersperse, panic_fuse,
    take_any, take_any_while,
};
pub use source::{
    array, bridge, collections, drain, range, range_inclusive, recursive, slice, sources, str, vec,
};
pub use terminal::{cmp, drive, try_ops, unzip};

// `#[doc(no_inline)]`: an item of a public module is documented there, and listed here as a
// re-export (the modules' folders are private, so the docs would otherwise copy it here).
#[doc(no_inline)]
pub use adapters::{
    Cloned, Copied, Filter, FilterMap, FlatMapIter, FlattenIter, Fold, FoldWith, Inspect, Map,
    MapInit, MapWith, Positions, Update,
};
pub use asat_core::{
    broadcast, current_num_threads, current_thread_index, join, join_context, max_num_threads,
    spawn, spawn_broadcast, spawn_fifo, yield_local, yield_now, BroadcastContext, CustomSpawn,
    DefaultSpawn, FnContext, Runtime, ThreadBuilder, ThreadPool, ThreadPoolBuildError,
    ThreadPoolBuilder, Yield,
};
#[doc(no_inline)]
pub use blocks::{ExponentialBlocks, UniformBlocks};
#[doc(no_inline)]
pub use bridge::{IterBridge, ParallelBridge};
#[doc(no_inline)]
pub use chain::{Chain, Rev};
#[doc(no_inline)]
pub use collections::{option, result, string};
#[doc(no_inline)]
pub use drain::{ParallelDrainFull, ParallelDrainRange};
#[doc(no_inline)]
pub use flat_map::{FlatMap, Flatten};
#[doc(no_inline)]
pub use fold_chunks::{FoldChunks, FoldChunksWith};
#[doc(no_inline)]
pub use indexed::{Chunks, Enumerate, MaxLen, MinLen, MultiZip, Skip, StepBy, Take, Zip, ZipEq};
#[doc(no_inline)]
pub use interleave::{Interleave, InterleaveShortest};
#[doc(no_inline)]
pub use intersperse::Intersperse;
pub use iter::indexed_parallel_iterator::IndexedParallelIterator;
pub use iter::into_parallel_iterator::{
    IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator,
};
pub use iter::parallel_iterator::ParallelIterator;
#[doc(no_inline)]
pub use panic_fuse::PanicFuse;
#[doc(no_inline)]
pub use recursive::{
    split, walk_tree, walk_tree_postfix, walk_tree_prefix, Split, WalkTree, WalkTreePostfix,
    WalkTreePrefix,
};
pub use scope::{
    current_thread_has_pending_tasks, in_place_scope, in_place_scope_fifo, scope, scope_fifo,
    Scope, ScopeFifo, ThreadPoolScopes,
};
#[doc(no_inline)]
pub use slice::{ParallelSlice, ParallelSliceMut};
#[allow(deprecated)]
#[doc(no_inline)]
pub use sources::{empty, once, repeat, repeat_n, repeatn, Empty, Once, Repeat, RepeatN};
#[doc(no_inline)]
pub use str::ParallelString;
#[doc(no_inline)]
pub use take_any::{SkipAny, TakeAny, WhileSome};
#[doc(no_inline)]
pub use take_any_while::{SkipAnyWhile, TakeAnyWhile};
pub use terminal::collect::FromParallelIterator;
pub use terminal::extend::ParallelExtend;
#[doc(no_inline)]
pub use try_ops::{TryFold, TryFoldWith};
pub use unzip::Either;

/// The traits to `use` for parallel iterators, as `rayon::prelude`.
pub mod prelude {
    pub use crate::{
        FromParallelIterator, IndexedParallelIterator, IntoParallelIterator,
        IntoParallelRefIterator, IntoParallelRefMutIterator, ParallelBridge, ParallelDrainFull,
        ParallelDrainRange, ParallelExtend, ParallelIterator, ParallelSlice, ParallelSliceMut,
        ParallelString, ThreadPoolScopes,
    };
}
