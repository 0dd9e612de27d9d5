//! The unsafe edge of the crate's system calls: futexes, the clock, signals (the handler's
//! entry, its installation and the check that it is still installed, queueing a signal to a
//! thread, signal masks), thread and process ids and the fork hook (CPU affinity goes through
//! `asat_core::CpuSet`). A leaf: it knows nothing of the scheduler (the handler's work is
//! handed in). Everything here that the signal handler calls ([`futex_wait`], [`futex_wake`],
//! [`now_ns`], [`Errno`]) is async-signal-safe: plain system calls.

use std::sync::atomic::AtomicU32;
use std::sync::OnceLock;
use std::time::Duration;

/// Sleeps while `*word == expected`, at most `timeout`. Returns on a wake, a timeout, a signal,
/// or at once if the word differs: callers re-check their condition in a loop.
#[inline]
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    futex_wait_op(
        word,
        libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
        expected,
        timeout,
    );
}

/// Wakes up to `n` threads sleeping on `word`.
#[inline]
pub(crate) fn futex_wake(word: &AtomicU32, n: i32) {
    futex_wake_op(word, libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, n);
}

/// [`futex_wait`] on a word of a shared mapping: a futex keyed by the mapped file's page (no
/// `FUTEX_PRIVATE_FLAG`), so waiters in every process mapping the file share its queue.
pub(crate) fn shared_futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    futex_wait_op(word, libc::FUTEX_WAIT, expected, timeout);
}

/// Wakes every waiter, in any process, sleeping on the shared word `word`.
pub(crate) fn shared_futex_wake_all(word: &AtomicU32) {
    futex_wake_op(word, libc::FUTEX_WAKE, i32::MAX);
}

#[inline]
fn futex_wait_op(word: &AtomicU32, op: libc::c_int, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a valid, aligned 32-bit atomic that outlives the call (for a shared
    // futex, in a mapping that outlives it); `ts_ptr` is null or points to a timespec on this
    // stack frame. FUTEX_WAIT only reads both. A raw futex syscall is async-signal-safe.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), op, expected, ts_ptr);
    }
}

#[inline]
fn futex_wake_op(word: &AtomicU32, op: libc::c_int, n: i32) {
    // SAFETY: `word` is a valid, aligned 32-bit atomic; FUTEX_WAKE does not access memory
    // through it beyond keying its address (or, shared, its page). Async-signal-safe.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), op, n);
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds (async-signal-safe, unlike `Instant` in principle).
#[inline]
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Saves `errno` on creation and restores it on drop, so a signal handler does not change
/// the `errno` the interrupted code sees.
pub(crate) struct Errno(libc::c_int);

impl Errno {
    #[inline]
    pub(crate) fn save() -> Self {
        // SAFETY: __errno_location returns this thread's errno slot, always valid.
        Self(unsafe { *libc::__errno_location() })
    }
}

impl Drop for Errno {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: as in `save`.
        unsafe { *libc::__errno_location() = self.0 };
    }
}

/// The signal number `SIGRTMIN + offset`, if it is a real-time signal.
pub(crate) fn rt_signal(offset: usize) -> Option<libc::c_int> {
    let min = libc::SIGRTMIN();
    let max = libc::SIGRTMAX();
    let sig = min.checked_add(libc::c_int::try_from(offset).ok()?)?;
    (sig <= max).then_some(sig)
}

/// The highest valid offset above `SIGRTMIN`.
pub(crate) fn rt_signal_max_offset() -> usize {
    (libc::SIGRTMAX() - libc::SIGRTMIN()) as usize
}

/// What the kernel says about who sent a signal: `si_code`, `si_pid` and the `si_value` that
/// a queued signal carries (meaningless for other codes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sender {
    pub(crate) code: libc::c_int,
    pub(crate) pid: libc::pid_t,
    pub(crate) value: usize,
}

/// The stop signal's handler as the kernel calls it (`SA_SIGINFO`): reads who sent the signal
/// and hands it to the function [`install_handler`] was given, with `errno` saved and restored
/// around it.
extern "C" fn stop_signal_entry(
    _sig: libc::c_int,
    info: *mut libc::siginfo_t,
    _context: *mut libc::c_void,
) {
    let _errno = Errno::save();
    if info.is_null() {
        return;
    }
    // SAFETY: the handler is installed with SA_SIGINFO, so the kernel passes a valid siginfo_t
    // for the duration of the call, all 128 bytes written by the kernel; it is only read. The
    // `_rt` fields read by si_pid and si_value are where the kernel puts the sender of a queued
    // signal (SI_QUEUE); for other codes they hold other data or zeroes, which the handler
    // does not trust (it checks the code first).
    let sender = unsafe {
        Sender {
            code: (*info).si_code,
            pid: (*info).si_pid(),
            value: (*info).si_value().sival_ptr as usize,
        }
    };
    if let Some(on_signal) = ON_SIGNAL.get() {
        on_signal(sender);
    }
}

/// What the handler hands each signal to ([`install_handler`]'s `on_signal`): set once, read
/// by the handler with an atomic load (async-signal-safe once set).
static ON_SIGNAL: OnceLock<fn(Sender)> = OnceLock::new();

/// The action installed for `sig` now, and whether it is asat-gang's handler.
fn ours(sig: libc::c_int) -> std::io::Result<(bool, libc::sigaction)> {
    // SAFETY: all-zeroes is a valid `sigaction` (empty mask, no flags, SIG_DFL).
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: querying with a null new action only writes `old`.
    if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let entry = stop_signal_entry as *const () as usize;
    Ok((
        old.sa_sigaction == entry && old.sa_flags & libc::SA_SIGINFO != 0,
        old,
    ))
}

/// Installs asat-gang's handler for `sig` with `SA_SIGINFO` (it reads who sent each signal)
/// and `SA_RESTART` (interrupted system calls that can be restarted are; the others return
/// `EINTR`: see the crate docs), the signal itself blocked while the handler runs. Fails if
/// another handler is installed, or the signal is ignored. The handler hands each signal, and
/// who sent it, to `on_signal`, which must be async-signal-safe (the first function given is
/// the one for the life of the process).
pub(crate) fn install_handler(sig: libc::c_int, on_signal: fn(Sender)) -> std::io::Result<()> {
    // Before the handler can run.
    let _ = ON_SIGNAL.set(on_signal);
    let (ours, old) = ours(sig)?;
    if ours {
        return Ok(());
    }
    if old.sa_sigaction != libc::SIG_DFL {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "another handler is installed for this signal",
        ));
    }
    // SAFETY: as above, zeroed is valid; the fields set next make it our action.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = stop_signal_entry as *const () as usize;
    act.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: `act.sa_mask` is a valid sigset_t to initialize.
    unsafe { libc::sigemptyset(&mut act.sa_mask) };
    // SAFETY: `act` is fully initialized, and `stop_signal_entry` has the SA_SIGINFO handler
    // signature and does only async-signal-safe work (reads, and `on_signal`, which is).
    if unsafe { libc::sigaction(sig, &act, std::ptr::null_mut()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether asat-gang's handler is still the one installed for `sig` (something in the process
/// may have replaced it since [`install_handler`]). One `sigaction` query: async-signal-safe,
/// no lock, no allocation.
pub(crate) fn handler_installed(sig: libc::c_int) -> bool {
    ours(sig).is_ok_and(|(ours, _)| ours)
}

/// The process's id.
pub(crate) fn getpid() -> libc::pid_t {
    // SAFETY: getpid takes no arguments and cannot fail.
    unsafe { libc::getpid() }
}

/// The process's real user id.
pub(crate) fn getuid() -> libc::uid_t {
    // SAFETY: getuid takes no arguments and cannot fail.
    unsafe { libc::getuid() }
}

/// The calling thread's kernel thread id.
pub(crate) fn gettid() -> libc::pid_t {
    // SAFETY: the gettid system call takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as libc::pid_t }
}

/// The `_rt` part of the kernel's `siginfo_t` (what `sigqueue` fills): the sender and the
/// value. Laid out as the kernel's union member, which starts at the union's alignment (a
/// pointer's), as `sival_ptr` does here.
#[repr(C)]
#[derive(Clone, Copy)]
struct RtFields {
    pid: libc::pid_t,
    uid: libc::uid_t,
    value: libc::sigval,
}

/// The head of the kernel's `siginfo_t` followed by the `_rt` fields.
#[repr(C)]
#[derive(Clone, Copy)]
struct QueuedInfo {
    signo: libc::c_int,
    errno: libc::c_int,
    code: libc::c_int,
    rt: RtFields,
}

/// A `siginfo_t` as `rt_tgsigqueueinfo` reads it: 128 bytes, of which `QueuedInfo` is the
/// start.
#[repr(C)]
union SigInfo {
    queued: QueuedInfo,
    whole: libc::siginfo_t,
}

const _: () = assert!(std::mem::size_of::<SigInfo>() == std::mem::size_of::<libc::siginfo_t>());

/// Queues `sig` for thread `tid` of process `pid` (this process) as `pthread_sigqueue` does,
/// with `si_code = SI_QUEUE`, the sender `pid`/`uid` and `value` as `si_value`: one system call
/// (`rt_tgsigqueueinfo`), no lock. Returns false if it failed (the queue of real-time signals
/// is full, or no such thread). A thread id that is not a thread of `pid` gets nothing (the
/// kernel checks the pair), so a wrong `tid` cannot signal another process.
pub(crate) fn queue_signal(
    pid: libc::pid_t,
    tid: libc::pid_t,
    sig: libc::c_int,
    uid: libc::uid_t,
    value: usize,
) -> bool {
    // SAFETY: all-zeroes is a valid siginfo_t (and so a valid `SigInfo`).
    let mut info: SigInfo = unsafe { std::mem::zeroed() };
    info.queued = QueuedInfo {
        signo: sig,
        errno: 0,
        code: libc::SI_QUEUE,
        rt: RtFields {
            pid,
            uid,
            value: libc::sigval {
                sival_ptr: value as *mut libc::c_void,
            },
        },
    };
    // SAFETY: `info` is a fully initialized 128-byte siginfo_t on this stack frame, which the
    // system call only reads; the other arguments are plain integers. Async-signal-safe.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_rt_tgsigqueueinfo,
            pid,
            tid,
            sig,
            std::ptr::addr_of!(info.whole),
        )
    };
    rc == 0
}

/// Registers `child` to run in the child process after every `fork()` (in the thread that
/// forked, the only one the child has), once per process.
pub(crate) fn on_fork_in_child(child: extern "C" fn()) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `child` is a plain function that stays valid for the life of the process.
        // pthread_atfork fails only without memory, and then the child is not told; the
        // crate docs say what a forked child may do.
        unsafe { libc::pthread_atfork(None, None, Some(child)) };
    });
}

/// Makes the calling thread a `SCHED_FIFO` thread of the lowest real-time priority (needs
/// `CAP_SYS_NICE` or an `RLIMIT_RTPRIO` allowance).
pub(crate) fn set_realtime() -> std::io::Result<()> {
    // SAFETY: sched_param is a plain struct; all-zeroes is valid before the priority is set.
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = 1;
    // SAFETY: `param` is valid for the call; pthread_self() is the calling, live thread.
    let rc = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Unblocks `sig` for the calling thread (a signal pending meanwhile is delivered now).
pub(crate) fn unblock_signal(sig: libc::c_int) {
    // SAFETY: all-zeroes sigset_t values are valid storage; it is initialized by sigemptyset
    // before being read.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t; `sig` is a valid signal number (checked when the
    // scheduler was built). pthread_sigmask cannot fail with these arguments.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
}

/// Blocks one signal for the calling thread until dropped (then restores the old mask, and a
/// signal that arrived meanwhile is delivered).
pub(crate) struct SignalBlock {
    old: libc::sigset_t,
}

impl SignalBlock {
    pub(crate) fn new(sig: libc::c_int) -> Self {
        // SAFETY: all-zeroes sigset_t values are valid storage; they are initialized by
        // sigemptyset / pthread_sigmask before being read.
        let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` and `old` are valid sigset_t; `sig` is a valid signal number (checked
        // when the scheduler was built). pthread_sigmask cannot fail with these arguments.
        unsafe {
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        }
        Self { old }
    }
}

impl Drop for SignalBlock {
    fn drop(&mut self) {
        // SAFETY: `old` was filled by pthread_sigmask in `new`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}
