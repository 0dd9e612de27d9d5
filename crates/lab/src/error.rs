//! The error type of asat-lab: a simulator's configuration that it cannot run.

use std::fmt;

/// A configuration a simulator ([`asat_sim`](crate::asat_sim), [`pools_sim`](crate::pools_sim))
/// cannot run. Every message says what was wrong and what is allowed, for example
/// `pools simulator: load 1.2: must be above 0 and below 1`.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

#[derive(Debug)]
enum ErrorKind {
    /// A setting of the simulator `model` (`asat`, `pools`).
    Config {
        model: &'static str,
        message: String,
    },
}

impl Error {
    /// A setting of `model`'s simulator out of range: `message` says which and what is allowed.
    pub(crate) fn config(model: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Config {
                model,
                message: message.into(),
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Config { model, message } => write!(f, "{model} simulator: {message}"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_simulator() {
        let e = Error::config("pools", "load 1.2: must be above 0 and below 1");
        assert_eq!(
            e.to_string(),
            "pools simulator: load 1.2: must be above 0 and below 1"
        );
    }
}
