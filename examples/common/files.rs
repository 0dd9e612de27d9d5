//! Files the examples that copy other people's suites write (`npb`, `rayon_tests`; each
//! includes this file with `#[path]`): a write that leaves a file alone when it holds the
//! bytes already (so cargo and make see no change), and errors that name the path.

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

/// An I/O error on `path`, as `path: error`.
pub fn io_error(path: &Path, e: std::io::Error) -> String {
    format!("{}: {e}", path.display())
}
