//! A probe with `give_up_after` revokes members whose worker has not started in time, counts
//! them as arrived, and reports a passage at least as long as it waited; the runtime stays
//! correct afterwards. With 2 members and with 5 (the team barrier counts arrivals in its
//! event word below 4 members and in a word of its own from 4 on: both must take the revoked
//! members' arrivals).

use asat_core::{Plan, Policy, ProbeResult, RegionStart, Runtime, Schedule};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Probes each region with `threads` threads and the given limit, then runs it with as many.
#[derive(Debug)]
struct ProbeEveryRegion {
    threads: usize,
    limit: Option<Duration>,
    results: Mutex<Vec<ProbeResult>>,
}

impl Policy for ProbeEveryRegion {
    fn name(&self) -> &str {
        "probe-every-region"
    }
    fn plan(&self, start: &RegionStart) -> Plan {
        match start.probe {
            None => match self.limit {
                Some(l) => Plan::probe_within(self.threads, l),
                None => Plan::probe(self.threads),
            },
            Some(r) => {
                self.results.lock().unwrap().push(r);
                Plan::run(self.threads)
            }
        }
    }
}

fn run(limit: Option<Duration>, threads: usize) -> Vec<ProbeResult> {
    let policy = Arc::new(ProbeEveryRegion {
        threads,
        limit,
        results: Mutex::new(Vec::new()),
    });
    let rt = Runtime::builder()
        .max_threads(threads)
        .shared_policy(policy.clone())
        .build()
        .unwrap();
    for _ in 0..20 {
        // Long enough for the idle worker to park: waking it takes a futex wake, far longer
        // than a zero limit.
        std::thread::sleep(Duration::from_millis(2));
        let hits: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
        rt.parallel_for(0..1000, Schedule::Static, |i| {
            hits[i].fetch_add(1, Ordering::Relaxed);
        });
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    }
    let r = policy.results.lock().unwrap().clone();
    assert_eq!(r.len(), 20);
    r
}

#[test]
fn a_zero_limit_gives_up_on_a_parked_worker() {
    for n in [2, 5] {
        let results = run(Some(Duration::ZERO), n);
        let given_up: Vec<_> = results.iter().filter(|r| r.given_up > 0).collect();
        assert!(
            !given_up.is_empty(),
            "{n} threads: no probe gave up on a parked worker: {results:?}"
        );
        for r in &results {
            assert_eq!(r.threads, n);
            assert!((r.given_up as usize) < n);
            // A member given up on never entered on time; the starting thread always did.
            assert!(
                r.prompt >= 1 && r.prompt + r.given_up as usize <= n,
                "{n} threads: {r:?}"
            );
        }
    }
}

#[test]
fn without_a_limit_every_member_takes_part() {
    for n in [2, 5] {
        let results = run(None, n);
        assert!(
            results
                .iter()
                .all(|r| r.given_up == 0 && r.threads == n && r.prompt == n),
            "{n} threads: {results:?}"
        );
    }
}
