//! Files the daemon reads again when they change (the policy, the agents' credentials): polled by
//! modification time, which works the same on every platform and file system.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How often a watched file is looked at.
const POLL: Duration = Duration::from_millis(500);

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Calls `apply` with what `load` makes of `path` each time the file changes (appears, is
/// rewritten or goes away), and says it "reloaded" once `apply` is done: in force then (tests
/// and scripts act on that line). A version `load` refuses is skipped with a warning naming
/// `what`: the last good one stays in force.
pub async fn watch<T, Applied: Future<Output = ()>>(
    path: PathBuf,
    what: &'static str,
    load: impl Fn(&Path) -> Result<T, String>,
    mut apply: impl FnMut(T) -> Applied,
) {
    let mut seen = modified(&path);
    let mut interval = tokio::time::interval(POLL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let now = modified(&path);
        if now == seen {
            continue;
        }
        seen = now;
        match load(&path) {
            Ok(value) => {
                apply(value).await;
                tracing::info!(path = %path.display(), "{what} reloaded");
            }
            Err(e) => tracing::warn!("the {what} changed but is not valid; keeping the last one: {e}"),
        }
    }
}
