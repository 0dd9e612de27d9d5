//! The parallel iterator of an array by value: moved into a `Vec`, its items moved out (as a
//! `Vec`'s are, by [`vec::IntoIter`](crate::vec::IntoIter)).

use crate::IntoParallelIterator;

/// By value.
pub type IntoIter<T, const N: usize> = crate::source::vec::IntoIter<T>;

/// Arrays by value move their items out, as `Vec`s do.
impl<T: Send, const N: usize> IntoParallelIterator for [T; N] {
    type Iter = IntoIter<T, N>;
    type Item = T;

    fn into_par_iter(self) -> Self::Iter {
        Vec::from(self).into_par_iter()
    }
}
