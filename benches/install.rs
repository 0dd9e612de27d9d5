//! What `install` costs per call, against rayon's, with pools of 2 threads on a quiet machine.
//!
//! `install(op)` (asat's and rayon's) runs `op` on a thread of the pool while the caller
//! waits, so every call hands `op` over and the result back: two thread wake-ups when the pool
//! is idle. asat's `install_here(op)` runs `op` on the caller with the runtime installed (no
//! wake-up). Rows:
//!
//! - `empty`: `op` returns a number;
//! - `sum64`: `op` sums 64 numbers with a parallel iterator, so the pool's other thread joins a
//!   parallel call inside `op`, as in a program that installs around its parallel work.
//!
//! Forms: `asat_install` (`rt.install`), `asat_install_here` (`rt.install_here`),
//! `rayon_install` (`pool.install` on a rayon pool of its own, built with 2 threads), all
//! called from the bench's own thread.
//!
//! After criterion's (sequential) measurements the bench prints a summary from interleaved
//! rounds, [`ROUNDS`] per row: in each, every form runs a burst of calls of about
//! [`BURST`], the forms alternating, with a pause between bursts that lets every pool go
//! idle (so no pool's spinning threads take a CPU from the next form's burst). The
//! table gives each form's median time per call and, for the ratios, the median over the
//! rounds of the ratio of two forms' times in the same round. A filter that matches no
//! criterion benchmark (`cargo bench --bench install -- none`) runs the rounds alone.
//!
//! `cargo bench --bench install`

use std::hint::black_box;
use std::time::{Duration, Instant};

use asat::{Fixed, Runtime};
use asat_peers::stats::median;
use criterion::Criterion;

const THREADS: usize = 2;
const ROUNDS: usize = 21;
/// How long a burst of calls should take in the interleaved rounds.
const BURST: Duration = Duration::from_millis(2);
/// The pause after each burst: longer than either pool's spinning before it sleeps.
const SETTLE: Duration = Duration::from_millis(20);

/// One row's `op`, the same for every form; `sum64` uses asat's or rayon's prelude by form.
#[derive(Clone, Copy, PartialEq)]
enum Row {
    Empty,
    Sum64,
}

impl Row {
    fn name(self) -> &'static str {
        match self {
            Row::Empty => "empty",
            Row::Sum64 => "sum64",
        }
    }
}

mod asat_op {
    use asat::prelude::*;

    #[inline(never)]
    pub fn sum(x: &[f64]) -> f64 {
        x.par_iter().sum::<f64>()
    }
}

mod rayon_op {
    use rayon::prelude::*;

    #[inline(never)]
    pub fn sum(x: &[f64]) -> f64 {
        x.par_iter().sum::<f64>()
    }
}

/// The three ways of calling `op`, in the order of [`FORMS`].
#[derive(Clone, Copy)]
enum Form {
    AsatInstall,
    AsatInstallHere,
    RayonInstall,
}

const FORMS: [Form; 3] = [Form::AsatInstall, Form::AsatInstallHere, Form::RayonInstall];

impl Form {
    fn name(self) -> &'static str {
        match self {
            Form::AsatInstall => "asat_install",
            Form::AsatInstallHere => "asat_install_here",
            Form::RayonInstall => "rayon_install",
        }
    }
}

struct Pools {
    asat: Runtime,
    rayon: rayon::ThreadPool,
    x: Vec<f64>,
}

impl Pools {
    fn new() -> Self {
        let asat = Runtime::builder()
            .max_threads(THREADS)
            .policy(Fixed::new(THREADS))
            .build()
            .expect("asat runtime");
        let rayon = rayon::ThreadPoolBuilder::new()
            .num_threads(THREADS)
            .build()
            .expect("rayon pool");
        Self {
            asat,
            rayon,
            x: (0..64).map(f64::from).collect(),
        }
    }

    /// One call of `form` on `row`.
    #[inline]
    fn call(&self, form: Form, row: Row) -> f64 {
        let x = black_box(&self.x[..]);
        match (form, row) {
            (Form::AsatInstall, Row::Empty) => self.asat.install(|| black_box(1.0)),
            (Form::AsatInstall, Row::Sum64) => self.asat.install(|| asat_op::sum(x)),
            (Form::AsatInstallHere, Row::Empty) => self.asat.install_here(|| black_box(1.0)),
            (Form::AsatInstallHere, Row::Sum64) => self.asat.install_here(|| asat_op::sum(x)),
            (Form::RayonInstall, Row::Empty) => self.rayon.install(|| black_box(1.0)),
            (Form::RayonInstall, Row::Sum64) => self.rayon.install(|| rayon_op::sum(x)),
        }
    }

    /// Seconds per call of `calls` calls in a row.
    fn burst(&self, form: Form, row: Row, calls: usize) -> f64 {
        let start = Instant::now();
        for _ in 0..calls {
            black_box(self.call(form, row));
        }
        start.elapsed().as_secs_f64() / calls as f64
    }
}

fn criterion_rows(c: &mut Criterion, pools: &Pools) {
    for row in [Row::Empty, Row::Sum64] {
        let mut group = c.benchmark_group(format!("install/{}", row.name()));
        for form in FORMS {
            group.bench_function(form.name(), |b| b.iter(|| pools.call(form, row)));
        }
        group.finish();
    }
}

/// The interleaved rounds of one row: each form's median seconds per call, and the median
/// same-round ratio of every asat form to rayon's.
fn interleaved(pools: &Pools, row: Row, rounds: usize) {
    // Calls per burst, sized from a first burst of each form.
    let calls: Vec<usize> = FORMS
        .iter()
        .map(|form| {
            let per_call = pools.burst(*form, row, 200).max(1e-8);
            ((BURST.as_secs_f64() / per_call) as usize).clamp(10, 1_000_000)
        })
        .collect();
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); FORMS.len()];
    for round in 0..rounds {
        for k in 0..FORMS.len() {
            // Rotate the order so that no form always runs first.
            let f = (k + round) % FORMS.len();
            times[f].push(pools.burst(FORMS[f], row, calls[f]));
            std::thread::sleep(SETTLE);
        }
    }
    let us = |v: &[f64]| median(v.to_vec()) * 1e6;
    let ratio = |a: usize, b: usize| {
        let r: Vec<f64> = times[a].iter().zip(&times[b]).map(|(a, b)| a / b).collect();
        median(r)
    };
    println!(
        "{:<6} {:>14.2} {:>19.2} {:>15.2} {:>22.2} {:>27.2}",
        row.name(),
        us(&times[0]),
        us(&times[1]),
        us(&times[2]),
        ratio(0, 2),
        ratio(1, 2),
    );
}

fn main() {
    let pools = Pools::new();
    let mut c = Criterion::default().configure_from_args();
    criterion_rows(&mut c, &pools);
    c.final_summary();
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 5 } else { ROUNDS };
    println!(
        "\ninstall, {THREADS} threads, {rounds} interleaved rounds: median µs per call, and \
         median same-round ratios"
    );
    println!(
        "{:<6} {:>14} {:>19} {:>15} {:>22} {:>27}",
        "row",
        FORMS[0].name(),
        FORMS[1].name(),
        FORMS[2].name(),
        "install / rayon",
        "install_here / rayon"
    );
    for row in [Row::Empty, Row::Sum64] {
        interleaved(&pools, row, rounds);
    }
}
