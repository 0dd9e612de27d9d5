//! The split of a call and the ranges the drive functions hand out.

use super::*;
use std::sync::Mutex;

fn hints(min_len: usize, max_len: usize, schedule: Option<Schedule>) -> Hints {
    Hints {
        min_len,
        max_len,
        schedule,
        rounds: None,
        late: false,
    }
}

/// Every split a call can ask for: the default, blocks, pieces, explicit schedules,
/// rounds, and one block per thread of the pool (4 indices on the test runtimes).
pub(super) fn every_split() -> Vec<Hints> {
    let rounds = |r| Hints {
        rounds: Some(r),
        ..Hints::default()
    };
    vec![
        Hints::default(),
        hints(3, 0, None),
        hints(0, 5, None),
        hints(2, 7, None),
        hints(0, 0, Some(Schedule::dynamic(4))),
        hints(0, 0, Some(Schedule::guided(2))),
        hints(3, 0, Some(Schedule::static_chunked(2))),
        rounds(Rounds::Uniform(6)),
        rounds(Rounds::Exponential),
    ]
}

/// Checks that `ranges` (sorted) tile `0..len`, none empty.
pub(super) fn assert_tiles(mut ranges: Vec<Range<usize>>, len: usize, what: &str) {
    ranges.sort_by_key(|r| r.start);
    let mut at = 0;
    for r in &ranges {
        assert!(r.start == at && r.end > r.start, "{what}: {ranges:?}");
        at = r.end;
    }
    assert_eq!(at, len, "{what}: {ranges:?}");
}

#[test]
fn ranges_tile_the_space_under_every_split_and_team() {
    crate::internal::testing::on_every_team(|k| {
        for hints in every_split() {
            for (len, order) in [0, 1, 3, 4, 17, 100]
                .into_iter()
                .flat_map(|len| [(len, Order::Index), (len, Order::Spread)])
            {
                let seen = Mutex::new(Vec::new());
                ranges(Space { len, hints, order }, |r| {
                    seen.lock().unwrap().push(r)
                });
                let what = format!("team {k}, {len} indices, {hints:?}, {order:?}");
                assert_tiles(seen.into_inner().unwrap(), len, &what);
            }
        }
    });
}

/// A plan deals the pieces of its dynamic schedule from several places only when asked to.
#[test]
fn a_plan_spreads_its_pieces_when_asked_to() {
    let plan = Plan::new(100, hints(0, 10, None));
    assert_eq!(plan.dealing(), (0..100, Schedule::dynamic(10)));
    assert_eq!(plan.dealt(30..40), 30..40);
    let spread = plan.in_order(Order::Spread, 3);
    assert_eq!(spread.dealing(), (0..12, Schedule::dynamic(1)));
    let firsts: Vec<_> = (0..4).map(|d| spread.dealt(d..d + 1)).collect();
    assert_eq!(firsts, [0..10, 30..40, 60..70, 10..20]);
    assert_eq!(plan.in_order(Order::Spread, 1), plan);
    assert_eq!(plan.in_order(Order::Index, 3), plan);
    let statik = Plan::new(100, hints(0, 0, None)).in_order(Order::Spread, 3);
    assert_eq!(statik.dealing(), (0..100, Schedule::Static));
}

#[test]
fn default_is_static_over_single_indices() {
    let p = Plan::new(10, Hints::default());
    assert_eq!((p.block, p.blocks, p.schedule), (1, 10, Schedule::Static));
    assert_eq!(p.items(3..5), 3..5);
}

#[test]
fn min_len_makes_blocks_that_share_the_rest() {
    let p = Plan::new(10, hints(4, 0, None));
    assert_eq!((p.block, p.blocks), (4, 2));
    assert_eq!(
        (p.items(0..1), p.items(1..2), p.items(0..2)),
        (0..5, 5..10, 0..10)
    );
    let p = Plan::new(14, hints(4, 0, None));
    assert_eq!((p.blocks, p.items(0..1), p.items(1..3)), (3, 0..4, 4..14));
    // pieces of max_len count the longest block: 2^20 in blocks of 100_000 (104_857 or
    // 104_858) are two pieces of at most 1_000_000, not one
    let p = Plan::new(1 << 20, hints(100_000, 1_000_000, None));
    assert_eq!((p.blocks, p.schedule), (10, Schedule::dynamic(9)));
    assert_eq!(Plan::new(10, hints(10, 0, None)).blocks, 1);
    let p = Plan::new(10, hints(100, 0, None));
    assert_eq!((p.blocks, p.items(0..1)), (1, 0..10));
}

#[test]
fn max_len_hands_out_pieces_dynamically() {
    assert_eq!(
        Plan::new(100, hints(0, 8, None)).schedule,
        Schedule::dynamic(8)
    );
    // in blocks of min_len, and the minimum wins over a smaller maximum
    assert_eq!(
        Plan::new(100, hints(4, 8, None)).schedule,
        Schedule::dynamic(2)
    );
    assert_eq!(
        Plan::new(100, hints(16, 8, None)).schedule,
        Schedule::dynamic(1)
    );
    // a maximum the whole loop fits in changes nothing
    assert_eq!(Plan::new(8, hints(0, 8, None)).schedule, Schedule::Static);
}

#[test]
fn explicit_schedules_count_indices_and_win() {
    let p = Plan::new(100, hints(4, 8, Some(Schedule::dynamic(10))));
    assert_eq!(p.schedule, Schedule::dynamic(3));
    let p = Plan::new(100, hints(0, 0, Some(Schedule::guided(0))));
    assert_eq!(p.schedule, Schedule::guided(1));
    let p = Plan::new(100, hints(0, 8, Some(Schedule::Static)));
    assert_eq!(p.schedule, Schedule::Static);
}

#[test]
fn merged_hints_take_the_tighter_bounds() {
    let a = hints(4, 0, None);
    let b = hints(2, 16, Some(Schedule::dynamic(3)));
    assert_eq!(a.merge(b), hints(4, 16, Some(Schedule::dynamic(3))));
    assert_eq!(
        hints(0, 8, None).merge(hints(0, 4, None)),
        hints(0, 4, None)
    );
}
