//! Which tabs are shared, and with which agent: attaching `chrome.debugger`, describing tabs as
//! CDP targets, following them (navigation, close, detach, moves), and remembering them across
//! worker restarts.

use tabtunnel_extension_core::settings::Startup;
use tabtunnel_extension_core::sharing::Owner;
use tabtunnel_extension_core::sharing::{
    renewal, Departure, NavigationHistory, Renew, Replace, Share, StoredTab,
};
use tabtunnel_extension_core::TargetChange;
use tabtunnel_wire::{TabId, TabInfo, UnshareReason, DEFAULT_AGENT};
use wasm_bindgen_futures::spawn_local;

use super::attach::{attach_and_describe, emulate_focus};
use super::panel_state::broadcast;
use super::state::{is_shared, with};
use super::tab_gate;
use super::{
    daemon, gestures, late_documents, navigation, off_tab_writes, placement, relatives, relay, settings,
    web_only,
};
use crate::chrome;
use crate::js::{from_js, sleep, to_js, within};

/// `chrome.storage.session` key: shared tabs and their agents. Session storage outlives the
/// worker (not the browser), like the debugger sessions themselves.
const STORAGE_KEY: &str = "sharedTabs";

/// A shared tab's main frame goes to `url`: a page off the web is unshared at once (`web_only`).
pub(super) fn navigated(tab_id: TabId, url: &str) {
    if web_only::leaves_the_web(tab_id, url) {
        unshare(tab_id, UnshareReason::Detached);
        web_only::let_go(tab_id, url);
    }
}

/// Shares a tab at the user's request: with the default agent (the plain endpoint's).
pub async fn share(tab_id: TabId) -> Result<(), String> {
    share_with(tab_id, Owner::human_shared()).await.map(drop)
}

/// Shares a tab with an agent; a tab already shared changes hands (the daemon moves it from one
/// agent's clients to the other's), its document replaced first if the agent before drove it.
/// Returns its description.
pub async fn share_with(tab_id: TabId, owner: Owner) -> Result<TabInfo, String> {
    // Checked before anything changes hands: a hand-over cannot be undone half way.
    check_hand_over(tab_id, &owner)?;
    let engaged = super::kill_switch::is_engaged();
    let attach = match with(|w| w.shared.share(tab_id, owner.clone(), engaged)) {
        Share::Refused(why) => return Err(why.into()),
        Share::Unchanged(info) => return Ok(info),
        Share::ChangedHands { refocus, replace } => {
            let replace = relatives::replace(tab_id, replace, Some(&owner.agent));
            broadcast();
            // What the old agent's document had the guard hold failed as it was replaced.
            // (A take back meanwhile keeps the browser's block until the tab is unshared.)
            if replace_while_held(tab_id, replace).await && !with(|w| w.shared.is_being_let_go(tab_id)) {
                off_tab_writes::guarded(tab_id);
            }
            let Some(info) = with(|w| w.shared.handed_over(tab_id)) else {
                return Err("This tab was let go meanwhile.".into());
            };
            if let Some(enabled) = refocus {
                emulate_focus(tab_id, enabled).await;
            }
            navigation::apply(tab_id, Some(&info.agent)).await;
            let _ = daemon::target(TargetChange::Changed(info.clone()));
            persist();
            broadcast();
            return Ok(info);
        }
        Share::Attach(attach) => attach,
    };
    broadcast();
    if relatives::has_strangers(tab_id, Some(&owner.agent)) {
        if let Err(e) = sever(tab_id).await {
            with(|w| w.shared.finish_attach(attach));
            broadcast();
            return Err(e);
        }
    }
    let outcome = attach_and_describe(tab_id, true, owner).await;
    with(|w| w.shared.finish_attach(attach));
    match outcome {
        Ok(info) => {
            log!("sharing tab {tab_id} ({}) with {}", info.url, info.agent);
            add(info.clone()).await?;
            Ok(info)
        }
        Err(e) => {
            if !is_shared(tab_id) {
                off_tab_writes::left(tab_id);
            }
            broadcast();
            Err(e)
        }
    }
}

/// For a browser `tabtunnel launch` started for automation (often headless, with no side panel
/// to click): opens the pages it was asked to, then shares the tabs it started with if asked.
/// Once per browser session.
pub async fn start_up(startup: Startup) {
    if !settings::claim_startup_sharing().await {
        return; // done already in this browser session; the user may have unshared some since
    }
    let Some(tabs) = startup_tabs(|tabs| !tabs.is_empty()).await else { return };
    if let Some((first, rest)) = startup.open_urls.split_first() {
        open_startup_pages(tabs.first().and_then(|t| t.id), first, rest).await;
    }
    if !startup.share_tabs {
        return;
    }
    let Some(tabs) = startup_tabs(|tabs| {
        tabs.iter().all(|t| t.status == "complete" && t.pending_url.is_empty() && !t.url.is_empty())
    })
    .await
    else {
        return;
    };
    for tab_id in tabs.into_iter().filter_map(|t| t.id) {
        match share(tab_id).await {
            Ok(()) => log!("shared startup tab {tab_id}"),
            Err(e) => log!("not sharing startup tab {tab_id}: {e}"),
        }
    }
}

/// The browser's tabs once `ready` holds of them and their number held still a moment (a
/// browser opens its startup tabs one by one), or after a few seconds whatever they are.
async fn startup_tabs(ready: impl Fn(&[chrome::Tab]) -> bool) -> Option<Vec<chrome::Tab>> {
    const WAIT_MS: u32 = 5_000;
    const POLL_MS: u32 = 100;
    const SETTLED_POLLS: u32 = 3;
    let (mut waited, mut stable, mut seen) = (0, 0, usize::MAX);
    loop {
        let tabs = match chrome::normal_tabs().await {
            Ok(tabs) => tabs,
            Err(e) => {
                warn!("cannot list the startup tabs: {e}");
                return None;
            }
        };
        stable = if tabs.len() == seen { stable + 1 } else { 0 };
        seen = tabs.len();
        if (!tabs.is_empty() && stable >= SETTLED_POLLS && ready(&tabs)) || waited >= WAIT_MS {
            return Some(tabs);
        }
        sleep(POLL_MS).await;
        waited += POLL_MS;
    }
}

/// The first page in the tab the browser started with (a blank one), the others in new tabs.
async fn open_startup_pages(first_tab: Option<TabId>, first: &str, rest: &[String]) {
    let opened = match first_tab {
        Some(tab_id) => chrome::update_tab(tab_id, &serde_json::json!({ "url": first })).await,
        None => chrome::create_tab(&serde_json::json!({ "url": first })).await.map(drop),
    };
    if let Err(e) = opened {
        warn!("cannot open {first}: {e}");
    }
    for url in rest {
        if let Err(e) = chrome::create_tab(&serde_json::json!({ "url": url, "active": false })).await {
            warn!("cannot open {url}: {e}");
        }
    }
}

/// Stops sharing at the user's request. Our own `detach()` fires no `onDetach`.
pub async fn unshare_by_user(tab_id: TabId) {
    leave(tab_id, Departure::Released, UnshareReason::StoppedByUser).await;
}

/// Gives a tab back to the human: the debugger leaves it, it leaves its agent's group, and it
/// stays open where it is.
pub async fn release(tab_id: TabId) {
    let group = with(|w| w.shared.get(&tab_id).map(|t| t.agent != DEFAULT_AGENT));
    if leave(tab_id, Departure::Released, UnshareReason::Released).await && group == Some(true) {
        placement::leave_group(tab_id).await;
    }
}

/// The kill switch's stop of one tab.
pub async fn stop_for_kill_switch(tab_id: TabId) {
    leave(tab_id, Departure::KillSwitch, UnshareReason::StoppedByUser).await;
}

/// Lets a shared tab leave its agent: a document the agent may have put code in is replaced
/// (closed or reloaded: `Sharing::leave` decides) while the debugger still holds it, so the
/// guard pauses that code's writes until the new document is in; then the tab is unshared and
/// detached. False when it was not shared (or is being let go already).
async fn leave(tab_id: TabId, departure: Departure, reason: UnshareReason) -> bool {
    let Some(replace) = with(|w| w.shared.leave(tab_id, departure, reason)) else { return false };
    // A page the browser cannot sever (no HTTPS) stays reachable from its relatives: those an
    // agent holds leave with it.
    let severable = with(|w| w.shared.get(&tab_id).is_some_and(|t| relatives::severable(&t.url)));
    let inseparable = if severable { Vec::new() } else { relatives::strangers(tab_id, None) };
    let replace = relatives::replace(tab_id, replace, None);
    replace_while_held(tab_id, replace).await;
    if !stop_sharing(tab_id, reason).await {
        // Unshared meanwhile (a reset's re-attach failed): no block of its writes stays.
        off_tab_writes::left(tab_id);
    }
    for kin in inseparable {
        log!("tab {kin} leaves its agent with tab {tab_id}, which it reaches and cannot be severed from");
        Box::pin(leave(kin, departure, reason)).await;
    }
    true
}

/// Replaces a tab's document as `Sharing` decided (of a tab leaving its agent, or going to
/// another), while the debugger still holds it; false when there was nothing to do.
async fn replace_while_held(tab_id: TabId, replace: Replace) -> bool {
    // After a reset under way (a detach and re-attach): the dialog answer needs the session
    // that sees the page go. Resets asked for from now on are skipped.
    if let Some(gate) = tab_gate::reset_gate(tab_id) {
        let _ = wasm_bindgen_futures::JsFuture::from(gate).await;
    }
    if replace == Replace::Nothing || !is_shared(tab_id) {
        return false;
    }
    // The browser refuses the tab's writes meanwhile too (until the caller says it is guarded
    // again, or the tab is unshared), so that no write of the old document goes out in a
    // moment the guard's `Fetch` misses, in the page or in any frame.
    off_tab_writes::unguard(tab_id).await;
    replace_document(tab_id, replace).await;
    true
}

/// Closes or reloads a tab (see [`Replace`]), each time waiting until its document is gone.
/// Meanwhile its writes fail (`gestures::replacing`).
async fn replace_document(tab_id: TabId, replace: Replace) {
    gestures::replacing(tab_id).await;
    match replace {
        Replace::Close => {
            // Blanked first: no code of the agent's runs on while the tab closes.
            go_and_wait(tab_id, "blank", blank(tab_id)).await;
            go_and_wait(tab_id, "close", async move {
                // Not awaited: a "Leave site?" dialog holds `chrome.tabs.remove` until answered.
                spawn_local(async move {
                    if let Err(e) = chrome::remove_tab(tab_id).await {
                        warn!("could not close tab {tab_id} as it leaves its agent: {e}");
                    }
                });
                Ok(())
            })
            .await;
        }
        Replace::Reload { twice } => {
            // A client's interception of documents would hold the reload for an answer that no
            // client may give any more.
            match within(COMMAND_MS, gestures::guard_only(tab_id)).await {
                Some(Ok(())) => {}
                Some(Err(e)) => warn!("tab {tab_id}: its clients' interception stays as it leaves: {e}"),
                None => warn!("tab {tab_id}: no answer to dropping its clients' interception"),
            }
            // A client's breakpoint condition runs code in the new document as it loads;
            // turning `Debugger` off removes every breakpoint of the session's.
            leaving_command(tab_id, "Debugger.disable").await;
            // Each new document in a browsing context group of its own: no page related to
            // the old one (its opener, its popups) reaches it, or is reached from it.
            let severable = with(|w| w.shared.get(&tab_id).is_some_and(|t| relatives::severable(&t.url)));
            relatives::severing(tab_id, true, false).await;
            let mut renewed = renew_or_blank(tab_id).await;
            if twice {
                leaving_command(tab_id, "Page.disable").await;
                renewed |= renew_or_blank(tab_id).await;
            }
            relatives::severing(tab_id, false, renewed && severable).await;
            // (`renew` may have gone past the site's service worker.)
            leaving_command_with(
                tab_id,
                "Network.setBypassServiceWorker",
                serde_json::json!({ "bypass": false }),
            )
            .await;
            leaving_command(tab_id, "Network.disable").await;
            // Every other entry of the tab's history goes, and with it any page of the agent's
            // the back/forward cache kept running (the human's Back would bring it back, timers
            // and all, with no debugger on it).
            leaving_command(tab_id, "Page.resetNavigationHistory").await;
        }
        Replace::Nothing => {}
    }
    gestures::replaced(tab_id);
}

/// How long a command of ours to a leaving tab may take (Chrome answers none while a navigation
/// of the tab is paused).
const COMMAND_MS: u32 = 2_000;

/// A command of ours to a leaving tab, without params; a failure is logged.
async fn leaving_command(tab_id: TabId, method: &str) {
    leaving_command_with(tab_id, method, serde_json::json!({})).await;
}

async fn leaving_command_with(tab_id: TabId, method: &str, params: serde_json::Value) {
    let params = to_js(&params);
    match within(COMMAND_MS, chrome::send_command(tab_id, None, method, &params)).await {
        Some(Ok(_)) => {}
        Some(Err(e)) => {
            warn!("tab {tab_id}: {method} as it leaves its agent: {}", crate::js::error_message(&e))
        }
        None => warn!("tab {tab_id}: no answer to {method} as it leaves its agent"),
    }
}

/// Renews a tab's document ([`renew`]); where the document stays (its server answered with no
/// document: a 204, a download; or not in time; the reload failed), a blank page replaces it,
/// which needs no server.
/// Whether it was renewed (not blanked).
async fn renew_or_blank(tab_id: TabId) -> bool {
    if go_and_wait(tab_id, "reload", renew(tab_id)).await {
        return true;
    }
    go_and_wait(tab_id, "blank", blank(tab_id)).await;
    false
}

/// Reloads the human's tab before an agent gets it, severed from the tabs related to it (see
/// `relatives`); refused where that cannot be done.
async fn sever(tab_id: TabId) -> Result<(), String> {
    let tab = chrome::get_tab(tab_id).await.map_err(|e| format!("No such tab: {e}"))?;
    if !relatives::severable(&tab.url) {
        return Err(NOT_SEVERABLE.into());
    }
    log!("tab {tab_id} is reloaded before it is shared: a tab related to it stays with another");
    relatives::severing(tab_id, true, false).await;
    let reloaded = go_and_wait(tab_id, "reload", chrome::reload_tab(tab_id, true)).await;
    relatives::severing(tab_id, false, reloaded).await;
    match reloaded {
        true => Ok(()),
        false => Err(NOT_RELOADED.into()),
    }
}

/// Refuses a hand-over of a tab that cannot be severed from relatives the new holder does not
/// hold ([`unseverable_hand_over`]).
pub(super) fn check_hand_over(tab_id: TabId, owner: &Owner) -> Result<(), String> {
    match unseverable_hand_over(tab_id, owner) {
        true => Err(NOT_SEVERABLE.into()),
        false => Ok(()),
    }
}

/// A shared tab going to another holder, on a page that cannot be severed (see `relatives`)
/// from tabs related to it that the new holder does not hold.
fn unseverable_hand_over(tab_id: TabId, owner: &Owner) -> bool {
    let url = with(|w| w.shared.get(&tab_id).filter(|t| t.agent != owner.agent).map(|t| t.url.clone()));
    url.is_some_and(|url| !relatives::severable(&url) && relatives::has_strangers(tab_id, Some(&owner.agent)))
}

const NOT_SEVERABLE: &str = "One page of this tab opened another tab, or was opened by one, and \
     can still reach it; on a site without HTTPS tabtunnel cannot keep them apart. Close the \
     other tab, or open this page in a new tab of its own, then share it.";
const NOT_RELOADED: &str = "This tab had to be reloaded before it is shared (a tab related to \
     it stays yours), and it did not reload; try again.";

async fn blank(tab_id: TabId) -> chrome::Result<()> {
    chrome::update_tab(tab_id, &serde_json::json!({ "url": "about:blank" })).await
}

/// Reloads a tab, or loads its URL again where a reload would send a form again (`renewal`).
/// A reload goes past the caches and the site's service worker: what the agent's page stored
/// there (Cache Storage a service worker answers from) does not load in its place.
async fn renew(tab_id: TabId) -> chrome::Result<()> {
    let no_params = to_js(&serde_json::json!({}));
    let history = chrome::send_command(tab_id, None, "Page.getNavigationHistory", &no_params).await;
    match history.ok().and_then(|h| from_js::<NavigationHistory>(&h)).map(|h| renewal(&h)) {
        Some(Renew::Navigate(url)) => {
            // Unlike a reload, a load of the URL is the site's service worker's to answer, and a
            // response it makes gets none of the browser's header rules (the opener policy that
            // severs the tab): past it, for this tab (Chrome applies it with `Network` on).
            leaving_command(tab_id, "Network.enable").await;
            leaving_command_with(
                tab_id,
                "Network.setBypassServiceWorker",
                serde_json::json!({ "bypass": true }),
            )
            .await;
            chrome::update_tab(tab_id, &serde_json::json!({ "url": url })).await
        }
        Some(Renew::Reload) | None => chrome::reload_tab(tab_id, true).await,
    }
}

/// Sends a tab's page away (`go`: a blank page, a reload, a close), and waits until the document
/// it had is gone (with every timer in it): the tab closed, or a new document committed. A
/// "Leave site?" dialog that holds it is accepted. Gives up after a few seconds. Whether the
/// document went.
async fn go_and_wait(
    tab_id: TabId,
    what: &str,
    go: impl std::future::Future<Output = chrome::Result<()>> + 'static,
) -> bool {
    const WAIT_MS: u32 = 5_000;
    const POLL_MS: u32 = 50;
    // Closed meanwhile: gone.
    let Ok(old) = chrome::main_document(tab_id).await else { return true };
    // Not waited for alone: Chrome may not answer it while a request of the page's stays paused
    // (a client's `Fetch` interception, which no client can answer any more).
    let gone = std::rc::Rc::new(std::cell::RefCell::new(None));
    let outcome = gone.clone();
    spawn_local(async move {
        let result = go.await;
        *outcome.borrow_mut() = Some(result);
    });
    let accept = to_js(&serde_json::json!({ "accept": true }));
    let mut waited = 0;
    while waited < WAIT_MS {
        if let Some(Err(e)) = gone.borrow_mut().take() {
            warn!("could not {what} tab {tab_id} as it leaves its agent: {e}");
            return false;
        }
        match chrome::main_document(tab_id).await {
            Ok(document) if document == old => {}
            _ => return true, // a new document is in, or the tab is gone
        }
        // Fails while no dialog shows (or `Page` is off, when none can).
        let _ =
            within(POLL_MS, chrome::send_command(tab_id, None, "Page.handleJavaScriptDialog", &accept)).await;
        sleep(POLL_MS).await;
        waited += POLL_MS;
    }
    warn!("tab {tab_id} kept its page {WAIT_MS} ms after its {what}");
    false
}

/// Detaches and unshares; false when the tab was not shared.
async fn stop_sharing(tab_id: TabId, reason: UnshareReason) -> bool {
    if !is_shared(tab_id) {
        return false;
    }
    // Unshared first, so that what follows (a detach, an ungroup) is not taken for the user's.
    unshare(tab_id, reason);
    gestures::fail_held(tab_id).await;
    if let Err(e) = chrome::detach(tab_id).await {
        warn!("detach from tab {tab_id}: {e}");
    }
    true
}

/// Re-attaches the tabs shared before the worker restarted, each for the agent it had.
pub async fn restore() {
    let stored: Vec<StoredTab> = match chrome::session_value(STORAGE_KEY).await {
        Ok(tabs) => tabs.and_then(|tabs| from_js(&tabs)).unwrap_or_default(),
        Err(e) => {
            warn!("storage.session.get failed: {e}");
            return;
        }
    };
    placement::restore().await;
    for StoredTab { tab_id, owner } in stored {
        // Marked as being attached: a share of the tab meanwhile would detach this session.
        let Some(attach) = with(|w| w.shared.begin_attach(tab_id)) else { continue };
        let outcome = attach_and_describe(tab_id, false, owner).await;
        with(|w| w.shared.finish_attach(attach));
        match outcome {
            Ok(info) => {
                log!("re-attached tab {tab_id}");
                // Announced too: the daemon socket may already be open with an earlier Hello.
                if let Err(e) = add(info).await {
                    log!("tab {tab_id} is no longer shared: {e}");
                }
            }
            Err(e) => log!("tab {tab_id} is no longer shared: {e}"),
        }
    }
    persist();
    broadcast();
}

/// Records a tab as shared and tells the daemon and the panel; its agent's navigation rules
/// are put in place first. Recording and telling happen in one step, so nothing about the tab
/// (its events, a `TabChanged`) reaches the daemon before its `TabShared`. Refused (and the
/// tab let go) when the kill switch was engaged while it was being attached.
pub async fn add(info: TabInfo) -> Result<(), String> {
    navigation::apply(info.tab_id, Some(&info.agent)).await;
    with(|w| {
        w.off_tab_writes.showed(info.tab_id, &info.url);
        // Armed: its writes are the guard's now (a popup of a shared page was held till then).
        w.off_tab_writes.newborn.settled(info.tab_id);
    });
    off_tab_writes::sync().await;
    let tab_id = info.tab_id;
    if let Err(refused) = daemon::target(TargetChange::Shared(info.clone())) {
        with(|w| w.early_events.tab_removed(tab_id));
        navigation::apply(tab_id, None).await;
        off_tab_writes::left(tab_id);
        if let Err(e) = chrome::detach(tab_id).await {
            warn!("detach from tab {tab_id}: {e}");
        }
        broadcast();
        return Err(refused);
    }
    with(|w| w.shared.add(info, js_sys::Date::now()));
    // What happened since the attach, now that the daemon knows the tab.
    let early = with(|w| w.early_events.announced(tab_id));
    if early.dropped > 0 {
        warn!("tab {tab_id}: {} events before its announcement were dropped", early.dropped);
    }
    for (source, method, params) in early.events {
        relay::on_debugger_event(source, method, params);
    }
    persist();
    broadcast();
    Ok(())
}

pub(super) fn changed(tab_id: TabId, update: impl FnOnce(&mut TabInfo)) {
    let info = with(|w| w.shared.change(tab_id, update));
    if let Some(info) = info {
        let _ = daemon::target(TargetChange::Changed(info));
        broadcast();
    }
}

pub fn unshare(tab_id: TabId, reason: UnshareReason) {
    if with(|w| w.shared.unshare(tab_id)).is_none() {
        return;
    }
    log!("tab {tab_id} unshared: {reason:?}");
    // A reset or re-attach under way attaches nothing more.
    tab_gate::release_all(with(|w| w.reattach.let_go(tab_id)));
    // A read or resend under way sends nothing more.
    with(|w| w.page_reads.let_go(tab_id));
    gestures::forget(tab_id);
    let _ = daemon::target(TargetChange::Unshared { tab_id, reason });
    spawn_local(navigation::apply(tab_id, None));
    off_tab_writes::left(tab_id);
    late_documents::forget(tab_id, false);
    persist();
    broadcast();
}

pub fn persist() {
    let tabs: Vec<StoredTab> = with(|w| w.shared.stored());
    let items = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&items, &STORAGE_KEY.into(), &to_js(&tabs));
    spawn_local(async move {
        if let Err(e) = chrome::session_set(&items).await {
            warn!("storage.session.set failed: {e}");
        }
    });
}
