//! Shared schedulers in one process, seen through an observer of their domain: what a gang and
//! a dropped scheduler leave in the file.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::domain::table::{Domain, SLOTS};
use crate::GangScheduler;

/// A fresh folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("asat-gang-sched-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Self(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn shared(dir: &TempDir) -> GangScheduler {
    GangScheduler::builder()
        .shared_dir(&dir.0)
        .cpus([0].into_iter().collect())
        .quantum(Duration::from_millis(5))
        .build()
        .unwrap()
}

/// The cells of the domain that are taken: (row, column, participant).
fn taken(o: &Domain) -> Vec<(usize, usize, usize)> {
    (0..SLOTS)
        .flat_map(|s| (0..o.columns()).map(move |c| (s, c)))
        .filter_map(|(s, c)| o.cell(s, c).map(|(p, _)| (s, c, p)))
        .collect()
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn gangs_take_rows_of_the_file_and_a_dropped_scheduler_leaves_it() {
    let dir = TempDir::new("leave");
    let a = shared(&dir);
    let b = shared(&dir);
    let o = Domain::observe(&dir.0, &[0]).unwrap();
    let ga = a.gang(1).unwrap();
    let gb = b.gang(1).unwrap();
    assert_eq!(
        (ga.slot(), gb.slot()),
        (0, 1),
        "first fit across processes' schedulers"
    );
    assert_eq!(
        a.used_slots(),
        vec![0, 1],
        "the domain's rows, not only a's"
    );
    assert_eq!(taken(&o).len(), 2);
    drop(ga);
    assert_eq!(taken(&o).len(), 1, "a dropped gang frees its cell");
    drop(a);
    assert!(
        o.owners().len() == 1 && taken(&o).len() == 1,
        "a dropped scheduler gave its participant slot back"
    );
    wait_for("b leads the domain", || {
        o.scheduler().is_some() && b.current_slot() == Some(1)
    });
    let e = b.gang(1).map(drop);
    assert!(e.is_ok(), "{e:?}");
    drop(gb);
    let policy = b.policy();
    drop(b);
    assert!(o.owners().is_empty() && taken(&o).is_empty());
    let e = asat_core::Runtime::builder()
        .max_threads(1)
        .policy(policy)
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("left the domain"), "{e}");
}

#[test]
fn an_orphaned_cell_stays_taken_until_its_thread_leaves() {
    let dir = TempDir::new("orphan");
    let s = shared(&dir);
    let o = Domain::observe(&dir.0, &[0]).unwrap();
    let gang = s.gang(1).unwrap();
    let (joined_tx, joined_rx) = mpsc::channel();
    let (exit_tx, exit_rx) = mpsc::channel::<()>();
    let gang = std::sync::Arc::new(gang);
    let g = std::sync::Arc::clone(&gang);
    let t = std::thread::spawn(move || {
        std::mem::forget(g.join(0).unwrap());
        drop(g);
        joined_tx.send(()).unwrap();
        exit_rx.recv().unwrap();
        // The thread exits bound: its binding's destructor leaves the cell.
    });
    joined_rx.recv().unwrap();
    drop(gang); // the last reference: the gang is dropped under its bound thread
    assert_eq!(taken(&o).len(), 1, "kept for the thread still bound");
    let g2 = s.gang(1).unwrap();
    assert_eq!(g2.slot(), 1, "no new gang is placed on the kept cell");
    exit_tx.send(()).unwrap();
    t.join().unwrap();
    let left = taken(&o);
    assert!(
        left.len() == 1 && left[0].0 == 1,
        "the thread freed its cell as it left: {left:?}"
    );
}

/// A gang thread may be stopped while it places a gang, holding the process's placement mutex
/// and the domain's allocation lock; the scheduler thread (leader or not) must never wait for
/// either, or the rotation that would resume the holder stops. Two schedulers of one process,
/// a 1-CPU domain, a quantum of 1 ms: one gang's thread places and frees gangs through both
/// schedulers all the time while the other gang's thread spins.
#[test]
fn a_thread_stopped_while_placing_a_gang_does_not_stop_the_rotation() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let dir = TempDir::new("placing");
    let build = || {
        GangScheduler::builder()
            .shared_dir(&dir.0)
            .cpus([0].into_iter().collect())
            .quantum(Duration::from_millis(1))
            .stop_timeout(Duration::from_secs(60))
            .build()
            .unwrap()
    };
    let (a, b) = (build(), build());
    let (ga, gb) = (a.gang(1).unwrap(), b.gang(1).unwrap());
    let stop = AtomicBool::new(false);
    let (placed, spun) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        s.spawn(|| {
            let _m = ga.join(0).unwrap();
            while !stop.load(Ordering::Relaxed) {
                drop(a.gang(1).unwrap());
                drop(b.gang(1).unwrap());
                placed.fetch_add(1, Ordering::Relaxed);
            }
        });
        s.spawn(|| {
            let _m = gb.join(0).unwrap();
            while !stop.load(Ordering::Relaxed) {
                spun.fetch_add(1, Ordering::Relaxed);
            }
        });
        // Both gangs progress through many switches (a deadlocked rotation stops one of them
        // for good: then this times out).
        let start = Instant::now();
        let mut seen = (0, 0);
        let mut rounds = 0;
        while rounds < 200 {
            std::thread::sleep(Duration::from_millis(2));
            let now = (placed.load(Ordering::Relaxed), spun.load(Ordering::Relaxed));
            if now.0 > seen.0 && now.1 > seen.1 {
                rounds += 1;
                seen = now;
            }
            if start.elapsed() > Duration::from_secs(30) {
                // The gang threads cannot be joined (one is parked for good): end the test
                // process with the failure.
                use std::io::Write as _;
                let _ = writeln!(
                    std::io::stderr(),
                    "the rotation stopped after {rounds} rounds: {now:?}"
                );
                std::process::exit(101);
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
}
