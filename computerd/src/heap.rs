//! How computerd's heap hands memory back to the kernel. A transfer moves
//! its data through buffers of a few hundred KiB (the HTTP body's reads,
//! the tar pipe's chunks) that are freed as fast as they are made. With
//! glibc's defaults each one was mapped fresh, or trimmed off the heap when
//! freed, so every byte of an upload also paid a page fault and a page
//! clear: a seventh of computerd's time in a 1 GiB upload. Buffers under
//! [`MAP_FROM_BYTES`] now come from the heap, and the heap keeps up to
//! [`KEEP_FREE_BYTES`] free at its top for the next ones.
//!
//! The host does not do the same: its memory is held to a smaller budget,
//! and keeping its buffers raised its peak during a transfer from 27 to
//! 35.5 MB.

/// Allocations from this size on get a mapping of their own (glibc's
/// default moves between 128 KiB and 32 MiB as it sees frees).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAP_FROM_BYTES: i32 = 4 * 1024 * 1024;
/// Free memory at the top of a heap that is kept rather than returned.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const KEEP_FREE_BYTES: i32 = 32 * 1024 * 1024;

/// Sets the thresholds above; called first thing in `main`, before any
/// thread starts. Elsewhere than glibc it does nothing.
pub fn keep_freed_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters, and runs
    // before any other thread could be allocating.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MAP_FROM_BYTES);
        libc::mallopt(libc::M_TRIM_THRESHOLD, KEEP_FREE_BYTES);
    }
}
