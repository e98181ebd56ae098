//! A flood of the guard (issue 26): an agent's page can send writes without end (a script's
//! `fetch` in a loop, form submissions), and each would wait on the guard: read from the page,
//! then asked about. So at most [`WRITES_WAITING_PER_TAB`] writes of a tab wait on the guard at
//! once (being read, or asked about); one past the bound is refused at once, unread and unasked,
//! as a denied one is (`paused_refuse`: a form `204`, any other write `BlockedByClient`). The
//! bound is checked after the one request an answer allowed is spent, so an Allow once is never
//! refused by it. A write stops waiting when it is let go, sent again, or refused (answered,
//! settled unasked, withdrawn); the tab's reset, its going, and the kill switch forget the
//! tab's count. The trail gets one line as a tab's flood starts (its first write past the
//! bound) and one with the count refused as it ends: none refused for [`FLOOD_QUIET_MS`], seen
//! as a write stops waiting or finds room, or the tab's count forgotten.

use super::held::{Bounced, PausedKey};
use super::RULE;
use crate::audit::Outcome;
use crate::{AgentId, Core};
use std::collections::{HashMap, HashSet};
use tabtunnel_wire::TabId;

/// How many writes of one tab may wait on the guard at once. A write being read counts too, and
/// a page's own burst (a single-page app's GraphQL queries as it loads, each a `POST` read before
/// it goes) must fit: so more than a few.
pub(crate) const WRITES_WAITING_PER_TAB: usize = 16;

/// A tab's flood is over once none of its writes was refused for this long (a flood's writes
/// settled at once, refused moments ago, would otherwise end and start it again many times a
/// second).
pub(crate) const FLOOD_QUIET_MS: u64 = 5_000;

/// A write of a tab: its child session (`None`: the page) and Chrome's requestId.
type Write = (Option<String>, String);

/// The writes waiting on the guard, per tab, and each tab's flood.
#[derive(Debug, Default)]
pub(crate) struct Floods {
    tabs: HashMap<TabId, TabWrites>,
}

#[derive(Debug, Default)]
struct TabWrites {
    waiting: HashSet<Write>,
    flood: Option<Flood>,
}

/// A tab's flood: whose tab, how many writes were refused unread, and when the last one was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Flood {
    pub agent: AgentId,
    pub refused: u64,
    last_ms: u64,
}

/// Whether a write may wait on the guard.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Admit {
    /// It waits; `ended`: the tab's flood, over by now.
    Waits { ended: Option<Flood> },
    /// Past the bound: refused; `started` for the tab's first.
    Refused { started: bool },
}

impl Floods {
    /// A write of `agent`'s tab would wait on the guard.
    pub fn admit(&mut self, tab: TabId, write: Write, agent: &AgentId, now: u64) -> Admit {
        let writes = self.tabs.entry(tab).or_default();
        if writes.waiting.len() < WRITES_WAITING_PER_TAB || writes.waiting.contains(&write) {
            writes.waiting.insert(write);
            return Admit::Waits { ended: writes.over(now) };
        }
        let started = writes.flood.is_none();
        let flood =
            writes.flood.get_or_insert_with(|| Flood { agent: agent.clone(), refused: 0, last_ms: now });
        flood.refused += 1;
        flood.last_ms = now;
        Admit::Refused { started }
    }

    /// A write stopped waiting: the tab's flood, if it is over by now.
    pub fn done(&mut self, tab: TabId, write: &Write, now: u64) -> Option<Flood> {
        let writes = self.tabs.get_mut(&tab)?;
        if !writes.waiting.remove(write) {
            return None;
        }
        let ended = writes.over(now);
        if writes.waiting.is_empty() && writes.flood.is_none() {
            self.tabs.remove(&tab);
        }
        ended
    }

    /// The tab starts over or is gone: its count goes, and its flood ends.
    pub fn forget_tab(&mut self, tab: TabId) -> Option<Flood> {
        self.tabs.remove(&tab).and_then(|w| w.flood)
    }

    /// The kill switch: every count goes, and every flood ends.
    pub fn forget_all(&mut self) -> Vec<(TabId, Flood)> {
        let mut floods: Vec<(TabId, Flood)> =
            self.tabs.drain().filter_map(|(tab, w)| Some((tab, w.flood?))).collect();
        floods.sort_by_key(|(tab, _)| *tab);
        floods
    }

    #[cfg(test)]
    pub fn waiting(&self, tab: TabId) -> usize {
        self.tabs.get(&tab).map_or(0, |w| w.waiting.len())
    }
}

impl TabWrites {
    /// The flood, taken, if none of its writes was refused for [`FLOOD_QUIET_MS`].
    fn over(&mut self, now: u64) -> Option<Flood> {
        self.flood.take_if(|f| now >= f.last_ms + FLOOD_QUIET_MS)
    }
}

impl Bounced {
    pub(super) fn key(&self) -> PausedKey {
        (self.tab, self.child.clone(), self.request.request_id.clone())
    }
}

impl Core {
    /// Whether the guard's bound refuses this write (its tab has as many waiting as it may): the
    /// caller refuses it as a denied one. The trail hears of the tab's first such write.
    pub(super) fn flooded(&mut self, key: &PausedKey) -> bool {
        let Some(agent) = self.tabs.get(&key.0).map(|s| s.tab.owner.clone()) else { return false };
        match self.gestures.floods.admit(key.0, (key.1.clone(), key.2.clone()), &agent, self.now_ms) {
            Admit::Waits { ended } => {
                if let Some(flood) = ended {
                    self.flood_ended(key.0, flood);
                }
                false
            }
            Admit::Refused { started } => {
                if started {
                    let rule = format!(
                        "{RULE}: a flood of writes started on this tab: past {WRITES_WAITING_PER_TAB} waiting, each is refused unread and unasked"
                    );
                    self.audit(&agent, Some(key.0), "request", None, Outcome::Denied { rule });
                }
                true
            }
        }
    }

    /// A write no longer waits on the guard (let go, sent again, refused).
    pub(super) fn write_done(&mut self, key: &PausedKey) {
        if let Some(flood) = self.gestures.floods.done(key.0, &(key.1.clone(), key.2.clone()), self.now_ms) {
            self.flood_ended(key.0, flood);
        }
    }

    /// The tab's count goes (a reset, the tab gone).
    pub(super) fn floods_forget_tab(&mut self, tab: TabId) {
        if let Some(flood) = self.gestures.floods.forget_tab(tab) {
            self.flood_ended(tab, flood);
        }
    }

    /// The kill switch: every tab's count goes.
    pub(crate) fn floods_forget_all(&mut self) {
        for (tab, flood) in self.gestures.floods.forget_all() {
            self.flood_ended(tab, flood);
        }
    }

    fn flood_ended(&mut self, tab: TabId, flood: Flood) {
        let rule = format!(
            "{RULE}: the flood of writes on this tab ended: {} writes refused unread and unasked",
            flood.refused
        );
        self.audit(&flood.agent, Some(tab), "request", None, Outcome::Denied { rule });
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{
        agent_page, approvals, audits, fetch_commands, inspection, paused, pay_button,
    };
    use super::*;
    use crate::testing::*;
    use crate::*;
    use serde_json::json;
    use tabtunnel_wire::{ApprovalAnswer, BrowserOp};

    /// A script's payment, `n`th of its kind (each its own body, so no refusal stands for the
    /// next), from the page (`child` None) or a child session.
    fn payment(n: u32) -> String {
        format!(
            r#"{{"requestId":"F{n}","request":{{"url":"https://shop.test/api/pay","method":"POST","headers":{{"Content-Type":"application/json"}},"postData":"{{\"amount\":124000,\"n\":{n}}}","hasPostData":true}},"frameId":"PAGE1","resourceType":"Fetch"}}"#
        )
    }

    const BLOCKED: &str = "Fetch.failRequest";
    const N: u32 = WRITES_WAITING_PER_TAB as u32;

    /// The first `n` payments, each failed at once and read: the read ops to answer.
    fn payments_read(h: &mut Harness, range: std::ops::Range<u32>) -> Vec<u64> {
        range
            .map(|n| {
                let step = h.ext(paused(&payment(n)));
                assert_eq!(fetch_commands(&step)[0].0, BLOCKED);
                inspection(&step).0
            })
            .collect()
    }

    fn flood_lines(step: &Step) -> Vec<String> {
        audits(step)
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Denied { rule } if rule.contains("flood") => Some(rule.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_write_past_the_bound_on_a_tab_is_refused_unread_and_unasked_and_others_tabs_are_not() {
        let (mut h, _) = agent_page();
        let reads = payments_read(&mut h, 0..N);
        assert_eq!(h.core.gestures.floods.waiting(1), N as usize);
        // The next: failed as a denied one is, never read, never asked about.
        let step = h.ext(paused(&payment(N)));
        assert_eq!(
            fetch_commands(&step),
            [(BLOCKED.to_owned(), json!({"requestId": format!("F{N}"), "errorReason": "BlockedByClient"}))]
        );
        assert!(step.browser_ops().is_empty() && approvals(&step).is_empty(), "unread, unasked");
        assert_eq!(flood_lines(&step).len(), 1, "the trail hears the flood start");
        // A form submission past the bound gets a denied one's answer: 204.
        let form = r#"{"requestId":"FORM","request":{"url":"https://shop.test/pay","method":"POST","headers":{"Content-Type":"application/x-www-form-urlencoded"},"postData":"cardnumber=4242424242424242"},"frameId":"PAGE1","resourceType":"Document"}"#;
        let step = h.ext(paused(form));
        assert_eq!(
            fetch_commands(&step),
            [(
                "Fetch.fulfillRequest".to_owned(),
                json!({"requestId": "FORM", "responseCode": 204, "responseHeaders": []})
            )]
        );
        assert!(
            step.browser_ops().is_empty() && flood_lines(&step).is_empty(),
            "one line, not one per write"
        );
        // Reads go on.
        let read = r#"{"requestId":"G1","request":{"url":"https://shop.test/search?q=x","method":"GET","headers":{}},"frameId":"PAGE1","resourceType":"Document"}"#;
        assert_eq!(fetch_commands(&h.ext(paused(read)))[0].0, "Fetch.continueRequest");
        // Another tab's write waits and is asked about.
        h.ext(FromExtension::TabShared(agent_tab(2, "b", true)));
        h.connect_as(2, "b");
        h.playwright_attach(2);
        h.drain();
        let other = event(2, None, "Fetch.requestPaused", &payment(200));
        let (op, _) = inspection(&h.ext(other));
        assert_eq!(approvals(&h.answer(op, json!({"url": "https://shop.test/checkout"}))).len(), 1);
        // They are all asked about; the human denies one: the next write waits again.
        let asked: Vec<u64> = reads
            .into_iter()
            .map(|op| approvals(&h.answer(op, json!({"url": "https://shop.test/checkout"})))[0].id)
            .collect();
        assert_eq!(asked.len(), N as usize);
        assert!(approvals(&h.ext(paused(&payment(N + 1)))).is_empty());
        h.ext(FromExtension::ApprovalAnswer { id: asked[0], answer: ApprovalAnswer::Deny });
        let (read, _) = inspection(&h.ext(paused(&payment(N + 2))));
        // All answered and the last one read: nothing waits, but the flood is not over yet.
        let mut lines = Vec::new();
        for id in &asked[1..] {
            lines.extend(flood_lines(
                &h.ext(FromExtension::ApprovalAnswer { id: *id, answer: ApprovalAnswer::Deny }),
            ));
        }
        assert!(lines.is_empty(), "the last one still waits");
        let step = h.answer(read, json!({"url": "https://shop.test/checkout"}));
        lines.extend(flood_lines(&step));
        if let Some(last) = approvals(&step).first().map(|r| r.id) {
            lines.extend(flood_lines(
                &h.ext(FromExtension::ApprovalAnswer { id: last, answer: ApprovalAnswer::Deny }),
            ));
        }
        assert!(lines.is_empty(), "writes settled at once end no flood: {lines:?}");
        assert_eq!(h.core.gestures.floods.waiting(1), 0);
        // None refused for a while: over, as the next write finds room.
        h.tick(h.now + FLOOD_QUIET_MS);
        let step = h.ext(paused(&payment(N + 3)));
        inspection(&step);
        assert_eq!(
            flood_lines(&step),
            [format!("{RULE}: the flood of writes on this tab ended: 3 writes refused unread and unasked")]
        );
    }

    #[test]
    fn a_pages_own_burst_of_writes_is_read_whole() {
        // A single-page app's queries as it loads: ten POSTs at once, each read before it goes.
        let (mut h, _) = agent_page();
        let ops: Vec<u64> = (0..10)
            .map(|n| {
                let query = format!(
                    r#"{{"requestId":"Q{n}","request":{{"url":"https://shop.test/graphql","method":"POST","headers":{{}},"postData":"{{\"query\":\"query Cart{n} {{ cart {{ id }} }}\"}}"}},"frameId":"PAGE1","resourceType":"Fetch"}}"#
                );
                inspection(&h.ext(paused(&query))).0
            })
            .collect();
        for op in ops {
            let step = h.answer(op, json!({"url": "https://shop.test/"}));
            assert_eq!(fetch_commands(&step)[0].0, "Fetch.continueRequest");
            assert!(flood_lines(&step).is_empty());
        }
        assert_eq!(h.core.gestures.floods.waiting(1), 0);
    }

    #[test]
    fn an_allowed_write_is_spent_before_the_bound_and_never_refused_by_it() {
        let (mut h, _) = agent_page();
        let reads = payments_read(&mut h, 0..N);
        let first = approvals(&h.answer(reads[0], pay_button()))[0].id;
        for op in &reads[1..] {
            h.answer(*op, pay_button());
        }
        // Allowed: sent again from the page...
        let step = h.ext(FromExtension::ApprovalAnswer { id: first, answer: ApprovalAnswer::Allow });
        assert!(matches!(step.browser_ops()[..], [(_, BrowserOp::Resend { .. })]));
        // ...a flood fills the tab again...
        let step = h.ext(paused(&payment(N + 10)));
        assert!(step.browser_ops().len() == 1, "the freed place is taken");
        assert_eq!(h.core.gestures.floods.waiting(1), N as usize);
        let step = h.ext(paused(&payment(N + 11)));
        assert_eq!(fetch_commands(&step)[0].0, BLOCKED);
        assert!(step.browser_ops().is_empty(), "past the bound: unread");
        // ...and the copy the human allowed still goes, once.
        let copy = payment(0).replace("\"F0\"", "\"C0\"");
        assert_eq!(
            fetch_commands(&h.ext(paused(&copy))),
            [("Fetch.continueRequest".to_owned(), json!({"requestId": "C0"}))]
        );
        let again = payment(0).replace("\"F0\"", "\"C1\"");
        let step = h.ext(paused(&again));
        assert_eq!(fetch_commands(&step)[0].0, BLOCKED, "once: past the bound, refused");
        assert!(step.browser_ops().is_empty(), "unread");
    }

    #[test]
    fn a_reset_the_tab_gone_and_the_kill_switch_clear_the_count() {
        for end in ["reset", "gone", "kill switch"] {
            let (mut h, _) = agent_page();
            payments_read(&mut h, 0..N);
            let step = h.ext(paused(&payment(N)));
            assert!(step.browser_ops().is_empty(), "{end}: refused");
            let step = match end {
                "reset" => {
                    h.core.reset_tab(1);
                    h.drain()
                }
                "gone" => h.ext(FromExtension::TabUnshared {
                    tab_id: 1,
                    reason: tabtunnel_wire::UnshareReason::Closed,
                }),
                _ => {
                    let now = h.now;
                    h.core.set_kill_switch(now, true);
                    h.drain()
                }
            };
            assert_eq!(
                flood_lines(&step),
                [format!(
                    "{RULE}: the flood of writes on this tab ended: 1 writes refused unread and unasked"
                )],
                "{end}"
            );
            assert_eq!(h.core.gestures.floods.waiting(1), 0, "{end}");
            if end == "reset" {
                // A write waits (is read) again after the reset.
                inspection(&h.ext(paused(&payment(N + 1))));
            }
        }
    }

    #[test]
    fn the_agents_own_interception_is_bounded_the_same_way() {
        let (mut h, page) = agent_page();
        let step = h.send(1, json!({"id": 1, "sessionId": page, "method": "Fetch.enable", "params": {"patterns": [{"urlPattern": "*"}]}}));
        let (op, _) = step.browser_ops()[0];
        h.answer(op, json!({}));
        // Harmless writes, handed to the agent's interception.
        for n in 0..N + 2 {
            let cart = format!(
                r#"{{"requestId":"K{n}","request":{{"url":"https://shop.test/cart/add","method":"POST","headers":{{}},"postData":"item={n}"}},"frameId":"PAGE1","resourceType":"XHR"}}"#
            );
            let (op, _) = inspection(&h.ext(paused(&cart)));
            assert_eq!(
                h.answer(op, json!({"url": "https://shop.test/list"})).methods(1),
                ["Fetch.requestPaused"]
            );
        }
        // The agent continues each as a payment: N wait on the human, the rest are refused.
        let mut asked = 0;
        for n in 0..N + 2 {
            let step = h.send(
                1,
                json!({"id": 10 + n, "sessionId": page, "method": "Fetch.continueRequest", "params": {"requestId": format!("K{n}"), "url": "https://shop.test/api/pay"}}),
            );
            assert_eq!(fetch_commands(&step)[0].0, BLOCKED, "write {n}");
            let error = step.only_reply(1)["error"]["message"].as_str().unwrap().to_owned();
            assert!(error.contains("gesture guard"), "{error}");
            asked += approvals(&step).len();
            if n >= N {
                assert!(approvals(&step).is_empty(), "write {n}: unasked");
                assert!(error.contains("refused"), "{error}");
            }
        }
        assert_eq!(asked, N as usize);
        assert_eq!(h.core.gestures.floods.waiting(1), N as usize);
    }
}
