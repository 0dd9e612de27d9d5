//! Property tests of the slice and string sources beyond chunks and windows: `par_rchunks`
//! (and `_exact`, `_mut`, `_exact_mut`), `par_split`, `par_split_inclusive`, `par_chunk_by`
//! and their `_mut` forms, and `ParallelString` (`par_chars`, `par_char_indices`, `par_bytes`,
//! `par_encode_utf16`, `par_split`, `par_split_inclusive`, `par_split_terminator`, `par_lines`,
//! `par_split_whitespace`, `par_split_ascii_whitespace`, `par_matches`, `par_match_indices`)
//! give what std's methods of the same names give, for random data (strings of one- to
//! four-byte chars, separators anywhere, at the ends and side by side), splitting hints and team
//! sizes.
//!
//! Runtimes are shared by the cases (built once, in `iter_support`: fixed teams of 1 to 4 and one
//! whose team size cycles).

mod iter_support;

use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Strings of chars of every UTF-8 length, with separators (`,`, `\n`, `\r`, spaces) often.
fn text() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        Just(','),
        Just('\n'),
        Just('\r'),
        Just(' '),
        Just('\u{3000}'), // ideographic space: whitespace, three bytes
        Just('a'),
        Just('é'),
        Just('€'),
        Just('😀'),
        any::<char>(),
    ];
    prop_oneof![
        proptest::collection::vec(c.clone(), 0..8),
        proptest::collection::vec(c, 0..600),
    ]
    .prop_map(|cs| cs.into_iter().collect())
}

/// `it` (unindexed: no `with_min_len` or `with_max_len`) with the case's schedule, or dynamic
/// pieces of its `max_len`.
fn hinted<I: ParallelIterator>(s: &Setup, it: I) -> asat::iter::indexed::Hinted<I> {
    it.with_schedule(match s.split.schedule {
        Some(schedule) => schedule,
        None if s.split.max_len > 0 => asat::Schedule::dynamic(s.split.max_len),
        None => asat::Schedule::Static,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn slice_sources_equal_std(v in values(-3..3), size in 1usize..40, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(s.split(v.par_rchunks(size)).collect::<Vec<_>>(), v.rchunks(size).collect::<Vec<_>>());
            prop_assert_eq!(s.split(v.par_rchunks(size).rev()).collect::<Vec<_>>(), v.rchunks(size).rev().collect::<Vec<_>>());
            let exact = v.par_rchunks_exact(size);
            prop_assert_eq!(exact.remainder(), v.rchunks_exact(size).remainder());
            prop_assert_eq!(s.split(exact).collect::<Vec<_>>(), v.rchunks_exact(size).collect::<Vec<_>>());
            let mut w = v.clone();
            s.split(w.par_rchunks_mut(size).enumerate()).for_each(|(i, c)| c.iter_mut().for_each(|x| *x = i as i64));
            let mut want = v.clone();
            want.rchunks_mut(size).enumerate().for_each(|(i, c)| c.iter_mut().for_each(|x| *x = i as i64));
            prop_assert_eq!(&w, &want);
            let mut w = v.clone();
            s.split(w.par_rchunks_exact_mut(size).rev()).for_each(|c| c.reverse());
            let mut want = v.clone();
            want.rchunks_exact_mut(size).for_each(|c| c.reverse());
            prop_assert_eq!(&w, &want);
            // splits at zeros, chunk_by runs of equal or rising values
            let zero = |x: &i64| *x == 0;
            prop_assert_eq!(hinted(&s, v.par_split(zero)).collect::<Vec<_>>(), v.split(zero).collect::<Vec<_>>());
            prop_assert_eq!(
                hinted(&s, v.par_split_inclusive(zero)).collect::<Vec<_>>(),
                v.split_inclusive(zero).collect::<Vec<_>>()
            );
            let rising = |a: &i64, b: &i64| a <= b;
            prop_assert_eq!(hinted(&s, v.par_chunk_by(rising)).collect::<Vec<_>>(), v.chunk_by(rising).collect::<Vec<_>>());
            prop_assert_eq!(v.par_chunk_by(|a, b| a == b).count(), v.chunk_by(|a, b| a == b).count());
            // the _mut forms: each piece marked with its number
            let mark = |pieces: Vec<&mut [i64]>| {
                for (i, p) in pieces.into_iter().enumerate() {
                    p.iter_mut().for_each(|x| *x = *x * 100 + i as i64);
                }
            };
            let (mut got, mut want) = (v.clone(), v.clone());
            let n = s.split(got.par_split_mut(zero)).enumerate().map(|(i, p)| {
                p.iter_mut().for_each(|x| *x = *x * 100 + i as i64);
            }).count();
            mark(want.split_mut(zero).collect());
            prop_assert_eq!(n, v.split(zero).count());
            prop_assert_eq!(&got, &want);
            let (mut got, mut want) = (v.clone(), v.clone());
            s.split(got.par_split_inclusive_mut(zero).enumerate()).for_each(|(i, p)| {
                p.iter_mut().for_each(|x| *x = *x * 100 + i as i64);
            });
            mark(want.split_inclusive_mut(zero).collect());
            prop_assert_eq!(&got, &want);
            let (mut got, mut want) = (v.clone(), v.clone());
            s.split(got.par_chunk_by_mut(rising).enumerate().rev()).for_each(|(i, p)| {
                p.iter_mut().for_each(|x| *x = *x * 100 + i as i64);
            });
            mark(want.chunk_by_mut(rising).collect());
            prop_assert_eq!(&got, &want);
            Ok(())
        })?;
    }

    #[test]
    fn chunk_by_mut_over_block_edges(runs in proptest::collection::vec(1usize..3000, 0..6), s in setup()) {
        // runs of equal values whose edges fall anywhere, also on the pass's block edges
        let v: Vec<usize> = runs.iter().enumerate().flat_map(|(i, &n)| std::iter::repeat_n(i, n)).collect();
        s.run(|| -> Result<(), TestCaseError> {
            let mut w = v.clone();
            let lens: Vec<usize> = s.split(w.par_chunk_by_mut(|a, b| a == b)).map(|p| p.len()).collect();
            prop_assert_eq!(lens, runs.clone());
            let lens: Vec<usize> = hinted(&s, v.par_chunk_by(|a, b| a == b)).map(<[usize]>::len).collect();
            prop_assert_eq!(lens, runs.clone());
            Ok(())
        })?;
    }

    #[test]
    fn strings_equal_std(t in text(), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            let t = t.as_str();
            prop_assert_eq!(hinted(&s, t.par_chars()).collect::<String>(), t.to_owned());
            prop_assert_eq!(hinted(&s, t.par_char_indices()).collect::<Vec<_>>(), t.char_indices().collect::<Vec<_>>());
            prop_assert_eq!(s.split(t.par_bytes()).collect::<Vec<u8>>(), t.as_bytes().to_vec());
            prop_assert_eq!(t.par_bytes().rev().collect::<Vec<u8>>(), t.bytes().rev().collect::<Vec<_>>());
            prop_assert_eq!(hinted(&s, t.par_encode_utf16()).collect::<Vec<_>>(), t.encode_utf16().collect::<Vec<_>>());
            // every kind of pattern
            let got: Vec<Vec<&str>> = vec![
                t.par_split(',').collect(),
                t.par_split([',', '€']).collect(),
                t.par_split(&['\n', '😀'][..]).collect(),
                t.par_split(&[' ', 'a']).collect(),
                t.par_split(char::is_whitespace).collect(),
            ];
            let want: Vec<Vec<&str>> = vec![
                t.split(',').collect(),
                t.split([',', '€']).collect(),
                t.split(&['\n', '😀'][..]).collect(),
                t.split(&[' ', 'a']).collect(),
                t.split(char::is_whitespace).collect(),
            ];
            prop_assert_eq!(got, want);
            prop_assert_eq!(hinted(&s, t.par_split(',')).collect::<Vec<_>>(), t.split(',').collect::<Vec<_>>());
            prop_assert_eq!(
                hinted(&s, t.par_split_inclusive('é')).collect::<Vec<_>>(),
                t.split_inclusive('é').collect::<Vec<_>>()
            );
            prop_assert_eq!(
                hinted(&s, t.par_split_terminator(&[',', '\n'])).collect::<Vec<_>>(),
                t.split_terminator(&[',', '\n']).collect::<Vec<_>>()
            );
            prop_assert_eq!(hinted(&s, t.par_lines()).collect::<Vec<_>>(), t.lines().collect::<Vec<_>>());
            prop_assert_eq!(
                hinted(&s, t.par_split_whitespace()).collect::<Vec<_>>(),
                t.split_whitespace().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                hinted(&s, t.par_split_ascii_whitespace()).collect::<Vec<_>>(),
                t.split_ascii_whitespace().collect::<Vec<_>>()
            );
            let vowel = |c: char| "aeiouéAEIOU".contains(c);
            prop_assert_eq!(hinted(&s, t.par_matches(vowel)).collect::<Vec<_>>(), t.matches(vowel).collect::<Vec<_>>());
            prop_assert_eq!(
                hinted(&s, t.par_match_indices(['€', ' '])).collect::<Vec<_>>(),
                t.match_indices(['€', ' ']).collect::<Vec<_>>()
            );
            let owned = t.to_owned();
            prop_assert_eq!(owned.par_split('\r').count(), t.split('\r').count());
            Ok(())
        })?;
    }
}

#[test]
fn zero_sizes_are_refused() {
    let v = [1, 2, 3];
    let mut w = v;
    let msg = |f: &mut dyn FnMut()| message(&*catch_unwind(AssertUnwindSafe(f)).unwrap_err());
    assert_eq!(
        msg(&mut || drop(v.par_rchunks(0))),
        "par_rchunks: chunk_size must not be zero (it must be at least 1)"
    );
    assert_eq!(
        msg(&mut || drop(v.par_rchunks_exact(0))),
        "par_rchunks_exact: chunk_size must not be zero (it must be at least 1)"
    );
    assert_eq!(
        msg(&mut || drop(w.par_rchunks_mut(0))),
        "par_rchunks_mut: chunk_size must not be zero (it must be at least 1)"
    );
    assert_eq!(
        msg(&mut || drop(v.par_iter().chunks(0))),
        "chunks: chunk_size must not be zero (it must be at least 1)"
    );
    assert_eq!(
        msg(&mut || drop(v.par_windows(0))),
        "par_windows: window size 0: must be at least 1"
    );
    assert_eq!(
        msg(&mut || drop(v.par_array_windows::<0>())),
        "par_array_windows: window size 0: must be at least 1"
    );
    assert_eq!(
        msg(&mut || drop(v.par_iter().by_uniform_blocks(0))),
        "by_uniform_blocks: block_size must not be zero (it must be at least 1)"
    );
}

/// A panicking separator or run test reaches the caller (also from the `_mut` forms' pass
/// that finds the pieces), and the runtime stays usable.
#[test]
fn panics_in_split_predicates_propagate() {
    for rt in 0..RUNTIMES {
        runtime(rt).install(|| {
            let mut v: Vec<u32> = (0..5000).collect();
            let r = catch_unwind(AssertUnwindSafe(|| {
                v.par_split(|&x| {
                    if x == 4321 {
                        panic!("sep 4321")
                    } else {
                        x % 10 == 0
                    }
                })
                .count()
            }));
            assert_eq!(message(&*r.unwrap_err()), "sep 4321");
            let r = catch_unwind(AssertUnwindSafe(|| {
                v.par_split_mut(|&x| {
                    if x == 4321 {
                        panic!("sep 4321")
                    } else {
                        x % 10 == 0
                    }
                })
                .for_each(|p| p.fill(0))
            }));
            assert_eq!(message(&*r.unwrap_err()), "sep 4321");
            assert!(
                v.iter().enumerate().all(|(i, &x)| x == i as u32),
                "nothing was handed out"
            );
            let r = catch_unwind(AssertUnwindSafe(|| {
                v.par_chunk_by_mut(|&a, _| if a == 3000 { panic!("run 3000") } else { true })
                    .count()
            }));
            assert_eq!(message(&*r.unwrap_err()), "run 3000");
            v.par_split_mut(|x| x % 10 == 0).for_each(|p| p.fill(1));
            assert_eq!(v.iter().filter(|&&x| x == 1).count(), 4500, "runtime {rt}");
        });
    }
}
