//! The copies of the suites under `<out>/build` (see `suites.rs`): refreshed at every start,
//! a file written only when its content differs from the source's (or from the source's after
//! the asat substitution of `asat_port.rs`), files gone from the checkout removed.
//!
//! Every Rust copy's `Cargo.toml` gets an empty `[workspace]` table when it has none (the copy
//! lies under the output folder, which may be inside another cargo workspace, as `out/` is
//! inside asat's).

use std::fs;
use std::path::{Path, PathBuf};

use asat_lab::files::{io_error, write_if_changed};
use asat_lab::rayon_port::to_asat_source;

use crate::asat_port::{asat_manifest, check_no_rayon};
use crate::suites::Suite;

/// Brings the copy of the Rust suite `suite` at `copy` up to date with `src`: its manifest
/// (made its own workspace; for asat, with asat for rayon), `Cargo.lock` when the checkout has
/// one (not for asat), and `src/` (for asat, with `asat::` paths), files gone from the checkout
/// removed.
pub fn refresh_rust_copy(suite: Suite, src: &Path, copy: &Path) -> Result<(), String> {
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
pub fn refresh_omp_copy(src: &Path, copy: &Path) -> Result<(), String> {
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
pub fn with_workspace(toml: String) -> String {
    if toml.lines().any(|l| l.trim() == "[workspace]") {
        toml
    } else {
        format!("{}\n[workspace]\n", toml.trim_end())
    }
}

pub fn list_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
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

pub fn read(path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|e| io_error(path, e))
}
