//! The system calls of asat-pools (Linux): the shared-memory mapping of the load table and its
//! per-slot locks. All `unsafe` of the crate lives here (the file itself is opened and checked
//! by `asat_core::private_file`, and the calling thread's CPU affinity comes from
//! `asat_core::CpuSet`, which keep their own).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicU64;

/// A file mapped shared into memory, seen as a slice of atomic 64-bit words.
#[derive(Debug)]
pub(crate) struct SharedWords {
    file: File,
    ptr: *mut AtomicU64,
    words: usize,
}

// SAFETY: the mapping is only ever accessed through `&AtomicU64`s, which are Send and Sync; the
// pointer stays valid until drop.
unsafe impl Send for SharedWords {}
// SAFETY: as above: all access is through atomics.
unsafe impl Sync for SharedWords {}

impl SharedWords {
    /// Maps the first `words` 64-bit words of `file` shared, read-write. The file must be at
    /// least `words * 8` bytes long, with its space reserved (as
    /// `asat_core::private_file` leaves it), so that no access to the mapping can fault; a
    /// file shortened later by its owner would make accesses fault with `SIGBUS`.
    pub(crate) fn map(file: File, words: usize) -> io::Result<Self> {
        let bytes = words * 8;
        if file.metadata()?.len() < bytes as u64 {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: a fresh shared read-write mapping of `bytes` bytes of an open file at least
        // that long; the kernel picks the address. The result is checked against MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
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
            words,
        })
    }

    /// The mapped words.
    pub(crate) fn words(&self) -> &[AtomicU64] {
        // SAFETY: `ptr` is a page-aligned mapping of `words * 8` bytes, valid until drop (which
        // needs `&mut self`, so no borrow outlives it). AtomicU64 has the size and alignment of
        // u64, any bit pattern is a valid u64, and every access to the shared bytes, in this
        // process and in others, goes through atomic operations.
        unsafe { std::slice::from_raw_parts(self.ptr, self.words) }
    }

    fn lock_cmd(&self, cmd: libc::c_int, slot: usize, ty: libc::c_short) -> io::Result<i16> {
        // SAFETY: flock is plain data; all-zeroes is a valid value, and l_pid must be 0 for OFD
        // locks.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = ty;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = slot as libc::off_t;
        fl.l_len = 1;
        // SAFETY: `fl` is a valid, writable flock for the fcntl lock commands; the fd is open.
        let rc = unsafe { libc::fcntl(self.file.as_raw_fd(), cmd, &mut fl) };
        if rc == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(fl.l_type)
    }

    /// Takes the open-file-description lock on byte `slot` of the file without waiting.
    /// Returns false when another open file description holds it. The lock lives as long as
    /// this mapping's file is open: the kernel drops it when the process dies.
    pub(crate) fn try_lock(&self, slot: usize) -> io::Result<bool> {
        match self.lock_cmd(libc::F_OFD_SETLK, slot, libc::F_WRLCK as libc::c_short) {
            Ok(_) => Ok(true),
            Err(e)
                if e.raw_os_error() == Some(libc::EAGAIN)
                    || e.raw_os_error() == Some(libc::EACCES) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Releases the lock on byte `slot` (held through this mapping's open file description).
    pub(crate) fn unlock(&self, slot: usize) -> io::Result<()> {
        self.lock_cmd(libc::F_OFD_SETLK, slot, libc::F_UNLCK as libc::c_short)
            .map(|_| ())
    }
}

impl Drop for SharedWords {
    fn drop(&mut self) {
        // SAFETY: `ptr` and the length are those of the mapping made in `map`, not yet
        // unmapped; no borrow of the words outlives `&mut self`.
        unsafe {
            libc::munmap(self.ptr.cast(), self.words * 8);
        }
    }
}
