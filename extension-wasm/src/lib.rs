//! The tabtunnel extension's logic: the service worker (daemon socket, `chrome.debugger`, shared
//! tabs) and the side panel UI. `extension/sw.js` and `extension/sidepanel.js` are only shims
//! that load this module and call [`start_service_worker`] / [`start_side_panel`].

#[macro_use]
mod js;
mod browser_info;
mod chrome;
mod messages;
mod panel;
mod restricted;
mod worker;

use wasm_bindgen::prelude::*;

/// Entry point of the service worker. Must run in the worker's first turn (after `initSync`):
/// it registers every chrome.* listener synchronously, then starts the async work.
#[wasm_bindgen]
pub fn start_service_worker() {
    console_error_panic_hook::set_once();
    worker::start();
}

/// Entry point of the side panel page.
#[wasm_bindgen]
pub fn start_side_panel() {
    console_error_panic_hook::set_once();
    panel::start();
}
