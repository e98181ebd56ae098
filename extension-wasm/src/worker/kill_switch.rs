//! The kill switch's listener and its stop; the decisions (state, persistence, what the daemon
//! hears) are the machine's (`tabtunnel_extension_core::kill_switch`).

use tabtunnel_extension_core::{ChromeEvent, Input};
use wasm_bindgen::prelude::*;

use super::daemon;
use crate::chrome;

pub fn listen() {
    let on_command = Closure::<dyn FnMut(String)>::new(|command: String| {
        let _ = daemon::input(Input::Chrome(ChromeEvent::Command(command)));
    });
    chrome::on_command(&on_command);
    on_command.forget();
}

pub fn is_engaged() -> bool {
    daemon::kill_switch()
}
