//! Property tests of the rest of rayon's `collect` targets and `par_extend` impls: boxed and
//! shared slices, heaps, `Cow`, strings from `&char`, `Box<str>` and `Cow<str>`, OS strings,
//! pairs of collections from pairs and from `Either`s; heaps, lists, sets and maps extended with
//! references, strings and OS strings with pieces, pairs of collections; and `opt_len`. Each
//! gives what std's sequential `collect` / `extend` gives, in order where the target has one,
//! for random contents, splitting hints and team sizes (also one that changes between calls).

mod iter_support;

use asat::iter::Either;
use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList};
use std::ffi::{OsStr, OsString};
use std::rc::Rc;
use std::sync::Arc;

fn os_cow(w: &String) -> Cow<'_, OsStr> {
    Cow::Borrowed(OsStr::new(w))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn slices_heaps_and_cows_collect_in_order(v in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let b: Box<[i64]> = s.split(v.par_iter()).map(|x| x * 3).collect();
            prop_assert_eq!(&*b, &v.iter().map(|x| x * 3).collect::<Vec<_>>()[..]);
            let r: Rc<[i64]> = s.split(v.par_iter()).copied().collect();
            prop_assert_eq!(&*r, &v[..]);
            let even = |x: &i64| x % 2 == 0;
            let a: Arc<[i64]> = s.split(v.par_iter()).copied().filter(even).collect();
            let want: Vec<i64> = v.iter().copied().filter(even).collect();
            prop_assert_eq!(&*a, &want[..]);
            let h: BinaryHeap<i64> = s.split(v.par_iter()).copied().collect();
            let want: BinaryHeap<i64> = v.iter().copied().collect();
            prop_assert_eq!(h.into_sorted_vec(), want.into_sorted_vec());
            let c: Cow<'_, [i64]> = s.split(v.par_iter()).copied().collect();
            prop_assert!(matches!(c, Cow::Owned(_)));
            prop_assert_eq!(&*c, &v[..]);
            Ok(())
        })?;
    }

    #[test]
    fn strings_collect_their_pieces_in_order(v in values(0..2000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let letter = |x: &i64| char::from_u32(*x as u32 + 0x61).unwrap();
            let chars: Vec<char> = v.iter().map(letter).collect();
            let want: String = chars.iter().collect();
            let got: String = s.split(chars.par_iter()).collect();
            prop_assert_eq!(&got, &want);
            let words: Vec<String> = v.iter().map(|x| format!("{x},")).collect();
            let want: String = words.concat();
            let boxed = |w: &String| w.clone().into_boxed_str();
            let got: String = s.split(words.par_iter()).map(boxed).collect();
            prop_assert_eq!(&got, &want);
            let got: String = s.split(words.par_iter())
                .enumerate()
                .map(|(i, w)| match i % 2 {
                    0 => Cow::Borrowed(w.as_str()),
                    _ => Cow::Owned(w.clone()),
                })
                .collect();
            prop_assert_eq!(&got, &want);
            let want_os = OsString::from(&want);
            let got: OsString = s.split(words.par_iter()).map(OsStr::new).collect();
            prop_assert_eq!(&got, &want_os);
            let got: OsString = s.split(words.par_iter()).map(OsString::from).collect();
            prop_assert_eq!(&got, &want_os);
            let got: OsString = s.split(words.par_iter()).map(os_cow).collect();
            prop_assert_eq!(&got, &want_os);
            Ok(())
        })?;
    }

    #[test]
    fn pairs_collect_into_two_collections(v in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let (a, b): (Vec<i64>, BTreeSet<i64>) =
                s.split(v.par_iter()).map(|&x| (x, x / 7)).collect();
            prop_assert_eq!(&a, &v);
            prop_assert_eq!(b, v.iter().map(|x| x / 7).collect::<BTreeSet<_>>());
            let (l, r): (Vec<i64>, Box<[i64]>) = s.split(v.par_iter())
                .map(|&x| if x % 3 == 0 { Either::Left(x) } else { Either::Right(x) })
                .collect();
            let (wl, wr): (Vec<i64>, Vec<i64>) = v.iter().partition(|x| *x % 3 == 0);
            prop_assert_eq!(l, wl);
            prop_assert_eq!(&*r, &wr[..]);
            Ok(())
        })?;
    }

    #[test]
    fn collections_extend_with_references_and_pieces(v in values(-500..500), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let mut h: BinaryHeap<i64> = [5, -5].into();
            h.par_extend(s.split(v.par_iter()));
            h.par_extend(s.split(v.par_iter()).map(|x| x + 1));
            let mut want: BinaryHeap<i64> = [5, -5].into();
            want.extend(v.iter().copied());
            want.extend(v.iter().map(|x| x + 1));
            prop_assert_eq!(h.into_sorted_vec(), want.into_sorted_vec());
            let mut l: LinkedList<i64> = LinkedList::from([1]);
            l.par_extend(s.split(v.par_iter()));
            prop_assert!(l.iter().copied().eq(std::iter::once(1).chain(v.iter().copied())));
            let mut bs = BTreeSet::new();
            bs.par_extend(s.split(v.par_iter()));
            prop_assert_eq!(&bs, &v.iter().copied().collect::<BTreeSet<_>>());
            let mut hs = HashSet::new();
            hs.par_extend(s.split(v.par_iter()));
            prop_assert_eq!(hs, v.iter().copied().collect::<HashSet<_>>());
            let keys: Vec<i64> = v.iter().map(|x| x * 2).collect();
            let mut bm = BTreeMap::new();
            bm.par_extend(s.split(keys.par_iter().zip(&v)));
            let want: BTreeMap<i64, i64> = keys.iter().copied().zip(v.iter().copied()).collect();
            prop_assert_eq!(&bm, &want);
            let mut hm = HashMap::new();
            hm.par_extend(s.split(keys.par_iter().zip(&v)));
            prop_assert_eq!(hm, want.into_iter().collect::<HashMap<_, _>>());

            let words: Vec<String> = v.iter().map(|x| format!("{x};")).collect();
            let mut st = String::from(">");
            st.par_extend(s.split(words.par_iter()).map(|w| w.clone().into_boxed_str()));
            st.par_extend(s.split(words.par_iter()).map(|w| Cow::Borrowed(w.as_str())));
            prop_assert_eq!(&st, &format!(">{}{}", words.concat(), words.concat()));
            let mut os = OsString::from(">");
            os.par_extend(s.split(words.par_iter()).map(OsStr::new));
            os.par_extend(s.split(words.par_iter()).map(OsString::from));
            os.par_extend(s.split(words.par_iter()).map(|w| Cow::Borrowed(OsStr::new(w))));
            prop_assert_eq!(os, OsString::from(format!(">{}", words.concat().repeat(3))));

            let mut pair: (Vec<i64>, Vec<i64>) = (vec![0], Vec::new());
            pair.par_extend(s.split(v.par_iter()).map(|&x| (x, -x)));
            let side = |&x: &i64| if x > 0 { Either::Left(x) } else { Either::Right(x) };
            pair.par_extend(s.split(v.par_iter()).map(side));
            let mut want = (vec![0], Vec::new());
            want.0.extend(v.iter().copied());
            want.1.extend(v.iter().map(|x| -x));
            want.0.extend(v.iter().copied().filter(|&x| x > 0));
            want.1.extend(v.iter().copied().filter(|&x| x <= 0));
            prop_assert_eq!(pair, want);
            Ok(())
        })?;
    }

    #[test]
    fn opt_len_is_known_for_indexed_iterators_only(v in values(-100..100), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(s.split(v.par_iter()).map(|x| x + 1).opt_len(), Some(v.len()));
            let half = &v[v.len() / 2..];
            prop_assert_eq!(v.par_iter().zip(half).opt_len(), Some(half.len()));
            prop_assert_eq!(v.par_iter().step_by(3).opt_len(), Some(v.len().div_ceil(3)));
            prop_assert_eq!(v.par_iter().filter(|x| **x > 0).opt_len(), None);
            prop_assert_eq!(v.par_iter().flat_map(|x| vec![*x; 2]).opt_len(), None);
            Ok(())
        })?;
    }
}

/// A `u128` range's length is known (it stands one item at each index), and the adapters that
/// make one item of each of their base's pass it on, as rayon's `opt_len` does; those that
/// drop or add items do not.
#[test]
fn opt_len_passes_a_wide_ranges_length_through_the_adapters_that_keep_items() {
    const N: u128 = 1000;
    let wide = || (0..N).into_par_iter();
    let x = 7u8;
    let keep: [Option<usize>; 10] = [
        wide().map(|i| i + 1).opt_len(),
        wide().inspect(|_| ()).opt_len(),
        wide().update(|i| *i += 1).opt_len(),
        wide().map(|_| &x).copied().opt_len(),
        wide().map(|_| &x).cloned().opt_len(),
        wide().map_init(|| 1, |a, i| i + *a).opt_len(),
        wide().map_with(1, |a, i| i + *a).opt_len(),
        wide().panic_fuse().opt_len(),
        Either::<_, asat::iter::range::Iter<u128>>::Left(wide()).opt_len(),
        wide().chain(wide()).opt_len().map(|n| n / 2),
    ];
    assert_eq!(keep, [Some(N as usize); 10]);
    assert_eq!(wide().filter(|_| true).opt_len(), None);
    assert_eq!(wide().chain(wide().filter(|_| true)).opt_len(), None);
    assert_eq!(wide().flat_map_iter(Some).opt_len(), None);
    // two lengths whose sum is no `usize`
    let big = || (0..usize::MAX as u128 - 1).into_par_iter();
    assert_eq!(big().opt_len(), Some(usize::MAX - 1));
    assert_eq!(big().chain(big()).opt_len(), None);
}
