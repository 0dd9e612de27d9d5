//! The EPCC tests on asat's API, with the same iteration counts and delays as EPCC's C tests
//! (version 3.1), on a runtime of the fixed policy with `threads` members and the default wait
//! strategy (spin, then block).
//!
//! syncbench, each with a delay of the syncbench length and per inner repetition:
//! - reference: one delay on the calling thread;
//! - `PARALLEL`: one [`Runtime::region`] whose every member runs one delay;
//! - `FOR`: inside one region, one [`asat::Team::for_each`] over `threads` iterations (static), each
//!   a delay, with the barrier that ends it;
//! - `PARALLEL_FOR`: one [`Runtime::parallel_for`] over `threads` iterations (static), each a
//!   delay;
//! - `BARRIER`: inside one region, a delay then [`asat::Team::barrier`] on every member;
//! - `REDUCTION` (against its own reference: a delay and an addition): one
//!   [`Runtime::parallel_reduce`] over `threads` iterations in which every member runs one delay
//!   and contributes 1.
//!
//! schedbench, with a delay of the schedbench length, 128 iterations per member, and per inner
//! repetition:
//! - reference: 128 delays on the calling thread;
//! - inside one region, one work-shared loop of `128 * threads` delays and its barrier, under
//!   `STATIC` ([`Schedule::Static`]), `STATIC_<c>` ([`Schedule::static_chunked`]: OpenMP's
//!   `schedule(static, c)`, chunks dealt round-robin), `DYNAMIC_<c>` ([`Schedule::dynamic`])
//!   for chunks `c` = 1, 2, 4, ..., 128, and `GUIDED_<c>` ([`Schedule::guided`]) for `c` up to
//!   `128 / threads`.

use std::hint::black_box;

use asat::{Fixed, Runtime, Schedule};

use crate::delay::delay;
use crate::method::{Measured, Method};

/// Iterations per thread of schedbench's loops (EPCC 3.1's `itersperthr`).
pub const ITERS_PER_THREAD: usize = 128;

/// One measured construct.
#[derive(Debug)]
pub struct Outcome {
    /// Construct name (`PARALLEL`, `DYNAMIC_8`, ...).
    pub construct: String,
    /// The test's measurement.
    pub test: Measured,
    /// The mean of its reference, microseconds.
    pub reference_us: f64,
}

impl Outcome {
    /// The overhead: the test's mean time less its reference's, microseconds.
    pub fn overhead_us(&self) -> f64 {
        self.test.summary.mean - self.reference_us
    }
}

/// A test: its name and the function that runs `r` inner repetitions of it.
type Test<'a> = (String, Box<dyn Fn(u64) + 'a>);

/// The chunk sizes of schedbench's sweeps: powers of two up to `max`.
pub fn chunks_up_to(max: usize) -> Vec<usize> {
    std::iter::successors(Some(1usize), |c| Some(c * 2))
        .take_while(|&c| c <= max)
        .collect()
}

/// The constructs of syncbench, in EPCC's order.
pub fn sync_constructs() -> Vec<String> {
    ["PARALLEL", "FOR", "PARALLEL_FOR", "BARRIER", "REDUCTION"]
        .map(String::from)
        .to_vec()
}

/// The constructs of schedbench with `threads` threads, in EPCC's order.
pub fn sched_constructs(threads: usize) -> Vec<String> {
    let mut v = vec!["STATIC".to_owned()];
    for kind in ["STATIC", "DYNAMIC"] {
        v.extend(
            chunks_up_to(ITERS_PER_THREAD)
                .iter()
                .map(|c| format!("{kind}_{c}")),
        );
    }
    let guided = chunks_up_to(ITERS_PER_THREAD / threads);
    v.extend(guided.iter().map(|c| format!("GUIDED_{c}")));
    v
}

/// A runtime of the fixed policy with `threads` members, checked to give teams of that size.
pub fn runtime(threads: usize) -> Result<Runtime, String> {
    let rt = Runtime::builder()
        .max_threads(threads)
        .policy(Fixed::new(threads))
        .build()
        .map_err(|e| format!("asat runtime of {threads} threads: {e}"))?;
    let size = std::sync::atomic::AtomicUsize::new(0);
    rt.region(|team| {
        size.store(team.size(), std::sync::atomic::Ordering::Relaxed);
    });
    let size = size.into_inner();
    if size != threads {
        return Err(format!("asat ran a team of {size}, not {threads}"));
    }
    Ok(rt)
}

/// Measures `tests` on `rt` against the reference `reference`, calling `say` after each with
/// its statistics and what the runtime counted while it ran.
fn measure_all(
    rt: &Runtime,
    method: &Method,
    reference: &Test<'_>,
    tests: Vec<Test<'_>>,
    say: &dyn Fn(&str),
) -> Result<Vec<Outcome>, String> {
    let r = method.measure(&reference.1)?;
    say(&line(&reference.0, &r, None));
    let reference_us = r.summary.mean;
    let mut out = Vec::new();
    for (name, test) in tests {
        method.warm_up(&test);
        let before = rt.stats();
        let measured = method.measure(test)?;
        let after = rt.stats();
        let o = Outcome {
            construct: name,
            test: measured,
            reference_us,
        };
        say(&format!(
            "{}; {} regions, {} blocked waits, {} revoked shares",
            line(&o.construct, &o.test, Some(o.overhead_us())),
            after.regions - before.regions,
            after.blocks - before.blocks,
            after.revoked - before.revoked
        ));
        out.push(o);
    }
    Ok(out)
}

/// A progress line in the manner of EPCC's output.
fn line(name: &str, m: &Measured, overhead: Option<f64>) -> String {
    let s = &m.summary;
    let over = overhead.map_or(String::new(), |o| format!(", overhead {o:.4} µs"));
    format!(
        "asat {name}: {} reps; mean {:.4} median {:.4} min {:.4} max {:.4} sd {:.4} µs, \
         {} outliers{over}",
        m.inner_reps, s.mean, s.median, s.min, s.max, s.stddev, s.outliers
    )
}

/// The work each test does where EPCC calls its delay.
pub type Work<'a> = &'a (dyn Fn() + Sync);

/// syncbench's reference and first four tests (see the module docs), each doing `work`.
fn sync_tests<'a>(rt: &'a Runtime, n: usize, work: Work<'a>) -> (Test<'a>, Vec<Test<'a>>) {
    let reference: Test<'a> = (
        "reference".into(),
        Box::new(move |r| (0..r).for_each(|_| work())),
    );
    let tests: Vec<Test<'a>> = vec![
        (
            "PARALLEL".into(),
            Box::new(move |r| (0..r).for_each(|_| rt.region(|_| work()))),
        ),
        (
            "FOR".into(),
            Box::new(move |r| {
                rt.region(|team| {
                    for _ in 0..r {
                        team.for_each(0..n, Schedule::Static, |_| work());
                    }
                });
            }),
        ),
        (
            "PARALLEL_FOR".into(),
            Box::new(move |r| {
                (0..r).for_each(|_| rt.parallel_for(0..n, Schedule::Static, |_| work()));
            }),
        ),
        (
            "BARRIER".into(),
            Box::new(move |r| {
                rt.region(|team| {
                    for _ in 0..r {
                        work();
                        team.barrier();
                    }
                });
            }),
        ),
    ];
    (reference, tests)
}

/// REDUCTION's reference (`work` and an addition per repetition) and test (every member does
/// `work` and contributes 1).
fn reduction_tests<'a>(rt: &'a Runtime, n: usize, work: Work<'a>) -> (Test<'a>, Test<'a>) {
    let reference: Test<'a> = (
        "reference (reduction)".into(),
        Box::new(move |r| {
            let mut sum = 0u64;
            for _ in 0..r {
                work();
                sum += 1;
            }
            black_box(sum);
        }),
    );
    let test: Test<'a> = (
        "REDUCTION".into(),
        Box::new(move |r| {
            for _ in 0..r {
                let sum = rt.parallel_reduce(
                    0..n,
                    Schedule::Static,
                    || 0u64,
                    |acc, chunk| {
                        chunk.clone().for_each(|_| work());
                        acc + chunk.len() as u64
                    },
                    |a, b| a + b,
                );
                black_box(sum);
            }
        }),
    );
    (reference, test)
}

/// syncbench's constructs (see the module docs) with delays of `len` iterations.
pub fn syncbench(
    rt: &Runtime,
    threads: usize,
    method: &Method,
    len: u32,
    say: &dyn Fn(&str),
) -> Result<Vec<Outcome>, String> {
    let work = move || delay(len);
    let (reference, tests) = sync_tests(rt, threads, &work);
    let mut out = measure_all(rt, method, &reference, tests, say)?;
    let (reference, test) = reduction_tests(rt, threads, &work);
    out.extend(measure_all(rt, method, &reference, vec![test], say)?);
    Ok(out)
}

/// A schedbench test: inside one region, `r` loops of `total` iterations doing `work` under
/// `schedule`.
fn sched_test<'a>(
    rt: &'a Runtime,
    total: usize,
    work: Work<'a>,
    schedule: Schedule,
) -> Box<dyn Fn(u64) + 'a> {
    Box::new(move |r| {
        rt.region(|team| {
            for _ in 0..r {
                team.for_each(0..total, schedule, |_| work());
            }
        });
    })
}

/// schedbench's reference and tests (see the module docs), each iteration doing `work`.
fn sched_tests<'a>(rt: &'a Runtime, n: usize, work: Work<'a>) -> (Test<'a>, Vec<Test<'a>>) {
    let total = ITERS_PER_THREAD * n;
    let reference: Test<'a> = (
        "reference".into(),
        Box::new(move |r| {
            for _ in 0..r {
                (0..ITERS_PER_THREAD).for_each(|_| work());
            }
        }),
    );
    let mut tests: Vec<Test<'a>> = vec![(
        "STATIC".into(),
        sched_test(rt, total, work, Schedule::Static),
    )];
    for c in chunks_up_to(ITERS_PER_THREAD) {
        let t = sched_test(rt, total, work, Schedule::static_chunked(c));
        tests.push((format!("STATIC_{c}"), t));
    }
    for c in chunks_up_to(ITERS_PER_THREAD) {
        let t = sched_test(rt, total, work, Schedule::dynamic(c));
        tests.push((format!("DYNAMIC_{c}"), t));
    }
    for c in chunks_up_to(ITERS_PER_THREAD / n) {
        let t = sched_test(rt, total, work, Schedule::guided(c));
        tests.push((format!("GUIDED_{c}"), t));
    }
    (reference, tests)
}

/// schedbench's constructs (see the module docs) with delays of `len` iterations.
pub fn schedbench(
    rt: &Runtime,
    threads: usize,
    method: &Method,
    len: u32,
    say: &dyn Fn(&str),
) -> Result<Vec<Outcome>, String> {
    let work = move || delay(len);
    let (reference, tests) = sched_tests(rt, threads, &work);
    measure_all(rt, method, &reference, tests, say)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    #[test]
    fn chunk_sweeps_match_epcc_for_two_threads() {
        assert_eq!(chunks_up_to(128), vec![1, 2, 4, 8, 16, 32, 64, 128]);
        assert_eq!(chunks_up_to(0), Vec::<usize>::new());
        let names = sched_constructs(2);
        assert_eq!(names.len(), 1 + 8 + 8 + 7);
        assert_eq!(names[0], "STATIC");
        assert_eq!(names[1], "STATIC_1");
        assert_eq!(names.last().unwrap(), "GUIDED_64");
        assert!(sched_constructs(4).contains(&"GUIDED_32".to_owned()));
        assert!(!sched_constructs(4).contains(&"GUIDED_64".to_owned()));
    }

    #[test]
    fn static_chunked_deals_every_index_once_round_robin() {
        let rt = runtime(3).unwrap();
        for (total, chunk) in [(20, 1), (20, 3), (7, 8), (0, 2), (384, 128)] {
            let seen: Vec<Mutex<Vec<usize>>> = (0..3).map(|_| Mutex::new(Vec::new())).collect();
            rt.region(|team| {
                team.for_each(0..total, Schedule::static_chunked(chunk), |i| {
                    seen[team.index()].lock().unwrap().push(i);
                });
            });
            let mut all: Vec<usize> = Vec::new();
            for (k, s) in seen.iter().enumerate() {
                let s = s.lock().unwrap();
                assert!(s.iter().all(|i| (i / chunk) % 3 == k), "member {k}: {s:?}");
                all.extend(s.iter());
            }
            all.sort_unstable();
            assert_eq!(all, (0..total).collect::<Vec<_>>());
        }
    }

    /// Runs each test with 3 inner repetitions, counting the calls of the work.
    fn counts(
        reference: &Test<'_>,
        tests: &[Test<'_>],
        count: &AtomicUsize,
    ) -> Vec<(String, usize)> {
        std::iter::once(reference)
            .chain(tests)
            .map(|(name, t)| {
                count.store(0, Ordering::Relaxed);
                t(3);
                (name.clone(), count.load(Ordering::Relaxed))
            })
            .collect()
    }

    #[test]
    fn tests_do_the_work_as_often_as_epcc() {
        let rt = runtime(2).unwrap();
        let count = AtomicUsize::new(0);
        let work = || {
            count.fetch_add(1, Ordering::Relaxed);
        };
        // syncbench: once per repetition on the reference, once per member per repetition in
        // every test.
        let (reference, tests) = sync_tests(&rt, 2, &work);
        let want: Vec<(String, usize)> = [("reference", 3), ("PARALLEL", 6), ("FOR", 6)]
            .into_iter()
            .chain([("PARALLEL_FOR", 6), ("BARRIER", 6)])
            .map(|(n, c)| (n.to_owned(), c))
            .collect();
        assert_eq!(counts(&reference, &tests, &count), want);
        let (reference, test) = reduction_tests(&rt, 2, &work);
        let got = counts(&reference, &[test], &count);
        assert_eq!(
            got,
            vec![("reference (reduction)".into(), 3), ("REDUCTION".into(), 6)]
        );
        // schedbench: 128 per repetition on the reference, 128 per member per repetition in
        // every test, whatever the schedule.
        let (reference, tests) = sched_tests(&rt, 2, &work);
        let got = counts(&reference, &tests, &count);
        assert_eq!(got[0], ("reference".into(), 3 * 128));
        assert!(got[1..].iter().all(|(_, c)| *c == 3 * 256), "{got:?}");
        let names: Vec<&String> = got[1..].iter().map(|(n, _)| n).collect();
        assert_eq!(names, sched_constructs(2).iter().collect::<Vec<_>>());
    }
}
