//! Unit tests of the shared domain file: layout, participants, placement, reclaiming, and
//! hostile or broken files; with real processes in `kill` (the election) and `process` (gang
//! processes), with schedulers in one process in `scheduler`.

mod kill;
mod process;
mod scheduler;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use super::table::{file_name, fingerprint, Domain, PARTICIPANTS, SLOTS};

/// A fresh folder under the temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("asat-gang-domain-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Self(p)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const CPUS: [usize; 4] = [0, 1, 2, 3];

#[test]
fn participants_are_distinct_and_freed_on_drop() {
    let dir = TempDir::new("participants");
    let a = Domain::open(Some(dir.path()), &CPUS).unwrap();
    let b = Domain::open(Some(dir.path()), &CPUS).unwrap();
    assert_ne!(a.participant(), b.participant());
    assert_eq!(a.path(), b.path());
    assert_eq!(a.columns(), 4);
    let me = std::process::id();
    assert_eq!(a.owners(), vec![me, me]);
    let pb = b.participant();
    drop(b);
    assert!(!a.is_listed(pb));
    assert_eq!(a.owners(), vec![me]);
    // The freed slot is claimed again.
    let c = Domain::open(Some(dir.path()), &CPUS).unwrap();
    assert_eq!(c.participant(), pb);
}

#[test]
fn placement_is_first_fit_across_participants_and_freed() {
    let dir = TempDir::new("placement");
    let a = Domain::open(Some(dir.path()), &CPUS).unwrap();
    let b = Domain::open(Some(dir.path()), &CPUS).unwrap();
    assert_eq!(a.allocate(3, 7).unwrap(), (0, vec![0, 1, 2]));
    // Another participant's gang of 1 fills row 0; one of 2 goes to row 1.
    assert_eq!(b.allocate(1, 1).unwrap(), (0, vec![3]));
    assert_eq!(b.allocate(2, 2).unwrap(), (1, vec![0, 1]));
    assert_eq!(a.cell(0, 0), Some((a.participant(), 7)));
    assert_eq!(a.cell(0, 3), Some((b.participant(), 1)));
    assert_eq!(a.cell(1, 2), None);
    // Each frees only its own gang.
    assert_eq!(a.free(1, &[]).unwrap(), 0);
    assert_eq!(b.free(1, &[]).unwrap(), 1);
    assert_eq!(a.cell(0, 3), None);
    let e = a.allocate(5, 9).unwrap_err().to_string();
    assert!(e.contains("does not fit 4 processors"), "{e}");
    // Dropping a participant frees all its cells.
    drop(b);
    assert_eq!(a.cell(1, 0), None);
    assert_eq!(a.cell(0, 0), Some((a.participant(), 7)));
}

#[test]
fn the_matrix_holds_at_most_its_slots() {
    let dir = TempDir::new("full");
    let a = Domain::open(Some(dir.path()), &[0]).unwrap();
    for g in 0..SLOTS {
        assert_eq!(a.allocate(1, g as u64).unwrap().0, g);
    }
    let e = a.allocate(1, 999).unwrap_err().to_string();
    assert!(e.contains(&format!("all {SLOTS} slots")), "{e}");
}

#[test]
fn the_last_user_removes_the_file_and_a_creator_removes_unused_ones() {
    let dir = TempDir::new("remove");
    let file = dir.path().join(file_name(&CPUS));
    let a = Domain::open(Some(dir.path()), &CPUS).unwrap();
    let b = Domain::open(Some(dir.path()), &CPUS).unwrap();
    drop(a);
    assert!(file.exists(), "removed while another domain holds it");
    drop(b);
    assert!(!file.exists(), "left behind by its last user");
    // A domain in use, and one that a dead process left.
    let held = Domain::open(Some(dir.path()), &CPUS).unwrap();
    let stale = dir.path().join(file_name(&[7, 8]));
    std::fs::write(&stale, b"left").unwrap();
    std::fs::set_permissions(&stale, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Creating the domain of other CPUs removes the stale file only.
    let other = Domain::open(Some(dir.path()), &[0, 1]).unwrap();
    assert!(!stale.exists());
    assert!(file.exists() && dir.path().join(file_name(&[0, 1])).exists());
    drop((held, other));
}

#[test]
fn dead_participants_and_garbage_cells_are_reclaimed() {
    let dir = TempDir::new("reclaim");
    let a = Domain::open(Some(dir.path()), &CPUS).unwrap();
    let b = Domain::open(Some(dir.path()), &CPUS).unwrap();
    b.allocate(2, 5).unwrap();
    let pb = b.participant();
    // A dead participant: a record with a tag whose lock nobody holds (what a killed process
    // leaves), owning cells of row 0 (written as it would have, after `b` let go).
    let dead = (PARTICIPANTS - 1) as u64;
    a.record(PARTICIPANTS - 1)[0].store((1 << 32) | 4_000_000, Ordering::SeqCst);
    a.test_store_cell(1, 3, ((dead + 1) << 48) | 77);
    // A cell naming no valid participant.
    a.test_store_cell(2, 0, 0xffff_0000_0000_0001);
    assert_eq!(a.reclaim_dead().unwrap(), 1);
    assert!(!a.is_listed(PARTICIPANTS - 1));
    assert_eq!(a.cell(1, 3), None);
    assert_eq!(a.cell(2, 0), None);
    // The live participant and its cells are untouched.
    assert!(a.is_listed(pb));
    assert_eq!(a.cell(0, 0), Some((pb, 5)));
}

#[test]
fn one_scheduler_at_a_time_within_a_process_too() {
    let dir = TempDir::new("elect");
    let a = Domain::open(Some(dir.path()), &CPUS).unwrap();
    let b = Domain::open(Some(dir.path()), &CPUS).unwrap();
    assert_eq!(a.scheduler(), None);
    assert!(a.try_elect().unwrap());
    assert!(a.try_elect().unwrap(), "still the scheduler");
    assert!(!b.try_elect().unwrap());
    assert_eq!(b.scheduler(), Some(a.participant()));
    drop(a);
    assert!(
        b.try_elect().unwrap(),
        "takes over once the scheduler is gone"
    );
    assert_eq!(b.scheduler(), Some(b.participant()));
}

fn open_err(dir: &Path) -> String {
    Domain::open(Some(dir), &CPUS).unwrap_err().to_string()
}

#[test]
fn hostile_or_broken_files_are_clear_errors() {
    let dir = TempDir::new("hostile");
    std::fs::create_dir(dir.path()).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let file = dir.path().join(file_name(&CPUS));

    // A symbolic link in place of the file.
    let target = dir.path().join("elsewhere");
    std::fs::write(&target, b"").unwrap();
    std::os::unix::fs::symlink(&target, &file).unwrap();
    let e = open_err(dir.path());
    assert!(
        e.starts_with("shared gang domain:") && e.contains("symbolic link"),
        "{e}"
    );
    std::fs::remove_file(&file).unwrap();

    // A domain's last user removes its file: `left_behind` writes it back as a process that
    // died would have left it, as `change` makes it.
    let left_behind = |change: &dyn Fn(&mut Vec<u8>)| {
        let d = Domain::open(Some(dir.path()), &CPUS).unwrap();
        let mut bytes = std::fs::read(&file).unwrap();
        drop(d);
        assert!(!file.exists());
        change(&mut bytes);
        std::fs::write(&file, &bytes).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    };

    // Open to others.
    left_behind(&|_| {});
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = open_err(dir.path());
    assert!(
        e.starts_with("shared gang domain:") && e.contains("mode 0644"),
        "{e}"
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();

    // Another size (another layout, or truncated).
    let len = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(len - 8)
        .unwrap();
    let e = open_err(dir.path());
    assert!(
        e.starts_with("shared gang domain:") && e.contains(&format!("{}", len - 8)),
        "{e}"
    );
    std::fs::remove_file(&file).unwrap();

    // A header of another layout or domain.
    left_behind(&|bytes| bytes[32..40].copy_from_slice(&(fingerprint(&CPUS) ^ 1).to_le_bytes()));
    let e = open_err(dir.path());
    assert!(e.contains("another layout or domain"), "{e}");
    std::fs::remove_file(&file).unwrap();

    // Another owner (only root can make one).
    if crate::sys::getuid() == 0 {
        left_behind(&|_| {});
        std::os::unix::fs::chown(&file, Some(12345), None).unwrap();
        let e = open_err(dir.path());
        assert!(
            e.starts_with("shared gang domain:") && e.contains("uid 12345"),
            "{e}"
        );
    }

    // A folder open to others.
    let open_dir = TempDir::new("hostile-dir");
    std::fs::create_dir(open_dir.path()).unwrap();
    std::fs::set_permissions(open_dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = open_err(open_dir.path());
    assert!(
        e.starts_with("shared gang domain:") && e.contains("mode 0755"),
        "{e}"
    );
}

#[test]
fn a_stop_waits_for_the_acks_of_every_live_participant() {
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    let dir = TempDir::new("rotation");
    let a = Domain::open(Some(dir.path()), &CPUS).unwrap();
    let b = Domain::open(Some(dir.path()), &CPUS).unwrap();
    let c = Domain::open(Some(dir.path()), &CPUS).unwrap();
    assert_eq!(b.allocate(4, 1).unwrap().0, 0);
    assert_eq!(c.allocate(4, 1).unwrap().0, 1);
    assert_eq!(a.rows(), (0b11, 0), "both rows used, none runnable");
    c.set_runnable(1, true);
    c.set_runnable(5, true);
    assert_eq!(
        a.rows(),
        (0b11, 0b10),
        "a runnable bit counts only in a used row"
    );
    let (running, stopped, done) = (
        AtomicBool::new(false),
        AtomicBool::new(false),
        AtomicBool::new(false),
    );
    let wait = |what: &str, flag: &AtomicBool| {
        let start = Instant::now();
        while !flag.load(Ordering::SeqCst) {
            assert!(start.elapsed() < Duration::from_secs(30), "{what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    std::thread::scope(|s| {
        // b's and c's watchers: b runs row 0 when told, "stops" its threads and acknowledges;
        // c, with nothing in row 0, acknowledges every stop.
        for (d, row) in [(&b, Some(0)), (&c, None)] {
            let (running, stopped, done) = (&running, &stopped, &done);
            s.spawn(move || {
                while !done.load(Ordering::SeqCst) {
                    let (e, now) = d.switch_state();
                    if e % 2 == 0 {
                        if row.is_some() && now == row {
                            running.store(true, Ordering::SeqCst);
                        }
                    } else if d.acked() != e {
                        if row.is_some() && running.swap(false, Ordering::SeqCst) {
                            stopped.store(true, Ordering::SeqCst);
                        }
                        d.ack(e, 0);
                    }
                    d.wait_change(e, Duration::from_millis(10));
                }
            });
        }
        a.start(Some(0));
        assert_eq!(a.switch_state().1, Some(0));
        wait("b runs row 0", &running);
        let e = a.begin_stop();
        assert_eq!(e % 2, 1);
        assert!(
            !a.wait_acks(e, Duration::from_millis(20)),
            "the scheduler's own participant has not acknowledged"
        );
        a.ack(e, 7);
        assert!(a.wait_acks(e, Duration::from_secs(30)));
        assert_eq!(
            a.last_parked(e),
            Some(7),
            "the latest park of any participant"
        );
        assert!(
            stopped.load(Ordering::SeqCst),
            "acknowledged only once stopped"
        );
        a.start(Some(1));
        done.store(true, Ordering::SeqCst);
    });
    // c's watcher is gone: the next stop cannot complete while c is listed ...
    let e = a.begin_stop();
    a.ack(e, 0);
    b.ack(e, 0);
    assert!(!a.wait_acks(e, Duration::from_millis(20)));
    assert!(!a.stop_acked(e));
    // ... and completes once c is gone (dropped here; killed, it would be reclaimed).
    drop(c);
    assert!(a.stop_acked(e));
    a.start(None);
    assert_eq!(a.switch_state(), (e.wrapping_add(1), None));
    assert_eq!(a.rows(), (0b1, 0), "c's row and bits are gone with it");
}
