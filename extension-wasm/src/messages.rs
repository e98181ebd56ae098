//! Messages between the side panel and the service worker (`chrome.runtime.sendMessage`).
//! The worker owns all state; the panel asks for changes and renders what it is told.

use serde::{Deserialize, Serialize};
use tabtunnel_wire::TabId;

pub use tabtunnel_extension_core::status::DaemonState;
pub use tabtunnel_wire::HandoverRequest;

/// The name of the port each open panel holds to the worker (pictures are taken only then).
pub const PANEL_PORT: &str = "panel";

/// Panel → worker. The worker answers each with a [`PanelReply`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum PanelRequest {
    GetState,
    Share {
        tab_id: TabId,
    },
    Unshare {
        tab_id: TabId,
    },
    /// An empty URL clears it.
    SetDaemonUrl {
        url: String,
    },
    /// Hand a tab to a named agent (it stays where it is, in a group of the agent's).
    HandTab {
        tab_id: TabId,
        agent: String,
    },
    /// Take a tab back from its agent.
    TakeBack {
        tab_id: TabId,
    },
    /// Close an agent's connections; its tabs are closed (`close_tabs`) or let go as usual.
    DisconnectAgent {
        agent: String,
        close_tabs: bool,
    },
    /// Answer an agent's request for the active tab: this tab, or `None` to refuse.
    AnswerHandover {
        id: u64,
        tab_id: Option<TabId>,
    },
    /// Answer a question of the policy's.
    AnswerApproval {
        id: u64,
        answer: tabtunnel_wire::ApprovalAnswer,
    },
    /// Take back a standing answer of the gesture guard's.
    TakeBackStanding {
        id: u64,
    },
    /// Engage or release the kill switch.
    KillSwitch {
        engaged: bool,
    },
    /// Mint a token for a new agent (shown once in the panel, then only its hash is kept).
    MintAgentToken {
        name: String,
    },
    /// Revoke an agent's token: it stops working and the agent's connections close.
    RevokeAgentToken {
        name: String,
    },
    /// The human has copied the token just minted: stop showing it.
    DismissMintedToken,
    /// Another browser holds the daemon: take it over for this one.
    UseThisBrowser,
    /// The human clicked an agent's picture: its tab to the front, its window focused.
    BringForward {
        tab_id: TabId,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PanelReply {
    pub state: PanelState,
    /// Why the request could not be done, for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Worker → every open page of the extension, after each state change. Any page of ours
/// hears it, so it carries no secret: `state` is [`PanelState::withholding_secrets`], and
/// `secrets` their [`PanelState::secrets_fingerprint`], by which a panel knows to ask for them
/// (a request only the panel's own pages get answered).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum WorkerBroadcast {
    State {
        state: Box<PanelState>,
        secrets: u64,
    },
    /// A new picture of the tab `agent` works in (a data URL; sent only while a panel is open).
    #[serde(rename_all = "camelCase")]
    Picture {
        agent: String,
        tab_id: TabId,
        src: String,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PanelState {
    pub daemon: DaemonState,
    /// A line explaining `daemon` (retry countdown, rejection reason, missing URL).
    #[serde(default)]
    pub detail: Option<String>,
    #[serde(default)]
    pub daemon_url: Option<String>,
    /// From the daemon's `Welcome`: what users give their CDP clients.
    #[serde(default)]
    pub client_endpoint: Option<String>,
    #[serde(default)]
    pub shared_tabs: Vec<SharedTab>,
    /// Tabs being attached right now.
    #[serde(default)]
    pub pending_tabs: Vec<TabId>,
    /// The daemon's agents.
    #[serde(default)]
    pub agents: Vec<AgentView>,
    /// Agents asking for the human's active tab.
    #[serde(default)]
    pub handovers: Vec<HandoverRequest>,
    /// The window the human last worked in (never an agent's own window): whose active tab a
    /// panel opened as a popup is about.
    #[serde(default)]
    pub human_window: Option<tabtunnel_wire::WindowId>,
    /// Questions the policy asks before an agent goes on.
    #[serde(default)]
    pub approvals: Vec<tabtunnel_wire::ApprovalRequest>,
    /// Pictures of the elements the gesture guard asks about, and of those answered that an
    /// agent's history lists: question id and data URL. (A list: a map with number keys does
    /// not survive serde's internally tagged enums.)
    #[serde(default)]
    pub approval_pictures: Vec<(u64, String)>,
    /// The human's standing answers to the gesture guard, each with a way to take it back.
    #[serde(default)]
    pub standing: Vec<StandingView>,
    /// Every agent is stopped.
    #[serde(default)]
    pub kill_switch: bool,
    /// The daemon's version is not this extension's: what to do.
    #[serde(default)]
    pub version_warning: Option<String>,
    /// Chrome lets the extension read local files: how to turn that off.
    #[serde(default)]
    pub file_access_warning: Option<String>,
    /// The daemon found the audit trail rewritten: what it found.
    #[serde(default)]
    pub audit_trail_warning: Option<String>,
    /// Agents with a token of their own.
    #[serde(default)]
    pub agent_credentials: Vec<tabtunnel_wire::AgentCredential>,
    /// A token just minted, shown until the human dismisses it (it is never stored).
    #[serde(default)]
    pub minted_token: Option<MintedToken>,
}

impl PanelState {
    /// The state without its secrets: the pairing URL (the extension's secret), the client
    /// endpoint (the owner token) and a token just minted.
    pub fn withholding_secrets(mut self) -> Self {
        self.daemon_url = None;
        self.client_endpoint = None;
        if let Some(minted) = &mut self.minted_token {
            minted.token = None;
        }
        self
    }

    /// Tells the secrets apart without holding them (a keyed hash of 64 bits of 256-bit
    /// secrets): changes when any of them does.
    pub fn secrets_fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (&self.daemon_url, &self.client_endpoint, self.minted_token.as_ref().map(|m| &m.token))
            .hash(&mut hasher);
        hasher.finish()
    }

    /// Takes the secrets a broadcast withheld from the state this panel had.
    pub fn keep_secrets_of(&mut self, old: &PanelState) {
        self.daemon_url.clone_from(&old.daemon_url);
        self.client_endpoint.clone_from(&old.client_endpoint);
        if let (Some(minted), Some(old)) = (&mut self.minted_token, &old.minted_token) {
            if minted.name == old.name {
                minted.token.clone_from(&old.token);
            }
        }
    }
}

/// The answer to a [`PanelRequest::MintAgentToken`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MintedToken {
    pub name: String,
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
}

/// One agent as the panel shows it. Times are this browser's (`Date.now()`), converted from
/// the daemon's clock when its report arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentView {
    pub name: String,
    pub connections: u32,
    /// Its MCP sessions open: it is expected, whether or not a client of it connected.
    #[serde(default)]
    pub sessions: u32,
    pub tabs: Vec<TabId>,
    pub last_action: Option<String>,
    pub last_action_at: Option<f64>,
    /// While it has no connection: when its tabs (or the window kept for it) are let go.
    pub releases_at: Option<f64>,
    /// Its tab groups' colour.
    pub color: String,
    /// Its last audited steps, newest last.
    #[serde(default)]
    pub recent: Vec<RecentStep>,
    /// The id of the agent token its client presented (never the token).
    #[serde(default)]
    pub token_id: Option<String>,
    /// The client it came through (MCP client name and version, else its User-Agent).
    #[serde(default)]
    pub client: Option<String>,
}

/// A standing answer as the panel lists it, with this browser's time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StandingView {
    pub id: u64,
    pub agent: String,
    pub origin: String,
    pub kinds: Vec<tabtunnel_wire::gestures::GestureKind>,
    /// When it ends (`None`: when tabtunnel stops).
    #[serde(default)]
    pub until: Option<f64>,
}

/// One audited step, with this browser's time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecentStep {
    /// The step in words (empty from an older daemon: the method says it then).
    #[serde(default)]
    pub step: String,
    pub method: String,
    pub url: Option<String>,
    pub outcome: String,
    pub at: f64,
    /// The gesture guard's question it answered (its picture is in `approval_pictures`).
    #[serde(default)]
    pub question: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SharedTab {
    pub tab_id: TabId,
    pub title: String,
    pub url: String,
    /// The agent it is shared with.
    pub agent: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_small_tagged_objects() {
        let share = PanelRequest::Share { tab_id: 5 };
        assert_eq!(serde_json::to_string(&share).unwrap(), r#"{"type":"share","tabId":5}"#);
        let back: PanelRequest = serde_json::from_str(r#"{"type":"setDaemonUrl","url":"ws://x"}"#).unwrap();
        assert_eq!(back, PanelRequest::SetDaemonUrl { url: "ws://x".into() });
        // A broadcast is not a request, so the worker ignores the panel's traffic and vice versa.
        let broadcast = WorkerBroadcast::State { state: Box::default(), secrets: 0 };
        let text = serde_json::to_string(&broadcast).unwrap();
        assert!(serde_json::from_str::<PanelRequest>(&text).is_err());
        let picture = WorkerBroadcast::Picture { agent: "a".into(), tab_id: 7, src: "data:x".into() };
        let text = serde_json::to_string(&picture).unwrap();
        assert_eq!(text, r#"{"type":"picture","agent":"a","tabId":7,"src":"data:x"}"#);
        assert!(serde_json::from_str::<PanelRequest>(&text).is_err());
        let forward: PanelRequest = serde_json::from_str(r#"{"type":"bringForward","tabId":7}"#).unwrap();
        assert_eq!(forward, PanelRequest::BringForward { tab_id: 7 });
    }

    #[test]
    fn a_broadcast_carries_no_secret_and_says_when_they_changed() {
        let full = PanelState {
            daemon_url: Some("ws://127.0.0.1:9722/extsecret/extension".into()),
            client_endpoint: Some("http://127.0.0.1:9722/ownertoken".into()),
            minted_token: Some(MintedToken {
                name: "bob".into(),
                token: Some("tta_bobtoken".into()),
                error: None,
            }),
            ..PanelState::default()
        };
        let heard = full.clone().withholding_secrets();
        let text =
            serde_json::to_string(&WorkerBroadcast::State { state: Box::new(heard.clone()), secrets: 1 })
                .unwrap();
        for secret in ["extsecret", "ownertoken", "tta_bobtoken"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert_eq!(heard.minted_token.as_ref().map(|m| m.name.as_str()), Some("bob"));
        // A panel keeps what it was told, and learns from the fingerprint when to ask again.
        let mut shown = heard.clone();
        shown.keep_secrets_of(&full);
        assert_eq!(shown, full);
        assert_ne!(full.secrets_fingerprint(), heard.secrets_fingerprint());
        let mut minted_again = full.clone();
        minted_again.minted_token.as_mut().unwrap().token = Some("tta_other".into());
        assert_ne!(full.secrets_fingerprint(), minted_again.secrets_fingerprint());
        assert_eq!(full.secrets_fingerprint(), full.clone().secrets_fingerprint());
        // A dismissed token is not brought back.
        let mut dismissed = PanelState { minted_token: None, ..heard };
        dismissed.keep_secrets_of(&full);
        assert_eq!(dismissed.minted_token, None);
    }
}
