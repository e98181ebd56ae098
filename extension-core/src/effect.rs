//! What the machine asks of the world; the shell's interpreter does it and reports back with an
//! [`crate::input::Input`] (a completion carries the effect's [`OpId`]).

use std::collections::VecDeque;

use tabtunnel_wire::ToExtension;

use crate::batching::Flush;
use crate::settings::Startup;

/// Names one effect whose completion the machine waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(pub u64);

/// Hands out a machine's operation ids, each new.
#[derive(Debug, Default)]
pub struct OpIds(u64);

impl OpIds {
    pub fn issue(&mut self) -> OpId {
        self.0 += 1;
        OpId(self.0)
    }
}

/// `F` is a frame already written as JSON: a JS string in the worker, never parsed again.
#[derive(Debug)]
pub enum Effect<F> {
    /// A chrome call; answered by `Input::Completed { op, .. }`.
    Chrome {
        op: OpId,
        call: ChromeCall,
    },
    /// Open a WebSocket for connection attempt `generation`.
    Dial {
        generation: u64,
        url: String,
    },
    /// Send these frames as one message, a frame per line.
    Send {
        generation: u64,
        frames: Vec<F>,
    },
    /// Close the socket; its close event still comes (and schedules the retry).
    Close {
        generation: u64,
    },
    /// Forget the socket: detach its handlers and close it.
    Hangup {
        generation: u64,
    },
    /// Run a flush (`Input::FlushDue`) as [`Flush`] says.
    ScheduleFlush(Flush),
    /// `chrome.storage.local.set(items)`.
    Store(serde_json::Value),
    /// The panel's state changed: tell every open panel.
    PanelChanged,
    /// A new picture of the tab `agent` works in (a data URL): tell every open panel.
    Picture {
        agent: String,
        tab_id: tabtunnel_wire::TabId,
        data: String,
    },
    Log(Level, String),
    /// For the part of the worker not in the machine yet.
    Worker(WorkerEffect),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ChromeCall {
    /// `chrome.storage.local.get` of the keys, at start.
    ReadStored(Vec<&'static str>),
    /// Storage's `daemonUrl` and `lastPairing`, and the packaged `pairing.json`.
    ReadDialSettings,
    /// `chrome.runtime.sendNativeMessage(host, message)`.
    SendNativeMessage { host: &'static str, message: serde_json::Value },
    /// The browser's identity and this install's id, for `Hello`.
    Identify,
    /// A small picture of a shared tab's page, for the panel ([`crate::pictures`]).
    CapturePicture { tab_id: tabtunnel_wire::TabId },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Log,
    Warn,
}

#[derive(Debug)]
pub enum WorkerEffect {
    /// Re-attach the tabs that survived a restart (unless `shares` is false: the kill switch is
    /// engaged) and restore prepared tabs, then say `Input::WorkerRestored`.
    Restore { shares: bool },
    /// `pairing.json` asks to open pages and share the startup tabs (once per browser session).
    StartUp(Startup),
    /// A frame the worker handles, from connection `generation`.
    Deliver { generation: u64, frame: ToExtension },
    /// The daemon went: its agents, prepared tabs and held gestures with it; if `was_open`, its
    /// clients too, so each shared tab starts a fresh debugger session.
    ConnectionLost { was_open: bool },
    /// The kill switch was engaged: unshare every tab and worker, drop prepared tabs.
    StopEverything,
}

/// The effects waiting to be polled, and the ids for new operations.
#[derive(Debug)]
pub struct Out<F> {
    effects: VecDeque<Effect<F>>,
    ops: OpIds,
}

impl<F> Default for Out<F> {
    fn default() -> Self {
        Out { effects: VecDeque::new(), ops: OpIds::default() }
    }
}

impl<F> Out<F> {
    pub fn push(&mut self, effect: Effect<F>) {
        self.effects.push_back(effect);
    }

    /// A chrome call; its id, for the completion.
    pub fn call(&mut self, call: ChromeCall) -> OpId {
        let op = self.ops.issue();
        self.push(Effect::Chrome { op, call });
        op
    }

    pub fn log(&mut self, level: Level, message: impl Into<String>) {
        self.push(Effect::Log(level, message.into()));
    }

    pub fn pop(&mut self) -> Option<Effect<F>> {
        self.effects.pop_front()
    }
}
