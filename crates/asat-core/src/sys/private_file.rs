//! The system calls of [`private_file`](crate::private_file): the user id, opening a file
//! relative to an open folder without following a symbolic link, reserving a file's space,
//! `flock` locks, and a name's identity and removal relative to the folder.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};

/// The real user id of the process.
pub(crate) fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Opens `name` in the folder `dir` for reading and writing, never following a symbolic link
/// (`O_NOFOLLOW`), closed on `exec` (`O_CLOEXEC`). With `create`, the file must not exist: it
/// is created with mode 0600 (`O_CREAT | O_EXCL`, which also fails on a symbolic link, dangling
/// or not); without, it must exist. `EINTR` is retried.
pub(crate) fn open_at(dir: &File, name: &CStr, create: bool) -> io::Result<File> {
    let mut flags = libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY;
    if create {
        flags |= libc::O_CREAT | libc::O_EXCL;
    }
    loop {
        // SAFETY: `dir` is an open descriptor for the duration of the call and `name` a
        // NUL-terminated string; the mode argument is read only with O_CREAT, and is passed as
        // the promoted integer the variadic openat expects.
        let fd =
            unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, 0o600 as libc::c_uint) };
        if fd >= 0 {
            // SAFETY: `fd` was just returned by openat, is open, and is owned by nothing else.
            return Ok(unsafe { File::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Allocates the bytes `[0, len)` of `file` (`fallocate` with mode 0): afterwards reads and
/// writes in that range cannot fail for lack of space, and the file is at least `len` bytes
/// long. It never shrinks the file and never changes bytes already there, so concurrent calls
/// with the same `len` are harmless. The system call itself, not glibc's `posix_fallocate`,
/// whose fallback on a file system without `fallocate` writes zero bytes into the file and can
/// overwrite what a concurrent process just wrote: here that case is the error
/// `EOPNOTSUPP`. `EINTR` is retried.
pub(crate) fn reserve(file: &File, len: u64) -> io::Result<()> {
    let len = libc::off_t::try_from(len).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    if len == 0 {
        return Ok(());
    }
    loop {
        // SAFETY: plain system call on an open descriptor; no memory is passed.
        let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Locks `file`'s open file description with `flock`, shared or `exclusive`, waiting for it
/// when `wait` (`EINTR` retried); without `wait`, `Ok(false)` when another description holds
/// a conflicting lock. A description that holds one kind and asks for the other converts it;
/// when a conversion without `wait` fails, the description holds no lock afterwards (Linux
/// drops the old lock first).
pub(crate) fn lock(file: &File, exclusive: bool, wait: bool) -> io::Result<bool> {
    let mut op = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    };
    if !wait {
        op |= libc::LOCK_NB;
    }
    loop {
        // SAFETY: plain system call on an open descriptor; no memory is passed.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => {}
            Some(libc::EWOULDBLOCK) if !wait => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// The device and inode numbers of `name` in the folder `dir`, not following a symbolic link.
pub(crate) fn id_at(dir: &File, name: &CStr) -> io::Result<(u64, u64)> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `dir` is open, `name` NUL-terminated, and `st` a buffer of the struct fstatat
    // writes; it is read only when the call succeeded, which means it was written.
    let st = unsafe {
        if libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        st.assume_init()
    };
    Ok((st.st_dev, st.st_ino))
}

/// Removes the name `name` from the folder `dir` (`unlinkat`, not a folder).
pub(crate) fn unlink_at(dir: &File, name: &CStr) -> io::Result<()> {
    // SAFETY: `dir` is open and `name` NUL-terminated.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
