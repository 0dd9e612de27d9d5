//! The Ousterhout scheduling matrix, as pure logic.
//!
//! Columns are the processors of the gang domain, rows are time slots. A gang of `n` threads
//! is placed, when it is created, in one slot, one thread per column; all gangs of a slot run
//! together when the slot's turn comes. As in Feitelson and Rudolph's MAXI, each slot keeps a
//! count of its free cells and slots are listed by that count, so placement is *first fit*: the
//! lowest-numbered slot with at least `n` free cells, taking its lowest free columns. A gang
//! that ends frees its cells for later gangs; slots are never merged (the allocation of running
//! gangs does not change). A new slot is opened only when no existing slot has room.
//!
//! A gang that ends while a thread still runs in one of its cells (see
//! [`release_keeping`](Matrix::release_keeping)) leaves that cell *reserved*: it belongs to no
//! gang and is not free, so no new gang is placed on it, until the thread has left and the
//! cell is [`unreserve`](Matrix::unreserve)d.

use std::collections::BTreeSet;
use std::fmt;

use crate::Error;

/// Identifies a gang placed in a [`Matrix`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GangId(u64);

impl GangId {
    pub(crate) fn new(n: u64) -> Self {
        Self(n)
    }

    /// The id as a number (ids are handed out in increasing order, from 0).
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for GangId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gang {}", self.0)
    }
}

/// Where a gang was placed: its slot and, for member `i`, the column `columns[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// The gang.
    pub gang: GangId,
    /// The slot (row) it runs in.
    pub slot: usize,
    /// The column of each member, in increasing order, all distinct.
    pub columns: Vec<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cell {
    Free,
    Gang(GangId),
    /// Its gang is gone, but a thread still runs in it.
    Reserved,
}

#[derive(Clone, Debug)]
struct Row {
    cells: Vec<Cell>,
    free: usize,
}

/// The scheduling matrix: `columns` processors by up to `max_slots` slots.
///
/// ```
/// use asat_gang::Matrix;
///
/// let mut m = Matrix::new(4, 8);
/// let a = m.allocate(3).unwrap();
/// let b = m.allocate(2).unwrap(); // does not fit next to `a`: a new slot
/// assert_eq!((a.slot, b.slot), (0, 1));
/// let c = m.allocate(1).unwrap(); // first fit: the free column of slot 0
/// assert_eq!((c.slot, c.columns.as_slice()), (0, &[3][..]));
/// assert!(m.allocate(5).is_err()); // wider than the machine
/// m.release(b.gang);
/// assert_eq!(m.allocate(4).unwrap().slot, 1); // freed space is reused
/// ```
#[derive(Clone, Debug)]
pub struct Matrix {
    columns: usize,
    max_slots: usize,
    rows: Vec<Row>,
    /// `by_free[f]` = the slots with exactly `f` free cells (the paper's slot lists).
    by_free: Vec<BTreeSet<usize>>,
    next_id: u64,
}

impl Matrix {
    /// An empty matrix of `columns` processors and at most `max_slots` slots.
    pub fn new(columns: usize, max_slots: usize) -> Self {
        Self {
            columns,
            max_slots,
            rows: Vec::new(),
            by_free: vec![BTreeSet::new(); columns + 1],
            next_id: 0,
        }
    }

    /// The number of columns (processors).
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// The most slots this matrix may open.
    pub fn max_slots(&self) -> usize {
        self.max_slots
    }

    /// The number of slots opened so far (used or not).
    pub fn slots(&self) -> usize {
        self.rows.len()
    }

    /// The slots that hold at least one gang, in increasing order (a slot whose only taken
    /// cells are reserved holds none).
    pub fn used_slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.cells.iter().any(|c| matches!(c, Cell::Gang(_))))
            .map(|(i, _)| i)
    }

    /// The free cells of `slot` (`columns` for a slot never opened).
    pub fn free_in(&self, slot: usize) -> usize {
        self.rows.get(slot).map_or(self.columns, |r| r.free)
    }

    /// The gang in a cell, if any.
    pub fn cell(&self, slot: usize, column: usize) -> Option<GangId> {
        match self.rows.get(slot)?.cells.get(column)? {
            Cell::Gang(g) => Some(*g),
            Cell::Free | Cell::Reserved => None,
        }
    }

    /// Whether a cell is reserved (see the module docs).
    pub fn is_reserved(&self, slot: usize, column: usize) -> bool {
        self.rows
            .get(slot)
            .and_then(|r| r.cells.get(column))
            .is_some_and(|c| *c == Cell::Reserved)
    }

    /// Places a gang of `n` threads: first fit into the lowest slot with `n` free cells, its
    /// lowest free columns; opens a new slot if none has room.
    ///
    /// Errors: `n` is 0 or larger than the number of columns; every slot is full and
    /// `max_slots` are open.
    pub fn allocate(&mut self, n: usize) -> Result<Allocation, Error> {
        if n == 0 || n > self.columns {
            return Err(Error::gang_too_wide(n, self.columns));
        }
        let slot = (n..=self.columns)
            .filter_map(|f| self.by_free[f].first().copied())
            .min();
        let slot = match slot {
            Some(s) => s,
            None => {
                if self.rows.len() >= self.max_slots {
                    return Err(Error::slots_full(self.max_slots));
                }
                self.rows.push(Row {
                    cells: vec![Cell::Free; self.columns],
                    free: self.columns,
                });
                let s = self.rows.len() - 1;
                self.by_free[self.columns].insert(s);
                s
            }
        };
        let gang = GangId(self.next_id);
        self.next_id += 1;
        let row = &mut self.rows[slot];
        let columns: Vec<usize> = row
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == Cell::Free)
            .map(|(i, _)| i)
            .take(n)
            .collect();
        for &c in &columns {
            row.cells[c] = Cell::Gang(gang);
        }
        self.by_free[row.free].remove(&slot);
        row.free -= n;
        self.by_free[row.free].insert(slot);
        Ok(Allocation {
            gang,
            slot,
            columns,
        })
    }

    /// Removes a gang, freeing its cells. Returns false if the gang is not in the matrix.
    pub fn release(&mut self, gang: GangId) -> bool {
        self.release_keeping(gang, &[])
    }

    /// Removes a gang, freeing its cells except those in the columns `keep`, which become
    /// reserved: a thread still runs there (its gang ended under it), and no new gang may be
    /// placed on the cell before [`unreserve`](Matrix::unreserve). Returns false if the gang
    /// is not in the matrix.
    pub fn release_keeping(&mut self, gang: GangId, keep: &[usize]) -> bool {
        for (s, row) in self.rows.iter_mut().enumerate() {
            let mut found = false;
            let mut freed = 0;
            for (i, c) in row.cells.iter_mut().enumerate() {
                if *c == Cell::Gang(gang) {
                    found = true;
                    if keep.contains(&i) {
                        *c = Cell::Reserved;
                    } else {
                        *c = Cell::Free;
                        freed += 1;
                    }
                }
            }
            if found {
                self.free_cells(s, freed);
                return true;
            }
        }
        false
    }

    /// Frees a reserved cell (its thread has left). Returns false if it was not reserved.
    pub fn unreserve(&mut self, slot: usize, column: usize) -> bool {
        if !self.is_reserved(slot, column) {
            return false;
        }
        self.rows[slot].cells[column] = Cell::Free;
        self.free_cells(slot, 1);
        true
    }

    /// `n` more cells of `slot` are free: moves the slot to its new free-count list.
    fn free_cells(&mut self, slot: usize, n: usize) {
        let row = &mut self.rows[slot];
        self.by_free[row.free].remove(&slot);
        row.free += n;
        self.by_free[row.free].insert(slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn first_fit_fills_the_lowest_slot_with_room() {
        let mut m = Matrix::new(4, 16);
        let a = m.allocate(2).unwrap();
        let b = m.allocate(2).unwrap();
        assert_eq!((a.slot, b.slot), (0, 0));
        assert_eq!(a.columns, vec![0, 1]);
        assert_eq!(b.columns, vec![2, 3]);
        let c = m.allocate(3).unwrap();
        assert_eq!(c.slot, 1);
        let d = m.allocate(1).unwrap();
        assert_eq!((d.slot, d.columns.clone()), (1, vec![3]));
        let e = m.allocate(1).unwrap();
        assert_eq!(e.slot, 2, "slots 0 and 1 are full");
        assert_eq!(m.used_slots().collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn freed_space_is_reused() {
        let mut m = Matrix::new(2, 16);
        let a = m.allocate(2).unwrap();
        let b = m.allocate(2).unwrap();
        assert_eq!(b.slot, 1);
        assert!(m.release(a.gang));
        assert!(!m.release(a.gang), "a gang is released once");
        assert_eq!(m.free_in(0), 2);
        let c = m.allocate(1).unwrap();
        assert_eq!((c.slot, c.columns.clone()), (0, vec![0]));
        let d = m.allocate(1).unwrap();
        assert_eq!((d.slot, d.columns.clone()), (0, vec![1]));
        assert_eq!(m.slots(), 2, "no slot was opened while old ones had room");
        assert_eq!(m.used_slots().collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn too_wide_and_full_are_clear_errors() {
        let mut m = Matrix::new(2, 1);
        let e = m.allocate(3).unwrap_err().to_string();
        assert_eq!(
            e,
            "a gang of 3 threads does not fit 2 processors: a gang may have 1 to 2 threads \
             (one per processor of the gang domain)"
        );
        assert!(m.allocate(0).unwrap_err().to_string().contains("0 threads"));
        m.allocate(2).unwrap();
        let e = m.allocate(1).unwrap_err().to_string();
        assert!(e.contains("all 1 slots of the matrix are in use"), "{e}");
    }

    #[test]
    fn reserved_cells_are_given_to_no_gang_until_freed() {
        let mut m = Matrix::new(2, 4);
        let a = m.allocate(2).unwrap();
        assert!(m.release_keeping(a.gang, &[1]));
        assert!(m.is_reserved(0, 1));
        assert_eq!(m.cell(0, 1), None);
        assert_eq!(m.free_in(0), 1);
        assert!(
            m.used_slots().next().is_none(),
            "a reserved cell is no gang"
        );
        let b = m.allocate(2).unwrap();
        assert_eq!(b.slot, 1, "slot 0 has one free cell");
        let c = m.allocate(1).unwrap();
        assert_eq!((c.slot, c.columns.clone()), (0, vec![0]));
        assert!(m.unreserve(0, 1));
        assert!(!m.unreserve(0, 1), "a cell is freed once");
        let d = m.allocate(1).unwrap();
        assert_eq!((d.slot, d.columns.clone()), (0, vec![1]));
    }

    #[derive(Clone, Debug)]
    enum Op {
        Create(usize),
        Destroy(usize),
        /// Destroy a gang, keeping the columns whose bit is set reserved.
        Orphan(usize, u32),
        /// Free a reserved cell.
        Leave(usize),
    }

    fn ops() -> impl Strategy<Value = (usize, Vec<Op>)> {
        (1usize..9).prop_flat_map(|p| {
            let op = prop_oneof![
                (1..=p + 1).prop_map(Op::Create),
                (0usize..64).prop_map(Op::Destroy),
                (0usize..64, any::<u32>()).prop_map(|(i, k)| Op::Orphan(i, k)),
                (0usize..64).prop_map(Op::Leave),
            ];
            (Just(p), proptest::collection::vec(op, 1..120))
        })
    }

    proptest! {
        #[test]
        fn random_create_destroy_keeps_the_invariants((p, ops) in ops()) {
            let max_slots = 6;
            let mut m = Matrix::new(p, max_slots);
            let mut live: Vec<Allocation> = Vec::new();
            let mut reserved: Vec<(usize, usize)> = Vec::new();
            for op in ops {
                match op {
                    Op::Create(n) => {
                        // Oracle for first fit: the lowest open slot with n free cells.
                        let want = (0..m.slots()).find(|&s| m.free_in(s) >= n);
                        match m.allocate(n) {
                            Ok(a) => {
                                prop_assert!(n <= p);
                                prop_assert_eq!(a.columns.len(), n);
                                for &c in &a.columns {
                                    prop_assert!(!reserved.contains(&(a.slot, c)));
                                }
                                match want {
                                    Some(s) => prop_assert_eq!(a.slot, s),
                                    None => prop_assert_eq!(a.slot, m.slots() - 1),
                                }
                                live.push(a);
                            }
                            Err(_) => prop_assert!(
                                n > p || (want.is_none() && m.slots() == max_slots)
                            ),
                        }
                    }
                    Op::Destroy(i) => {
                        if !live.is_empty() {
                            let a = live.remove(i % live.len());
                            prop_assert!(m.release(a.gang));
                        }
                    }
                    Op::Orphan(i, bits) => {
                        if !live.is_empty() {
                            let a = live.remove(i % live.len());
                            let keep: Vec<usize> = a
                                .columns
                                .iter()
                                .copied()
                                .filter(|c| bits >> (c % 32) & 1 != 0)
                                .collect();
                            prop_assert!(m.release_keeping(a.gang, &keep));
                            reserved.extend(keep.iter().map(|&c| (a.slot, c)));
                        }
                    }
                    Op::Leave(j) => {
                        if !reserved.is_empty() {
                            let (s, c) = reserved.remove(j % reserved.len());
                            prop_assert!(m.unreserve(s, c));
                        }
                    }
                }
                // Never two threads of a gang in one column; never two gangs in one cell; the
                // matrix and the live allocations agree, and the free counts are exact.
                for a in &live {
                    let mut cols = a.columns.clone();
                    cols.dedup();
                    prop_assert_eq!(cols.len(), a.columns.len());
                    for &c in &a.columns {
                        prop_assert_eq!(m.cell(a.slot, c), Some(a.gang));
                    }
                }
                for s in 0..m.slots() {
                    let mut used = 0;
                    for c in 0..p {
                        prop_assert_eq!(m.is_reserved(s, c), reserved.contains(&(s, c)));
                        if m.is_reserved(s, c) {
                            prop_assert_eq!(m.cell(s, c), None);
                            used += 1;
                        }
                        if let Some(g) = m.cell(s, c) {
                            used += 1;
                            let owners = live
                                .iter()
                                .filter(|a| a.slot == s && a.columns.contains(&c))
                                .count();
                            prop_assert_eq!(owners, 1);
                            prop_assert!(live.iter().any(|a| a.gang == g));
                        }
                    }
                    prop_assert_eq!(m.free_in(s), p - used);
                }
            }
        }
    }
}
