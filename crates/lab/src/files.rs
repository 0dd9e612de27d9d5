//! Writing the lab's files, with errors that name the path: the results the programs write
//! ([`write()`], [`create_dir`]), and, for the programs that copy other people's suites (`npb`,
//! `rayon_tests`), a write that leaves a file alone when it holds the bytes already (so cargo
//! and make see no change).

use std::fs;
use std::path::Path;

/// Writes `bytes` to `path` (creating its folder, then setting `perms` when given) unless it
/// already holds exactly those bytes.
pub fn write_if_changed(
    path: &Path,
    bytes: &[u8],
    perms: Option<fs::Permissions>,
) -> Result<(), String> {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    }
    fs::write(path, bytes).map_err(|e| io_error(path, e))?;
    if let Some(perms) = perms {
        fs::set_permissions(path, perms).map_err(|e| io_error(path, e))?;
    }
    Ok(())
}

/// Writes `contents` to `path` (a CSV, a table, a plot's data).
pub fn write(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), String> {
    fs::write(path, contents).map_err(|e| io_error(path, e))
}

/// Creates the folder `dir` (an output folder) and its parents.
pub fn create_dir(dir: &Path) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}", io_error(dir, e)))
}

/// An I/O error on `path`, as `path: error`.
pub fn io_error(path: &Path, e: std::io::Error) -> String {
    format!("{}: {e}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_errors_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a/b");
        create_dir(&out).unwrap();
        let csv = out.join("x.csv");
        write(&csv, "h\n1\n").unwrap();
        assert_eq!(fs::read_to_string(&csv).unwrap(), "h\n1\n");
        write_if_changed(&csv, b"h\n1\n", None).unwrap();
        let e = write(&dir.path().join("none/x.csv"), "").unwrap_err();
        assert!(e.contains("none/x.csv"), "{e}");
        let e = create_dir(&csv.join("y")).unwrap_err();
        assert!(
            e.starts_with("cannot create ") && e.contains("x.csv/y"),
            "{e}"
        );
    }
}
