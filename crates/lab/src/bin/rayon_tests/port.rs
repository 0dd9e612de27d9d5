//! The test crate under `<out>/crate`: its manifest, an empty `src/lib.rs`, and under `tests/`
//! the copies of rayon's test files rewritten for asat (see the crate docs for the rewrites).
//! A file is written only when its content changed, so a second run rebuilds only what
//! changed; copies of files no longer in the checkout (or no longer built) are removed.

use std::fs;
use std::path::Path;

use asat_lab::files::write_if_changed;
use asat_lab::rayon_port::{
    asat_root, rayon_token_line, replace_paths, to_asat_source, token_line,
};

use crate::checkout::{Checkout, Kind, TestFile};
use crate::manifest::{crate_manifest, test_dependencies, Manifest};
use crate::source::{code_only, declared_tests, remove_plumbing_tests, Removed};

/// What is done with a test file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// It is copied and built; `removed` are its tests taken out for using rayon's plumbing,
    /// `tests` the test functions left (by their source, for a copy that does not compile).
    Build {
        /// The tests taken out.
        removed: Vec<Removed>,
        /// The test functions declared in the copy.
        tests: Vec<String>,
    },
    /// Its code names rayon's plumbing outside tests (`uses`): not built; `tests` are the
    /// test functions it declares.
    NotApplicable {
        /// Its test functions.
        tests: Vec<String>,
        /// The plumbing names used outside tests.
        uses: Vec<&'static str>,
    },
}

/// A test file and what is done with it.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The file.
    pub file: TestFile,
    /// What is done with it.
    pub plan: Plan,
}

/// Writes the test crate for `checkout` to `dir` and returns each test file's plan, sorted by
/// stem, and the unit-test files the checkout lacks.
pub fn write_crate(
    checkout: &Checkout,
    dir: &Path,
) -> Result<(Vec<Planned>, Vec<std::path::PathBuf>), String> {
    let root_toml = checkout
        .read_optional("Cargo.toml")?
        .ok_or("the checkout's Cargo.toml is gone")?;
    let core_toml = checkout.read_optional("rayon-core/Cargo.toml")?;
    let root_name = checkout.root.join("Cargo.toml").display().to_string();
    let core_name = checkout
        .root
        .join("rayon-core/Cargo.toml")
        .display()
        .to_string();
    let tables = test_dependencies(
        Manifest {
            name: &root_name,
            text: &root_toml,
        },
        core_toml.as_deref().map(|text| Manifest {
            name: &core_name,
            text,
        }),
    )?;
    let manifest = crate_manifest(&asat_root().display().to_string(), &tables);
    write_if_changed(&dir.join("Cargo.toml"), manifest.as_bytes(), None)?;
    write_if_changed(&dir.join("src/lib.rs"), b"", None)?;
    let (files, missing) = checkout.test_files()?;
    let mut planned = Vec::new();
    for file in files {
        let bytes =
            fs::read(&file.origin).map_err(|e| format!("{}: {e}", file.origin.display()))?;
        let stripped = remove_plumbing_tests(&port_source(&file, bytes)?);
        let copy = dir.join("tests").join(format!("{}.rs", file.stem));
        let plan = if stripped.left.is_empty() {
            write_if_changed(&copy, stripped.text.as_bytes(), None)?;
            Plan::Build {
                removed: stripped.removed,
                tests: declared_tests(&stripped.text),
            }
        } else {
            remove_if_there(&copy)?;
            let mut tests: Vec<String> = stripped.removed.into_iter().map(|r| r.name).collect();
            tests.extend(declared_tests(&stripped.text));
            Plan::NotApplicable {
                tests,
                uses: stripped.left,
            }
        };
        planned.push(Planned { file, plan });
    }
    remove_stale(&dir.join("tests"), &planned)?;
    Ok((planned, missing))
}

/// The text of a test file of rayon rewritten for asat: in every file, `rayon::` and
/// `rayon_core::` paths become `asat::` paths; in a unit-test file of `rayon::<module>`, the
/// line `use super::*;` becomes `use asat::<module>::*;` and `use std::collections::LinkedList;`,
/// and `crate::` paths become `asat::` paths. Fails when a `rayon` or `rayon_core` token is
/// left in the code (comments and literals aside).
pub fn port_source(file: &TestFile, bytes: Vec<u8>) -> Result<String, String> {
    let text = to_asat_source(&file.origin, bytes)?;
    let text =
        String::from_utf8(text).map_err(|_| format!("{}: not UTF-8", file.origin.display()))?;
    let mut text = replace_paths(&text, "rayon_core", "asat");
    if let Kind::Unit(module) = file.kind {
        let lines: Vec<String> = text
            .lines()
            .map(|l| {
                if l == "use super::*;" {
                    format!("use asat::{module}::*;\nuse std::collections::LinkedList;")
                } else {
                    l.to_owned()
                }
            })
            .collect();
        text = replace_paths(&(lines.join("\n") + "\n"), "crate", "asat");
    }
    let code = code_only(&text);
    let left = rayon_token_line(&code).or_else(|| token_line(&code, "rayon_core"));
    if let Some((n, _)) = left {
        return Err(format!(
            "{}: line {n} still names rayon after the rewrite to asat: `{}` (only paths that \
             start with `rayon::`, `rayon_core::` and, in unit tests, `crate::` are rewritten)",
            file.origin.display(),
            text.lines().nth(n - 1).unwrap_or("").trim()
        ));
    }
    Ok(text)
}

/// Removes `path` when it is there.
fn remove_if_there(path: &Path) -> Result<(), String> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("{}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Removes the `.rs` files of `tests` that are not the copy of a file planned to be built.
fn remove_stale(tests: &Path, planned: &[Planned]) -> Result<(), String> {
    let Ok(entries) = fs::read_dir(tests) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let stem = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let built = planned
            .iter()
            .any(|p| p.file.stem == stem && matches!(p.plan, Plan::Build { .. }));
        if path.extension().is_some_and(|e| e == "rs") && !built {
            remove_if_there(&path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn file(kind: Kind) -> TestFile {
        TestFile {
            stem: "x".into(),
            origin: PathBuf::from("x.rs"),
            kind,
        }
    }

    #[test]
    fn paths_are_rewritten_by_origin() {
        let src = "use rayon::prelude::*;\nuse rayon_core::ThreadPoolBuilder;\n\
                   // rayon in a comment\nfn f() { my_rayon::g(); crate::h(); }\n";
        let out = port_source(&file(Kind::Integration), src.into()).unwrap();
        assert_eq!(
            out,
            "use asat::prelude::*;\nuse asat::ThreadPoolBuilder;\n\
             // rayon in a comment\nfn f() { my_rayon::g(); crate::h(); }\n"
        );
        let core = port_source(
            &file(Kind::Core),
            "fn f() { rayon_core::join(a, b); }".into(),
        );
        assert_eq!(core.unwrap(), "fn f() { asat::join(a, b); }");
    }

    #[test]
    fn unit_files_see_asat_modules() {
        let src = "use super::*;\nuse crate::prelude::*;\nuse rayon_core::*;\n\
                   fn f() { crate::iter::walk_tree(0, g); $crate::x!(); }\n";
        let out = port_source(&file(Kind::Unit("iter")), src.into()).unwrap();
        assert_eq!(
            out,
            "use asat::iter::*;\nuse std::collections::LinkedList;\nuse asat::prelude::*;\n\
             use asat::*;\nfn f() { asat::iter::walk_tree(0, g); $crate::x!(); }\n"
        );
    }

    #[test]
    fn a_rayon_name_left_in_code_is_an_error() {
        let e = port_source(&file(Kind::Integration), "extern crate rayon;\n".into());
        let e = e.unwrap_err();
        assert!(e.contains("line 1 still names rayon") && e.contains("`extern crate rayon;`"));
        let e = port_source(&file(Kind::Core), "use {rayon_core};\n".into()).unwrap_err();
        assert!(e.contains("still names rayon"), "{e}");
    }
}
