//! What the core asks its shell to do: the one thing [`crate::Core::poll_output`] hands out.

use crate::audit::AuditRecord;
use crate::client_frame::ClientFrame;
use crate::session::ConnId;
use tabtunnel_wire::{TabInfo, ToExtension};

/// What the core asks its shell to do.
#[derive(Debug)]
pub enum Output {
    /// Send one text frame to a client connection.
    ToClient { conn: ConnId, frame: ClientFrame },
    /// Send one frame to the extension.
    ToExtension(ToExtension),
    /// Close a client connection after its queued frames (a page socket whose tab is gone, an
    /// agent the human disconnected). The core has already forgotten it.
    CloseClient { conn: ConnId },
    /// The human answered a hand-over request ([`Core::request_handover`]): the tab now
    /// belongs to the agent, or `None` for a refusal.
    HandoverAnswered { id: u64, tab: Option<TabInfo> },
    /// Append to the audit trail (the shell adds the time).
    Audit(AuditRecord),
    /// The answer to [`Core::navigation_requested`]: let the page's navigation go on, or not
    /// (it then stays where it was).
    NavigationDecided { id: u64, go: bool },
    /// The kill switch changed: while engaged, the shell refuses every new client connection.
    KillSwitch { engaged: bool },
}
