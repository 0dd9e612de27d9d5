//! Help for programs that start MPI jobs with Open MPI's `mpirun`: why a job may not start.
//!
//! Open MPI's `mpirun` refuses to run as root (as on a fresh cloud machine or in a container)
//! unless `OMPI_ALLOW_RUN_AS_ROOT=1` and `OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1` are both set; it
//! then exits before any rank starts, and a launcher sees only an empty output.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;

/// The two variables that let Open MPI's `mpirun` run as root, each to be set to `1`.
pub const ROOT_VARIABLES: [&str; 2] = ["OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"];

/// A sentence to add to a launcher's error when an `mpirun` job did not start: `Some` when
/// this process runs as root without both [`ROOT_VARIABLES`] set to `1`, naming them.
pub fn mpirun_root_hint() -> Option<String> {
    // `/proc/self` belongs to the process's effective user.
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    root_hint(root, &|v| std::env::var_os(v))
}

fn root_hint(root: bool, env: &dyn Fn(&str) -> Option<OsString>) -> Option<String> {
    let missing: Vec<&str> = ROOT_VARIABLES
        .into_iter()
        .filter(|v| env(v).as_deref() != Some("1".as_ref()))
        .collect();
    (root && !missing.is_empty()).then(|| {
        format!(
            "this process runs as root, and Open MPI's mpirun refuses to unless {} (missing \
             here: {}); set both, or run as another user",
            ROOT_VARIABLES.map(|v| format!("{v}=1")).join(" and "),
            missing.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_without_both_variables_gets_a_hint_naming_them() {
        let none = |_: &str| None;
        let one = |v: &str| (v == ROOT_VARIABLES[0]).then(|| OsString::from("1"));
        let both = |_: &str| Some(OsString::from("1"));
        let wrong = |_: &str| Some(OsString::from("yes"));
        let hint = root_hint(true, &none).unwrap();
        assert!(hint.contains("OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"));
        let hint = root_hint(true, &one).unwrap();
        assert!(
            hint.ends_with(
                "(missing here: OMPI_ALLOW_RUN_AS_ROOT_CONFIRM); set both, or run as another user"
            ),
            "{hint}"
        );
        assert!(root_hint(true, &wrong).is_some());
        assert_eq!(root_hint(true, &both), None);
        assert_eq!(root_hint(false, &none), None);
    }
}
