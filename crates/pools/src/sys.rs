//! The load table's shared mapping and per-slot locks, on asat-core's
//! [`SharedMap`](asat_core::private_file::SharedMap) (which holds the `unsafe`; the file itself
//! is opened and checked by `asat_core::private_file`). asat-pools has no `unsafe` of its own.

use std::fs::File;
use std::io;
use std::sync::atomic::AtomicU64;

use asat_core::private_file::SharedMap;

/// A file mapped shared into memory, seen as a slice of atomic 64-bit words, with an
/// open-file-description lock per slot byte.
#[derive(Debug)]
pub(crate) struct SharedWords {
    map: SharedMap,
    words: usize,
}

impl SharedWords {
    /// Maps the first `words` 64-bit words of `file` shared, read-write. The file must be at
    /// least `words * 8` bytes long, with its space reserved (as
    /// `asat_core::private_file` leaves it), so that no access to the mapping can fault.
    pub(crate) fn map(file: File, words: usize) -> io::Result<Self> {
        let len = words
            .checked_mul(8)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
        Ok(Self {
            map: SharedMap::map(file, len)?,
            words,
        })
    }

    /// The mapped file's descriptor.
    pub(crate) fn file(&self) -> &File {
        self.map.file()
    }

    /// The mapped words.
    pub(crate) fn words(&self) -> &[AtomicU64] {
        self.map.u64s(0, self.words)
    }

    /// Takes the open-file-description lock on byte `slot` of the file without waiting.
    /// Returns false when another open file description holds it. The lock lives as long as
    /// this mapping's file is open: the kernel drops it when the process dies.
    pub(crate) fn try_lock(&self, slot: usize) -> io::Result<bool> {
        self.map.try_lock(slot)
    }

    /// Releases the lock on byte `slot` (held through this mapping's open file description).
    pub(crate) fn unlock(&self, slot: usize) -> io::Result<()> {
        self.map.unlock(slot)
    }
}
