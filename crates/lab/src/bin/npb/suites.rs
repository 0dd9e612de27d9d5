//! The NPB suites: where they are in the user's checkouts, the copies of them the harness builds
//! under `<out>/build` (never inside a checkout), and their builds.
//!
//! A copy is refreshed at every start: a file is written only when its content differs from the
//! source's (or from the source's after the asat substitution), so cargo and make see unchanged
//! files as unchanged and rebuild only what changed. Each Rust suite and class has its own cargo
//! target folder (`<out>/build/target/<suite>-<class>`): the class is a `--cfg` in `RUSTFLAGS`,
//! and one folder per class keeps every class's build instead of redoing it at each switch.
//!
//! The copies are refreshed by `suite_copy.rs`; the asat copy's substitution is in
//! `asat_port.rs`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use asat_lab::files::io_error;

use crate::suite_copy::{refresh_omp_copy, refresh_rust_copy};
use crate::Progress;

/// One program family the harness builds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Suite {
    /// NPB-Rust's `NPB-RUST` (serial), as published.
    Serial,
    /// NPB-Rust's `NPB-RAYON`, as published.
    Rayon,
    /// NPB-CPP's `NPB-OMP` (C++ OpenMP, g++ `-fopenmp`), as published.
    Omp,
    /// NPB-Rust's `NPB-RAYON` with rayon replaced by asat (last: built after the others).
    Asat,
}

pub const NPB_RUST_URL: &str = "https://github.com/GMAP/NPB-Rust";
const NPB_CPP_URL: &str = "https://github.com/GMAP/NPB-CPP";

impl Suite {
    /// The suite an implementation (`--impls` value) runs.
    pub fn of_impl(imp: &str) -> Suite {
        match imp {
            "serial" => Suite::Serial,
            "rayon" => Suite::Rayon,
            "omp" => Suite::Omp,
            _ => Suite::Asat,
        }
    }

    /// The name of the copy (and of its target folder).
    pub fn name(self) -> &'static str {
        match self {
            Suite::Serial => "npb-rust",
            Suite::Rayon => "npb-rayon",
            Suite::Asat => "npb-asat",
            Suite::Omp => "npb-omp",
        }
    }

    /// The folder of the checkout the suite is copied from.
    fn subfolder(self) -> &'static str {
        match self {
            Suite::Serial => "NPB-RUST",
            Suite::Rayon | Suite::Asat => "NPB-RAYON",
            Suite::Omp => "NPB-OMP",
        }
    }

    /// A file that must be in that folder.
    fn marker(self) -> &'static str {
        match self {
            Suite::Omp => "config/make.def",
            _ => "Cargo.toml",
        }
    }

    fn is_rust(self) -> bool {
        self != Suite::Omp
    }
}

/// The checkouts given on the command line.
#[derive(Debug)]
pub struct Checkouts {
    /// `--npb-rust`: a checkout of NPB-Rust.
    pub npb_rust: Option<PathBuf>,
    /// `--npb-cpp`: a checkout of NPB-CPP.
    pub npb_cpp: Option<PathBuf>,
}

impl Checkouts {
    /// The folder `suite` is copied from, checked to hold the suite; `imps` (the
    /// implementations that need it) are named in the error.
    fn source(&self, suite: Suite, imps: &str) -> Result<PathBuf, String> {
        let (dir, opt, url, repo) = match suite {
            Suite::Omp => (&self.npb_cpp, "--npb-cpp", NPB_CPP_URL, "NPB-CPP"),
            _ => (&self.npb_rust, "--npb-rust", NPB_RUST_URL, "NPB-Rust"),
        };
        let get = format!("get it with `git clone {url} DIR` and pass `{opt} DIR`");
        let Some(dir) = dir else {
            return Err(format!(
                "{imps} needs a checkout of {repo} ({url}), which was not given: {get}"
            ));
        };
        let sub = dir.join(suite.subfolder());
        let marker = sub.join(suite.marker());
        if !marker.is_file() {
            return Err(format!(
                "{opt} {}: {} not found; {imps} needs {repo}'s {} folder ({url}): {get}",
                dir.display(),
                marker.display(),
                suite.subfolder()
            ));
        }
        Ok(sub)
    }
}

/// The programs built: the binary of each (suite, class, kernel).
pub type Binaries = BTreeMap<(Suite, String, String), PathBuf>;

/// Where the build of `suite` for `class` leaves `kernel`'s binary under `build_dir`.
fn binary_path(suite: Suite, build_dir: &Path, class: &str, kernel: &str) -> PathBuf {
    if suite.is_rust() {
        rust_target(suite, build_dir, class)
            .join("release")
            .join(kernel)
    } else {
        build_dir
            .join(suite.name())
            .join("bin")
            .join(format!("{kernel}.{class}"))
    }
}

/// The cargo target folder of `suite` and `class`.
fn rust_target(suite: Suite, build_dir: &Path, class: &str) -> PathBuf {
    build_dir
        .join("target")
        .join(format!("{}-{class}", suite.name()))
}

/// The binaries an earlier build (a run or `--build-only`) left under `build_dir` for every
/// suite of `wanted` and every (kernel, class) of `plan`, built by no one now (`--no-build`:
/// for a machine without the toolchains, given a copy of the build folder); an error names the
/// first one missing.
pub fn prebuilt(
    wanted: &BTreeMap<Suite, String>,
    plan: &[(String, String)],
    build_dir: &Path,
) -> Result<Binaries, String> {
    let mut bins = Binaries::new();
    for (&suite, imps) in wanted {
        for (kernel, class) in plan {
            let bin = binary_path(suite, build_dir, class, kernel);
            if !bin.is_file() {
                return Err(format!(
                    "--no-build: {imps} needs {}, which is not there: build it first with the \
                     same --out, --kernels and --class and `--build-only` (on a machine with \
                     the toolchains), then copy the output folder's `build` folder here",
                    bin.display()
                ));
            }
            bins.insert((suite, class.clone(), kernel.clone()), bin);
        }
    }
    Ok(bins)
}

/// Builds every (suite, class, kernel) of `wanted` (each suite with the implementations that
/// need it, for error messages) and `plan` (kernels with their classes), the asat suite last,
/// and returns the binaries.
pub fn build_all(
    checkouts: &Checkouts,
    wanted: &BTreeMap<Suite, String>,
    plan: &[(String, String)],
    build_dir: &Path,
    progress: &Progress,
) -> Result<Binaries, String> {
    let mut sources = BTreeMap::new();
    for (&suite, imps) in wanted {
        sources.insert(suite, checkouts.source(suite, imps)?);
        check_tools(suite, imps)?;
    }
    let mut classes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (kernel, class) in plan {
        classes.entry(class).or_default().push(kernel);
    }
    let mut bins = Binaries::new();
    for (&suite, src) in &sources {
        let copy = build_dir.join(suite.name());
        progress.say(&format!("copy {} to {}", src.display(), copy.display()));
        if suite.is_rust() {
            refresh_rust_copy(suite, src, &copy)?;
        } else {
            refresh_omp_copy(src, &copy)?;
        }
        for (class, kernels) in &classes {
            let names = kernels.join(" ");
            progress.say(&format!("build {} class {class}: {names}", suite.name()));
            for (kernel, bin) in build(suite, &copy, build_dir, class, kernels)? {
                bins.insert((suite, class.to_string(), kernel.to_owned()), bin);
            }
        }
    }
    Ok(bins)
}

/// Builds `kernels` of the copy of `suite` at `copy` for `class`; returns each one's binary.
fn build<'k>(
    suite: Suite,
    copy: &Path,
    build_dir: &Path,
    class: &str,
    kernels: &[&'k str],
) -> Result<Vec<(&'k str, PathBuf)>, String> {
    if suite.is_rust() {
        build_rust(suite, copy, build_dir, class, kernels)?;
        Ok(kernels
            .iter()
            .map(|&k| (k, binary_path(suite, build_dir, class, k)))
            .collect())
    } else {
        kernels
            .iter()
            .map(|&k| Ok((k, build_omp(copy, build_dir, class, k)?)))
            .collect()
    }
}

/// Checks that the tools `suite` is built with can be started.
fn check_tools(suite: Suite, imps: &str) -> Result<(), String> {
    let tools: Vec<String> = if suite.is_rust() {
        vec![cargo()]
    } else {
        vec!["make".into(), "g++".into()]
    };
    for tool in tools {
        let ok = Command::new(&tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let hint = if suite.is_rust() {
                "install a Rust toolchain (https://rustup.rs)"
            } else {
                "install g++ (with OpenMP, libgomp) and make (Debian/Ubuntu: apt-get install g++ \
                 make)"
            };
            return Err(format!(
                "{imps} needs `{tool}`, which could not be started: {hint}"
            ));
        }
    }
    Ok(())
}

/// The cargo that runs this harness when there is one (`cargo run` sets `CARGO`), else `cargo`.
fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Builds `kernels` of the Rust copy at `copy` for `class`.
fn build_rust(
    suite: Suite,
    copy: &Path,
    build_dir: &Path,
    class: &str,
    kernels: &[&str],
) -> Result<(), String> {
    let target = rust_target(suite, build_dir, class);
    let mut cmd = Command::new(cargo());
    cmd.current_dir(copy)
        .args(["build", "--release"])
        .env("CARGO_TARGET_DIR", &target)
        .env("RUSTFLAGS", format!("--cfg class=\"{class}\""))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET_DIR");
    for k in kernels {
        cmd.args(["--bin", k]);
    }
    let log = build_dir
        .join("logs")
        .join(format!("{}-{class}.log", suite.name()));
    run_logged(
        cmd,
        &log,
        &format!("building {} class {class}", suite.name()),
    )
}

/// Builds `kernel` of the NPB-OMP copy at `copy` for `class`; returns the binary.
fn build_omp(copy: &Path, build_dir: &Path, class: &str, kernel: &str) -> Result<PathBuf, String> {
    let mut cmd = Command::new("make");
    cmd.current_dir(copy)
        .arg(kernel)
        .arg(format!("CLASS={class}"))
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS");
    let log = build_dir
        .join("logs")
        .join(format!("npb-omp-{kernel}-{class}.log"));
    let what = format!("building npb-omp {kernel} class {class}");
    run_logged(cmd, &log, &what)?;
    let bin = binary_path(Suite::Omp, build_dir, class, kernel);
    if !bin.is_file() {
        return Err(format!(
            "{what}: make succeeded but {} is not there (log: {})",
            bin.display(),
            log.display()
        ));
    }
    Ok(bin)
}

/// Runs `cmd` with its output in `log`; on failure, an error naming `what`, the log and its
/// last lines.
fn run_logged(mut cmd: Command, log: &Path, what: &str) -> Result<(), String> {
    if let Some(parent) = log.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    }
    let file = fs::File::create(log).map_err(|e| io_error(log, e))?;
    let file2 = file.try_clone().map_err(|e| io_error(log, e))?;
    let status = cmd
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(file2)
        .status()
        .map_err(|e| format!("{what}: could not start {:?}: {e}", cmd.get_program()))?;
    if status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&fs::read(log).unwrap_or_default()).into_owned();
    Err(format!(
        "{what} failed ({status}); the last lines of its log {}:\n{}",
        log.display(),
        crate::copies::last_lines(&text.lines().map(str::to_owned).collect::<Vec<_>>(), 40)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asat_port::asat_manifest;
    use crate::suite_copy::with_workspace;
    use asat_lab::rayon_port::{rayon_token_line, to_asat_source};

    #[test]
    fn asat_substitution() {
        let src = "use rayon::prelude::*;\nlet n = rayon::current_num_threads();\nmy_rayon::x();\n";
        let out = to_asat_source(Path::new("x.rs"), src.as_bytes().to_vec()).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(
            out,
            "use asat::prelude::*;\nlet n = asat::current_num_threads();\nmy_rayon::x();\n"
        );
        assert_eq!(rayon_token_line(&out), None);
        assert_eq!(
            rayon_token_line("a\n// uses rayon\n"),
            Some((2, "// uses rayon"))
        );
        let toml = asat_manifest("[dependencies]\nrayon = \"1.10\"\n", Path::new("C")).unwrap();
        assert!(toml.contains("asat = { path = ") && rayon_token_line(&toml).is_none());
        assert!(asat_manifest("[dependencies]\n", Path::new("C")).is_err());
        assert!(with_workspace("[package]\n".into()).ends_with("\n[workspace]\n"));
    }

    #[test]
    fn prebuilt_finds_the_binaries_a_build_leaves_and_names_a_missing_one() {
        let dir = std::env::temp_dir().join(format!("asat-npb-prebuilt-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let wanted: BTreeMap<Suite, String> = [
            (Suite::Rayon, "impl rayon".to_string()),
            (Suite::Omp, "impl omp".to_string()),
        ]
        .into();
        let plan = [("mg".to_string(), "B".to_string())];
        let rayon = dir.join("target/npb-rayon-B/release/mg");
        let omp = dir.join("npb-omp/bin/mg.B");
        assert_eq!(binary_path(Suite::Rayon, &dir, "B", "mg"), rayon);
        assert_eq!(binary_path(Suite::Omp, &dir, "B", "mg"), omp);
        for f in [&rayon, &omp] {
            fs::create_dir_all(f.parent().unwrap()).unwrap();
            fs::write(f, b"").unwrap();
        }
        let bins = prebuilt(&wanted, &plan, &dir).unwrap();
        assert_eq!(bins[&(Suite::Omp, "B".into(), "mg".into())], omp);
        assert_eq!(bins[&(Suite::Rayon, "B".into(), "mg".into())], rayon);
        fs::remove_file(&omp).unwrap();
        let e = prebuilt(&wanted, &plan, &dir).unwrap_err();
        assert!(
            e.contains("impl omp") && e.contains("mg.B") && e.contains("--build-only"),
            "{e}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
