//! Tests that look at the whole process (its thread count, its CPU time): kept in their own
//! binary, and serialized, so that no other test's threads disturb them.

use asat_core::{Runtime, Schedule};
use std::sync::Mutex;
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

/// The flags (the ninth field of `stat`) of this process's threads whose name starts with
/// `prefix` (other tests' harness threads come and go, so counting all threads would be racy).
fn thread_flags(prefix: &str) -> Vec<u64> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| {
            let path = t.ok()?.path();
            let name = std::fs::read_to_string(path.join("comm")).ok()?;
            let stat = std::fs::read_to_string(path.join("stat")).ok()?;
            // the fields after the name, which is in parentheses: state is the 3rd, flags the 9th
            let flags = stat.rsplit_once(')')?.1.split_whitespace().nth(6)?;
            name.starts_with(prefix).then(|| flags.parse().ok())?
        })
        .collect()
}

/// Threads of this process whose name starts with `prefix`.
fn thread_count(prefix: &str) -> usize {
    thread_flags(prefix).len()
}

/// Threads named with `prefix` that are not exiting. A thread that a join has returned for
/// can still be listed for a moment: the kernel wakes the joiner when the thread releases its
/// memory, before it removes the thread from `/proc`; by then the thread has `PF_EXITING`
/// (0x4) in its flags.
fn live_thread_count(prefix: &str) -> usize {
    const PF_EXITING: u64 = 0x4;
    thread_flags(prefix)
        .into_iter()
        .filter(|f| f & PF_EXITING == 0)
        .count()
}

fn cpu_time() -> Duration {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage writes a full rusage into the valid pointer it is given.
    let ru = unsafe {
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()), 0);
        ru.assume_init()
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

#[test]
fn drop_joins_every_worker() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let name = "droptest";
    assert_eq!(thread_count(name), 0);
    {
        let rt = Runtime::builder()
            .max_threads(6)
            .thread_name(move |i| format!("{name}-{i}"))
            .build()
            .unwrap();
        assert_eq!(rt.workers_started(), 0, "workers start lazily");
        // an SPMD region runs every member on its own thread (a loop may run members of
        // workers that have not started yet on the calling thread)
        rt.region(|_| {});
        assert_eq!(rt.workers_started(), 5);
        assert_eq!(thread_count(name), 5);
        assert_eq!(live_thread_count(name), 5);
    }
    assert_eq!(
        live_thread_count(name),
        0,
        "every worker was joined on drop"
    );
}

#[test]
fn idle_runtime_does_not_burn_cpu() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rt = Runtime::builder().max_threads(4).build().unwrap();
    for _ in 0..100 {
        rt.parallel_for(0..1000, Schedule::Static, |_| {});
    }
    // let the workers' bounded spin run out
    std::thread::sleep(Duration::from_millis(50));
    let c0 = cpu_time();
    std::thread::sleep(Duration::from_millis(500));
    let used = cpu_time() - c0;
    // three spinning workers would use ~1.5 s of CPU here; parked ones use next to nothing
    assert!(
        used < Duration::from_millis(100),
        "an idle runtime used {used:?} of CPU in 500 ms"
    );
    drop(rt);
}
