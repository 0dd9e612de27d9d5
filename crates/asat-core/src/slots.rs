//! A reduction's result slots: one cache line per member, allocated once with the runtime.
//!
//! [`Runtime::parallel_reduce`](crate::Runtime::parallel_reduce) needs each member's
//! accumulator on the starting thread after the join. Allocating slots per call costs an
//! allocation and, when slots share a line, a line that both threads write at the end of their
//! part; these slots cost neither: each member's slot is a line of its own that stays in the
//! cache of the thread that last used it.
//!
//! # Protocol
//!
//! The slots hold values of any type that fits ([`Slots::fits`]), erased to bytes. Their use is
//! tied to the region lock: only a region started by the thread that holds it uses them, for
//! one reduction at a time (a reduction started inside a region runs inline and never touches
//! them).
//!
//! 1. Member `m` of the region (whoever runs it: its worker, or the starting thread after a
//!    revocation) moves its value into slot `m` with [`Slots::put`], once, as the last thing
//!    it does in the body. No other thread touches slot `m` meanwhile.
//! 2. The join (every member `FINISHED`, read with `SeqCst` after the members' `SeqCst` stores)
//!    orders those writes before the starting thread's reads.
//! 3. Still holding the region lock, the starting thread moves every filled slot's value out
//!    with [`Slots::drain`], which empties the slots; the drain drops whatever it was not asked
//!    for (a panicking region, a panicking `combine`), so the slots are empty when the lock is
//!    released.

use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::mem::{align_of, size_of, MaybeUninit};

use crossbeam_utils::CachePadded;

/// A slot's room: 96 bytes, 16-byte aligned.
type Bytes = [u128; 6];

struct Slot {
    full: bool,
    bytes: MaybeUninit<Bytes>,
}

/// Per-member result slots (see the module docs).
pub(crate) struct Slots {
    cells: Box<[CachePadded<UnsafeCell<Slot>>]>,
}

// SAFETY: a slot is only accessed by one thread at a time, in the order the protocol in the
// module docs sets out (its writer during the region, the starting thread after the join, which
// orders the two), and values are only put in it by callers that may send them to the starting
// thread (`T: Send` at `parallel_reduce`).
unsafe impl Sync for Slots {}
// SAFETY: the slots own no value outside a reduction (the drain empties them before the region
// lock is released), so moving them with the runtime moves no `T`.
unsafe impl Send for Slots {}

impl Slots {
    /// `n` empty slots.
    pub(crate) fn new(n: usize) -> Slots {
        Slots {
            cells: (0..n)
                .map(|_| {
                    CachePadded::new(UnsafeCell::new(Slot {
                        full: false,
                        bytes: MaybeUninit::uninit(),
                    }))
                })
                .collect(),
        }
    }

    /// Whether a `T` fits in a slot.
    pub(crate) const fn fits<T>() -> bool {
        size_of::<T>() <= size_of::<Bytes>() && align_of::<T>() <= align_of::<Bytes>()
    }

    /// Moves `value` into slot `m`.
    ///
    /// # Safety
    /// `T` fits; the caller runs member `m` of a region started by the holder of the region
    /// lock, which drains the slots as `T` after the join; slot `m` is put once per region.
    pub(crate) unsafe fn put<T>(&self, m: usize, value: T) {
        debug_assert!(Self::fits::<T>());
        // SAFETY: by the caller's contract no other thread touches slot `m` until the join.
        let slot = unsafe { &mut *self.cells[m].get() };
        debug_assert!(!slot.full, "slot {m} put twice");
        // SAFETY: `T` fits the slot's bytes in size and alignment.
        unsafe { slot.bytes.as_mut_ptr().cast::<T>().write(value) };
        slot.full = true;
    }

    /// Moves the values out of slots `0..n`, in slot order, skipping empty ones; drops the
    /// rest when the iterator is dropped.
    ///
    /// # Safety
    /// The caller holds the region lock, and the region whose members put values (all of type
    /// `T`) has joined; no member touches the slots any more.
    pub(crate) unsafe fn drain<T>(&self, n: usize) -> Drain<'_, T> {
        Drain {
            slots: self,
            next: 0,
            end: n.min(self.cells.len()),
            _value: PhantomData,
        }
    }
}

/// The values of a joined region's slots (see [`Slots::drain`]).
pub(crate) struct Drain<'a, T> {
    slots: &'a Slots,
    next: usize,
    end: usize,
    _value: PhantomData<T>,
}

impl<T> Iterator for Drain<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        while self.next < self.end {
            let m = self.next;
            self.next += 1;
            // SAFETY: `drain`'s contract: the region has joined and the lock holder is the only
            // thread using the slots.
            let slot = unsafe { &mut *self.slots.cells[m].get() };
            if slot.full {
                slot.full = false;
                // SAFETY: a full slot holds a `T` put by `put` (the drain's contract says which
                // type), and clearing `full` first means it is read once.
                return Some(unsafe { slot.bytes.as_ptr().cast::<T>().read() });
            }
        }
        None
    }
}

impl<T> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        self.for_each(drop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn values_come_back_in_slot_order_and_empty_slots_are_skipped() {
        let s = Slots::new(4);
        // SAFETY: one thread plays every member and then the starting thread.
        let got: Vec<u64> = unsafe {
            s.put(2, 20u64);
            s.put(0, 0u64);
            s.drain(4).collect()
        };
        assert_eq!(got, [0, 20]);
        // SAFETY: as above; the slots are empty again.
        assert_eq!(unsafe { s.drain::<u64>(4) }.count(), 0);
    }

    #[test]
    fn dropped_drain_drops_what_it_holds() {
        let s = Slots::new(3);
        let v = Arc::new(());
        // SAFETY: as in the test above.
        unsafe {
            s.put(0, (Arc::clone(&v), 1u8));
            s.put(1, (Arc::clone(&v), 2u8));
            let mut d = s.drain::<(Arc<()>, u8)>(3);
            assert_eq!(d.next().map(|x| x.1), Some(1));
        }
        assert_eq!(
            Arc::strong_count(&v),
            1,
            "the second value was dropped with the drain"
        );
    }

    #[test]
    fn fits_by_size_and_alignment() {
        assert!(Slots::fits::<f64>());
        assert!(Slots::fits::<(u64, u64, Vec<u8>)>());
        assert!(Slots::fits::<[u8; 96]>());
        assert!(!Slots::fits::<[u8; 97]>());
        #[repr(align(32))]
        struct Wide(#[allow(dead_code)] u8);
        assert!(!Slots::fits::<Wide>());
    }
}
