//! The shared gang domain: one slot matrix per user and CPU domain, in a shared-memory file,
//! that the gang schedulers of all of that user's processes join, so that gangs in different
//! processes are gang-scheduled against each other. Opt-in (a builder option, or
//! `ASAT_GANG=shared`); without it a scheduler keeps its matrix in its own process.
//!
//! # The file
//!
//! One file per user and CPU domain, named `asat-gang-{fingerprint:016x}` (the fingerprint
//! hashes the domain's sorted CPU numbers), in the user's own folder
//! ([`PrivateDir::user`](asat_core::private_file::PrivateDir::user): `$XDG_RUNTIME_DIR`, else
//! `/dev/shm/asat-u{uid}`) or in a folder the caller names
//! ([`PrivateDir::named`](asat_core::private_file::PrivateDir::named)). Folder and file are
//! opened and checked by [`asat_core::private_file`]: no symbolic links, regular, the user's,
//! no permissions for the group or others, one link, exactly the expected size (checked
//! before mapping), space reserved. A refused folder or file is an asat-gang error that names
//! the file and says what was found; nothing is changed. Files nobody uses are removed
//! ([`private_file`'s removal](asat_core::private_file#removal)): a process that creates a
//! domain's file removes the other domains' (`asat-gang-*`) that no process holds open, and
//! the last process of a domain removes its file when it drops the domain.
//!
//! # Layout
//!
//! The file is zero-filled when created and all-zero is a valid empty domain: every opener
//! sets the header with compare-and-swap from 0 (all write the same values) and refuses a
//! header with other values (another layout, another domain, a corrupted file). All accesses
//! are atomic and every index read from the file is bounds-checked, so no content can make a
//! reader fault or index out of range; a live participant that writes nonsense only disturbs
//! scheduling, never memory safety.
//!
//! | bytes | content |
//! |---|---|
//! | 0..64 | header, 64-bit words: magic and layout version, columns, slots, participants, CPU fingerprint, tag generation |
//! | 64..128 | control, 32-bit words: `epoch` (futex), `running` row, `wake` (futex), the scheduler's participant number + 1 (advisory: the lock decides), switch requests, the end of the running slice (µs, see below), reserved |
//! | 128 + 64·p | participant `p`, 64-bit words: owner tag, acknowledged epoch, runnable-rows mask, used-rows mask, reserved |
//! | 128 + 64·P + 8·(s·C + c) | cell (slot `s`, column `c`): owner (0 free, else `(p + 1) << 48 \| gang`) |
//!
//! with `P` = 64 participant slots, `S` = 64 rows (so that a set of rows fits one 64-bit mask)
//! and `C` the domain's CPUs.
//!
//! Open-file-description locks (`F_OFD_SETLK`, one byte each; the kernel drops them when the
//! process dies, SIGKILL included) carry liveness and roles; they are independent of the bytes'
//! contents:
//!
//! | lock byte | held by |
//! |---|---|
//! | 0 | the scheduler: the one process that rotates the slots |
//! | 1 | a process placing or freeing cells (allocation is serialised across processes) |
//! | 8 + p | the live owner of participant slot `p` |
//!
//! # Participants
//!
//! Each shared-domain scheduler claims a participant slot (a process with two schedulers on one
//! domain has two) as asat-pools claims a load-table slot: it takes the lock of byte `8 + p` for the first `p` it can; only
//! a holder of that lock writes the slot's owner word, so whoever held the slot before is dead.
//! Holding the lock it frees every cell tagged `p + 1` (the dead owner's gangs), zeroes the
//! record, then publishes its tag (`generation << 32 | pid`). All gangs of the scheduler share
//! its participant slot. Its lock lives as long as its open file description: a
//! child forked without `exec` shares it, so, as in asat-pools, the process that opened the
//! domain is recorded and a forked child never acts through the parent's copy.
//!
//! Reclaiming a dead participant: whoever can take the lock of a slot whose owner word is not
//! 0 knows the owner is dead; holding that lock it marks the word `RECLAIMING`, frees the
//! slot's cells (holding the allocation lock), zeroes the record and the owner word, and
//! releases the lock. The scheduler reclaims every quantum, and every process does when it
//! joins; so a dead process's cells are gone within a quantum of the next switch, and its
//! slot is never waited for (a dead participant is never counted among those that must
//! acknowledge a stop; a scheduler waiting for acknowledgements also reclaims every 10 ms, so
//! a participant killed during a stop holds it up that long at most).
//!
//! A scheduler that is dropped leaves the domain: it frees its cells, clears its record and
//! gives its participant slot back (the leadership too, if it had it); its process's gang
//! threads then run uncoordinated, as after dropping an in-process scheduler, and gangs can no
//! longer be placed through it.
//!
//! # Cells and gangs
//!
//! A gang of `n` threads is placed with the allocation lock held: first fit over the rows,
//! `n` free cells of one row (free: owner 0), each set to `(p + 1) << 48 | gang` with the
//! process's own gang number. The process keeps its in-process structures (one `SlotCtl` per
//! row, one `CellCtl` per cell, the [`switch`](crate::switch) protocol) indexed by the shared
//! row and column numbers: its local view is the same matrix with only its own cells bound.
//! Freeing a gang zeroes its cells, with the allocation lock held, except a cell whose thread
//! is still bound (its `Member` was forgotten): that thread frees it when it leaves, as an
//! in-process reservation is kept. Each process publishes in its record the mask of rows
//! where it has a cell (rewritten from the cells at each placement and freeing) and the mask
//! of rows where it has a runnable thread (the bit is written from the row's runnable count
//! whenever the count crosses zero, then the count is read again, so of threads changing the
//! count at once the last one writes last). The scheduler ORs them over live participants:
//! the used rows are rotated, the runnable ones preferred, idle ones skipped, as the
//! in-process scheduler does with its slots. A participant whose running row lost its last
//! runnable thread, or whose other row gained its first one, and any placement, freeing or
//! `switch_now`, bumps `wake` and wakes the scheduler.
//!
//! # A switch from row A to row B
//!
//! The control words say what runs: `running` is the row (`u32::MAX`: none) and `epoch` is
//! even while `running` runs and odd while it is being stopped. The scheduler:
//!
//! 1. sets `epoch` to odd (stop `running`), then futex-wakes every process waiting on it;
//! 2. waits until every live participant has stored that epoch in its record (it futex-waits
//!    on `wake`, which each participant bumps and wakes after acknowledging, with a short
//!    timeout as a safety net; dead participants are skipped; after the stop timeout it gives
//!    up and counts a late stop). Every participant, not only those with a cell in A: a
//!    process that places a gang in A during the stop would otherwise find A still running
//!    (its watcher has not seen the odd epoch yet) and run the new gang beside B;
//! 3. sets `running = B`, then `epoch` to the next even value, and futex-wakes.
//!
//! In every participant a watcher thread (the process's scheduler thread) futex-waits on
//! `epoch` (a shared futex: `FUTEX_WAIT`/`FUTEX_WAKE` without
//! `FUTEX_PRIVATE_FLAG`, on the mapped word, so the kernel keys it by the file page and every
//! process mapping it waits on the same queue). On an odd epoch it stops its own threads of
//! row it runs with the in-process protocol (`stop_slot`: signals to its own threads only,
//! waits for them to park) and then acknowledges; on an even epoch it starts `running`
//! locally (`start_slot`). It reads `epoch` before `running` (the scheduler writes them in
//! the other order), so an even epoch comes with its own row or a later one. Both sides write the control words and acknowledgements `SeqCst`, and a
//! waiter re-reads `epoch` before it sleeps, so no wake-up is lost. So threads of row A in
//! every process are parked before any thread of row B runs: exclusivity holds across
//! processes, and no process ever signals another's threads.
//!
//! # Waking before the quantum ends
//!
//! A watcher asleep on `epoch` is woken by the scheduler's futex wake, a wake-up of a thread on
//! another CPU (tens of microseconds on a virtual machine) that an in-process scheduler does
//! not pay: it signals its threads itself. To keep that off the stop's critical path the
//! scheduler publishes in a control word when it will next switch unless something comes first
//! (`CLOCK_MONOTONIC` in microseconds, low 32 bits, lowest bit set; 0 when it expects no switch
//! because no other row wants the CPUs). A watcher whose process has cells in the running row
//! sleeps until 50 us before that time (an eighth of the quantum if shorter) and then polls
//! `epoch`, yielding between looks, until it changes or 200 us after the time (a quarter of the
//! quantum if shorter); then it sleeps on the futex as before. The rule is the pure function
//! `prewake::plan`. The price is up to 250 us of one CPU per quantum in each process whose row
//! is ending (a `SCHED_FIFO` watcher keeps a gang thread of its own process off that CPU while
//! it polls; yielding lets another process's scheduler of the same priority run there); an
//! early switch (idle row, `switch_now`) is not announced and still costs the wake-up. A stale
//! or foreign time (a scheduler that died) is believed only within two quanta, so it costs one
//! poll at most. [`GangStats::polled_stops`](crate::GangStats) counts the stops a watcher saw
//! while polling.
//!
//! # Election and take-over
//!
//! Whoever holds the lock of byte 0 is the scheduler; every participant's watcher tries to take
//! it (non-blocking) whenever it wakes, at least every quantum or 50 ms, whichever is shorter. A scheduler that dies loses the lock with its
//! process; the first watcher to try afterwards, within one quantum, takes it and continues from
//! the control words: an odd epoch means a stop was in flight, so it resumes at step 2 (the dead
//! scheduler's own threads are dead too, and dead participants are not waited for); an even
//! epoch means a row runs, which it lets run for a quantum. Before its first switch it reclaims
//! dead participants. So a killed scheduler is replaced within two quanta (one to notice, one
//! to switch), and its cells are freed at the first reclaim. A scheduler whose process drops
//! its last shared scheduler releases the lock; a watcher takes over at its next try.
//!
//! # How the in-process scheduler is reused
//!
//! A shared scheduler's thread runs the `watcher` module's loop instead of the in-process rotation:
//! placement goes to the file instead of the process's [`Matrix`](crate::Matrix); the rows'
//! used and runnable views come from the published masks instead of the process's slot
//! counters; the rotation rule is the same pure function. The switch itself (`stop_slot`,
//! `start_slot`, the signal protocol and its inject points) is the same code, applied by each
//! process to its own cells, so everything the [`switch`](crate::switch) module says about a
//! thread's side (parking, idle and blocking sections, deferred stops, foreign signals, fork)
//! holds unchanged. Counters: each process counts the stops of its own threads as an
//! in-process scheduler does; the leader also counts the switches it completed across
//! processes and their time from the odd epoch to the last thread parked in any process
//! ([`GangStats::domain_switches`](crate::GangStats)).
//!
//! As in one process, the scheduler thread never waits for a lock (see "Why a stopped thread
//! holding a lock cannot deadlock the process" in [`switch`](crate::switch)): a gang thread
//! stopped while it places or frees a gang holds its process's placement mutex and the
//! domain's allocation lock until its row runs again, which only the rotation brings about.
//! So the scheduler thread only tries them (reclaiming skips a round when either is held), and
//! at shutdown it releases its process's threads before it leaves the domain. A gang thread
//! that waits for the allocation lock waits, as for any lock, until the holder's row runs.
//!
//! Not covered: processes whose schedulers have different CPU sets use different domains
//! (the file name is the CPU set's fingerprint), so they are not coscheduled with each other;
//! a participant that is stopped as a whole (`SIGSTOP`) is not dead, so each switch waits the
//! stop timeout for it and counts a late stop.

mod prewake;
mod rotation;
mod sys;
mod table;
#[cfg(test)]
mod tests;
mod watcher;

pub(crate) use table::{Domain, SLOTS};
pub(crate) use watcher::run;
