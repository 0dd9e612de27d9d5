//! The time slice the kernel gives the calling thread: `sched_getattr` / `sched_setattr`.
//!
//! Since Linux 6.12 (EEVDF), the `sched_runtime` of a `SCHED_OTHER` or `SCHED_BATCH` thread is
//! the slice it asks for (the kernel clamps it to 0.1-100 ms; 0 asks for the kernel's default
//! slice), and `sched_getattr` reports the slice in force, the default one included (1.4 ms
//! on this project's 2-CPU machine). Older kernels accept the field, ignore it, and report 0.

use std::io;

/// `struct sched_attr` as `SCHED_ATTR_SIZE_VER0` (48 bytes) lays it out.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
}

const ATTR_SIZE: u32 = 48;
const _: () = assert!(std::mem::size_of::<SchedAttr>() == ATTR_SIZE as usize);
const SCHED_OTHER: u32 = 0;
const SCHED_BATCH: u32 = 3;
const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;

/// What `sched_setattr` must be given back to change only a fair-class thread's slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FairAttr {
    policy: u32,
    pub(crate) nice: i32,
    pub(crate) reset_on_fork: bool,
    /// The slice in force, in ns, as the kernel reports it.
    pub(crate) slice_ns: u64,
}

impl FairAttr {
    /// These attributes with the reset-on-fork flag `flag`.
    pub(crate) fn with_reset_on_fork(self, flag: bool) -> Self {
        Self {
            reset_on_fork: flag,
            ..self
        }
    }
}

#[cfg(test)]
impl FairAttr {
    /// A `SCHED_OTHER` thread of nice 0 asking for `slice_ns`.
    pub(crate) fn for_tests(slice_ns: u64) -> Self {
        Self {
            policy: SCHED_OTHER,
            nice: 0,
            reset_on_fork: false,
            slice_ns,
        }
    }
}

/// The calling thread's attributes when it is in the fair class (`SCHED_OTHER` or
/// `SCHED_BATCH`); `None` for real-time, deadline and `SCHED_IDLE` threads.
pub(crate) fn fair_attr() -> io::Result<Option<FairAttr>> {
    let attr = getattr()?;
    Ok(
        matches!(attr.policy, SCHED_OTHER | SCHED_BATCH).then_some(FairAttr {
            policy: attr.policy,
            nice: attr.nice,
            reset_on_fork: attr.flags & SCHED_FLAG_RESET_ON_FORK != 0,
            slice_ns: attr.runtime,
        }),
    )
}

/// The calling thread's `sched_attr`.
fn getattr() -> io::Result<SchedAttr> {
    let mut attr = SchedAttr::default();
    // SAFETY: `attr` is a valid, writable `sched_attr` of `ATTR_SIZE` bytes, the size passed;
    // the kernel writes at most that many. pid 0 is the calling thread; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            ATTR_SIZE,
            0,
        )
    };
    if rc == 0 {
        Ok(attr)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Asks for a slice of `slice_ns` for the calling thread (0: the kernel's default), keeping
/// the policy, nice value and reset-on-fork flag of `attr`, read before by [`fair_attr`].
pub(crate) fn set_slice(attr: &FairAttr, slice_ns: u64) -> io::Result<()> {
    setattr(attr, slice_ns, attr.reset_on_fork)
}

/// [`set_slice`] with the reset-on-fork flag set whatever `attr`'s: threads the calling thread
/// creates meanwhile start with the kernel's default slice instead of inheriting this one
/// (and, as the flag does, with a nice value of at least 0 and default utilisation clamps).
pub(crate) fn set_slice_not_inherited(attr: &FairAttr, slice_ns: u64) -> io::Result<()> {
    setattr(attr, slice_ns, true)
}

fn setattr(attr: &FairAttr, slice_ns: u64, reset_on_fork: bool) -> io::Result<()> {
    let raw = SchedAttr {
        size: ATTR_SIZE,
        policy: attr.policy,
        flags: if reset_on_fork {
            SCHED_FLAG_RESET_ON_FORK
        } else {
            0
        },
        nice: attr.nice,
        runtime: slice_ns,
        ..SchedAttr::default()
    };
    // SAFETY: `raw` is a valid `sched_attr` whose `size` field says how much of it the kernel
    // reads; the kernel only reads it. pid 0 is the calling thread; flags must be 0.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &raw as *const SchedAttr, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Raw access for tests: the calling thread's policy, nice value and slice, and setting them.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// `SCHED_IDLE`: not in the fair class as asat counts it.
    pub(crate) const SCHED_IDLE: u32 = 5;

    /// The calling thread's policy, nice value and requested slice (ns).
    pub(crate) fn get() -> (u32, i32, u64) {
        let attr = getattr().expect("sched_getattr");
        (attr.policy, attr.nice, attr.runtime)
    }

    /// Whether the calling thread's reset-on-fork flag is set.
    pub(crate) fn resets_on_fork() -> bool {
        getattr().expect("sched_getattr").flags & SCHED_FLAG_RESET_ON_FORK != 0
    }

    /// Sets the calling thread's policy (a non-real-time one), nice value and slice.
    pub(crate) fn set(policy: u32, nice: i32, slice_ns: u64) -> io::Result<()> {
        let attr = FairAttr {
            policy,
            nice,
            reset_on_fork: false,
            slice_ns,
        };
        set_slice(&attr, slice_ns)
    }

    /// The slice this kernel gives a thread that asks for none, and whether it grants a
    /// thread the slice it asks for (Linux 6.12 and later), tried on a thread of its own.
    pub(crate) fn kernel_slices() -> (u64, bool) {
        std::thread::spawn(|| {
            set(SCHED_OTHER, 0, 0).unwrap();
            let default = get().2;
            (
                default,
                set(SCHED_OTHER, 0, 5_000_000).is_ok() && get().2 == 5_000_000,
            )
        })
        .join()
        .unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn a_slice_is_set_keeping_the_nice_value_and_policy() {
        std::thread::spawn(|| {
            // Raising one's own nice value needs no privilege.
            set(SCHED_BATCH, 5, 0).unwrap();
            let attr = fair_attr()
                .unwrap()
                .expect("SCHED_BATCH is in the fair class");
            set_slice(&attr, 20_000_000).unwrap();
            let (default, grants) = kernel_slices();
            assert_eq!(
                get(),
                (SCHED_BATCH, 5, if grants { 20_000_000 } else { default })
            );
            set_slice(&fair_attr().unwrap().unwrap(), 0).unwrap();
            assert_eq!(get(), (SCHED_BATCH, 5, default));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn an_idle_thread_is_not_in_the_fair_class() {
        std::thread::spawn(|| {
            set(SCHED_IDLE, 0, 0).unwrap();
            assert_eq!(fair_attr().unwrap(), None);
        })
        .join()
        .unwrap();
    }
}
