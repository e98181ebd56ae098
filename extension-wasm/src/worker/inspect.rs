//! The gesture guard's reads of a page ([`BrowserOp::Inspect`]: what the page shows where the
//! agent acts) and resent writes ([`BrowserOp::Resend`]: a write the guard answered at once,
//! sent again from its frame as it was): the steps of `tabtunnel_extension_core::inspect` run
//! against Chrome, their outcomes fed back.

use serde_json::Value;
use tabtunnel_extension_core::inspect::{Done, Page, Reads, Step};
use tabtunnel_extension_core::OpId;
use tabtunnel_wire::{BrowserOp, RequestId};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::browser_ops;
use super::gestures::{random, wait_for_tab, FACTS_JS};
use super::state::with;
use crate::chrome;
use crate::js::{error_message, from_js, to_js};

/// An `Inspect` or `Resend`, answered on connection `generation`.
pub fn begin(generation: u64, id: RequestId, op: BrowserOp) {
    let steps = with(|w| w.page_reads.begin(generation, id, op));
    run(steps);
}

/// The daemon is gone: the reads and resends under way send nothing more.
pub fn connection_lost() {
    with(|w| w.page_reads.connection_lost());
}

/// Runs `f` on the machine, then the steps it gives.
fn drive(f: impl FnOnce(&mut Reads, &mut Page) -> Vec<Step>) {
    let kill_switch = super::kill_switch::is_engaged();
    let steps = with(|w| {
        let mut random = random;
        let mut page = Page {
            sharing: &w.shared,
            gestures: &mut w.gestures,
            kill_switch,
            random: &mut random,
            facts_js: FACTS_JS,
            resend_js: RESEND_JS,
        };
        f(&mut w.page_reads, &mut page)
    });
    run(steps);
}

fn completed(op: OpId, done: Done) {
    drive(|m, page| m.completed(op, done, page));
}

fn run(steps: Vec<Step>) {
    for step in steps {
        match step {
            Step::Turn { op, tab_id } => spawn_local(async move {
                wait_for_tab(tab_id).await;
                completed(op, Done::Turn);
            }),
            Step::Send { op, tab_id, session, method, params } => spawn_local(async move {
                let params = if params.is_null() { JsValue::UNDEFINED } else { to_js(&params) };
                let sent = chrome::send_command(tab_id, session.as_deref(), method, &params)
                    .await
                    .map(|answer| from_js::<Value>(&answer).unwrap_or(Value::Null))
                    .map_err(|e| error_message(&e));
                completed(op, Done::Sent(sent));
            }),
            // Nobody waits for it.
            Step::SendUnanswered { tab_id, session, method, params } => spawn_local(async move {
                let _ = chrome::send_command(tab_id, session.as_deref(), method, &to_js(&params)).await;
            }),
            Step::Answer { generation, id, result } => browser_ops::answer(generation, id, result),
        }
    }
}

/// A write sent again from its frame, by our world's own prototypes (the page's scripts can
/// neither intercept nor change it, and see no submit event, as with `form.submit()`).
const RESEND_JS: &str = "function (url, method, asForm, headers, body, referrer) {
  if (asForm) {
    const form = document.createElement('form');
    form.method = method.toLowerCase();
    form.action = url;
    form.acceptCharset = 'UTF-8';
    form.style.display = 'none';
    for (const [name, value] of new URLSearchParams(body || '')) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      input.value = value;
      form.append(input);
    }
    (document.body || document.documentElement).append(form);
    HTMLFormElement.prototype.submit.call(form);
    return;
  }
  const init = { method, headers, credentials: 'include', keepalive: false };
  if (body !== null && body !== undefined && method !== 'GET' && method !== 'HEAD') init.body = body;
  if (referrer) init.referrer = referrer;
  fetch(url, init).catch(() => {});
}";
