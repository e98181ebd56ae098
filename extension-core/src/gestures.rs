//! The gesture guard's state in the browser (its decisions are the daemon's:
//! `core/src/gestures/`): our isolated world and its contexts, which no client may name; our
//! click hook's identifiers, which no client may remove; our scripts (named by a `sourceURL`
//! of ours), which no client may see, break in or change through `Debugger`; the paused writes sent to the daemon
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
    /// A write of a document being replaced ([`Gestures::replacing`]): failed here at once.
    FailHere,
}

/// Whether a paused request only reads: at its response stage, or a safe method.
pub fn is_read(method: &str, response_stage: bool) -> bool {
    response_stage || ["GET", "HEAD", "OPTIONS"].iter().any(|m| m.eq_ignore_ascii_case(method))
}

/// What becomes of an event of a shared tab that may tell of our scripts.
#[derive(Debug, PartialEq, Eq)]
pub enum OurEvent {
    /// Not about ours: on to the daemon.
    Deliver,
    /// About ours: never announced.
    Hide,
    /// A client's pause stopped in our script: hidden, and the target resumed at once
    /// (`Debugger.resume`), so no client gets a call frame of ours to evaluate on.
    HideAndResume,
}

#[derive(Debug, Default)]
pub struct Gestures {
    /// Our isolated world's name: random, so no page or agent can make or reach a world by it.
    world_name: String,
    /// The `sourceURL` our scripts carry, so that `Debugger` events tell them apart whether or
    /// not a client turned `Runtime` on: random too, and not the world's name (a stack trace or
    /// a coverage report may show it; it opens nothing).
    script_url: String,
    /// Our scripts' ids, by target (ids are a renderer's own: another process may reuse one).
    hidden_scripts: BTreeSet<(Target, String)>,
    /// Targets we resumed from a pause in our script: their next `Debugger.resumed` is ours.
    resuming: BTreeSet<Target>,
    /// Our world's context in each frame we read, by target and frame id.
    worlds: BTreeMap<(Target, String), i64>,
    /// Context ids and unique ids of our worlds, which no client may name.
    hidden_contexts: BTreeSet<(TabId, String)>,
    /// Paused writes sent to the daemon and not answered yet.
    held: BTreeMap<TabId, BTreeSet<HeldWrite>>,
    /// Tabs whose document is being replaced as they leave their agent (how many replacements
    /// are under way: a take back may come during a hand-over's): their writes fail.
    replacing: BTreeMap<TabId, usize>,
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

fn refused(why: &str) -> CdpError {
    CdpError { code: -32000, message: format!("refused by tabtunnel: {why}"), data: None }
}

fn target(tab_id: TabId, session: Option<&str>) -> Target {
    (tab_id, session.map(str::to_owned))
}

impl Gestures {
    /// Our world's name, drawn (from `random`, with our scripts' URL) the first time.
    pub fn world_name(&mut self, mut random: impl FnMut() -> u64) -> String {
        if self.world_name.is_empty() {
            self.world_name = format!("tabtunnel-{:x}", random());
            self.script_url = format!("tabtunnel-{:x}.js", random());
        }
        self.world_name.clone()
    }

    /// A script of ours with the `sourceURL` that hides it (drawn with the world's name). It
    /// ends with a line break, so a function declaration stays one where Chrome wraps it in
    /// parentheses (`Runtime.callFunctionOn`).
    pub fn our_script(&mut self, source: &str, random: impl FnMut() -> u64) -> String {
        self.world_name(random);
        format!("{}\n//# sourceURL={}\n", source.trim_end(), self.script_url)
    }

    /// An event of a shared tab that may tell of our scripts: `scriptParsed` of one (its id is
    /// kept from clients from now on, and its context too: we may not have heard of the world
    /// if no client turned `Runtime` on), a pause in one, what our worlds log or throw.
    /// `param` reads a field of the params by a dotted path (`callFrames.0.callFrameId`).
    pub fn event(
        &mut self,
        tab_id: TabId,
        session: Option<&str>,
        method: &str,
        param: impl Fn(&str) -> Option<String>,
    ) -> OurEvent {
        let target = target(tab_id, session);
        let hidden_context =
            |g: &Self, path: &str| param(path).is_some_and(|c| g.hidden_contexts.contains(&(tab_id, c)));
        let hidden_script = |g: &Self, path: &str| {
            param(path).is_some_and(|s| g.hidden_scripts.contains(&(target.clone(), s)))
        };
        let hide = match method {
            "Debugger.scriptParsed" | "Debugger.scriptFailedToParse" => {
                let ours = !self.script_url.is_empty() && param("url").is_some_and(|u| u == self.script_url)
                    || hidden_context(self, "executionContextId");
                if ours {
                    if let Some(id) = param("scriptId") {
                        self.hidden_scripts.insert((target.clone(), id));
                    }
                    if let Some(context) = param("executionContextId") {
                        self.hidden_contexts.insert((tab_id, context));
                    }
                }
                ours
            }
            "Debugger.paused" => {
                let ours = hidden_script(self, "callFrames.0.location.scriptId")
                    || param("callFrames.0.callFrameId")
                        .and_then(|f| f.split('.').nth(1).map(str::to_owned))
                        .is_some_and(|c| self.hidden_contexts.contains(&(tab_id, c)));
                if ours {
                    self.resuming.insert(target);
                    return OurEvent::HideAndResume;
                }
                false
            }
            "Debugger.resumed" => self.resuming.remove(&target),
            "Debugger.breakpointResolved" => hidden_script(self, "location.scriptId"),
            "Runtime.consoleAPICalled" | "Runtime.executionContextDestroyed" => {
                hidden_context(self, "executionContextId")
            }
            "Runtime.exceptionThrown" => hidden_context(self, "exceptionDetails.executionContextId"),
            _ => false,
        };
        if hide {
            OurEvent::Hide
        } else {
            OurEvent::Deliver
        }
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
        if !read && self.replacing.contains_key(&tab_id) {
            return Paused::FailHere;
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
        self.hidden_scripts.retain(|(t, _)| !of_child(t));
        self.resuming.retain(|t| !of_child(t));
    }

    /// A command about to reach Chrome for a client: refused if it names one of our worlds, one
    /// of our scripts or a call frame in them, could stop in our scripts, or removes our hook;
    /// a paused request it answers is no longer held. `param` reads a field of its params by a
    /// dotted path, as text (numbers too); `regex_matches(pattern, text)` is JavaScript's (V8's
    /// breakpoints use the same engine).
    pub fn command_sent(
        &mut self,
        tab_id: TabId,
        session: Option<&str>,
        method: &str,
        param: impl Fn(&str) -> Option<String>,
        regex_matches: impl Fn(&str, &str) -> bool,
    ) -> Result<(), CdpError> {
        if method.starts_with("Fetch.") {
            if let (Some(id), Some(held)) = (param("requestId"), self.held.get_mut(&tab_id)) {
                held.remove(&(session.map(str::to_owned), id));
            }
            return Ok(());
        }
        let target = target(tab_id, session);
        if method == "Page.removeScriptToEvaluateOnNewDocument" {
            let ours = |id: String| self.hooks.contains(&(target.clone(), id));
            if self.hooks_pending.contains_key(&target) || param("identifier").is_some_and(ours) {
                // As Chrome answers an identifier it does not know.
                return Err(CdpError { code: -32000, message: "Script not found".into(), data: None });
            }
            return Ok(());
        }
        // A world by our name would be ours (the name is random; this holds if it ever shows).
        let names_our_world =
            |field: &str| !self.world_name.is_empty() && param(field).is_some_and(|n| n == self.world_name);
        if names_our_world("worldName") || names_our_world("executionContextName") {
            return Err(refused("that world is tabtunnel's own"));
        }
        if method.starts_with("Debugger.") {
            for path in ["scriptId", "location.scriptId", "start.scriptId", "end.scriptId"] {
                if let Some(id) =
                    param(path).filter(|id| self.hidden_scripts.contains(&(target.clone(), id.clone())))
                {
                    // As Chrome answers a script id it does not know.
                    return Err(CdpError {
                        code: -32000,
                        message: format!("No script for id: {id}"),
                        data: None,
                    });
                }
            }
            if method == "Debugger.setBreakpointByUrl" && !self.script_url.is_empty() {
                let by_url = param("url").is_some_and(|u| u == self.script_url);
                let by_regex = param("urlRegex").is_some_and(|r| regex_matches(&r, &self.script_url));
                if by_url || by_regex {
                    return Err(refused(
                        "a breakpoint by this URL pattern would stop in tabtunnel's own scripts too; use a narrower urlRegex",
                    ));
                }
            }
        }
        let named =
            ["contextId", "executionContextId", "uniqueContextId"].into_iter().filter_map(&param).chain(
                ["objectId", "callFrameId"]
                    .into_iter()
                    .filter_map(&param)
                    .filter_map(|o| o.split('.').nth(1).map(str::to_owned)),
            );
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

    /// A tab's document is replaced as it leaves its agent (or changes hands): no one may allow
    /// its writes any more, and Chrome sends on those a child session holds when the session
    /// goes with its frame (an out-of-process frame's, as the reload takes it). Its writes fail
    /// as they pause until [`Gestures::replaced`]; returns those held now, to fail.
    pub fn replacing(&mut self, tab_id: TabId) -> BTreeSet<HeldWrite> {
        *self.replacing.entry(tab_id).or_default() += 1;
        self.take_held(tab_id)
    }

    /// A replacement of the tab's document ended (its new document is in, or it closed).
    pub fn replaced(&mut self, tab_id: TabId) {
        if let Some(under_way) = self.replacing.get_mut(&tab_id) {
            *under_way -= 1;
            if *under_way == 0 {
                self.replacing.remove(&tab_id);
            }
        }
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
        self.hidden_scripts.retain(|((t, _), _)| *t != tab_id);
        self.resuming.retain(|(t, _)| *t != tab_id);
        self.replacing.remove(&tab_id);
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

    fn no_regex(_: &str, _: &str) -> bool {
        false
    }

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
    fn the_writes_of_a_document_being_replaced_fail_held_or_new() {
        let mut g = Gestures::default();
        g.paused(1, Some("OOPIF"), false, "r1".into());
        g.paused(2, None, false, "r2".into());
        let held: Vec<HeldWrite> = g.replacing(1).into_iter().collect();
        assert_eq!(held, [(Some("OOPIF".to_owned()), "r1".to_owned())], "the tab's own, to fail");
        assert_eq!(g.paused(1, Some("OOPIF"), false, "r3".into()), Paused::FailHere);
        assert_eq!(g.paused(1, None, false, "r4".into()), Paused::FailHere);
        assert_eq!(g.paused(1, None, true, "r5".into()), Paused::ContinueHere, "the reload reads");
        assert_eq!(g.paused(2, None, false, "r6".into()), Paused::ToDaemon, "another tab");
        assert_eq!(g.held_tabs(), [2]);
        g.replaced(1);
        assert_eq!(g.paused(1, None, false, "r7".into()), Paused::ToDaemon, "the new document's");
        g.replacing(1);
        g.forget(1);
        assert_eq!(g.paused(1, None, false, "r8".into()), Paused::ToDaemon, "shared again later");
        g.replaced(1);
        assert_eq!(g.paused(1, None, false, "r9".into()), Paused::ToDaemon, "ended after it was forgotten");
    }

    #[test]
    fn a_take_back_during_a_hand_overs_reload_keeps_the_writes_failing_until_both_end() {
        let mut g = Gestures::default();
        g.replacing(1); // the hand-over's reload
        g.replacing(1); // the take back's, meanwhile
        g.replaced(1);
        assert_eq!(g.paused(1, Some("OOPIF"), false, "r1".into()), Paused::FailHere, "one still under way");
        g.replaced(1);
        assert_eq!(g.paused(1, None, false, "r2".into()), Paused::ToDaemon);
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
        g.command_sent(1, None, "Fetch.continueRequest", params(&[("requestId", "r1")]), no_regex).unwrap();
        assert_eq!(g.held_tabs(), [1], "another session's request of the same id");
        g.command_sent(1, Some("S"), "Fetch.failRequest", params(&[("requestId", "r1")]), no_regex).unwrap();
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
            g.command_sent(1, None, method, params(p), no_regex).is_err()
        };
        assert!(refused(&mut g, "Runtime.evaluate", &[("contextId", "7")]));
        assert!(refused(&mut g, "Runtime.evaluate", &[("uniqueContextId", "u-7")]));
        assert!(refused(&mut g, "Runtime.callFunctionOn", &[("executionContextId", "8")]));
        assert!(refused(&mut g, "Runtime.getProperties", &[("objectId", "123.7.4")]));
        assert!(!refused(&mut g, "Runtime.evaluate", &[("contextId", "9")]));
        assert!(refused(&mut g, "Page.removeScriptToEvaluateOnNewDocument", &[("identifier", "h1")]));
        assert!(!refused(&mut g, "Page.removeScriptToEvaluateOnNewDocument", &[("identifier", "h2")]));
        assert!(
            g.command_sent(2, None, "Runtime.evaluate", params(&[("contextId", "7")]), no_regex).is_ok(),
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
                no_regex,
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
                params(&[("identifier", "h")]),
                no_regex,
            )
            .is_ok());
        assert_eq!(g.paused(1, Some("C"), true, "r".into()), Paused::ContinueHere);
    }

    #[test]
    fn our_scripts_carry_our_url_on_a_line_of_its_own() {
        let mut g = Gestures::default();
        let mut n = 0;
        let mut random = || {
            n += 1;
            n
        };
        assert_eq!(
            g.our_script("function (a) {\n  return a;\n}\n", &mut random),
            "function (a) {\n  return a;\n}\n//# sourceURL=tabtunnel-2.js\n"
        );
        assert_eq!(g.world_name(|| 9), "tabtunnel-1", "drawn once, apart from the URL");
    }

    /// The fields of an event or command, as the worker reads them by path.
    fn fields<'a>(fields: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        params(fields)
    }

    #[test]
    fn no_client_sees_our_scripts_or_breaks_in_them() {
        let mut g = Gestures::default();
        let world = g.world_name(|| 0xabc);
        let url = format!("tabtunnel-{:x}.js", 0xabc);
        let event = |g: &mut Gestures, session: Option<&str>, method: &str, f: &[(&str, &str)]| {
            g.event(1, session, method, fields(f))
        };
        // Ours, whether or not we knew its world (no client turned `Runtime` on).
        assert_eq!(
            event(
                &mut g,
                None,
                "Debugger.scriptParsed",
                &[("url", &url), ("scriptId", "31"), ("executionContextId", "5")]
            ),
            OurEvent::Hide
        );
        assert_eq!(
            event(
                &mut g,
                None,
                "Debugger.scriptParsed",
                &[("url", "https://shop/app.js"), ("scriptId", "32"), ("executionContextId", "2")]
            ),
            OurEvent::Deliver
        );
        // Another script compiled in our world (no URL of ours) is ours too.
        assert_eq!(
            event(
                &mut g,
                None,
                "Debugger.scriptParsed",
                &[("url", ""), ("scriptId", "33"), ("executionContextId", "5")]
            ),
            OurEvent::Hide
        );
        assert_eq!(
            event(&mut g, None, "Debugger.scriptFailedToParse", &[("url", &url), ("scriptId", "34")]),
            OurEvent::Hide
        );
        let sent = |g: &mut Gestures, session: Option<&str>, method: &str, f: &[(&str, &str)]| {
            g.command_sent(1, session, method, fields(f), |pattern, text| {
                // A stand-in for JavaScript's RegExp: enough for these patterns.
                pattern == ".*" || pattern.strip_prefix('^').is_some_and(|p| text.starts_with(p))
            })
        };
        for (method, path) in [
            ("Debugger.getScriptSource", "scriptId"),
            ("Debugger.setScriptSource", "scriptId"),
            ("Debugger.searchInContent", "scriptId"),
            ("Debugger.setBreakpoint", "location.scriptId"),
            ("Debugger.continueToLocation", "location.scriptId"),
            ("Debugger.getPossibleBreakpoints", "start.scriptId"),
            ("Debugger.getPossibleBreakpoints", "end.scriptId"),
        ] {
            for ours in ["31", "33"] {
                let e = sent(&mut g, None, method, &[(path, ours)]).expect_err(method);
                assert_eq!(e.message, format!("No script for id: {ours}"), "{method} {path}");
            }
            assert!(sent(&mut g, None, method, &[(path, "32")]).is_ok(), "{method}: the page's own");
            assert!(
                sent(&mut g, Some("OOPIF"), method, &[(path, "31")]).is_ok(),
                "{method}: another renderer's 31"
            );
        }
        // A call frame or an object in the world the script showed us.
        assert!(sent(&mut g, None, "Debugger.evaluateOnCallFrame", &[("callFrameId", "-77.5.0")]).is_err());
        assert!(sent(&mut g, None, "Debugger.setVariableValue", &[("callFrameId", "-77.5.1")]).is_err());
        assert!(
            sent(&mut g, None, "Debugger.setBreakpointOnFunctionCall", &[("objectId", "-77.5.9")]).is_err()
        );
        assert!(sent(&mut g, None, "Debugger.evaluateOnCallFrame", &[("callFrameId", "-77.2.0")]).is_ok());
        // Breakpoints by URL that would stop in ours, whatever their condition.
        assert!(sent(
            &mut g,
            None,
            "Debugger.setBreakpointByUrl",
            &[("urlRegex", ".*"), ("condition", "x=0")]
        )
        .is_err());
        assert!(sent(&mut g, None, "Debugger.setBreakpointByUrl", &[("urlRegex", "^tabtunnel")]).is_err());
        assert!(sent(&mut g, None, "Debugger.setBreakpointByUrl", &[("url", &url)]).is_err());
        assert!(sent(&mut g, None, "Debugger.setBreakpointByUrl", &[("urlRegex", "^https://shop/")]).is_ok());
        assert!(sent(&mut g, None, "Debugger.setBreakpointByUrl", &[("url", "https://shop/app.js")]).is_ok());
        // Our world by name, on every route that takes one.
        assert!(sent(&mut g, None, "Page.createIsolatedWorld", &[("worldName", &world)]).is_err());
        assert!(
            sent(&mut g, None, "Page.addScriptToEvaluateOnNewDocument", &[("worldName", &world)]).is_err()
        );
        assert!(sent(&mut g, None, "Runtime.addBinding", &[("executionContextName", &world)]).is_err());
        assert!(sent(&mut g, None, "Page.createIsolatedWorld", &[("worldName", "mine")]).is_ok());
        // A pause in ours is resumed here, and its `resumed` is ours too; a pause in the page's
        // goes to the client.
        assert_eq!(
            event(
                &mut g,
                None,
                "Debugger.paused",
                &[("callFrames.0.location.scriptId", "31"), ("callFrames.0.callFrameId", "-77.5.0")]
            ),
            OurEvent::HideAndResume
        );
        assert_eq!(
            event(
                &mut g,
                None,
                "Debugger.paused",
                &[("callFrames.0.location.scriptId", "99"), ("callFrames.0.callFrameId", "-77.5.0")]
            ),
            OurEvent::HideAndResume,
            "by its frame's context"
        );
        assert_eq!(event(&mut g, None, "Debugger.resumed", &[]), OurEvent::Hide);
        assert_eq!(event(&mut g, None, "Debugger.resumed", &[]), OurEvent::Deliver, "the client's own");
        assert_eq!(
            event(
                &mut g,
                None,
                "Debugger.paused",
                &[("callFrames.0.location.scriptId", "32"), ("callFrames.0.callFrameId", "-77.2.0")]
            ),
            OurEvent::Deliver
        );
        assert_eq!(
            event(&mut g, None, "Runtime.consoleAPICalled", &[("executionContextId", "5")]),
            OurEvent::Hide
        );
        assert_eq!(
            event(&mut g, None, "Runtime.consoleAPICalled", &[("executionContextId", "2")]),
            OurEvent::Deliver
        );
        assert_eq!(
            event(&mut g, None, "Runtime.exceptionThrown", &[("exceptionDetails.executionContextId", "5")]),
            OurEvent::Hide
        );
        // Unshared: nothing of it is kept.
        g.forget(1);
        assert!(sent(&mut g, None, "Debugger.getScriptSource", &[("scriptId", "31")]).is_ok());
    }
}
