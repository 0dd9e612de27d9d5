//! What the harness reports: a table of every test's outcome and verdict with counts per file
//! and in total (stdout and `rayon_tests.txt`), and `rayon_tests.csv`
//! (`file,test,outcome,known,detail`: `known` is the verdict column of the table, empty for an
//! expected outcome; `detail` the panic message, compile error or reason).

use std::fmt::Write as _;
use std::path::Path;

use asat_lab::files;

use crate::known::{Known, Verdict};
use crate::run::Outcome;

/// One test's row.
#[derive(Debug, Clone)]
pub struct Row {
    /// The copied file's stem.
    pub file: String,
    /// The test's name.
    pub test: String,
    /// Its outcome.
    pub outcome: Outcome,
    /// What the outcome means.
    pub verdict: Verdict,
}

/// The count columns: the outcomes, then the verdicts.
const COLUMNS: [&str; 9] = [
    "passed",
    "failed",
    "timed out",
    "not compiled",
    "not applicable",
    "ignored",
    "known",
    "now passes",
    "unexpected",
];

/// The counts of `rows` in [`COLUMNS`]' order.
fn counts<'a>(rows: impl Iterator<Item = &'a Row>) -> [usize; 9] {
    let mut c = [0; 9];
    for r in rows {
        let k = COLUMNS[..6]
            .iter()
            .position(|&n| n == r.outcome.name())
            .expect("every outcome has a column");
        c[k] += 1;
        match r.verdict {
            Verdict::Known(_) => c[6] += 1,
            Verdict::NowPasses(_) => c[7] += 1,
            Verdict::Unexpected(_) => c[8] += 1,
            Verdict::Expected => {}
        }
    }
    c
}

/// The report: one line per test (file, test, outcome, verdict and detail), then the counts
/// per file and in total, then the known differences that matched no test.
pub fn table(rows: &[Row], unmatched: &[&Known]) -> String {
    let fw = rows.iter().map(|r| r.file.len()).max().unwrap_or(4).max(5);
    let tw = rows.iter().map(|r| r.test.len()).max().unwrap_or(4).max(4);
    let mut s = format!(
        "{:fw$}  {:tw$}  {:14}  known difference / UNEXPECTED [detail]\n",
        "file", "test", "outcome"
    );
    for r in rows {
        let verdict = r.verdict.text();
        let detail = r.outcome.detail();
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!("[{detail}]")
        };
        let note = [verdict.as_str(), detail.as_str()]
            .iter()
            .filter(|t| !t.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        let line = format!(
            "{:fw$}  {:tw$}  {:14}  {note}",
            r.file,
            r.test,
            r.outcome.name()
        );
        s += line.trim_end();
        s.push('\n');
    }
    s += "\n";
    let _ = write!(s, "{:fw$}", "counts");
    for c in COLUMNS {
        let _ = write!(s, "  {c}");
    }
    s.push('\n');
    let mut files: Vec<&str> = rows.iter().map(|r| r.file.as_str()).collect();
    files.dedup();
    for f in files {
        count_line(&mut s, f, fw, counts(rows.iter().filter(|r| r.file == f)));
    }
    count_line(&mut s, "total", fw, counts(rows.iter()));
    if !unmatched.is_empty() {
        s += "\nknown differences that matched no test (names changed?):\n";
        for k in unmatched {
            let _ = writeln!(s, "  {} / {}: {}", k.file, k.test, k.reason);
        }
    }
    s
}

/// One line of counts under the [`COLUMNS`] headers.
fn count_line(s: &mut String, name: &str, fw: usize, c: [usize; 9]) {
    let _ = write!(s, "{name:fw$}");
    for (n, col) in c.iter().zip(COLUMNS) {
        let _ = write!(s, "  {n:>w$}", w = col.len());
    }
    s.push('\n');
}

/// The CSV text of `rows`.
pub fn csv(rows: &[Row]) -> String {
    let mut s = String::from("file,test,outcome,known,detail\n");
    for r in rows {
        let fields = [
            r.file.clone(),
            r.test.clone(),
            r.outcome.name().to_owned(),
            r.verdict.text(),
            r.outcome.detail(),
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        s += &line.join(",");
        s.push('\n');
    }
    s
}

/// `f` quoted for CSV when it holds a comma, a quote or a line break.
fn csv_field(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_owned()
    }
}

/// Writes the table to `<out>/rayon_tests.txt` and the rows to `<out>/rayon_tests.csv`.
pub fn write(out: &Path, table: &str, rows: &[Row]) -> Result<(), String> {
    files::create_dir(out)?;
    for (name, text) in [
        ("rayon_tests.txt", table.to_owned()),
        ("rayon_tests.csv", csv(rows)),
    ] {
        let path = out.join(name);
        files::write(&path, text)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(file: &str, test: &str, outcome: Outcome, verdict: Verdict) -> Row {
        Row {
            file: file.into(),
            test: test.into(),
            outcome,
            verdict,
        }
    }

    #[test]
    fn table_and_csv() {
        let rows = [
            row("a", "t1", Outcome::Passed, Verdict::Expected),
            row(
                "a",
                "t2",
                Outcome::Failed("x, \"y\"".into()),
                Verdict::Unexpected(None),
            ),
            row("b", "t3", Outcome::TimedOut(10.0), Verdict::Known("slow")),
        ];
        let t = table(&rows, &[]);
        assert!(t.contains("a      t1    passed\n"), "{t}");
        assert!(
            t.contains("a      t2    failed          UNEXPECTED [x, \"y\"]\n"),
            "{t}"
        );
        assert!(
            t.contains("b      t3    timed out       slow [killed after 10 s]\n"),
            "{t}"
        );
        assert!(t.contains("\ntotal       1       1          1"), "{t}");
        let c = csv(&rows);
        assert!(
            c.contains("\na,t2,failed,UNEXPECTED,\"x, \"\"y\"\"\"\n"),
            "{c}"
        );
    }
}
