//! Commands a client sent while [`MAX_IN_FLIGHT_PER_CLIENT`] of its commands were already
//! waiting for the tabs, while the window to the extension was full, or while its client was
//! not reading (`fair_share.rs`): they go out in turns. Chrome takes any number at once (puppeteer's `$$eval` over an ARIA
//! query sends one `DOM.describeNode` per match, ten thousand on a big page); refusing them
//! broke such clients, while letting them all through would let one client fill the
//! extension's queue for everyone. So they wait here, in order, and go out as answers come
//! back, one per connection per turn. The wait is bounded by count and bytes (past it: a CDP error, as
//! before) and by the command timeout, so no command waits forever.
//!
//! While a connection has commands waiting, every command it sends waits behind them, whatever
//! its kind: the tab sees a client's commands in the order it sent them.

use crate::approved::Approved;
use crate::backlog::MAX_WAITING_PER_CLIENT;
use crate::fair_share::Turn;
use crate::frames::errors;
use crate::session::ConnId;
use crate::{Core, MAX_IN_FLIGHT_PER_CLIENT};

impl Core {
    /// Keeps `text` back when its connection has as many commands in flight as it may, others
    /// waiting already, or its client is not reading, or when the window to the extension is
    /// full; `false` when it can go now. Past the bounds it is refused.
    pub(crate) fn wait_if_busy(&mut self, conn: ConnId, text: &str) -> bool {
        let now_ms = self.now_ms;
        let window_full = !self.fair.has_room(now_ms);
        let Some(connection) = self.conns.get_mut(&conn) else { return false };
        if connection.in_flight < MAX_IN_FLIGHT_PER_CLIENT
            && connection.waiting.is_empty()
            && !connection.not_reading
            && !window_full
        {
            return false;
        }
        if connection.waiting.has_room_for(text) {
            connection.waiting.push(now_ms, text);
            if connection.in_flight == 0 {
                self.fair.queue_first(conn);
            } else {
                self.fair.queue(conn);
            }
            self.waiting_due.arm(now_ms.saturating_add(self.config.limits.command_timeout_ms));
        } else {
            let error = errors::too_many_in_flight(MAX_IN_FLIGHT_PER_CLIENT + MAX_WAITING_PER_CLIENT);
            self.fail_text(conn, text, &error);
        }
        true
    }

    /// Sends waiting commands, one per connection per turn, while the window has room.
    pub(crate) fn hand_out_turns(&mut self) {
        // A command sent in a turn can end in a call back here (a connection closed by it).
        if self.handing_turns {
            return;
        }
        self.handing_turns = true;
        while self.fair.has_room(self.now_ms) {
            let conns = &self.conns;
            let turn = |conn| match conns.get(&conn) {
                None => Turn::Done,
                Some(c) if c.waiting.is_empty() => Turn::Done,
                Some(c) if c.not_reading || c.in_flight >= MAX_IN_FLIGHT_PER_CLIENT => Turn::Skip,
                Some(_) => Turn::Go,
            };
            let Some(conn) = self.fair.next_turn(turn) else { break };
            let connection = self.conns.get_mut(&conn).expect("its turn came");
            let (_, text) = connection.waiting.pop().expect("its turn came");
            if !connection.waiting.is_empty() {
                self.fair.queue(conn);
            }
            self.dispatch(conn, &text, Approved::No);
        }
        self.handing_turns = false;
    }

    /// Whether `conn`'s client reads what it is sent (the shell watches its socket's queue):
    /// while it does not, its commands wait here rather than in Chrome on its behalf.
    pub fn client_reading(&mut self, now: u64, conn: ConnId, reading: bool) {
        self.advance(now);
        let Some(connection) = self.conns.get_mut(&conn) else { return };
        connection.not_reading = !reading;
        if reading {
            self.hand_out_turns();
        }
    }

    /// Answers commands that waited past the command timeout, as if the tab had not answered.
    pub(crate) fn expire_waiting(&mut self) {
        let now = self.now_ms;
        if !self.waiting_due.is_due(now) {
            return;
        }
        let timeout = self.config.limits.command_timeout_ms;
        let late_at = |at: u64| at.saturating_add(timeout) <= now;
        let mut late: Vec<ConnId> = self
            .conns
            .iter()
            .filter(|(_, c)| c.waiting.oldest_at().is_some_and(late_at))
            .map(|(id, _)| *id)
            .collect();
        late.sort_unstable();
        for conn in late {
            while let Some(at) = self.conns.get(&conn).and_then(|c| c.waiting.oldest_at()) {
                if !late_at(at) {
                    break;
                }
                let (_, text) = self.conns.get_mut(&conn).expect("checked").waiting.pop().expect("checked");
                self.fail_text(conn, &text, &errors::timed_out(timeout));
            }
        }
        let next = self.conns.values().filter_map(|c| c.waiting.oldest_at()).min();
        self.waiting_due.set(next.map(|at| at.saturating_add(timeout)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fair_share::WINDOW;
    use crate::testing::*;
    use crate::*;
    use serde_json::json;

    fn evaluate(h: &mut Harness, conn: ConnId, session: &str, id: i64) -> Step {
        h.send(conn, json!({"id": id, "sessionId": session, "method": "Runtime.evaluate"}))
    }

    /// Two clients on tab 1; the first fills the window to the extension: the ids sent.
    fn window_filled_by_one() -> (Harness, String, String, Vec<RequestId>) {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        h.connect(2);
        let p1 = h.playwright_attach(1)[0].clone();
        let p2 = h.playwright_attach(2)[0].clone();
        let sent = (0..WINDOW as i64).map(|id| evaluate(&mut h, 1, &p1, id).commands()[0].id).collect();
        (h, p1, p2, sent)
    }

    #[test]
    fn past_the_window_commands_wait_and_go_out_in_turns_each_clients_in_its_order() {
        let (mut h, p1, p2, sent) = window_filled_by_one();
        // 10 more: no error, nothing sent yet, nothing answered.
        for id in 5000..5010 {
            let step = evaluate(&mut h, 1, &p1, id);
            assert!(step.client.is_empty() && step.extension.is_empty(), "{step:?}");
        }
        // A local command waits behind them too.
        assert!(h.send(1, json!({"id": 6000, "method": "Target.getTargets"})).client.is_empty());
        // Another client's command waits for its turn, not behind the first one's burst: with
        // nothing in flight, it goes at the next answer.
        let step = h.send(2, json!({"id": 1, "sessionId": p2, "method": "Page.reload"}));
        assert!(step.extension.is_empty());
        let step = h.answer(sent[0], json!({}));
        assert_eq!(step.only_reply(1)["id"], 0);
        assert_eq!(step.commands().iter().map(|c| c.method.as_str()).collect::<Vec<_>>(), ["Page.reload"]);
        // Then one per answer, in the order the first client sent them.
        let step = h.answer(sent[1], json!({}));
        assert_eq!(
            step.commands().iter().map(|c| c.method.as_str()).collect::<Vec<_>>(),
            ["Runtime.evaluate"]
        );
        for &id in &sent[2..11] {
            assert_eq!(h.answer(id, json!({})).commands().len(), 1);
        }
        // The last one went with the window full: the local one waited for the next answer.
        let step = h.answer(sent[11], json!({}));
        assert_eq!(step.to(1).iter().map(|f| f["id"].clone()).collect::<Vec<_>>(), [json!(11), json!(6000)]);
        assert!(h.core.conns[&1].waiting.is_empty());
    }

    #[test]
    fn a_burst_of_large_answers_holds_few_in_flight() {
        let (mut h, p1, p2, sent) = window_filled_by_one();
        // Its answers are 1 MB: each of its commands now counts for as many units.
        let big = json!({"value": "x".repeat(1 << 20)});
        for id in 100..140 {
            evaluate(&mut h, 1, &p1, id);
        }
        let mut out = Vec::new();
        for &id in &sent {
            out.extend(h.answer(id, big.clone()).commands().iter().map(|c| c.id));
        }
        // As many as the window holds at that size: 32 units of 17.
        assert_eq!(fair_share::FairShare::cost(1 << 20), 17);
        assert_eq!(out.len(), 2);
        // The other client's command waits behind at most those, and goes at the next answer.
        assert!(h.send(2, json!({"id": 1, "sessionId": p2, "method": "Page.reload"})).extension.is_empty());
        let step = h.answer(out[0], big);
        assert_eq!(step.commands()[0].method, "Page.reload");
    }

    #[test]
    fn a_client_that_is_not_reading_gets_no_turn_until_it_reads_again() {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        h.connect(2);
        let p1 = h.playwright_attach(1)[0].clone();
        let p2 = h.playwright_attach(2)[0].clone();
        h.core.client_reading(h.now, 1, false);
        assert!(evaluate(&mut h, 1, &p1, 1).extension.is_empty(), "its commands wait");
        assert_eq!(evaluate(&mut h, 2, &p2, 1).commands().len(), 1, "others' go");
        h.core.client_reading(h.now, 1, true);
        let step = h.drain();
        assert_eq!(step.commands().len(), 1, "it reads again: its command goes");
        assert_eq!(evaluate(&mut h, 1, &p1, 2).commands().len(), 1);
    }

    #[test]
    fn a_closed_client_gives_back_its_share_of_the_window() {
        let (mut h, _, p2, _) = window_filled_by_one();
        assert!(evaluate(&mut h, 2, &p2, 1).extension.is_empty());
        h.core.client_disconnected(h.now, 1);
        let step = h.drain();
        assert_eq!(step.commands().iter().filter(|c| c.method == "Runtime.evaluate").count(), 1);
    }

    #[test]
    fn commands_that_wait_long_in_flight_do_not_hold_the_others_still() {
        // The window is full of commands waiting for something else (say, awaited promises).
        let (mut h, _, p2, _) = window_filled_by_one();
        assert!(h.send(2, json!({"id": 1, "sessionId": p2, "method": "Page.reload"})).extension.is_empty());
        assert_eq!(h.next_deadline(), Some(fair_share::LONG_MS));
        let step = h.tick(fair_share::LONG_MS);
        assert_eq!(step.commands()[0].method, "Page.reload", "it goes once they stop counting");
    }

    #[test]
    fn how_long_a_command_counts_in_line_is_a_limit() {
        let mut h = Harness::with_tabs_and_limits(&[1], Limits { in_line_ms: 2000, ..Limits::default() });
        h.connect(1);
        h.connect(2);
        let p1 = h.playwright_attach(1)[0].clone();
        let p2 = h.playwright_attach(2)[0].clone();
        for id in 0..WINDOW as i64 {
            evaluate(&mut h, 1, &p1, id);
        }
        assert!(evaluate(&mut h, 2, &p2, 1).extension.is_empty());
        assert_eq!(h.next_deadline(), Some(2000));
        assert!(h.tick(fair_share::LONG_MS).extension.is_empty(), "still in line");
        assert_eq!(h.tick(2000).commands().len(), 1);
    }

    /// A client whose commands fill the window at 0 ms, with a command timeout of 400 ms (less
    /// than `LONG_MS`: these commands count in the window until they time out).
    fn all_slots_taken() -> (Harness, String) {
        const { assert!(400 < fair_share::LONG_MS) };
        let mut h =
            Harness::with_tabs_and_limits(&[1], Limits { command_timeout_ms: 400, ..Limits::default() });
        h.connect(1);
        let p1 = h.playwright_attach(1)[0].clone();
        for id in 0..WINDOW as i64 {
            evaluate(&mut h, 1, &p1, id);
        }
        (h, p1)
    }

    #[test]
    fn a_waiting_command_times_out_at_the_deadline_its_own_arrival_set() {
        let (mut h, p1) = all_slots_taken();
        // One more than the slots the first ones free: the last waits on past their timeout.
        h.now = 140;
        for id in 0..=WINDOW as i64 {
            evaluate(&mut h, 1, &p1, 10_000 + id);
        }
        assert_eq!(h.next_deadline(), Some(400), "those in flight first");
        let step = h.tick(400);
        assert_eq!(step.to(1).len(), WINDOW as usize, "only those in flight time out");
        assert_eq!(h.next_deadline(), Some(540), "then the one still waiting");
        assert!(h.tick(539).client.is_empty(), "not yet");
        let step = h.tick(540);
        assert_eq!(step.only_reply(1)["id"], 10_000 + WINDOW as i64);
        assert!(h.core.conns[&1].waiting.is_empty());
    }

    #[test]
    fn waiting_is_bounded_and_a_command_never_waits_past_the_timeout() {
        let (mut h, p1) = all_slots_taken();
        h.tick(200);
        for id in 0..MAX_WAITING_PER_CLIENT as i64 {
            let text = format!(r#"{{"id":{},"sessionId":"{p1}","method":"Runtime.evaluate"}}"#, 10_000 + id);
            h.core.client_message(h.now, 1, &text);
        }
        assert!(h.drain().client.is_empty());
        let step = evaluate(&mut h, 1, &p1, 1_000_000);
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("waiting"));
        // The tab never answers: the ones in flight time out first (a slot each)...
        let step = h.tick(400);
        assert_eq!(step.to(1).len(), WINDOW as usize);
        assert_eq!(step.commands().len(), WINDOW as usize, "as many went out in their place");
        // ...then those that waited past the timeout get the same error, sent or not.
        let step = h.tick(600);
        assert_eq!(step.to(1).len(), MAX_WAITING_PER_CLIENT - WINDOW as usize);
        assert!(step
            .to(1)
            .iter()
            .all(|f| f["error"]["message"].as_str().unwrap().contains("did not answer")));
        assert!(h.core.conns[&1].waiting.is_empty());
    }
}
