//! The election with real processes: the test binary runs itself as candidate processes,
//! SIGKILLs the scheduling one, and checks that another takes over and that the dead one's
//! participant slot and cells are freed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::domain::table::{Domain, SLOTS};

const DIR_ENV: &str = "ASAT_GANG_TEST_DOMAIN_DIR";
const CPUS: [usize; 2] = [0, 1];
/// How often a candidate campaigns (its "quantum").
const QUANTUM: Duration = Duration::from_millis(5);
/// Failure deadline of each wait (not a timing target: the machine may be loaded).
const DEADLINE: Duration = Duration::from_secs(30);

/// A candidate process: joins the domain with a gang of one, then campaigns every quantum
/// until killed. Run only by `a_killed_scheduler_is_replaced_and_its_cells_freed`.
#[test]
#[ignore = "a child process of a_killed_scheduler_is_replaced_and_its_cells_freed"]
fn candidate_process() {
    let dir = std::env::var_os(DIR_ENV).expect("run by the kill test, with its folder");
    let d = Domain::open(Some(Path::new(&dir)), &CPUS).unwrap();
    d.allocate(1, 1).unwrap();
    loop {
        d.campaign().unwrap();
        std::thread::sleep(QUANTUM);
    }
}

fn spawn_candidate(dir: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "domain::tests::kill::candidate_process",
            "--ignored",
            "--nocapture",
        ])
        .env(DIR_ENV, dir)
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
    start.elapsed()
}

fn cells_of(d: &Domain, p: usize) -> usize {
    (0..SLOTS)
        .flat_map(|s| (0..CPUS.len()).map(move |c| (s, c)))
        .filter(|&(s, c)| d.cell(s, c).is_some_and(|(owner, _)| owner == p))
        .count()
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_killed_scheduler_is_replaced_and_its_cells_freed() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("asat-gang-domain-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let observer = Domain::open(Some(&dir), &CPUS).unwrap();

    let a = Killed(spawn_candidate(&dir));
    let pid_a = a.0.id();
    let mut pa = None;
    wait_for("the first candidate is the scheduler", || {
        pa = observer.participant_of(pid_a);
        pa.is_some() && observer.scheduler() == pa
    });
    let pa = pa.unwrap();
    wait_for("the first candidate placed its gang", || {
        cells_of(&observer, pa) == 1
    });

    let b = Killed(spawn_candidate(&dir));
    let pid_b = b.0.id();
    let mut pb = None;
    wait_for("the second candidate placed its gang", || {
        pb = observer.participant_of(pid_b);
        pb.is_some_and(|p| cells_of(&observer, p) == 1)
    });
    let pb = pb.unwrap();
    assert_eq!(observer.scheduler(), Some(pa), "one scheduler at a time");

    drop(a); // SIGKILL, then reaped
    let took = wait_for("the second candidate took over", || {
        observer.scheduler() == Some(pb)
    });
    wait_for("the dead scheduler's slot and cells are freed", || {
        observer.participant_of(pid_a).is_none() && cells_of(&observer, pa) == 0
    });
    eprintln!("take-over after {took:?} (candidates campaign every {QUANTUM:?})");
    assert_eq!(
        cells_of(&observer, pb),
        1,
        "the live candidate's gang stays"
    );
    assert!(
        !observer.try_elect().unwrap(),
        "the new scheduler holds the lock"
    );

    drop(b);
    drop(observer);
    let _ = std::fs::remove_dir_all(&dir);
}
