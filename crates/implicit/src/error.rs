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
        max: usize,
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
        known: &'static [&'static str],
    },
}

impl Error {
    pub(crate) fn poisoned() -> Self {
        Self {
            kind: ErrorKind::Poisoned,
        }
    }

    /// A barrier of `got` participants, where at most `max` are allowed.
    pub(crate) fn participants(got: usize, max: usize) -> Self {
        Self {
            kind: ErrorKind::Participants { got, max },
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

    /// A wait strategy `name` that is none of the `known` ones.
    pub(crate) fn unknown_strategy(name: &str, known: &'static [&'static str]) -> Self {
        Self {
            kind: ErrorKind::UnknownStrategy {
                name: name.to_owned(),
                known,
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
            ErrorKind::Participants { got, max } => write!(
                f,
                "barrier of {got} participants: must be between 1 and {max}"
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
            ErrorKind::UnknownStrategy { name, known } => write!(
                f,
                "unknown wait strategy {name:?}: must be one of {}",
                known.join(", ")
            ),
        }
    }
}

impl std::error::Error for Error {}
