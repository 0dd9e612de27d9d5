//! Private shared files: files in a folder that only the current user can use, shared by that
//! user's processes (asat-pools' load table; any policy crate's shared state), opened so that
//! nothing another user plants or changes can redirect, resize or read them.
//!
//! [`PrivateDir`] is a checked folder; [`PrivateDir::open_file`] opens (creating it when
//! missing) a file of an exact size in it, checked and with its space reserved, ready to be
//! mapped.
//!
//! # The folder
//!
//! - [`PrivateDir::user`]: `$XDG_RUNTIME_DIR` when it is set and not empty (the per-user
//!   folder the login manager makes, usually `/run/user/{uid}`); it must exist. Otherwise
//!   `/dev/shm/asat-u{uid}`, created with mode 0700 when missing.
//! - [`PrivateDir::named`]: a folder the caller names (from a setting such as
//!   `ASAT_POOLS_SHM_DIR`). It must be an absolute path; a relative or empty one is refused,
//!   since it would put the files in whatever the current folder is. Its last component is
//!   created with mode 0700 when missing (its parent must exist).
//!
//! Either way the folder is opened with `O_DIRECTORY | O_NOFOLLOW` and checked through the
//! open descriptor (`fstat`, so it is the folder that was opened that is checked, whatever
//! happens to its path later): not a symbolic link, a directory, owned by the user, and no
//! permission bits for the group or others (mode `0700` or less). Anything else is refused
//! with an error that says what was found and what is allowed; nothing is changed. Files are
//! then opened relative to that descriptor (`openat`), so a path swapped after the check
//! cannot redirect them. Since only the user can add, remove or rename entries of such a
//! folder, another user can neither plant a file or a link there nor replace one. (A folder
//! squatted in `/dev/shm` by another user under the expected name is refused, never used: set
//! a folder of your own.)
//!
//! Processes share files only if they resolve the same folder: all of a user's processes
//! that should see each other need the same `XDG_RUNTIME_DIR` (or none), or the same named
//! folder.
//!
//! # The file
//!
//! [`PrivateDir::open_file`] opens `name` with `O_NOFOLLOW | O_CLOEXEC`: it first tries to
//! create it (`O_CREAT | O_EXCL`, mode 0600), and if it exists opens it without `O_CREAT`.
//! It then checks the open file (`fstat`) and refuses, changing nothing, unless it is a
//! regular file owned by the user, with no group or other permission bits, exactly one hard
//! link (another name in another folder could otherwise reach it), and a size of 0 or the
//! expected size. It reserves the space of the expected size (`fallocate`), checks that the
//! size is now exactly the expected one, and only then hands the file back, to be mapped.
//! Reserving means that a full file system (a full `/dev/shm`) is a clear error here instead
//! of a `SIGBUS` later, at the first write to a page of a sparse file that cannot be given a
//! page. A file system without `fallocate` is refused (the fallback of glibc's
//! `posix_fallocate` writes into the file and is not safe beside concurrent users).
//!
//! # Concurrent creators
//!
//! Several processes may open a missing file at once. The file's size is the only state of
//! its creation: **0 means being created, the expected size means ready**, and any other size
//! is refused (another program, or another layout version, made it: it is never truncated or
//! grown, and the error says to remove it when no process uses it).
//!
//! - Exactly one opener creates the file (`O_EXCL`); the others find it and open it. Either
//!   may find it at size 0: its creator has not reserved it yet, or failed to (the file
//!   system was full), or died in between.
//! - Every opener, creator or not, reserves `[0, size)` with `fallocate` (mode 0) when the
//!   size is 0 or the expected one. That call never shrinks a file and never changes bytes
//!   already there; done by several processes at once, or again on a ready file, it leaves
//!   the same file, of the expected size, with its first contents intact. So whoever opens a
//!   file of size 0 simply completes its creation, and a file left at size 0 (a creator that
//!   failed or died) is completed by the next opener (opening never removes anything).
//! - After reserving, every opener checks the size again: exactly the expected one, or the
//!   file is refused (an opener of another layout made it bigger meanwhile).
//! - If the file is removed between the create attempt and the open, or between the open and
//!   the check (0 links), the opener starts again (a few times, then gives up with an error).
//! - Every opener takes a shared `flock` lock on the file before it checks it, and holds it
//!   as long as its descriptor is open (the [`PrivateFile`], or the [`SharedMap`] made of
//!   it): the mark of a file in use (next section).
//! - A ready file's contents are all zero until its users write: the user of this module
//!   makes all-zero a valid initial state (or initialises with compare-and-swap), since no
//!   opener knows whether another already began using the file.
//!
//! # Removal
//!
//! Files are named after what they serve (a set of CPUs, a topology), so a machine whose jobs
//! get ever new CPU sets would gather files that nobody uses any more.
//! [`PrivateDir::remove_unused`] removes the files of given names that no descriptor holds,
//! and [`PrivateDir::remove_if_last`] a file when the caller's descriptor is the last one: the
//! users of this module call the first when they create a file (the next creator removes what
//! dead processes left) and the second when they close one. A file is removed only while its
//! remover holds an **exclusive** `flock` lock on it, which no other opener's shared lock
//! allows, and only if the name still is that file; so a file in use is never removed. An
//! opener that opened the file just before its removal waits for its shared lock until the
//! remover is done, then finds 0 links and starts again with a new file (as above).
//!
//! `flock` locks belong to the open file description, which a child made by `fork` shares
//! with its parent: the file counts as used while either keeps it open, but the parent's
//! `remove_if_last` (made on that shared description) does not see the child, which may go
//! on reading a removed file (the users of this module never act through a copy inherited
//! that way: see below). On NFS Linux emulates `flock` with byte-range locks, which would
//! conflict with those of the users' own protocols: keep these folders on a local file
//! system, as tmpfs folders are.
//!
//! # Forks and exec
//!
//! The folder's and the file's descriptors are opened with `O_CLOEXEC`: a program started
//! with `exec` never inherits them. A child made by `fork` without `exec` does share them
//! (and the open file description, with its `F_OFD_SETLK` locks): a user of this module that
//! relies on such locks must record the process id that opened the file and not act through
//! the descriptor in another process (asat-pools' load table does so).
//!
//! ```
//! use asat_core::private_file::PrivateDir;
//!
//! # let tmp = std::env::temp_dir().join(format!("asat-private-doc-{}", std::process::id()));
//! let dir = PrivateDir::named(&tmp)?; // created with mode 0700
//! let f = dir.open_file("table", 4096)?;
//! assert!(f.created());
//! assert_eq!(f.file().metadata().unwrap().len(), 4096);
//! let again = dir.open_file("table", 4096)?;
//! assert!(!again.created());
//! assert_eq!(again.id(), f.id());
//! // Another size is another layout: refused.
//! assert!(dir.open_file("table", 8192).is_err());
//! # std::fs::remove_dir_all(&tmp).unwrap();
//! # Ok::<(), asat_core::Error>(())
//! ```

use std::ffi::{CString, OsString};
use std::fs::File;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::sys::private_file as sys;
pub use crate::sys::shared_map::SharedMap;
use crate::Error;

/// How many times [`PrivateDir::open_file`] starts again when the file is removed while it
/// opens it.
const OPEN_ATTEMPTS: usize = 8;

/// The permission bits of the group and others.
const GROUP_OTHER: u32 = 0o077;

/// A folder only the current user can use (see the [module docs](self)).
#[derive(Debug)]
pub struct PrivateDir {
    dir: File,
    path: PathBuf,
}

/// A file of a [`PrivateDir`], checked, of the expected size, its space reserved.
#[derive(Debug)]
pub struct PrivateFile {
    file: File,
    path: PathBuf,
    id: FileId,
    created: bool,
}

/// The identity of a file (device and inode numbers): two paths, or two openings, of one file
/// have the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

impl PrivateDir {
    /// The current user's own folder: `$XDG_RUNTIME_DIR` when set and not empty (it must
    /// exist), else `/dev/shm/asat-u{uid}` (created with mode 0700 when missing). Checked as
    /// the [module docs](self#the-folder) say.
    pub fn user() -> Result<Self, Error> {
        user_dir_in(std::env::var_os("XDG_RUNTIME_DIR"), Path::new("/dev/shm"))
    }

    /// The folder `path`, which must be absolute; its last component is created with mode
    /// 0700 when missing. Checked as the [module docs](self#the-folder) say.
    pub fn named(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = absolute(path.as_ref(), "folder")?;
        create_dir(&path, "folder")?;
        open_dir(&path, "folder")
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the file `name` (one path component) of this folder, creating it when missing,
    /// with a size of `size` bytes (at least 1), as the [module docs](self#the-file) say.
    ///
    /// Errors: a bad name or size; a file that is a symbolic link, not a regular file, not
    /// the user's, open to the group or others, with more than one link, or of another size
    /// (other than 0); a file system that cannot reserve `size` bytes.
    pub fn open_file(&self, name: &str, size: u64) -> Result<PrivateFile, Error> {
        let path = self.path.join(name);
        let err = |message: String, source: Option<io::Error>| {
            Error::private_file("file", &path, message, source)
        };
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
            return Err(err(
                format!(
                    "file name {name:?}: must be one path component (not empty, . or .., no \
                     / or NUL)"
                ),
                None,
            ));
        }
        if size == 0 {
            return Err(err("size 0: must be at least 1 byte".into(), None));
        }
        let c_name = CString::new(name).expect("checked: no NUL");
        let uid = sys::uid();
        for _ in 0..OPEN_ATTEMPTS {
            let (file, created) = match sys::open_at(&self.dir, &c_name, true) {
                Ok(f) => (f, true),
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                    match sys::open_at(&self.dir, &c_name, false) {
                        Ok(f) => (f, false),
                        // Removed since: start again.
                        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
                        Err(e) => return Err(open_error(e, &path)),
                    }
                }
                Err(e) => return Err(open_error(e, &path)),
            };
            // The mark of a user (module docs); held until the descriptor is closed.
            sys::lock(&file, false, true)
                .map_err(|e| err("cannot lock it (flock, shared)".into(), Some(e)))?;
            let status =
                status_of(&file).map_err(|e| err("cannot read its status".into(), Some(e)))?;
            match check_file(&status, uid, size) {
                Ok(()) => {}
                Err(FileProblem::Removed) => continue,
                Err(FileProblem::Refused(m)) => return Err(err(m, None)),
            }
            sys::reserve(&file, size)
                .map_err(|e| err(reserve_message(&e, size, &self.path), Some(e)))?;
            let status =
                status_of(&file).map_err(|e| err("cannot read its status".into(), Some(e)))?;
            match check_file(&status, uid, size) {
                Ok(()) if status.size == size => {}
                Ok(()) => {
                    return Err(err(
                        format!(
                            "is {} bytes long after reserving {size}: another program is \
                             creating it with another size; remove it when no process uses it",
                            status.size
                        ),
                        None,
                    ))
                }
                Err(FileProblem::Removed) => continue,
                Err(FileProblem::Refused(m)) => return Err(err(m, None)),
            }
            return Ok(PrivateFile {
                file,
                path,
                id: FileId {
                    dev: status.dev,
                    ino: status.ino,
                },
                created,
            });
        }
        Err(err(
            format!(
                "was removed while being opened, {OPEN_ATTEMPTS} times in a row: another \
                 process keeps removing it"
            ),
            None,
        ))
    }
}

impl PrivateFile {
    /// The open file (read-write, `O_CLOEXEC`).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The open file, taken out.
    pub fn into_file(self) -> File {
        self.file
    }

    /// The file's path (its folder's path and its name).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's identity.
    pub fn id(&self) -> FileId {
        self.id
    }

    /// Whether this opening created the file (another opener may still have found it first
    /// at size 0 and reserved it too: see the [module docs](self#concurrent-creators)).
    pub fn created(&self) -> bool {
        self.created
    }
}

/// The user's folder: `xdg` (the value of `XDG_RUNTIME_DIR`) when set and not empty, else
/// `{shm}/asat-u{uid}` (created when missing).
fn user_dir_in(xdg: Option<OsString>, shm: &Path) -> Result<PrivateDir, Error> {
    match xdg.filter(|v| !v.is_empty()) {
        Some(v) => {
            let path = absolute(Path::new(&v), "XDG_RUNTIME_DIR folder")?;
            open_dir(&path, "XDG_RUNTIME_DIR folder")
        }
        None => {
            let path = shm.join(format!("asat-u{}", sys::uid()));
            create_dir(&path, "per-user folder")?;
            open_dir(&path, "per-user folder")
        }
    }
}

/// `path` without `.` components and repeated or trailing slashes (so that `O_NOFOLLOW` is
/// about its real last component), if it is absolute.
fn absolute(path: &Path, what: &'static str) -> Result<PathBuf, Error> {
    if path.as_os_str().is_empty() {
        return Err(Error::private_file(
            what,
            path,
            "the path is empty: must be an absolute path (starting with /)",
            None,
        ));
    }
    if !path.is_absolute() {
        return Err(Error::private_file(
            what,
            path,
            "the path is relative: must be an absolute path (starting with /), not one \
             relative to the current folder",
            None,
        ));
    }
    Ok(path.components().collect())
}

/// Creates the folder `path` with mode 0700 if it is missing (not its parents).
fn create_dir(path: &Path, what: &'static str) -> Result<(), Error> {
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::private_file(
            what,
            path,
            "cannot create it (mode 0700; its parent folder must exist and be writable)",
            Some(e),
        )),
    }
}

/// Opens and checks the folder `path` (see the module docs).
fn open_dir(path: &Path, what: &'static str) -> Result<PrivateDir, Error> {
    let allowed = "must be a directory (not a symbolic link) owned by you, with no permissions \
                   for the group or others (mode 0700)";
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            // (A symbolic link gives ELOOP or, with O_DIRECTORY, ENOTDIR.)
            let found = match e.raw_os_error() {
                Some(libc::ELOOP | libc::ENOTDIR) if is_symlink(path) => "is a symbolic link",
                Some(libc::ENOTDIR) => "is not a directory",
                Some(libc::ENOENT) => "does not exist",
                _ => "cannot be opened",
            };
            Error::private_file(what, path, format!("{found}: {allowed}"), Some(e))
        })?;
    let status = status_of(&dir)
        .map_err(|e| Error::private_file(what, path, "cannot read its status", Some(e)))?;
    check_dir(&status, sys::uid())
        .map_err(|m| Error::private_file(what, path, format!("{m}: {allowed}"), None))?;
    Ok(PrivateDir {
        dir,
        path: path.to_owned(),
    })
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

fn open_error(e: io::Error, path: &Path) -> Error {
    let allowed = "must be a regular file owned by you with mode 0600; remove it";
    let found = match e.raw_os_error() {
        Some(libc::ELOOP) => "is a symbolic link".to_owned(),
        Some(libc::EISDIR) => "is a directory".to_owned(),
        Some(libc::ENXIO) | Some(libc::ENODEV) => "is not a regular file".to_owned(),
        _ => {
            return Error::private_file("file", path, "cannot open or create it", Some(e));
        }
    };
    Error::private_file("file", path, format!("{found}: {allowed}"), Some(e))
}

fn reserve_message(e: &io::Error, size: u64, dir: &Path) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSPC) => format!(
            "cannot reserve its {size} bytes: the file system of {} is full; free space \
             there or choose another folder",
            dir.display()
        ),
        Some(libc::EOPNOTSUPP) => format!(
            "cannot reserve its {size} bytes: the file system of {} does not support \
             fallocate; choose a folder on tmpfs (such as one under /dev/shm)",
            dir.display()
        ),
        _ => format!("cannot reserve its {size} bytes (with fallocate)"),
    }
}

/// The fields of a file's status that the checks read.
#[derive(Clone, Copy, Debug)]
struct Status {
    /// `st_mode`: type and permission bits.
    mode: u32,
    uid: u32,
    nlink: u64,
    size: u64,
    dev: u64,
    ino: u64,
}

fn status_of(file: &File) -> io::Result<Status> {
    let m = file.metadata()?;
    Ok(Status {
        mode: m.mode(),
        uid: m.uid(),
        nlink: m.nlink(),
        size: m.size(),
        dev: m.dev(),
        ino: m.ino(),
    })
}

fn kind(mode: u32) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFREG => "a regular file",
        libc::S_IFDIR => "a directory",
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFIFO => "a FIFO",
        libc::S_IFSOCK => "a socket",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        _ => "of an unknown type",
    }
}

/// Checks an opened folder's status for user `uid`; the problem found, if any.
fn check_dir(st: &Status, uid: u32) -> Result<(), String> {
    if st.mode & libc::S_IFMT != libc::S_IFDIR {
        return Err(format!("is {}", kind(st.mode)));
    }
    if st.uid != uid {
        return Err(format!(
            "is owned by uid {}, not by you (uid {uid})",
            st.uid
        ));
    }
    if st.mode & GROUP_OTHER != 0 {
        return Err(format!(
            "has mode {:04o}, which lets the group or others in",
            st.mode & 0o7777
        ));
    }
    Ok(())
}

/// What is wrong with an opened file.
#[derive(Debug, PartialEq, Eq)]
enum FileProblem {
    /// It has no link left: removed since it was opened (open it again).
    Removed,
    /// Refused: what was found and what is allowed.
    Refused(String),
}

/// Checks an opened file's status for user `uid` and the expected `size` (0 is allowed:
/// being created, see the module docs).
fn check_file(st: &Status, uid: u32, size: u64) -> Result<(), FileProblem> {
    let refuse = |m: String| Err(FileProblem::Refused(m));
    if st.mode & libc::S_IFMT != libc::S_IFREG {
        return refuse(format!(
            "is {}: must be a regular file owned by you with mode 0600; remove it",
            kind(st.mode)
        ));
    }
    if st.uid != uid {
        return refuse(format!(
            "is owned by uid {}, not by you (uid {uid}): must be yours; remove it",
            st.uid
        ));
    }
    if st.mode & GROUP_OTHER != 0 {
        return refuse(format!(
            "has mode {:04o}, which lets the group or others in: must have no group or \
             other permissions (0600); remove it",
            st.mode & 0o7777
        ));
    }
    if st.nlink == 0 {
        return Err(FileProblem::Removed);
    }
    if st.nlink != 1 {
        return refuse(format!(
            "has {} hard links: must have exactly one (another name could reach it); remove \
             it and its other links",
            st.nlink
        ));
    }
    if st.size != 0 && st.size != size {
        return refuse(format!(
            "is {} bytes long: must be {size} bytes (or 0 while being created); another \
             program or version made it: remove it when no process uses it",
            st.size
        ));
    }
    Ok(())
}

mod remove;
#[cfg(test)]
mod tests;
