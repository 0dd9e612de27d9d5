//! The error type of asat-core.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// An error from building or configuring a runtime, or from opening a
/// [private file](crate::private_file).
///
/// Every message says what was wrong and what is allowed, for example
/// `max_threads 0: must be between 1 and 4096`.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    MaxThreads {
        got: usize,
    },
    NumThreads {
        got: usize,
    },
    GlobalExists,
    CurrentThreadInPool,
    SoloSlice {
        got: std::time::Duration,
    },
    TeamTooLarge {
        policy: String,
        team: usize,
        max: usize,
    },
    Env {
        var: &'static str,
        value: String,
        allowed: String,
    },
    Policy {
        policy: String,
        message: String,
    },
    SpawnHandler {
        index: usize,
        threads: usize,
        source: io::Error,
    },
    PrivateFile {
        what: &'static str,
        path: PathBuf,
        message: String,
        source: Option<io::Error>,
    },
}

/// The largest `max_threads` a runtime accepts.
pub const MAX_THREADS_LIMIT: usize = 4096;

impl Error {
    pub(crate) fn max_threads(got: usize) -> Self {
        Self {
            kind: ErrorKind::MaxThreads { got },
        }
    }

    pub(crate) fn num_threads(got: usize) -> Self {
        Self {
            kind: ErrorKind::NumThreads { got },
        }
    }

    pub(crate) fn global_exists() -> Self {
        Self {
            kind: ErrorKind::GlobalExists,
        }
    }

    pub(crate) fn current_thread_in_pool() -> Self {
        Self {
            kind: ErrorKind::CurrentThreadInPool,
        }
    }

    pub(crate) fn solo_slice(got: std::time::Duration) -> Self {
        Self {
            kind: ErrorKind::SoloSlice { got },
        }
    }

    /// A team size the policy asks for that exceeds the runtime's `max_threads`.
    pub fn team_too_large(policy: &str, team: usize, max: usize) -> Self {
        Self {
            kind: ErrorKind::TeamTooLarge {
                policy: policy.to_owned(),
                team,
                max,
            },
        }
    }

    pub(crate) fn env(var: &'static str, value: &str, allowed: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Env {
                var,
                value: value.to_owned(),
                allowed: allowed.into(),
            },
        }
    }

    /// A configuration error raised by a policy when it is attached to a runtime
    /// (see [`Policy::attach`](crate::Policy::attach)). `message` should say what was
    /// wrong and what is allowed.
    pub fn policy(policy: &str, message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Policy {
                policy: policy.to_owned(),
                message: message.into(),
            },
        }
    }
}

impl Error {
    /// A [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler) that returned `source`
    /// for worker `index` of a pool of `threads`.
    pub(crate) fn spawn_handler(index: usize, threads: usize, source: io::Error) -> Self {
        Self {
            kind: ErrorKind::SpawnHandler {
                index,
                threads,
                source,
            },
        }
    }

    /// A private folder or file (see [`private_file`](crate::private_file)) that is refused
    /// or cannot be used: `what` names it (`"folder"`, `"file"`, ...).
    pub(crate) fn private_file(
        what: &'static str,
        path: &Path,
        message: impl Into<String>,
        source: Option<io::Error>,
    ) -> Self {
        Self {
            kind: ErrorKind::PrivateFile {
                what,
                path: path.to_owned(),
                message: message.into(),
                source,
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::MaxThreads { got } => write!(
                f,
                "max_threads {got}: must be between 1 and {MAX_THREADS_LIMIT}"
            ),
            ErrorKind::NumThreads { got } => write!(
                f,
                "num_threads {got}: must be at most {MAX_THREADS_LIMIT} (0, or leaving it unset, \
                 takes ASAT_MAX_THREADS, else RAYON_NUM_THREADS, else the CPUs this process may \
                 use)"
            ),
            ErrorKind::GlobalExists => f.write_str(
                "the global runtime exists already: build_global must be called once, before \
                 the first parallel call that uses the global runtime",
            ),
            ErrorKind::CurrentThreadInPool => f.write_str(
                "use_current_thread: this thread is index 0 of another pool already (built with \
                 use_current_thread); drop that pool first, or build this one without it",
            ),
            ErrorKind::SoloSlice { got } => write!(
                f,
                "solo_slice {got:?}: must be between 100µs and 100ms (the slices the kernel \
                 grants), or None to leave time slices alone"
            ),
            ErrorKind::TeamTooLarge { policy, team, max } => write!(
                f,
                "policy {policy} asks for a team of {team} threads, but max_threads is {max}: \
                 the team size must be between 1 and max_threads"
            ),
            ErrorKind::Env {
                var,
                value,
                allowed,
            } => write!(
                f,
                "environment variable {var}={value:?} is invalid: {allowed}"
            ),
            ErrorKind::Policy { policy, message } => write!(f, "policy {policy}: {message}"),
            ErrorKind::SpawnHandler {
                index,
                threads,
                source,
            } => write!(
                f,
                "spawn_handler failed to start pool thread {index} (the handler starts threads \
                 1..{threads}; thread 0 is the caller of each parallel call): {source}"
            ),
            ErrorKind::PrivateFile {
                what,
                path,
                message,
                source,
            } => {
                write!(f, "private {what} {path:?}: {message}")?;
                match source {
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
            ErrorKind::PrivateFile {
                source: Some(e), ..
            }
            | ErrorKind::SpawnHandler { source: e, .. } => Some(e),
            _ => None,
        }
    }
}
