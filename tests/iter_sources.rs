//! Property tests of the parallel iterators' sources: ranges of every integer type and of
//! `char`, slices, `Vec`s and arrays, chunks and windows, zips and tuples of sources, `repeat`,
//! `repeat_n`, `once` and `empty` give what std's sequential iterators give, for random
//! lengths, splitting hints (`with_min_len`, `with_max_len`, `with_schedule`) and team sizes.
//!
//! Runtimes are shared by the cases (built once, in `iter_support`: fixed teams of 1 to 4 and one
//! whose team size cycles), so that a case also checks that the calls before it left its runtime
//! clean.

mod iter_support;

use asat::prelude::*;
use iter_support::*;
use proptest::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ranges_of_every_integer_type(
        start in -1000i64..1000,
        n in len(),
        a in any::<u8>(),
        b in any::<u8>(),
        skip in 0usize..100,
        step in 1usize..9,
        take in 0usize..2000,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            let end = start + n as i64;
            prop_assert_eq!(
                s.split((start..end).into_par_iter()).collect::<Vec<_>>(),
                (start..end).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split((start..=end - 1).into_par_iter()).collect::<Vec<_>>(),
                (start..=end - 1).collect::<Vec<_>>()
            );
            // reversed and empty ranges
            prop_assert_eq!(s.split((end..start).into_par_iter()).count(), (end..start).count());
            let (s32, e32) = (start as i32, end as i32);
            prop_assert_eq!(
                s.split((s32..e32).into_par_iter()).map(i64::from).sum::<i64>(),
                (s32..e32).map(i64::from).sum::<i64>()
            );
            let (s16, e16) = (start as i16, end as i16);
            prop_assert_eq!(
                s.split((s16..=e16).into_par_iter()).collect::<Vec<_>>(),
                (s16..=e16).collect::<Vec<_>>()
            );
            let (si, ei) = (start as isize, end as isize);
            prop_assert_eq!(
                s.split((si..ei).into_par_iter()).map(|x| x * x).sum::<isize>(),
                (si..ei).map(|x| x * x).sum::<isize>()
            );
            // small types, up to their maximum
            prop_assert_eq!(
                s.split((a..b).into_par_iter()).collect::<Vec<u8>>(),
                (a..b).collect::<Vec<u8>>()
            );
            prop_assert_eq!(
                s.split((a..=b).into_par_iter()).collect::<Vec<u8>>(),
                (a..=b).collect::<Vec<u8>>()
            );
            prop_assert_eq!((a..=u8::MAX).into_par_iter().len(), (a..=u8::MAX).count());
            let (a8, b8) = (a as i8, b as i8);
            prop_assert_eq!(
                s.split((a8..=b8).into_par_iter()).collect::<Vec<i8>>(),
                (a8..=b8).collect::<Vec<i8>>()
            );
            prop_assert_eq!(
                s.split((a8..=i8::MAX).into_par_iter()).collect::<Vec<i8>>(),
                (a8..=i8::MAX).collect::<Vec<i8>>()
            );
            let (u16s, u32s) = (n as u16, n as u32);
            prop_assert_eq!(
                s.split((0..=u16s).into_par_iter()).map(u64::from).sum::<u64>(),
                (0..=u16s).map(u64::from).sum::<u64>()
            );
            prop_assert_eq!(
                s.split((u32s..2 * u32s).into_par_iter()).collect::<Vec<_>>(),
                (u32s..2 * u32s).collect::<Vec<_>>()
            );
            // the ends of the 64-bit types
            let top = u64::MAX - n as u64;
            prop_assert_eq!(
                s.split((top..=u64::MAX).into_par_iter()).collect::<Vec<_>>(),
                (top..=u64::MAX).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split((top..u64::MAX).into_par_iter()).collect::<Vec<_>>(),
                (top..u64::MAX).collect::<Vec<_>>()
            );
            let bottom = i64::MIN + n as i64;
            prop_assert_eq!(
                s.split((i64::MIN..bottom).into_par_iter()).collect::<Vec<_>>(),
                (i64::MIN..bottom).collect::<Vec<_>>()
            );
            // skip, step_by, take
            prop_assert_eq!(
                s.split((0..n).into_par_iter())
                    .skip(skip)
                    .step_by(step)
                    .take(take)
                    .collect::<Vec<_>>(),
                (0..n).skip(skip).step_by(step).take(take).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split((start..end).into_par_iter().step_by(step))
                    .skip(skip)
                    .collect::<Vec<_>>(),
                (start..end).step_by(step).skip(skip).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split((start..=end).into_par_iter().take(take).step_by(step)).len(),
                (start..=end).take(take).step_by(step).count()
            );
            Ok(())
        })?;
    }

    #[test]
    fn ranges_of_128_bit_integers_and_of_chars(
        start in any::<i128>(),
        n in len(),
        c in any::<char>(),
        near_gap in 0xD000u32..0xD800,
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            // 128-bit ranges are not indexed (as rayon's): no `with_min_len` or `rev`
            let n128 = n as i128;
            let start = start.min(i128::MAX - n128);
            let end = start + n128;
            prop_assert_eq!(
                (start..end).into_par_iter().collect::<Vec<_>>(),
                (start..end).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                (start..=end).into_par_iter().collect::<Vec<_>>(),
                (start..=end).collect::<Vec<_>>()
            );
            prop_assert_eq!((end..start).into_par_iter().count(), 0);
            // the ends of the types, where a difference overflows i128
            let top = u128::MAX - n as u128;
            prop_assert_eq!(
                (top..=u128::MAX).into_par_iter().collect::<Vec<_>>(),
                (top..=u128::MAX).collect::<Vec<_>>()
            );
            let bottom = i128::MIN + n128;
            prop_assert_eq!(
                (i128::MIN..bottom).into_par_iter().map(|x| x - i128::MIN).sum::<i128>(),
                (i128::MIN..bottom).map(|x| x - i128::MIN).sum::<i128>()
            );
            prop_assert_eq!((i128::MIN..=bottom).into_par_iter().count(), n + 1);
            // chars: from anywhere, and across the surrogates
            let from = |u: u32| char::from_u32(u).expect("a char");
            let ends = [
                (c, from((c as u32 + n as u32).min(0x10FFFF)).max(c)),
                (from(near_gap), from(0xE000 + n as u32)),
                (from(0xD7FF), from(0xE000)),
                ('a', 'a'),
                (char::MAX, '\0'),
            ];
            for (a, b) in ends {
                let want: Vec<char> = (a..b).collect();
                prop_assert_eq!((a..b).into_par_iter().len(), want.len());
                prop_assert_eq!(s.split((a..b).into_par_iter()).collect::<Vec<_>>(), want);
                let want: Vec<char> = (a..=b).rev().collect();
                prop_assert_eq!((a..=b).into_par_iter().len(), want.len());
                prop_assert_eq!(s.split((a..=b).into_par_iter().rev()).collect::<Vec<_>>(), want);
                let want: Vec<(usize, char)> = (a..=b).enumerate().skip(n / 2).collect();
                let got: Vec<(usize, char)> =
                    s.split((a..=b).into_par_iter().enumerate().skip(n / 2)).collect();
                prop_assert_eq!(got, want);
            }
            Ok(())
        })?;
    }

    #[test]
    fn slices_vecs_and_arrays(v in values(-1000..1000), s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(&s.split(v.par_iter()).copied().collect::<Vec<_>>(), &v);
            prop_assert_eq!(&s.split((&v[..]).into_par_iter()).cloned().collect::<Vec<_>>(), &v);
            prop_assert_eq!(
                s.split((&v).into_par_iter()).map(|x| x * 2).collect::<Vec<_>>(),
                v.iter().map(|x| x * 2).collect::<Vec<_>>()
            );
            let mut w = v.clone();
            s.split(w.par_iter_mut())
                .enumerate()
                .for_each(|(i, x)| *x = *x * 3 + i as i64);
            let want: Vec<i64> = v.iter().enumerate().map(|(i, x)| x * 3 + i as i64).collect();
            prop_assert_eq!(&w, &want);
            s.split((&mut w[..]).into_par_iter()).for_each(|x| *x -= 1);
            s.split((&mut w).into_par_iter()).for_each(|x| *x += 1);
            prop_assert_eq!(&w, &want);
            // by value
            prop_assert_eq!(&s.split(v.clone().into_par_iter()).collect::<Vec<_>>(), &v);
            let words: Vec<String> = v.iter().map(|x| x.to_string()).collect();
            prop_assert_eq!(&s.split(words.par_iter()).cloned().collect::<Vec<_>>(), &words);
            prop_assert_eq!(
                s.split(words.clone().into_par_iter()).map(|w| w.len()).collect::<Vec<_>>(),
                words.iter().map(|w| w.len()).collect::<Vec<_>>()
            );
            // arrays
            let mut arr: [i64; 97] = std::array::from_fn(|i| v.get(i).copied().unwrap_or(i as i64));
            let want: Vec<i64> = arr.iter().map(|x| x - 7).collect();
            prop_assert_eq!(
                s.split(arr.par_iter()).map(|x| x - 7).collect::<Vec<_>>(),
                want.clone()
            );
            s.split((&mut arr).into_par_iter()).for_each(|x| *x -= 7);
            prop_assert_eq!(&arr[..], &want[..]);
            s.split(arr.par_iter_mut()).for_each(|x| *x += 7);
            prop_assert_eq!(
                s.split((&arr).into_par_iter()).map(|x| x - 7).collect::<Vec<_>>(),
                want
            );
            Ok(())
        })?;
    }

    #[test]
    fn chunks_and_windows(v in values(-1000..1000), size in 1usize..64, s in setup()) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(v.par_chunks(size)).map(<[i64]>::to_vec).collect::<Vec<_>>(),
                v.chunks(size).map(<[i64]>::to_vec).collect::<Vec<_>>()
            );
            let exact = v.par_chunks_exact(size);
            prop_assert_eq!(exact.remainder(), v.chunks_exact(size).remainder());
            prop_assert_eq!(
                s.split(exact).map(<[i64]>::to_vec).collect::<Vec<_>>(),
                v.chunks_exact(size).map(<[i64]>::to_vec).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(v.par_windows(size)).map(|w| w.iter().sum::<i64>()).collect::<Vec<_>>(),
                v.windows(size).map(|w| w.iter().sum::<i64>()).collect::<Vec<_>>()
            );
            // array windows of a few sizes, forwards and backwards
            let sums = |n: usize| v.windows(n).map(|w| w.iter().sum::<i64>()).collect::<Vec<_>>();
            let got: Vec<i64> = s.split(v.par_array_windows::<1>()).map(|[a]| *a).collect();
            prop_assert_eq!(got, sums(1));
            let got: Vec<i64> = s.split(v.par_array_windows()).map(|[a, b, c]| a + b + c).collect();
            prop_assert_eq!(got, sums(3));
            let got: Vec<&[i64; 2]> = s.split(v.par_array_windows().rev()).collect();
            let want: Vec<&[i64]> = v.windows(2).rev().collect();
            prop_assert!(got.iter().map(|w| &w[..]).eq(want));
            let (mut got, mut want) = (v.clone(), v.clone());
            s.split(got.par_chunks_mut(size)).enumerate().for_each(|(i, c)| {
                for x in c {
                    *x = *x * 10 + i as i64;
                }
            });
            for (i, c) in want.chunks_mut(size).enumerate() {
                for x in c {
                    *x = *x * 10 + i as i64;
                }
            }
            prop_assert_eq!(&got, &want);
            let (mut got, mut want) = (v.clone(), v.clone());
            s.split(got.par_chunks_exact_mut(size)).enumerate().for_each(|(i, c)| {
                c.reverse();
                c[0] += i as i64;
            });
            for (i, c) in want.chunks_exact_mut(size).enumerate() {
                c.reverse();
                c[0] += i as i64;
            }
            prop_assert_eq!(&got, &want);
            Ok(())
        })?;
    }

    #[test]
    fn zips_and_tuples(
        a in values(-1000..1000),
        b in proptest::collection::vec(0u32..100, 0..700),
        c in proptest::collection::vec(-5i64..5, 0..700),
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(a.par_iter()).zip(&b).map(|(x, y)| x + i64::from(*y)).collect::<Vec<_>>(),
                a.iter().zip(&b).map(|(x, y)| x + i64::from(*y)).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                b.par_iter().zip(s.split(a.par_iter())).collect::<Vec<_>>(),
                b.iter().zip(&a).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(a.par_iter())
                    .zip_eq((0..a.len()).into_par_iter().map(|i| &a[a.len() - 1 - i]))
                    .collect::<Vec<_>>(),
                a.iter().zip(a.iter().rev()).collect::<Vec<_>>()
            );
            if a.len() != b.len() {
                let r = catch_unwind(AssertUnwindSafe(|| a.par_iter().zip_eq(&b).count()));
                prop_assert!(r.is_err(), "zip_eq of lengths {} and {}", a.len(), b.len());
            }
            // tuples of 2 to 5 sources
            prop_assert_eq!(
                (&a, s.split(b.par_iter())).into_par_iter().collect::<Vec<_>>(),
                a.iter().zip(&b).collect::<Vec<_>>()
            );
            let mut got = a.clone();
            (&mut got, &b, s.split(c.par_iter())).into_par_iter().for_each(|(x, y, z)| {
                *x += i64::from(*y) * z;
            });
            let mut want = a.clone();
            for ((x, y), z) in want.iter_mut().zip(&b).zip(&c) {
                *x += i64::from(*y) * z;
            }
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(
                (a.par_iter(), &b, 0..a.len(), s.split(c.par_chunks(2)))
                    .into_par_iter()
                    .map(|(x, y, i, ch)| x * i as i64 + i64::from(*y) + ch.iter().sum::<i64>())
                    .collect::<Vec<_>>(),
                a.iter()
                    .zip(&b)
                    .zip(0..a.len())
                    .zip(c.chunks(2))
                    .map(|(((x, y), i), ch)| x * i as i64 + i64::from(*y) + ch.iter().sum::<i64>())
                    .collect::<Vec<_>>()
            );
            let mut got = c.clone();
            (s.split(got.par_iter_mut()), &a, &b, 10u8..=255, c.clone())
                .into_par_iter()
                .for_each(|(g, x, y, k, z)| *g = x + i64::from(*y) + i64::from(k) * z);
            let mut want = c.clone();
            let zipped = want.iter_mut().zip(&a).zip(&b).zip(10u8..=255).zip(c.clone());
            for ((((g, x), y), k), z) in zipped {
                *g = x + i64::from(*y) + i64::from(k) * z;
            }
            prop_assert_eq!(&got, &want);
            // a tuple of one source, and of twelve (rayon's bounds)
            prop_assert_eq!(
                (s.split(a.par_iter()),).into_par_iter().collect::<Vec<_>>(),
                a.iter().map(|x| (x,)).collect::<Vec<_>>()
            );
            let twelve = (&a, &b, &c, &a, &b, &c, &a, &b, &c, &a, &b, s.split(c.par_iter()));
            let sums: Vec<i64> = twelve
                .into_par_iter()
                .map(|(x0, y0, z0, x1, y1, z1, x2, y2, z2, x3, y3, z3)| {
                    x0 + x1 + x2 + x3 + z0 + z1 + z2 + z3 + i64::from(y0 + y1 + y2 + y3)
                })
                .collect();
            let want: Vec<i64> = a
                .iter()
                .zip(&b)
                .zip(&c)
                .map(|((x, y), z)| 4 * x + 4 * z + 4 * i64::from(*y))
                .collect();
            prop_assert_eq!(sums, want);
            Ok(())
        })?;
    }

    #[test]
    fn repeats_once_and_empty(
        a in values(-1000..1000),
        n in len(),
        x in any::<i32>(),
        s in setup(),
    ) {
        s.run(|| -> Result<(), TestCaseError> {
            prop_assert_eq!(
                s.split(asat::iter::repeat_n(vec![x], n)).enumerate().collect::<Vec<_>>(),
                std::iter::repeat_n(vec![x], n).enumerate().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                asat::iter::repeat(x).zip(s.split(a.par_iter())).rev().collect::<Vec<_>>(),
                std::iter::repeat(x).zip(&a).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>()
            );
            prop_assert_eq!(
                s.split(asat::iter::once(x))
                    .chain(s.split(a.par_iter().copied().map(|v| v as i32)))
                    .chain(asat::iter::empty())
                    .collect::<Vec<_>>(),
                std::iter::once(x).chain(a.iter().map(|v| *v as i32)).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                asat::iter::repeat(1u64).take(n).map(|v| v * 2).sum::<u64>(),
                2 * n as u64
            );
            Ok(())
        })?;
    }
}
