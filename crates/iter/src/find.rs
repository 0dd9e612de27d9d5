//! The searches: `any` (and `all`), `find_any`, `find_first`, `find_last`.
//!
//! `any` and `find_any` share a flag per call: once a member has found a hit, every member stops
//! before its next item. `find_first` and `find_last` look through every range (each range stops
//! at its own first hit, for `find_first`) and keep the hit of lowest, or highest, index.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::drive;
use crate::plumbing::Producer;

/// Whether `pred` is true for some item of `p`.
pub(crate) fn any<P, F>(p: &P, pred: F) -> bool
where
    P: Producer,
    F: Fn(P::Item) -> bool + Sync,
{
    let found = AtomicBool::new(false);
    drive::run(p, |_, mut items| {
        if items.any(|x| found.load(Ordering::Relaxed) || pred(x)) {
            found.store(true, Ordering::Relaxed);
        }
    });
    found.into_inner()
}

/// Some item of `p` for which `pred` is true.
pub(crate) fn find_any<P, F>(p: &P, pred: F) -> Option<P::Item>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync,
{
    let found = AtomicBool::new(false);
    drive::reduce(
        p,
        || None,
        |acc, mut items| {
            acc.or_else(|| {
                let hit = items
                    .by_ref()
                    .take_while(|_| !found.load(Ordering::Relaxed))
                    .find(|x| pred(x));
                if hit.is_some() {
                    found.store(true, Ordering::Relaxed);
                }
                hit
            })
        },
        |a, b| a.or(b),
    )
}

/// The first item of `p` for which `pred` is true.
pub(crate) fn find_first<P, F>(p: &P, pred: F) -> Option<P::Item>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync,
{
    drive::reduce(
        p,
        || None,
        |acc, mut items| acc.or_else(|| items.find(|x| pred(x))),
        |a, b| a.or(b),
    )
}

/// The last item of `p` for which `pred` is true.
pub(crate) fn find_last<P, F>(p: &P, pred: F) -> Option<P::Item>
where
    P: Producer,
    F: Fn(&P::Item) -> bool + Sync,
{
    drive::reduce(
        p,
        || None,
        |acc, items| items.filter(|x| pred(x)).last().or(acc),
        |a, b| b.or(a),
    )
}
