//! Host copies on every core: a leaf below the frame, the backends' checked reads and the
//! worker, which all move planes and outputs of tens of megabytes between host buffers.

use rayon::prelude::*;

/// Copies `src` into `dst` (equal lengths) on every core, in 1 MiB chunks. A backend's upload
/// into mapped staging memory is a plain host copy of each 33 MB plane at 4K, and one core
/// (with the first-touch page faults of fresh mappings) makes it most of the upload.
pub fn copy_parallel<T: Copy + Send + Sync>(dst: &mut [T], src: &[T]) {
    let chunk = ((1 << 20) / std::mem::size_of::<T>().max(1)).max(1); // 1 MiB
    dst.par_chunks_mut(chunk)
        .zip(src.par_chunks(chunk))
        .for_each(|(d, s)| d.copy_from_slice(s));
}
