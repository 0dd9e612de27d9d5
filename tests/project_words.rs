//! The repository speaks of the project, never of how it is made: no text file (code, docs,
//! data, scripts; not `target/` nor hidden folders) names a numbered work session, an issue by
//! number, or the periods of the project's making.

use std::fs;
use std::path::Path;

/// Where `text` names a session or an issue by number, or a period of the project's making:
/// the words found, one per line they are on.
fn made_of(text: &str) -> Vec<(usize, String)> {
    let period = format!("{} {}", "work", "period");
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.to_ascii_lowercase();
        let numbered = ["session", "sessions", "issue", "issues"].iter().find(|w| {
            line.match_indices(&format!("{w} ")).any(|(i, m)| {
                let rest = line[i + m.len()..].trim_start_matches('#');
                let before = line[..i].chars().next_back();
                rest.starts_with(|c: char| c.is_ascii_digit())
                    && !before.is_some_and(|c| c.is_ascii_alphanumeric())
            })
        });
        if let Some(w) = numbered {
            found.push((n + 1, w.to_string()));
        } else if line.contains(&period) {
            found.push((n + 1, period.clone()));
        }
    }
    found
}

fn scan(dir: &Path, bad: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            scan(&path, bad);
        } else if let Ok(text) = fs::read_to_string(&path) {
            for (line, word) in made_of(&text) {
                bad.push(format!("{}:{line}: {word}", path.display()));
            }
        }
    }
}

#[test]
fn no_file_names_numbered_sessions_or_issues() {
    let mut bad = Vec::new();
    scan(Path::new(env!("CARGO_MANIFEST_DIR")), &mut bad);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_scan_finds_numbered_sessions_and_issues_only() {
    let found = |t: &str| made_of(t).len();
    assert_eq!(found(&format!("as measured in {} 12", "Session")), 1);
    assert_eq!(found(&format!("see {} #48", "issue")), 1);
    assert_eq!(found(&format!("a {} {}", "work", "period")), 1);
    assert_eq!(
        found("a session of 12 regions; tissue 3; the issue is 2-fold"),
        0
    );
}
