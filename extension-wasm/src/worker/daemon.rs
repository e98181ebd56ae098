//! The shell around the extension's machine (`tabtunnel_extension_core::Machine`): it holds the
//! machine, feeds it inputs ([`input`], and the hot path's [`send_event`]/[`send_text_on`]), and
//! interprets its effects: the WebSocket, flushes, `chrome.storage`, the native host, timers
//! from `poll_timeout`. The decisions (dialing, `Hello`, heartbeats, reconnecting, batching, the
//! kill switch) are the machine's. What it hands to the rest of the worker (the machine's worker
//! effects, a changed panel state, the commands' fast path) goes to the [`Handlers`] the worker
//! gave [`install`]: this file is below every other part of the worker, which all feed it.

use std::cell::{Cell, RefCell};

use js_sys::JsString;
use tabtunnel_extension_core::batching::{Flush, Queued};
use tabtunnel_extension_core::status::LinkStatus;
use tabtunnel_extension_core::{
    ChromeCall, Completion, Config, Effect, Input, Level, Machine, TargetChange, WorkerEffect,
};
use tabtunnel_wire::{FromExtension, ToExtension};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{CloseEvent, MessageChannel, MessageEvent, WebSocket};

use super::{picture_capture, settings};
use crate::js::{
    error_message, from_js, parse_json, performance_now, queue_microtask, send_js, set_timeout, to_js,
};
use crate::{browser_info, chrome};

/// One connection attempt's socket. Dropping it detaches the handlers and closes it.
struct Socket {
    generation: u64,
    ws: WebSocket,
    _on_open: Closure<dyn FnMut()>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_close: Closure<dyn FnMut(CloseEvent)>,
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        let _ = self.ws.close();
    }
}

/// What runs flushes and timers: a microtask callback, a timer callback, a channel whose
/// messages are tasks, and the deadline a timer is set for.
struct Shell {
    socket: Option<Socket>,
    flush: js_sys::Function,
    flush_timer: js_sys::Function,
    channel: Option<MessageChannel>,
    timeout: js_sys::Function,
    armed: Option<f64>,
}

thread_local! {
    static MACHINE: RefCell<Machine<JsString>> = RefCell::new(Machine::new(Config {
        extension_version: chrome::manifest_version(),
        has_tasks: true,
    }));
    static SHELL: RefCell<Shell> = RefCell::new(Shell::new());
    static HANDLERS: Cell<Option<Handlers>> = const { Cell::new(None) };
}

/// What the rest of the worker does with what reaches it through the link.
#[derive(Clone, Copy)]
pub struct Handlers {
    /// A machine's effect for the part of the worker outside it.
    pub worker: fn(WorkerEffect),
    /// The panel's state changed: tell every open panel.
    pub panel_changed: fn(),
    /// A daemon frame of connection `generation`, parsed by JS: true if it was a command, taken
    /// on the fast path; otherwise it goes through serde into the machine.
    pub command: fn(u64, &JsValue) -> bool,
}

fn handlers() -> Handlers {
    HANDLERS.get().expect("daemon::install ran first")
}

impl Shell {
    fn new() -> Self {
        let callback = |from_timer: bool| {
            Closure::<dyn FnMut()>::new(move || {
                let _ = drive(|m, now| m.handle(now, Input::FlushDue { from_timer }));
            })
            .into_js_value()
            .unchecked_into::<js_sys::Function>()
        };
        let flush = callback(false);
        let channel = MessageChannel::new().ok();
        if let Some(channel) = &channel {
            channel.port1().set_onmessage(Some(&flush));
        }
        let timeout = Closure::<dyn FnMut()>::new(|| {
            SHELL.with_borrow_mut(|s| s.armed = None);
            let _ = drive(|m, now| m.handle(now, Input::Timeout));
        })
        .into_js_value()
        .unchecked_into();
        Shell { socket: None, flush, flush_timer: callback(true), channel, timeout, armed: None }
    }
}

/// Runs `f` on the machine, then interprets the effects it left (outside the borrow: they may
/// feed the machine again) and sets a timer for its next deadline.
fn drive<R>(f: impl FnOnce(&mut Machine<JsString>, f64) -> R) -> R {
    let now = performance_now();
    let (result, effects, deadline) = MACHINE.with_borrow_mut(|m| {
        let result = f(m, now);
        let effects: Vec<_> = std::iter::from_fn(|| m.poll_effect()).collect();
        (result, effects, m.poll_timeout())
    });
    for effect in effects {
        interpret(effect);
    }
    if let Some(deadline) = deadline {
        arm(deadline, now);
    }
    result
}

/// One timer for the earliest deadline; a later one is set when it fires (an early firing
/// finds nothing due and costs nothing).
fn arm(deadline: f64, now: f64) {
    SHELL.with_borrow_mut(|s| {
        if s.armed.is_some_and(|armed| armed <= deadline) {
            return;
        }
        s.armed = Some(deadline);
        set_timeout(&s.timeout, (deadline - now).ceil().max(0.0) as i32);
    });
}

/// An input for the machine; `Err` is its refusal, for whoever asked.
pub fn input(input: Input) -> Result<(), String> {
    drive(|m, now| m.handle(now, input))
}

/// Sets up the flush callbacks and takes the worker's handlers; once, at start.
pub fn install(handlers: Handlers) {
    HANDLERS.set(Some(handlers));
    SHELL.with(|_| {});
}

pub fn status() -> LinkStatus {
    MACHINE.with_borrow(|m| m.status().clone())
}

pub fn kill_switch() -> bool {
    MACHINE.with_borrow(|m| m.kill_switch())
}

fn is_current(generation: u64) -> bool {
    MACHINE.with_borrow(|m| m.is_current(generation))
}

/// Sends a frame on the current connection once `Hello` went out; dropped otherwise (the next
/// `Hello` carries the state that matters).
pub fn send(frame: &FromExtension) {
    drive(|m, now| m.send(now, frame));
}

/// An event already written as JSON (the hot frames, built around payloads that never enter
/// wasm: [`relay`]); it may wait a moment for the events behind it.
pub fn send_event(frame: JsString) {
    drive(|m, now| m.queue(now, frame, Queued::Event));
}

/// An answer already written as JSON, sent only if `generation` is still the current
/// connection: answers to commands must not reach a later connection, whose request ids mean
/// something else.
pub fn send_text_on(generation: u64, frame: JsString) {
    drive(|m, now| m.queue_on(generation, now, frame));
}

/// Like [`send`], for `generation` only (see [`send_text_on`]).
pub fn send_on(generation: u64, frame: &FromExtension) {
    drive(|m, now| m.send_on(generation, now, frame));
}

/// A tab or worker shared, changed or unshared; a share is refused while the kill switch is on.
pub fn target(change: TargetChange) -> Result<(), String> {
    input(Input::Target(change))
}

/// A command arrived from the daemon: whether a panel shows pictures (then say [`acted`]).
pub fn command_started() -> bool {
    MACHINE.with_borrow_mut(|m| {
        m.command_started();
        m.wants_pictures()
    })
}

/// A client's command reached tab `tab_id`: its agent's picture is taken again soon.
pub fn acted(tab_id: tabtunnel_wire::TabId) {
    drive(|m, now| m.acted(now, tab_id));
}

pub fn command_done() {
    MACHINE.with_borrow_mut(|m| m.command_done());
}

fn interpret(effect: Effect<JsString>) {
    match effect {
        Effect::Chrome { op, call } => spawn_local(async move {
            let completion = perform(call).await;
            let _ = input(Input::Completed { op, completion });
        }),
        Effect::Dial { generation, url } => dial(generation, &url),
        Effect::Send { generation, frames } => send_now(generation, frames),
        Effect::Close { generation } => SHELL.with_borrow(|s| {
            if let Some(socket) = s.socket.as_ref().filter(|s| s.generation == generation) {
                let _ = socket.ws.close();
            }
        }),
        Effect::Hangup { generation } => {
            let socket = SHELL.with_borrow_mut(|s| s.socket.take_if(|s| s.generation == generation));
            // We may be inside one of the socket's own handlers; drop it after the handler returns.
            if let Some(socket) = socket {
                spawn_local(async move { drop(socket) });
            }
        }
        Effect::ScheduleFlush(flush) => SHELL.with_borrow(|s| match (flush, &s.channel) {
            (Flush::AlreadyDue, _) => {}
            (Flush::Task, Some(channel)) => {
                let _ = channel.port2().post_message(&JsValue::NULL);
            }
            (Flush::Microtask | Flush::Task, _) => queue_microtask(&s.flush),
            (Flush::Timer, _) => {
                set_timeout(&s.flush_timer, tabtunnel_extension_core::batching::EVENT_BATCH_MS);
            }
        }),
        Effect::Store(items) => spawn_local(async move {
            if let Err(e) = chrome::local_set(&to_js(&items)).await {
                warn!("storage.local.set failed: {e}");
            }
        }),
        Effect::PanelChanged => (handlers().panel_changed)(),
        Effect::Picture { agent, tab_id, data } => picture_capture::broadcast(agent, tab_id, data),
        Effect::Log(Level::Log, message) => log!("{message}"),
        Effect::Log(Level::Warn, message) => warn!("{message}"),
        Effect::Worker(effect) => (handlers().worker)(effect),
    }
}

/// What a chrome call the machine asked for answered.
async fn perform(call: ChromeCall) -> Completion {
    match call {
        ChromeCall::ReadStored(keys) => Completion::Stored(match chrome::local_get(&keys).await {
            Ok(items) => from_js(&items),
            Err(e) => {
                warn!("storage.local.get failed: {e}");
                None
            }
        }),
        ChromeCall::ReadDialSettings => Completion::DialSettings(settings::read().await),
        ChromeCall::SendNativeMessage { host, message } => Completion::NativeMessage(
            chrome::send_native_message(host, &message)
                .await
                .map(|answer| from_js(&answer).unwrap_or(serde_json::Value::Null)),
        ),
        ChromeCall::Identify => Completion::Identity {
            browser: browser_info::get().await,
            instance_id: settings::instance_id().await,
        },
        ChromeCall::CapturePicture { tab_id } => Completion::Picture(picture_capture::capture(tab_id).await),
    }
}

fn dial(generation: u64, url: &str) {
    let ws = match WebSocket::new(url) {
        Ok(ws) => ws,
        Err(e) => {
            let _ = input(Input::SocketFailed { generation, error: error_message(&e) });
            return;
        }
    };
    let on_open = Closure::<dyn FnMut()>::new(move || {
        let _ = input(Input::SocketOpened { generation });
    });
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let data = event.data();
        if !data.is_string() {
            return warn!("ignoring a binary frame from the daemon");
        }
        if !is_current(generation) {
            return;
        }
        // Parsed by JS, once: a command's params go to chrome.debugger as the object they are.
        match parse_json(&data) {
            Ok(frames) if js_sys::Array::is_array(&frames) => {
                js_sys::Array::from(&frames).for_each(&mut |frame, _, _| receive(generation, &frame))
            }
            Ok(frame) => receive(generation, &frame),
            Err(e) => warn!("unreadable message from the daemon: {}", error_message(&e)),
        }
    });
    let on_close = Closure::<dyn FnMut(CloseEvent)>::new(move |event: CloseEvent| {
        let _ = input(Input::SocketClosed { generation, code: event.code(), reason: event.reason() });
    });
    ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    let socket = Socket { generation, ws, _on_open: on_open, _on_message: on_message, _on_close: on_close };
    let old = SHELL.with_borrow_mut(|s| s.socket.replace(socket));
    if let Some(old) = old {
        spawn_local(async move { drop(old) });
    }
}

/// Sends frames as one message, a frame per line (compact JSON never holds a raw newline).
fn send_now(generation: u64, frames: Vec<JsString>) {
    SHELL.with_borrow(|s| {
        let Some(socket) = s.socket.as_ref().filter(|s| s.generation == generation) else { return };
        if socket.ws.ready_state() != WebSocket::OPEN {
            return;
        }
        let message = match <[JsString; 1]>::try_from(frames) {
            Ok([one]) => one,
            Err(frames) => frames.into_iter().collect::<js_sys::Array>().join("\n"),
        };
        if let Err(e) = send_js(&socket.ws, &message) {
            warn!("send failed: {e:?}");
        }
    });
}

/// One frame from the daemon, parsed. Commands, nearly every frame, are read as the JS
/// objects they are; the rest through serde, into the machine.
fn receive(generation: u64, frame: &JsValue) {
    if (handlers().command)(generation, frame) {
        return;
    }
    match from_js::<ToExtension>(frame) {
        Some(frame) => {
            let _ = input(Input::Frame { generation, frame });
        }
        None => warn!("unreadable frame from the daemon (not a frame we know)"),
    }
}
