//! What happens to a held gesture before the human is asked: the policy's choice for its kinds
//! on its page's origin (`choices.rs`: allowed or refused without a question, the trail naming
//! the rule), or a standing answer of the human's that covers every one of its kinds
//! (`standing.rs`). And the standing answers themselves: given with an answer in the side panel
//! (or a sign-in's Allow once, remembered), used, taken back in the panel, expired; each of
//! those in the trail, and the list in the panel. Only the human's answer path gives one: the
//! extension's panel (its messages come from the extension's own pages only).

use super::choices::{Choice, Choices};
use super::standing::Standing;
use crate::audit::Outcome;
use crate::{AgentId, Core, Output};
use std::sync::Arc;
use tabtunnel_wire::gestures::{GestureKind, GestureQuestion};
use tabtunnel_wire::{ApprovalAnswer, ApprovalRequest, ToExtension};

/// What a question offers besides Allow once and Deny.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Offers {
    pub standing_ms: Vec<u64>,
    /// Allow once is remembered for the daemon's life (a sign-in, asked once).
    pub remembers: bool,
}

/// The guard's decision before it asks.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Before {
    Ask(Offers),
    /// Goes without a question: how, for the trail.
    Go(Outcome),
    /// Refused without a question by this rule.
    Refuse(String),
}

/// The sites a held gesture or write touches: its page's origin, and the origin of the request
/// it is and of the form it sends, where those are elsewhere. A choice or a standing answer
/// for "deleting on https://a.example" covers none of b.example's data, whatever page sends
/// the write.
fn places_of(q: &GestureQuestion) -> Vec<String> {
    let mut places = vec![q.origin.clone()];
    for target in [&q.request, &q.form] {
        // `POST https://b.example/repos/9`: the method, then the URL.
        let Some((_, url)) = target.split_once(' ') else { continue };
        let Ok(parsed) = url::Url::parse(url.trim()) else { continue };
        let origin = parsed.origin().ascii_serialization();
        if !places.contains(&origin) {
            places.push(origin);
        }
    }
    places
}

/// How a standing answer's given record reads in the trail.
const METHOD: &str = "standing answer";

impl Core {
    fn gesture_choices(&self, agent: &AgentId) -> Arc<Choices> {
        match self.guard_policy() {
            Some(policy) => policy.gesture_choices(agent.as_str()),
            None => Arc::new(Choices::default()),
        }
    }

    /// The policy's choices and the standing answers for a held gesture of `agent`'s.
    pub(super) fn before_asking(&self, agent: &AgentId, q: &GestureQuestion) -> Before {
        let choices = self.gesture_choices(agent);
        if q.kinds.is_empty() {
            // Held by the policy's own triggers only: no kind to choose for.
            return Before::Ask(Offers::default());
        }
        let (mut allowed_by, mut used, mut remembers, mut ask) = (Vec::new(), Vec::new(), false, false);
        let places = places_of(q);
        for kind in &q.kinds {
            // The strictest choice of every site the write touches (a page's allow is not
            // another site's).
            let (choice, rule) =
                places.iter().map(|p| choices.of(*kind, p)).max_by_key(|(c, _)| *c).expect("a page");
            match choice {
                Choice::Deny => return Before::Refuse(rule.unwrap_or_default()),
                Choice::Allow => allowed_by.extend(rule),
                Choice::Ask | Choice::Once => {
                    let remembered = choice == Choice::Once;
                    let covering: Option<Vec<u64>> = places
                        .iter()
                        .map(|p| self.gestures.standing.covering(agent, p, *kind, self.now_ms, remembered))
                        .collect();
                    match covering {
                        Some(ids) => used.extend(ids),
                        None => {
                            ask = true;
                            remembers |= choice == Choice::Once;
                        }
                    }
                }
            }
        }
        used.sort_unstable();
        allowed_by.dedup();
        if ask {
            let standing_ms = if remembers { Vec::new() } else { choices.offers(&q.kinds) };
            return Before::Ask(Offers { standing_ms, remembers });
        }
        used.dedup();
        let mut rules: Vec<String> = used
            .iter()
            .filter_map(|id| Some(self.gestures.standing.get(*id)?.describe(*id, self.now_ms)))
            .collect();
        if rules.is_empty() {
            return Before::Go(Outcome::AllowedBy { rule: allowed_by.join("; ") });
        }
        rules.extend(allowed_by);
        Before::Go(Outcome::Standing { event: "used", rule: rules.join("; ") })
    }

    /// The standing answer a human's answer to a gesture question gives, if any: one of the
    /// periods the question offered, or Allow once on a question that remembers it.
    pub(crate) fn standing_of(&self, request: &ApprovalRequest, answer: ApprovalAnswer) -> Option<Standing> {
        let q = request.gesture.as_deref()?;
        let until = match answer {
            ApprovalAnswer::AllowFor { ms } if request.standing_ms.contains(&ms) => Some(self.now_ms + ms),
            ApprovalAnswer::Allow if request.remembers => None,
            _ => return None,
        };
        let kinds: Vec<GestureKind> = q.kinds.clone();
        Some(Standing { agent: AgentId::new(&request.agent), origin: q.origin.clone(), kinds, until })
    }

    pub(crate) fn give_standing(&mut self, standing: Standing) {
        let (agent, origin) = (standing.agent.clone(), standing.origin.clone());
        let id = self.gestures.standing.give(standing);
        self.audit_standing(id, &agent, &origin, "given");
        self.report_standing();
    }

    /// The human took a standing answer back in the side panel.
    pub(crate) fn take_back_standing(&mut self, id: u64) {
        let Some(standing) = self.gestures.standing.get(id).cloned() else { return };
        self.audit_standing(id, &standing.agent, &standing.origin, "taken back");
        self.gestures.standing.take_back(id);
        self.report_standing();
    }

    /// Standing answers whose time is up go, each in the trail.
    pub(crate) fn expire_standing(&mut self) {
        let gone = self.gestures.standing.expire(self.now_ms);
        if gone.is_empty() {
            return;
        }
        for (id, standing) in gone {
            let rule = standing.describe(id, self.now_ms);
            let outcome = Outcome::Standing { event: "expired", rule };
            self.audit(&standing.agent, None, METHOD, Some(&standing.origin), outcome);
        }
        self.report_standing();
    }

    pub(crate) fn standing_due(&self) -> Option<u64> {
        self.gestures.standing.due()
    }

    fn audit_standing(&mut self, id: u64, agent: &AgentId, origin: &str, event: &'static str) {
        let Some(standing) = self.gestures.standing.get(id) else { return };
        let outcome = Outcome::Standing { event, rule: standing.describe(id, self.now_ms) };
        self.audit(agent, None, METHOD, Some(origin), outcome);
    }

    /// A new extension connection (whose list starts empty) hears of those there are.
    pub(crate) fn resend_standing(&mut self) {
        if !self.gestures.standing.list().is_empty() {
            self.report_standing();
        }
    }

    /// The side panel's list of standing answers.
    pub(crate) fn report_standing(&mut self) {
        if self.extension_connected {
            // Redacted as it leaves the core (`redact::output`).
            let answers = self.gestures.standing.list();
            self.out.push_back(Output::ToExtension(ToExtension::StandingAnswers {
                now_ms: self.now_ms,
                answers,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{agent_page, approvals, audits, inspection, paused, pay_button, press};
    use crate::audit::Outcome;
    use crate::testing::*;
    use crate::*;
    use serde_json::{json, Value};
    use tabtunnel_wire::gestures::{GestureKind, StandingAnswer};
    use tabtunnel_wire::{ApprovalAnswer, ApprovalRequest};

    fn send_button(origin: &str) -> Value {
        json!({
            "url": format!("{origin}/inbox"),
            "element": {"tag": "button", "role": "button", "name": "Send message", "text": "Send message", "actionable": true, "submits": true},
            "form": {"action": format!("{origin}/compose"), "method": "post", "fields": [{"inputType": "textarea", "name": "body"}], "buttons": ["Send message"]},
        })
    }

    fn sign_in_button(origin: &str) -> Value {
        json!({
            "url": format!("{origin}/login"),
            "element": {"tag": "button", "role": "button", "name": "Sign in", "text": "Sign in", "actionable": true, "submits": true},
            "form": {"action": format!("{origin}/session"), "method": "post", "fields": [{"inputType": "text", "name": "user"}, {"inputType": "password", "name": "password", "autocomplete": "current-password"}], "buttons": ["Sign in"]},
        })
    }

    fn delete_button(origin: &str) -> Value {
        json!({
            "url": format!("{origin}/inbox"),
            "element": {"tag": "button", "role": "button", "name": "Delete this conversation", "actionable": true, "submits": true},
            "form": {"action": format!("{origin}/conversations/7/delete"), "method": "post", "buttons": ["Delete this conversation"]},
        })
    }

    fn set_policy(h: &mut Harness, file: Value) {
        let file: crate::policy::PolicyFile = serde_json::from_value(file).unwrap();
        h.core.set_policy(h.now, Some(crate::policy::PolicySet::compile(&file).unwrap()));
        h.drain();
    }

    /// A press on what `facts` shows: the question it asks, or `None` when it went unasked (the
    /// press reached the page) with the step.
    fn press_on(h: &mut Harness, page: &str, id: i64, facts: Value) -> (Option<ApprovalRequest>, Step) {
        let (op, _) = inspection(&h.send(1, press(page, id)));
        let step = h.answer(op, facts);
        let asked = approvals(&step).first().map(|r| (*r).clone());
        if asked.is_none() {
            let went = step.commands().iter().find(|c| c.method == "Input.dispatchMouseEvent").map(|c| c.id);
            // The tab answers it, as Chrome would: the next input does not wait behind it.
            h.answer(went.expect("it went"), json!({}));
        }
        (asked, step)
    }

    /// The human's answer; the press it lets go is answered by the tab.
    fn answer(h: &mut Harness, id: u64, answer: ApprovalAnswer) -> Step {
        let step = h.ext(FromExtension::ApprovalAnswer { id, answer });
        if let Some(went) = step.commands().iter().find(|c| c.method == "Input.dispatchMouseEvent") {
            h.answer(went.id, json!({}));
        }
        step
    }

    /// Whether a press on what `facts` shows is asked about (then denied, to go on).
    fn is_asked(h: &mut Harness, page: &str, id: i64, facts: Value) -> bool {
        match press_on(h, page, id, facts).0 {
            Some(asked) => {
                answer(h, asked.id, ApprovalAnswer::Deny);
                true
            }
            None => false,
        }
    }

    fn listed(step: &Step) -> Option<Vec<StandingAnswer>> {
        step.extension.iter().rev().find_map(|f| match f {
            ToExtension::StandingAnswers { answers, .. } => Some(answers.clone()),
            _ => None,
        })
    }

    fn standing_events(step: &Step) -> Vec<&'static str> {
        audits(step)
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Standing { event, .. } => Some(*event),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn signing_in_asks_once_per_site_and_agent_unless_the_policy_says_otherwise() {
        let (mut h, page) = agent_page();
        let (asked, _) = press_on(&mut h, &page, 1, sign_in_button("https://shop.test"));
        let asked = asked.expect("the first sign-in is asked");
        assert_eq!(asked.gesture.as_ref().unwrap().kinds, [GestureKind::SigningIn]);
        assert!(asked.remembers && asked.standing_ms.is_empty(), "Allow once is remembered: {asked:?}");
        let step = answer(&mut h, asked.id, ApprovalAnswer::Allow);
        assert!(matches!(
            &audits(&step)[0].outcome,
            Outcome::Asked { answer: "allowed, and not asked again here", .. }
        ));
        assert_eq!(standing_events(&step), ["given"]);
        let list = listed(&step).expect("the panel lists it");
        assert_eq!((list[0].origin.as_str(), list[0].until_ms), ("https://shop.test", None));
        // Again on that site, much later: not asked; the trail says by what.
        h.tick(86_400_000);
        let (asked, step) = press_on(&mut h, &page, 2, sign_in_button("https://shop.test"));
        assert!(asked.is_none());
        assert_eq!(standing_events(&step), ["used"]);
        // Another site is asked about; a payment on the same site too.
        assert!(is_asked(&mut h, &page, 3, sign_in_button("https://bank.test")));
        h.tick(h.now + 100_000);
        assert!(is_asked(&mut h, &page, 4, pay_button()));
        h.tick(h.now + 100_000);
        // `sign_in = "ask"`: every time, and Allow once stands for nothing.
        set_policy(&mut h, json!({"default": {"gestures": {"sign_in": "ask"}}}));
        let (asked, _) = press_on(&mut h, &page, 5, sign_in_button("https://shop.test"));
        let asked = asked.expect("asked again");
        assert!(!asked.remembers && asked.standing_ms == [600_000, 3_600_000]);
        let step = answer(&mut h, asked.id, ApprovalAnswer::Allow);
        assert!(standing_events(&step).is_empty() && listed(&step).is_none());
        // `deny`: refused without a question, the error and the trail name the rule.
        set_policy(&mut h, json!({"agent": {"a": {"gestures": {"sign_in": "deny"}}}}));
        let (asked, step) = {
            let (op, _) = inspection(&h.send(1, press(&page, 6)));
            let step = h.answer(op, sign_in_button("https://shop.test"));
            (approvals(&step).first().map(|r| (*r).clone()), step)
        };
        assert!(asked.is_none());
        let error = step.to(1).iter().find(|f| f["id"] == 6).unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(error.contains("[agent.a] gestures sign_in = \"deny\""), "{error}");
        assert!(
            matches!(&audits(&step)[0].outcome, Outcome::Denied { rule } if rule.contains("sign_in = \"deny\""))
        );
        // `allow`: no question, and the trail says which rule let it.
        set_policy(&mut h, json!({"default": {"gestures": {"sign_in": "allow"}}}));
        let (asked, step) = press_on(&mut h, &page, 7, sign_in_button("https://other.test"));
        assert!(asked.is_none());
        assert!(
            matches!(&audits(&step)[0].outcome, Outcome::AllowedBy { rule } if rule == "[default] gestures sign_in = \"allow\"")
        );
    }

    #[test]
    fn a_standing_answer_covers_its_kind_its_site_and_its_agent_until_exactly_its_end() {
        let (mut h, page) = agent_page();
        let (asked, _) = press_on(&mut h, &page, 1, send_button("https://mail.test"));
        let asked = asked.unwrap();
        assert_eq!(asked.standing_ms, [600_000, 3_600_000], "10 and 60 minutes offered");
        let given_at = h.now;
        let step = answer(&mut h, asked.id, ApprovalAnswer::AllowFor { ms: 600_000 });
        assert!(step.commands().iter().any(|c| c.method == "Input.dispatchMouseEvent"), "this one goes");
        assert!(matches!(&audits(&step)[0].outcome, Outcome::Asked { answer: "allowed for a while", .. }));
        assert_eq!(standing_events(&step), ["given"]);
        assert_eq!(listed(&step).unwrap()[0].until_ms, Some(given_at + 600_000));
        assert_eq!(h.core.poll_timeout().map(|t| t <= given_at + 600_000), Some(true));
        // Two more messages: not asked.
        for id in [2, 3] {
            let (asked, step) = press_on(&mut h, &page, id, send_button("https://mail.test"));
            assert!(asked.is_none(), "message {id}");
            let record = audits(&step)[0];
            assert!(
                matches!(&record.outcome, Outcome::Standing { event: "used", rule } if rule.contains("sending on https://mail.test"))
            );
            assert!(record.question.is_some(), "with what it was");
        }
        // Neither another kind on the site, nor the kind on another site, nor another agent.
        assert!(is_asked(&mut h, &page, 4, delete_button("https://mail.test")));
        h.tick(h.now + 1);
        assert!(is_asked(&mut h, &page, 5, send_button("https://mail.test:8443")));
        h.tick(h.now + 1);
        h.ext(FromExtension::TabShared(agent_tab(2, "b", true)));
        h.connect_as(2, "b");
        let b_page = h.playwright_attach(2)[0].clone();
        h.drain();
        let (op, _) = inspection(&h.send(2, press(&b_page, 1)));
        assert_eq!(approvals(&h.answer(op, send_button("https://mail.test"))).len(), 1, "agent b is asked");
        // A moment before its end it still stands; at its end it is over, gone from the panel and
        // the trail says so; the next message asks again.
        h.tick(given_at + 599_999);
        assert!(!is_asked(&mut h, &page, 6, send_button("https://mail.test")));
        let step = h.tick(given_at + 600_000);
        assert_eq!(standing_events(&step), ["expired"]);
        assert_eq!(listed(&step), Some(vec![]));
        assert!(is_asked(&mut h, &page, 7, send_button("https://mail.test")));
    }

    #[test]
    fn paying_offers_no_standing_answer_and_an_answer_it_did_not_offer_is_once() {
        let (mut h, page) = agent_page();
        let asked = press_on(&mut h, &page, 1, pay_button()).0.unwrap();
        assert!(asked.standing_ms.is_empty() && !asked.remembers, "{asked:?}");
        // A standing answer the question did not offer (a forged or stale panel) is Allow once.
        let step = answer(&mut h, asked.id, ApprovalAnswer::AllowFor { ms: 600_000 });
        assert!(matches!(&audits(&step)[0].outcome, Outcome::Asked { answer: "allowed once", .. }));
        assert!(standing_events(&step).is_empty() && listed(&step).is_none());
        h.tick(h.now + 1);
        assert!(is_asked(&mut h, &page, 2, pay_button()), "asked again");
        h.tick(h.now + 100_000);
        // A period the question did not offer is once too.
        let asked = press_on(&mut h, &page, 3, send_button("https://mail.test")).0.unwrap();
        let step = answer(&mut h, asked.id, ApprovalAnswer::AllowFor { ms: 86_400_000 });
        assert!(standing_events(&step).is_empty());
        // The policy may allow standing answers for paying, with its own periods.
        set_policy(
            &mut h,
            json!({"default": {"gestures": {"standing_for_paying": true, "standing_minutes": [0.1]}}}),
        );
        let asked = press_on(&mut h, &page, 4, pay_button()).0.unwrap();
        assert_eq!(asked.standing_ms, [6_000]);
    }

    #[test]
    fn a_standing_answer_taken_back_covers_nothing_more() {
        let (mut h, page) = agent_page();
        let asked = press_on(&mut h, &page, 1, send_button("https://mail.test")).0.unwrap();
        let step = answer(&mut h, asked.id, ApprovalAnswer::AllowFor { ms: 3_600_000 });
        let id = listed(&step).unwrap()[0].id;
        let step = h.ext(FromExtension::TakeBackStanding { id });
        assert_eq!(standing_events(&step), ["taken back"]);
        assert_eq!(listed(&step), Some(vec![]));
        assert!(h.ext(FromExtension::TakeBackStanding { id }).extension.is_empty(), "once");
        assert!(is_asked(&mut h, &page, 2, send_button("https://mail.test")));
    }

    #[test]
    fn the_policy_allows_or_denies_a_kind_per_site_without_a_question_on_every_route() {
        let (mut h, page) = agent_page();
        set_policy(
            &mut h,
            json!({"default": {"gestures": {"deleting": "deny", "sites": {"https://mail.test": {"sending": "allow"}}}}}),
        );
        let (asked, step) = press_on(&mut h, &page, 1, send_button("https://mail.test"));
        assert!(asked.is_none());
        assert!(
            matches!(&audits(&step)[0].outcome, Outcome::AllowedBy { rule } if rule.contains(r#"sites."https://mail.test" sending = "allow""#))
        );
        assert!(is_asked(&mut h, &page, 2, send_button("https://other.test")), "another site asks");
        h.tick(h.now + 1);
        let (op, _) = inspection(&h.send(1, press(&page, 3)));
        let step = h.answer(op, delete_button("https://mail.test"));
        assert!(approvals(&step).is_empty());
        assert!(
            matches!(&audits(&step)[0].outcome, Outcome::Denied { rule } if rule.contains("deleting = \"deny\""))
        );
        // A script's request that deletes: answered at once and never sent again, unasked.
        const DELETE: &str = r#"{"requestId":"D1","request":{"url":"https://mail.test/api/conversations/7","method":"DELETE","headers":{}},"frameId":"PAGE1","resourceType":"Fetch"}"#;
        let step = h.ext(paused(DELETE));
        let (op, _) = inspection(&step);
        let step = h.answer(op, json!({"url": "https://mail.test/inbox"}));
        assert!(approvals(&step).is_empty());
        assert!(step.browser_ops().is_empty(), "not sent again");
        assert!(matches!(&audits(&step)[0].outcome, Outcome::Denied { .. }));
    }

    /// A page's script deletes with a request to `url`: whether the guard asks (then denied).
    fn request_asked(h: &mut Harness, n: u32, url: &str) -> Option<ApprovalRequest> {
        let event = json!({"requestId": format!("R{n}"), "request": {"url": url, "method": "DELETE", "headers": {}}, "frameId": "PAGE1", "resourceType": "Fetch"});
        let step = h.ext(paused(&event.to_string()));
        let (op, _) = inspection(&step);
        let step = h.answer(op, json!({"url": "https://mail.test/inbox"}));
        approvals(&step).first().map(|r| (*r).clone())
    }

    #[test]
    fn a_sites_standing_answer_or_choice_covers_no_write_to_another_site() {
        let (mut h, _page) = agent_page();
        let asked = request_asked(&mut h, 1, "https://mail.test/api/conversations/7").expect("asked");
        answer(&mut h, asked.id, ApprovalAnswer::AllowFor { ms: 600_000 });
        assert!(request_asked(&mut h, 2, "https://mail.test/api/conversations/8").is_none(), "its site");
        // The same page deleting on another site (with the human's cookies there) is asked.
        let other = request_asked(&mut h, 3, "https://bank.test/api/payees/9").expect("another site");
        answer(&mut h, other.id, ApprovalAnswer::Deny);
        h.tick(h.now + 1);
        // So is the policy's allow for the page's site.
        set_policy(
            &mut h,
            json!({"default": {"gestures": {"sites": {"https://mail.test": {"deleting": "allow"}}}}}),
        );
        let other =
            request_asked(&mut h, 4, "https://bank.test/api/payees/10").expect("not the policy's site");
        answer(&mut h, other.id, ApprovalAnswer::Deny);
    }
}
