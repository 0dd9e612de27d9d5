//! The system calls the runtime needs (Linux): thread ids, CPU affinity, CPU quota, time
//! slices, the futex, private shared files; and the thread-local pointer to the runtime installed on a
//! thread. All `unsafe` of asat-core lives here.

pub(crate) mod affinity;
pub(crate) mod clock;
pub(crate) mod fork;
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod futex;
pub(crate) mod handoff;
pub(crate) mod private_file;
pub(crate) mod scoped;
pub(crate) mod shared_map;
#[cfg_attr(loom, allow(dead_code))]
pub(crate) mod slice;
pub(crate) mod thread;
