//! The harness's outputs: `epcc.csv` (`construct,impl,overhead_us,stddev_us`) and the
//! side-by-side table of asat's and libgomp's overheads with their ratio.

use std::fmt::Write as _;
use std::path::Path;

use asat_lab::files;
use asat_peers::stats::median;

/// One construct of one implementation.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `PARALLEL`, `FOR`, ..., `STATIC_<c>`, `DYNAMIC_<c>`, `GUIDED_<c>`.
    pub construct: String,
    /// `asat` or `gomp`.
    pub imp: &'static str,
    /// Mean overhead, microseconds.
    pub overhead_us: f64,
    /// Standard deviation of the test's times, microseconds.
    pub stddev_us: f64,
    /// The test's outliers (shown in the table, not in the CSV).
    pub outliers: usize,
}

/// The CSV text of `rows`.
pub fn csv(rows: &[Row]) -> String {
    let mut s = String::from("construct,impl,overhead_us,stddev_us\n");
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{:.6},{:.6}",
            r.construct, r.imp, r.overhead_us, r.stddev_us
        );
    }
    s
}

/// Writes [`csv`] of `rows` to `path`.
pub fn write_csv(path: &Path, rows: &[Row]) -> Result<(), String> {
    files::write(path, csv(rows))
}

/// Per construct and implementation (in the order of the first round that has them), the
/// median over `rounds` of the overhead and, separately, of the standard deviation (the mean
/// of the middle two for an even count); outliers: the most any round had.
pub fn median_rows(rounds: &[Vec<Row>]) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::new();
    for r in rounds.iter().flatten() {
        if out
            .iter()
            .any(|o| o.construct == r.construct && o.imp == r.imp)
        {
            continue;
        }
        let same: Vec<&Row> = rounds
            .iter()
            .flatten()
            .filter(|o| o.construct == r.construct && o.imp == r.imp)
            .collect();
        out.push(Row {
            construct: r.construct.clone(),
            imp: r.imp,
            overhead_us: median(same.iter().map(|o| o.overhead_us).collect()),
            stddev_us: median(same.iter().map(|o| o.stddev_us).collect()),
            outliers: same.iter().map(|o| o.outliers).max().unwrap_or(0),
        });
    }
    out
}

/// The CSV text of every round's rows (`round,construct,impl,overhead_us,stddev_us`, rounds
/// counted from 1).
pub fn rounds_csv(rounds: &[Vec<Row>]) -> String {
    let mut s = String::from("round,construct,impl,overhead_us,stddev_us\n");
    for (k, rows) in rounds.iter().enumerate() {
        for r in rows {
            let _ = writeln!(
                s,
                "{},{},{},{:.6},{:.6}",
                k + 1,
                r.construct,
                r.imp,
                r.overhead_us,
                r.stddev_us
            );
        }
    }
    s
}

/// asat's overhead over libgomp's, when libgomp's is above 0 (a ratio to an overhead at or
/// below the noise floor means nothing).
pub fn ratio(asat_us: f64, gomp_us: f64) -> Option<f64> {
    (gomp_us > 0.0).then(|| asat_us / gomp_us)
}

/// The table: one line per construct (in the order of `rows`), asat's and libgomp's overhead,
/// standard deviation and outliers, and their ratio.
pub fn table(rows: &[Row]) -> String {
    let mut constructs: Vec<&str> = Vec::new();
    for r in rows {
        if !constructs.contains(&r.construct.as_str()) {
            constructs.push(&r.construct);
        }
    }
    let find = |c: &str, imp: &str| rows.iter().find(|r| r.construct == c && r.imp == imp);
    let cell = |r: Option<&Row>| {
        r.map_or(format!("{:>30}", "-"), |r| {
            format!(
                "{:>11.4} {:>11.4} {:>6}",
                r.overhead_us, r.stddev_us, r.outliers
            )
        })
    };
    let mut s = format!(
        "{:<14} {:>11} {:>11} {:>6} {:>11} {:>11} {:>6} {:>10}\n",
        "construct", "asat_us", "asat_sd", "out", "gomp_us", "gomp_sd", "out", "asat/gomp"
    );
    for c in constructs {
        let (a, g) = (find(c, "asat"), find(c, "gomp"));
        let q = match (a, g) {
            (Some(a), Some(g)) => {
                ratio(a.overhead_us, g.overhead_us).map_or("n/a".to_owned(), |q| format!("{q:.2}"))
            }
            _ => "-".to_owned(),
        };
        let _ = writeln!(s, "{c:<14} {} {} {q:>10}", cell(a), cell(g));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(construct: &str, imp: &'static str, overhead_us: f64) -> Row {
        Row {
            construct: construct.into(),
            imp,
            overhead_us,
            stddev_us: 0.125,
            outliers: 1,
        }
    }

    #[test]
    fn csv_has_the_four_columns() {
        let text = csv(&[row("PARALLEL_FOR", "asat", 0.5)]);
        assert_eq!(
            text,
            "construct,impl,overhead_us,stddev_us\nPARALLEL_FOR,asat,0.500000,0.125000\n"
        );
    }

    #[test]
    fn rounds_give_medians_per_construct_and_implementation() {
        let round = |a: f64, g: f64, b: f64| {
            vec![
                row("PARALLEL", "asat", a),
                row("PARALLEL", "gomp", g),
                row("BARRIER", "asat", b),
            ]
        };
        // one slow round of asat's PARALLEL (0.9) and of gomp's (2.0) moves neither median
        let rounds = [
            round(0.25, 0.6, 0.08),
            round(0.9, 0.62, 0.07),
            round(0.27, 2.0, 0.09),
        ];
        let m = median_rows(&rounds);
        let got: Vec<(&str, &str, f64)> = m
            .iter()
            .map(|r| (r.construct.as_str(), r.imp, r.overhead_us))
            .collect();
        assert_eq!(
            got,
            [
                ("PARALLEL", "asat", 0.27),
                ("PARALLEL", "gomp", 0.62),
                ("BARRIER", "asat", 0.08)
            ]
        );
        assert_eq!(m[0].stddev_us, 0.125);
        // an even count takes the mean of the middle two; one round is itself
        let m = median_rows(&rounds[..2]);
        assert!((m[0].overhead_us - 0.575).abs() < 1e-12, "{m:?}");
        assert_eq!(median_rows(&rounds[..1]), rounds[0]);
        let text = rounds_csv(&rounds[..1]);
        assert_eq!(
            text.lines().nth(1),
            Some("1,PARALLEL,asat,0.250000,0.125000")
        );
        assert_eq!(text.lines().count(), 4);
    }

    #[test]
    fn table_pairs_implementations_and_guards_the_ratio() {
        let rows = [
            row("PARALLEL", "asat", 0.5),
            row("PARALLEL", "gomp", 1.0),
            row("DYNAMIC_1", "asat", 2.0),
            row("DYNAMIC_1", "gomp", -0.3),
            row("GUIDED_1", "gomp", 1.0),
        ];
        let t = table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(
            lines[1].starts_with("PARALLEL") && lines[1].ends_with("0.50"),
            "{t}"
        );
        assert!(lines[2].ends_with("n/a"), "{t}");
        assert!(lines[3].ends_with(" -"), "{t}");
        assert_eq!(ratio(1.0, 0.0), None);
    }
}
