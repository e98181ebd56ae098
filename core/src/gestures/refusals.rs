//! What the human refused (or let time out) a moment ago, per agent: the same gesture or request
//! again (a client retrying, a page posting in a loop, an agent wearing the human down) is
//! refused at once, unasked, for [`REFUSAL_STANDS_MS`]. The trail gets the first such retry with
//! its question, and the rest as one line with their count when the refusal's time is up: a page
//! retrying hundreds of times a second writes two lines, not thousands, and none is left
//! uncounted.

use crate::AgentId;
use std::collections::HashMap;
use tabtunnel_wire::gestures::GestureQuestion;
use tabtunnel_wire::TabId;

/// How long a refusal stands for the same gesture or request of the same agent.
pub(crate) const REFUSAL_STANDS_MS: u64 = 30_000;

/// An agent and what makes two of its questions the same one (`signature`).
pub(crate) type Key = (AgentId, String);

#[derive(Debug, Default)]
pub(crate) struct Refusals {
    standing: HashMap<Key, Refusal>,
    /// [`Refusals::due`], kept as they change (the core's `poll_timeout` scans nothing).
    due: Option<u64>,
}

#[derive(Debug)]
struct Refusal {
    /// It stands until then (inclusive).
    until: u64,
    /// The retries refused so far, once there was one.
    retries: Option<Retries>,
}

/// Retries refused while a refusal stood: what the first was, and how many came after it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Retries {
    pub tab: Option<TabId>,
    pub method: String,
    pub url: Option<String>,
    pub question: GestureQuestion,
    /// Refused after the first, not yet in the trail.
    pub uncounted: u64,
}

/// What a question met.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Retry {
    /// Nothing refused stands for it: ask.
    Ask,
    /// Refused, the first retry of its refusal: into the trail, with its question.
    First,
    /// Refused, counted: the trail hears of it with the rest when the refusal's time is up.
    Counted,
}

impl Refusals {
    /// The human refused `key`'s question now: it stands from now (one standing already goes
    /// on, its retries counted on: the questions a burst raised at once, denied one by one, make
    /// one refusal). Returns refusals whose time is up by now with retries not yet in the trail.
    pub fn remember(&mut self, key: Key, now: u64) -> Vec<(AgentId, Retries)> {
        let ended = self.expired(now);
        let until = now + REFUSAL_STANDS_MS;
        self.standing
            .entry(key)
            .and_modify(|r| r.until = r.until.max(until))
            .or_insert(Refusal { until, retries: None });
        self.due = self.first_due();
        ended
    }

    /// The question `key` again, for `tab`'s `method` (to `url`).
    pub fn retry(
        &mut self,
        key: &Key,
        now: u64,
        tab: Option<TabId>,
        method: &str,
        url: Option<&str>,
        question: &GestureQuestion,
    ) -> Retry {
        let Some(refusal) = self.standing.get_mut(key).filter(|r| now <= r.until) else { return Retry::Ask };
        match &mut refusal.retries {
            Some(retries) => {
                retries.uncounted += 1;
                let due = refusal.until + 1;
                self.due = Some(self.due.map_or(due, |d| d.min(due)));
                Retry::Counted
            }
            None => {
                refusal.retries = Some(Retries {
                    tab,
                    method: method.to_owned(),
                    url: url.map(str::to_owned),
                    question: question.clone(),
                    uncounted: 0,
                });
                Retry::First
            }
        }
    }

    /// Refusals whose time is up by `now` go; those with retries not yet in the trail are
    /// returned, oldest first.
    pub fn expired(&mut self, now: u64) -> Vec<(AgentId, Retries)> {
        let mut ended: Vec<(u64, AgentId, Retries)> = Vec::new();
        self.standing.retain(|(agent, _), refusal| {
            if now <= refusal.until {
                return true;
            }
            if let Some(retries) = refusal.retries.take().filter(|r| r.uncounted > 0) {
                ended.push((refusal.until, agent.clone(), retries));
            }
            false
        });
        ended.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        self.due = self.first_due();
        ended.into_iter().map(|(_, agent, retries)| (agent, retries)).collect()
    }

    /// When a refusal with uncounted retries ends (the trail's line is due).
    pub fn due(&self) -> Option<u64> {
        self.due
    }

    fn first_due(&self) -> Option<u64> {
        self.standing
            .values()
            .filter(|r| r.retries.as_ref().is_some_and(|r| r.uncounted > 0))
            .map(|r| r.until + 1)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(agent: &str, what: &str) -> Key {
        (AgentId::new(agent), what.to_owned())
    }

    fn question(element: &str) -> GestureQuestion {
        GestureQuestion { element: element.into(), ..Default::default() }
    }

    fn retry(r: &mut Refusals, k: &Key, now: u64) -> Retry {
        r.retry(k, now, Some(7), "request", Some("https://shop.test/pay"), &question("Pay"))
    }

    #[test]
    fn nothing_refused_asks() {
        let mut r = Refusals::default();
        assert_eq!(retry(&mut r, &key("a", "pay"), 0), Retry::Ask);
        assert_eq!(r.due(), None);
    }

    #[test]
    fn the_first_retry_is_recorded_the_rest_counted_into_one_line_when_the_refusal_ends() {
        let mut r = Refusals::default();
        let pay = key("a", "pay");
        assert!(r.remember(pay.clone(), 1_000).is_empty());
        assert_eq!(retry(&mut r, &pay, 1_001), Retry::First);
        assert_eq!(r.due(), None, "nothing to count yet");
        for now in 1_002..1_502 {
            assert_eq!(retry(&mut r, &pay, now), Retry::Counted);
        }
        let until = 1_000 + REFUSAL_STANDS_MS;
        assert_eq!(r.due(), Some(until + 1));
        assert_eq!(retry(&mut r, &pay, until), Retry::Counted, "it stands through its last ms");
        assert!(r.expired(until).is_empty());
        let ended = r.expired(until + 1);
        assert_eq!(ended.len(), 1);
        let (agent, retries) = &ended[0];
        assert_eq!(agent.as_str(), "a");
        assert_eq!(retries.uncounted, 501);
        assert_eq!((retries.tab, retries.method.as_str()), (Some(7), "request"));
        assert_eq!(retries.url.as_deref(), Some("https://shop.test/pay"));
        assert_eq!(retries.question.element, "Pay");
        assert_eq!(r.due(), None);
        assert_eq!(retry(&mut r, &pay, until + 2), Retry::Ask, "asked again once it ended");
        assert!(r.expired(until + 100_000).is_empty(), "counted once");
    }

    #[test]
    fn a_single_retry_needs_no_count_line() {
        let mut r = Refusals::default();
        let pay = key("a", "pay");
        r.remember(pay.clone(), 0);
        assert_eq!(retry(&mut r, &pay, 5), Retry::First);
        assert!(r.expired(REFUSAL_STANDS_MS + 1).is_empty());
        assert!(r.standing.is_empty(), "gone all the same");
    }

    #[test]
    fn refusing_the_same_again_while_it_stands_extends_it_and_counts_on() {
        let mut r = Refusals::default();
        let pay = key("a", "pay");
        r.remember(pay.clone(), 0);
        assert_eq!(retry(&mut r, &pay, 1), Retry::First);
        retry(&mut r, &pay, 2);
        assert!(r.remember(pay.clone(), 10).is_empty(), "one refusal still");
        assert_eq!(retry(&mut r, &pay, 11), Retry::Counted, "its first retry was recorded already");
        assert_eq!(
            retry(&mut r, &pay, 10 + REFUSAL_STANDS_MS),
            Retry::Counted,
            "stands from the later refusal"
        );
        let ended = r.expired(11 + REFUSAL_STANDS_MS);
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].1.uncounted, 3);
        // Refused again after it ended: a new one, with its own first retry.
        r.remember(pay.clone(), 20 + REFUSAL_STANDS_MS);
        assert_eq!(retry(&mut r, &pay, 21 + REFUSAL_STANDS_MS), Retry::First);
    }

    #[test]
    fn agents_and_questions_are_their_own() {
        let mut r = Refusals::default();
        let (a_pay, b_pay, a_delete) = (key("a", "pay"), key("b", "pay"), key("a", "delete"));
        r.remember(a_pay.clone(), 0);
        assert_eq!(retry(&mut r, &b_pay, 1), Retry::Ask, "another agent's is asked");
        assert_eq!(retry(&mut r, &a_delete, 1), Retry::Ask, "another question is asked");
        r.remember(b_pay.clone(), 100);
        for k in [&a_pay, &b_pay] {
            retry(&mut r, k, 200);
            retry(&mut r, k, 201);
        }
        let ended = r.expired(200 + REFUSAL_STANDS_MS);
        assert_eq!(ended.len(), 2);
        assert_eq!(ended[0].0.as_str(), "a", "oldest first");
        assert_eq!(ended[1].0.as_str(), "b");
    }

    #[test]
    fn remembering_lets_go_of_refusals_whose_time_is_up() {
        let mut r = Refusals::default();
        for n in 0..100 {
            let k = key("a", &n.to_string());
            r.remember(k.clone(), n);
            retry(&mut r, &k, n);
            retry(&mut r, &k, n);
        }
        let ended = r.remember(key("a", "late"), 100 + REFUSAL_STANDS_MS);
        assert_eq!(ended.len(), 100, "each counted as it goes");
        assert_eq!(r.standing.len(), 1);
    }
}
