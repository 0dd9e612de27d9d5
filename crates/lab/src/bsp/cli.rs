//! The command lines of the bulk-synchronous experiments: the grid every run covers
//! ([`GridArgs`]: patterns, grains, imbalances, read into [`Axes`]), and the settings of one job
//! that the driver passes to each job's process ([`JobArgs`], hidden arguments of the
//! program's worker mode).

use std::time::Duration;

use asat_peers::cli::{dedup_in_order, number_up_to, parse_grain, parse_imbalance};
use clap::builder::PossibleValuesParser;

use super::work::Compute;
use super::{Cell, PATTERNS};

/// `--patterns`, `--grains-us` and `--imbalance`: the cells' patterns, and the grains and
/// imbalances of the plot's x axis and rows (flattened into each program's arguments).
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct GridArgs {
    /// Communication patterns: barrier, news (with the grid neighbours), transpose (with every
    /// other thread or rank).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "barrier,news,transpose",
        value_parser = PossibleValuesParser::new(PATTERNS)
    )]
    pub patterns: Vec<String>,
    /// Computation granularities g: fine, medium, coarse (0.5, 5, 250 context switches) or
    /// microseconds.
    #[arg(long, value_delimiter = ',', default_value = "fine,medium,coarse")]
    pub grains_us: Vec<String>,
    /// Load imbalances v: low (0.25 g), high (1.5 g) or a factor of g (0 ..= 2).
    #[arg(long, value_delimiter = ',', default_value = "low,high")]
    pub imbalance: Vec<String>,
}

impl GridArgs {
    /// Each list without its repeated entries (the first of each kept).
    pub fn dedup(&mut self) {
        dedup_in_order(&mut self.patterns);
        dedup_in_order(&mut self.grains_us);
        dedup_in_order(&mut self.imbalance);
    }

    /// The grains in ns (`fine`, `medium`, `coarse` in context switches of `cs`) and the
    /// imbalances as factors of the grain, each with its label; an error names a value that
    /// is neither.
    pub fn axes(&self, cs: Duration) -> Result<Axes, String> {
        Ok(Axes {
            grains: self
                .grains_us
                .iter()
                .map(|g| parse_grain(g, cs))
                .collect::<Result<_, _>>()?,
            imbalances: self
                .imbalance
                .iter()
                .map(|v| parse_imbalance(v))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// The grains (label, ns) and imbalances (label, factor of the grain) of a run, in the order
/// of the command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Axes {
    /// The x axis of the plot.
    pub grains: Vec<(String, u64)>,
    /// The rows of panels of the plot.
    pub imbalances: Vec<(String, f64)>,
}

/// `--work-s`: seconds of computation per thread or rank, above 0 and at most 600.
pub fn work_secs(s: &str) -> Result<f64, String> {
    number_up_to(s, 600.0, "seconds")
}

/// `--units-per-us` (internal): the calibrated work rate, finite and above 0.
fn units_per_us(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err("must be a number of work units per microsecond above 0 and at most 1e6".into()),
    }
}

/// The settings of one job of a cell, given to each job's process by the driver
/// ([`JobArgs::to_args`]) and read back by its worker mode (flattened into the program's
/// arguments, hidden, each requiring the program's own `--worker` flag).
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct JobArgs {
    /// How the job waits.
    #[arg(long, hide = true, requires = "worker", default_value = "global")]
    pub strategy: String,
    /// One of [`PATTERNS`].
    #[arg(
        long,
        hide = true,
        requires = "worker",
        default_value = "barrier",
        value_parser = PossibleValuesParser::new(PATTERNS)
    )]
    pub pattern: String,
    /// The mean computation of a phase, `g`.
    #[arg(long, hide = true, requires = "worker", default_value_t = 100_000)]
    pub grain_ns: u64,
    /// The spread of a phase's computation, `v`.
    #[arg(long, hide = true, requires = "worker", default_value_t = 0)]
    pub imbalance_ns: u64,
    /// Phases to run.
    #[arg(long, hide = true, requires = "worker", default_value_t = 100)]
    pub phases: u64,
    /// The context switch measured by the driver.
    #[arg(long, hide = true, requires = "worker", default_value_t = 30_000)]
    pub cs_ns: u64,
    /// The work rate calibrated by the driver ([`units_per_us`](super::work::units_per_us)).
    #[arg(long, hide = true, requires = "worker", default_value_t = 1000.0, value_parser = units_per_us)]
    pub units_per_us: f64,
    /// The job's seed (its threads' or ranks' draws derive from it).
    #[arg(long, hide = true, requires = "worker", default_value_t = 0)]
    pub seed: u64,
}

impl JobArgs {
    /// Job `seed` of `cell`: `phases` phases, with the driver's context switch `cs` and work
    /// rate.
    pub fn new(cell: &Cell, phases: u64, cs: Duration, units_per_us: f64, seed: u64) -> Self {
        Self {
            strategy: cell.strategy.clone(),
            pattern: cell.pattern.clone(),
            grain_ns: cell.grain_ns,
            imbalance_ns: cell.imbalance_ns,
            phases,
            cs_ns: cs.as_nanos().min(u128::from(u64::MAX)) as u64,
            units_per_us,
            seed,
        }
    }

    /// The computation of this job's phases ([`Compute::new`] of its grain, imbalance and work
    /// rate).
    pub fn compute(&self) -> Result<Compute, String> {
        Compute::new(self.grain_ns, self.imbalance_ns, self.units_per_us)
    }

    /// Work units for `c`, the computation between two reads of a communication phase:
    /// `cs / 25` of the driver's context switch (the paper: 8 us with a 200 us switch).
    pub fn c_units(&self, compute: &Compute) -> u64 {
        compute.units(self.cs_ns as f64 / 25.0)
    }

    /// The arguments that start the program's worker mode with these settings: `--worker`,
    /// then each setting.
    pub fn to_args(&self) -> Vec<String> {
        let mut v = vec!["--worker".to_owned()];
        for (name, value) in [
            ("--strategy", self.strategy.clone()),
            ("--pattern", self.pattern.clone()),
            ("--grain-ns", self.grain_ns.to_string()),
            ("--imbalance-ns", self.imbalance_ns.to_string()),
            ("--phases", self.phases.to_string()),
            ("--cs-ns", self.cs_ns.to_string()),
            ("--units-per-us", self.units_per_us.to_string()),
            ("--seed", self.seed.to_string()),
        ] {
            v.push(name.to_owned());
            v.push(value);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// A program's arguments as the experiments declare them.
    #[derive(Parser, Debug)]
    struct Program {
        #[command(flatten)]
        grid: GridArgs,
        #[arg(long, hide = true)]
        worker: bool,
        #[command(flatten)]
        job: JobArgs,
    }

    #[test]
    fn the_grid_and_its_axes() {
        let mut p = Program::try_parse_from(["p"]).unwrap();
        assert_eq!(p.grid.patterns, PATTERNS);
        p = Program::try_parse_from(["p", "--grains-us", "fine,40,fine", "--imbalance", "high"])
            .unwrap();
        p.grid.dedup();
        let axes = p.grid.axes(Duration::from_micros(30)).unwrap();
        assert_eq!(
            axes.grains,
            [("fine".to_string(), 15_000), ("40".to_string(), 40_000)]
        );
        assert_eq!(axes.imbalances, [("high".to_string(), 1.5)]);
        p.grid.imbalance = vec!["3".into()];
        assert!(p.grid.axes(Duration::from_micros(30)).is_err());
        assert!(Program::try_parse_from(["p", "--patterns", "ring"]).is_err());
        assert!(work_secs("0").is_err() && work_secs("0.5").is_ok());
    }

    #[test]
    fn a_job_reads_back_what_the_driver_gave_it() {
        let cell = Cell {
            pattern: "news".into(),
            grain_label: "fine".into(),
            grain_ns: 15_000,
            imbalance_label: "low".into(),
            imbalance_ns: 3_750,
            strategy: "local".into(),
        };
        let job = JobArgs::new(&cell, 40, Duration::from_micros(30), 812.5, 3);
        let argv = std::iter::once("p".to_owned()).chain(job.to_args());
        let p = Program::try_parse_from(argv).unwrap();
        assert!(p.worker);
        assert_eq!(p.job, job);
        // the settings are the worker mode's alone
        assert!(Program::try_parse_from(["p", "--phases", "3"]).is_err());
        assert!(Program::try_parse_from(["p", "--worker", "--units-per-us", "0"]).is_err());
    }
}
