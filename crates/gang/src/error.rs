//! The error type of asat-gang.

use std::fmt;

/// An error from building a gang scheduler, creating a gang or joining one.
///
/// Every message says what was wrong and what is allowed, for example
/// `a gang of 5 threads does not fit 4 processors: a gang may have 1 to 4 threads`.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    GangTooWide {
        n: usize,
        p: usize,
    },
    SlotsFull {
        max: usize,
    },
    Member {
        member: usize,
        size: usize,
    },
    MemberTaken {
        member: usize,
    },
    AlreadyBound,
    HandlerReplaced {
        offset: usize,
        signal: libc::c_int,
    },
    Forked,
    Quantum {
        got_us: u128,
    },
    StopTimeout {
        got_us: u128,
    },
    IdleGrace {
        got_us: u128,
    },
    MaxSlots {
        got: usize,
    },
    Cpus {
        message: String,
    },
    Signal {
        offset: usize,
        message: String,
    },
    Env {
        var: &'static str,
        value: String,
        allowed: String,
    },
    AlreadyAttached,
    Os {
        what: &'static str,
        err: std::io::Error,
    },
    DomainFile {
        err: asat_core::Error,
    },
    Domain {
        path: std::path::PathBuf,
        message: String,
        err: Option<std::io::Error>,
    },
}

/// The shortest quantum a scheduler accepts.
pub const MIN_QUANTUM: std::time::Duration = std::time::Duration::from_micros(100);
/// The longest quantum a scheduler accepts.
pub const MAX_QUANTUM: std::time::Duration = std::time::Duration::from_secs(10);
/// The longest stop timeout a scheduler accepts.
pub const MAX_STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);
/// The most slots (rows of the matrix) a scheduler may have.
pub const MAX_SLOTS_LIMIT: usize = 4096;

impl Error {
    fn new(kind: ErrorKind) -> Self {
        Self { kind }
    }
    pub(crate) fn gang_too_wide(n: usize, p: usize) -> Self {
        Self::new(ErrorKind::GangTooWide { n, p })
    }
    pub(crate) fn slots_full(max: usize) -> Self {
        Self::new(ErrorKind::SlotsFull { max })
    }
    pub(crate) fn member(member: usize, size: usize) -> Self {
        Self::new(ErrorKind::Member { member, size })
    }
    pub(crate) fn member_taken(member: usize) -> Self {
        Self::new(ErrorKind::MemberTaken { member })
    }
    pub(crate) fn already_bound() -> Self {
        Self::new(ErrorKind::AlreadyBound)
    }
    pub(crate) fn handler_replaced(offset: usize, signal: libc::c_int) -> Self {
        Self::new(ErrorKind::HandlerReplaced { offset, signal })
    }
    pub(crate) fn forked() -> Self {
        Self::new(ErrorKind::Forked)
    }
    pub(crate) fn quantum(got: std::time::Duration) -> Self {
        Self::new(ErrorKind::Quantum {
            got_us: got.as_micros(),
        })
    }
    pub(crate) fn stop_timeout(got: std::time::Duration) -> Self {
        Self::new(ErrorKind::StopTimeout {
            got_us: got.as_micros(),
        })
    }
    pub(crate) fn idle_grace(got: std::time::Duration) -> Self {
        Self::new(ErrorKind::IdleGrace {
            got_us: got.as_micros(),
        })
    }
    pub(crate) fn max_slots(got: usize) -> Self {
        Self::new(ErrorKind::MaxSlots { got })
    }
    pub(crate) fn cpus(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Cpus {
            message: message.into(),
        })
    }
    pub(crate) fn signal(offset: usize, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Signal {
            offset,
            message: message.into(),
        })
    }
    pub(crate) fn env(var: &'static str, value: &str, allowed: impl Into<String>) -> Self {
        Self::new(ErrorKind::Env {
            var,
            value: value.to_owned(),
            allowed: allowed.into(),
        })
    }
    pub(crate) fn already_attached() -> Self {
        Self::new(ErrorKind::AlreadyAttached)
    }
    pub(crate) fn os(what: &'static str, err: std::io::Error) -> Self {
        Self::new(ErrorKind::Os { what, err })
    }
    /// The shared domain's folder or file was refused or could not be opened.
    pub(crate) fn domain_file(err: asat_core::Error) -> Self {
        Self::new(ErrorKind::DomainFile { err })
    }
    /// The shared domain's file, opened, is unusable: `message` says why.
    pub(crate) fn domain(
        path: &std::path::Path,
        message: impl Into<String>,
        err: Option<std::io::Error>,
    ) -> Self {
        Self::new(ErrorKind::Domain {
            path: path.to_owned(),
            message: message.into(),
            err,
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::GangTooWide { n: 0, .. } => {
                write!(f, "a gang of 0 threads: a gang needs at least 1 thread")
            }
            ErrorKind::GangTooWide { n, p } => write!(
                f,
                "a gang of {n} threads does not fit {p} processors: a gang may have 1 to {p} \
                 threads (one per processor of the gang domain)"
            ),
            ErrorKind::SlotsFull { max } => write!(
                f,
                "no room for another gang: all {max} slots of the matrix are in use \
                 (raise max_slots, at most {MAX_SLOTS_LIMIT})"
            ),
            ErrorKind::Member { member, size } => write!(
                f,
                "member {member} of a gang of {size}: the member index must be below {size}"
            ),
            ErrorKind::MemberTaken { member } => write!(
                f,
                "member {member} of this gang is already joined by another thread: each member \
                 is one thread at a time"
            ),
            ErrorKind::AlreadyBound => write!(
                f,
                "this thread is already a member of a gang: a thread may belong to one gang at a \
                 time (drop its Member first)"
            ),
            ErrorKind::HandlerReplaced { offset, signal } => write!(
                f,
                "stop signal SIGRTMIN+{offset} (signal {signal}): another handler was installed \
                 for it after the gang scheduler installed its own, so gang switches cannot stop \
                 threads by signal (they send none, and wait for safe points); do not install a \
                 handler for this signal, or give the gang scheduler a signal the program does \
                 not use (GangSchedulerBuilder::signal_offset or ASAT_GANG_SIGNAL)"
            ),
            ErrorKind::Forked => write!(
                f,
                "this gang scheduler belongs to the parent process: in a child made by fork() it \
                 has no scheduler thread, so its gangs cannot be created or joined; build a new \
                 GangScheduler in the child"
            ),
            ErrorKind::Quantum { got_us } => write!(
                f,
                "quantum {got_us} us: must be between {} us and {} s",
                MIN_QUANTUM.as_micros(),
                MAX_QUANTUM.as_secs()
            ),
            ErrorKind::StopTimeout { got_us } => write!(
                f,
                "stop timeout {got_us} us: must be at least 1 ms, at least the quantum and at \
                 most {} s",
                MAX_STOP_TIMEOUT.as_secs()
            ),
            ErrorKind::IdleGrace { got_us } => {
                write!(f, "idle grace {got_us} us: must be at most the quantum")
            }
            ErrorKind::MaxSlots { got } => write!(
                f,
                "max_slots {got}: must be between 1 and {MAX_SLOTS_LIMIT}"
            ),
            ErrorKind::Cpus { message } => write!(f, "gang domain: {message}"),
            ErrorKind::Signal { offset, message } => {
                write!(f, "stop signal SIGRTMIN+{offset}: {message}")
            }
            ErrorKind::Env {
                var,
                value,
                allowed,
            } => write!(
                f,
                "environment variable {var}={value:?} is invalid: {allowed}"
            ),
            ErrorKind::AlreadyAttached => write!(
                f,
                "this GangPolicy is already attached to a runtime: take one policy per runtime \
                 from GangScheduler::policy (each runtime is one gang)"
            ),
            ErrorKind::Os { what, err } => write!(f, "{what} failed: {err}"),
            ErrorKind::DomainFile { err } => write!(
                f,
                "shared gang domain: {err} (the domain's folder and file must be the user's \
                 own, not symbolic links, with no access for the group or others)"
            ),
            ErrorKind::Domain { path, message, err } => {
                write!(f, "shared gang domain {path:?}: {message}")?;
                match err {
                    Some(e) => write!(f, " ({e})"),
                    None => Ok(()),
                }
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Os { err, .. } => Some(err),
            ErrorKind::DomainFile { err } => Some(err),
            ErrorKind::Domain { err: Some(e), .. } => Some(e),
            _ => None,
        }
    }
}
