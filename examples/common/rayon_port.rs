//! Rewriting rayon source for asat, shared by the examples that build rayon programs on asat
//! (`npb`, `rayon_tests`; each includes this file with `#[path]`): every path that starts with
//! a crate's name (`rayon::...`, `rayon_core::...`) is made a path of another (`asat::...`),
//! and a check finds a `rayon` token left afterwards.

use std::path::Path;

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
