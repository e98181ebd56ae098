//! The human's standing answers: "allow sending on https://mail.example for agent x for 10
//! minutes", and a sign-in remembered for the daemon's life. Each covers exactly its agent, its
//! origin and its kinds, until its time is up (`now < until`: at `until` it is over); the store
//! keeps its earliest end as a [`Deadline`] for the core's `poll_timeout`.

use crate::deadline::Deadline;
use crate::AgentId;
use std::collections::BTreeMap;
use tabtunnel_wire::gestures::{GestureKind, StandingAnswer};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Standing {
    pub agent: AgentId,
    pub origin: String,
    pub kinds: Vec<GestureKind>,
    /// `None`: for the daemon's life.
    pub until: Option<u64>,
}

impl Standing {
    /// As the trail names it: `sending on https://mail.example for 10 min`.
    pub fn describe(&self, id: u64, now: u64) -> String {
        let kinds: Vec<&str> = self.kinds.iter().map(|k| k.name()).collect();
        let how_long = match self.until {
            Some(until) => format!("for {} s more", until.saturating_sub(now).div_ceil(1000)),
            None => "until tabtunnel stops".into(),
        };
        format!("standing answer {id}: {} on {} {how_long}", kinds.join(", "), self.origin)
    }

    fn covers(&self, agent: &AgentId, origin: &str, kind: GestureKind, now: u64) -> bool {
        self.agent == *agent
            && self.origin == origin
            && self.kinds.contains(&kind)
            && self.until.is_none_or(|until| now < until)
    }
}

#[derive(Debug, Default)]
pub(crate) struct StandingAnswers {
    next_id: u64,
    answers: BTreeMap<u64, Standing>,
    due: Deadline,
}

impl StandingAnswers {
    pub fn give(&mut self, standing: Standing) -> u64 {
        self.next_id += 1;
        if let Some(until) = standing.until {
            self.due.arm(until);
        }
        self.answers.insert(self.next_id, standing);
        self.next_id
    }

    /// The live answer that covers a gesture of `kind` by `agent` on `origin` at `now`; one for
    /// the daemon's life (a sign-in remembered) only if `remembered` counts (the policy asks
    /// `once`, not every time).
    pub fn covering(
        &self,
        agent: &AgentId,
        origin: &str,
        kind: GestureKind,
        now: u64,
        remembered: bool,
    ) -> Option<u64> {
        let counts = |s: &Standing| remembered || s.until.is_some();
        self.answers.iter().find(|(_, s)| counts(s) && s.covers(agent, origin, kind, now)).map(|(id, _)| *id)
    }

    pub fn get(&self, id: u64) -> Option<&Standing> {
        self.answers.get(&id)
    }

    pub fn take_back(&mut self, id: u64) -> Option<Standing> {
        self.answers.remove(&id)
    }

    /// Those whose time is up at `now`, taken out.
    pub fn expire(&mut self, now: u64) -> Vec<(u64, Standing)> {
        if !self.due.is_due(now) {
            return Vec::new();
        }
        let over: Vec<u64> = self
            .answers
            .iter()
            .filter(|(_, s)| s.until.is_some_and(|u| u <= now))
            .map(|(id, _)| *id)
            .collect();
        let gone = over.into_iter().filter_map(|id| Some((id, self.answers.remove(&id)?))).collect();
        self.due.set(self.answers.values().filter_map(|s| s.until).min());
        gone
    }

    pub fn due(&self) -> Option<u64> {
        self.due.get()
    }

    /// As the side panel lists them.
    pub fn list(&self) -> Vec<StandingAnswer> {
        self.answers
            .iter()
            .map(|(id, s)| StandingAnswer {
                id: *id,
                agent: s.agent.as_str().to_owned(),
                origin: s.origin.clone(),
                kinds: s.kinds.clone(),
                until_ms: s.until,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use GestureKind::*;

    fn standing(agent: &str, origin: &str, kinds: &[GestureKind], until: Option<u64>) -> Standing {
        Standing { agent: AgentId::new(agent), origin: origin.into(), kinds: kinds.to_vec(), until }
    }

    #[test]
    fn covers_until_exactly_its_deadline_then_expires_there() {
        let mut s = StandingAnswers::default();
        let id = s.give(standing("a", "https://m.example", &[Sending], Some(10_000)));
        let a = AgentId::new("a");
        assert_eq!(s.covering(&a, "https://m.example", Sending, 9_999, true), Some(id));
        assert_eq!(s.covering(&a, "https://m.example", Sending, 10_000, true), None, "over at its deadline");
        assert_eq!(s.due(), Some(10_000));
        assert!(s.expire(9_999).is_empty(), "not yet");
        assert_eq!(s.list().len(), 1);
        let gone = s.expire(10_000);
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].0, id);
        assert!(s.list().is_empty());
        assert_eq!(s.due(), None);
    }

    #[test]
    fn one_answer_never_covers_another_agent_origin_or_kind() {
        let mut s = StandingAnswers::default();
        s.give(standing("a", "https://m.example", &[Sending, Sharing], Some(60_000)));
        let (a, b) = (AgentId::new("a"), AgentId::new("b"));
        assert!(s.covering(&a, "https://m.example", Sending, 1, true).is_some());
        assert!(s.covering(&a, "https://m.example", Sharing, 1, true).is_some());
        assert!(s.covering(&b, "https://m.example", Sending, 1, true).is_none(), "another agent");
        assert!(s.covering(&a, "https://m.example:8443", Sending, 1, true).is_none(), "another origin");
        assert!(s.covering(&a, "http://m.example", Sending, 1, true).is_none(), "another scheme");
        assert!(s.covering(&a, "https://evil.m.example", Sending, 1, true).is_none(), "a subdomain");
        for kind in [Paying, Deleting, Secrets, SigningIn] {
            assert!(s.covering(&a, "https://m.example", kind, 1, true).is_none(), "{kind:?}");
        }
    }

    #[test]
    fn a_remembered_sign_in_stands_until_taken_back_and_the_deadline_follows_the_earliest() {
        let mut s = StandingAnswers::default();
        let forever = s.give(standing("a", "https://m.example", &[SigningIn], None));
        assert_eq!(s.due(), None, "nothing to expire");
        let later = s.give(standing("a", "https://m.example", &[Sending], Some(90)));
        s.give(standing("a", "https://m.example", &[Sharing], Some(30)));
        assert_eq!(s.due(), Some(30));
        assert_eq!(s.expire(30).len(), 1);
        assert_eq!(s.due(), Some(90));
        assert!(s.take_back(later).is_some());
        assert!(s.take_back(later).is_none(), "once");
        assert!(s.expire(u64::MAX).is_empty());
        assert!(
            s.covering(&AgentId::new("a"), "https://m.example", SigningIn, u64::MAX - 1, true)
                == Some(forever)
        );
        assert!(
            s.covering(&AgentId::new("a"), "https://m.example", SigningIn, 1, false).is_none(),
            "a remembered sign-in does not count where the policy asks every time"
        );
    }
}
