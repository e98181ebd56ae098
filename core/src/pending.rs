//! Commands sent to the extension and waiting for its answer, oldest first, so that those a
//! tab never answers (a frozen or hung tab) can be answered with an error after a bounded time.

use std::collections::BTreeMap;
use tabtunnel_wire::RequestId;

/// One command sent, and when.
pub(crate) struct Sent<T> {
    pub sent_at_ms: u64,
    pub what: T,
}

/// Request ids grow with time, so the map's order is the order of sending.
pub(crate) struct PendingCommands<T> {
    map: BTreeMap<RequestId, Sent<T>>,
    next_id: RequestId,
}

impl<T> Default for PendingCommands<T> {
    fn default() -> Self {
        PendingCommands { map: BTreeMap::new(), next_id: 1 }
    }
}

impl<T> PendingCommands<T> {
    /// Records a command sent now; returns the id to send it with.
    pub fn insert(&mut self, now_ms: u64, what: T) -> RequestId {
        let id = self.next_id;
        self.next_id += 1;
        self.map.insert(id, Sent { sent_at_ms: now_ms, what });
        id
    }

    /// When the oldest command was sent: ids grow with time (the core's clock never goes back).
    pub fn oldest_sent_at(&self) -> Option<u64> {
        self.map.first_key_value().map(|(_, w)| w.sent_at_ms)
    }

    pub fn take(&mut self, id: RequestId) -> Option<T> {
        self.map.remove(&id).map(|w| w.what)
    }

    /// Removes and returns, oldest first, every command that has waited `age_ms` or more at
    /// `now_ms`.
    pub fn take_older_than(&mut self, now_ms: u64, age_ms: u64) -> Vec<T> {
        let mut expired = Vec::new();
        while let Some(entry) = self.map.first_entry() {
            if now_ms.saturating_sub(entry.get().sent_at_ms) < age_ms {
                break;
            }
            expired.push(entry.remove().what);
        }
        expired
    }

    /// Removes and returns every command, oldest first.
    pub fn drain(&mut self) -> Vec<T> {
        std::mem::take(&mut self.map).into_values().map(|w| w.what).collect()
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.map.retain(|_, w| keep(&w.what));
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expires_oldest_first_and_only_what_is_old_enough() {
        let mut p = PendingCommands::default();
        let a = p.insert(0, "a");
        let b = p.insert(5, "b");
        p.insert(10, "c");
        assert_eq!((a, b), (1, 2));
        assert!(p.take_older_than(3, 5).is_empty(), "young at the start of the clock");
        assert_eq!(p.take_older_than(9, 5), ["a"]);
        assert_eq!(p.take(b), Some("b"));
        assert!(p.take_older_than(14, 5).is_empty());
        assert_eq!(p.len(), 1);
        assert_eq!(p.drain(), ["c"]);
        assert_eq!(p.len(), 0);
    }
}
