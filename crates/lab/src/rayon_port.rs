//! Rewriting rayon source for asat, shared by the programs that build rayon programs on asat
//! (`npb`, `rayon_tests`): every path that starts with a crate's name (`rayon::...`,
//! `rayon_core::...`) is made a path of another (`asat::...`), a check finds a `rayon` token
//! left afterwards, and [`asat_root`] is where the manifests of the copies find asat.

use std::path::{Path, PathBuf};

/// The folder of the `asat` package (the workspace's root, two levels above this crate), which
/// the copies' manifests name as `asat = { path = ... }`.
pub fn asat_root() -> PathBuf {
    let lab = Path::new(env!("CARGO_MANIFEST_DIR"));
    lab.parent()
        .and_then(Path::parent)
        .unwrap_or(lab)
        .to_path_buf()
}

/// A source file with every `rayon::` path made an `asat::` path (`path` names the file in the
/// error for text that is not UTF-8).
pub fn to_asat_source(path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, String> {
    let text = String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", path.display()))?;
    Ok(replace_paths(&text, "rayon", "asat").into_bytes())
}

/// `text` with every path that starts with the crate name `from` (`from::`, not the end of a
/// longer identifier or a macro variable such as `$crate`) starting with `to` instead.
pub fn replace_paths(text: &str, from: &str, to: &str) -> String {
    let pattern = format!("{from}::");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&pattern) {
        let before = rest[..at].chars().next_back();
        out.push_str(&rest[..at]);
        if before.is_some_and(|c| is_ident(c) || c == '$') {
            out.push_str(&pattern);
        } else {
            out.push_str(to);
            out.push_str("::");
        }
        rest = &rest[at + pattern.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether `c` can be part of an identifier.
pub fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first line of `text` holding the token `rayon` (not part of a longer identifier), 1-based.
pub fn rayon_token_line(text: &str) -> Option<(usize, &str)> {
    token_line(text, "rayon")
}

/// The first line of `text` holding the identifier `token` (not part of a longer identifier),
/// 1-based.
pub fn token_line<'a>(text: &'a str, token: &str) -> Option<(usize, &'a str)> {
    text.lines().enumerate().find_map(|(i, line)| {
        line.match_indices(token).find_map(|(at, _)| {
            let before = line[..at].chars().next_back();
            let after = line[at + token.len()..].chars().next();
            (!before.is_some_and(is_ident) && !after.is_some_and(is_ident)).then_some((i + 1, line))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asat_root_is_the_facade_package() {
        let toml = std::fs::read_to_string(asat_root().join("Cargo.toml")).unwrap();
        assert!(toml.contains("\nname = \"asat\"\n"), "{toml}");
    }

    #[test]
    fn paths_are_replaced_but_not_inside_longer_names() {
        let src = "use rayon::prelude::*; my_rayon::x(); $rayon::y(); rayon::join(a, b)";
        assert_eq!(
            replace_paths(src, "rayon", "asat"),
            "use asat::prelude::*; my_rayon::x(); $rayon::y(); asat::join(a, b)"
        );
        assert_eq!(
            rayon_token_line("a\nlet rayon = 1;\n"),
            Some((2, "let rayon = 1;"))
        );
        assert_eq!(rayon_token_line("my_rayon::x();\n"), None);
    }
}
