//! The rotation rule of the gang matrix's slots, as pure logic: which slot runs next. The
//! in-process scheduler and a shared domain's watcher both rotate by it.

/// The rotation rule, as pure logic: among slots `0..high`, the next used slot after `cur`
/// (round-robin) with a runnable thread; else `cur` itself if it is still used; else the
/// lowest used slot; else none.
pub(crate) fn next_slot(
    cur: Option<usize>,
    high: usize,
    used: impl Fn(usize) -> bool,
    runnable: impl Fn(usize) -> bool,
) -> Option<usize> {
    if high == 0 {
        return None;
    }
    let start = cur.map_or(0, |c| c + 1);
    (0..high)
        .map(|i| (start + i) % high)
        .find(|&s| used(s) && runnable(s))
        .or(cur.filter(|&c| used(c)))
        .or_else(|| (0..high).find(|&s| used(s)))
}
