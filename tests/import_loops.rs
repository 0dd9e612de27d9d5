//! No import loops between files (STYLE.md, Layout): within each crate of the workspace, no
//! file names items of a module whose file, directly or through other files, names items of
//! the first.
//!
//! What counts: a path that starts at `crate::` or `super::`, in a `use` or anywhere in the
//! code (`use crate::a::{b::C, d}` names `a::b` and `a`). The module a path names is the
//! deepest one along it that has a file of its own: `a.rs` or `a/mod.rs` is module `a`,
//! `crate::a::b::Item` is `a::b` where `a/b.rs` or `a/b/mod.rs` exists and `a` otherwise, and
//! an item at the crate's root is `lib.rs`. An item that a module re-exports (`pub use
//! a::Item`, `pub(crate) use`) is named where it comes from: `crate::Item`, re-exported at the
//! root from `a.rs`, names `a`. A module's unit tests (`mod tests`, inline or in files under
//! its `tests/` folder) are part of the module. Paths without `crate::` or `super::` (`use
//! child::Item` in a `mod.rs`) are not counted, but for following re-exports; nor are
//! comments, string literals and `$crate` in a macro.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// Loops that are still there, by crate folder and the modules they join. An entry must match
/// a loop exactly: the test fails on a loop missing from this list, and on an entry whose loop
/// is gone or has changed (take it off, or correct it, with the change that does it).
const KNOWN: &[(&str, &[&str])] = &[];

/// A module's path inside its crate; empty for the crate's root.
type Module = Vec<String>;

/// The modules of one crate, and where each first names another: `edges[a][b]` is the file
/// and line where module `a` first names module `b`.
#[derive(Debug, Default)]
struct Graph {
    modules: BTreeSet<Module>,
    edges: BTreeMap<Module, BTreeMap<Module, (PathBuf, usize)>>,
}

/// The module a file under `src/` holds: `lib.rs` or `main.rs` is the root, `a/mod.rs` and
/// `a.rs` are `a`, `a/b.rs` is `a::b`.
fn module_of(rel: &Path) -> Module {
    let mut parts: Module = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap_or_default();
    match file.strip_suffix(".rs") {
        Some("mod") => {}
        Some("lib" | "main") if parts.is_empty() => {}
        Some(stem) => parts.push(stem.to_owned()),
        None => parts.push(file),
    }
    parts
}

/// The module that `m` is part of: a module's `tests`, and anything inside them, are the
/// module itself.
fn owner(m: &[String]) -> Module {
    let end = m.iter().position(|s| s == "tests").unwrap_or(m.len());
    m[..end].to_vec()
}

/// `src` with its comments and its string and character literals blanked (line breaks kept,
/// so that lines still count).
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let word = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        let start = i;
        if at(i) == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if at(i) == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(open) = raw_string_start(&c, i).filter(|_| i == 0 || !word(c[i - 1])) {
            // r"..", r#".."#, br"..": ends at a quote followed by as many hashes.
            let hashes = open - i - 1 - usize::from(c[i] == 'b');
            i = open + 1;
            while i < c.len() && !(c[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#')) {
                i += 1;
            }
            i += 1 + hashes;
        } else if at(i) == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if at(i) == '\'' && at(i + 1) == '\\' {
            // '\n', '\'', '\u{7f}'
            i += 3;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if at(i) == '\'' && at(i + 2) == '\'' {
            i += 3;
        } else {
            // Code, a lifetime's quote included.
            out.push(c[i]);
            i += 1;
            continue;
        }
        let end = i.min(c.len());
        out.extend(
            c[start..end]
                .iter()
                .map(|&ch| if ch == '\n' { '\n' } else { ' ' }),
        );
        i = end;
    }
    out
}

/// Where a raw string that starts at `i` has its opening quote.
fn raw_string_start(c: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if c.get(j) == Some(&'b') {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    while c.get(j) == Some(&'#') {
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some(j)
}

/// A token of code, with its line.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    PathSep,
    Punct(char),
}

fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        if c[i] == '\n' {
            line += 1;
            i += 1;
        } else if c[i].is_whitespace() {
            i += 1;
        } else if c[i].is_alphanumeric() || c[i] == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push((Tok::Word(c[start..i].iter().collect()), line));
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c[i]), line));
            i += 1;
        }
    }
    out
}

/// Reads the path, or `use` tree, that starts at `toks[i]`, and pushes each full path it
/// names (its segments, from `prefix` on) onto `out`. Returns the index after it.
fn read_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    while let Some(Tok::Word(w)) = toks.get(i).map(|t| &t.0) {
        // `self` in a group (`a::{self, B}`) names the group's module.
        if w != "self" {
            prefix.push(w.clone());
        }
        i += 1;
        if toks.get(i).map(|t| &t.0) != Some(&Tok::PathSep) {
            out.push(prefix);
            return i;
        }
        i += 1;
    }
    if toks.get(i).map(|t| &t.0) != Some(&Tok::Punct('{')) {
        // `a::*`, `a::<T>`: the path so far.
        out.push(prefix);
        return i;
    }
    i += 1;
    while let Some((t, _)) = toks.get(i) {
        match t {
            Tok::Punct('}') => return i + 1,
            Tok::Punct(',') => i += 1,
            Tok::Word(w) if w == "as" => i += 2,
            _ => i = read_tree(toks, i, prefix.clone(), out).max(i + 1),
        }
    }
    i
}

/// The modules that the code of a file (which holds `module`) names from `crate::` or
/// `super::`, as paths resolved from the crate's root, each with its line.
fn named_paths(src: &str, module: &[String]) -> Vec<(Module, usize)> {
    let toks = tokens(&code_only(src));
    let kind = |i: usize| toks.get(i).map(|t| &t.0);
    let mut found = Vec::new();
    // The inline modules (`mod name { .. }`) around the current token, with the depth of the
    // brace each opened.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut opening: Option<String> = None;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct('{') => {
                depth += 1;
                if let Some(name) = opening.take() {
                    inline.push((name, depth));
                }
            }
            Tok::Punct('}') => {
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Word(w) if w == "mod" => {
                if let (Some(Tok::Word(name)), Some(Tok::Punct('{'))) = (kind(i + 1), kind(i + 2)) {
                    opening = Some(name.clone());
                }
            }
            Tok::Word(w)
                if (w == "crate" || w == "super")
                    && kind(i + 1) == Some(&Tok::PathSep)
                    && !matches!(i.checked_sub(1).and_then(kind), Some(Tok::Punct('$')))
                    && !matches!(i.checked_sub(1).and_then(kind), Some(Tok::Word(v)) if v == "in") =>
            {
                let line = toks[i].1;
                let here: Module = module
                    .iter()
                    .cloned()
                    .chain(inline.iter().map(|(name, _)| name.clone()))
                    .collect();
                let mut paths = Vec::new();
                let next = read_tree(&toks, i, Vec::new(), &mut paths);
                for path in paths {
                    let mut m = here.clone();
                    for segment in path {
                        match segment.as_str() {
                            "crate" => m.clear(),
                            "super" => {
                                m.pop();
                            }
                            _ => m.push(segment),
                        }
                    }
                    found.push((m, line));
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// What each module re-exports: (module, item name) to the path the item comes from,
/// resolved from the crate's root. A path that starts outside the crate (another crate's
/// items) is left out.
fn reexports(
    files: &[(PathBuf, PathBuf, String)],
    with_files: &BTreeSet<Module>,
) -> BTreeMap<(Module, String), Module> {
    let mut out = BTreeMap::new();
    for (rel, _, src) in files {
        let me = module_of(rel);
        let toks = tokens(&code_only(src));
        for i in 0..toks.len() {
            if toks[i].0 != Tok::Word("use".into()) || !is_pub_use(&toks, i) {
                continue;
            }
            let mut paths = Vec::new();
            read_tree(&toks, i + 1, Vec::new(), &mut paths);
            for path in paths {
                let Some((item, along)) = path.split_last() else {
                    continue;
                };
                let mut m = me.clone();
                for (k, segment) in along.iter().enumerate() {
                    match segment.as_str() {
                        "crate" if k == 0 => m.clear(),
                        "super" => {
                            m.pop();
                        }
                        "self" if k == 0 => {}
                        _ => m.push(segment.clone()),
                    }
                }
                let inside = along.first().is_none_or(|f| {
                    matches!(f.as_str(), "crate" | "super" | "self") || {
                        let mut child = me.clone();
                        child.push(f.clone());
                        with_files.contains(&child)
                    }
                });
                if inside {
                    out.insert((me.clone(), item.clone()), m);
                }
            }
        }
    }
    out
}

/// Whether the `use` at `toks[i]` is a `pub` one (`pub use`, `pub(crate) use`, ...).
fn is_pub_use(toks: &[(Tok, usize)], i: usize) -> bool {
    let word = |k: usize| match toks.get(k).map(|t| &t.0) {
        Some(Tok::Word(w)) => Some(w.as_str()),
        _ => None,
    };
    match i.checked_sub(1).map(|k| &toks[k].0) {
        Some(Tok::Word(w)) => w == "pub",
        Some(Tok::Punct(')')) => (2..=5).any(|back| i >= back && word(i - back) == Some("pub")),
        _ => false,
    }
}

/// The module that `path` (resolved from the crate's root) names: the deepest one along it
/// with a file of its own, or where an item it names there was re-exported from.
fn target(
    path: &[String],
    with_files: &BTreeSet<Module>,
    reexported: &BTreeMap<(Module, String), Module>,
) -> Option<Module> {
    let mut path = path.to_vec();
    // A re-export of a re-export is followed too, a few times at most.
    for _ in 0..8 {
        let k = (0..=path.len())
            .rev()
            .find(|&k| with_files.contains(&path[..k]))?;
        let next = path
            .get(k)
            .and_then(|item| reexported.get(&(path[..k].to_vec(), item.clone())));
        match next {
            Some(from) if *from != path[..k] => {
                let mut p = from.clone();
                p.extend(path[k..].iter().cloned());
                path = p;
            }
            _ => return Some(path[..k].to_vec()),
        }
    }
    None
}

/// The graph of one crate, from its files: each one's path under `src/`, the path to show for
/// it, and its text.
fn graph(files: &[(PathBuf, PathBuf, String)]) -> Graph {
    let with_files: BTreeSet<Module> = files.iter().map(|(rel, ..)| module_of(rel)).collect();
    let reexported = reexports(files, &with_files);
    let mut g = Graph {
        modules: with_files.iter().map(|m| owner(m)).collect(),
        ..Graph::default()
    };
    for (rel, shown, src) in files {
        let me = module_of(rel);
        let from = owner(&me);
        for (path, line) in named_paths(src, &me) {
            let Some(to) = target(&path, &with_files, &reexported).map(|m| owner(&m)) else {
                continue;
            };
            if to != from {
                g.edges
                    .entry(from.clone())
                    .or_default()
                    .entry(to)
                    .or_insert_with(|| (shown.clone(), line));
            }
        }
    }
    g
}

/// Every module `from` leads to, each with the module it was first reached from (breadth
/// first, so the way back from any of them is a shortest one).
fn reach(g: &Graph, from: &Module) -> BTreeMap<Module, Module> {
    let mut came: BTreeMap<Module, Module> = BTreeMap::new();
    let mut queue = VecDeque::from([from.clone()]);
    while let Some(m) = queue.pop_front() {
        for next in g.edges.get(&m).into_iter().flat_map(BTreeMap::keys) {
            if !came.contains_key(next) {
                came.insert(next.clone(), m.clone());
                queue.push_back(next.clone());
            }
        }
    }
    came
}

/// Each group of modules that lead to each other (two or more), with a shortest loop through
/// its first module (that module again at the end).
fn loops(g: &Graph) -> Vec<(BTreeSet<Module>, Vec<Module>)> {
    let mut done: BTreeSet<Module> = BTreeSet::new();
    let mut found = Vec::new();
    for m in &g.modules {
        if done.contains(m) {
            continue;
        }
        let came = reach(g, m);
        if !came.contains_key(m) {
            continue;
        }
        let group: BTreeSet<Module> = came
            .keys()
            .filter(|other| reach(g, other).contains_key(m))
            .cloned()
            .collect();
        let mut cycle = vec![m.clone()];
        let mut at = came[m].clone();
        while &at != m {
            cycle.push(at.clone());
            at = came[&at].clone();
        }
        cycle.push(m.clone());
        cycle.reverse();
        done.extend(group.iter().cloned());
        found.push((group, cycle));
    }
    found
}

fn name(m: &[String]) -> String {
    if m.is_empty() {
        "crate".to_owned()
    } else {
        m.join("::")
    }
}

/// A loop, module by module, with the file and line where each names the next.
fn describe(g: &Graph, cycle: &[Module]) -> String {
    let mut s = cycle
        .iter()
        .map(|m| name(m))
        .collect::<Vec<_>>()
        .join(" -> ");
    for step in cycle.windows(2) {
        let (file, line) = &g.edges[&step[0]][&step[1]];
        s += &format!("\n    {}:{line} names {}", file.display(), name(&step[1]));
    }
    s
}

/// The `.rs` files under `dir`, in order.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The workspace's crates, as folders relative to the root: the facade (`.`) and each
/// member under `crates/`.
fn crates(root: &Path) -> Vec<PathBuf> {
    let mut members: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("the crates folder")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.join("src").is_dir())
        .map(|p| p.strip_prefix(root).unwrap().to_path_buf())
        .collect();
    members.sort();
    members.insert(0, PathBuf::from("."));
    members
}

/// The graph of the crate in `dir` (relative to `root`).
fn crate_graph(root: &Path, dir: &Path) -> Graph {
    let src = root.join(dir).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files: Vec<_> = paths
        .iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let rel = p.strip_prefix(&src).unwrap().to_path_buf();
            (rel, p.strip_prefix(root).unwrap().to_path_buf(), text)
        })
        .collect();
    graph(&files)
}

#[test]
fn no_file_imports_form_a_loop() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut errors = Vec::new();
    let mut known_seen = vec![false; KNOWN.len()];
    for dir in crates(root) {
        let g = crate_graph(root, &dir);
        let edges: usize = g.edges.values().map(BTreeMap::len).sum();
        // A crate of several files whose files name none of the others would mean a reader
        // that finds nothing, and a test that cannot fail.
        assert!(
            g.modules.len() < 3 || edges > 0,
            "{}: {} modules and no file names another",
            dir.display(),
            g.modules.len()
        );
        for (group, cycle) in loops(&g) {
            let names: BTreeSet<String> = group.iter().map(|m| name(m)).collect();
            let known = KNOWN.iter().position(|(d, ms)| {
                Path::new(d) == dir
                    && ms.iter().map(|m| m.to_string()).collect::<BTreeSet<_>>() == names
            });
            match known {
                Some(k) => known_seen[k] = true,
                None => errors.push(format!(
                    "{}: an import loop joins {}:\n  {}",
                    dir.display(),
                    names.into_iter().collect::<Vec<_>>().join(", "),
                    describe(&g, &cycle)
                )),
            }
        }
    }
    for ((dir, modules), seen) in KNOWN.iter().zip(known_seen) {
        if !seen {
            errors.push(format!(
                "{dir}: no loop joins exactly {} any more: take it off (or correct it in) KNOWN",
                modules.join(", ")
            ));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// A crate made up on the spot: (path under `src/`, text).
fn made_up(files: &[(&str, &str)]) -> Graph {
    let files: Vec<_> = files
        .iter()
        .map(|(p, t)| {
            (
                PathBuf::from(p),
                PathBuf::from("src").join(p),
                t.to_string(),
            )
        })
        .collect();
    graph(&files)
}

fn loop_names(g: &Graph) -> Vec<Vec<String>> {
    loops(g)
        .into_iter()
        .map(|(group, _)| group.iter().map(|m| name(m)).collect())
        .collect()
}

#[test]
fn a_loop_through_re_exports_is_found() {
    let g = made_up(&[
        (
            "lib.rs",
            "mod a;\nmod b;\nmod c;\npub use a::A;\npub(crate) use b::B;\npub use c::*;\n",
        ),
        // `a` names `b` through the root's re-export, `b` names `a` the same way; `c`'s
        // re-export of another crate's item and its glob lead nowhere.
        ("a.rs", "pub struct A(crate::B);\n"),
        ("b.rs", "pub struct B;\nfn f(_: crate::A) {}\n"),
        (
            "c.rs",
            "pub use std::fmt::Debug;\npub fn g(_: crate::Debug) {}\n",
        ),
    ]);
    assert_eq!(loop_names(&g), vec![vec!["a", "b"]]);
    // A module that re-exports its own child: the child is named.
    let g = made_up(&[
        ("lib.rs", "mod d;\nmod e;\n"),
        ("d/mod.rs", "mod inner;\npub(crate) use inner::I;\n"),
        ("d/inner.rs", "pub struct I;\nfn f(_: crate::e::E) {}\n"),
        ("e.rs", "pub struct E;\nfn f(_: crate::d::I) {}\n"),
    ]);
    assert_eq!(loop_names(&g), vec![vec!["d::inner", "e"]]);
}

#[test]
fn a_loop_through_use_paths_and_super_is_found() {
    let g = made_up(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\npub use a::A;\n"),
        // `a` names `b` and `c`; `b` names `c::deep`, which names `a`; `c` names nothing.
        ("a.rs", "use crate::{b::B as Bee, c};\npub struct A;\n"),
        (
            "b.rs",
            "pub struct B;\nfn f() {\n    let _ = super::c::deep::D::new();\n}\n",
        ),
        ("c/mod.rs", "mod deep;\npub struct C;\n"),
        ("c/deep.rs", "use crate::a::A as Renamed;\npub struct D;\n"),
    ]);
    assert_eq!(loop_names(&g), vec![vec!["a", "b", "c::deep"]]);
    let (_, cycle) = &loops(&g)[0];
    assert_eq!(
        describe(&g, cycle),
        "a -> b -> c::deep -> a\n    src/a.rs:1 names b\n    src/b.rs:3 names c::deep\n    \
         src/c/deep.rs:1 names a"
    );
}

#[test]
fn tests_comments_strings_and_macros_make_no_loop() {
    let g = made_up(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a/mod.rs",
            "#[cfg(test)]\nmod tests;\npub(crate) fn f() {}\npub(in crate::a) struct S;\n",
        ),
        ("a/tests.rs", "use super::*;\nuse crate::b::g;\n"),
        (
            "b.rs",
            "// crate::a::f\n/* crate::a::f /* nested */ crate::a::f */\n\
             pub fn g() { let _ = \"crate::a::f\"; let _ = r#\"crate::a::f\"#; let _ = '\"'; }\n\
             macro_rules! m { () => { $crate::a::f() }; }\n\
             #[cfg(test)]\nmod tests { use super::*; fn t<'a>(_: &'a str) { super::g(); } }\n",
        ),
    ]);
    assert!(loop_names(&g).is_empty(), "{:?}", g.edges);
    // `a`'s tests name `b`, and `b` names `a`: the tests are part of `a`, so that is a loop.
    let g = made_up(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a/mod.rs", "#[cfg(test)]\nmod tests;\n"),
        ("a/tests.rs", "use crate::b::g;\n"),
        ("b.rs", "pub fn g() { crate::a::f(); }\n"),
    ]);
    assert_eq!(loop_names(&g), vec![vec!["a", "b"]]);
}

#[test]
fn super_in_an_inline_module_starts_from_that_module() {
    let g = made_up(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        // `super` inside `a::inner` is `a` itself: no edge.
        (
            "a.rs",
            "mod inner {\n    use super::super::b::G;\n    use super::X;\n}\npub struct X;\n",
        ),
        (
            "b.rs",
            "pub struct G;\nmod inner { use super::super::a::X; }\n",
        ),
    ]);
    assert_eq!(loop_names(&g), vec![vec!["a", "b"]]);
    assert_eq!(g.edges[&vec!["a".to_owned()]].len(), 1, "{:?}", g.edges);
}
