//! An agent's new tabs: the steps of `tabtunnel_extension_core::agent_tabs` (creating a tab for
//! a `CreateTab`, preparing the next), run against Chrome, their outcomes fed back.
//!
//! Why tabs are prepared: opening an agent's page means opening a tab (for its first, a
//! window), attaching the debugger and letting Chrome's debugging bar in before the client may
//! have it: two to three times what Chrome's own `Target.createTarget` takes (BENCHMARKS.md). So
//! each agent the daemon names (`ToExtension::PrepareTabs`: connected, allowed to open pages)
//! gets one blank tab ready in the background of its window, in its group, attached, its focus
//! emulated; its next `CreateTab` takes it and the next one is prepared behind it.
//!
//! A prepared tab is not shared: the daemon never hears of it until it is handed out, so it
//! counts against no limit and no client sees it or its events. It closes when its agent leaves
//! the daemon's list (gone, or the daemon socket lost), when the worker restarts, and never
//! lingers without its agent: a new window holds only it and the placeholder a new window opens
//! on. One the human takes for themselves (navigates, drags away) is let go; one the human closes
//! is not made again for that agent until its next page.

use serde_json::json;
use tabtunnel_extension_core::agent_tabs::{AgentTabs, Done, Facts, Looked, Step};
use tabtunnel_extension_core::placement::{OpenedTab, Places};
use tabtunnel_extension_core::sharing::Owner;
use tabtunnel_wire::{RequestId, TabId, TabInfo, WindowId};
use wasm_bindgen_futures::spawn_local;

use super::state::with;
use super::{attach, browser_ops, gestures, navigation, placement, sharing};
use crate::chrome;
use crate::js::{performance_now, sleep_until, to_js, within};

/// `chrome.storage.session` key: the prepared tabs (and placeholders) open now, which a
/// restarted worker closes.
const STORAGE_KEY: &str = "preparedTabs";

/// What the machine reads of the rest of the worker.
struct WorkerFacts<'a> {
    places: &'a Places,
}

impl Facts for WorkerFacts<'_> {
    fn window_of(&self, agent: &str) -> Option<WindowId> {
        self.places.window_of(agent)
    }

    fn kill_switch(&self) -> bool {
        super::kill_switch::is_engaged()
    }
}

/// Runs `f` on the machine, then the steps it gives.
fn drive(f: impl FnOnce(&mut AgentTabs, &WorkerFacts) -> Vec<Step>) {
    let steps = with(|w| f(&mut w.agent_tabs, &WorkerFacts { places: &w.places }));
    run(steps);
}

/// The machine's clock: the one `sleep_until` waits on.
fn now() -> f64 {
    performance_now()
}

/// The daemon's `CreateTab`, answered on connection `generation`.
pub fn create(generation: u64, id: RequestId, agent: String, url: String, allow_once: bool) {
    drive(|t, f| t.create(generation, id, &agent, url, allow_once, f));
}

/// The daemon's list of agents that should have a tab ready.
pub fn wanted(generation: u64, agents: Vec<String>) {
    drive(|t, f| t.wanted(generation, agents, f));
}

/// The daemon socket closed: its agents went, and every prepared tab closes.
pub fn connection_lost() {
    drive(|t, f| t.connection_lost(f));
}

/// The kill switch was engaged: every prepared tab closes.
pub fn kill_switch_engaged() {
    drive(|t, f| t.kill_switch_engaged(f));
}

/// A tab closed, or the debugger left a tab we did not share (the human cancelled debugging,
/// or Chrome took the session away): a prepared one is given up and closed.
pub fn lost(tab_id: TabId) {
    drive(|t, _| t.lost(tab_id));
}

/// A tab navigated: a prepared one the human sent somewhere is theirs now.
pub fn navigated(tab_id: TabId, url: &str) {
    drive(|t, _| t.navigated(tab_id, url));
}

/// A tab moved to another window: a prepared one the human dragged out is theirs now.
pub fn moved(tab_id: TabId, window_id: WindowId) {
    drive(|t, f| t.moved(tab_id, window_id, f));
}

fn completed(op: tabtunnel_extension_core::OpId, done: Done) {
    let now = now();
    drive(|t, f| t.completed(now, op, done, f));
}

fn run(steps: Vec<Step>) {
    for step in steps {
        match step {
            Step::Look { op, tab_id } => spawn_local(async move {
                let tab = chrome::get_tab(tab_id).await.ok();
                let renders = match &tab {
                    Some(tab) => tab.status != "unloaded" && page_runs(tab_id).await,
                    None => false,
                };
                if tab.is_some() && !renders {
                    warn!("prepared tab {tab_id}: its page does not run; another is opened instead");
                }
                let looked =
                    tab.map(|tab| Looked { blank: is_blank(&tab), renders, window_id: tab.window_id });
                completed(op, Done::Looked(looked));
            }),
            Step::Arm { op, tab_id } => spawn_local(async move {
                let armed = gestures::arm(tab_id).await;
                if let Err(e) = &armed {
                    warn!("prepared tab {tab_id}: {e}");
                }
                completed(op, Done::Armed(armed));
            }),
            Step::Open { op, agent, url } => spawn_local(async move {
                let opened = placement::open_tab(&agent, &url).await;
                if let Err(e) = &opened {
                    warn!("could not open a tab for {agent}: {e}");
                }
                completed(op, Done::Opened(opened));
            }),
            Step::Attach { op, tab_id, agent, guard } => spawn_local(async move {
                let owner = Owner { agent: agent.clone(), created: true };
                let described = if guard {
                    attach::attach_and_describe(tab_id, false, owner).await
                } else {
                    let described = attach::attach_unguarded_and_describe(tab_id, owner).await;
                    if let Err(e) = &described {
                        warn!("could not prepare a tab for {agent}: {e}");
                    }
                    described
                };
                completed(op, Done::Described(described));
            }),
            Step::Show { op, opened } => spawn_local(async move {
                let shown = placement::show(&opened).await;
                completed(op, Done::Shown(shown));
            }),
            Step::Share { op, info, navigate_to, allow_once } => spawn_local(async move {
                let shared = share(info, navigate_to, allow_once).await;
                completed(op, Done::Shared(shared));
            }),
            Step::Abandon(opened) => spawn_local(async move { placement::abandon(&opened).await }),
            Step::LetGo { tab_id, agent, opened } => {
                log!("the prepared tab {tab_id} of {agent} is the human's now");
                spawn_local(let_go(tab_id, opened));
            }
            Step::Store(tabs) => persist(&tabs),
            Step::Answer { generation, id, result } => {
                let value = result.and_then(|info| serde_json::to_value(info).map_err(|e| e.to_string()));
                browser_ops::answer(generation, id, value);
            }
            Step::WakeAt(at) => spawn_local(async move {
                sleep_until(at).await;
                let now = now();
                drive(|t, f| t.timeout(now, f));
            }),
        }
    }
}

/// How long a new tab's page may take to answer its first command.
const PAGE_STARTS_MS: u32 = 3_000;

/// Whether a new tab's page answers a command. One in ~40 of the bench's new agents' tabs
/// never did (issue 30): no command to it was ever answered, and a URL it was sent to never
/// loaded, so its agent waited forever. Commands of a session run in order, so this answers
/// only after those sent at attach; a few milliseconds once the page runs.
async fn page_runs(tab_id: TabId) -> bool {
    let probe = to_js(&json!({ "expression": "0" }));
    matches!(
        within(PAGE_STARTS_MS, chrome::send_command(tab_id, None, "Runtime.evaluate", &probe)).await,
        Some(Ok(_))
    )
}

/// Reports a tab just opened for its agent as shared (its rules in place first), then sends it
/// to `navigate_to` if it was opened blank.
async fn share(info: TabInfo, navigate_to: Option<String>, allow_once: bool) -> Result<(), String> {
    let tab_id = info.tab_id;
    sharing::add(info).await?;
    if let Some(url) = navigate_to {
        if allow_once {
            navigation::allow_once(tab_id, &url).await?;
        }
        chrome::update_tab(tab_id, &json!({ "url": url })).await?;
    }
    Ok(())
}

/// The debugger leaves a prepared tab the human took, it leaves the agent's group, and its
/// window's placeholder closes.
async fn let_go(tab_id: TabId, opened: OpenedTab) {
    if let Err(e) = chrome::detach(tab_id).await {
        warn!("detach from tab {tab_id}: {e}");
    }
    placement::leave_group(tab_id).await;
    placement::close_placeholder_of(&opened).await;
}

/// Still on the blank page it was opened on (a tab just opened may not have committed it yet).
fn is_blank(tab: &chrome::Tab) -> bool {
    let blank = |url: &str| url.is_empty() || url == "about:blank";
    blank(&tab.url) && blank(&tab.pending_url)
}

/// Closes the tabs an earlier worker prepared: their agents' next list prepares new ones.
pub async fn restore() {
    let stored: Vec<TabId> = chrome::session_value(STORAGE_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|v| crate::js::from_js(&v))
        .unwrap_or_default();
    for tab_id in stored {
        let _ = chrome::remove_tab(tab_id).await;
    }
    persist(&with(|w| w.agent_tabs.stored()));
}

fn persist(tabs: &[TabId]) {
    let items = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&items, &STORAGE_KEY.into(), &to_js(&tabs));
    spawn_local(async move {
        if let Err(e) = chrome::session_set(&items).await {
            warn!("storage.session.set failed: {e}");
        }
    });
}
