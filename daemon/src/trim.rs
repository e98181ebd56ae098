//! Giving freed memory back to the system after a burst. glibc keeps what it freed in its
//! arenas, fragmented among live allocations, so a slow client's 32 MiB queue of 32 KB frames
//! can stay resident long after it was dropped (measured: 70+ MiB held after two such
//! clients), and a flood's many small frames after they were written (measured: 25-30 MiB
//! held after a 200,000-message console flood read by puppeteer, 10 MiB at rest);
//! `malloc_trim` returns the free pages of every arena.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Requests within this time of the first share one trim.
const COALESCE: Duration = Duration::from_millis(250);

static PENDING: AtomicBool = AtomicBool::new(false);

/// Returns free heap pages to the system shortly, off the runtime's thread (trimming a large
/// heap can take milliseconds); requests that come meanwhile share it. Called when a client
/// goes, and when the hub goes quiet after much traffic. Needs a tokio runtime.
pub fn release_free_memory_soon() {
    if PENDING.swap(true, Ordering::AcqRel) {
        return;
    }
    tokio::spawn(async {
        tokio::time::sleep(COALESCE).await;
        PENDING.store(false, Ordering::Release);
        let _ = tokio::task::spawn_blocking(release_free_memory).await;
    });
}

/// Returns free heap pages to the system now.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas, under their locks.
    unsafe {
        libc::malloc_trim(0);
    }
}
