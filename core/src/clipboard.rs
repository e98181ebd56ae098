//! The human's clipboard, which no agent reads.
//!
//! A paste in an agent's page reads the system clipboard and, on Linux, the primary selection:
//! measured through tabtunnel (headless and headful), an agent with no policy got, in a
//! textarea of its own page, what the human had copied in another tab by `Input.dispatchKeyEvent`
//! Ctrl+V, by a key carrying `commands: ["paste"]` and by Shift+Insert, and what the human had
//! only selected there by a middle click (`dispatchMouseEvent`, `emulateTouchFromMouseEvent`).
//! So every agent's paste keystrokes and middle clicks are refused, whatever its policy (params
//! it cannot read are refused before, in `params_text`, and here too): the agent types what it
//! means to enter (`Input.insertText`, its keys).
//! Cmd+V on Linux and Windows, Ctrl+V on macOS and middle presses outside Linux paste nothing;
//! they are refused all the same, the rule not knowing the platform. Not covered: a page's
//! `navigator.clipboard.readText()` runs for a site the human once let read the clipboard.

use serde_json::Value;

use crate::envelope::integral;

/// `Input.dispatchKeyEvent`'s `modifiers` bits.
const ALT: i64 = 1;
const CTRL: i64 = 2;
const META: i64 = 4;
const SHIFT: i64 = 8;

/// The rule, as the audit trail names it.
pub const RULE: &str = "the clipboard: no agent pastes the user's clipboard or selection";

/// Whether the command pastes (or, its params unreadable, might paste) the human's clipboard
/// or selection. Parses params only for the three `Input` methods that can.
pub fn refused(method: &str, params: Option<&str>) -> bool {
    let reads = |pastes: fn(&Value) -> bool| match params.map(serde_json::from_str::<Value>) {
        Some(Ok(params)) => pastes(&params),
        Some(Err(_)) => true,
        None => false,
    };
    match method {
        "Input.dispatchKeyEvent" => reads(pastes_by_key),
        "Input.dispatchMouseEvent" | "Input.emulateTouchFromMouseEvent" => reads(pastes_by_middle_click),
        _ => false,
    }
}

/// A number parameter as Chrome reads it (`2.0` is 2); 0 when absent.
fn number(params: &Value, key: &str) -> i64 {
    params[key].as_f64().and_then(integral).unwrap_or(0)
}

/// A key press that pastes: Ctrl+V or Cmd+V (with Shift: paste as plain text), Shift+Insert,
/// the Paste key, or editing commands that paste or yank (what Playwright sends for macOS
/// shortcuts; Blink's `Paste`, `PasteAndMatchStyle`, `PasteGlobalSelection`, and macOS's
/// kill ring). Key-ups and chars paste nothing: Blink pastes on the press.
fn pastes_by_key(params: &Value) -> bool {
    let str_of = |k: &str| params[k].as_str().unwrap_or_default();
    let commands = params["commands"].as_array().map(Vec::as_slice).unwrap_or_default();
    let command_pastes = commands.iter().filter_map(Value::as_str).any(|c| {
        let c = c.to_ascii_lowercase();
        c.starts_with("paste") || c.starts_with("yank")
    });
    if command_pastes {
        return true;
    }
    if !matches!(str_of("type"), "keyDown" | "rawKeyDown") {
        return false;
    }
    let modifiers = number(params, "modifiers");
    let is_key = |name: &str, dom_code: &str, virtual_code: i64| {
        str_of("key").eq_ignore_ascii_case(name)
            || str_of("code") == dom_code
            || number(params, "windowsVirtualKeyCode") == virtual_code
    };
    let v_with_command = is_key("v", "KeyV", 86) && modifiers & (CTRL | META) != 0 && modifiers & ALT == 0;
    let shift_insert = is_key("Insert", "Insert", 45) && modifiers & SHIFT != 0;
    let paste_key = str_of("key") == "Paste" || str_of("code") == "Paste";
    v_with_command || shift_insert || paste_key
}

/// A middle-button press or release: on Linux the release pastes the primary selection into
/// the text under the pointer (the press is refused too, so no button is left held).
fn pastes_by_middle_click(params: &Value) -> bool {
    let press = matches!(params["type"].as_str(), Some("mousePressed" | "mouseReleased"));
    press && params["button"].as_str() == Some("middle")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(method: &str, params: Value) -> bool {
        super::refused(method, Some(&params.to_string()))
    }

    #[test]
    fn paste_keystrokes_are_refused() {
        let key = |extra: Value| {
            let mut params = json!({"type": "rawKeyDown"});
            params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            params
        };
        for params in [
            // As puppeteer and Playwright send Ctrl+V, and by each of its names.
            key(json!({"modifiers": CTRL, "key": "v", "code": "KeyV", "windowsVirtualKeyCode": 86})),
            key(json!({"modifiers": CTRL, "key": "V"})),
            key(json!({"modifiers": CTRL, "code": "KeyV"})),
            key(json!({"modifiers": CTRL | SHIFT, "windowsVirtualKeyCode": 86})),
            key(json!({"modifiers": META, "key": "v"})),
            key(json!({"type": "keyDown", "modifiers": CTRL, "key": "v"})),
            key(json!({"modifiers": SHIFT, "key": "Insert", "code": "Insert", "windowsVirtualKeyCode": 45})),
            key(json!({"key": "Paste"})),
            // Editing commands paste whatever the key (Playwright's macOS shortcuts).
            key(json!({"key": "v", "commands": ["paste"]})),
            key(json!({"key": "v", "commands": ["selectAll", "pasteAndMatchStyle"]})),
            key(json!({"key": "y", "commands": ["yank"]})),
            json!({"type": "keyUp", "key": "x", "commands": ["Paste"]}),
            // Numbers as Chrome reads them: an integral float is the integer.
            key(json!({"modifiers": 2.0, "key": "v"})),
            key(json!({"modifiers": CTRL, "key": "x", "code": "KeyX", "windowsVirtualKeyCode": 86.0})),
        ] {
            assert!(refused("Input.dispatchKeyEvent", params.clone()), "{params}");
        }
    }

    #[test]
    fn other_keys_and_releases_go_through() {
        for params in [
            json!({"type": "rawKeyDown", "key": "v", "code": "KeyV", "windowsVirtualKeyCode": 86}),
            json!({"type": "char", "text": "v"}),
            json!({"type": "keyUp", "modifiers": CTRL, "key": "v"}),
            json!({"type": "rawKeyDown", "modifiers": CTRL, "key": "c"}),
            json!({"type": "rawKeyDown", "modifiers": CTRL, "key": "a", "commands": ["selectAll"]}),
            // AltGr+V types a character on some layouts (Ctrl and Alt together).
            json!({"type": "rawKeyDown", "modifiers": CTRL | ALT, "key": "v"}),
            json!({"type": "rawKeyDown", "key": "Insert"}),
            json!({"type": "rawKeyDown", "modifiers": SHIFT, "key": "V"}),
        ] {
            assert!(!refused("Input.dispatchKeyEvent", params.clone()), "{params}");
        }
        assert!(!refused("Input.insertText", json!({"text": "pasted by hand"})));
        assert!(!super::refused("Input.dispatchKeyEvent", None));
        // Not integral: not the key code Chrome would read (it refuses the command itself).
        assert!(!refused(
            "Input.dispatchKeyEvent",
            json!({"type": "rawKeyDown", "modifiers": 2.5, "key": "x"})
        ));
    }

    #[test]
    fn input_params_it_cannot_read_are_refused() {
        // A lone surrogate: `JSON.parse` in the extension takes it, serde_json does not.
        let lone = r#"{"type":"rawKeyDown","key":"a","keyIdentifier":"\ud800"}"#;
        assert!(super::refused("Input.dispatchKeyEvent", Some(lone)));
        assert!(super::refused("Input.emulateTouchFromMouseEvent", Some("{")));
        // Read as V8 reads it (correctly rounded): 2, so Ctrl.
        let rounded = r#"{"type":"rawKeyDown","modifiers":2.000000000000000207454,"key":"v"}"#;
        assert!(super::refused("Input.dispatchKeyEvent", Some(rounded)));
        assert!(!super::refused("Runtime.evaluate", Some(lone)), "only the methods that can paste");
    }

    #[test]
    fn middle_clicks_are_refused_and_other_buttons_go_through() {
        let mouse = |kind: &str, button: &str| json!({"type": kind, "x": 1, "y": 2, "button": button});
        assert!(refused("Input.dispatchMouseEvent", mouse("mousePressed", "middle")));
        assert!(refused("Input.dispatchMouseEvent", mouse("mouseReleased", "middle")));
        assert!(refused("Input.emulateTouchFromMouseEvent", mouse("mouseReleased", "middle")));
        assert!(!refused("Input.emulateTouchFromMouseEvent", mouse("mouseReleased", "left")));
        assert!(!refused("Input.dispatchMouseEvent", mouse("mouseMoved", "middle")));
        assert!(!refused("Input.dispatchMouseEvent", mouse("mousePressed", "left")));
        assert!(!refused("Input.dispatchMouseEvent", mouse("mousePressed", "right")));
    }

    /// Through the core, for an agent with no policy at all: refused before the extension hears
    /// of it, recorded once as denied; an ordinary key goes through.
    #[test]
    fn the_core_refuses_a_paste_of_any_agent() {
        use crate::testing::*;
        use crate::Output;
        let (mut h, session) = scout_on_its_tab(None);
        let key = |id: u64, modifiers: i64| json!({"id": id, "sessionId": session, "method": "Input.dispatchKeyEvent", "params": {"type": "rawKeyDown", "modifiers": modifiers, "key": "v", "code": "KeyV", "windowsVirtualKeyCode": 86}});
        let step = h.send(1, key(4, CTRL));
        assert!(step.commands().is_empty() && step.extension.is_empty(), "the extension heard of it");
        let reply = step.only_reply(1);
        assert!(reply["error"]["message"].as_str().unwrap().contains("which no agent reads"), "{reply}");
        let records: Vec<_> = step
            .other
            .iter()
            .filter_map(|o| match o {
                Output::Audit(r) if r.method == "Input.dispatchKeyEvent" => Some(&r.outcome),
                _ => None,
            })
            .collect();
        assert!(
            matches!(records.as_slice(), [crate::Outcome::Denied { rule }] if rule == RULE),
            "{records:?}"
        );
        let typed = h.send(1, key(5, 0));
        assert!(typed.client.is_empty(), "a plain v is not refused: {:?}", typed.client);
    }
}
