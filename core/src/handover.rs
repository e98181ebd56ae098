//! An agent asking the human for their active tab: the request waits in the side panel until
//! the human answers there, or the daemon withdraws it (timeout, the asker gone). Requests
//! outlive a restarted extension worker: a new connection is told them again.

use crate::{AgentId, Core, Output};
use std::collections::BTreeMap;
use tabtunnel_wire::{HandoverRequest, TabId, ToExtension};

#[derive(Default)]
pub(crate) struct Handovers {
    next_id: u64,
    waiting: BTreeMap<u64, HandoverRequest>,
}

impl Core {
    /// Shows the human a request from `agent` for their active tab; the answer comes as
    /// [`Output::HandoverAnswered`] with the returned id.
    pub fn request_handover(&mut self, now: u64, agent: &AgentId, reason: &str) -> u64 {
        self.advance(now);
        self.handovers.next_id += 1;
        let id = self.handovers.next_id;
        let request = HandoverRequest { id, agent: agent.as_str().to_owned(), reason: reason.to_owned() };
        self.handovers.waiting.insert(id, request.clone());
        if self.extension_connected {
            self.out.push_back(Output::ToExtension(ToExtension::HandoverRequest(request)));
        }
        id
    }

    /// The request is no longer wanted (timed out, the asker went away).
    pub fn withdraw_handover(&mut self, now: u64, id: u64) {
        self.advance(now);
        if self.handovers.waiting.remove(&id).is_some() && self.extension_connected {
            self.out.push_back(Output::ToExtension(ToExtension::HandoverWithdrawn { id }));
        }
    }

    /// The human answered in the side panel. A handed tab was shared to the agent before the
    /// answer was sent, so it is known by now; anything else counts as a refusal.
    pub(crate) fn handover_answered(&mut self, id: u64, tab_id: Option<TabId>) {
        let Some(request) = self.handovers.waiting.remove(&id) else { return };
        let tab = tab_id
            .and_then(|t| self.tabs.get(&t))
            .filter(|s| s.tab.info.agent == request.agent)
            .map(|s| s.tab.info.clone());
        self.out.push_back(Output::HandoverAnswered { id, tab });
    }

    pub(crate) fn resend_handovers(&mut self) {
        for request in self.handovers.waiting.values() {
            self.out.push_back(Output::ToExtension(ToExtension::HandoverRequest(request.clone())));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::*;
    use crate::*;
    use tabtunnel_wire::{HandoverRequest, ToExtension};

    #[test]
    fn a_request_waits_in_the_side_panel_until_the_human_answers() {
        let mut h = Harness::with_tabs(&[]);
        let id = h.core.request_handover(h.now, &AgentId::new("a"), "I need your mail tab");
        let step = h.drain();
        let expected = HandoverRequest { id, agent: "a".into(), reason: "I need your mail tab".into() };
        assert!(matches!(&step.extension[..], [ToExtension::HandoverRequest(r)] if *r == expected));
        // A restarted worker is told again.
        h.core.extension_connected(h.now, hello(&[])).unwrap();
        let step = h.drain();
        let again: Vec<u64> = step
            .extension
            .iter()
            .filter_map(|f| match f {
                ToExtension::HandoverRequest(r) => Some(r.id),
                _ => None,
            })
            .collect();
        assert_eq!(again, [id]);
        // The extension shares the tab to the agent, then answers.
        h.ext(FromExtension::TabShared(agent_tab(4, "a", false)));
        let step = h.ext(FromExtension::HandoverAnswer { id, tab_id: Some(4) });
        match &step.other[..] {
            [Output::HandoverAnswered { id: got, tab: Some(tab) }] => assert_eq!((*got, tab.tab_id), (id, 4)),
            other => panic!("{other:?}"),
        }
        assert!(
            h.ext(FromExtension::HandoverAnswer { id, tab_id: Some(4) }).other.is_empty(),
            "answered once"
        );
    }

    #[test]
    fn refusals_withdrawals_and_tabs_of_someone_else() {
        let mut h = Harness::with_tabs(&[1]);
        let a = AgentId::new("a");
        let refused = h.core.request_handover(h.now, &a, "");
        let wrong_tab = h.core.request_handover(h.now, &a, "");
        let withdrawn = h.core.request_handover(h.now, &a, "");
        h.drain();
        let step = h.ext(FromExtension::HandoverAnswer { id: refused, tab_id: None });
        assert!(matches!(step.other[..], [Output::HandoverAnswered { tab: None, .. }]));
        let step = h.ext(FromExtension::HandoverAnswer { id: wrong_tab, tab_id: Some(1) });
        assert!(matches!(step.other[..], [Output::HandoverAnswered { tab: None, .. }]), "tab 1 is not a's");
        h.core.withdraw_handover(h.now, withdrawn);
        let step = h.drain();
        assert!(matches!(step.extension[..], [ToExtension::HandoverWithdrawn { id }] if id == withdrawn));
        assert!(h.ext(FromExtension::HandoverAnswer { id: withdrawn, tab_id: None }).other.is_empty());
    }
}
