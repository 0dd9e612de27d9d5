//! The error type of asat-implicit.

use std::fmt;

/// An error from a barrier, a flag, or a strategy's configuration.
///
/// Every message says what was wrong and, for configuration, what is allowed, for example
/// `barrier of 0 participants: must be between 1 and 65535`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ErrorKind {
    Poisoned,
    Participants {
        got: usize,
    },
    Config {
        what: &'static str,
        value: String,
        allowed: &'static str,
    },
    Env {
        var: &'static str,
        value: String,
        allowed: &'static str,
    },
    UnknownStrategy {
        name: String,
    },
}

impl Error {
    pub(crate) fn poisoned() -> Self {
        Self {
            kind: ErrorKind::Poisoned,
        }
    }

    pub(crate) fn participants(got: usize) -> Self {
        Self {
            kind: ErrorKind::Participants { got },
        }
    }

    pub(crate) fn config(
        what: &'static str,
        value: impl fmt::Debug,
        allowed: &'static str,
    ) -> Self {
        Self {
            kind: ErrorKind::Config {
                what,
                value: format!("{value:?}"),
                allowed,
            },
        }
    }

    pub(crate) fn env(var: &'static str, value: &str, allowed: &'static str) -> Self {
        Self {
            kind: ErrorKind::Env {
                var,
                value: value.to_owned(),
                allowed,
            },
        }
    }

    pub(crate) fn unknown_strategy(name: &str) -> Self {
        Self {
            kind: ErrorKind::UnknownStrategy {
                name: name.to_owned(),
            },
        }
    }

    /// Whether this is the error a barrier or flag returns after a participant panicked (or
    /// called `poison`).
    pub fn is_poisoned(&self) -> bool {
        matches!(self.kind, ErrorKind::Poisoned)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Poisoned => f.write_str(
                "barrier poisoned: a participant panicked (or called poison) and will not arrive",
            ),
            ErrorKind::Participants { got } => write!(
                f,
                "barrier of {got} participants: must be between 1 and {}",
                crate::barrier::MAX_PARTICIPANTS
            ),
            ErrorKind::Config {
                what,
                value,
                allowed,
            } => write!(f, "{what} {value}: {allowed}"),
            ErrorKind::Env {
                var,
                value,
                allowed,
            } => write!(
                f,
                "environment variable {var}={value:?} is invalid: {allowed}"
            ),
            ErrorKind::UnknownStrategy { name } => write!(
                f,
                "unknown wait strategy {name:?}: must be one of {}",
                crate::strategy::STRATEGY_NAMES.join(", ")
            ),
        }
    }
}

impl std::error::Error for Error {}
