//! The asat copy of NPB-RAYON (`npb-asat`): NPB-RAYON with, in every `.rs` file under `src/`,
//! each `rayon::` path turned into `asat::` ([`asat_lab::rayon_port`], shared with
//! `rayon_tests`), and the `rayon = ...` dependency line turned into
//! `asat = { path = "<this workspace>" }`; afterwards no `rayon` token may be left.

use std::path::Path;

use asat_lab::rayon_port::{asat_root, rayon_token_line};

use crate::suite_copy::{list_files, read};
use crate::suites::NPB_RUST_URL;

/// NPB-RAYON's manifest with its `rayon = ...` dependency line replaced by asat's.
pub fn asat_manifest(toml: &str, path: &Path) -> Result<String, String> {
    let root = asat_root().display().to_string();
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
            "{}: no `rayon = ...` dependency line to replace with asat (not NPB-RAYON from \
             {NPB_RUST_URL}?)",
            path.display()
        ));
    }
    Ok(lines.join("\n") + "\n")
}

/// Fails when a `.rs` file under the asat copy's `src/` still names rayon.
pub fn check_no_rayon(copy: &Path) -> Result<(), String> {
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
