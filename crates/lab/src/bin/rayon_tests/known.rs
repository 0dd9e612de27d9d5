//! The known differences between asat and rayon that rayon's tests show, each with its
//! reason and the outcome it causes ([`KNOWN`]), and the verdict on each test's outcome: as
//! expected, a known difference, a known difference that now passes, or unexpected.
//!
//! An entry names a copied file's stem and a test (`*`: every test of the file). Its outcome
//! must match: a test listed as failing that now times out, or a file listed as not compiling
//! whose test fails, is unexpected (the reason no longer explains it). A listed test that
//! passes is reported as "known difference now passes", which is not an error: the entry can
//! go. Entries that match no test are reported too.

use crate::run::Outcome;

/// The outcome a known difference causes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// The test fails.
    Fails,
    /// The test runs past its deadline.
    TimesOut,
    /// The file does not compile (no entry needs it today; kept for a gap in asat's API).
    #[cfg_attr(not(test), allow(dead_code))]
    DoesNotCompile,
}

impl Expect {
    fn matches(self, outcome: &Outcome) -> bool {
        matches!(
            (self, outcome),
            (Expect::Fails, Outcome::Failed(_))
                | (Expect::TimesOut, Outcome::TimedOut(_))
                | (Expect::DoesNotCompile, Outcome::NotCompiled(_))
        )
    }

    fn words(self) -> &'static str {
        match self {
            Expect::Fails => "fail",
            Expect::TimesOut => "time out",
            Expect::DoesNotCompile => "not compile",
        }
    }
}

/// A known difference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Known {
    /// The copied file's stem.
    pub file: &'static str,
    /// The test, or `*` for every test of the file.
    pub test: &'static str,
    /// The outcome it causes.
    pub expect: Expect,
    /// Why, in one line.
    pub reason: &'static str,
    /// A shorter deadline for the test (seconds), for one known to run until killed.
    pub timeout_s: Option<f64>,
}

const fn fails(file: &'static str, test: &'static str, reason: &'static str) -> Known {
    Known {
        file,
        test,
        expect: Expect::Fails,
        reason,
        timeout_s: None,
    }
}

const FLAT_SEARCH: &str = "flat_map's inner iterators run sequentially on the thread that made \
                           their item, where rayon splits them: find_last reads the last \
                           item's 10^18 inner items forward, and a fold folds them whole";
const INSTALL_HANDLER: &str = "asat's install runs op on a thread the pool starts itself, not on \
                               one of the spawn handler's: the thread-locals the handler sets \
                               around run() are not set there";

/// A search over a flat_map of huge ranges that runs until killed, with a 10 s deadline.
const fn flat_search(test: &'static str) -> Known {
    Known {
        file: "octillion",
        test,
        expect: Expect::TimesOut,
        reason: FLAT_SEARCH,
        timeout_s: Some(10.0),
    }
}

/// The known differences (see the crate docs for the list with reasons).
pub static KNOWN: [Known; 7] = [
    flat_search("find_last_octillion_flat"),
    flat_search("fold_find_any_octillion_flat"),
    fails(
        "unit_iter",
        "count_repeat_n_clones",
        "repeat_n's clones follow the split: asat's step_by(50) over 100 repeats clones twice, \
         where the test counts the 3 clones of rayon's splits (one for an unused tail)",
    ),
    fails(
        "unit_slice",
        "slice_chunk_by",
        "the predicate is called once more per range boundary than rayon's len - 1",
    ),
    fails(
        "core_double_init_fail",
        "double_init_fail",
        "a second build_global fails, as rayon's, with asat's own message",
    ),
    fails(
        "core_scoped_threadpool",
        "spawn_scoped_tls_threadpool",
        INSTALL_HANDLER,
    ),
    fails(
        "core_scoped_threadpool",
        "build_scoped_tls_threadpool",
        INSTALL_HANDLER,
    ),
];

/// What an outcome means.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// As rayon's: passed, ignored, or not applicable.
    Expected,
    /// A known difference, with its reason.
    Known(&'static str),
    /// A known difference's test passes now.
    NowPasses(&'static str),
    /// Unexpected; a known difference that expected another outcome, if any.
    Unexpected(Option<&'static Known>),
}

impl Verdict {
    /// The text of the report's last column.
    pub fn text(&self) -> String {
        match self {
            Verdict::Expected => String::new(),
            Verdict::Known(r) => (*r).to_owned(),
            Verdict::NowPasses(r) => format!("known difference now passes ({r})"),
            Verdict::Unexpected(None) => "UNEXPECTED".into(),
            Verdict::Unexpected(Some(k)) => format!(
                "UNEXPECTED (the known difference expects it to {}: {})",
                k.expect.words(),
                k.reason
            ),
        }
    }

    /// Whether it is unexpected.
    pub fn is_unexpected(&self) -> bool {
        matches!(self, Verdict::Unexpected(_))
    }
}

/// The entry of `table` for `test` of `file`: the test's own, else the file's `*`.
pub fn find<'a>(table: &'a [Known], file: &str, test: &str) -> Option<&'a Known> {
    let of_file = || table.iter().filter(move |k| k.file == file);
    of_file()
        .find(|k| k.test == test)
        .or_else(|| of_file().find(|k| k.test == "*"))
}

/// The verdict on `outcome` of `test` of `file` under `table`.
pub fn judge(table: &'static [Known], file: &str, test: &str, outcome: &Outcome) -> Verdict {
    let known = find(table, file, test);
    match (outcome, known) {
        (Outcome::Passed, Some(k)) => Verdict::NowPasses(k.reason),
        (Outcome::Passed | Outcome::Ignored | Outcome::NotApplicable(_), _) => Verdict::Expected,
        (_, Some(k)) if k.expect.matches(outcome) => Verdict::Known(k.reason),
        (_, k) => Verdict::Unexpected(k),
    }
}

/// The deadline of `test` of `file`: `default`, or its entry's shorter one.
pub fn timeout_for(table: &[Known], file: &str, test: &str, default: f64) -> f64 {
    find(table, file, test)
        .and_then(|k| k.timeout_s)
        .map_or(default, |t| t.min(default))
}

/// The entries of `table` that match none of `tests` (`(file, test)` pairs).
pub fn unmatched<'a>(table: &'a [Known], tests: &[(&str, &str)]) -> Vec<&'a Known> {
    table
        .iter()
        .filter(|k| {
            !tests
                .iter()
                .any(|(f, t)| *f == k.file && (k.test == "*" || *t == k.test))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    static TABLE: [Known; 3] = [
        fails("a", "t1", "reason one"),
        Known {
            file: "a",
            test: "t2",
            expect: Expect::TimesOut,
            reason: "reason two",
            timeout_s: Some(10.0),
        },
        Known {
            file: "b",
            test: "*",
            expect: Expect::DoesNotCompile,
            reason: "reason b",
            timeout_s: None,
        },
    ];

    #[test]
    fn outcomes_are_judged_against_the_table() {
        let failed = Outcome::Failed("boom".into());
        assert_eq!(
            judge(&TABLE, "a", "t1", &failed),
            Verdict::Known("reason one")
        );
        assert_eq!(
            judge(&TABLE, "a", "t1", &Outcome::Passed),
            Verdict::NowPasses("reason one")
        );
        assert_eq!(
            judge(&TABLE, "a", "t1", &Outcome::Passed).text(),
            "known difference now passes (reason one)"
        );
        assert_eq!(judge(&TABLE, "a", "t3", &failed), Verdict::Unexpected(None));
        assert_eq!(judge(&TABLE, "a", "t3", &failed).text(), "UNEXPECTED");
        assert_eq!(
            judge(&TABLE, "a", "t3", &Outcome::Passed),
            Verdict::Expected
        );
        assert_eq!(
            judge(&TABLE, "a", "t3", &Outcome::Ignored),
            Verdict::Expected
        );
        // A known difference whose outcome changed is unexpected.
        let v = judge(&TABLE, "a", "t2", &failed);
        assert_eq!(v, Verdict::Unexpected(Some(&TABLE[1])));
        assert!(v
            .text()
            .starts_with("UNEXPECTED (the known difference expects it to time out"));
        // A file's `*` entry covers its tests.
        let nc = Outcome::NotCompiled("error[E0277]".into());
        assert_eq!(judge(&TABLE, "b", "any", &nc), Verdict::Known("reason b"));
        assert_eq!(
            judge(&TABLE, "b", "any", &Outcome::Passed),
            Verdict::NowPasses("reason b")
        );
        assert!(judge(&TABLE, "b", "any", &failed).is_unexpected());
    }

    #[test]
    fn deadlines_and_unmatched_entries() {
        assert_eq!(timeout_for(&TABLE, "a", "t2", 60.0), 10.0);
        assert_eq!(timeout_for(&TABLE, "a", "t2", 5.0), 5.0);
        assert_eq!(timeout_for(&TABLE, "a", "t1", 60.0), 60.0);
        let seen = [("a", "t1"), ("b", "x")];
        assert_eq!(unmatched(&TABLE, &seen), [&TABLE[1]]);
    }

    #[test]
    fn the_table_is_well_formed() {
        for (i, k) in KNOWN.iter().enumerate() {
            assert!(!k.reason.is_empty() && !k.reason.contains('\n'), "{k:?}");
            let dup = KNOWN[..i]
                .iter()
                .any(|o| o.file == k.file && o.test == k.test);
            assert!(!dup, "{k:?} is listed twice");
        }
    }
}
