//! Which tabs are shared, with which agent, and which are being attached: the bookkeeping of
//! `extension-wasm`'s `worker/sharing.rs`, which does the `chrome.debugger` calls. An attach is
//! a ticket ([`Attach`]) from [`Sharing::begin_attach`] to [`Sharing::finish_attach`], so two
//! attaches of one tab (the human's "share", a restored tab, a popup's adoption) cannot
//! interleave.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Deref;

use serde::{Deserialize, Serialize};
use tabtunnel_wire::{TabId, TabInfo, UnshareReason, DEFAULT_AGENT};

use crate::epochs::Epochs;

/// Who a shared tab belongs to, as remembered across worker restarts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Owner {
    pub agent: String,
    /// The agent opened it (closed when the agent is done), rather than the human handing it.
    pub created: bool,
}

impl Owner {
    pub fn human_shared() -> Self {
        Owner { agent: DEFAULT_AGENT.into(), created: false }
    }

    pub fn of(info: &TabInfo) -> Self {
        Owner { agent: info.agent.clone(), created: info.created }
    }

    /// Whether its tab's page is shown as focused (`wire::emulates_focus`).
    pub fn emulates_focus(&self) -> bool {
        tabtunnel_wire::emulates_focus(&self.agent, self.created)
    }
}

/// A shared tab as `chrome.storage.session` keeps it for a restarted worker.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredTab {
    pub tab_id: TabId,
    #[serde(flatten)]
    pub owner: Owner,
}

pub const KILL_SWITCH_ON: &str = "The kill switch is on: no tab is shared until you turn it off.";
pub const BEING_SHARED: &str = "This tab is being shared already; try again in a moment.";
pub const BEING_LET_GO: &str = "This tab is being let go or handed over; try again in a moment.";

/// An attach of a tab under way; [`Sharing::finish_attach`] takes it back.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "an attach must be finished"]
pub struct Attach {
    tab_id: TabId,
}

impl Attach {
    pub fn tab_id(&self) -> TabId {
        self.tab_id
    }
}

/// What a request to share a tab with an agent comes to.
#[derive(Debug, PartialEq, Eq)]
pub enum Share {
    Refused(&'static str),
    /// Not shared: attach it, then [`Sharing::finish_attach`] and, if described, [`Sharing::add`].
    Attach(Attach),
    /// Shared with this owner already.
    Unchanged(TabInfo),
    /// Shared already, now (recorded) with the new owner; `refocus` is the focus emulation to
    /// set if it changes. `replace`: what is done to its document first, while the debugger still
    /// holds it, since the old agent's code may run there (as for [`Sharing::leave`]); then
    /// [`Sharing::handed_over`] says what to tell the daemon, which moves the tab to the new
    /// agent's clients.
    ChangedHands {
        refocus: Option<bool>,
        replace: Replace,
    },
}

/// Why a shared tab leaves its agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Departure {
    /// The kill switch: every agent stops.
    KillSwitch,
    /// The human's Unshare or Take back, or the agent's own release (its `ReleaseTab`, or its
    /// disconnect with `TabsFate::Release`).
    Released,
}

/// What is done to a leaving tab's document while the debugger (and so the gesture guard)
/// still holds it: a page an agent drove may run the agent's code (a timer, a listener), which
/// would go on unguarded once the debugger lets go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// The agent's own tab, on the kill switch: closed.
    Close,
    /// Reloaded: it stays open at its URL, with a new document. The reload runs with `Page` on,
    /// so that a "Leave site?" dialog holding the old document can be answered. `twice`: a
    /// client had Chrome run a script in every new document
    /// (`Page.addScriptToEvaluateOnNewDocument`), which the new document ran then; it is
    /// reloaded again with `Page` off, where Chrome runs none (and no dialog can hold a document
    /// nobody interacted with).
    Reload { twice: bool },
    /// Never driven: nothing of an agent's can be in it.
    Nothing,
}

/// `Page.getNavigationHistory`'s answer, as far as [`renewal`] reads it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigationHistory {
    pub current_index: usize,
    pub entries: Vec<HistoryEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    pub url: String,
    pub transition_type: String,
}

/// How one step of a [`Replace::Reload`] gives a tab a new document.
#[derive(Debug, PartialEq, Eq)]
pub enum Renew {
    Reload,
    /// Load this URL (with GET).
    Navigate(String),
}

/// How to renew a tab's document, from its history: a document a form posted to is loaded again
/// by its URL, since a reload would send the form again, or ask "Confirm form resubmission" (a
/// browser dialog no CDP command answers) and keep the old document. Its fragment is dropped:
/// a navigation that changes only the fragment keeps the document. (A form sent with GET is
/// loaded again the same way, as a reload would.)
pub fn renewal(history: &NavigationHistory) -> Renew {
    match history.entries.get(history.current_index) {
        Some(entry) if entry.transition_type == "form_submit" => {
            let url = entry.url.split('#').next().unwrap_or_default();
            Renew::Navigate(url.to_owned())
        }
        _ => Renew::Reload,
    }
}

/// The commands the daemon sends a tab on its own (`send_housekeeping`, and the guard's answers
/// to the requests it paused, in `tabtunnel-core`): none can leave code running in a page. A
/// client answers paused requests only after its own `Fetch.enable`, which drives the tab.
fn starts_nothing(method: &str) -> bool {
    matches!(
        method,
        "Runtime.runIfWaitingForDebugger"
            | "Page.enable"
            | "Page.handleJavaScriptDialog"
            | "Log.stopViolationsReport"
            | "Tracing.end"
            | "Target.detachFromTarget"
            | "Fetch.continueRequest"
            | "Fetch.continueWithAuth"
            | "Fetch.fulfillRequest"
            | "Fetch.failRequest"
    ) || method.ends_with(".disable")
}

/// What Chrome's debugger detaching from a tab of ours comes to.
#[derive(Debug, PartialEq, Eq)]
pub enum Detached {
    /// Not a shared tab (maybe a prepared one).
    NotShared,
    Unshare(UnshareReason),
    /// The target closed under a tab that may live on (a restricted page): re-attach.
    Reattach,
}

/// What a re-attach of a shared tab comes to.
#[derive(Debug, PartialEq, Eq)]
pub enum Reattached {
    /// Unshared meanwhile: let go of the new session.
    Gone,
    /// Same clients, same session state: the daemon hears what changed, if anything.
    Changed(Option<TabInfo>),
    /// The old session died under its clients: they are told the tab went and came back, and
    /// commands they sent before are answered "Target closed" ([`Epochs`]).
    StartOver(TabInfo),
}

#[derive(Debug, Default)]
pub struct Sharing {
    shared: BTreeMap<TabId, TabInfo>,
    attaching: BTreeSet<TabId>,
    /// Tabs that went off the web while shared: a script of an agent's may live in them.
    tainted: BTreeSet<TabId>,
    /// When each shared tab last changed its URL (`Date.now()`): whose page a new worker is.
    navigated_at: BTreeMap<TabId, f64>,
    /// Shared tabs a client command was relayed to since they were shared.
    driven: BTreeSet<TabId>,
    /// Those of them that were given a script for every new document.
    scripted: BTreeSet<TabId>,
    /// Shared tabs being let go ([`Sharing::leave`]): clients' commands are refused.
    leaving: BTreeMap<TabId, UnshareReason>,
    /// Shared tabs whose document is replaced before they go to another agent
    /// ([`Share::ChangedHands`]): clients' commands are refused, and their changes are told the
    /// daemon with the hand-over.
    handing_over: BTreeSet<TabId>,
}

/// Reading the shared tabs is free; changing them goes through the methods.
impl Deref for Sharing {
    type Target = BTreeMap<TabId, TabInfo>;
    fn deref(&self) -> &Self::Target {
        &self.shared
    }
}

impl Sharing {
    /// A request to share `tab_id` with `owner`.
    pub fn share(&mut self, tab_id: TabId, owner: Owner, kill_switch: bool) -> Share {
        if kill_switch {
            return Share::Refused(KILL_SWITCH_ON);
        }
        if let Some(before) = self.owner_of(tab_id) {
            if before == owner {
                return Share::Unchanged(self.shared[&tab_id].clone());
            }
            if self.leaving.contains_key(&tab_id) || self.handing_over.contains(&tab_id) {
                return Share::Refused(BEING_LET_GO);
            }
            let refocus =
                (before.emulates_focus() != owner.emulates_focus()).then_some(owner.emulates_focus());
            // Another agent's page must hold nothing of the one before (the same agent's keeps
            // its page, as its clients keep the tab).
            let replace = match before.agent == owner.agent {
                true => Replace::Nothing,
                false => self.reload(tab_id),
            };
            let info = self.shared.get_mut(&tab_id).expect("shared");
            info.agent = owner.agent;
            info.created = owner.created;
            self.handing_over.insert(tab_id);
            return Share::ChangedHands { refocus, replace };
        }
        match self.begin_attach(tab_id) {
            Some(attach) => Share::Attach(attach),
            None => Share::Refused(BEING_SHARED),
        }
    }

    /// Starts attaching a tab unless an attach of it is under way.
    pub fn begin_attach(&mut self, tab_id: TabId) -> Option<Attach> {
        self.attaching.insert(tab_id).then_some(Attach { tab_id })
    }

    pub fn finish_attach(&mut self, attach: Attach) {
        self.attaching.remove(&attach.tab_id);
    }

    pub fn attaching(&self) -> impl Iterator<Item = TabId> + '_ {
        self.attaching.iter().copied()
    }

    pub fn is_attaching(&self, tab_id: TabId) -> bool {
        self.attaching.contains(&tab_id)
    }

    /// Records a tab as shared (described after its attach).
    /// A tab is shared. A popup (a tab a page opened) counts as driven from the start: its
    /// opener's scripts reach into it through the window `window.open` gave them, with no
    /// command of a client's to it.
    pub fn add(&mut self, info: TabInfo, now: f64) {
        self.navigated_at.insert(info.tab_id, now);
        if info.opener_target_id.is_some() {
            self.driven.insert(info.tab_id);
        }
        self.shared.insert(info.tab_id, info);
    }

    /// Changes a shared tab; its new description if that changed anything the daemon should
    /// hear now (a tab being handed over is told with the hand-over, under its new agent).
    pub fn change(&mut self, tab_id: TabId, update: impl FnOnce(&mut TabInfo)) -> Option<TabInfo> {
        let info = self.shared.get_mut(&tab_id)?;
        let before = info.clone();
        update(info);
        (*info != before && !self.handing_over.contains(&tab_id)).then(|| info.clone())
    }

    /// A hand-over ([`Share::ChangedHands`]) is done: the tab's description, for the daemon,
    /// unless it was let go meanwhile. What the old agent drove is forgotten: the new one drove
    /// nothing yet.
    pub fn handed_over(&mut self, tab_id: TabId) -> Option<TabInfo> {
        if !self.handing_over.remove(&tab_id) || self.leaving.contains_key(&tab_id) {
            return None;
        }
        self.driven.remove(&tab_id);
        self.scripted.remove(&tab_id);
        self.shared.get(&tab_id).cloned()
    }

    /// A shared tab's URL changed at `now`.
    pub fn navigated(&mut self, tab_id: TabId, now: f64) {
        if self.shared.contains_key(&tab_id) {
            self.navigated_at.insert(tab_id, now);
        }
    }

    pub fn navigated_at(&self, tab_id: TabId) -> f64 {
        self.navigated_at.get(&tab_id).copied().unwrap_or(0.0)
    }

    /// A command `method` is relayed to a shared tab: whatever a client runs there is its
    /// agent's. The daemon's own housekeeping (which it sends to tabs no client drove, e.g. to
    /// let a new frame run) starts nothing there.
    pub fn drove(&mut self, tab_id: TabId, method: &str) {
        if self.shared.contains_key(&tab_id) && !starts_nothing(method) {
            self.driven.insert(tab_id);
            if method == "Page.addScriptToEvaluateOnNewDocument" {
                self.scripted.insert(tab_id);
            }
        }
    }

    /// Starts letting go of a shared tab: what to do to its document before the debugger
    /// detaches. `None` when it is not shared, or being let go already. From now on clients'
    /// commands to it are refused ([`Sharing::is_leaving`]), so none can put the agent's code
    /// back into the new document.
    ///
    /// `reason` is what the daemon hears when the tab is unshared, even if closing it (the kill
    /// switch's [`Replace::Close`]) has Chrome report it closed first ([`Sharing::closed`]).
    pub fn leave(&mut self, tab_id: TabId, departure: Departure, reason: UnshareReason) -> Option<Replace> {
        let info = self.shared.get(&tab_id)?;
        if self.leaving.contains_key(&tab_id) {
            return None;
        }
        let created = info.created;
        self.leaving.insert(tab_id, reason);
        Some(match departure {
            Departure::KillSwitch if created => Replace::Close,
            _ => self.reload(tab_id),
        })
    }

    /// What replaces the document of a tab that stays open as it leaves its agent: a reload if
    /// a client drove it (see [`Replace::Reload`]).
    fn reload(&self, tab_id: TabId) -> Replace {
        match self.driven.contains(&tab_id) {
            true => Replace::Reload { twice: self.scripted.contains(&tab_id) },
            false => Replace::Nothing,
        }
    }

    /// Whether the tab is being let go (not only handed over).
    pub fn is_being_let_go(&self, tab_id: TabId) -> bool {
        self.leaving.contains_key(&tab_id)
    }

    /// Whether clients' commands to the tab are refused: it is being let go or handed over, and
    /// none may put an agent's code into its new document.
    pub fn is_leaving(&self, tab_id: TabId) -> bool {
        self.leaving.contains_key(&tab_id) || self.handing_over.contains(&tab_id)
    }

    /// Why a shared tab that Chrome reports closed is unshared: closed, unless it was being let
    /// go, when it keeps the reason it left for.
    pub fn closed(&self, tab_id: TabId) -> UnshareReason {
        self.leaving.get(&tab_id).copied().unwrap_or(UnshareReason::Closed)
    }

    /// The tab is no longer shared; what it was, if it was.
    pub fn unshare(&mut self, tab_id: TabId) -> Option<TabInfo> {
        self.navigated_at.remove(&tab_id);
        self.driven.remove(&tab_id);
        self.scripted.remove(&tab_id);
        self.leaving.remove(&tab_id);
        self.handing_over.remove(&tab_id);
        self.shared.remove(&tab_id)
    }

    pub fn owner_of(&self, tab_id: TabId) -> Option<Owner> {
        self.shared.get(&tab_id).map(Owner::of)
    }

    /// The tab went off the web while shared.
    pub fn taint(&mut self, tab_id: TabId) {
        self.tainted.insert(tab_id);
    }

    /// Whether a debugger of ours holds the tab (shared or being shared), or held it as it
    /// left the web: a page there may be an agent's script.
    pub fn is_held(&self, tab_id: TabId) -> bool {
        self.shared.contains_key(&tab_id)
            || self.attaching.contains(&tab_id)
            || self.tainted.contains(&tab_id)
    }

    /// What a restarted worker re-attaches.
    pub fn stored(&self) -> Vec<StoredTab> {
        self.shared.values().map(|t| StoredTab { tab_id: t.tab_id, owner: Owner::of(t) }).collect()
    }

    /// Chrome's debugger left `tab_id` for `reason`.
    pub fn detached(&self, tab_id: TabId, reason: &str) -> Detached {
        if !self.shared.contains_key(&tab_id) {
            return Detached::NotShared;
        }
        match reason {
            "canceled_by_user" => Detached::Unshare(UnshareReason::CanceledByUser),
            "target_closed" => Detached::Reattach,
            _ => Detached::Unshare(UnshareReason::Detached),
        }
    }

    /// A shared tab was attached again and described as `info`. `clients_lost_state`: its old
    /// session died under its clients (`target_closed`), rather than being reset between them.
    pub fn reattached(&mut self, epochs: &mut Epochs, info: TabInfo, clients_lost_state: bool) -> Reattached {
        let tab_id = info.tab_id;
        let Some(old) = self.shared.get_mut(&tab_id) else { return Reattached::Gone };
        if clients_lost_state {
            epochs.bump(tab_id);
            *old = info.clone();
            return Reattached::StartOver(info);
        }
        let changed = (*old != info).then(|| info.clone());
        *old = info;
        Reattached::Changed(changed)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn tab(tab_id: TabId, agent: &str, created: bool) -> TabInfo {
        TabInfo {
            tab_id,
            window_id: 1,
            target_id: format!("T{tab_id}"),
            browser_context_id: String::new(),
            url: "https://example.test/".into(),
            title: String::new(),
            opener_target_id: None,
            agent: agent.into(),
            created,
            kind: Default::default(),
        }
    }

    fn owner(agent: &str, created: bool) -> Owner {
        Owner { agent: agent.into(), created }
    }

    #[test]
    fn a_tab_being_attached_is_not_attached_twice() {
        let mut s = Sharing::default();
        let Share::Attach(attach) = s.share(5, Owner::human_shared(), false) else { panic!() };
        assert!(s.is_held(5), "its pages get no answer from the worker meanwhile");
        assert_eq!(s.share(5, owner("a", false), false), Share::Refused(BEING_SHARED));
        s.finish_attach(attach);
        assert!(!s.is_held(5));
        assert!(matches!(s.share(5, Owner::human_shared(), false), Share::Attach(_)));
    }

    #[test]
    fn a_worker_restart_during_a_share_leaves_the_tab_to_the_restore() {
        // The restored worker re-attaches a tab it shared; the human clicks "share" on it
        // meanwhile: a second attach would detach the restore's session ("Another debugger").
        let mut before = Sharing::default();
        before.add(tab(5, "a", true), 1.0);
        let stored: Vec<StoredTab> =
            serde_json::from_str(&serde_json::to_string(&before.stored()).unwrap()).unwrap();
        assert_eq!(stored, [StoredTab { tab_id: 5, owner: owner("a", true) }]);
        let mut after = Sharing::default();
        let restoring = after.begin_attach(stored[0].tab_id).unwrap();
        assert_eq!(after.share(5, Owner::human_shared(), false), Share::Refused(BEING_SHARED));
        after.finish_attach(restoring);
        after.add(tab(5, "a", true), 2.0);
        assert_eq!(after.owner_of(5), Some(owner("a", true)), "the restored owner, not the click's");
    }

    #[test]
    fn stored_tabs_read_as_an_earlier_worker_wrote_them() {
        let stored: Vec<StoredTab> =
            serde_json::from_str(r#"[{"tabId":3,"agent":"default","created":false}]"#).unwrap();
        assert_eq!(stored[0].owner, Owner::human_shared());
    }

    #[test]
    fn the_kill_switch_refuses_every_share() {
        let mut s = Sharing::default();
        s.add(tab(1, "a", false), 0.0);
        assert_eq!(s.share(1, owner("b", false), true), Share::Refused(KILL_SWITCH_ON));
        assert_eq!(s.share(2, owner("b", false), true), Share::Refused(KILL_SWITCH_ON));
        assert!(!s.is_attaching(2));
    }

    #[test]
    fn a_shared_tab_changes_hands_and_its_focus_emulation_only_if_needed() {
        let mut s = Sharing::default();
        s.add(tab(1, DEFAULT_AGENT, false), 0.0);
        assert!(matches!(s.share(1, Owner::human_shared(), false), Share::Unchanged(_)));
        let Share::ChangedHands { refocus, replace } = s.share(1, owner("a", true), false) else { panic!() };
        assert_eq!(refocus, Some(owner("a", true).emulates_focus()));
        assert_eq!(replace, Replace::Nothing, "never driven");
        assert_eq!(s.owner_of(1), Some(owner("a", true)), "recorded");
        let info = s.handed_over(1).unwrap();
        assert_eq!((info.agent.as_str(), info.created), ("a", true));
    }

    #[test]
    fn a_driven_tab_going_to_another_agent_is_reloaded_first_with_commands_refused() {
        let mut s = Sharing::default();
        s.add(tab(1, "a", false), 0.0);
        s.drove(1, "Runtime.evaluate");
        s.drove(1, "Page.addScriptToEvaluateOnNewDocument");
        let Share::ChangedHands { replace, .. } = s.share(1, owner("b", false), false) else { panic!() };
        assert_eq!(replace, Replace::Reload { twice: true }, "a's timer and script go first");
        assert!(s.is_leaving(1), "no command of a's puts them back meanwhile");
        assert_eq!(s.share(1, owner("c", false), false), Share::Refused(BEING_LET_GO));
        assert_eq!(
            s.change(1, |t| t.title = "reloaded".into()),
            None,
            "told with the hand-over, not to a's clients now"
        );
        let info = s.handed_over(1).unwrap();
        assert_eq!((info.agent.as_str(), info.title.as_str()), ("b", "reloaded"));
        assert!(!s.is_leaving(1));
        assert_eq!(s.handed_over(1), None, "once");
        assert_eq!(
            s.leave(1, Departure::Released, UnshareReason::Released),
            Some(Replace::Nothing),
            "b drove nothing yet"
        );
    }

    #[test]
    fn a_tab_changing_hands_within_an_agent_keeps_its_page() {
        let mut s = Sharing::default();
        s.add(tab(1, "a", true), 0.0);
        s.drove(1, "Runtime.evaluate");
        let Share::ChangedHands { replace, .. } = s.share(1, owner("a", false), false) else { panic!() };
        assert_eq!(replace, Replace::Nothing);
    }

    #[test]
    fn a_tab_let_go_during_its_hand_over_is_not_handed() {
        let mut s = Sharing::default();
        s.add(tab(1, "a", false), 0.0);
        s.drove(1, "Runtime.evaluate");
        assert!(matches!(s.share(1, owner("b", false), false), Share::ChangedHands { .. }));
        assert!(!s.is_being_let_go(1), "handed over only");
        assert_eq!(
            s.leave(1, Departure::KillSwitch, UnshareReason::StoppedByUser),
            Some(Replace::Reload { twice: false }),
            "the kill switch still stops it"
        );
        assert!(s.is_being_let_go(1), "the hand-over does not take the browser's block away");
        assert_eq!(s.handed_over(1), None, "the daemon hears it unshared, not handed");
        assert_eq!(s.share(1, owner("c", false), false), Share::Refused(BEING_LET_GO));
    }

    #[test]
    fn a_tab_closed_as_it_leaves_keeps_the_reason_it_left_for() {
        let mut s = Sharing::default();
        s.add(tab(1, "a", true), 0.0);
        s.add(tab(2, "a", true), 0.0);
        assert_eq!(s.leave(1, Departure::KillSwitch, UnshareReason::StoppedByUser), Some(Replace::Close));
        assert_eq!(s.closed(1), UnshareReason::StoppedByUser, "the kill switch closed it");
        assert_eq!(s.closed(2), UnshareReason::Closed, "someone else did");
        s.unshare(1);
        s.add(tab(1, "a", true), 0.0);
        assert_eq!(s.closed(1), UnshareReason::Closed, "shared anew");
    }

    #[test]
    fn target_closed_reattaches_and_other_detaches_unshare() {
        let mut s = Sharing::default();
        assert_eq!(s.detached(1, "target_closed"), Detached::NotShared);
        s.add(tab(1, "a", false), 0.0);
        assert_eq!(s.detached(1, "target_closed"), Detached::Reattach);
        assert_eq!(s.detached(1, "canceled_by_user"), Detached::Unshare(UnshareReason::CanceledByUser));
        assert_eq!(s.detached(1, "other"), Detached::Unshare(UnshareReason::Detached));
    }

    #[test]
    fn the_epoch_after_target_closed_answers_earlier_commands_target_closed() {
        let mut s = Sharing::default();
        let mut epochs = Epochs::default();
        s.add(tab(1, "a", false), 0.0);
        let sent_before = epochs.current(1);
        let reset_before = epochs.current(1);
        // A reset between clients keeps the epoch: nothing was lost under anyone.
        assert_eq!(s.reattached(&mut epochs, tab(1, "a", false), false), Reattached::Changed(None));
        assert_eq!(epochs.check(1, reset_before), Ok(()));
        let info = tab(1, "a", false);
        assert_eq!(s.reattached(&mut epochs, info.clone(), true), Reattached::StartOver(info));
        assert_eq!(epochs.check(1, sent_before), Err(crate::epochs::TARGET_CLOSED));
        assert_eq!(epochs.check(1, epochs.current(1)), Ok(()));
    }

    #[test]
    fn a_tab_unshared_during_its_reattach_is_let_go() {
        let mut s = Sharing::default();
        let mut epochs = Epochs::default();
        s.add(tab(1, "a", false), 0.0);
        s.unshare(1);
        assert_eq!(s.reattached(&mut epochs, tab(1, "a", false), true), Reattached::Gone);
        assert_eq!(epochs.current(1), 0, "no epoch for a tab nobody shares");
        assert!(s.is_empty());
    }

    #[test]
    fn a_reset_reports_only_what_changed() {
        let mut s = Sharing::default();
        let mut epochs = Epochs::default();
        s.add(tab(1, "a", false), 0.0);
        let moved = TabInfo { url: "https://other.test/".into(), ..tab(1, "a", false) };
        assert_eq!(s.reattached(&mut epochs, moved.clone(), false), Reattached::Changed(Some(moved)));
        assert_eq!(s.change(1, |t| t.title = "T".into()).map(|t| t.title), Some("T".into()));
        assert_eq!(s.change(1, |t| t.title = "T".into()), None, "unchanged");
        assert_eq!(s.change(9, |t| t.title = "T".into()), None, "not shared");
    }

    #[test]
    fn a_tab_that_left_the_web_stays_held_after_it_is_unshared() {
        let mut s = Sharing::default();
        s.add(tab(1, "a", false), 0.0);
        s.unshare(1);
        s.taint(1);
        assert!(s.is_held(1));
        assert!(!s.contains_key(&1));
    }

    #[test]
    fn a_leaving_tab_is_closed_reloaded_or_let_go() {
        let mut s = Sharing::default();
        s.add(tab(1, "a", true), 0.0);
        s.add(tab(2, "a", false), 0.0);
        s.add(tab(3, DEFAULT_AGENT, false), 0.0);
        s.add(tab(4, "a", true), 0.0);
        s.drove(2, "Runtime.evaluate");
        s.drove(4, "Page.navigate");
        s.drove(9, "Runtime.evaluate");
        assert_eq!(
            s.leave(1, Departure::KillSwitch, UnshareReason::StoppedByUser),
            Some(Replace::Close),
            "an agent's own tab, even undriven"
        );
        assert_eq!(
            s.leave(2, Departure::KillSwitch, UnshareReason::StoppedByUser),
            Some(Replace::Reload { twice: false })
        );
        assert_eq!(
            s.leave(3, Departure::KillSwitch, UnshareReason::StoppedByUser),
            Some(Replace::Nothing),
            "never driven"
        );
        assert_eq!(
            s.leave(4, Departure::Released, UnshareReason::Released),
            Some(Replace::Reload { twice: false }),
            "taken back, it stays open"
        );
        assert_eq!(s.leave(9, Departure::Released, UnshareReason::Released), None, "not shared");
        assert!(s.is_leaving(2));
        let popup = TabInfo { opener_target_id: Some("T3".into()), ..tab(5, "a", false) };
        s.add(popup, 0.0);
        assert_eq!(
            s.leave(5, Departure::KillSwitch, UnshareReason::StoppedByUser),
            Some(Replace::Reload { twice: false }),
            "a popup no client drove: its opener's scripts may have"
        );
        assert_eq!(s.leave(2, Departure::Released, UnshareReason::Released), None, "being let go already");
    }

    #[test]
    fn the_daemons_housekeeping_drives_no_tab() {
        let mut s = Sharing::default();
        s.add(tab(1, DEFAULT_AGENT, false), 0.0);
        for method in
            ["Runtime.runIfWaitingForDebugger", "Network.disable", "Fetch.continueRequest", "Tracing.end"]
        {
            s.drove(1, method);
        }
        assert_eq!(s.leave(1, Departure::Released, UnshareReason::Released), Some(Replace::Nothing));
        s.unshare(1);
        s.add(tab(1, DEFAULT_AGENT, false), 0.0);
        s.drove(1, "Fetch.enable");
        assert_eq!(
            s.leave(1, Departure::Released, UnshareReason::Released),
            Some(Replace::Reload { twice: false }),
            "a client's own interception drives it"
        );
    }

    #[test]
    fn a_tab_given_a_script_for_new_documents_is_reloaded_twice() {
        let mut s = Sharing::default();
        s.add(tab(1, "a", false), 0.0);
        s.add(tab(2, "a", true), 0.0);
        s.drove(1, "Page.addScriptToEvaluateOnNewDocument");
        s.drove(2, "Page.addScriptToEvaluateOnNewDocument");
        assert_eq!(
            s.leave(1, Departure::Released, UnshareReason::Released),
            Some(Replace::Reload { twice: true })
        );
        assert_eq!(
            s.leave(2, Departure::KillSwitch, UnshareReason::StoppedByUser),
            Some(Replace::Close),
            "closed, it has no next document"
        );
        s.unshare(1);
        s.add(tab(1, "a", false), 0.0);
        s.drove(1, "Runtime.evaluate");
        assert_eq!(
            s.leave(1, Departure::Released, UnshareReason::Released),
            Some(Replace::Reload { twice: false }),
            "shared anew"
        );
    }

    #[test]
    fn driving_and_leaving_end_with_the_share() {
        let mut s = Sharing::default();
        s.add(tab(1, "a", false), 0.0);
        s.drove(1, "Runtime.evaluate");
        assert_eq!(
            s.leave(1, Departure::Released, UnshareReason::Released),
            Some(Replace::Reload { twice: false })
        );
        s.unshare(1);
        assert!(!s.is_leaving(1));
        s.add(tab(1, "b", false), 0.0);
        assert_eq!(
            s.leave(1, Departure::Released, UnshareReason::Released),
            Some(Replace::Nothing),
            "shared anew, not driven since"
        );
    }

    #[test]
    fn a_document_a_form_posted_to_is_loaded_again_by_its_url() {
        let history = |transition: &str| -> NavigationHistory {
            serde_json::from_value(serde_json::json!({
                "currentIndex": 1,
                "entries": [
                    { "id": 1, "url": "https://shop.test/cart", "userTypedURL": "", "title": "", "transitionType": "typed" },
                    { "id": 2, "url": "https://shop.test/cart/add#done", "userTypedURL": "", "title": "", "transitionType": transition },
                ],
            }))
            .unwrap()
        };
        assert_eq!(renewal(&history("form_submit")), Renew::Navigate("https://shop.test/cart/add".into()));
        assert_eq!(renewal(&history("link")), Renew::Reload);
        assert_eq!(renewal(&NavigationHistory { current_index: 3, entries: vec![] }), Renew::Reload);
    }

    #[test]
    fn navigation_times_are_kept_for_shared_tabs_only() {
        let mut s = Sharing::default();
        s.add(tab(1, "a", false), 5.0);
        s.navigated(1, 9.0);
        s.navigated(2, 9.0);
        assert_eq!((s.navigated_at(1), s.navigated_at(2)), (9.0, 0.0));
        s.unshare(1);
        assert_eq!(s.navigated_at(1), 0.0);
    }
}
