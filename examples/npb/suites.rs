//! The NPB suites: where they are in the user's checkouts, the copies of them the harness builds
//! under `<out>/build` (never inside a checkout), and their builds.
//!
//! A copy is refreshed at every start: a file is written only when its content differs from the
//! source's (or from the source's after the asat substitution), so cargo and make see unchanged
//! files as unchanged and rebuild only what changed. Each Rust suite and class has its own cargo
//! target folder (`<out>/build/target/<suite>-<class>`): the class is a `--cfg` in `RUSTFLAGS`,
//! and one folder per class keeps every class's build instead of redoing it at each switch.
//!
//! Every Rust copy's `Cargo.toml` gets an empty `[workspace]` table when it has none (the copy
//! lies under the output folder, which may be inside another cargo workspace, as `out/` is
//! inside asat's). The asat copy (`npb-asat`) is NPB-RAYON with, in every `.rs` file under
//! `src/`, each `rayon::` path turned into `asat::`, and the `rayon = ...` dependency line turned
//! into `asat = { path = "<this workspace>" }`; afterwards no `rayon` token may be left.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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

const NPB_RUST_URL: &str = "https://github.com/GMAP/NPB-Rust";
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
                "install g++ (with OpenMP, libgomp) and make (Debian/Ubuntu: apt-get install g++ make)"
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

/// Brings the copy of the Rust suite `suite` at `copy` up to date with `src`: its manifest
/// (made its own workspace; for asat, with asat for rayon), `Cargo.lock` when the checkout has
/// one (not for asat), and `src/` (for asat, with `asat::` paths), files gone from the checkout
/// removed.
fn refresh_rust_copy(suite: Suite, src: &Path, copy: &Path) -> Result<(), String> {
    let manifest = src.join("Cargo.toml");
    let toml = String::from_utf8(read(&manifest)?)
        .map_err(|_| format!("{}: not UTF-8", manifest.display()))?;
    let asat = suite == Suite::Asat;
    let toml = if asat {
        asat_manifest(&toml, &manifest)?
    } else {
        toml
    };
    write_if_changed(
        &copy.join("Cargo.toml"),
        with_workspace(toml).as_bytes(),
        None,
    )?;
    let lock = src.join("Cargo.lock");
    if !asat && lock.is_file() {
        write_if_changed(&copy.join("Cargo.lock"), &read(&lock)?, None)?;
    }
    sync_tree(
        &src.join("src"),
        &copy.join("src"),
        &|_| false,
        &|path, bytes| {
            if asat && path.extension().is_some_and(|e| e == "rs") {
                to_asat_source(path, bytes)
            } else {
                Ok(bytes)
            }
        },
    )?;
    prune(&src.join("src"), &copy.join("src"))?;
    if asat {
        check_no_rayon(copy)?;
    }
    Ok(())
}

/// Brings the copy of NPB-OMP at `copy` up to date with `src` (all but what its build makes).
fn refresh_omp_copy(src: &Path, copy: &Path) -> Result<(), String> {
    sync_tree(src, copy, &omp_generated, &|_, bytes| Ok(bytes))?;
    fs::create_dir_all(copy.join("bin")).map_err(|e| io_error(&copy.join("bin"), e))
}

/// Files of an NPB-OMP checkout that its build makes (and a checkout built in place has): they
/// are not copied, so the copy's build makes its own.
fn omp_generated(rel: &Path) -> bool {
    let s = rel.to_string_lossy();
    s.starts_with("bin/")
        || s.ends_with(".o")
        || s.ends_with("npbparams.hpp")
        || s == "sys/setparams"
        || s == "sys/setparams.hpp"
}

/// `toml` with an empty `[workspace]` table appended when it has none.
fn with_workspace(toml: String) -> String {
    if toml.lines().any(|l| l.trim() == "[workspace]") {
        toml
    } else {
        format!("{}\n[workspace]\n", toml.trim_end())
    }
}

/// NPB-RAYON's manifest with its `rayon = ...` dependency line replaced by asat's.
fn asat_manifest(toml: &str, path: &Path) -> Result<String, String> {
    let root = env!("CARGO_MANIFEST_DIR");
    let escaped = root.replace('\\', "\\\\").replace('"', "\\\"");
    let mut found = false;
    let lines: Vec<String> = toml
        .lines()
        .map(|l| {
            let t = l.trim_start();
            let is_dep = t
                .strip_prefix("rayon")
                .is_some_and(|rest| rest.trim_start().starts_with('='));
            if is_dep {
                found = true;
                format!("asat = {{ path = \"{escaped}\" }}")
            } else {
                l.to_owned()
            }
        })
        .collect();
    if !found {
        return Err(format!(
            "{}: no `rayon = ...` dependency line to replace with asat (not NPB-RAYON from {NPB_RUST_URL}?)",
            path.display()
        ));
    }
    Ok(lines.join("\n") + "\n")
}

/// A source file of NPB-RAYON with every `rayon::` path made an `asat::` path.
fn to_asat_source(path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, String> {
    let text = String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", path.display()))?;
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("rayon::") {
        let before = rest[..at].chars().next_back();
        out.push_str(&rest[..at]);
        out.push_str(if before.is_some_and(is_ident) {
            "rayon::"
        } else {
            "asat::"
        });
        rest = &rest[at + "rayon::".len()..];
    }
    out.push_str(rest);
    Ok(out.into_bytes())
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first line of `text` holding the token `rayon` (not part of a longer identifier), 1-based.
pub fn rayon_token_line(text: &str) -> Option<(usize, &str)> {
    text.lines().enumerate().find_map(|(i, line)| {
        line.match_indices("rayon").find_map(|(at, _)| {
            let before = line[..at].chars().next_back();
            let after = line[at + "rayon".len()..].chars().next();
            (!before.is_some_and(is_ident) && !after.is_some_and(is_ident)).then_some((i + 1, line))
        })
    })
}

/// Fails when a `.rs` file under the asat copy's `src/` still names rayon.
fn check_no_rayon(copy: &Path) -> Result<(), String> {
    let mut files = Vec::new();
    list_files(&copy.join("src"), &mut files)?;
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let text = String::from_utf8_lossy(&read(f)?).into_owned();
        if let Some((n, line)) = rayon_token_line(&text) {
            return Err(format!(
                "the asat copy of NPB-RAYON still uses rayon after the substitution, at {}:{n}: \
                 `{}` (only `rayon::` paths are replaced)",
                f.display(),
                line.trim()
            ));
        }
    }
    Ok(())
}

fn list_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    for entry in fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let path = entry.map_err(|e| io_error(dir, e))?.path();
        if path.is_dir() {
            list_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// What a file's bytes become in a copy (the file's path in the checkout, its bytes).
type Transform<'a> = &'a dyn Fn(&Path, Vec<u8>) -> Result<Vec<u8>, String>;

/// Copies every file under `src` to the same place under `dst` (passed through `transform`),
/// except those whose path relative to `src` is `skipped`, and except `.git` and `target`
/// folders; writes only files whose content differs.
fn sync_tree(
    src: &Path,
    dst: &Path,
    skipped: &dyn Fn(&Path) -> bool,
    transform: Transform<'_>,
) -> Result<(), String> {
    let mut files = Vec::new();
    list_files_skipping(src, &mut files)?;
    for f in files {
        let rel = f.strip_prefix(src).expect("listed under src");
        if skipped(rel) {
            continue;
        }
        let bytes = transform(&f, read(&f)?)?;
        let perms = fs::metadata(&f).map_err(|e| io_error(&f, e))?.permissions();
        write_if_changed(&dst.join(rel), &bytes, Some(perms))?;
    }
    Ok(())
}

fn list_files_skipping(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    for entry in fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let entry = entry.map_err(|e| io_error(dir, e))?;
        let path = entry.path();
        let file_type = entry.file_type().map_err(|e| io_error(&path, e))?;
        if file_type.is_dir() {
            if !matches!(entry.file_name().to_str(), Some(".git" | "target")) {
                list_files_skipping(&path, out)?;
            }
        } else if path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// Removes the files under `dst` that have no counterpart under `src`.
fn prune(src: &Path, dst: &Path) -> Result<(), String> {
    let mut files = Vec::new();
    list_files(dst, &mut files)?;
    for f in files {
        let rel = f.strip_prefix(dst).expect("listed under dst");
        if !src.join(rel).is_file() {
            fs::remove_file(&f).map_err(|e| io_error(&f, e))?;
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|e| io_error(path, e))
}

/// Writes `bytes` to `path` unless it already holds them (keeping its time stamp, so builds
/// see it unchanged).
fn write_if_changed(
    path: &Path,
    bytes: &[u8],
    perms: Option<fs::Permissions>,
) -> Result<(), String> {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    }
    fs::write(path, bytes).map_err(|e| io_error(path, e))?;
    if let Some(perms) = perms {
        fs::set_permissions(path, perms).map_err(|e| io_error(path, e))?;
    }
    Ok(())
}

fn io_error(path: &Path, e: std::io::Error) -> String {
    format!("{}: {e}", path.display())
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
