//! The gesture guard's state in the browser (its decisions are the daemon's:
//! `core/src/gestures/`): our isolated world and its contexts, which no client may name; our
//! click hook's identifiers, which no client may remove; the paused writes sent to the daemon
//! and not answered, which must be failed before our debugger lets go of their tab (Chrome
//! would send them on); and where clients intercept too. `extension-wasm`'s
//! `worker/gestures.rs` reads the few fields these need out of the opaque CDP params.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use tabtunnel_wire::{CdpError, TabId};

/// A target of a tab: the page (`None`) or a child session.
pub type Target = (TabId, Option<String>);

/// A write held for the daemon: its session and `requestId`.
pub type HeldWrite = (Option<String>, String);

/// What becomes of a paused request.
#[derive(Debug, PartialEq, Eq)]
pub enum Paused {
    /// A read nobody else intercepts: continued here at once.
    ContinueHere,
    /// To the daemon (a write is held until it answers).
    ToDaemon,
}

/// Whether a paused request only reads: at its response stage, or a safe method.
pub fn is_read(method: &str, response_stage: bool) -> bool {
    response_stage || ["GET", "HEAD", "OPTIONS"].iter().any(|m| m.eq_ignore_ascii_case(method))
}

#[derive(Debug, Default)]
pub struct Gestures {
    /// Our isolated world's name: random, so no page or agent can make or reach a world by it.
    world_name: String,
    /// Our world's context in each frame we read, by target and frame id.
    worlds: BTreeMap<(Target, String), i64>,
    /// Context ids and unique ids of our worlds, which no client may name.
    hidden_contexts: BTreeSet<(TabId, String)>,
    /// Paused writes sent to the daemon and not answered yet.
    held: BTreeMap<TabId, BTreeSet<HeldWrite>>,
    /// Targets where a client intercepts too: their paused reads go to the daemon as well.
    clients_intercept: BTreeSet<Target>,
    /// Our click hook's `addScriptToEvaluateOnNewDocument` identifiers.
    hooks: BTreeSet<(Target, String)>,
    /// Hooks sent and not answered yet, by target: until Chrome names the identifier, no
    /// client may remove any script there (it could be ours).
    hooks_pending: BTreeMap<Target, u32>,
    /// Pictures of held elements, by question id (data URLs).
    pub pictures: BTreeMap<u64, String>,
    /// Pictures of questions answered (or withdrawn), newest last, for the agent's history.
    answered: VecDeque<(u64, String)>,
}

/// How many answered questions keep their picture (an agent's history shows its last few).
pub const ANSWERED_PICTURES: usize = 8;

fn target(tab_id: TabId, session: Option<&str>) -> Target {
    (tab_id, session.map(str::to_owned))
}

impl Gestures {
    /// Our world's name, drawn (from `random`) the first time.
    pub fn world_name(&mut self, random: impl FnOnce() -> u64) -> String {
        if self.world_name.is_empty() {
            self.world_name = format!("tabtunnel-{:x}", random());
        }
        self.world_name.clone()
    }

    /// Our click hook was sent to a target. Its answer can come late, or never: Chrome runs the
    /// hook in the current document first (`runImmediately`), and a document replaced meanwhile
    /// (a popup leaving its initial empty document) was seen never to answer. So arming does
    /// not wait for it, and the target stays protected while it is pending.
    pub fn hook_sent(&mut self, tab_id: TabId, session: Option<&str>) {
        *self.hooks_pending.entry(target(tab_id, session)).or_default() += 1;
    }

    /// The hook's answer: its identifier (`None`: it failed). Ignored once the target is
    /// forgotten (unshared or detached meanwhile).
    pub fn hook_answered(&mut self, tab_id: TabId, session: Option<&str>, identifier: Option<String>) {
        let target = target(tab_id, session);
        let Some(pending) = self.hooks_pending.get_mut(&target) else { return };
        *pending -= 1;
        if *pending == 0 {
            self.hooks_pending.remove(&target);
        }
        if let Some(identifier) = identifier {
            self.hooks.insert((target, identifier));
        }
    }

    /// A request of `tab_id` paused for the guard.
    pub fn paused(&mut self, tab_id: TabId, session: Option<&str>, read: bool, request_id: String) -> Paused {
        let target = target(tab_id, session);
        if read && !self.clients_intercept.contains(&target) {
            return Paused::ContinueHere;
        }
        if !read {
            self.held.entry(tab_id).or_default().insert((target.1, request_id));
        }
        Paused::ToDaemon
    }

    /// `Runtime.executionContextCreated`: true when it is one of our worlds (hidden from
    /// clients from now on, its event never announced).
    pub fn context_created(
        &mut self,
        tab_id: TabId,
        name: &str,
        ids: impl IntoIterator<Item = String>,
    ) -> bool {
        if self.world_name.is_empty() || name != self.world_name {
            return false;
        }
        self.hidden_contexts.extend(ids.into_iter().map(|c| (tab_id, c)));
        true
    }

    /// A child session of the tab went.
    pub fn child_detached(&mut self, tab_id: TabId, session: &str) {
        let of_child = |(t, s): &Target| *t == tab_id && s.as_deref() == Some(session);
        self.clients_intercept.retain(|t| !of_child(t));
        self.hooks.retain(|(t, _)| !of_child(t));
        self.hooks_pending.retain(|t, _| !of_child(t));
        self.worlds.retain(|(t, _), _| !of_child(t));
    }

    /// A command about to reach Chrome for a client: refused if it names one of our worlds or
    /// removes our hook; a paused request it answers is no longer held. `param` reads a field
    /// of its params as text (numbers too).
    pub fn command_sent(
        &mut self,
        tab_id: TabId,
        session: Option<&str>,
        method: &str,
        param: impl Fn(&str) -> Option<String>,
    ) -> Result<(), CdpError> {
        if method.starts_with("Fetch.") {
            if let (Some(id), Some(held)) = (param("requestId"), self.held.get_mut(&tab_id)) {
                held.remove(&(session.map(str::to_owned), id));
            }
            return Ok(());
        }
        if method == "Page.removeScriptToEvaluateOnNewDocument" {
            let target = target(tab_id, session);
            let ours = |id: String| self.hooks.contains(&(target.clone(), id));
            if self.hooks_pending.contains_key(&target) || param("identifier").is_some_and(ours) {
                // As Chrome answers an identifier it does not know.
                return Err(CdpError { code: -32000, message: "Script not found".into(), data: None });
            }
            return Ok(());
        }
        if !(method.starts_with("Runtime.") || method.starts_with("DOM.") || method.starts_with("Debugger."))
        {
            return Ok(());
        }
        let named = ["contextId", "executionContextId", "uniqueContextId"]
            .into_iter()
            .filter_map(&param)
            .chain(param("objectId").and_then(|o| o.split('.').nth(1).map(str::to_owned)));
        if named.into_iter().any(|c| self.hidden_contexts.contains(&(tab_id, c))) {
            return Err(CdpError {
                code: -32000,
                message: "Cannot find context with specified id".into(),
                data: None,
            });
        }
        Ok(())
    }

    /// The writes still held on a tab, to fail before our debugger lets go of it.
    pub fn take_held(&mut self, tab_id: TabId) -> BTreeSet<HeldWrite> {
        self.held.remove(&tab_id).unwrap_or_default()
    }

    pub fn held_tabs(&self) -> Vec<TabId> {
        self.held.keys().copied().collect()
    }

    /// A tab is no longer shared: forget its worlds, hooks and interception. Its held writes
    /// stay until [`Gestures::take_held`] (the detach that follows would let them go).
    pub fn forget(&mut self, tab_id: TabId) {
        self.worlds.retain(|((t, _), _), _| *t != tab_id);
        self.hidden_contexts.retain(|(t, _)| *t != tab_id);
        self.clients_intercept.retain(|(t, _)| *t != tab_id);
        self.hooks.retain(|((t, _), _)| *t != tab_id);
        self.hooks_pending.retain(|(t, _), _| *t != tab_id);
    }

    /// A tab closed: its requests went with it, nothing of it is left to fail.
    pub fn tab_closed(&mut self, tab_id: TabId) {
        self.forget(tab_id);
        self.held.remove(&tab_id);
    }

    /// `Fetch.enable` on a target, with (`clients`) or without patterns of its clients.
    pub fn intercept(&mut self, tab_id: TabId, session: Option<&str>, clients: bool) {
        let target = target(tab_id, session);
        if clients {
            self.clients_intercept.insert(target);
        } else {
            self.clients_intercept.remove(&target);
        }
    }

    /// A question was answered or withdrawn: its picture stays beside the answer in the
    /// agent's history, for the last [`ANSWERED_PICTURES`] questions.
    pub fn question_settled(&mut self, id: u64) {
        if let Some(picture) = self.pictures.remove(&id) {
            if self.answered.len() == ANSWERED_PICTURES {
                self.answered.pop_front();
            }
            self.answered.push_back((id, picture));
        }
    }

    /// The pictures a panel shows: of the questions waiting, and of the answered ones its
    /// history still lists (`listed`).
    pub fn shown_pictures(&self, listed: impl Fn(u64) -> bool) -> Vec<(u64, String)> {
        let answered = self.answered.iter().filter(|(id, _)| listed(*id));
        self.pictures.iter().chain(answered.map(|(id, p)| (id, p))).map(|(id, p)| (*id, p.clone())).collect()
    }

    /// The daemon went, and its questions and history with it.
    pub fn forget_pictures(&mut self) {
        self.pictures.clear();
        self.answered.clear();
    }

    /// Our world in a frame, if made.
    pub fn world(&self, tab_id: TabId, session: Option<&str>, frame_id: &str) -> Option<i64> {
        self.worlds.get(&(target(tab_id, session), frame_id.to_owned())).copied()
    }

    pub fn world_made(&mut self, tab_id: TabId, session: Option<&str>, frame_id: &str, id: i64) {
        self.worlds.insert((target(tab_id, session), frame_id.to_owned()), id);
        self.hidden_contexts.insert((tab_id, id.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params<'a>(fields: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| fields.iter().find(|(f, _)| *f == k).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn a_write_held_while_its_tab_is_unshared_is_still_failed_before_the_detach() {
        // `stop_sharing` unshares (which forgets the tab) and only then fails what is held.
        let mut g = Gestures::default();
        assert_eq!(g.paused(1, None, false, "r1".into()), Paused::ToDaemon);
        assert_eq!(g.paused(1, Some("S"), false, "r2".into()), Paused::ToDaemon);
        g.forget(1);
        let held: Vec<HeldWrite> = g.take_held(1).into_iter().collect();
        assert_eq!(held, [(None, "r1".to_owned()), (Some("S".to_owned()), "r2".to_owned())]);
        assert!(g.take_held(1).is_empty(), "failed once");
    }

    #[test]
    fn a_write_held_while_its_tab_closes_is_forgotten() {
        let mut g = Gestures::default();
        g.paused(1, None, false, "r1".into());
        g.paused(2, None, false, "r2".into());
        g.tab_closed(1);
        assert_eq!(g.held_tabs(), [2], "the daemon going fails only what is left");
    }

    #[test]
    fn an_answered_write_is_no_longer_held() {
        let mut g = Gestures::default();
        g.paused(1, Some("S"), false, "r1".into());
        g.command_sent(1, None, "Fetch.continueRequest", params(&[("requestId", "r1")])).unwrap();
        assert_eq!(g.held_tabs(), [1], "another session's request of the same id");
        g.command_sent(1, Some("S"), "Fetch.failRequest", params(&[("requestId", "r1")])).unwrap();
        assert!(g.take_held(1).is_empty());
    }

    #[test]
    fn reads_go_on_here_unless_a_client_intercepts_the_target() {
        let mut g = Gestures::default();
        assert!(is_read("get", false) && is_read("POST", true) && !is_read("POST", false));
        assert_eq!(g.paused(1, None, true, "r".into()), Paused::ContinueHere);
        g.intercept(1, None, true);
        assert_eq!(g.paused(1, None, true, "r".into()), Paused::ToDaemon);
        assert_eq!(g.paused(1, Some("S"), true, "r".into()), Paused::ContinueHere, "another target");
        assert!(g.held_tabs().is_empty(), "reads are never held");
        g.intercept(1, None, false);
        assert_eq!(g.paused(1, None, true, "r".into()), Paused::ContinueHere);
    }

    #[test]
    fn no_client_names_our_worlds_or_removes_our_hook() {
        let mut g = Gestures::default();
        let name = g.world_name(|| 0xabc);
        assert_eq!(name, "tabtunnel-abc");
        assert_eq!(g.world_name(|| panic!("drawn once")), name);
        assert!(!g.context_created(1, "other", ["9".to_owned()]));
        assert!(g.context_created(1, &name, ["7".to_owned(), "u-7".to_owned()]));
        g.world_made(1, None, "F", 8);
        g.hook_sent(1, None);
        g.hook_answered(1, None, Some("h1".into()));
        let refused = |g: &mut Gestures, method: &str, p: &[(&str, &str)]| {
            g.command_sent(1, None, method, params(p)).is_err()
        };
        assert!(refused(&mut g, "Runtime.evaluate", &[("contextId", "7")]));
        assert!(refused(&mut g, "Runtime.evaluate", &[("uniqueContextId", "u-7")]));
        assert!(refused(&mut g, "Runtime.callFunctionOn", &[("executionContextId", "8")]));
        assert!(refused(&mut g, "Runtime.getProperties", &[("objectId", "123.7.4")]));
        assert!(!refused(&mut g, "Runtime.evaluate", &[("contextId", "9")]));
        assert!(!refused(&mut g, "Page.navigate", &[("contextId", "7")]), "not a context method");
        assert!(refused(&mut g, "Page.removeScriptToEvaluateOnNewDocument", &[("identifier", "h1")]));
        assert!(!refused(&mut g, "Page.removeScriptToEvaluateOnNewDocument", &[("identifier", "h2")]));
        assert!(
            g.command_sent(2, None, "Runtime.evaluate", params(&[("contextId", "7")])).is_ok(),
            "another tab's"
        );
        assert_eq!(g.world(1, None, "F"), Some(8));
        g.forget(1);
        assert!(!refused(&mut g, "Runtime.evaluate", &[("contextId", "7")]));
        assert_eq!(g.world(1, None, "F"), None);
    }

    #[test]
    fn while_our_hook_is_unanswered_no_script_of_its_target_may_be_removed() {
        let mut g = Gestures::default();
        let remove = |g: &mut Gestures, session: Option<&str>, id: &str| {
            g.command_sent(
                1,
                session,
                "Page.removeScriptToEvaluateOnNewDocument",
                params(&[("identifier", id)]),
            )
        };
        // Armed twice (a reset's re-arm) before either answer came.
        g.hook_sent(1, None);
        g.hook_sent(1, None);
        assert!(remove(&mut g, None, "1").is_err(), "it could be ours");
        assert!(remove(&mut g, Some("C"), "1").is_ok(), "another target of the tab");
        g.hook_answered(1, None, Some("1".into()));
        assert!(remove(&mut g, None, "2").is_err(), "the second is still unanswered");
        g.hook_answered(1, None, None);
        assert!(remove(&mut g, None, "2").is_ok(), "a client's own");
        assert!(remove(&mut g, None, "1").is_err(), "ours");
        // A hook never answered (its document replaced meanwhile) goes with its tab, and an
        // answer after that is not taken for the next sharing's.
        g.hook_sent(1, None);
        g.forget(1);
        assert!(remove(&mut g, None, "3").is_ok());
        g.hook_answered(1, None, Some("3".into()));
        assert!(remove(&mut g, None, "3").is_ok(), "a late answer of a forgotten target");
    }

    #[test]
    fn an_answered_questions_picture_stays_for_the_history_while_it_lists_it() {
        let mut g = Gestures::default();
        g.pictures.insert(1, "p1".into());
        g.pictures.insert(2, "p2".into());
        g.question_settled(1);
        g.question_settled(7); // no picture came
        assert_eq!(g.shown_pictures(|_| false), [(2, "p2".to_owned())], "the history no longer lists 1");
        assert_eq!(g.shown_pictures(|id| id == 1), [(2, "p2".to_owned()), (1, "p1".to_owned())]);
        for id in 10..10 + ANSWERED_PICTURES as u64 {
            g.pictures.insert(id, format!("p{id}"));
            g.question_settled(id);
        }
        assert!(!g.shown_pictures(|_| true).iter().any(|(id, _)| *id == 1), "the oldest gave way");
        assert_eq!(g.shown_pictures(|_| true).len(), 1 + ANSWERED_PICTURES);
        g.forget_pictures();
        assert!(g.shown_pictures(|_| true).is_empty());
    }

    #[test]
    fn a_child_that_went_takes_its_worlds_hooks_and_interception() {
        let mut g = Gestures::default();
        g.world_made(1, Some("C"), "F", 3);
        g.world_made(1, None, "F", 4);
        g.hook_sent(1, Some("C"));
        g.hook_answered(1, Some("C"), Some("h".into()));
        g.intercept(1, Some("C"), true);
        g.child_detached(1, "C");
        assert_eq!((g.world(1, Some("C"), "F"), g.world(1, None, "F")), (None, Some(4)));
        assert!(g
            .command_sent(
                1,
                Some("C"),
                "Page.removeScriptToEvaluateOnNewDocument",
                params(&[("identifier", "h")])
            )
            .is_ok());
        assert_eq!(g.paused(1, Some("C"), true, "r".into()), Paused::ContinueHere);
    }
}
