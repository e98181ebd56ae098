//! The shared tabs the emulation knows, who owns each, and the CDP `TargetInfo` objects it shows
//! for them.

use crate::AgentId;
use serde_json::{json, Value};
use tabtunnel_wire::{TabId, TabInfo};

/// One shared tab. In CDP it is two targets: a `tab` target (puppeteer's topology) and the
/// `page` target inside it, whose id is Chrome's real targetId. Or a service or shared worker
/// of an agent's pages (`TabInfo::kind`): one target, its "page", with the worker's targetId.
#[derive(Debug, Clone)]
pub struct Tab {
    pub info: TabInfo,
    /// The agent this tab belongs to (`info.agent`, interned): only its connections see it.
    pub owner: AgentId,
}

impl Tab {
    pub fn new(info: TabInfo) -> Self {
        let owner = AgentId::new(&info.agent);
        Tab { info, owner }
    }

    /// Updates what the extension reports; the owner changes only through a hand-over, which
    /// the core treats as the tab leaving one agent and reaching another.
    pub fn set_info(&mut self, info: TabInfo) {
        debug_assert_eq!(info.agent, self.info.agent);
        self.info = info;
    }

    pub fn id(&self) -> TabId {
        self.info.tab_id
    }

    pub fn visible_to(&self, agent: &AgentId) -> bool {
        self.owner == *agent
    }

    /// A tab's page, rather than a worker its pages use (which is one target, with no `tab`).
    pub fn is_page(&self) -> bool {
        self.info.kind.is_page()
    }

    pub fn page_target_id(&self) -> &str {
        &self.info.target_id
    }

    /// The synthetic id of the `tab` target; derived, so it is stable for the tab's lifetime.
    pub fn tab_target_id(&self) -> String {
        tab_target_id(&self.info.target_id)
    }

    /// The page's (or the worker's) `TargetInfo`.
    pub fn page_target_info(&self) -> Value {
        let mut info = json!({
            "targetId": self.info.target_id,
            "type": self.info.kind.cdp_type(),
            "title": self.info.title,
            "url": self.info.url,
            "attached": true,
            "canAccessOpener": false,
            "browserContextId": self.info.browser_context_id,
        });
        if let Some(opener) = &self.info.opener_target_id {
            info["openerId"] = json!(opener);
        }
        info
    }

    pub fn tab_target_info(&self) -> Value {
        json!({
            "targetId": self.tab_target_id(),
            "type": "tab",
            "title": self.info.title,
            "url": self.info.url,
            "attached": true,
            "canAccessOpener": false,
            "browserContextId": self.info.browser_context_id,
        })
    }
}

pub fn tab_target_id(page_target_id: &str) -> String {
    format!("TAB-{page_target_id}")
}

pub fn browser_target_info(browser_target_id: &str) -> Value {
    json!({
        "targetId": browser_target_id,
        "type": "browser",
        "title": "",
        "url": "",
        "attached": true,
        "canAccessOpener": false,
    })
}
