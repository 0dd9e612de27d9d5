//! What a parallel-iterator call costs over the runtime call it stands for, with 2 threads
//! (Fixed policy) on a quiet machine and next to one co-located CPU hog (a process started by
//! the bench and stopped after). Targets: an iterator call costs at most 1.1x the equivalent
//! native call, tiny loops and large ones alike; tiny loops stay at least 5x faster than rayon
//! called from the main thread.
//!
//! Rows: `axpy` (`y[i] += a * x[i]`) over 16 and 64 elements and over 1M, and the dot product
//! `sum(x[i] * y[i])` over 64 and 1M. Each row runs four forms:
//!
//! - `native`: the runtime's own call, `rt.parallel_slice_mut(y, Schedule::Static, ..)` and
//!   `rt.parallel_reduce(0..n, Schedule::Static, ..)`;
//! - `iter`: `y.par_iter_mut().zip(x).for_each(..)` and `x.par_iter().zip(y).map(..).sum()`
//!   with asat's prelude, on the same runtime, installed on the bench's thread once around the
//!   whole burst of calls (`rt.install_here`);
//! - `iter_here`: the same, with `rt.install_here(|| ..)` around every call (installing the
//!   runtime on the calling thread costs nothing; `rt.install`, which hands its closure to a
//!   pool thread as rayon's does, would add two thread wake-ups to every call);
//! - `rayon_main`: the same code with rayon's prelude, called from the bench's own thread on
//!   rayon's global pool (built with 2 threads), as a program's main loop calls it: each call
//!   enters the pool from outside.
//!
//! After criterion's (sequential) measurements the bench prints a summary from interleaved
//! rounds, 21 per row: in each, the three forms on the asat runtime run 10 bursts each of
//! about 0.5 ms, alternating, then (after a 20 ms pause that lets the asat worker go idle)
//! `rayon_main` runs for as long, and another pause follows. The table gives the median time
//! per call of each form and, for the ratios, the median over the rounds of the ratio of the
//! two forms' times in the same round: the per-call cost on a shared virtual machine moves by
//! 2-3x between minutes, which sequential measurements mix into their ratios and same-round
//! ratios do not. All forms of a row work on the same `x` and `y` (axpy keeps adding to `y`),
//! which start on a cache line, so the two members' parts of a tiny `y` meet at a line
//! boundary.
//!
//! The tiny rows' ratios (calls of 0.2-0.4 µs) move by about 10% from one run of the bench to
//! the next on a 2-vCPU virtual machine, even on a quiet one: judge them over a few runs.
//! `--quick` (criterion's flag) also shortens the interleaved rounds; a filter that matches
//! no criterion benchmark (`cargo bench --bench iter_overhead -- none`) runs the interleaved
//! rounds alone (about 12 s).
//!
//! `--instructions` measures nothing: it runs [`INSTRUCTION_CALLS`] calls of the native and
//! iterator forms of the 16-element axpy and the 64-element dot product on a runtime of one
//! thread (so that no worker's waiting is counted), for an instruction counter to count each
//! form's function (they are never inlined):
//! `valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/deps/iter_overhead-*
//! --instructions`, then `callgrind_annotate --inclusive=yes cg.out | grep _forms::`.
//!
//! `cargo bench --bench iter_overhead`

use std::hint::black_box;
use std::time::{Duration, Instant};

use asat::{Fixed, Runtime};
use asat_peers::load::CpuHogs;
use asat_peers::stats::median;
use criterion::Criterion;

const THREADS: usize = 2;
/// The `a` of axpy: small, so that `y` stays finite over millions of calls.
const A: f64 = 1e-9;
const ROUNDS: usize = 21;
/// How long a burst of calls should take in the interleaved rounds.
const BURST: Duration = Duration::from_micros(500);
/// Bursts of each asat form per round.
const BURSTS: usize = 10;
/// The pause between the asat forms and rayon.
const SETTLE: Duration = Duration::from_millis(20);

/// The iterator forms, with asat's traits: they run on the runtime installed on the thread.
mod iter_forms {
    use asat::prelude::*;

    #[inline(never)]
    pub fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
        y.par_iter_mut().zip(x).for_each(|(y, x)| *y += a * x);
    }

    #[inline(never)]
    pub fn dot(x: &[f64], y: &[f64]) -> f64 {
        x.par_iter().zip(y).map(|(x, y)| x * y).sum::<f64>()
    }
}

/// The same code with rayon's traits, on rayon's global pool.
mod rayon_forms {
    use rayon::prelude::*;

    pub fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
        y.par_iter_mut().zip(x).for_each(|(y, x)| *y += a * x);
    }

    pub fn dot(x: &[f64], y: &[f64]) -> f64 {
        x.par_iter().zip(y).map(|(x, y)| x * y).sum::<f64>()
    }
}

/// The runtime's own calls, static schedule (one contiguous chunk per member), as the
/// iterators split by default.
mod native_forms {
    use asat::{Runtime, Schedule};

    #[inline(never)]
    pub fn axpy(rt: &Runtime, a: f64, x: &[f64], y: &mut [f64]) {
        rt.parallel_slice_mut(y, Schedule::Static, |start, ys| {
            for (y, x) in ys.iter_mut().zip(&x[start..]) {
                *y += a * x;
            }
        });
    }

    #[inline(never)]
    pub fn dot(rt: &Runtime, x: &[f64], y: &[f64]) -> f64 {
        rt.parallel_reduce(
            0..x.len(),
            Schedule::Static,
            || 0.0,
            |acc, r| {
                acc + x[r.clone()]
                    .iter()
                    .zip(&y[r])
                    .map(|(x, y)| x * y)
                    .sum::<f64>()
            },
            |a, b| a + b,
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    Axpy,
    Dot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Native,
    Iter,
    IterHere,
    RayonMain,
}

impl Form {
    const ALL: [Form; 4] = [Form::Native, Form::Iter, Form::IterHere, Form::RayonMain];

    fn name(self) -> &'static str {
        match self {
            Form::Native => "native",
            Form::Iter => "iter",
            Form::IterHere => "iter_here",
            Form::RayonMain => "rayon_main",
        }
    }
}

/// A row of the table: a kernel over `n` elements.
#[derive(Clone, Copy, Debug)]
struct Row {
    kernel: Kernel,
    n: usize,
}

impl Row {
    fn name(self) -> String {
        let size = if self.n >= 1 << 20 {
            format!("{}M", self.n >> 20)
        } else {
            self.n.to_string()
        };
        let (scale, kernel) = match (self.n >= 1 << 20, self.kernel) {
            (true, Kernel::Axpy) => ("large", "axpy"),
            (true, Kernel::Dot) => ("large", "dot"),
            (false, Kernel::Axpy) => ("tiny", "axpy"),
            (false, Kernel::Dot) => ("tiny", "dot"),
        };
        format!("{scale}_{kernel}_{size}")
    }

    fn tiny(self) -> bool {
        self.n < 1 << 20
    }
}

const ROWS: [Row; 5] = [
    Row {
        kernel: Kernel::Axpy,
        n: 16,
    },
    Row {
        kernel: Kernel::Axpy,
        n: 64,
    },
    Row {
        kernel: Kernel::Dot,
        n: 64,
    },
    Row {
        kernel: Kernel::Axpy,
        n: 1 << 20,
    },
    Row {
        kernel: Kernel::Dot,
        n: 1 << 20,
    },
];

fn runtime() -> Runtime {
    Runtime::builder()
        .max_threads(THREADS)
        .policy(Fixed::new(THREADS))
        .build()
        .expect("runtime")
}

/// `n` values starting on a cache line, so that the members' parts of a tiny `y` meet at a
/// line boundary (else whether they write the same line would depend on where the allocator
/// placed `y`).
#[derive(Clone, Debug)]
struct Buf {
    v: Vec<f64>,
    start: usize,
    n: usize,
}

impl Buf {
    fn new(n: usize, f: impl Fn(usize) -> f64) -> Buf {
        let mut v = vec![0.0; n + 8];
        let start = v.as_ptr().align_offset(64);
        for (i, e) in v[start..start + n].iter_mut().enumerate() {
            *e = f(i);
        }
        Buf { v, start, n }
    }

    fn get(&self) -> &[f64] {
        &self.v[self.start..self.start + self.n]
    }

    fn get_mut(&mut self) -> &mut [f64] {
        &mut self.v[self.start..self.start + self.n]
    }
}

/// `x` and `y` of `n` elements.
fn data(n: usize) -> (Buf, Buf) {
    let x = Buf::new(n, |i| (i % 7) as f64 + 0.5);
    let y = Buf::new(n, |i| (i % 5) as f64 - 1.0);
    (x, y)
}

fn timed(n: usize, mut f: impl FnMut()) -> Duration {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed()
}

/// One call of `kernel`, on the runtime installed on this thread for the iterator forms.
fn iter_call(kernel: Kernel, x: &[f64], y: &mut [f64]) {
    match kernel {
        Kernel::Axpy => iter_forms::axpy(A, x, y),
        Kernel::Dot => {
            black_box(iter_forms::dot(x, y));
        }
    }
}

/// Runs `n` calls of `row`'s kernel in `form` and returns how long they took.
fn burst(form: Form, kernel: Kernel, rt: &Runtime, x: &[f64], y: &mut [f64], n: usize) -> Duration {
    match (form, kernel) {
        (Form::Native, Kernel::Axpy) => timed(n, || native_forms::axpy(rt, A, x, y)),
        (Form::Native, Kernel::Dot) => timed(n, || {
            black_box(native_forms::dot(rt, x, y));
        }),
        (Form::Iter, _) => rt.install_here(|| timed(n, || iter_call(kernel, x, y))),
        (Form::IterHere, _) => timed(n, || rt.install_here(|| iter_call(kernel, x, y))),
        (Form::RayonMain, Kernel::Axpy) => timed(n, || rayon_forms::axpy(A, x, y)),
        (Form::RayonMain, Kernel::Dot) => timed(n, || {
            black_box(rayon_forms::dot(x, y));
        }),
    }
}

/// Every form computes what the sequential loop computes, before anything is timed.
fn check(rt: &Runtime) {
    for n in [16, 64, 1000, 1 << 20] {
        let (x, y0) = data(n);
        let (x, y0) = (x.get(), y0.get());
        let want_y: Vec<f64> = y0.iter().zip(x).map(|(y, x)| y + A * x).collect();
        let want_dot: f64 = x.iter().zip(y0).map(|(x, y)| x * y).sum();
        for form in Form::ALL {
            let mut y = y0.to_vec();
            burst(form, Kernel::Axpy, rt, x, &mut y, 1);
            assert_eq!(y, want_y, "{} axpy over {n}", form.name());
            let got = match form {
                Form::Native => native_forms::dot(rt, x, y0),
                Form::Iter | Form::IterHere => rt.install_here(|| iter_forms::dot(x, y0)),
                Form::RayonMain => rayon_forms::dot(x, y0),
            };
            assert!(
                (got - want_dot).abs() <= 1e-12 * want_dot.abs(),
                "{} dot over {n}: {got}, want {want_dot}",
                form.name()
            );
        }
    }
}

/// The criterion measurements of every row, one group per row, named after `load`.
fn criterion_rows(c: &mut Criterion, rt: &Runtime, load: &str, measure: Duration) {
    for row in ROWS {
        let (x, mut y) = data(row.n);
        let mut g = c.benchmark_group(format!("{load}/{}", row.name()));
        g.sample_size(if row.tiny() { 20 } else { 10 })
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(measure);
        for form in Form::ALL {
            g.bench_function(form.name(), |b| {
                b.iter_custom(|iters| {
                    burst(form, row.kernel, rt, x.get(), y.get_mut(), iters as usize)
                })
            });
        }
        g.finish();
    }
}

/// How the interleaved rounds run.
#[derive(Clone, Copy, Debug)]
struct Rounds {
    rounds: usize,
    /// How long one burst of calls should take.
    burst: Duration,
    /// Bursts per round of each form on the asat runtime.
    bursts: usize,
    /// The pause between the asat forms and rayon.
    settle: Duration,
}

/// The forms on the asat runtime, interleaved burst by burst within a round.
const ASAT_FORMS: [Form; 3] = [Form::Native, Form::Iter, Form::IterHere];

/// The interleaved measurements of one row: per form (in `Form::ALL`'s order), the time per
/// call of each round, in seconds.
///
/// A round runs `how.bursts` bursts of each asat form, alternating (their first form
/// rotates), after one untimed call that wakes the runtime's worker; then, after a pause that
/// lets the asat worker go idle, one burst of `rayon_main` as long as one asat form's bursts
/// together, and another pause. The asat forms share one runtime, so they need no pause
/// between them, and their bursts lie within a millisecond of each other: a slow phase of the
/// machine hits them alike.
fn interleaved(rt: &Runtime, row: Row, how: Rounds) -> Vec<Vec<f64>> {
    let (x, mut y) = data(row.n);
    let (x, y) = (x.get(), y.get_mut());
    // Calls per burst: double until a burst takes a fifth of the target, then scale.
    let mut calls: Vec<usize> = Form::ALL
        .iter()
        .map(|&form| {
            let mut n = 1;
            loop {
                let t = burst(form, row.kernel, rt, x, y, n);
                if t >= how.burst / 5 || n >= 1 << 20 {
                    let per_call = t.as_secs_f64() / n as f64;
                    break ((how.burst.as_secs_f64() / per_call) as usize).max(1);
                }
                n *= 2;
            }
        })
        .collect();
    let rayon = Form::ALL.len() - 1;
    calls[rayon] *= how.bursts;
    std::thread::sleep(how.settle);
    let mut times = vec![Vec::with_capacity(how.rounds); Form::ALL.len()];
    for round in 0..how.rounds {
        let mut spent = [Duration::ZERO; ASAT_FORMS.len()];
        burst(Form::Native, row.kernel, rt, x, y, 1);
        for b in 0..how.bursts {
            for k in 0..ASAT_FORMS.len() {
                let i = (round + b + k) % ASAT_FORMS.len();
                spent[i] += burst(ASAT_FORMS[i], row.kernel, rt, x, y, calls[i]);
            }
        }
        for (i, t) in spent.iter().enumerate() {
            times[i].push(t.as_secs_f64() / (calls[i] * how.bursts) as f64);
        }
        std::thread::sleep(how.settle);
        let t = burst(Form::RayonMain, row.kernel, rt, x, y, calls[rayon]);
        times[rayon].push(t.as_secs_f64() / calls[rayon] as f64);
        std::thread::sleep(how.settle);
    }
    times
}

/// The median over the rounds of `a[r] / b[r]`.
fn ratio(a: &[f64], b: &[f64]) -> f64 {
    median(a.iter().zip(b).map(|(a, b)| a / b).collect())
}

fn summary(results: &[(&str, Row, Vec<Vec<f64>>)], rounds: usize) {
    println!();
    println!(
        "iter_overhead summary: {THREADS} threads (Fixed), time per call in µs (median of \
         {rounds} interleaved rounds); ratios are medians of same-round ratios"
    );
    println!(
        "{:<6} {:<15} {:>10} {:>10} {:>13} {:>11} {:>12} {:>18} {:>16}  targets",
        "load",
        "row",
        "native",
        "iter",
        "iter_here",
        "rayon_main",
        "iter/native",
        "iter_here/nat.",
        "rayon_main/iter"
    );
    // Indices into Form::ALL.
    let (native, iter, here, rayon) = (0, 1, 2, 3);
    for (load, row, t) in results {
        let us = |i: usize| median(t[i].clone()) * 1e6;
        let iter_native = ratio(&t[iter], &t[native]);
        let rayon_iter = ratio(&t[rayon], &t[iter]);
        let mut targets = vec![if iter_native <= 1.1 {
            "iter<=1.1x ok"
        } else {
            "iter<=1.1x MISS"
        }];
        if row.tiny() {
            targets.push(if rayon_iter >= 5.0 {
                "rayon>=5x ok"
            } else {
                "rayon>=5x MISS"
            });
        }
        println!(
            "{:<6} {:<15} {:>10.2} {:>10.2} {:>13.2} {:>11.2} {:>12.3} {:>18.3} {:>16.2}  {}",
            load,
            row.name(),
            us(native),
            us(iter),
            us(here),
            us(rayon),
            iter_native,
            ratio(&t[here], &t[native]),
            rayon_iter,
            targets.join(", ")
        );
    }
}

/// Calls of each form in `--instructions` mode.
const INSTRUCTION_CALLS: usize = 10_000;

/// `--instructions`: the tiny rows' native and iterator forms, [`INSTRUCTION_CALLS`] calls
/// each, on a team of one.
fn instructions() {
    let rt = Runtime::builder()
        .max_threads(1)
        .policy(Fixed::new(1))
        .build()
        .expect("runtime");
    for (kernel, n) in [(Kernel::Axpy, 16), (Kernel::Dot, 64)] {
        let (x, mut y) = data(n);
        for form in [Form::Native, Form::Iter] {
            burst(form, kernel, &rt, x.get(), y.get_mut(), INSTRUCTION_CALLS);
        }
    }
    println!(
        "ran {INSTRUCTION_CALLS} calls of each form (axpy over 16 elements, dot over 64) on one \
         thread: under callgrind, `callgrind_annotate --inclusive=yes` gives each form's \
         instructions (`iter_forms::` and `native_forms::`)"
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if has("--instructions") {
        instructions();
        return;
    }
    // As criterion decides: without `--bench` (cargo test --benches) or with `--test`, each
    // measurement runs once; with `--list`, nothing runs.
    let test_mode = !has("--bench") || has("--test");
    if test_mode && !has("--list") {
        // so that the instruction-count mode keeps working
        instructions();
    }
    let how = if test_mode {
        Rounds {
            rounds: 1,
            burst: Duration::ZERO,
            bursts: 1,
            settle: Duration::ZERO,
        }
    } else if has("--quick") {
        Rounds {
            rounds: 15,
            burst: BURST,
            bursts: BURSTS / 2,
            settle: SETTLE / 2,
        }
    } else {
        Rounds {
            rounds: ROUNDS,
            burst: BURST,
            bursts: BURSTS,
            settle: SETTLE,
        }
    };

    rayon::ThreadPoolBuilder::new()
        .num_threads(THREADS)
        .build_global()
        .expect("rayon's global pool");
    let rt = runtime();
    check(&rt);

    let mut c = Criterion::default().configure_from_args();
    let mut results = Vec::new();
    criterion_rows(&mut c, &rt, "quiet", Duration::from_millis(1500));
    if !has("--list") {
        for row in ROWS {
            results.push(("quiet", row, interleaved(&rt, row, how)));
        }
    }
    {
        let _hog = CpuHogs::spawn(1).expect("start the CPU hog");
        criterion_rows(&mut c, &rt, "1_hog", Duration::from_secs(1));
        if !has("--list") {
            for row in ROWS {
                results.push(("1_hog", row, interleaved(&rt, row, how)));
            }
        }
    }
    c.final_summary();
    if !has("--list") {
        summary(&results, how.rounds);
    }
}
