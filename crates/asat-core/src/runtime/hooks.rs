//! What a runtime's threads are started with: the names, start and stop hooks, stack size,
//! panic handler and solo slice that the [`Builder`](crate::Builder) was given.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

pub(crate) type NameFn = dyn Fn(usize) -> String + Send + Sync;
pub(crate) type HookFn = dyn Fn(usize) + Send + Sync;
pub(crate) type PanicFn = dyn Fn(Box<dyn Any + Send>) + Send + Sync;

#[derive(Clone, Default)]
pub(crate) struct Hooks {
    pub(crate) name: Option<Arc<NameFn>>,
    pub(crate) on_start: Option<Arc<HookFn>>,
    pub(crate) on_stop: Option<Arc<HookFn>>,
    pub(crate) stack_size: Option<usize>,
    pub(crate) panic_handler: Option<Arc<PanicFn>>,
    /// The slice a thread running a team of one asks for ([`Builder::solo_slice`](crate::Builder::solo_slice)).
    pub(crate) solo_slice: Option<Duration>,
}

impl Hooks {
    pub(crate) fn thread_name(&self, index: usize) -> String {
        match &self.name {
            Some(f) => f(index),
            None => format!("asat-worker-{index}"),
        }
    }

    /// The name the user gave worker `index` ([`Builder::thread_name`](crate::Builder::thread_name)), if any: what a
    /// [`ThreadBuilder`](crate::ThreadBuilder) reports.
    pub(crate) fn user_thread_name(&self, index: usize) -> Option<String> {
        self.name.as_ref().map(|f| f(index))
    }

    /// Whether the runtime's threads carry what the program gave them, which the threads that
    /// call in lack: a name of the user's, or a start handler (see
    /// [`Runtime::hands_calls_over`](crate::Runtime::hands_calls_over)).
    pub(crate) fn marks_threads(&self) -> bool {
        self.name.is_some() || self.on_start.is_some()
    }

    /// The name of the spawn thread in `slot` (see [`Runtime::spawn`](crate::Runtime::spawn)): the user's name
    /// function's, else `asat-spawn-{slot}`.
    pub(crate) fn spawn_thread_name(&self, slot: usize) -> String {
        match &self.name {
            Some(f) => f(slot),
            None => format!("asat-spawn-{slot}"),
        }
    }
}
