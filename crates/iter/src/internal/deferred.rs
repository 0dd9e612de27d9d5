//! Sources whose items are made at the first terminal call, from an input kept until then:
//! the owned items of a `Vec` from there on (used by `split`, the tree walks, and
//! `intersperse` on an unindexed iterator).

use std::sync::{Mutex, OnceLock, PoisonError};

use crate::source::sources::clone_of;
use crate::source::vec::IntoIter;
use crate::IntoParallelIterator;

/// An input, taken once to make items of type `T`, which are then shared out as a `Vec`'s.
pub(crate) struct Deferred<In, T = In> {
    input: Mutex<Option<In>>,
    items: OnceLock<IntoIter<T>>,
}

/// A clone holds a clone of the input, or of the items once they are made (then only those
/// not moved out yet: see [`IntoIter`]'s `Clone`).
impl<In: Clone, T: Clone> Clone for Deferred<In, T> {
    fn clone(&self) -> Self {
        Deferred {
            input: Mutex::new(clone_of(&self.input)),
            items: self.items.clone(),
        }
    }
}

impl<In, T> Deferred<In, T> {
    /// Whether the items were made.
    pub(crate) fn made(&self) -> bool {
        self.items.get().is_some()
    }
}

impl<In, T: Send> Deferred<In, T> {
    pub(crate) fn new(input: In) -> Self {
        Deferred {
            input: Mutex::new(Some(input)),
            items: OnceLock::new(),
        }
    }

    /// The items, made from the input by `make` at the first call. The input is taken
    /// before `make` runs, so a call after one whose `make` panicked has no items (a
    /// producer's input is never read twice).
    pub(crate) fn items(&self, make: impl FnOnce(In) -> Vec<T>) -> &IntoIter<T> {
        self.items.get_or_init(|| {
            let input = self
                .input
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            input.map_or_else(Vec::new, make).into_par_iter()
        })
    }
}
