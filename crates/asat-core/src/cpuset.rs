//! [`CpuSet`]: a set of logical CPU numbers, as policies hand them to the runtime for pinning.

use std::fmt;

const WORDS: usize = 16;

/// A set of logical CPUs (numbers below [`CpuSet::CAPACITY`], as the kernel's `cpu_set_t`).
///
/// It is `Copy` and allocation-free so that a policy can return one from a hook on the hot path.
///
/// ```
/// use asat_core::CpuSet;
/// let set: CpuSet = [0, 1, 2, 5].into_iter().collect();
/// assert_eq!(set.len(), 4);
/// assert!(set.contains(5));
/// assert_eq!(set.to_string(), "0-2,5");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CpuSet {
    bits: [u64; WORDS],
}

impl CpuSet {
    /// One more than the largest CPU number a set can hold.
    pub const CAPACITY: usize = WORDS * 64;

    /// The empty set.
    pub const fn new() -> Self {
        Self { bits: [0; WORDS] }
    }

    /// Adds `cpu`. Returns false (and changes nothing) when `cpu >= CAPACITY`.
    pub fn insert(&mut self, cpu: usize) -> bool {
        if cpu >= Self::CAPACITY {
            return false;
        }
        self.bits[cpu / 64] |= 1 << (cpu % 64);
        true
    }

    /// Removes `cpu`.
    pub fn remove(&mut self, cpu: usize) {
        if cpu < Self::CAPACITY {
            self.bits[cpu / 64] &= !(1 << (cpu % 64));
        }
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: usize) -> bool {
        cpu < Self::CAPACITY && self.bits[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    /// The number of CPUs in the set.
    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// The CPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..Self::CAPACITY).filter(move |&c| self.contains(c))
    }

    /// The CPUs in both sets.
    pub fn intersection(&self, other: &CpuSet) -> CpuSet {
        let mut out = *self;
        for (a, b) in out.bits.iter_mut().zip(other.bits.iter()) {
            *a &= *b;
        }
        out
    }
}

impl FromIterator<usize> for CpuSet {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        let mut s = CpuSet::new();
        for c in iter {
            s.insert(c);
        }
        s
    }
}

/// Formats as a kernel-style list: `0-3,8,10-11`.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut it = self.iter().peekable();
        while let Some(start) = it.next() {
            let mut end = start;
            while it.peek() == Some(&(end + 1)) {
                end = it.next().unwrap_or(end);
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if end == start {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuSet({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let mut s = CpuSet::new();
        assert!(s.is_empty());
        assert!(s.insert(3));
        assert!(s.insert(64));
        assert!(!s.insert(CpuSet::CAPACITY));
        assert_eq!(s.len(), 2);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![3, 64]);
        s.remove(3);
        assert!(!s.contains(3));
        let t: CpuSet = [64, 65].into_iter().collect();
        assert_eq!(s.intersection(&t).iter().collect::<Vec<_>>(), vec![64]);
        assert_eq!(t.to_string(), "64-65");
    }
}
