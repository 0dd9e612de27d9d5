//! `use asat::*;`, a port of `use rayon::*;`, next to the prelude: the glob brings no name that
//! clashes with the crate's own or with std's (`asat` made every `asat::` path ambiguous, and a
//! `core` hid the `core` crate), so that std paths, the crate's paths and rayon's root items
//! all resolve as they do with rayon. The file fails to compile if one does not.

use asat::prelude::*;
use asat::*;

#[test]
fn the_glob_leaves_std_and_the_crate_paths_alone() {
    let p: *const u8 = core::ptr::null();
    assert!(p.is_null());
    assert_eq!(core::mem::size_of::<u64>(), 8);
    let s: &str = "a b";
    assert_eq!(str::from_utf8(s.as_bytes()), Ok("a b"));
    let v: Vec<u32> = asat::iter::repeat_n(3u32, 4).collect();
    assert_eq!(v, [3, 3, 3, 3]);
}

#[test]
fn rayon_root_items_resolve_through_the_glob() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let (sum, threads) = pool.install(|| {
        let sum: u64 = (0..1000u64).into_par_iter().sum();
        (sum, current_num_threads())
    });
    assert_eq!((sum, threads), (499_500, 2));
    let (a, b) = join(|| 1, || 2);
    assert_eq!(a + b, 3);
    let mut hits = vec![0u8; 4];
    scope(|s| {
        for h in hits.iter_mut() {
            s.spawn(move |_| *h = 1);
        }
    });
    assert_eq!(hits, [1; 4]);
    assert_eq!(current_thread_index(), None);
}
