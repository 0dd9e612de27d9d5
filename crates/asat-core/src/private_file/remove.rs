//! Removing files that no process uses (see the [module docs](super#removal)).

use std::ffi::CString;
use std::fs::File;
use std::io;

use super::{status_of, sys, PrivateDir};

impl PrivateDir {
    /// Removes the files of this folder whose names `matches` accepts and that no descriptor
    /// holds (no process opened them with [`open_file`](Self::open_file) and still has them
    /// open), as the [module docs](super#removal) say; returns how many it removed. Entries
    /// that are not regular files of the user with one link, or that cannot be opened, locked
    /// or removed, are left as they are.
    pub fn remove_unused(&self, matches: impl Fn(&str) -> bool) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return 0;
        };
        entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| matches(name))
            .filter(|name| {
                let Ok(name) = CString::new(name.as_str()) else {
                    return false;
                };
                sys::open_at(&self.dir, &name, false)
                    .is_ok_and(|file| self.remove_locked(&name, &file, true).unwrap_or(false))
            })
            .count()
    }

    /// Removes `name`, which `file` (the caller's descriptor from
    /// [`open_file`](Self::open_file)) must be, when no other descriptor holds it: the last
    /// user's leaving (module docs). Returns whether it removed it; errors of the system
    /// calls. Call it when about to close `file`: if another user holds the file, `file`'s
    /// shared lock may be gone afterwards (a failed conversion drops it).
    pub fn remove_if_last(&self, name: &str, file: &File) -> io::Result<bool> {
        let name = CString::new(name).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        self.remove_locked(&name, file, false)
    }

    /// Takes `file`'s exclusive lock without waiting and, when it got it, removes `name` if
    /// it still is `file`. `check`: only a regular file of the user with one link.
    fn remove_locked(&self, name: &CString, file: &File, check: bool) -> io::Result<bool> {
        let status = status_of(file)?;
        let regular = status.mode & libc::S_IFMT == libc::S_IFREG;
        if check && !(regular && status.uid == sys::uid() && status.nlink == 1) {
            return Ok(false);
        }
        if !sys::lock(file, true, false)? {
            return Ok(false);
        }
        // Under the exclusive lock no other opener holds the file, and no other remover can
        // get here for it; the name may have moved on to another file before the lock.
        if sys::id_at(&self.dir, name)? != (status.dev, status.ino) {
            return Ok(false);
        }
        sys::unlink_at(&self.dir, name)?;
        Ok(true)
    }
}
