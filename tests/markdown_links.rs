//! Every relative link in the repository's Markdown files (README.md, BENCHMARKS.md, docs/,
//! the crates' READMEs; not `target/` nor hidden folders) points to a file or folder that
//! exists. `#anchors` and `?queries` are stripped; links with a scheme (`https:`, `mailto:`) are
//! not checked. Links inside fenced code blocks and inline code spans are not links.

use std::fs;
use std::path::{Path, PathBuf};

/// The Markdown files under `dir`, skipping build output and hidden folders.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The targets of the inline links `[text](target)`, images `![alt](target)` and reference
/// definitions `[label]: target` in `text`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let line = without_code_spans(line);
        if let Some(rest) = line.trim_start().strip_prefix('[') {
            if let Some((label, target)) = rest.split_once("]:") {
                if !label.contains(']') {
                    targets.push(first_word(target));
                    continue;
                }
            }
        }
        let mut rest = line.as_str();
        while let Some(start) = rest.find("](") {
            rest = &rest[start + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            targets.push(first_word(&rest[..end]));
            rest = &rest[end..];
        }
    }
    targets.retain(|t| !t.is_empty());
    targets
}

/// `line` with the text between backticks removed.
fn without_code_spans(line: &str) -> String {
    line.split('`').step_by(2).collect()
}

/// The target without a title (`path "title"`) or angle brackets (`<path>`).
fn first_word(target: &str) -> String {
    let target = target.trim();
    let word = match target.strip_prefix('<') {
        Some(bracketed) => bracketed.split('>').next(),
        None => target.split_whitespace().next(),
    };
    word.unwrap_or("").to_string()
}

/// The path part of a relative link, or `None` for a link with a scheme or to an anchor of the
/// same file.
fn relative_path(target: &str) -> Option<&str> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let path = target.split(['#', '?']).next().unwrap_or("");
    (!path.is_empty()).then_some(path)
}

#[test]
fn every_relative_link_in_the_markdown_files_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    markdown_files(root, &mut files);
    let name = |f: &Path| f.strip_prefix(root).unwrap().display().to_string();
    let names: Vec<String> = files.iter().map(|f| name(f)).collect();
    for expected in ["README.md", "BENCHMARKS.md"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not found in {names:?}"
        );
    }

    let mut checked = 0;
    let mut broken = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for target in link_targets(&text) {
            let Some(path) = relative_path(&target) else {
                continue;
            };
            let resolved = match path.strip_prefix('/') {
                Some(from_root) => root.join(from_root),
                None => file.parent().unwrap().join(path),
            };
            checked += 1;
            if !resolved.exists() {
                broken.push(format!("{}: {target}", name(file)));
            }
        }
    }
    assert!(checked > 0, "no relative links found in {names:?}");
    assert!(
        broken.is_empty(),
        "{} broken relative links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_link_scanner_finds_links_and_skips_code_and_urls() {
    let text = "\
See [the guide](docs/guide.md#setup), ![plot](results/a.svg \"Figure 1\") and [<b>](<b c.md>).
[ref]: ../up.md
`[not a link](code.md)` and [web](https://example.org/x.md), [mail](mailto:a@b.c), [top](#top).
```
[in a fence](fence.md)
```
";
    let targets = link_targets(text);
    assert_eq!(
        targets,
        [
            "docs/guide.md#setup",
            "results/a.svg",
            "b c.md",
            "../up.md",
            "https://example.org/x.md",
            "mailto:a@b.c",
            "#top"
        ]
    );
    let paths: Vec<_> = targets.iter().filter_map(|t| relative_path(t)).collect();
    assert_eq!(
        paths,
        ["docs/guide.md", "results/a.svg", "b c.md", "../up.md"]
    );
}
