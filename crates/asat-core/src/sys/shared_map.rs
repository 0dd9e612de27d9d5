//! A shared mapping of a private file and open-file-description locks on its bytes (see
//! [`SharedMap`]).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// A file mapped shared, read-write, seen as 64-bit and 32-bit atomic words at byte offsets,
/// with open-file-description locks on its bytes: the shared state of the policy crates
/// (asat-pools' load table, asat-gang's shared domain). Map only files opened through
/// [`PrivateDir::open_file`](crate::private_file::PrivateDir::open_file): private (nobody
/// else can truncate them) and with their space reserved, so no access to the mapping faults.
#[derive(Debug)]
pub struct SharedMap {
    file: File,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is only ever accessed through atomics, which are Send and Sync; the
// pointer stays valid until drop.
unsafe impl Send for SharedMap {}
// SAFETY: as above: all access is through atomics.
unsafe impl Sync for SharedMap {}

impl SharedMap {
    /// Maps the first `len` bytes of `file` shared. The file must be at least `len` bytes
    /// long with its space reserved (as `asat_core::private_file` leaves it), so no access to
    /// the mapping can fault.
    pub fn map(file: File, len: usize) -> io::Result<Self> {
        if len == 0 || file.metadata()?.len() < len as u64 {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: a fresh shared read-write mapping of `len` bytes of an open file at least
        // that long; the kernel picks the address. The result is checked against MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            file,
            ptr: ptr.cast(),
            len,
        })
    }

    /// The mapped file's descriptor (for
    /// [`PrivateDir::remove_if_last`](crate::private_file::PrivateDir::remove_if_last)).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// `n` 64-bit words from byte `offset` (a multiple of 8). Panics if out of the mapping:
    /// offsets come from the layout, never from the file.
    pub fn u64s(&self, offset: usize, n: usize) -> &[AtomicU64] {
        assert!(
            offset % 8 == 0 && offset + n * 8 <= self.len,
            "layout out of the mapping"
        );
        // SAFETY: in bounds (checked) and 8-aligned (the mapping is page-aligned and `offset`
        // a multiple of 8); valid until drop, which needs `&mut self`. AtomicU64 has the
        // layout of u64, any bits are a valid u64, and every process accesses these bytes
        // only as 64-bit atomics (the layout gives each byte one word size).
        unsafe { std::slice::from_raw_parts(self.ptr.add(offset).cast(), n) }
    }

    /// `n` 32-bit words from byte `offset` (a multiple of 4). Panics if out of the mapping.
    pub fn u32s(&self, offset: usize, n: usize) -> &[AtomicU32] {
        assert!(
            offset % 4 == 0 && offset + n * 4 <= self.len,
            "layout out of the mapping"
        );
        // SAFETY: as in `u64s`, for 32-bit words at a 4-aligned offset.
        unsafe { std::slice::from_raw_parts(self.ptr.add(offset).cast(), n) }
    }

    fn lock_cmd(&self, cmd: libc::c_int, byte: usize, ty: libc::c_short) -> io::Result<()> {
        // SAFETY: flock is plain data; all-zeroes is a valid value, and l_pid must be 0 for OFD
        // locks.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = ty;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = byte as libc::off_t;
        fl.l_len = 1;
        loop {
            // SAFETY: `fl` is a valid, writable flock for the fcntl lock commands; the fd is
            // open.
            let rc = unsafe { libc::fcntl(self.file.as_raw_fd(), cmd, &mut fl) };
            if rc != -1 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }

    /// Takes the OFD lock on byte `byte` without waiting; false when another open file
    /// description holds it. The kernel drops it when the file is closed (the process dies).
    pub fn try_lock(&self, byte: usize) -> io::Result<bool> {
        match self.lock_cmd(libc::F_OFD_SETLK, byte, libc::F_WRLCK as libc::c_short) {
            Ok(()) => Ok(true),
            Err(e)
                if e.raw_os_error() == Some(libc::EAGAIN)
                    || e.raw_os_error() == Some(libc::EACCES) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Takes the OFD lock on byte `byte`, waiting for it.
    pub fn lock(&self, byte: usize) -> io::Result<()> {
        self.lock_cmd(libc::F_OFD_SETLKW, byte, libc::F_WRLCK as libc::c_short)
    }

    /// Releases the OFD lock on byte `byte`.
    pub fn unlock(&self, byte: usize) -> io::Result<()> {
        self.lock_cmd(libc::F_OFD_SETLK, byte, libc::F_UNLCK as libc::c_short)
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `len` are those of the mapping made in `map`, not yet unmapped; no
        // borrow of its words outlives `&mut self`.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}
