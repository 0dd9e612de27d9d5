//! rayon's custom thread spawning: what
//! [`ThreadPoolBuilder::spawn_handler`](crate::ThreadPoolBuilder::spawn_handler) and
//! [`ThreadPoolBuilder::build_scoped`](crate::ThreadPoolBuilder::build_scoped) give a pool, the
//! [`ThreadBuilder`] a handler is given and the builder's type parameter ([`DefaultSpawn`],
//! [`CustomSpawn`]). The two methods are the builder's, in `global`.
//!
//! Without a handler a pool starts its workers itself, lazily, as regions need them. With one,
//! it starts them all at build through the handler (workers `1..num_threads`: the thread that
//! starts a parallel call is member 0 of its team, so the handler is called `num_threads - 1`
//! times where rayon calls it `num_threads` times), and never calls it again. What a worker
//! that is slow to call [`ThreadBuilder::run`], or never calls it, does to the pool's calls is
//! on [`ThreadBuilder`]; the protocol is in the [`Runtime`](crate::Runtime) module's docs.
//!
//! The threads that run detached jobs ([`spawn`](crate::spawn)) and the closures of
//! [`install`](crate::Runtime::install) are started from whichever thread spawns a job or
//! installs, at any time, which a handler (called during the build only, and neither `Send`
//! nor `'static`) cannot serve: they stay the pool's own threads, handler or not, so
//! thread-locals the handler sets around [`ThreadBuilder::run`] are seen by the members of
//! the pool's calls but not by an `install`'s closure (rayon runs that on one of the handler's
//! threads).

use std::fmt;
use std::io;

use crate::{Error, Runtime, ThreadBuilder};

/// The pool starts its threads itself, lazily (the type parameter of a plain
/// [`ThreadPoolBuilder`](crate::ThreadPoolBuilder), as rayon's `DefaultSpawn`).
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultSpawn;

/// The pool's threads are started by a user's handler at build (the type parameter of a
/// [`ThreadPoolBuilder`](crate::ThreadPoolBuilder) given a [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler), as
/// rayon's `CustomSpawn`).
pub struct CustomSpawn<F>(pub(crate) F);

impl<F> fmt::Debug for CustomSpawn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CustomSpawn")
    }
}

/// What starts a pool's threads: implemented by [`DefaultSpawn`] and [`CustomSpawn`] only.
/// Public in a private module: nameable by no one outside, so no one implements it.
pub trait ThreadSpawn {
    /// Starts the workers of `rt`, just built, that must exist before it is used.
    #[doc(hidden)]
    fn start(&mut self, rt: &Runtime) -> Result<(), Error>;
}

impl ThreadSpawn for DefaultSpawn {
    fn start(&mut self, _rt: &Runtime) -> Result<(), Error> {
        // Workers start lazily, with the regions that need them.
        Ok(())
    }
}

impl<F> ThreadSpawn for CustomSpawn<F>
where
    F: FnMut(ThreadBuilder) -> io::Result<()>,
{
    fn start(&mut self, rt: &Runtime) -> Result<(), Error> {
        rt.start_workers_with(&mut self.0)
    }
}
