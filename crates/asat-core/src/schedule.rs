//! Loop schedules: how the iterations of a work-shared loop are split among a team.

use crate::sync::{AtomicUsize, Ordering};
use std::ops::Range;

/// How a work-shared loop hands out its iterations.
///
/// Every index of the range runs exactly once, whatever the team size.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Schedule {
    /// Equal contiguous chunks, one per member: member `k` of `n` gets
    /// `[len*k/n, len*(k+1)/n)`. No shared state; the cheapest schedule.
    #[default]
    Static,
    /// Chunks of `chunk` iterations dealt round-robin (OpenMP's `schedule(static, chunk)`):
    /// member `k` of `n` runs chunks `k`, `k + n`, `k + 2n`, ... No shared state. A `chunk` of
    /// 0 is taken as 1.
    StaticChunked {
        /// Iterations per chunk.
        chunk: usize,
    },
    /// Chunk self-scheduling: members take `chunk` iterations at a time from a shared counter
    /// until none are left. A `chunk` of 0 is taken as 1.
    Dynamic {
        /// Iterations per chunk.
        chunk: usize,
    },
    /// Guided self-scheduling: each take is `ceil(remaining / team size)` iterations, but not
    /// less than `min_chunk` (nor more than remain). A `min_chunk` of 0 is taken as 1.
    Guided {
        /// The smallest chunk handed out (except the last).
        min_chunk: usize,
    },
}

impl Schedule {
    /// [`Schedule::StaticChunked`] with `chunk`.
    pub const fn static_chunked(chunk: usize) -> Self {
        Schedule::StaticChunked { chunk }
    }

    /// Whether members take chunks from a shared counter (dynamic and guided schedules).
    pub(crate) const fn uses_counter(self) -> bool {
        matches!(self, Schedule::Dynamic { .. } | Schedule::Guided { .. })
    }

    /// [`Schedule::Dynamic`] with `chunk`.
    pub const fn dynamic(chunk: usize) -> Self {
        Schedule::Dynamic { chunk }
    }

    /// [`Schedule::Guided`] with `min_chunk`.
    pub const fn guided(min_chunk: usize) -> Self {
        Schedule::Guided { min_chunk }
    }
}

/// Member `member`'s chunk of `0..len` under [`Schedule::Static`] with `size` members.
#[inline]
pub(crate) fn static_chunk(len: usize, member: usize, size: usize) -> Range<usize> {
    // `len * (member + 1)` fits a usize for any loop of up to 2^32 iterations on 64 bits:
    // then the division is one machine instruction; else it takes 128 bits (a library call).
    if let Some(hi) = len.checked_mul(member + 1) {
        return len * member / size..hi / size;
    }
    let lo = (len as u128 * member as u128 / size as u128) as usize;
    let hi = (len as u128 * (member as u128 + 1) / size as u128) as usize;
    lo..hi
}

/// Member `member`'s chunks of `0..len` under [`Schedule::StaticChunked`] with `size` members:
/// chunks `member`, `member + size`, ... of `chunk` iterations (0 taken as 1).
#[inline]
pub(crate) fn dealt_chunks(
    len: usize,
    chunk: usize,
    member: usize,
    size: usize,
) -> impl Iterator<Item = Range<usize>> {
    let chunk = chunk.max(1);
    let stride = chunk.saturating_mul(size.max(1));
    let first = chunk.saturating_mul(member);
    // `step_by` over the chunks' starts; a start that would overflow is past `len` anyway.
    (first..len)
        .step_by(stride.max(1))
        .map(move |lo| lo..lo.saturating_add(chunk).min(len))
}

/// The size of the next guided chunk when `remaining` iterations are left.
#[inline]
pub(crate) fn guided_chunk(remaining: usize, size: usize, min_chunk: usize) -> usize {
    remaining
        .div_ceil(size)
        .max(min_chunk.max(1))
        .min(remaining)
}

/// Takes the next chunk of `0..len` from the shared counter `next`, or `None` when the loop is
/// exhausted. `Static` is not taken from a counter and returns `None` here.
#[inline]
pub(crate) fn take_chunk(
    schedule: Schedule,
    next: &AtomicUsize,
    len: usize,
    size: usize,
) -> Option<Range<usize>> {
    match schedule {
        Schedule::Static | Schedule::StaticChunked { .. } => None,
        Schedule::Dynamic { chunk } => {
            let chunk = chunk.clamp(1, len.max(1));
            // Relaxed is enough: the counter only partitions indices; the data the loop body
            // touches is published by the region start and the join.
            //
            // Each member adds `chunk` once more after the last chunk is gone, so the counter
            // ends at most `len + size * chunk` (rounded up to a chunk): a `fetch_add` is safe
            // while that does not overflow. Beyond it (ranges near `usize::MAX`) the counter
            // could wrap around and hand out indices again, so it moves by compare-and-swap
            // and never past `len`.
            let fits = chunk
                .checked_mul(size + 1)
                .and_then(|m| len.checked_add(m))
                .is_some();
            let lo = if fits {
                next.fetch_add(chunk, Ordering::Relaxed)
            } else {
                next.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |lo| {
                    (lo < len).then(|| lo + chunk.min(len - lo))
                })
                .ok()?
            };
            if lo >= len {
                return None;
            }
            Some(lo..lo + chunk.min(len - lo))
        }
        Schedule::Guided { min_chunk } => {
            let mut lo = next.load(Ordering::Relaxed);
            loop {
                if lo >= len {
                    return None;
                }
                let take = guided_chunk(len - lo, size, min_chunk);
                match next.compare_exchange_weak(
                    lo,
                    lo + take,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Some(lo..lo + take),
                    Err(cur) => lo = cur,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_chunks_cover_the_range() {
        for len in [0usize, 1, 7, 100, 1001] {
            for size in 1..9 {
                let mut covered = 0;
                let mut prev_hi = 0;
                for m in 0..size {
                    let r = static_chunk(len, m, size);
                    assert_eq!(r.start, prev_hi);
                    prev_hi = r.end;
                    covered += r.len();
                    // equal within one
                    assert!(r.len() >= len / size && r.len() <= len / size + 1);
                }
                assert_eq!(covered, len);
                assert_eq!(prev_hi, len);
            }
        }
    }

    #[test]
    fn static_chunks_of_huge_loops_are_exact() {
        // the overflowing products take 128 bits, the others one word: the same split
        for len in [
            usize::MAX,
            usize::MAX - 1,
            1 << 40,
            (1 << 33) + 7,
            u32::MAX as usize,
        ] {
            for size in [1usize, 2, 3, 7, 64, 1000] {
                for m in [0, 1, size / 2, size - 1] {
                    let wide = |k: usize| (len as u128 * k as u128 / size as u128) as usize;
                    assert_eq!(
                        static_chunk(len, m, size),
                        wide(m)..wide(m + 1),
                        "{len} {m}/{size}"
                    );
                }
            }
        }
    }

    #[test]
    fn guided_chunks_shrink_to_the_minimum() {
        let next = AtomicUsize::new(0);
        let sizes: Vec<usize> =
            std::iter::from_fn(|| take_chunk(Schedule::guided(3), &next, 100, 4).map(|r| r.len()))
                .collect();
        assert_eq!(sizes.iter().sum::<usize>(), 100);
        assert_eq!(sizes[0], 25);
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]));
        assert!(sizes[..sizes.len() - 1].iter().all(|&s| s >= 3));
    }

    #[test]
    fn dealt_chunks_go_round_robin_and_cover_the_range_once() {
        assert_eq!(
            dealt_chunks(10, 3, 1, 2).collect::<Vec<_>>(),
            vec![3..6, 9..10]
        );
        assert_eq!(
            dealt_chunks(10, 0, 0, 3).count(),
            4,
            "0 is 1: indices 0, 3, 6, 9"
        );
        assert_eq!(dealt_chunks(2, 5, 1, 2).count(), 0);
        assert_eq!(
            dealt_chunks(usize::MAX, usize::MAX / 2, 1, 4).collect::<Vec<_>>(),
            vec![usize::MAX / 2..usize::MAX - 1]
        );
        for len in [0usize, 1, 7, 100, 1001] {
            for chunk in [0usize, 1, 3, 64, 2000] {
                for size in 1..6 {
                    let mut seen = vec![0u8; len];
                    for m in 0..size {
                        for r in dealt_chunks(len, chunk, m, size) {
                            assert!(r.len() <= chunk.max(1));
                            r.for_each(|i| seen[i] += 1);
                        }
                    }
                    assert!(seen.iter().all(|&c| c == 1), "{len} {chunk} {size}");
                }
            }
        }
    }

    #[test]
    fn dynamic_zero_chunk_means_one() {
        let next = AtomicUsize::new(0);
        let n = std::iter::from_fn(|| take_chunk(Schedule::dynamic(0), &next, 5, 2)).count();
        assert_eq!(n, 5);
    }
}
