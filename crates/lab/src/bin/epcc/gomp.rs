//! EPCC's own C suite under libgomp: found in the user's checkout, built from a copy, run, and
//! its printed results read back.
//!
//! The suite is version 3.1 (`openmpbench_C_v31` in a checkout of
//! <https://github.com/EPCCed/epcc-openmp-microbenchmarks>, Apache-2.0; `--epcc` may name the
//! checkout or that folder). Version 4.0 of the same checkout is not used: its syncbench calls
//! `omp_init_lock_with_hint`, which libgomp up to at least gcc 12 does not provide, and its
//! schedbench sweeps 1024 iterations per thread with a 0.1 µs delay, not 3.1's 128 with 15 µs.
//!
//! Its sources are copied into `<out>/build/epcc` (the checkout is never written to) and built
//! there as its Makefile does, with `gcc -fopenmp -O3`: `syncbench` from `syncbench.c` and
//! `common.c`, `schedbench` from `schedbench.c` and `common.c` with `-DSCHEDBENCH`. Each runs
//! with the caller's environment less every `OMP_*` and `GOMP_*` variable, plus
//! `OMP_NUM_THREADS=<threads>`, and with `--outer-repetitions`, `--test-time` and
//! `--delay-time` set to the harness's values.
//!
//! What is read from the output: the threads, the delay length and the first reference's mean
//! time from its head; for each test, the `Sample_size` table (its standard
//! deviation and outliers, whichever version's column names) and the `<NAME> overhead = <x>
//! microseconds` line; a test's name has its spaces made underscores (`PARALLEL FOR` becomes
//! `PARALLEL_FOR`, `DYNAMIC 8` becomes `DYNAMIC_8`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use asat_lab::files;

/// Where the suite is published.
pub const REPO_URL: &str = "https://github.com/EPCCed/epcc-openmp-microbenchmarks";

/// The suite's folder in a checkout.
const SUBFOLDER: &str = "openmpbench_C_v31";

/// The files built.
const SOURCES: [&str; 6] = [
    "common.c",
    "common.h",
    "syncbench.c",
    "syncbench.h",
    "schedbench.c",
    "schedbench.h",
];

/// The suite's folder in `epcc` (`--epcc`), checked to hold every file built.
pub fn locate(epcc: Option<&Path>) -> Result<PathBuf, String> {
    let get = format!(
        "get it with `git clone {REPO_URL} DIR` and pass `--epcc DIR` (or leave gomp out: \
         `--impls asat`)"
    );
    let Some(dir) = epcc else {
        return Err(format!(
            "impl gomp needs a checkout of the EPCC OpenMP microbenchmarks ({REPO_URL}), \
             which was not given: {get}"
        ));
    };
    let candidates = [dir.join(SUBFOLDER), dir.to_path_buf()];
    for c in &candidates {
        if SOURCES.iter().all(|f| c.join(f).is_file()) {
            return Ok(c.clone());
        }
    }
    let missing: Vec<&str> = SOURCES
        .iter()
        .copied()
        .filter(|f| !candidates[0].join(f).is_file())
        .collect();
    Err(format!(
        "--epcc {}: not a checkout of the EPCC OpenMP microbenchmarks: {} has no {}; {get}",
        dir.display(),
        candidates[0].display(),
        missing.join(", ")
    ))
}

/// The two programs built.
#[derive(Debug)]
pub struct Binaries {
    /// `syncbench`.
    pub syncbench: PathBuf,
    /// `schedbench`.
    pub schedbench: PathBuf,
}

/// Copies the suite at `src` into `build_dir` and builds both programs there.
pub fn build(src: &Path, build_dir: &Path) -> Result<Binaries, String> {
    check_gcc()?;
    files::create_dir(build_dir)?;
    for f in SOURCES {
        let (from, to) = (src.join(f), build_dir.join(f));
        fs::copy(&from, &to)
            .map_err(|e| format!("copy {} to {}: {e}", from.display(), to.display()))?;
    }
    let compile = |out: &str, main: &str, defines: &[&str]| -> Result<PathBuf, String> {
        let mut cmd = Command::new("gcc");
        cmd.current_dir(build_dir)
            .args(["-fopenmp", "-O3"])
            .args(defines)
            .args(["-o", out, main, "common.c", "-lm"]);
        let o = cmd.output().map_err(|e| format!("gcc: {e}"))?;
        if !o.status.success() {
            return Err(format!(
                "building EPCC's {out} in {} failed ({}):\n{}",
                build_dir.display(),
                o.status,
                String::from_utf8_lossy(&o.stderr)
            ));
        }
        Ok(build_dir.join(out))
    };
    Ok(Binaries {
        syncbench: compile("syncbench", "syncbench.c", &[])?,
        schedbench: compile("schedbench", "schedbench.c", &["-DSCHEDBENCH"])?,
    })
}

fn check_gcc() -> Result<(), String> {
    let ok = Command::new("gcc")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(())
    } else {
        Err(
            "impl gomp needs gcc with OpenMP (libgomp), which could not be started: install \
             it (Debian/Ubuntu: apt-get install gcc) or leave gomp out (`--impls asat`)"
                .into(),
        )
    }
}

/// What a run is given.
#[derive(Debug)]
pub struct RunParams {
    /// `OMP_NUM_THREADS`.
    pub threads: usize,
    /// `--outer-repetitions`.
    pub outer_reps: usize,
    /// `--test-time`, microseconds.
    pub target_us: f64,
    /// `--delay-time`, microseconds.
    pub delay_us: f64,
}

/// Runs `bin` with `p` and returns its standard output.
pub fn run(bin: &Path, p: &RunParams) -> Result<String, String> {
    let mut cmd = Command::new(bin);
    for (key, _) in std::env::vars_os() {
        if let Some(k) = key.to_str() {
            if k.starts_with("OMP_") || k.starts_with("GOMP_") {
                cmd.env_remove(k);
            }
        }
    }
    cmd.env("OMP_NUM_THREADS", p.threads.to_string())
        .arg("--outer-repetitions")
        .arg(p.outer_reps.to_string())
        .arg("--test-time")
        .arg(p.target_us.to_string())
        .arg("--delay-time")
        .arg(p.delay_us.to_string());
    let o = cmd
        .output()
        .map_err(|e| format!("{}: {e}", bin.display()))?;
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    if !o.status.success() {
        let tail: Vec<&str> = stdout.lines().rev().take(10).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "{} failed ({}):\n{}\n{}",
            bin.display(),
            o.status,
            tail.join("\n"),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(stdout)
}

/// One test as EPCC printed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The construct (spaces made underscores).
    pub construct: String,
    /// The mean overhead, microseconds.
    pub overhead_us: f64,
    /// The standard deviation of the test's times, microseconds.
    pub stddev_us: f64,
    /// The test's outliers.
    pub outliers: usize,
}

/// A run's header and its tests.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The threads the program ran with.
    pub threads: Option<usize>,
    /// The calibrated delay length, iterations.
    pub delay_length: Option<u64>,
    /// The mean time of the first reference, microseconds.
    pub reference_us: Option<f64>,
    /// Its tests, in order.
    pub tests: Vec<Parsed>,
}

/// The statistics line of a `Sample_size` table: (standard deviation, outliers).
fn stats_line(header: &str, values: &str) -> Option<(f64, usize)> {
    let names: Vec<&str> = header.split_whitespace().collect();
    let vals: Vec<&str> = values.split_whitespace().collect();
    let col = |want: &[&str]| names.iter().position(|n| want.contains(n));
    let sd = vals.get(col(&["S.D.", "StdDev"])?)?.parse().ok()?;
    let outliers = vals.get(col(&["Outliers"])?)?.parse().ok()?;
    Some((sd, outliers))
}

/// The number before `suffix` at the end of a header line such as `2 thread(s)`.
fn header_number<T: std::str::FromStr>(line: &str, suffix: &str) -> Option<T> {
    line.trim()
        .strip_suffix(suffix)?
        .split_whitespace()
        .last()?
        .parse()
        .ok()
}

/// Reads the output of an EPCC program (see the module docs).
pub fn parse(out: &str) -> Result<Output, String> {
    if out.contains("optimised reference loop away") {
        return Err("EPCC stopped: its compiler optimized the reference loop away".into());
    }
    let mut parsed = Output {
        threads: None,
        delay_length: None,
        reference_us: None,
        tests: Vec::new(),
    };
    let mut stats = None;
    let mut lines = out.lines();
    while let Some(line) = lines.next() {
        if let Some(n) = header_number(line, "thread(s)") {
            parsed.threads = Some(n);
        } else if let Some(n) = header_number(line, "delay length (iterations)") {
            parsed.delay_length = Some(n);
        } else if line.trim_start().starts_with("Sample_size") {
            stats = lines.next().and_then(|v| stats_line(line, v));
        } else if let Some(rest) = line.trim_start().strip_prefix("reference time") {
            if parsed.reference_us.is_none() {
                parsed.reference_us = rest
                    .split_once('=')
                    .and_then(|(_, v)| v.split_whitespace().next().and_then(|x| x.parse().ok()));
            }
        } else if let Some((name, rest)) = line.split_once(" overhead") {
            let value = rest.trim_start().strip_prefix('=').and_then(|r| {
                r.split_whitespace()
                    .next()
                    .and_then(|x| x.parse::<f64>().ok())
            });
            let (Some(overhead_us), Some((stddev_us, outliers))) = (value, stats.take()) else {
                return Err(format!("unreadable EPCC result line: {line:?}"));
            };
            parsed.tests.push(Parsed {
                construct: name.trim().replace(' ', "_"),
                overhead_us,
                stddev_us,
                outliers,
            });
        }
    }
    if parsed.tests.is_empty() {
        return Err("EPCC's output has no `<NAME> overhead = ...` line".into());
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Output in the layout of EPCC 3.1, numbers made up.
    const SAMPLE_V31: &str = "Running OpenMP benchmark version 3.0
\t2 thread(s)
\t20 outer repetitions
\t1000.00 test time (microseconds)
\t139 delay length (iterations) 
\t0.100000 delay time (microseconds)

--------------------------------------------------------
Computing reference time 1 time using 10240 reps

Sample_size       Average     Min         Max          S.D.          Outliers
 20                0.071000   0.070000   0.073000    0.001000      0

reference time 1 time     = 0.071000 microseconds +/- 0.001960

--------------------------------------------------------
Computing PARALLEL FOR time using 320 reps

Sample_size       Average     Min         Max          S.D.          Outliers
 20                1.330000   1.290000   1.390000    0.044000      1

PARALLEL FOR time     = 1.330000 microseconds +/- 0.086240
PARALLEL FOR overhead = 1.259000 microseconds +/- 0.088200

--------------------------------------------------------
Computing DYNAMIC 8 time using 20 reps

Sample_size       Average     Min         Max          S.D.          Outliers
 20                1943.000000   1942.000000   1950.000000    2.500000      0

DYNAMIC 8 time     = 1943.000000 microseconds +/- 4.900000
DYNAMIC 8 overhead = -1.250000 microseconds +/- 10.000000
";

    /// The table and overhead line in the layout of EPCC 4.0.
    const SAMPLE_V40: &str = "Computing BARRIER time using 1280 reps

Sample_size       Mean       Median     Min        Max        StdDev     Outliers
 20               0.450000   0.440000   0.410000   0.490000   0.030000   2
BARRIER time         = 0.450000 microseconds +/- 0.058800
BARRIER overhead     = 0.380000 microseconds +/- 0.060000
BARRIER median_ovrhd = 0.370000 microseconds 
";

    #[test]
    fn reads_version_3_1_output() {
        let out = parse(SAMPLE_V31).unwrap();
        assert_eq!(out.threads, Some(2));
        assert_eq!(out.delay_length, Some(139));
        assert_eq!(out.reference_us, Some(0.071));
        let want = vec![
            Parsed {
                construct: "PARALLEL_FOR".into(),
                overhead_us: 1.259,
                stddev_us: 0.044,
                outliers: 1,
            },
            Parsed {
                construct: "DYNAMIC_8".into(),
                overhead_us: -1.25,
                stddev_us: 2.5,
                outliers: 0,
            },
        ];
        assert_eq!(out.tests, want);
    }

    #[test]
    fn reads_version_4_0_tables() {
        let out = parse(SAMPLE_V40).unwrap();
        assert_eq!(out.threads, None);
        assert_eq!(
            out.tests,
            vec![Parsed {
                construct: "BARRIER".into(),
                overhead_us: 0.38,
                stddev_us: 0.03,
                outliers: 2,
            }]
        );
    }

    #[test]
    fn rejects_output_without_results() {
        assert!(parse("Running OpenMP benchmark\n")
            .unwrap_err()
            .contains("no `<NAME>"));
        let stopped = "Compiler has optimised reference loop away, STOP! \n";
        assert!(parse(stopped).unwrap_err().contains("optimized"));
        let no_table = "FOR overhead = 0.5 microseconds +/- 0.1\n";
        assert!(parse(no_table).unwrap_err().contains("unreadable"));
    }

    #[test]
    fn a_missing_checkout_says_where_to_get_it() {
        let none = locate(None).unwrap_err();
        assert!(
            none.contains(REPO_URL) && none.contains("--epcc DIR"),
            "{none}"
        );
        assert!(none.contains("--impls asat"), "{none}");

        let empty = tempfile::tempdir().unwrap();
        let err = locate(Some(empty.path())).unwrap_err();
        assert!(err.contains(REPO_URL), "{err}");
        assert!(
            err.contains("syncbench.c") && err.contains(SUBFOLDER),
            "{err}"
        );
    }

    #[test]
    fn a_checkout_or_its_suite_folder_is_found() {
        let root = tempfile::tempdir().unwrap();
        let suite = root.path().join(SUBFOLDER);
        fs::create_dir(&suite).unwrap();
        for f in SOURCES {
            fs::write(suite.join(f), "").unwrap();
        }
        assert_eq!(locate(Some(root.path())).unwrap(), suite);
        assert_eq!(locate(Some(&suite)).unwrap(), suite);
        fs::remove_file(suite.join("schedbench.c")).unwrap();
        let err = locate(Some(root.path())).unwrap_err();
        assert!(err.contains("has no schedbench.c"), "{err}");
    }
}
