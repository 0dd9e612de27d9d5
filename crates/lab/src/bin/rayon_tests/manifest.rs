//! The test crate's `Cargo.toml`: asat as its one dependency, and as dev-dependencies every
//! crate a copied test can name: the `[dev-dependencies]` of rayon and of rayon-core (also the
//! per-target ones, such as rayon-core's `[target.'cfg(unix)'.dev-dependencies]` with `libc`),
//! and their `[dependencies]` that are neither optional nor paths (rayon-core's tests use
//! `crossbeam-utils`, one of its dependencies). rayon's manifests say `name.workspace = true`;
//! such a line is resolved from the `[workspace.dependencies]` table of rayon's root manifest.
//!
//! The manifests are read line by line, which suffices for rayon's: section headers, and
//! dependency lines of the forms `name = "version"`, `name = { ... }` on one line and
//! `name.workspace = true`. Any other line in a dependency table is an error that says so.

/// A table of the test crate's manifest: its header and its `name = value` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepTable {
    /// The table's name without brackets (`dev-dependencies`, or
    /// `target.'cfg(unix)'.dev-dependencies`).
    pub header: String,
    /// The dependencies, in the order first seen.
    pub deps: Vec<(String, String)>,
}

/// A manifest to read: its name for error messages, and its text.
#[derive(Debug, Clone, Copy)]
pub struct Manifest<'a> {
    /// Where it is (for error messages).
    pub name: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// The test crate's dev-dependency tables from rayon's root manifest `rayon` (which also
/// holds `[workspace.dependencies]`) and rayon-core's `core` (see the module docs).
pub fn test_dependencies(
    rayon: Manifest<'_>,
    core: Option<Manifest<'_>>,
) -> Result<Vec<DepTable>, String> {
    let workspace = workspace_dependencies(rayon.text);
    let mut tables: Vec<DepTable> = Vec::new();
    for m in std::iter::once(rayon).chain(core) {
        for (line_no, header, line) in table_lines(m.text) {
            let Some(target_header) = dev_header(&header) else {
                continue;
            };
            let at = format!("{}:{line_no}", m.name);
            let Some((name, value)) = dependency(&line, &workspace, &at)? else {
                continue;
            };
            let table = match tables.iter_mut().position(|t| t.header == target_header) {
                Some(k) => &mut tables[k],
                None => {
                    tables.push(DepTable {
                        header: target_header,
                        deps: Vec::new(),
                    });
                    tables.last_mut().expect("just pushed")
                }
            };
            match table.deps.iter().find(|(n, _)| *n == name) {
                Some((_, v)) if *v != value => {
                    return Err(format!(
                        "{at}: dependency `{name}` is `{value}` here but `{v}` in another \
                         manifest: the test crate can have only one"
                    ));
                }
                Some(_) => {}
                None => table.deps.push((name, value)),
            }
        }
    }
    Ok(tables)
}

/// The test crate's manifest: `asat` at `asat_root` and the dev-dependency `tables`.
pub fn crate_manifest(asat_root: &str, tables: &[DepTable]) -> String {
    let escaped = asat_root.replace('\\', "\\\\").replace('"', "\\\"");
    let mut toml = String::from(
        "# Written by asat's rayon_tests program: rayon's tests built against asat.\n\
         [package]\nname = \"rayon-tests-on-asat\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\n",
    );
    toml += &format!("asat = {{ path = \"{escaped}\" }}\n");
    for t in tables {
        toml += &format!("\n[{}]\n", t.header);
        for (name, value) in &t.deps {
            toml += &format!("{name} = {value}\n");
        }
    }
    toml + "\n[workspace]\n"
}

/// The table of the test crate that a table of rayon's manifests goes to: dependencies and
/// dev-dependencies (plain or per target) become dev-dependencies; others are not taken.
fn dev_header(header: &str) -> Option<String> {
    if header == "dependencies" || header == "dev-dependencies" {
        return Some("dev-dependencies".into());
    }
    let target = header.strip_prefix("target.")?;
    let cfg = target
        .strip_suffix(".dev-dependencies")
        .or_else(|| target.strip_suffix(".dependencies"))?;
    Some(format!("target.{cfg}.dev-dependencies"))
}

/// Every non-blank, non-comment line of `text` below a table header, with its 1-based number
/// and the header (without brackets).
fn table_lines(text: &str) -> Vec<(usize, String, String)> {
    let mut header = String::new();
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            header = line
                .trim_matches(|c| c == '[' || c == ']')
                .trim()
                .to_owned();
        } else {
            out.push((i + 1, header.clone(), line.to_owned()));
        }
    }
    out
}

/// The `name = value` lines of the `[workspace.dependencies]` table.
fn workspace_dependencies(text: &str) -> Vec<(String, String)> {
    table_lines(text)
        .into_iter()
        .filter(|(_, h, _)| h == "workspace.dependencies")
        .filter_map(|(_, _, line)| {
            let (k, v) = line.split_once('=')?;
            Some((k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect()
}

/// The dependency a line of a dependency table declares, resolved from `workspace`; `None`
/// for one the test crate does not take (optional, or a path: rayon's own crates).
fn dependency(
    line: &str,
    workspace: &[(String, String)],
    at: &str,
) -> Result<Option<(String, String)>, String> {
    let not_understood = || {
        format!(
            "{at}: `{line}`: a dependency line the harness does not understand (it reads \
             `name = \"version\"`, `name = {{ ... }}` on one line and `name.workspace = true`)"
        )
    };
    let (key, value) = line.split_once('=').ok_or_else(not_understood)?;
    let (key, value) = (key.trim(), value.trim());
    let (name, value) = if let Some(name) = key.strip_suffix(".workspace") {
        if value != "true" {
            return Err(not_understood());
        }
        (name, resolve(name, workspace, at)?)
    } else if key.contains('.') || !is_complete_value(value) {
        return Err(not_understood());
    } else if value.starts_with('{') {
        let fields = inline_table(value).ok_or_else(not_understood)?;
        if fields.iter().any(|(k, v)| k == "optional" && v == "true") {
            return Ok(None);
        }
        if fields.iter().any(|(k, v)| k == "workspace" && v == "true") {
            if fields.len() > 1 {
                return Err(not_understood());
            }
            (key, resolve(key, workspace, at)?)
        } else {
            (key, value.to_owned())
        }
    } else {
        (key, value.to_owned())
    };
    let is_path = inline_table(&value).is_some_and(|f| f.iter().any(|(k, _)| k == "path"));
    Ok((!is_path).then(|| (name.to_owned(), value)))
}

/// `name`'s value in `[workspace.dependencies]`.
fn resolve(name: &str, workspace: &[(String, String)], at: &str) -> Result<String, String> {
    workspace
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
        .filter(|v| is_complete_value(v))
        .ok_or_else(|| {
            format!(
                "{at}: `{name}` is taken from the workspace, but the root manifest's \
                 [workspace.dependencies] has no one-line `{name} = ...`"
            )
        })
}

/// Whether `value` is a whole value on its line: a string, or an inline table closed there.
fn is_complete_value(value: &str) -> bool {
    (value.starts_with('"') && value.ends_with('"') && value.len() >= 2)
        || (value.starts_with('{') && value.ends_with('}'))
}

/// The `key = value` fields of a one-line inline table `{ ... }` (commas inside brackets and
/// strings do not split), `None` when `value` is not one.
fn inline_table(value: &str) -> Option<Vec<(String, String)>> {
    let inner = value.strip_prefix('{')?.strip_suffix('}')?;
    let (mut fields, mut depth, mut in_str, mut start) = (Vec::new(), 0i32, false, 0);
    let mut push = |part: &str| -> Option<()> {
        if !part.trim().is_empty() {
            let (k, v) = part.split_once('=')?;
            fields.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        Some(())
    };
    for (i, c) in inner.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '[' | '{' if !in_str => depth += 1,
            ']' | '}' if !in_str => depth -= 1,
            ',' if !in_str && depth == 0 => {
                push(&inner[start..i])?;
                start = i + 1;
            }
            _ => {}
        }
    }
    push(&inner[start..])?;
    Some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = r#"[package]
name = "made-up"

[dependencies]
core-part = { version = "1.0", path = "core-part" }
either.workspace = true
wasm-thing = { workspace = true, optional = true }

[dev-dependencies]
rand.workspace = true
serde = { version = "1", features = ["derive", "rc"] }

[workspace.dependencies]
either = { version = "1", default-features = false }
rand = "0.10"
libc = "0.2"
"#;

    const CORE: &str = "[dependencies]\ncrossbeam-utils = \"0.8\"\n\n[dev-dependencies]\n\
                        rand.workspace = true\n\n[target.'cfg(unix)'.dev-dependencies]\n\
                        libc = { workspace = true }\n";

    fn m(text: &str) -> Manifest<'_> {
        Manifest { name: "M", text }
    }

    #[test]
    fn dev_dependencies_are_resolved_from_the_workspace() {
        let tables = test_dependencies(m(ROOT), Some(m(CORE))).unwrap();
        let dev = &tables[0];
        assert_eq!(dev.header, "dev-dependencies");
        let got: Vec<(&str, &str)> = dev.deps.iter().map(|(n, v)| (&n[..], &v[..])).collect();
        assert_eq!(
            got,
            [
                ("either", "{ version = \"1\", default-features = false }"),
                ("rand", "\"0.10\""),
                (
                    "serde",
                    "{ version = \"1\", features = [\"derive\", \"rc\"] }"
                ),
                ("crossbeam-utils", "\"0.8\""),
            ]
        );
        assert_eq!(
            tables[1],
            DepTable {
                header: "target.'cfg(unix)'.dev-dependencies".into(),
                deps: vec![("libc".into(), "\"0.2\"".into())],
            }
        );
        let toml = crate_manifest("/ws", &tables);
        assert!(toml.contains("[package]\nname = \"rayon-tests-on-asat\"\nedition = \"2021\""));
        assert!(toml.contains("publish = false\n\n[dependencies]\nasat = { path = \"/ws\" }\n"));
        assert!(
            toml.contains("\n[dev-dependencies]\neither = {") && toml.ends_with("[workspace]\n")
        );
    }

    #[test]
    fn lines_not_understood_are_errors_that_say_what_is_read() {
        let multi = "[dev-dependencies]\nrand = {\n  version = \"0.10\"\n}\n";
        let e = test_dependencies(m(multi), None).unwrap_err();
        assert!(
            e.starts_with("M:2: `rand = {`") && e.contains("name.workspace = true"),
            "{e}"
        );
        let dotted = "[dev-dependencies]\nrand.version = \"0.10\"\n";
        assert!(test_dependencies(m(dotted), None)
            .unwrap_err()
            .contains("does not understand"));
        let missing = "[dev-dependencies]\nfoo.workspace = true\n";
        let e = test_dependencies(m(missing), None).unwrap_err();
        assert!(e.contains("`foo` is taken from the workspace"), "{e}");
        let clash = "[dev-dependencies]\nrand = \"0.9\"\n";
        let e = test_dependencies(m(ROOT), Some(m(clash))).unwrap_err();
        assert!(e.contains("the test crate can have only one"), "{e}");
    }
}
