//! The rayon checkout given with `--rayon`: checked to be one (a `Cargo.toml` whose package is
//! `rayon`, and a `tests/` folder), and the test files the harness copies from it.

use std::fs;
use std::path::{Path, PathBuf};

/// Where rayon is published.
pub const RAYON_URL: &str = "https://github.com/rayon-rs/rayon";

/// rayon's unit-test files of its public API: the file, the copy's name, and the module of
/// rayon (and of asat) whose items the file sees through `use super::*;`.
pub const UNIT_FILES: [(&str, &str, &str); 2] = [
    ("src/iter/test.rs", "unit_iter", "iter"),
    ("src/slice/test.rs", "unit_slice", "slice"),
];

/// Where a test file comes from, which decides how it is rewritten (see the crate docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `tests/*.rs` of rayon.
    Integration,
    /// `rayon-core/tests/*.rs`.
    Core,
    /// A unit-test file of rayon's module `rayon::<module>`.
    Unit(&'static str),
}

/// A test file of the checkout and the name of its copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestFile {
    /// The copy's file stem under the crate's `tests/` (and cargo's test target name).
    pub stem: String,
    /// The file in the checkout.
    pub origin: PathBuf,
    /// How it is rewritten.
    pub kind: Kind,
}

/// A checked rayon checkout.
#[derive(Debug, Clone)]
pub struct Checkout {
    /// Its root folder.
    pub root: PathBuf,
}

impl Checkout {
    /// Checks that `dir` (the `--rayon` option) is a rayon checkout.
    pub fn open(dir: Option<&Path>) -> Result<Checkout, String> {
        let get = format!("get one with `git clone {RAYON_URL} DIR` and pass --rayon DIR");
        let Some(dir) = dir else {
            return Err(format!("no rayon checkout given: {get}"));
        };
        let not = |why: &str| {
            format!(
                "--rayon {}: {why}: not a rayon checkout ({get})",
                dir.display()
            )
        };
        let manifest = dir.join("Cargo.toml");
        let toml = match fs::read_to_string(&manifest) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not("no Cargo.toml there"));
            }
            Err(e) => return Err(format!("{}: {e}", manifest.display())),
        };
        if !package_is_rayon(&toml) {
            return Err(not("its Cargo.toml's [package] is not `name = \"rayon\"`"));
        }
        if !dir.join("tests").is_dir() {
            return Err(not("no tests/ folder"));
        }
        Ok(Checkout {
            root: dir.to_path_buf(),
        })
    }

    /// The test files to copy, sorted by stem, and the unit-test files of [`UNIT_FILES`] this
    /// checkout does not have (rayon moved them?).
    pub fn test_files(&self) -> Result<(Vec<TestFile>, Vec<PathBuf>), String> {
        let mut files = Vec::new();
        for (dir, kind, prefix) in [
            ("tests", Kind::Integration, ""),
            ("rayon-core/tests", Kind::Core, "core_"),
        ] {
            for origin in rust_files(&self.root.join(dir))? {
                let stem = origin.file_stem().unwrap_or_default().to_string_lossy();
                files.push(TestFile {
                    stem: format!("{prefix}{stem}"),
                    origin,
                    kind,
                });
            }
        }
        let mut missing = Vec::new();
        for (rel, stem, module) in UNIT_FILES {
            let origin = self.root.join(rel);
            if origin.is_file() {
                files.push(TestFile {
                    stem: stem.into(),
                    origin,
                    kind: Kind::Unit(module),
                });
            } else {
                missing.push(origin);
            }
        }
        files.sort_by(|a, b| a.stem.cmp(&b.stem));
        Ok((files, missing))
    }

    /// The text of `rel` (a manifest) under the checkout, `None` when it is not there.
    pub fn read_optional(&self, rel: &str) -> Result<Option<String>, String> {
        let path = self.root.join(rel);
        match fs::read_to_string(&path) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }
}

/// Whether the `[package]` table of `toml` says `name = "rayon"`.
fn package_is_rayon(toml: &str) -> bool {
    let mut in_package = false;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            if key.trim() == "name" {
                return value.trim() == "\"rayon\"";
            }
        }
    }
    false
}

/// The `.rs` files directly in `dir` (none when it does not exist), sorted.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn a_missing_or_wrong_checkout_says_where_to_get_rayon() {
        let clone = "git clone https://github.com/rayon-rs/rayon DIR";
        let e = Checkout::open(None).unwrap_err();
        assert!(
            e.contains("no rayon checkout given") && e.contains(clone),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let e = Checkout::open(Some(&dir.path().join("nowhere"))).unwrap_err();
        assert!(
            e.contains("no Cargo.toml there") && e.contains(clone),
            "{e}"
        );
        write(
            dir.path(),
            "Cargo.toml",
            "[package]\nname = \"rayon-core\"\n",
        );
        let e = Checkout::open(Some(dir.path())).unwrap_err();
        assert!(
            e.contains("is not `name = \"rayon\"`") && e.contains(clone),
            "{e}"
        );
        write(dir.path(), "Cargo.toml", "[package]\nname = \"rayon\"\n");
        let e = Checkout::open(Some(dir.path())).unwrap_err();
        assert!(e.contains("no tests/ folder") && e.contains(clone), "{e}");
    }

    #[test]
    fn test_files_are_named_by_origin() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "Cargo.toml", "[package]\nname = \"rayon\"\n");
        write(dir.path(), "tests/b-c.rs", "");
        write(dir.path(), "tests/notes.txt", "");
        write(dir.path(), "rayon-core/tests/a.rs", "");
        write(dir.path(), "src/iter/test.rs", "");
        let checkout = Checkout::open(Some(dir.path())).unwrap();
        let (files, missing) = checkout.test_files().unwrap();
        let got: Vec<(&str, Kind)> = files.iter().map(|f| (f.stem.as_str(), f.kind)).collect();
        assert_eq!(
            got,
            [
                ("b-c", Kind::Integration),
                ("core_a", Kind::Core),
                ("unit_iter", Kind::Unit("iter")),
            ]
        );
        assert_eq!(missing, [dir.path().join("src/slice/test.rs")]);
    }
}
