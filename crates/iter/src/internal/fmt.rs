//! `Debug` for the iterator types that hold a program's closures, as rayon's: the other fields
//! are printed and the closures left out, so that `{:?}` works whatever the closure (which is
//! never `Debug`): `Map { base: Iter { .. }, .. }`.

/// Implements `Debug` for a type holding closures: the fields listed are printed, the others
/// (the closures) elided with `..`. The generics in brackets are the impl's, with their bounds:
/// those of the printed fields are `Debug`, the closures' are left free.
///
/// ```text
/// debug_fields!(impl[I: Debug, F] Map<I, F> { base }); // Map { base: .., .. }
/// debug_fields!(impl[G] InitFn<G> (..)); // a tuple struct of a closure: InitFn(..)
/// ```
macro_rules! debug_fields {
    (impl[$($gen:tt)*] $name:ident $(<$($arg:tt),*>)? { $($field:ident),* }) => {
        impl<$($gen)*> ::std::fmt::Debug for $name $(<$($arg),*>)? {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($name))
                    $(.field(stringify!($field), &self.$field))*
                    .finish_non_exhaustive()
            }
        }
    };
    (impl[$($gen:tt)*] $name:ident $(<$($arg:tt),*>)? (..)) => {
        impl<$($gen)*> ::std::fmt::Debug for $name $(<$($arg),*>)? {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_tuple(stringify!($name)).finish_non_exhaustive()
            }
        }
    };
}

pub(crate) use debug_fields;
