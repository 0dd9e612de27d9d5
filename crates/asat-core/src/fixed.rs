//! The fixed-thread and single-thread policies.

use crate::{Error, Plan, Policy, RegionStart, RuntimeInfo};

/// Fixed-thread scheduling, as rayon and OpenMP do: every region gets the same team size.
///
/// ```
/// use asat_core::{Fixed, Runtime};
/// let rt = Runtime::builder().max_threads(2).policy(Fixed::new(2)).build().unwrap();
/// assert!(Runtime::builder().max_threads(2).policy(Fixed::new(3)).build().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixed {
    threads: Option<usize>,
}

impl Fixed {
    /// A team of `threads` for every region; `build()` fails unless
    /// `1 <= threads <= max_threads`.
    pub const fn new(threads: usize) -> Self {
        Self {
            threads: Some(threads),
        }
    }

    /// A team of `max_threads` for every region.
    pub const fn all() -> Self {
        Self { threads: None }
    }
}

impl Policy for Fixed {
    fn name(&self) -> &str {
        "fixed"
    }

    fn attach(&self, rt: &RuntimeInfo) -> Result<(), Error> {
        match self.threads {
            Some(n) if n == 0 || n > rt.max_threads => {
                Err(Error::team_too_large(self.name(), n, rt.max_threads))
            }
            _ => Ok(()),
        }
    }

    fn plan(&self, start: &RegionStart) -> Plan {
        Plan::run(self.threads.unwrap_or(start.max_threads))
    }

    fn task_workers(&self, max_threads: usize) -> usize {
        self.threads.unwrap_or(max_threads)
    }
}

/// Every region runs on the calling thread alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Single;

impl Policy for Single {
    fn name(&self) -> &str {
        "single"
    }

    fn plan(&self, _start: &RegionStart) -> Plan {
        Plan::run(1)
    }

    fn task_workers(&self, _max_threads: usize) -> usize {
        1
    }
}
