//! What the shared gang domain needs from the system: the mapping of the domain file with its
//! open-file-description locks ([`SharedMap`], asat-core's, for files opened and checked by
//! `asat_core::private_file`) and futexes shared between processes (the crate's `sys`).

pub(crate) use asat_core::private_file::SharedMap;

pub(crate) use crate::sys::{shared_futex_wait, shared_futex_wake_all};
