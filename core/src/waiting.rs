//! Commands a client sent while [`MAX_IN_FLIGHT_PER_CLIENT`] of its commands were already
//! waiting for the tabs. Chrome takes any number at once (puppeteer's `$$eval` over an ARIA
//! query sends one `DOM.describeNode` per match, ten thousand on a big page); refusing them
//! broke such clients, while letting them all through would let one client fill the
//! extension's queue for everyone. So they wait here, in order, and go out one for each
//! answer that comes back. The wait is bounded by count and bytes (past it: a CDP error, as
//! before) and by the command timeout, so no command waits forever.
//!
//! While a connection has commands waiting, every command it sends waits behind them, whatever
//! its kind: the tab sees a client's commands in the order it sent them.

use crate::approved::Approved;
use crate::backlog::MAX_WAITING_PER_CLIENT;
use crate::frames::errors;
use crate::session::ConnId;
use crate::{Core, MAX_IN_FLIGHT_PER_CLIENT};

impl Core {
    /// Keeps `text` back when its connection has as many commands in flight as it may, or
    /// others waiting already; `false` when it can go now. Past the bounds it is refused.
    pub(crate) fn wait_if_busy(&mut self, conn: ConnId, text: &str) -> bool {
        let now_ms = self.now_ms;
        let Some(connection) = self.conns.get_mut(&conn) else { return false };
        if connection.in_flight < MAX_IN_FLIGHT_PER_CLIENT && connection.waiting.is_empty() {
            return false;
        }
        if connection.waiting.has_room_for(text) {
            connection.waiting.push(now_ms, text);
            self.waiting_due.arm(now_ms.saturating_add(self.config.limits.command_timeout_ms));
        } else {
            let error = errors::too_many_in_flight(MAX_IN_FLIGHT_PER_CLIENT + MAX_WAITING_PER_CLIENT);
            self.fail_text(conn, text, &error);
        }
        true
    }

    /// Sends what waits on `conn` while it has room in flight.
    pub(crate) fn release_waiting(&mut self, conn: ConnId) {
        loop {
            let Some(connection) = self.conns.get_mut(&conn) else { return };
            if connection.in_flight >= MAX_IN_FLIGHT_PER_CLIENT {
                return;
            }
            let Some((_, text)) = connection.waiting.pop() else { return };
            self.dispatch(conn, &text, Approved::No);
        }
    }

    /// [`Core::release_waiting`] for every connection with commands waiting.
    pub(crate) fn release_all_waiting(&mut self) {
        let mut conns: Vec<ConnId> =
            self.conns.iter().filter(|(_, c)| !c.waiting.is_empty()).map(|(id, _)| *id).collect();
        conns.sort_unstable();
        for conn in conns {
            self.release_waiting(conn);
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
    use crate::testing::*;
    use crate::*;
    use serde_json::json;

    fn evaluate(h: &mut Harness, conn: ConnId, session: &str, id: i64) -> Step {
        h.send(conn, json!({"id": id, "sessionId": session, "method": "Runtime.evaluate"}))
    }

    #[test]
    fn commands_past_the_in_flight_limit_wait_and_go_out_in_order_as_answers_come() {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        h.connect(2);
        let p1 = h.playwright_attach(1)[0].clone();
        let p2 = h.playwright_attach(2)[0].clone();
        let mut sent = Vec::new();
        for id in 0..MAX_IN_FLIGHT_PER_CLIENT as i64 {
            sent.push(evaluate(&mut h, 1, &p1, id).commands()[0].id);
        }
        // 10 more than may be in flight: no error, nothing sent yet, nothing answered.
        for id in 5000..5010 {
            let step = evaluate(&mut h, 1, &p1, id);
            assert!(step.client.is_empty() && step.extension.is_empty(), "{step:?}");
        }
        // A local command waits behind them too.
        assert!(h.send(1, json!({"id": 6000, "method": "Target.getTargets"})).client.is_empty());
        // Another client is not held up.
        assert_eq!(evaluate(&mut h, 2, &p2, 1).commands().len(), 1);
        // Each answer lets the next one out, in the order the client sent them.
        let step = h.answer(sent[0], json!({}));
        assert_eq!(step.only_reply(1)["id"], 0);
        let out = step.commands();
        assert_eq!(out.len(), 1);
        let step = h.answer(sent[1], json!({}));
        assert_eq!(step.commands().len(), 1);
        for &id in &sent[2..10] {
            h.answer(id, json!({}));
        }
        // The tenth answer released the tenth waiting command, then the local one ran.
        let step = h.answer(sent[10], json!({}));
        assert_eq!(step.to(1).iter().map(|f| f["id"].clone()).collect::<Vec<_>>(), [json!(10), json!(6000)]);
        assert!(h.core.conns[&1].waiting.is_empty());
    }

    /// A client whose commands fill its slots at 0 ms, with a command timeout of 1 s.
    fn all_slots_taken() -> (Harness, String) {
        let mut h =
            Harness::with_tabs_and_limits(&[1], Limits { command_timeout_ms: 1000, ..Limits::default() });
        h.connect(1);
        let p1 = h.playwright_attach(1)[0].clone();
        for id in 0..MAX_IN_FLIGHT_PER_CLIENT as i64 {
            evaluate(&mut h, 1, &p1, id);
        }
        (h, p1)
    }

    #[test]
    fn a_waiting_command_times_out_at_the_deadline_its_own_arrival_set() {
        let (mut h, p1) = all_slots_taken();
        // One more than the slots the first ones free: the last waits on past their timeout.
        h.now = 700;
        for id in 0..=MAX_IN_FLIGHT_PER_CLIENT as i64 {
            evaluate(&mut h, 1, &p1, 10_000 + id);
        }
        assert_eq!(h.next_deadline(), Some(1000), "those in flight first");
        let step = h.tick(1000);
        assert_eq!(step.to(1).len(), MAX_IN_FLIGHT_PER_CLIENT, "only those in flight time out");
        assert_eq!(h.next_deadline(), Some(1700), "then the one still waiting");
        assert!(h.tick(1699).client.is_empty(), "not yet");
        let step = h.tick(1700);
        assert_eq!(step.only_reply(1)["id"], 10_000 + MAX_IN_FLIGHT_PER_CLIENT as i64);
        assert!(h.core.conns[&1].waiting.is_empty());
    }

    #[test]
    fn waiting_is_bounded_and_a_command_never_waits_past_the_timeout() {
        let (mut h, p1) = all_slots_taken();
        h.tick(500);
        for id in 0..MAX_WAITING_PER_CLIENT as i64 {
            let text = format!(r#"{{"id":{},"sessionId":"{p1}","method":"Runtime.evaluate"}}"#, 10_000 + id);
            h.core.client_message(h.now, 1, &text);
        }
        assert!(h.drain().client.is_empty());
        let step = evaluate(&mut h, 1, &p1, 1_000_000);
        assert!(step.only_reply(1)["error"]["message"].as_str().unwrap().contains("waiting"));
        // The tab never answers: the ones in flight time out first (a slot each)...
        let step = h.tick(1000);
        assert_eq!(step.to(1).len(), MAX_IN_FLIGHT_PER_CLIENT);
        assert_eq!(step.commands().len(), MAX_IN_FLIGHT_PER_CLIENT, "as many went out in their place");
        // ...then those that waited past the timeout get the same error, sent or not.
        let step = h.tick(1500);
        assert_eq!(step.to(1).len(), MAX_WAITING_PER_CLIENT - MAX_IN_FLIGHT_PER_CLIENT);
        assert!(step
            .to(1)
            .iter()
            .all(|f| f["error"]["message"].as_str().unwrap().contains("did not answer")));
        assert!(h.core.conns[&1].waiting.is_empty());
    }
}
