//! The error type of asat-mpi.

use std::fmt;
use std::time::Duration;

use crate::Threading;

/// An error from a hybrid start-up's settings, from MPI's initialisation, from giving a
/// rank its share of the node, from a waiter's all-reduce given buffers that do not match, or
/// from a waiter's barrier called from a second thread.
///
/// Every message says what was wrong and what is allowed, for example
/// `threading level single: asat starts worker threads, so MPI must be initialised funneled,
/// serialized or multiple`.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    ThreadingSingle,
    ThreadingNotProvided {
        requested: Threading,
        provided: Threading,
    },
    AlreadyInitialized {
        finalized: bool,
    },
    SleepCap {
        got: Duration,
    },
    YieldTime {
        got: Duration,
    },
    Env {
        var: &'static str,
        value: String,
        allowed: String,
    },
    Strategy {
        err: asat_implicit::Error,
    },
    Pin {
        cpus: String,
        err: std::io::Error,
    },
    ReduceBuffers {
        send: i32,
        recv: i32,
        same_type: bool,
    },
    BarrierThread,
}

/// The shortest sleep cap a [`Waiter`](crate::Waiter) accepts.
pub const MIN_SLEEP_CAP: Duration = Duration::from_micros(1);
/// The longest sleep cap a [`Waiter`](crate::Waiter) accepts.
pub const MAX_SLEEP_CAP: Duration = Duration::from_secs(1);
/// The longest yield time a [`Waiter`](crate::Waiter) accepts (0 is allowed: no yielding).
pub const MAX_YIELD_TIME: Duration = Duration::from_secs(1);

impl Error {
    fn new(kind: ErrorKind) -> Self {
        Self { kind }
    }
    pub(crate) fn threading_single() -> Self {
        Self::new(ErrorKind::ThreadingSingle)
    }
    pub(crate) fn threading_not_provided(requested: Threading, provided: Threading) -> Self {
        Self::new(ErrorKind::ThreadingNotProvided {
            requested,
            provided,
        })
    }
    pub(crate) fn already_initialized(finalized: bool) -> Self {
        Self::new(ErrorKind::AlreadyInitialized { finalized })
    }
    pub(crate) fn sleep_cap(got: Duration) -> Self {
        Self::new(ErrorKind::SleepCap { got })
    }
    pub(crate) fn yield_time(got: Duration) -> Self {
        Self::new(ErrorKind::YieldTime { got })
    }
    pub(crate) fn env(var: &'static str, value: &str, allowed: impl Into<String>) -> Self {
        Self::new(ErrorKind::Env {
            var,
            value: value.to_owned(),
            allowed: allowed.into(),
        })
    }
    pub(crate) fn strategy(err: asat_implicit::Error) -> Self {
        Self::new(ErrorKind::Strategy { err })
    }
    pub(crate) fn reduce_buffers(send: i32, recv: i32, same_type: bool) -> Self {
        Self::new(ErrorKind::ReduceBuffers {
            send,
            recv,
            same_type,
        })
    }
    pub(crate) fn barrier_thread() -> Self {
        Self::new(ErrorKind::BarrierThread)
    }
    pub(crate) fn pin(cpus: String, err: std::io::Error) -> Self {
        Self::new(ErrorKind::Pin { cpus, err })
    }

    /// Whether this is the error of a second start-up in one process (MPI initialises once
    /// per process, and cannot be initialised again after it was finalised).
    pub fn is_already_initialized(&self) -> bool {
        matches!(self.kind, ErrorKind::AlreadyInitialized { .. })
    }
}

/// A threading level as MPI names it.
pub(crate) fn threading_name(t: Threading) -> &'static str {
    match t {
        Threading::Single => "single",
        Threading::Funneled => "funneled",
        Threading::Serialized => "serialized",
        Threading::Multiple => "multiple",
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::ThreadingSingle => f.write_str(
                "threading level single: asat starts worker threads, so MPI must be \
                 initialised funneled, serialized or multiple",
            ),
            ErrorKind::ThreadingNotProvided {
                requested,
                provided,
            } => write!(
                f,
                "threading level {} requested, but this MPI library provides only {}: request \
                 funneled (enough when MPI is called outside parallel regions, or only by the \
                 thread that started them), or use an MPI built with {} support; MPI is \
                 finalised now and cannot be initialised again in this process, so change \
                 the setting and start the program again",
                threading_name(*requested),
                threading_name(*provided),
                threading_name(*requested)
            ),
            ErrorKind::AlreadyInitialized { finalized: false } => f.write_str(
                "MPI is already initialised in this process: build one Hybrid per process, \
                 before any other MPI initialisation, and share it",
            ),
            ErrorKind::AlreadyInitialized { finalized: true } => f.write_str(
                "MPI was finalised in this process (a Hybrid was dropped): MPI cannot be \
                 initialised again; build one Hybrid per process and keep it for the \
                 program's life",
            ),
            ErrorKind::SleepCap { got } => write!(
                f,
                "sleep cap {got:?}: must be between {:?} and {:?}",
                MIN_SLEEP_CAP, MAX_SLEEP_CAP
            ),
            ErrorKind::YieldTime { got } => write!(
                f,
                "yield time {got:?}: must be at most {MAX_YIELD_TIME:?} (0: no yielding)"
            ),
            ErrorKind::Env {
                var,
                value,
                allowed,
            } => write!(
                f,
                "environment variable {var}={value:?} is invalid: {allowed}"
            ),
            ErrorKind::Strategy { err } => write!(f, "MPI wait strategy: {err}"),
            ErrorKind::BarrierThread => f.write_str(
                "a Waiter's barriers must all come from one thread (the one that made its \
                 first barrier): barriers from several threads could pick different \
                 collectives on different ranks and hang; give each thread its own Waiter",
            ),
            ErrorKind::ReduceBuffers {
                send,
                recv,
                same_type,
            } => write!(
                f,
                "all-reduce of {send} elements into {recv}{}: the receive buffer must have the \
                 send buffer's length and element type",
                if *same_type {
                    ""
                } else {
                    " of another MPI datatype"
                }
            ),
            ErrorKind::Pin { cpus, err } => write!(
                f,
                "binding this rank to its share of the node (CPUs {cpus}) failed: {err}; \
                 build without pin(true) to leave placement to the kernel"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Strategy { err } => Some(err),
            ErrorKind::Pin { err, .. } => Some(err),
            _ => None,
        }
    }
}
