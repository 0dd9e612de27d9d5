//! The shared-memory load table: jobs in one process share it, jobs in two processes see each
//! other, a process killed with SIGKILL does not leave its load behind, and files nobody uses
//! are removed.
//!
//! The second process is this test binary run again (`current_exe`) with `ASAT_POOLS_CHILD_DIR`
//! set: the test `child_role` then builds a job on the same table, holds its threads inside a
//! region and prints `READY` until it is killed. Without the variable, `child_role` does
//! nothing.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use asat_core::CpuSet;
use asat_core::Runtime;
use asat_pools::{LoadTable, PoolPolicy, Pools, SharedTable};

mod common;
use common::{pools, temp_dir};

const CHILD_ENV: &str = "ASAT_POOLS_CHILD_DIR";

fn job(table: Arc<SharedTable>, d: usize) -> (Arc<PoolPolicy>, Runtime) {
    let policy = Arc::new(
        PoolPolicy::builder(pools())
            .table(table)
            .pin(false)
            .desired(d)
            .build()
            .unwrap(),
    );
    let rt = Runtime::builder()
        .max_threads(d)
        .shared_policy(policy.clone())
        .build()
        .unwrap();
    (policy, rt)
}

#[test]
fn child_role() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let table = SharedTable::open_in(Path::new(&dir), &pools()).unwrap();
    let (_policy, rt) = job(table, 2);
    rt.region(|team| {
        if team.index() == 0 {
            println!("READY");
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    });
}

#[test]
fn one_table_per_process_and_layout() {
    let dir = temp_dir("same");
    let t1 = SharedTable::open_in(dir.path(), &pools()).unwrap();
    let t2 = SharedTable::open_in(dir.path(), &pools()).unwrap();
    assert!(Arc::ptr_eq(&t1, &t2));
    let name = t1
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("asat-pools-model-"), "{name}");
    assert_eq!(t1.owners(), vec![std::process::id()]);
    // Two jobs of this process share it.
    let (a, _rt_a) = job(t1.clone(), 2);
    let (b, _rt_b) = job(t2.clone(), 2);
    assert_eq!(a.home(), 0);
    assert_eq!(b.home(), 1);
    assert_eq!(t1.loads(), vec![1, 1]);
    assert_eq!(t1.own_loads(), vec![1, 1]);
}

#[test]
fn a_file_of_another_layout_is_refused() {
    let dir = temp_dir("layout");
    let t = SharedTable::open_in(dir.path(), &pools()).unwrap();
    let path = t.path().to_path_buf();
    let mut bytes = std::fs::read(&path).unwrap();
    drop(t); // the last user: the file goes
    assert!(!path.exists());
    // The same file with its magic word corrupted.
    bytes[0] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let e = SharedTable::open_in(dir.path(), &pools())
        .unwrap_err()
        .to_string();
    assert!(e.contains("the file has another layout"), "{e}");
}

#[test]
fn the_last_user_removes_the_table_and_a_creator_removes_unused_ones() {
    let dir = temp_dir("remove");
    let t = SharedTable::open_in(dir.path(), &pools()).unwrap();
    let path = t.path().to_path_buf();
    let again = t.clone();
    drop(t);
    assert!(path.exists(), "removed while this process holds it");
    drop(again);
    assert!(!path.exists(), "left behind by its last user");
    // A table in use, and one that a dead process left.
    let held = SharedTable::open_in(dir.path(), &pools()).unwrap();
    let stale = dir.path().join("asat-pools-model-0123456789abcdef");
    std::fs::write(&stale, vec![0u8; 4096]).unwrap();
    std::fs::set_permissions(&stale, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Creating the table of other pools removes the stale one only.
    let three: Vec<CpuSet> = (0..3).map(|c| [c].into_iter().collect()).collect();
    let other = SharedTable::open_in(dir.path(), &Pools::new(three, false).unwrap()).unwrap();
    assert!(!stale.exists());
    assert!(held.path().exists() && other.path().exists());
}

#[test]
fn a_killed_process_leaves_no_load_behind() {
    let dir = temp_dir("kill");
    let table = SharedTable::open_in(dir.path(), &pools()).unwrap();
    assert_eq!(table.loads(), vec![0, 0]);

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["child_role", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !line.contains("READY") {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 || Instant::now() > deadline {
            let _ = child.kill();
            panic!("the child process did not get ready");
        }
    }

    // The child's job: home pool 0; d = 2 on pools of 2: x = round(0.8) = 1, both threads in
    // pool 0 while its region runs.
    assert_eq!(table.loads(), vec![2, 0]);
    assert!(table.owners().contains(&pid), "{:?}", table.owners());
    // A job started here now avoids the child's pool.
    let (here, rt) = job(table.clone(), 2);
    assert_eq!(here.home(), 1);
    assert_eq!(table.loads(), vec![2, 1]);

    child.kill().unwrap(); // SIGKILL: no destructor runs in the child
    child.wait().unwrap();

    // The kernel drops the dead process's slot lock; its load is reclaimed.
    let deadline = Instant::now() + Duration::from_secs(10);
    while table.loads() != vec![0, 1] && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(table.loads(), vec![0, 1]);
    assert!(!table.owners().contains(&pid));
    assert_eq!(table.reclaim_dead(), 0);

    // And decisions see it: this process's next region may use pool 0 again, and a new job's
    // home is the freed pool.
    rt.region(|_| {});
    let other = PoolPolicy::builder(pools())
        .table(table.clone())
        .pin(false)
        .build()
        .unwrap();
    assert_eq!(other.home(), 0);
    drop((other, rt, here));
    assert_eq!(table.loads(), vec![0, 0]);
}
