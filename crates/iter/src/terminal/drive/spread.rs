//! The order in which a call that deals pieces (`with_max_len`, a dynamic `with_schedule`)
//! hands them out: from the start, or, for `any` and `find_any`, from several places at once.

use std::ops::Range;

/// Which pieces a call that deals them hands out first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// In index order: every call but `any` and `find_any` (a reduction folds together the
    /// pieces a member takes one after the other, `find_first` wants the earliest first).
    Index,
    /// From as many places as the pool has threads, each going forward ([`Spread`]): `any` and
    /// `find_any`, whose answer may lie anywhere. As rayon's halving splits send its second
    /// thread to the far half at once while the first goes on from the start, a hit near the
    /// start is found as soon as in index order, and one only in the far half within a few
    /// pieces, where in index order every piece before it went out first.
    Spread,
}

/// `blocks` blocks in pieces of `chunk`, dealt from `places` places: the pieces are cut into
/// `places` runs as even as can be, and slot `d` stands for the next piece of run `d mod
/// places` (its `d / places`th), or for none once that run is used up. So the first `places`
/// slots are the runs' first pieces, and each run goes forward as the slots go out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spread {
    pub(crate) places: usize,
    pub(crate) chunk: usize,
    pub(crate) blocks: usize,
}

impl Spread {
    fn pieces(&self) -> usize {
        self.blocks.div_ceil(self.chunk)
    }

    /// How many slots go out: as many rounds of `places` as the longest run has pieces.
    pub(crate) fn slots(&self) -> usize {
        self.pieces()
            .div_ceil(self.places)
            .saturating_mul(self.places)
    }

    /// The first piece of run `r`.
    fn run_start(&self, r: usize) -> usize {
        (r as u128 * self.pieces() as u128 / self.places as u128) as usize
    }

    /// The blocks slot `d` stands for: a piece, or an empty range.
    pub(crate) fn piece(&self, d: usize) -> Range<usize> {
        let (run, nth) = (d % self.places, d / self.places);
        let piece = self.run_start(run) + nth;
        if piece >= self.run_start(run + 1) {
            return 0..0;
        }
        let start = piece * self.chunk;
        start..start.saturating_add(self.chunk).min(self.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block is in one slot's piece, the pieces are whole chunks but the last, and the
    /// first `places` slots are the runs' first pieces, in run order.
    #[test]
    fn the_slots_deal_every_block_once_from_each_run_in_turn() {
        for blocks in [0, 1, 2, 5, 10, 99, 100, 101, 1000] {
            for chunk in [1, 3, 10, 64] {
                for places in 1..=9 {
                    let s = Spread {
                        places,
                        chunk,
                        blocks,
                    };
                    let what = format!("{s:?}");
                    let mut seen = vec![false; blocks];
                    for d in 0..s.slots() {
                        let b = s.piece(d);
                        assert!(b.is_empty() || b.start % chunk == 0, "{what}: {b:?}");
                        assert!(
                            b.len() == chunk || b.end == blocks || b.is_empty(),
                            "{what}"
                        );
                        for i in b {
                            assert!(!seen[i], "{what}: block {i} twice");
                            seen[i] = true;
                        }
                    }
                    assert!(seen.iter().all(|&x| x), "{what}: a block missed");
                    let pieces = blocks.div_ceil(chunk);
                    for r in 0..places.min(pieces) {
                        let want = r * pieces / places * chunk;
                        let first = s.piece(r);
                        assert!(first.is_empty() || first.start == want, "{what}: run {r}");
                    }
                    assert!(s.slots() < pieces + places, "{what}: {} slots", s.slots());
                }
            }
        }
    }

    #[test]
    fn two_places_go_on_from_the_start_and_the_middle() {
        let s = Spread {
            places: 2,
            chunk: 10,
            blocks: 100,
        };
        let order: Vec<_> = (0..s.slots()).map(|d| s.piece(d).start).collect();
        assert_eq!(order, [0, 50, 10, 60, 20, 70, 30, 80, 40, 90]);
        // a huge space: the second slot is its middle
        let s = Spread {
            places: 2,
            chunk: 1000,
            blocks: usize::MAX,
        };
        assert_eq!(s.piece(1).start, usize::MAX.div_ceil(1000) / 2 * 1000);
    }
}
