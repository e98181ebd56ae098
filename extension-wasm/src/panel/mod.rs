//! The side panel: renders the worker's state and turns clicks into [`PanelRequest`]s. It keeps
//! no state of its own beyond which tab is active and the last error to show.

mod view;

use std::cell::RefCell;

use wasm_bindgen::{prelude::*, JsCast};
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::js::{from_js, to_js};
use crate::messages::{PanelReply, PanelRequest, PanelState, WorkerBroadcast};
use view::{ActiveTab, View};

struct Panel {
    view: View,
    state: PanelState,
    /// The fingerprint of the secrets in `state`, as the worker's last answer gave them.
    secrets: u64,
    active: Option<ActiveTab>,
    notice: Option<String>,
}

thread_local! {
    static PANEL: RefCell<Option<Panel>> = const { RefCell::new(None) };
}

/// Changes the panel and re-renders it.
fn update(f: impl FnOnce(&mut Panel)) {
    PANEL.with_borrow_mut(|panel| {
        if let Some(p) = panel {
            f(p);
            p.view.render(&p.state, p.active.as_ref(), p.notice.as_deref());
            p.view.show_daemon_url(p.state.daemon_url.as_deref());
        }
    });
}

fn read<R>(f: impl FnOnce(&Panel) -> R) -> Option<R> {
    PANEL.with_borrow(|panel| panel.as_ref().map(f))
}

pub fn start() {
    let doc = web_sys::window().and_then(|w| w.document()).expect("the panel is a page");
    let view = View::build(doc);
    wire_dom(&view);
    PANEL.set(Some(Panel { view, state: PanelState::default(), secrets: 0, active: None, notice: None }));
    update(|_| {});
    listen_to_chrome();
    open_port();
    // "3 s ago" and grace countdowns move on their own.
    spawn_local(async {
        loop {
            crate::js::sleep(1000).await;
            read(|p| p.view.show_times(js_sys::Date::now()));
        }
    });
    spawn_local(async {
        request(PanelRequest::GetState).await;
        refresh_active_tab().await;
    });
}

/// Sends a request to the worker and shows its answer. The notice says how the human's last
/// request went: a re-read of the state (after a broadcast) leaves it as it is, or a refusal
/// would vanish as soon as it showed.
async fn request(request: PanelRequest) {
    let rereads_state = matches!(request, PanelRequest::GetState);
    let reply = chrome::send_message(&to_js(&request)).await;
    update(|p| match reply.map(|v| from_js::<PanelReply>(&v)) {
        Ok(Some(reply)) => {
            p.secrets = reply.state.secrets_fingerprint();
            p.state = reply.state;
            if reply.error.is_some() || !rereads_state {
                p.notice = reply.error;
            }
        }
        Ok(None) => p.notice = Some("The service worker gave no answer.".into()),
        Err(e) => p.notice = Some(format!("The service worker did not answer: {e}")),
    });
}

fn on(target: &web_sys::EventTarget, event: &str, f: impl FnMut(web_sys::Event) + 'static) {
    let cb = Closure::<dyn FnMut(web_sys::Event)>::new(f);
    target.add_event_listener_with_callback(event, cb.as_ref().unchecked_ref()).expect("addEventListener");
    cb.forget(); // lives as long as the page
}

fn wire_dom(view: &View) {
    on(&view.toggle, "change", |_| {
        let Some((Some(tab_id), checked)) =
            read(|p| (p.active.as_ref().map(|t| t.id), p.view.toggle.checked()))
        else {
            return;
        };
        update(|p| p.notice = None);
        spawn_local(request(if checked {
            PanelRequest::Share { tab_id }
        } else {
            PanelRequest::Unshare { tab_id }
        }));
    });

    // One listener for every row's "Stop" button.
    on(&view.list, "click", |event| {
        let tab_id = event
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("button.unshare").ok().flatten())
            .and_then(|button| button.get_attribute("data-tab-id"))
            .and_then(|id| id.parse().ok());
        if let Some(tab_id) = tab_id {
            spawn_local(request(PanelRequest::Unshare { tab_id }));
        }
    });

    on(&view.hand_button, "click", |_| {
        let Some((Some(tab_id), agent)) =
            read(|p| (p.active.as_ref().map(|t| t.id), p.view.hand_input.value()))
        else {
            return;
        };
        update(|p| p.notice = None);
        spawn_local(request(PanelRequest::HandTab { tab_id, agent: agent.trim().to_owned() }));
    });

    on(&view.take_back, "click", |_| {
        if let Some(Some(tab_id)) =
            read(|p| p.view.take_back.get_attribute("data-tab-id").and_then(|id| id.parse().ok()))
        {
            spawn_local(request(PanelRequest::TakeBack { tab_id }));
        }
    });

    // One listener for every agent's buttons.
    on(&view.agents, "click", |event| {
        let Some(button) = clicked_button(&event) else { return };
        if let Some(tab_id) = button.get_attribute("data-picture-tab").and_then(|id| id.parse().ok()) {
            return spawn_local(request(PanelRequest::BringForward { tab_id }));
        }
        if let Some(tab_id) = button.get_attribute("data-tab-id").and_then(|id| id.parse().ok()) {
            return spawn_local(request(PanelRequest::TakeBack { tab_id }));
        }
        let (Some(action), Some(agent)) =
            (button.get_attribute("data-action"), button.get_attribute("data-agent"))
        else {
            return;
        };
        let close_tabs = action == "disconnect-close";
        spawn_local(request(PanelRequest::DisconnectAgent { agent, close_tabs }));
    });

    on(&view.requests, "click", |event| {
        let Some(button) = clicked_button(&event) else { return };
        let Some(answer) = button.get_attribute("data-answer") else { return };
        let Some(id) = request_id_of(&button) else { return };
        let tab_id = match answer.as_str() {
            "give" => match read(|p| p.active.as_ref().map(|t| t.id)).flatten() {
                Some(tab_id) => Some(tab_id),
                None => return,
            },
            _ => None,
        };
        spawn_local(request(PanelRequest::AnswerHandover { id, tab_id }));
    });

    on(&view.kill_switch, "click", |_| {
        if let Some(engaged) = read(|p| p.state.kill_switch) {
            spawn_local(request(PanelRequest::KillSwitch { engaged: !engaged }));
        }
    });

    on(&view.approvals, "click", |event| {
        let Some(button) = clicked_button(&event) else { return };
        let answer = match button.get_attribute("data-answer").as_deref() {
            Some("allow") => tabtunnel_wire::ApprovalAnswer::Allow,
            Some("always") => tabtunnel_wire::ApprovalAnswer::Always,
            Some("deny") => tabtunnel_wire::ApprovalAnswer::Deny,
            Some("for") => match button.get_attribute("data-ms").and_then(|ms| ms.parse().ok()) {
                Some(ms) => tabtunnel_wire::ApprovalAnswer::AllowFor { ms },
                None => return,
            },
            _ => return,
        };
        if let Some(id) = request_id_of(&button) {
            spawn_local(request(PanelRequest::AnswerApproval { id, answer }));
        }
    });

    on(&view.standing, "click", |event| {
        let Some(button) = clicked_button(&event) else { return };
        if let Some(id) = button.get_attribute("data-standing-id").and_then(|id| id.parse().ok()) {
            spawn_local(request(PanelRequest::TakeBackStanding { id }));
        }
    });

    on(&view.use_this_browser, "click", |_| spawn_local(request(PanelRequest::UseThisBrowser)));

    on(&view.mint, "click", |_| {
        if let Some(name) = read(|p| p.view.new_agent_name.value()) {
            read(|p| p.view.new_agent_name.set_value(""));
            spawn_local(request(PanelRequest::MintAgentToken { name }));
        }
    });

    on(&view.agent_tokens, "click", |event| {
        let Some(button) = clicked_button(&event) else { return };
        if let Some(name) = button.get_attribute("data-agent") {
            spawn_local(request(PanelRequest::RevokeAgentToken { name }));
        }
    });

    on(&view.dismiss_minted, "click", |_| spawn_local(request(PanelRequest::DismissMintedToken)));

    on(&view.copy_minted, "click", |_| {
        let Some(Some(token)) = read(|p| p.state.minted_token.as_ref().and_then(|m| m.token.clone())) else {
            return;
        };
        copy_text(token, |p| &p.view.copy_minted);
    });

    on(&view.save, "click", |_| {
        if let Some(url) = read(|p| p.view.url_input.value()) {
            spawn_local(request(PanelRequest::SetDaemonUrl { url }));
        }
    });

    on(&view.copy, "click", |_| {
        let Some(Some(endpoint)) = read(|p| p.state.client_endpoint.clone()) else {
            return;
        };
        copy_text(endpoint, |p| &p.view.copy);
    });
}

/// Copies `text` to the clipboard, saying so on `button` for a moment.
fn copy_text(text: String, button: fn(&Panel) -> &web_sys::HtmlButtonElement) {
    let Some(window) = web_sys::window() else { return };
    let promise = window.navigator().clipboard().write_text(&text);
    spawn_local(async move {
        let copied = wasm_bindgen_futures::JsFuture::from(promise).await.is_ok();
        read(|p| button(p).set_text_content(Some(if copied { "Copied" } else { "Select and copy" })));
        crate::js::sleep(1500).await;
        read(|p| button(p).set_text_content(Some("Copy")));
    });
}

/// The `data-request-id` of the request a button belongs to.
fn request_id_of(button: &web_sys::Element) -> Option<u64> {
    button.closest("[data-request-id]").ok()??.get_attribute("data-request-id")?.parse().ok()
}

/// The button an event happened in, if any.
fn clicked_button(event: &web_sys::Event) -> Option<web_sys::Element> {
    event.target()?.dyn_into::<web_sys::Element>().ok()?.closest("button").ok().flatten()
}

fn listen_to_chrome() {
    let on_message = Closure::<dyn FnMut(JsValue, JsValue, js_sys::Function) -> bool>::new(
        |message: JsValue, _sender: JsValue, _respond: js_sys::Function| {
            if let Some(WorkerBroadcast::Picture { agent, tab_id, src }) = from_js(&message) {
                read(|p| p.view.show_picture(&agent, tab_id, &src, &p.state));
            } else if let Some(WorkerBroadcast::State { state, secrets }) = from_js(&message) {
                let human_window_changed =
                    read(|p| p.state.human_window != state.human_window).unwrap_or(false);
                let secrets_changed = read(|p| p.secrets != secrets).unwrap_or(true);
                update(|p| {
                    let old = std::mem::replace(&mut p.state, *state);
                    p.state.keep_secrets_of(&old);
                });
                if secrets_changed {
                    spawn_local(request(PanelRequest::GetState));
                }
                if human_window_changed {
                    spawn_local(refresh_active_tab());
                }
            }
            false
        },
    );
    chrome::on_runtime_message(&on_message);
    on_message.forget();

    let on_activated = Closure::<dyn FnMut(JsValue)>::new(|_| spawn_local(refresh_active_tab()));
    chrome::on_tab_activated(&on_activated);
    on_activated.forget();

    let on_updated =
        Closure::<dyn FnMut(i32, JsValue, JsValue)>::new(|_, _, _| spawn_local(refresh_active_tab()));
    chrome::on_tab_updated(&on_updated);
    on_updated.forget();

    // Matters when the panel is a popup window: "active" follows the last focused normal window.
    let on_focus = Closure::<dyn FnMut(i32)>::new(|_| spawn_local(refresh_active_tab()));
    chrome::on_window_focus_changed(&on_focus);
    on_focus.forget();
}

/// A port to the worker, open while this panel is: it takes pictures of agents' tabs only
/// then. Opened again when the worker restarts (which closes it).
fn open_port() {
    let port = chrome::runtime_connect(&to_js(&serde_json::json!({ "name": crate::messages::PANEL_PORT })));
    let reopen = Closure::once_into_js(|| {
        spawn_local(async {
            crate::js::sleep(500).await;
            open_port();
        })
    });
    port.on_disconnect().add_listener(reopen.unchecked_ref());
}

async fn refresh_active_tab() {
    let active = active_tab().await;
    update(|p| {
        if p.active.as_ref().map(|t| t.id) != active.as_ref().map(|t| t.id) {
            p.notice = None; // it was about another tab
        }
        p.active = active;
    });
}

/// The panel's own window's active tab when that is a normal window; otherwise (the panel was
/// opened as a popup) the active tab of the window the human last worked in (the worker knows
/// which windows are agents'), or of the last focused normal window.
async fn active_tab() -> Option<ActiveTab> {
    let window_id = match chrome::current_window().await {
        Ok(w) if w.kind == "normal" => w.id?,
        _ => match read(|p| p.state.human_window).flatten() {
            Some(id) => id,
            None => chrome::last_focused_normal_window().await.ok()?.id?,
        },
    };
    let tab = chrome::active_tab(window_id).await.ok()??;
    Some(ActiveTab { id: tab.id?, title: tab.title, url: tab.url })
}
