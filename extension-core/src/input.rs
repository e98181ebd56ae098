//! What happens to the extension, as the machine hears it: the shell's listeners turn chrome
//! events, socket callbacks, panel requests, completed effects and timers into these.

use tabtunnel_wire::{BrowserInfo, FromExtension, TabId, TabInfo, ToExtension, UnshareReason};

use crate::effect::OpId;
use crate::settings::DialSettings;

#[derive(Debug)]
pub enum Input {
    /// The worker started: restore what storage holds, then dial.
    Start,
    /// The part of the worker outside the machine restored its tabs (after
    /// [`crate::effect::WorkerEffect::Restore`]): now the first `Hello` can list them.
    WorkerRestored,
    /// An effect with this id finished.
    Completed {
        op: OpId,
        completion: Completion,
    },
    /// A deadline from `poll_timeout` passed.
    Timeout,
    /// A flush scheduled by [`crate::effect::Effect::ScheduleFlush`] runs.
    FlushDue {
        from_timer: bool,
    },
    /// The socket of connection attempt `generation`.
    SocketOpened {
        generation: u64,
    },
    SocketClosed {
        generation: u64,
        code: u16,
        reason: String,
    },
    /// `new WebSocket(url)` threw.
    SocketFailed {
        generation: u64,
        error: String,
    },
    /// A frame from the daemon on connection `generation` (commands take the shell's fast path
    /// and never come here: their params stay JS).
    Frame {
        generation: u64,
        frame: ToExtension,
    },
    Panel(PanelInput),
    Chrome(ChromeEvent),
    /// A target (tab or worker) the daemon must know of, or no longer.
    Target(TargetChange),
}

/// The panel's requests that concern the machine.
#[derive(Debug)]
pub enum PanelInput {
    /// The daemon URL field; empty clears it.
    SetDaemonUrl(String),
    KillSwitch(bool),
    /// Take the daemon over from another browser.
    UseThisBrowser,
    /// A frame the human asked for (mint or revoke a token): refused when not connected.
    Send(FromExtension),
    /// A panel opened or closed (its port to the worker): pictures are taken while one is open.
    Opened,
    Closed,
}

/// Chrome events, with only the fields decisions read.
#[derive(Debug)]
pub enum ChromeEvent {
    /// `chrome.commands.onCommand`.
    Command(String),
}

#[derive(Debug)]
pub enum TargetChange {
    /// Shared: announced now (`TabShared`) or in the next `Hello`. Refused while the kill switch
    /// is engaged.
    Shared(TabInfo),
    Changed(TabInfo),
    Unshared {
        tab_id: TabId,
        reason: UnshareReason,
    },
}

/// The answer to a [`crate::effect::ChromeCall`].
#[derive(Debug)]
pub enum Completion {
    /// [`crate::effect::ChromeCall::ReadStored`]: the items read (`None`: storage failed).
    Stored(Option<serde_json::Value>),
    DialSettings(DialSettings),
    /// The native host's answer, or why there is none.
    NativeMessage(Result<serde_json::Value, String>),
    Identity {
        browser: BrowserInfo,
        instance_id: String,
    },
    /// [`crate::effect::ChromeCall::CapturePicture`]: a data URL, or why there is none.
    Picture(Result<String, String>),
}
