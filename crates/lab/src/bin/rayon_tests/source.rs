//! Reading rayon's test files as text: their code without comments and literals, their test
//! functions, and the removal of the tests that use rayon's plumbing traits.
//!
//! rayon's files are rustfmt'ed, which this relies on: a top-level item starts at column 0,
//! with its doc comments (`///`) and attributes (`#[...]`, possibly over several lines closed
//! by a line at column 0) first, and a function's body ends at the first line that is exactly
//! `}` (or on the `fn` line itself when it ends with `{}`). A *test* is such a function with a
//! `#[test]` line among its attributes. Names are looked for in the code only: comments and the
//! contents of string and character literals are blanked first ([`code_only`]), so a comment
//! that mentions `Producer` does not count.

use std::ops::Range;

use asat_lab::rayon_port::is_ident;

/// rayon's plumbing, which asat does not have (its `plumbing` module has another protocol):
/// the traits of `rayon::iter::plumbing`, its `bridge` functions, and the methods of rayon's
/// iterator traits that hand out producers and consumers. A test whose code names one of
/// these is removed from the copy.
pub const PLUMBING: [&str; 15] = [
    "Producer",
    "ProducerCallback",
    "UnindexedProducer",
    "Consumer",
    "UnindexedConsumer",
    "Folder",
    "Reducer",
    "bridge",
    "bridge_producer_consumer",
    "bridge_unindexed",
    "with_producer",
    "drive_unindexed",
    "drive",
    "into_folder",
    "split_off_left",
];

/// `src` with comments and the contents of string and character literals replaced by spaces
/// (newlines kept, so lines stay where they were), for searches that must see code only.
pub fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out: Vec<char> = Vec::with_capacity(c.len());
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let end = block_comment_end(&c, i);
            out.extend(c[i..end].iter().map(|&ch| blank(ch)));
            i = end;
        } else if let Some(hashes) = raw_string_start(&c, i) {
            let open = i + 1 + hashes + 1;
            let end = raw_string_end(&c, open, hashes);
            out.extend(&c[i..open]);
            out.extend(c[open..end].iter().map(|&ch| blank(ch)));
            let close = (end + 1 + hashes).min(c.len());
            out.extend(&c[end..close]);
            i = close;
        } else if c[i] == '"' || (c[i] == '\'' && is_char_literal(&c, i)) {
            let end = quoted_end(&c, i, c[i]);
            out.push(c[i]);
            out.extend(c[i + 1..end].iter().map(|&ch| blank(ch)));
            out.extend(c.get(end));
            i = end + 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out.into_iter().collect()
}

/// The index after the (possibly nested) block comment that opens at `start`.
fn block_comment_end(c: &[char], start: usize) -> usize {
    let (mut depth, mut i) = (0usize, start);
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    c.len()
}

/// The number of `#`s of a raw string literal (`r"`, `r#"`, `br#"` ...) whose `r` is at `i`.
fn raw_string_start(c: &[char], i: usize) -> Option<usize> {
    if c[i] != 'r' {
        return None;
    }
    let before = i.checked_sub(1).map(|b| c[b]);
    let prefix_ok = match before {
        Some('b') | Some('c') => i < 2 || !is_ident(c[i - 2]),
        Some(b) => !is_ident(b),
        None => true,
    };
    let hashes = c[i + 1..].iter().take_while(|&&ch| ch == '#').count();
    (prefix_ok && c.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
}

/// The index of the closing `"` (followed by `hashes` `#`s) of a raw string whose contents
/// start at `open`; the end of the text when it is not closed.
fn raw_string_end(c: &[char], open: usize, hashes: usize) -> usize {
    (open..c.len())
        .find(|&j| c[j] == '"' && (1..=hashes).all(|h| c.get(j + h) == Some(&'#')))
        .unwrap_or(c.len())
}

/// The index of the closing `quote` of the literal opened at `start` (backslash escapes
/// skipped); the end of the text when it is not closed.
fn quoted_end(c: &[char], start: usize, quote: char) -> usize {
    let mut i = start + 1;
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            ch if ch == quote => return i,
            _ => i += 1,
        }
    }
    c.len()
}

/// Whether the `'` at `i` opens a character literal (`'x'`, `'\n'`), not a lifetime (`'a`).
fn is_char_literal(c: &[char], i: usize) -> bool {
    match c.get(i + 1) {
        Some('\\') => true,
        Some(_) => c.get(i + 2) == Some(&'\''),
        None => false,
    }
}

/// The distinct [`PLUMBING`] names used in `code` (the output of [`code_only`]), in the
/// table's order.
pub fn plumbing_names(code: &str) -> Vec<&'static str> {
    let mut used = vec![false; PLUMBING.len()];
    let mut word = String::new();
    for ch in code.chars().chain([' ']) {
        if is_ident(ch) {
            word.push(ch);
        } else if !word.is_empty() {
            if let Some(k) = PLUMBING.iter().position(|&p| p == word) {
                used[k] = true;
            }
            word.clear();
        }
    }
    PLUMBING
        .iter()
        .zip(used)
        .filter_map(|(&p, u)| u.then_some(p))
        .collect()
}

/// A test function at the top level of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestItem {
    /// The function's name.
    pub name: String,
    /// Its lines, doc comments and attributes included (0-based).
    pub lines: Range<usize>,
}

/// The test functions at the top level of `src` (see the module docs for how items are found).
pub fn top_level_tests(src: &str) -> Vec<TestItem> {
    let lines: Vec<&str> = src.lines().collect();
    let code = code_only(src);
    let code: Vec<&str> = code.lines().collect();
    let mut tests = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let starts_item = lines[i].starts_with("#[") || lines[i].starts_with("///");
        if !starts_item {
            i += 1;
            continue;
        }
        let (attrs_end, is_test) = attributes(&lines, &code, i);
        let Some(name) = lines.get(attrs_end).and_then(|l| fn_name(l)) else {
            i = attrs_end.max(i + 1);
            continue;
        };
        let end = if lines[attrs_end].trim_end().ends_with("{}") {
            attrs_end
        } else {
            (attrs_end..lines.len())
                .find(|&k| lines[k] == "}")
                .unwrap_or(lines.len() - 1)
        };
        if is_test {
            tests.push(TestItem {
                name: name.to_owned(),
                lines: i..end + 1,
            });
        }
        i = end + 1;
    }
    tests
}

/// The line after the doc comments and attributes that start at `start`, and whether one of
/// them is `#[test]`.
fn attributes(lines: &[&str], code: &[&str], start: usize) -> (usize, bool) {
    let (mut i, mut is_test) = (start, false);
    while i < lines.len() {
        if lines[i].starts_with("///") {
            i += 1;
        } else if lines[i].starts_with("#[") {
            is_test |= lines[i].trim_end() == "#[test]";
            let mut depth = 0i64;
            while i < lines.len() {
                let line = code.get(i).copied().unwrap_or("");
                depth += line.matches('[').count() as i64 - line.matches(']').count() as i64;
                i += 1;
                if depth <= 0 {
                    break;
                }
            }
        } else {
            break;
        }
    }
    (i, is_test)
}

/// The name of the function a line declares (`fn name`, `pub fn name`, `async fn name` ...),
/// when it does and the name is not a macro variable.
fn fn_name(line: &str) -> Option<&str> {
    let at = line.find("fn ")?;
    let before = &line[..at];
    let qualifiers = before.split_whitespace().all(|w| {
        matches!(
            w,
            "pub" | "pub(crate)" | "async" | "unsafe" | "const" | "extern"
        )
    });
    if !qualifiers {
        return None;
    }
    let rest = &line[at + 3..];
    let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
    (end > 0).then_some(&rest[..end])
}

/// The names of every test function of `src` at any depth (`#[test]` followed by a `fn` within
/// a few lines), for a file that is not built; tests made by macros are not seen.
pub fn declared_tests(src: &str) -> Vec<String> {
    let lines: Vec<&str> = src.lines().collect();
    let mut names = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != "#[test]" {
            continue;
        }
        let name = lines[i + 1..]
            .iter()
            .take(12)
            .find_map(|l| fn_name(l.trim_start()));
        if let Some(n) = name {
            names.push(n.to_owned());
        }
    }
    names
}

/// A test taken out of a file: its name and the plumbing names its code uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// The test's name.
    pub name: String,
    /// The [`PLUMBING`] names in its code.
    pub uses: Vec<&'static str>,
}

/// A file after [`remove_plumbing_tests`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    /// The file without the removed tests (each replaced by a one-line comment).
    pub text: String,
    /// The removed tests.
    pub removed: Vec<Removed>,
    /// The plumbing names the code still uses outside the removed tests: when there are any,
    /// the file cannot be built against asat.
    pub left: Vec<&'static str>,
}

/// `src` without its top-level tests whose code uses rayon's plumbing ([`PLUMBING`]).
pub fn remove_plumbing_tests(src: &str) -> Stripped {
    let (text, removed) = remove_tests(src, |_, lines| {
        let uses = plumbing_names(&code_only(lines));
        let why = format!("it uses rayon's plumbing: {}", uses.join(", "));
        (!uses.is_empty()).then_some((uses, why))
    });
    let removed = removed
        .into_iter()
        .map(|(name, uses)| Removed { name, uses })
        .collect();
    let left = plumbing_names(&code_only(&text));
    Stripped {
        text,
        removed,
        left,
    }
}

/// `src` without the top-level tests that `why` (given each test and its lines) returns a
/// value and a reason for, each replaced by a comment line with the reason; and the removed
/// tests' names with the values.
pub fn remove_tests<T>(
    src: &str,
    mut why: impl FnMut(&TestItem, &str) -> Option<(T, String)>,
) -> (String, Vec<(String, T)>) {
    let lines: Vec<&str> = src.lines().collect();
    let mut removed = Vec::new();
    let mut kept: Vec<String> = Vec::new();
    let mut next = 0;
    for t in top_level_tests(src) {
        let Some((value, reason)) = why(&t, &lines[t.lines.clone()].join("\n")) else {
            continue;
        };
        kept.extend(lines[next..t.lines.start].iter().map(|l| l.to_string()));
        kept.push(format!(
            "// rayon_tests: test `{}` removed ({reason})",
            t.name
        ));
        next = t.lines.end;
        removed.push((t.name, value));
    }
    kept.extend(lines[next..].iter().map(|l| l.to_string()));
    (kept.join("\n") + "\n", removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up test file: a helper, a plain test, a test using plumbing traits, a comment
    /// and a string naming them, and a test with a multi-line attribute.
    const SRC: &str = r#"use some::prelude::*;

// A comment about Producer and Consumer does not count.
fn helper(x: &str) -> usize {
    x.len()
}

/// A plain test.
#[test]
fn plain() {
    let s = "Consumer in a string"; // and with_producer in a comment
    assert_eq!(helper(s), 20);
}

#[test]
#[should_panic(expected = "boom")]
fn uses_plumbing() {
    struct P;
    impl ProducerCallback<i32> for P {
        type Output = ();
    }
    /* Folder in a block comment */
    v.par_iter().with_producer(P);
}

#[test]
#[cfg_attr(
    any(target_os = "emscripten"),
    ignore
)]
fn multi_line_attr() {
    let c = '"';
    let l: &'static str = "x";
}

#[test]
fn empty() {}
"#;

    #[test]
    fn comments_and_literals_are_blanked() {
        let code = code_only(SRC);
        assert_eq!(code.lines().count(), SRC.lines().count());
        assert!(!code.contains("comment"), "{code}");
        assert!(!code.contains("string"), "{code}");
        assert!(code.contains("let c = ' ';"), "{code}");
        assert!(code.contains("let l: &'static str = \" \";"), "{code}");
        assert!(code.contains("impl ProducerCallback<i32>"));
        let raw = format!("r#\"{}\"# x", " ".repeat("a \"b\" c".len()));
        assert_eq!(code_only("r#\"a \"b\" c\"# x"), raw);
    }

    #[test]
    fn tests_are_found_with_their_attributes() {
        let tests = top_level_tests(SRC);
        let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["plain", "uses_plumbing", "multi_line_attr", "empty"]
        );
        // `plain` starts at its doc comment and ends at its closing brace.
        assert_eq!(tests[0].lines, 7..13);
        assert_eq!(tests[3].lines.len(), 2);
        assert_eq!(declared_tests(SRC), names);
    }

    #[test]
    fn plumbing_tests_are_removed_and_comments_do_not_count() {
        let s = remove_plumbing_tests(SRC);
        assert_eq!(
            s.removed,
            [Removed {
                name: "uses_plumbing".into(),
                uses: vec!["ProducerCallback", "with_producer"],
            }]
        );
        assert!(s.left.is_empty(), "{:?}", s.left);
        assert!(!s.text.contains("fn uses_plumbing") && !s.text.contains("Folder"));
        assert!(s.text.contains("fn plain()") && s.text.contains("fn multi_line_attr()"));
        assert!(s.text.contains("// A comment about Producer"));
        assert!(s
            .text
            .contains("// rayon_tests: test `uses_plumbing` removed"));
    }

    #[test]
    fn plumbing_outside_tests_is_left_over() {
        let src =
            "use x::plumbing::*;\n\nfn split<P: Producer>(p: P) {}\n\n#[test]\nfn t() {\n    \
                   split(v);\n}\n";
        let s = remove_plumbing_tests(src);
        assert!(s.removed.is_empty());
        assert_eq!(s.left, ["Producer"]);
        assert_eq!(s.text, src);
    }
}
