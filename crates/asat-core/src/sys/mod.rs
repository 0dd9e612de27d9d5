//! The system calls the runtime needs (Linux): thread ids, CPU affinity, CPU quota. All
//! `unsafe` of asat-core lives here.

pub(crate) mod affinity;
pub(crate) mod thread;
