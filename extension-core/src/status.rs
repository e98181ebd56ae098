//! What the side panel shows about the daemon link.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DaemonState {
    #[default]
    Disconnected,
    Connecting,
    Connected,
    Rejected,
}

impl DaemonState {
    /// The `data-state` value the e2e tests read.
    pub fn as_str(self) -> &'static str {
        match self {
            DaemonState::Disconnected => "disconnected",
            DaemonState::Connecting => "connecting",
            DaemonState::Connected => "connected",
            DaemonState::Rejected => "rejected",
        }
    }
}

/// The link's part of the panel's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkStatus {
    pub daemon: DaemonState,
    /// A line explaining `daemon` (retry countdown, rejection reason, missing URL).
    pub detail: Option<String>,
    /// The URL the user pasted or `tabtunnel launch` paired; `None` when the native host pairs.
    pub daemon_url: Option<String>,
    /// From the daemon's `Welcome`: what users give their CDP clients.
    pub client_endpoint: Option<String>,
    /// The daemon's version differs from ours: what to do about it.
    pub version_warning: Option<String>,
    /// From the daemon's `Welcome`: what it found wrong with the audit trail's seals.
    pub audit_trail: Option<String>,
}
