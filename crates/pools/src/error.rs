//! The error type of asat-pools.

use std::fmt;
use std::path::PathBuf;

/// An error from reading a topology, forming pools, opening the load table or building the
/// policy.
///
/// Every message says what was wrong and what is allowed, for example
/// `pool size 0: must be between 1 and 16 CPUs`.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
}

/// Where the folder of a table came from.
#[derive(Debug)]
pub(crate) enum Folder {
    /// `ASAT_POOLS_SHM_DIR`, with this value.
    Env(std::ffi::OsString),
    /// The user's default folder (`$XDG_RUNTIME_DIR` or `/dev/shm/asat-u{uid}`).
    Default,
    /// A folder the caller named, or the error is about the file.
    Other,
}

#[derive(Debug)]
enum ErrorKind {
    PoolSizeZero {
        cpus: usize,
    },
    PoolSizeTooLarge {
        size: usize,
        cpus: usize,
    },
    PoolSizeNotDividing {
        size: usize,
        cpus: usize,
    },
    NoObjects {
        what: &'static str,
    },
    NoUsableCpus,
    Topology {
        what: String,
        message: String,
    },
    NotThisSystem,
    Pools {
        message: String,
    },
    Table {
        path: PathBuf,
        message: String,
        source: Option<std::io::Error>,
    },
    SharedFile {
        folder: Folder,
        source: asat_core::Error,
    },
    NotMachineWide,
    Policy {
        message: String,
    },
}

impl Error {
    pub(crate) fn pool_size_zero(cpus: usize) -> Self {
        Self::from(ErrorKind::PoolSizeZero { cpus })
    }

    pub(crate) fn pool_size_too_large(size: usize, cpus: usize) -> Self {
        Self::from(ErrorKind::PoolSizeTooLarge { size, cpus })
    }

    pub(crate) fn pool_size_not_dividing(size: usize, cpus: usize) -> Self {
        Self::from(ErrorKind::PoolSizeNotDividing { size, cpus })
    }

    pub(crate) fn no_objects(what: &'static str) -> Self {
        Self::from(ErrorKind::NoObjects { what })
    }

    pub(crate) fn no_usable_cpus() -> Self {
        Self::from(ErrorKind::NoUsableCpus)
    }

    pub(crate) fn topology(what: impl Into<String>, message: impl fmt::Display) -> Self {
        Self::from(ErrorKind::Topology {
            what: what.into(),
            message: message.to_string(),
        })
    }

    pub(crate) fn not_this_system() -> Self {
        Self::from(ErrorKind::NotThisSystem)
    }

    pub(crate) fn pools(message: impl Into<String>) -> Self {
        Self::from(ErrorKind::Pools {
            message: message.into(),
        })
    }

    pub(crate) fn table(
        path: impl Into<PathBuf>,
        message: impl Into<String>,
        source: Option<std::io::Error>,
    ) -> Self {
        Self::from(ErrorKind::Table {
            path: path.into(),
            message: message.into(),
            source,
        })
    }

    /// The table's folder (from `folder`) or file was refused or could not be used.
    pub(crate) fn shared_file(folder: Folder, source: asat_core::Error) -> Self {
        Self::from(ErrorKind::SharedFile { folder, source })
    }

    pub(crate) fn not_machine_wide() -> Self {
        Self::from(ErrorKind::NotMachineWide)
    }

    pub(crate) fn policy(message: impl Into<String>) -> Self {
        Self::from(ErrorKind::Policy {
            message: message.into(),
        })
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Self { kind }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::PoolSizeZero { cpus } => {
                write!(f, "pool size 0: must be between 1 and {cpus} CPUs")
            }
            ErrorKind::PoolSizeTooLarge { size, cpus } => write!(
                f,
                "pool size {size} is larger than the {cpus} usable CPUs: must be between 1 and \
                 {cpus}"
            ),
            ErrorKind::PoolSizeNotDividing { size, cpus } => write!(
                f,
                "pool size {size} does not divide the {cpus} usable CPUs into equal pools: must \
                 be a divisor of {cpus}"
            ),
            ErrorKind::NoObjects { what } => write!(
                f,
                "the topology has no {what} objects: use pools by NUMA node, package or a fixed \
                 size instead"
            ),
            ErrorKind::NoUsableCpus => write!(
                f,
                "no usable CPUs: the process's affinity mask and the topology's CPUs do not \
                 overlap"
            ),
            ErrorKind::Topology { what, message } => {
                write!(f, "cannot load the topology from {what}: {message}")
            }
            ErrorKind::NotThisSystem => write!(
                f,
                "cannot pin threads: the pools come from a topology that is not this system \
                 (synthetic or another machine's XML); build the policy without pinning, or \
                 from the detected topology"
            ),
            ErrorKind::Pools { message } => write!(f, "invalid pools: {message}"),
            ErrorKind::Table { path, message, .. } => {
                write!(f, "load table {}: {message}", path.display())
            }
            ErrorKind::SharedFile { folder, source } => match folder {
                Folder::Env(v) => write!(
                    f,
                    "load table folder from ASAT_POOLS_SHM_DIR={v:?} (must be an absolute path \
                     to a folder of your own): {source}"
                ),
                Folder::Default => write!(
                    f,
                    "load table: {source}; ASAT_POOLS_SHM_DIR can name another folder (an \
                     absolute path to a folder of your own)"
                ),
                Folder::Other => write!(f, "load table: {source}"),
            },
            ErrorKind::NotMachineWide => write!(
                f,
                "the machine-wide load table is only for pools of the detected machine \
                 (Topology::detect), and these pools come from a synthetic or XML topology: give \
                 their jobs a table in a folder of your own (SharedTable::open_in) or a LocalLoads"
            ),
            ErrorKind::Policy { message } => write!(f, "pools policy: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Table {
                source: Some(e), ..
            } => Some(e),
            ErrorKind::SharedFile { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<Error> for asat_core::Error {
    fn from(e: Error) -> Self {
        asat_core::Error::policy("pools", e.to_string())
    }
}
