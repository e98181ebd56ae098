//! The WebSocket to the daemon: dial, `Hello`, heartbeats, incoming frames, reconnect with
//! backoff. Every outgoing frame goes through [`send`] (or [`send_text`], for frames already
//! written as JSON) into the socket's queue, which [`flush`] sends as one message.

use tabtunnel_wire::{FromExtension, Hello, TabId, ToExtension, HEARTBEAT_INTERVAL_MS, PROTOCOL_VERSION};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{CloseEvent, MessageEvent, WebSocket};

use js_sys::JsString;

use super::{
    agents, batching, broadcast, browser_ops, navigation, pairing, prepared, relay, settings, sharing, with,
    workers,
};
use crate::js::{error_message, from_js, parse_json, send_js, sleep};
use crate::messages::DaemonState;
use crate::{browser_info, chrome};

/// One connection attempt. Dropping it detaches the handlers and closes the socket.
pub struct Socket {
    ws: WebSocket,
    /// Frames other than `Hello` wait for it, so the daemon always hears `Hello` first.
    hello_sent: bool,
    /// Frames waiting to leave together (see [`batching`]); they die with the socket.
    queue: js_sys::Array,
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

/// Drops the current connection (if any) and dials again at once: at start and when the URL
/// changes.
pub fn reconnect_now() {
    let generation = with(|w| {
        w.generation += 1;
        w.backoff.reset();
        w.rejection = None;
        drop_later(w.socket.take());
        w.generation
    });
    spawn_local(connect(generation));
}

/// Sends a frame on the current connection once `Hello` went out; dropped otherwise (the next
/// `Hello` carries the state that matters).
pub fn send(frame: &FromExtension) {
    send_text(frame.to_json().into());
}

/// [`send`] of a frame already written as JSON (the hot frames, built around payloads that
/// never enter wasm: [`relay`]).
pub fn send_text(frame: JsString) {
    queue(frame, batching::Queued::Other);
}

/// [`send_text`] of an event, which may wait a moment for the events behind it
/// ([`batching`]).
pub fn send_event(frame: JsString) {
    queue(frame, batching::Queued::Event);
}

fn queue(frame: JsString, what: batching::Queued) {
    let queued = with(|w| match &w.socket {
        Some(s) if s.hello_sent && s.ws.ready_state() == WebSocket::OPEN => {
            s.queue.push(&frame);
            true
        }
        _ => false,
    });
    if queued {
        batching::queued(what);
    }
}

/// Sends a frame the human asked for, or says why it cannot go.
pub fn send_if_connected(frame: &FromExtension) -> Result<(), String> {
    if with(|w| w.daemon) != DaemonState::Connected {
        return Err("The daemon is not connected.".into());
    }
    send(frame);
    Ok(())
}

/// Like [`send_text`], but only if `generation` is still the current connection: answers to
/// commands must not reach a later connection, whose request ids mean something else.
pub fn send_text_on(generation: u64, frame: JsString) {
    if is_current(generation) {
        send_text(frame);
    }
}

/// Like [`send`], for `generation` only (see [`send_text_on`]).
pub fn send_on(generation: u64, frame: &FromExtension) {
    if is_current(generation) {
        send(frame);
    }
}

/// Sends what is queued as one message, a frame per line (compact JSON never holds a raw
/// newline). Whether there was anything to send.
pub fn flush() -> bool {
    with(|w| {
        let Some(s) = &w.socket else { return false };
        let message: JsString = match s.queue.length() {
            0 => return false,
            1 => s.queue.get(0).unchecked_into(),
            _ => s.queue.join("\n"),
        };
        s.queue.set_length(0);
        if s.ws.ready_state() != WebSocket::OPEN {
            return false;
        }
        if let Err(e) = send_js(&s.ws, &message) {
            warn!("send failed: {e:?}");
        }
        true
    })
}

fn is_current(generation: u64) -> bool {
    with(|w| w.generation == generation)
}

fn set_status(state: DaemonState, detail: Option<String>) {
    with(|w| {
        w.daemon = state;
        w.detail = detail;
    });
    broadcast();
}

async fn connect(generation: u64) {
    let dial = settings::daemon_url().await;
    if dial.startup.share_tabs || !dial.startup.open_urls.is_empty() {
        spawn_local(sharing::start_up(dial.startup.clone()));
    }
    let url = match dial.url {
        Ok(url) => url,
        Err(problem) => {
            with(|w| w.rejection = None);
            set_status(DaemonState::Disconnected, Some(problem));
            return;
        }
    };
    if !is_current(generation) {
        return;
    }
    // A URL the user pasted (or `tabtunnel launch` paired) is theirs to keep; without one, the
    // native host starts the daemon if needed and tells us where it is (not shown: it names a
    // secret the user never needs).
    with(|w| w.daemon_url = url.clone());
    let url = match url {
        Some(url) => url,
        None => match pairing::ask().await {
            Ok(url) => url,
            Err(problem) => return retry_later(generation, problem),
        },
    };
    let browser = browser_info::get().await;
    let instance_id = settings::instance_id().await;
    if !is_current(generation) {
        return;
    }
    let ws = match WebSocket::new(&url) {
        Ok(ws) => ws,
        Err(e) => {
            let why = error_message(&e);
            set_status(DaemonState::Disconnected, Some(format!("Invalid daemon URL: {why}")));
            return;
        }
    };
    let on_open = Closure::<dyn FnMut()>::new(move || {
        // Snapshot the tabs and mark Hello sent in one step, so no TabShared can fall between.
        let hello = with(|w| {
            let socket = w.socket.as_mut()?;
            socket.hello_sent = true;
            Some(FromExtension::Hello(Hello {
                protocol_version: PROTOCOL_VERSION,
                extension_version: chrome::manifest_version(),
                instance_id: instance_id.clone(),
                browser: browser.clone(),
                tabs: w.shared.values().cloned().chain(w.workers.infos()).collect(),
                kill_switch: w.kill_switch,
                take_over: w.take_over,
            }))
        });
        if let Some(hello) = hello {
            // Alone and first: the daemon reads Hello before anything else.
            send(&hello);
            flush();
            spawn_local(heartbeat(generation));
        }
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
        closed(generation, event.code(), &event.reason());
    });
    ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    with(|w| {
        w.socket = Some(Socket {
            ws,
            hello_sent: false,
            queue: js_sys::Array::new(),
            _on_open: on_open,
            _on_message: on_message,
            _on_close: on_close,
        })
    });
    // A rejection stays visible while we keep retrying.
    if with(|w| w.rejection.is_none()) {
        set_status(DaemonState::Connecting, Some(format!("Connecting to {url}")));
    }
}

/// One frame from the daemon, parsed. Commands, nearly every frame, are read as the JS
/// objects they are; the rest through serde.
fn receive(generation: u64, frame: &JsValue) {
    if let Some(command) = relay::IncomingCommand::read(frame) {
        if command.is_page_screenshot() {
            super::placement::bring_forward_first(command.tab_id);
        }
        // Taken now, in arrival order: a command waits only for steps begun before it.
        let gate = sharing::reset_gate(command.tab_id);
        let epoch = sharing::epoch(command.tab_id);
        batching::command_started();
        spawn_local(relay::run_command(generation, command, gate, epoch));
        return;
    }
    match from_js::<ToExtension>(frame).ok_or("not a frame we know") {
        Ok(ToExtension::Command(_)) => warn!("ignoring a command without a method"),
        Ok(ToExtension::ResetTab { tab_id }) if workers::is_worker(tab_id) => workers::reset(tab_id),
        Ok(ToExtension::ResetTab { tab_id }) => sharing::reset(tab_id),
        Ok(ToExtension::Browser(request)) => browser_ops::run(generation, request),
        Ok(ToExtension::Agents { now_ms, agents: statuses }) => agents::reported(now_ms, statuses),
        Ok(ToExtension::HandoverRequest(request)) => agents::handover_requested(request),
        Ok(ToExtension::HandoverWithdrawn { id }) => agents::handover_withdrawn(id),
        Ok(ToExtension::Approval(request)) => agents::approval_requested(request),
        Ok(ToExtension::ApprovalWithdrawn { id }) => agents::approval_withdrawn(id),
        Ok(ToExtension::NavigationRules { rules, navigation_url }) => {
            navigation::rules_changed(rules, navigation_url)
        }
        Ok(ToExtension::PrepareTabs { agents }) => prepared::wanted(agents),
        Ok(ToExtension::Heartbeat) => {}
        Ok(ToExtension::AgentCredentials { agents }) => {
            with(|w| w.agent_credentials = agents);
            broadcast();
        }
        Ok(ToExtension::AgentTokenMinted { name, token, error }) => {
            with(|w| w.minted_token = Some(crate::messages::MintedToken { name, token, error }));
            broadcast();
        }
        Ok(ToExtension::Welcome(welcome)) => {
            log!("daemon {} welcomed us", welcome.daemon_version);
            let version_warning =
                pairing::version_warning(&chrome::manifest_version(), &welcome.daemon_version);
            if let Some(warning) = &version_warning {
                warn!("{warning}");
            }
            with(|w| {
                w.backoff.reset();
                w.rejection = None;
                w.take_over = false;
                w.client_endpoint = Some(welcome.client_endpoint);
                w.version_warning = version_warning;
            });
            set_status(DaemonState::Connected, None);
        }
        Ok(ToExtension::Rejected { reason }) => {
            warn!("daemon rejected us: {reason}");
            with(|w| w.rejection = Some(reason.clone()));
            set_status(DaemonState::Rejected, Some(reason));
            // The close handler schedules the retry.
            with(|w| {
                if let Some(s) = &w.socket {
                    let _ = s.ws.close();
                }
            });
        }
        Err(e) => warn!("unreadable frame from the daemon ({e})"),
    }
}

fn closed(generation: u64, code: u16, reason: &str) {
    if !is_current(generation) {
        return;
    }
    agents::forget_reports();
    // The agents went with the daemon's clients.
    prepared::drop_all();
    // The daemon's questions went with it: nothing it held may go through unasked.
    super::gestures::fail_all_held();
    let (retry_generation, delay, rejection, was_open) = with(|w| {
        w.generation += 1;
        let socket = w.socket.take();
        let was_open = socket.as_ref().is_some_and(|s| s.hello_sent);
        drop_later(socket);
        w.client_endpoint = None;
        (w.generation, w.backoff.next_delay(), w.rejection.clone(), was_open)
    });
    if was_open {
        // Every client session went with that daemon (a new one knows nothing of what they
        // enabled): start each shared tab's debugger session afresh, as when a tab's last
        // client leaves, so the next daemon's clients find Chrome in the state they expect
        // (a second `Runtime.enable` on a live session reports no execution contexts).
        let tabs: Vec<TabId> = with(|w| w.shared.keys().copied().collect());
        for tab_id in tabs {
            sharing::reset(tab_id);
        }
    }
    log!("daemon socket closed (code {code} {reason}); retrying in {delay} ms");
    let retry = format!("retrying in {:.1} s", f64::from(delay) / 1000.0);
    if let Some(reason) = rejection {
        set_status(DaemonState::Rejected, Some(format!("{reason} ({retry})")));
    } else {
        set_status(DaemonState::Disconnected, Some(format!("Not connected; {retry}.")));
    }
    redial_after(retry_generation, delay);
}

/// Dials again after `delay`, unless something else dialed meanwhile.
fn redial_after(retry_generation: u64, delay: u32) {
    spawn_local(async move {
        sleep(delay).await;
        if is_current(retry_generation) {
            connect(retry_generation).await;
        }
    });
}

/// Nothing to dial yet: says why, and asks again after the backoff's delay (the user may run
/// `tabtunnel install` meanwhile).
fn retry_later(generation: u64, problem: String) {
    let Some((retry_generation, delay)) = with(|w| {
        (w.generation == generation).then(|| {
            w.generation += 1;
            w.rejection = None;
            (w.generation, w.backoff.next_delay())
        })
    }) else {
        return;
    };
    log!("not paired: {problem}; asking again in {delay} ms");
    set_status(DaemonState::Disconnected, Some(problem));
    redial_after(retry_generation, delay);
}

/// A data frame every interval: it keeps the MV3 worker alive, where WebSocket pings do not.
async fn heartbeat(generation: u64) {
    loop {
        sleep(HEARTBEAT_INTERVAL_MS).await;
        if !is_current(generation) {
            return;
        }
        send(&FromExtension::Heartbeat);
    }
}

/// We may be inside one of the socket's own handlers; drop it after the handler returns.
fn drop_later(socket: Option<Socket>) {
    if let Some(socket) = socket {
        spawn_local(async move { drop(socket) });
    }
}
