//! One connection's commands waiting behind its in-flight limit (`waiting.rs` moves them),
//! and the bounds.

use std::collections::VecDeque;

/// Commands one client may have waiting for the tabs at once.
pub const MAX_IN_FLIGHT_PER_CLIENT: usize = 1024;

/// Commands one client may have waiting here, besides those in flight.
pub const MAX_WAITING_PER_CLIENT: usize = 64 * 1024;
/// Their total size.
pub const MAX_WAITING_BYTES_PER_CLIENT: usize = 64 << 20;

/// One connection's waiting commands, oldest first, with the time each arrived.
#[derive(Debug, Default)]
pub struct Backlog {
    queue: VecDeque<(u64, String)>,
    bytes: usize,
}

impl Backlog {
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub(crate) fn has_room_for(&self, text: &str) -> bool {
        self.queue.len() < MAX_WAITING_PER_CLIENT && self.bytes + text.len() <= MAX_WAITING_BYTES_PER_CLIENT
    }

    pub(crate) fn push(&mut self, now_ms: u64, text: &str) {
        self.bytes += text.len();
        self.queue.push_back((now_ms, text.to_owned()));
    }

    pub(crate) fn pop(&mut self) -> Option<(u64, String)> {
        let (at, text) = self.queue.pop_front()?;
        self.bytes -= text.len();
        Some((at, text))
    }

    pub(crate) fn oldest_at(&self) -> Option<u64> {
        self.queue.front().map(|(at, _)| *at)
    }
}
