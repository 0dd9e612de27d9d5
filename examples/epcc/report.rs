//! The harness's outputs: `epcc.csv` (`construct,impl,overhead_us,stddev_us`) and the
//! side-by-side table of asat's and libgomp's overheads with their ratio.

use std::fmt::Write as _;
use std::path::Path;

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
    std::fs::write(path, csv(rows)).map_err(|e| format!("{}: {e}", path.display()))
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
