//! A child forked without `exec` shares its parent's mapping of the shared load table and the
//! slot's lock. Its copies of the parent's table and pool policy must neither free the
//! parent's slot nor take the parent's threads off it, nor reclaim through the parent's locks,
//! and a child that opens the table itself gets a slot of its own. (Its own file: it forks the
//! test process.)

use asat_pools::{LoadTable, PoolPolicy, SharedTable};

mod common;
use common::{pools, temp_dir};

/// Forks: `None` in the child, which must end with [`exit_child`]; the child's pid in the
/// parent.
fn fork() -> Option<libc::pid_t> {
    // SAFETY: the child only drops or opens tables and then `_exit`s; this test binary holds
    // one test, so no other thread of the harness holds a lock the child needs.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    (pid != 0).then_some(pid)
}

/// Ends a forked child at once, running no other destructor.
fn exit_child(code: i32) -> ! {
    // SAFETY: `_exit` ends the process; nothing of the parent's state is touched.
    unsafe { libc::_exit(code) }
}

/// Runs `child` in a forked child process, which exits with its return value (101 if it
/// panics); returns that exit status.
fn in_child(child: impl FnOnce() -> i32) -> i32 {
    let Some(pid) = fork() else {
        exit_child(std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(101));
    };
    wait(pid)
}

/// The exit status of the child `pid`.
fn wait(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status), "the child did not exit: {status}");
    libc::WEXITSTATUS(status)
}

#[test]
fn a_forked_child_leaves_its_parents_slot_alone() {
    let dir = temp_dir("fork");
    let table = SharedTable::open_in(dir.path(), &pools()).unwrap();
    // The policy counts this process's thread in its home pool (0, both empty).
    let policy = PoolPolicy::builder(pools())
        .table(table.clone())
        .pin(false)
        .build()
        .unwrap();
    table.add(0, 3);
    assert_eq!(table.loads(), vec![4, 0]);
    let slot = table.slot();
    let parent = std::process::id();

    // A child drops its copies of the policy and the table (as a forked worker returning
    // from the scope that held them would).
    let Some(pid) = fork() else {
        drop(policy);
        drop(table);
        exit_child(0);
    };
    assert_eq!(wait(pid), 0);
    assert_eq!(
        table.loads(),
        vec![4, 0],
        "the child took the parent's load off"
    );
    assert_eq!(table.owners(), vec![parent]);

    // Another child opens the table itself: a new slot; the parent's slot, still locked by
    // the parent, is neither reclaimed nor claimed, and its load still counts.
    let code = in_child(|| {
        let own = SharedTable::open_in(dir.path(), &pools()).unwrap();
        let ok = own.slot() != slot
            && own.reclaim_dead() == 0
            && own.loads() == vec![4, 0]
            && own.owners().contains(&parent);
        if ok {
            0
        } else {
            eprintln!(
                "child: slot {} (parent's {slot}), loads {:?}, owners {:?}",
                own.slot(),
                own.loads(),
                own.owners()
            );
            1
        }
    });
    assert_eq!(
        code, 0,
        "the second child's view was wrong (its stderr says how)"
    );
    assert_eq!(
        table.owners(),
        vec![parent],
        "the second child's slot was not freed"
    );

    // A process that dies holding a slot of its own (it never frees it).
    let Some(dead) = fork() else {
        let own = SharedTable::open_in(dir.path(), &pools()).unwrap();
        own.add(1, 5);
        std::mem::forget(own);
        exit_child(0);
    };
    assert_eq!(wait(dead), 0);
    let dead = dead as u32;
    assert_eq!(table.owners(), vec![parent, dead]);
    // A child forked now must not reclaim through its copy of the parent's table: the locks it
    // would pass are the parent's (and the parent's reclaimers do not know of it).
    let code = in_child(|| {
        let freed = table.reclaim_dead();
        let _ = table.loads();
        if freed == 0 && table.owners() == vec![parent, dead] {
            0
        } else {
            eprintln!(
                "child: reclaimed {freed} through the parent's table; owners {:?}",
                table.owners()
            );
            1
        }
    });
    assert_eq!(code, 0, "the child reclaimed through the parent's table");
    assert_eq!(table.reclaim_dead(), 1);
    assert_eq!(table.owners(), vec![parent]);

    drop(policy);
    assert_eq!(table.loads(), vec![3, 0]);
    table.sub(0, 3);
    assert_eq!(table.loads(), vec![0, 0]);
    drop(table);
}
