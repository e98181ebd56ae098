//! A fair share of the browser per connection. Once a command is handed to the extension it
//! waits in one queue for everyone: the worker hands commands to `chrome.debugger` in arrival
//! order and Chrome answers them in that order, on one socket back. A burst of one client
//! handed on whole (10,000 evaluates, or 200 answers of 1 MB) stood in front of every other
//! client's next command for hundreds of milliseconds.
//!
//! So the core keeps only a small window in flight to the extension, counted in units: a
//! command costs one unit, plus one per [`SLOT_BYTES`] of its connection's latest answer (a
//! client reading 1 MB answers has two in flight, not 32 MB). [`WINDOW`] units keep a lone
//! client's pipeline full (the worker and `chrome.debugger` take about one command at a time;
//! more in flight adds only waiting). Past the window, commands wait on their connection
//! (`waiting.rs`) and go out in turns as answers free room: one command per connection per
//! turn, so a burst from one waits behind the others' next command, not in front of it; a
//! connection with nothing in flight goes first (its one command should not wait a round of
//! everyone else's).
//! A connection whose client has stopped reading gets no turn: its commands wait, not Chrome.
//!
//! A command out for [`LONG_MS`] (`Limits::in_line_ms`) no longer counts: it is not waiting in line but for something
//! else (a promise, a navigation, the human), and Chrome answers others meanwhile. Without
//! that, a few long waits (a client's own `awaitPromise` waiting for its next click) would hold
//! the window, and every client, still.

use crate::session::ConnId;
use std::collections::VecDeque;

/// Units in flight to the extension, all connections together.
pub const WINDOW: u32 = 32;
/// Answer bytes one unit stands for.
pub const SLOT_BYTES: usize = 64 << 10;
/// After this long in flight, a command stops counting in the window (the default of
/// `Limits::in_line_ms`).
pub const LONG_MS: u64 = 500;

/// What one command in flight holds of the window: when it went, and its cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Share {
    at: u64,
    cost: u32,
}

/// What a connection may do when its turn comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// Send its oldest waiting command.
    Go,
    /// Not now (its client is not reading, or it has as many in flight as one may): it keeps
    /// its place.
    Skip,
    /// Nothing waits on it any more.
    Done,
}

/// The window's use and the connections waiting for a turn, in turn order.
#[derive(Debug)]
pub(crate) struct FairShare {
    /// After this long in flight a command stops counting ([`LONG_MS`] by default).
    long_ms: u64,
    used: u32,
    /// The shares counted in `used`, oldest first (a few dozen at most).
    window: VecDeque<Share>,
    turns: VecDeque<ConnId>,
}

impl Default for FairShare {
    fn default() -> Self {
        FairShare::new(LONG_MS)
    }
}

impl FairShare {
    /// An empty window whose commands stop counting after `long_ms` in flight.
    pub(crate) fn new(long_ms: u64) -> Self {
        FairShare { long_ms, used: 0, window: VecDeque::new(), turns: VecDeque::new() }
    }

    /// What one command costs, given its connection's latest answer: at most the whole window,
    /// so that any command fits an empty one.
    pub(crate) fn cost(latest_answer_bytes: usize) -> u32 {
        1 + (latest_answer_bytes / SLOT_BYTES).min(WINDOW as usize - 1) as u32
    }

    /// Whether another command may be handed to the extension at `now`.
    pub(crate) fn has_room(&mut self, now: u64) -> bool {
        while let Some(share) = self.window.front().filter(|s| s.at.saturating_add(self.long_ms) <= now) {
            self.used -= share.cost;
            self.window.pop_front();
        }
        self.used < WINDOW
    }

    /// A command of `cost` goes out at `now`.
    pub(crate) fn take(&mut self, now: u64, cost: u32) -> Share {
        let share = Share { at: now, cost };
        self.used += cost;
        self.window.push_back(share);
        share
    }

    /// A command was answered (or will never be): what it held, if it still counted.
    pub(crate) fn give_back(&mut self, share: Share) {
        if let Some(i) = self.window.iter().position(|s| *s == share) {
            self.window.remove(i);
            self.used -= share.cost;
        }
    }

    /// When the oldest command in the window stops counting, if anyone waits for a turn.
    pub(crate) fn next_expiry(&self) -> Option<u64> {
        if self.turns.is_empty() {
            return None;
        }
        self.window.front().map(|s| s.at.saturating_add(self.long_ms))
    }

    /// `conn` has commands waiting: it gets a turn after those already waiting for one.
    pub(crate) fn queue(&mut self, conn: ConnId) {
        if !self.turns.contains(&conn) {
            self.turns.push_back(conn);
        }
    }

    /// `conn`, with nothing in flight, has a command waiting: it gets the next turn.
    pub(crate) fn queue_first(&mut self, conn: ConnId) {
        if !self.turns.contains(&conn) {
            self.turns.push_front(conn);
        }
    }

    /// The connection whose turn it is, of those `turn` says may go now; it goes to the back
    /// (the caller queues it again if more waits on it). Those skipped keep their order.
    pub(crate) fn next_turn(&mut self, mut turn: impl FnMut(ConnId) -> Turn) -> Option<ConnId> {
        for _ in 0..self.turns.len() {
            let conn = self.turns.pop_front()?;
            match turn(conn) {
                Turn::Go => return Some(conn),
                Turn::Skip => self.turns.push_back(conn),
                Turn::Done => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_costs_a_unit_and_one_per_slot_of_its_connections_latest_answer_at_most_the_window() {
        assert_eq!(FairShare::cost(0), 1);
        assert_eq!(FairShare::cost(SLOT_BYTES - 1), 1);
        assert_eq!(FairShare::cost(1 << 20), 17);
        assert_eq!(FairShare::cost(usize::MAX), WINDOW, "any command fits an empty window");
    }

    #[test]
    fn the_window_fills_and_empties_by_cost() {
        let mut fair = FairShare::default();
        let small = fair.take(0, WINDOW - 1);
        assert!(fair.has_room(0));
        let big = fair.take(0, 17);
        assert!(!fair.has_room(0), "one command may overshoot; the next waits");
        fair.give_back(big);
        assert!(fair.has_room(0));
        fair.give_back(big);
        assert_eq!(fair.used, WINDOW - 1, "given back once");
        fair.give_back(small);
        assert_eq!(fair.used, 0);
    }

    #[test]
    fn a_command_out_for_long_stops_counting_and_its_answer_gives_nothing_back() {
        let mut fair = FairShare::default();
        let long = fair.take(0, WINDOW);
        let late = fair.take(100, 1);
        assert_eq!(fair.next_expiry(), None, "nobody waits");
        fair.queue(7);
        assert_eq!(fair.next_expiry(), Some(LONG_MS));
        assert!(!fair.has_room(LONG_MS - 1));
        assert!(fair.has_room(LONG_MS), "only the later one counts now");
        assert_eq!(fair.next_expiry(), Some(100 + LONG_MS));
        fair.give_back(long);
        assert_eq!(fair.used, 1);
        fair.give_back(late);
        assert_eq!(fair.used, 0);
    }

    #[test]
    fn turns_go_round_once_each_skipped_ones_keep_their_place_and_done_ones_leave() {
        let mut fair = FairShare::default();
        for conn in [1, 2, 3, 1] {
            fair.queue(conn);
        }
        assert_eq!(fair.turns, [1, 2, 3], "one place each");
        // 1 goes, and (more waiting) queues again behind 2 and 3.
        assert_eq!(fair.next_turn(|_| Turn::Go), Some(1));
        fair.queue(1);
        // 2 is skipped (not reading), 3 goes.
        assert_eq!(fair.next_turn(|c| if c == 2 { Turn::Skip } else { Turn::Go }), Some(3));
        assert_eq!(fair.turns, [1, 2]);
        // 1 is done; 2 still may not go: nobody's turn, 2 keeps its place.
        assert_eq!(fair.next_turn(|c| if c == 1 { Turn::Done } else { Turn::Skip }), None);
        assert_eq!(fair.turns, [2]);
        assert_eq!(fair.next_turn(|_| Turn::Go), Some(2));
        assert_eq!(fair.next_turn(|_| Turn::Go), None);
    }

    #[test]
    fn a_connection_with_nothing_in_flight_goes_first() {
        let mut fair = FairShare::default();
        fair.queue(1);
        fair.queue_first(2);
        fair.queue_first(1);
        assert_eq!(fair.turns, [2, 1], "once each");
        assert_eq!(fair.next_turn(|_| Turn::Go), Some(2));
    }
}
