//! [`NodeShare`]: the part of a node that one rank's runtime works within.
//!
//! The ranks of a job that share a node (found with a shared-memory communicator split, see
//! [`Hybrid`](crate::Hybrid)) exchange their CPU affinity masks, and each computes its share
//! from all of them with [`NodeShare::compute`], a pure function (so every rank reaches the
//! same partition, and the rules are tested without MPI):
//!
//! 1. **Bound**: the masks are pairwise disjoint (mpirun's `--bind-to core`, its default for
//!    two ranks or fewer, or a batch system's per-task cpusets): a rank's share is its own
//!    mask. A node with one rank is this case.
//! 2. **Split**: the masks are equal within groups and the groups are disjoint (`--bind-to
//!    none`: one group, the whole node; `--bind-to socket`: a group per socket): each group's
//!    CPUs are split into contiguous blocks, one per rank of the group in local-rank order,
//!    the first `cpus % ranks` blocks one CPU larger.
//! 3. **Split of the union**: any other overlap: the union of the masks is split as in 2, as if
//!    every rank had it.
//! 4. **Oversubscribed**: a group has more ranks than CPUs: each rank gets one CPU, rank `j`
//!    of the group the `j % cpus`-th; the ranks alone oversubscribe the node, which
//!    [`NodeShare::kind`] reports.
//!
//! A cgroup CPU quota lowers the thread counts but not the CPU sets: the quota (the smallest a
//! rank learned; a rank learns it when `std::thread::available_parallelism` is below its mask)
//! is split evenly among the node's ranks, and each rank's `threads` is at most its part
//! (never below 1).

use asat_core::CpuSet;

/// How a rank's share of its node was found.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareKind {
    /// The ranks' masks are disjoint: the share is this rank's own mask.
    Bound,
    /// Ranks share CPUs: the share is an even split of their CPUs.
    Split,
    /// More ranks share CPUs than there are CPUs: one CPU each, shared with other ranks.
    Oversubscribed,
}

/// One rank's part of its node: the CPUs it should run on and the most threads its runtime
/// should use.
///
/// ```
/// use asat_core::CpuSet;
/// use asat_mpi::{NodeShare, ShareKind};
/// // three ranks not bound by mpirun, on a node of 8 CPUs
/// let all: CpuSet = (0..8).collect();
/// let share = NodeShare::compute(&[all, all, all], None, 2);
/// assert_eq!(share.kind, ShareKind::Split);
/// assert_eq!(share.cpus.to_string(), "6-7");
/// assert_eq!(share.threads, 2);
/// // bound to one core each
/// let one = |c| std::iter::once(c).collect::<CpuSet>();
/// let share = NodeShare::compute(&[one(0), one(1)], None, 1);
/// assert_eq!((share.kind, share.threads), (ShareKind::Bound, 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeShare {
    /// This rank's rank among the ranks of its node.
    pub local_rank: usize,
    /// How many ranks of the job share the node.
    pub local_size: usize,
    /// The CPUs of the node this rank may use (the union of the node-local ranks' masks).
    pub node_cpus: CpuSet,
    /// This rank's CPUs.
    pub cpus: CpuSet,
    /// The most threads this rank's runtime should run: at least 1, at most `cpus.len()`.
    pub threads: usize,
    /// How the share was found.
    pub kind: ShareKind,
}

impl NodeShare {
    /// The share of rank `local_rank` from the affinity masks of all node-local ranks (in
    /// local-rank order) and the node's cgroup CPU quota, if one is known (in whole CPUs).
    ///
    /// An empty mask stands for a rank whose mask could not be read; it is treated as the
    /// union of the others (or CPU 0 when all are empty). `local_rank` past the end is clamped
    /// to the last rank.
    pub fn compute(masks: &[CpuSet], quota: Option<usize>, local_rank: usize) -> NodeShare {
        let n = masks.len().max(1);
        let me = local_rank.min(n - 1);
        let mut union = masks.iter().fold(CpuSet::new(), |u, m| or(&u, m));
        if union.is_empty() {
            union.insert(0);
        }
        let masks: Vec<CpuSet> = if masks.is_empty() {
            vec![union]
        } else {
            masks
                .iter()
                .map(|m| if m.is_empty() { union } else { *m })
                .collect()
        };
        let (cpus, kind) = if pairwise_disjoint(&masks) {
            (masks[me], ShareKind::Bound)
        } else if groups_disjoint(&masks) {
            let group: Vec<usize> = (0..n).filter(|&j| masks[j] == masks[me]).collect();
            let pos = group.iter().position(|&j| j == me).unwrap_or(0);
            split(&masks[me], group.len(), pos)
        } else {
            split(&union, n, me)
        };
        let mut threads = cpus.len().max(1);
        if let Some(q) = quota {
            let q = q.max(1);
            let part = q / n + usize::from(me < q % n);
            threads = threads.min(part.max(1));
        }
        NodeShare {
            local_rank: me,
            local_size: n,
            node_cpus: union,
            cpus,
            threads,
            kind,
        }
    }
}

fn or(a: &CpuSet, b: &CpuSet) -> CpuSet {
    a.iter().chain(b.iter()).collect()
}

fn pairwise_disjoint(masks: &[CpuSet]) -> bool {
    let total: usize = masks.iter().map(CpuSet::len).sum();
    let union = masks.iter().fold(CpuSet::new(), |u, m| or(&u, m));
    total == union.len()
}

/// Whether any two masks are either equal or disjoint.
fn groups_disjoint(masks: &[CpuSet]) -> bool {
    masks.iter().enumerate().all(|(i, a)| {
        masks[i + 1..]
            .iter()
            .all(|b| a == b || a.intersection(b).is_empty())
    })
}

/// Block `pos` of `ranks` contiguous blocks of `set`; one CPU each, shared, when the set has
/// fewer CPUs than ranks.
fn split(set: &CpuSet, ranks: usize, pos: usize) -> (CpuSet, ShareKind) {
    let cpus: Vec<usize> = set.iter().collect();
    let c = cpus.len();
    if ranks > c {
        let one = std::iter::once(cpus[pos % c]).collect();
        return (one, ShareKind::Oversubscribed);
    }
    let base = c / ranks;
    let extra = c % ranks;
    let start = pos * base + pos.min(extra);
    let len = base + usize::from(pos < extra);
    (
        cpus[start..start + len].iter().copied().collect(),
        ShareKind::Split,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn set(cpus: &[usize]) -> CpuSet {
        cpus.iter().copied().collect()
    }

    fn range(r: std::ops::Range<usize>) -> CpuSet {
        r.collect()
    }

    #[test]
    fn bound_ranks_keep_their_masks() {
        let masks = [set(&[0, 1]), set(&[2, 3]), set(&[4])];
        let s = NodeShare::compute(&masks, None, 1);
        assert_eq!(s.kind, ShareKind::Bound);
        assert_eq!(s.cpus, set(&[2, 3]));
        assert_eq!(s.threads, 2);
        assert_eq!(s.node_cpus, range(0..5));
        assert_eq!((s.local_rank, s.local_size), (1, 3));
        let alone = NodeShare::compute(&[range(0..4)], None, 0);
        assert_eq!((alone.kind, alone.threads), (ShareKind::Bound, 4));
    }

    #[test]
    fn unbound_ranks_split_the_node() {
        let all = range(0..7);
        let shares: Vec<_> = (0..3)
            .map(|r| NodeShare::compute(&[all, all, all], None, r))
            .collect();
        assert_eq!(shares[0].cpus, range(0..3));
        assert_eq!(shares[1].cpus, range(3..5));
        assert_eq!(shares[2].cpus, range(5..7));
        assert!(shares.iter().all(|s| s.kind == ShareKind::Split));
        assert_eq!(shares.iter().map(|s| s.threads).sum::<usize>(), 7);
    }

    #[test]
    fn socket_groups_split_their_socket() {
        let (s0, s1) = (range(0..4), range(4..8));
        let masks = [s0, s1, s0];
        assert_eq!(NodeShare::compute(&masks, None, 0).cpus, range(0..2));
        assert_eq!(NodeShare::compute(&masks, None, 2).cpus, range(2..4));
        let lone = NodeShare::compute(&masks, None, 1);
        assert_eq!((lone.cpus, lone.kind), (s1, ShareKind::Split));
    }

    #[test]
    fn more_ranks_than_cpus_oversubscribe() {
        let all = range(0..2);
        let s: Vec<_> = (0..3)
            .map(|r| NodeShare::compute(&[all, all, all], None, r))
            .collect();
        assert_eq!(s[2].cpus, set(&[0]));
        assert!(s
            .iter()
            .all(|x| x.kind == ShareKind::Oversubscribed && x.threads == 1));
    }

    #[test]
    fn partial_overlap_splits_the_union() {
        let masks = [range(0..4), range(2..6)];
        let a = NodeShare::compute(&masks, None, 0);
        let b = NodeShare::compute(&masks, None, 1);
        assert_eq!((a.cpus, b.cpus), (range(0..3), range(3..6)));
    }

    #[test]
    fn quota_lowers_threads_not_cpus() {
        let all = range(0..8);
        let s = NodeShare::compute(&[all, all], Some(3), 0);
        assert_eq!((s.cpus.len(), s.threads), (4, 2));
        let s = NodeShare::compute(&[all, all], Some(3), 1);
        assert_eq!(s.threads, 1);
        let s = NodeShare::compute(&[all, all, all], Some(1), 2);
        assert_eq!(s.threads, 1, "never below one thread");
    }

    #[test]
    fn unreadable_masks_stand_for_the_union() {
        let s = NodeShare::compute(&[CpuSet::new(), range(0..4)], None, 0);
        assert_eq!(s.cpus, range(0..2));
        let s = NodeShare::compute(&[CpuSet::new()], None, 5);
        assert_eq!((s.cpus, s.local_rank, s.threads), (set(&[0]), 0, 1));
        let s = NodeShare::compute(&[], None, 0);
        assert_eq!(s.threads, 1);
    }

    fn masks_strategy() -> impl Strategy<Value = Vec<CpuSet>> {
        let mask = prop::collection::btree_set(0usize..16, 0..8)
            .prop_map(|s| s.into_iter().collect::<CpuSet>());
        prop_oneof![
            // arbitrary masks
            prop::collection::vec(mask.clone(), 1..6),
            // all equal (not bound)
            (mask, 1usize..8).prop_map(|(m, n)| vec![m; n]),
            // one CPU each (bound to cores)
            (1usize..10).prop_map(|n| (0..n).map(|c| std::iter::once(c).collect()).collect()),
        ]
    }

    proptest! {
        /// Every rank gets 1 ..= |cpus| threads on CPUs of the node; unless the ranks alone
        /// oversubscribe it, the shares are disjoint and their threads fit the node.
        #[test]
        fn shares_partition_the_node(masks in masks_strategy(), quota in prop::option::of(1usize..20)) {
            let shares: Vec<NodeShare> = (0..masks.len())
                .map(|r| NodeShare::compute(&masks, quota, r))
                .collect();
            let mut seen = CpuSet::new();
            let mut overlap = false;
            for s in &shares {
                prop_assert!(s.threads >= 1 && s.threads <= s.cpus.len());
                prop_assert_eq!(s.cpus.intersection(&s.node_cpus), s.cpus);
                prop_assert_eq!(s.node_cpus, shares[0].node_cpus);
                overlap |= !seen.intersection(&s.cpus).is_empty();
                seen = or(&seen, &s.cpus);
            }
            let any_over = shares.iter().any(|s| s.kind == ShareKind::Oversubscribed);
            prop_assert_eq!(overlap, any_over);
            if !any_over {
                let total: usize = shares.iter().map(|s| s.threads).sum();
                prop_assert!(total <= shares[0].node_cpus.len());
                if let Some(q) = quota {
                    prop_assert!(total <= q.max(shares.len()));
                }
            }
        }
    }
}
