//! ASAT reads from the kernel the CPUs the rest of the machine leaves free: a CPU hog in
//! another process is counted against them. Its own binary, so that no other test's threads
//! run in the process (they would count as the job's own CPU time).

use asat::{Asat, Runtime, Schedule};
use asat_peers::load::CpuHogs;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn online_cpus() -> usize {
    std::fs::read_to_string("/proc/stat")
        .expect("/proc/stat")
        .lines()
        .filter(|l| {
            l.strip_prefix("cpu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count()
}

#[test]
fn a_hog_in_another_process_is_not_free() {
    let cpus = online_cpus() as f64;
    let hog = CpuHogs::spawn(1).expect("sh");
    let asat = Arc::new(Asat::new());
    let rt = Runtime::builder()
        .max_threads(2)
        .shared_policy(asat.clone())
        .build()
        .unwrap();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1200) {
        rt.parallel_for(0..20_000, Schedule::Static, |i| {
            std::hint::black_box(i);
        });
    }
    drop(hog);
    let history = asat.history();
    let free: Vec<f64> = history.iter().filter_map(|e| e.free).collect();
    assert!(free.len() >= 3, "{history:?}");
    // The hog was runnable throughout: whatever else ran, the rest of the machine kept at
    // least half a CPU busy in every interval (two threads of ours and the hog on two CPUs
    // give it two thirds; more CPUs give it one).
    assert!(
        free.iter().all(|&f| (0.0..=cpus - 0.5).contains(&f)),
        "{cpus} CPUs, free {free:?}"
    );
}
