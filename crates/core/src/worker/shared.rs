//! Memory the parent and its worker both map: a file in /dev/shm (else the temporary
//! directory), created by the parent, opened by the worker by path, and unlinked as soon as
//! both have it mapped, so nothing is left behind.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use memmap2::MmapMut;

/// The smallest region made: one page.
const MIN_LEN: u64 = 4096;

pub(crate) struct Shared {
    map: MmapMut,
    _file: File,
}

impl Shared {
    /// A new region of at least `len` bytes, and the path the worker opens it by: in /dev/shm,
    /// else (no room there, or none) in the temporary directory.
    pub fn create(len: u64) -> io::Result<(Shared, PathBuf)> {
        let len = len.max(MIN_LEN);
        let shm = Path::new("/dev/shm");
        let mut last = None;
        for dir in [
            shm.is_dir().then(|| shm.to_path_buf()),
            Some(std::env::temp_dir()),
        ]
        .into_iter()
        .flatten()
        {
            match Shared::create_in(&dir, len) {
                Ok(made) => return Ok(made),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no directory for shared memory")))
    }

    fn create_in(dir: &Path, len: u64) -> io::Result<(Shared, PathBuf)> {
        let named = tempfile::Builder::new()
            .prefix("blocksweep-worker-")
            .tempfile_in(dir)?;
        // Every block reserved now: a full tmpfs is an error here, not a SIGBUS at the first
        // write into the mapping later.
        rustix::fs::fallocate(named.as_file(), rustix::fs::FallocateFlags::empty(), 0, len)
            .map_err(|e| io::Error::other(format!("{} bytes in {}: {e}", len, dir.display())))?;
        let (file, path) = named.keep().map_err(|e| e.error)?;
        Ok((Shared::map(file)?, path))
    }

    /// The region the parent made at `path`, `len` bytes.
    pub fn open(path: &Path, len: u64) -> io::Result<Shared> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        if file.metadata()?.len() < len {
            return Err(io::Error::other(format!(
                "{} is shorter than {len} bytes",
                path.display()
            )));
        }
        Shared::map(file)
    }

    fn map(file: File) -> io::Result<Shared> {
        // SAFETY: the file is this run's own (a fresh temporary file of the parent's, opened
        // only by its one worker), so no other process truncates it while it is mapped; both
        // sides touch it only between a request and its reply, never at the same time.
        let map = unsafe { MmapMut::map_mut(&file)? };
        Ok(Shared { map, _file: file })
    }

    pub fn len(&self) -> u64 {
        self.map.len() as u64
    }

    pub fn bytes(&self, len: u64) -> &[u8] {
        &self.map[..len as usize]
    }

    pub fn bytes_mut(&mut self, len: u64) -> &mut [u8] {
        &mut self.map[..len as usize]
    }
}
