//! The policies that `ASAT_POLICY` can name: one table, [`policies`], of each policy's name,
//! the argument it may take after a colon, a one-line description and its constructor.
//!
//! asat-core's own policies (`fixed`, `single`, `asat`) are in [`CORE`]; a policy of another
//! crate adds its entry to [`POLICIES`], a [`linkme`] distributed slice that the linker
//! gathers from every crate linked into the program, so that a program that links the crate
//! (through `asat`, or directly) can choose the policy with `ASAT_POLICY`. Adding a policy is
//! its entry, next to its code:
//!
//! ```
//! use std::sync::Arc;
//! use asat_core::{
//!     linkme::distributed_slice, parse_policy, Plan, Policy, PolicyEntry, RegionStart,
//!     POLICIES,
//! };
//!
//! /// Every region on two threads.
//! #[derive(Debug)]
//! struct Pairs;
//!
//! impl Policy for Pairs {
//!     fn name(&self) -> &str {
//!         "pairs"
//!     }
//!     fn plan(&self, _start: &RegionStart) -> Plan {
//!         Plan::run(2)
//!     }
//! }
//!
//! #[distributed_slice(POLICIES)]
//! #[linkme(crate = asat_core::linkme)]
//! static PAIRS: PolicyEntry = PolicyEntry {
//!     name: "pairs",
//!     arg: "",
//!     about: "every region on two threads",
//!     build: |_arg, _env| Ok(Arc::new(Pairs)),
//! };
//!
//! // `ASAT_POLICY=pairs` now builds it.
//! assert_eq!(parse_policy("pairs")?.name(), "pairs");
//! # Ok::<(), asat_core::Error>(())
//! ```
//!
//! Names are lowercase and unique; a name of [`CORE`] cannot be taken by another entry (the
//! first entry of a name wins, core's first).

use std::sync::Arc;

use crate::{Error, Fixed, Policy, Single};

/// What reads an environment variable for a constructor (the process's environment, or a
/// test's).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// A policy's constructor in the registry: the text after the colon, and the environment.
pub type BuildFn = fn(Option<&str>, Env<'_>) -> Result<Arc<dyn Policy>, Error>;

/// A policy that `ASAT_POLICY` can name.
#[derive(Debug)]
pub struct PolicyEntry {
    /// The name, lowercase: `ASAT_POLICY=<name>` or `<name>:<arg>`.
    pub name: &'static str,
    /// What may follow the name after a colon, as messages show it (`N (N >= 1)`), or `""`
    /// when nothing may.
    pub arg: &'static str,
    /// What the policy does, in one line.
    pub about: &'static str,
    /// Builds the policy from the text after the colon (`None` when there was none), reading
    /// its other settings from the environment given. Called only for forms the entry allows:
    /// an entry whose `arg` is empty never gets `Some`.
    pub build: BuildFn,
}

impl PolicyEntry {
    /// The forms `ASAT_POLICY` takes for this entry, as messages list them.
    pub fn forms(&self) -> String {
        if self.arg.is_empty() {
            self.name.to_string()
        } else {
            format!("{0}, {0}:{1}", self.name, self.arg)
        }
    }
}

/// The policies of other crates (see the module docs).
#[linkme::distributed_slice]
pub static POLICIES: [PolicyEntry];

/// asat-core's own policies.
pub static CORE: [PolicyEntry; 3] = [
    PolicyEntry {
        name: "fixed",
        arg: "N (N >= 1)",
        about: "a team of every thread (or of N) for each parallel call, like a fixed pool",
        build: build_fixed,
    },
    PolicyEntry {
        name: "single",
        arg: "",
        about: "one thread: parallel calls run serially on the caller",
        build: |_, _| Ok(Arc::new(Single)),
    },
    PolicyEntry {
        name: "asat",
        arg: "",
        about: "each job measures the machine's load and sizes its team to it (Severance, \
                Enbody, Petersen)",
        build: |_, env| Ok(Arc::new(crate::Asat::from_env_with(env)?)),
    },
];

fn build_fixed(arg: Option<&str>, _env: Env<'_>) -> Result<Arc<dyn Policy>, Error> {
    match arg.map(|n| n.trim().parse::<usize>()) {
        None => Ok(Arc::new(Fixed::all())),
        Some(Ok(n)) if n >= 1 => Ok(Arc::new(Fixed::new(n))),
        Some(_) => Err(Error::env(
            "ASAT_POLICY",
            &format!("fixed:{}", arg.unwrap_or_default()),
            allowed(),
        )),
    }
}

/// Every policy `ASAT_POLICY` can name: asat-core's first, then the others by name.
pub fn policies() -> Vec<&'static PolicyEntry> {
    let mut others: Vec<&PolicyEntry> = extra().iter().collect();
    others.sort_by_key(|e| e.name);
    CORE.iter().chain(others).collect()
}

/// The entries of other crates. Miri cannot read a distributed slice (the linker's section
/// bounds are extern statics it does not have): there, only asat-core's policies exist.
fn extra() -> &'static [PolicyEntry] {
    if cfg!(miri) {
        &[]
    } else {
        &POLICIES
    }
}

/// What `ASAT_POLICY` may be, for messages.
fn allowed() -> String {
    let forms: Vec<String> = policies().iter().map(|e| e.forms()).collect();
    format!("must be one of {}", forms.join(", "))
}

/// Parses a policy name as `ASAT_POLICY` takes it: a name of [`policies`] (`fixed`, `single`,
/// `asat`, and those of the crates linked in, such as `pools` and `gang` through `asat`),
/// with its argument after a colon where the entry takes one (`fixed:4`). Each policy reads
/// its other settings from the environment (ASAT: `ASAT_EVAL_TIME`, ...).
pub fn parse_policy(v: &str) -> Result<Arc<dyn Policy>, Error> {
    parse_policy_with_env(v, &crate::env::env_var)
}

pub(crate) fn parse_policy_with_env(v: &str, env: Env<'_>) -> Result<Arc<dyn Policy>, Error> {
    let t = v.trim().to_ascii_lowercase();
    let (name, arg) = match t.split_once(':') {
        Some((name, arg)) => (name, Some(arg)),
        None => (t.as_str(), None),
    };
    match policies().into_iter().find(|e| e.name == name) {
        Some(e) if arg.is_none() || !e.arg.is_empty() => (e.build)(arg, env),
        _ => Err(Error::env("ASAT_POLICY", v, allowed())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn core_names_build_their_policies() {
        for (v, name) in [
            ("fixed", "fixed"),
            ("FIXED:3", "fixed"),
            (" single ", "single"),
            ("asat", "asat"),
        ] {
            let p = parse_policy_with_env(v, &no_env).unwrap();
            assert_eq!(p.name(), name, "{v}");
        }
    }

    #[test]
    fn unknown_names_and_bad_arguments_name_every_form() {
        for v in ["rayon", "fixed:0", "fixed:x", "single:2", "", ":"] {
            let e = parse_policy_with_env(v, &no_env).unwrap_err().to_string();
            assert!(e.contains("ASAT_POLICY"), "{v}: {e}");
            for form in ["fixed, fixed:N (N >= 1)", "single", "asat"] {
                assert!(e.contains(form), "{v}: {e}");
            }
        }
    }

    #[test]
    fn names_are_lowercase_and_unique() {
        let all = policies();
        for e in &all {
            assert_eq!(e.name, e.name.to_ascii_lowercase());
            assert!(!e.name.contains(':') && !e.about.is_empty());
        }
        let mut names: Vec<_> = all.iter().map(|e| e.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
    }
}
