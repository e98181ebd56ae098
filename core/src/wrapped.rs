//! Commands that carry other commands past every rule, which no agent sends.
//!
//! `Target.sendMessageToTarget` (the non-flat protocol) carries a whole command as a string in
//! `params.message` to a session of its own, and its answers and events come back as strings in
//! `Target.receivedMessageFromTarget`; `Target.exposeDevToolsProtocol` hands a page's script the
//! protocol itself. Every rule of the core reads the method and params of the command it is
//! given, and the answer and events of that session (cookies hidden, read-only explained), so a
//! wrapped command would pass all of them. No supported client sends either: puppeteer,
//! Playwright and chrome-devtools-mcp use flat sessions (`sessionId` on the frame; none in
//! the traces of all three), so nothing they do needs a non-flat session. So both are refused on every session, whatever the agent's policy,
//! rather than unwrapped: guarding them would need every rule twice, on commands and on
//! answers.

/// The rule, as errors and the audit trail name it.
pub const RULE: &str = "wrapped commands: no agent sends a command inside another or hands a page the protocol; clients use flat sessions";

/// Whether `method` carries other commands (or gives a page a way to send them).
pub fn refused(method: &str) -> bool {
    matches!(method, "Target.sendMessageToTarget" | "Target.exposeDevToolsProtocol")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;
    use crate::Output;
    use serde_json::{json, Value};

    /// A command of each rule family, as an agent would wrap it: each one, sent flat, is the
    /// rule's to refuse, hide or ask about.
    fn inner_commands() -> Vec<Value> {
        let paste = json!({"type": "keyDown", "key": "v", "code": "KeyV", "modifiers": 2, "windowsVirtualKeyCode": 86});
        vec![
            // clipboard
            json!({"method": "Input.dispatchKeyEvent", "params": paste}),
            // cookies, cookie writes, site storage
            json!({"method": "Network.getAllCookies"}),
            json!({"method": "Network.setCookie", "params": {"name": "k", "value": "v", "url": "https://bank.test/"}}),
            json!({"method": "DOMStorage.getDOMStorageItems", "params": {"storageId": {"securityOrigin": "https://bank.test", "isLocalStorage": true}}}),
            // deny_methods, read-only, and the gesture guard's input
            json!({"method": "Runtime.evaluate", "params": {"expression": "document.body.remove()"}}),
            json!({"method": "Input.dispatchMouseEvent", "params": {"type": "mousePressed", "x": 5, "y": 5, "button": "left", "clickCount": 1}}),
            // navigations, frames, emulation, local files
            json!({"method": "Page.navigate", "params": {"url": "https://evil.test/"}}),
            json!({"method": "Page.navigate", "params": {"url": "file:///etc/hostname"}}),
            json!({"method": "Emulation.setFocusEmulationEnabled", "params": {"enabled": false}}),
            json!({"method": "DOM.setFileInputFiles", "params": {"files": ["/etc/hostname"], "nodeId": 5}}),
        ]
    }

    fn wrapped(session: &str, inner: &Value, depth: usize) -> Value {
        let mut message = json!({"id": 77}).as_object().unwrap().clone();
        message.extend(inner.as_object().unwrap().clone());
        let mut message = Value::Object(message);
        for _ in 0..depth {
            message = json!({"id": 78, "method": "Target.sendMessageToTarget", "params": {"sessionId": "S", "message": message.to_string()}});
        }
        let mut outer = message;
        outer["id"] = json!(9);
        outer["sessionId"] = json!(session);
        outer
    }

    /// Refused before the extension hears of it, with one error naming the rule, and recorded
    /// as denied by it.
    fn assert_refused(h: &mut Harness, frame: Value) {
        let method = frame["method"].as_str().unwrap().to_owned();
        let step = h.send(1, frame.clone());
        assert!(step.extension.is_empty(), "{frame} reached the extension: {:?}", step.extension);
        let reply = step.only_reply(1);
        assert!(reply["error"]["message"].as_str().unwrap().contains(RULE), "{reply}");
        let denied = step.other.iter().any(|o| {
            matches!(o, Output::Audit(r) if r.method == method
                && matches!(&r.outcome, crate::Outcome::Denied { rule } if rule == RULE))
        });
        assert!(denied, "{:?}", step.other);
    }

    /// Every rule family's command, wrapped once or nested, on the page's, a frame's and the
    /// browser's session, under no policy, an open one and a strict one: none reaches the tab.
    #[test]
    fn no_wrapped_command_reaches_the_tab() {
        let strict = |preset: &str| {
            json!({
                "preset": preset,
                "deny_methods": ["Network.getAllCookies"],
                "allow_origins": ["https://ok.test"],
                "gesture_origins": ["https://ok.test"],
            })
        };
        for section in [None, Some(json!({})), Some(strict("read-only")), Some(strict("no-cookies"))] {
            let (mut h, page) = scout_on_its_tab(section.clone());
            let auto = json!({"autoAttach": true, "flatten": true, "waitForDebuggerOnStart": false});
            h.send(1, json!({"id": 1, "sessionId": page, "method": "Target.setAutoAttach", "params": auto}));
            let frame = r#"{"sessionId":"C1","targetInfo":{"targetId":"F1","type":"iframe","url":"https://ok.test/f"},"waitingForDebugger":false}"#;
            h.ext(event(1, None, "Target.attachedToTarget", frame));
            h.drain();
            // A frame's session first: the one that forwarded it to the tab before.
            for session in ["C1", page.as_str(), ""] {
                for inner in inner_commands() {
                    for depth in [1, 3] {
                        assert_refused(&mut h, wrapped(session, &inner, depth));
                    }
                }
                let expose = json!({"id": 9, "sessionId": session, "method": "Target.exposeDevToolsProtocol", "params": {"targetId": "F1", "bindingName": "cdp"}});
                assert_refused(&mut h, expose);
            }
        }
    }

    /// A message that is no command, or no text at all: the same refusal, never a panic.
    #[test]
    fn malformed_wrappers_get_an_error() {
        let (mut h, page) = scout_on_its_tab(None);
        for params in [
            json!({"sessionId": "S", "message": "{"}),
            json!({"sessionId": "S", "message": 7}),
            json!({"sessionId": "S", "message": "{\"method\": [1]}"}),
            json!({"message": "\u{0}"}),
            json!({}),
        ] {
            let frame =
                json!({"id": 9, "sessionId": page, "method": "Target.sendMessageToTarget", "params": params});
            assert_refused(&mut h, frame);
        }
        let frame = json!({"id": 9, "sessionId": page, "method": "Target.sendMessageToTarget"});
        assert_refused(&mut h, frame);
    }

    /// What flat clients send goes on: the rule is about the wrapper, not the Target domain.
    #[test]
    fn flat_clients_target_commands_go_on() {
        for method in
            ["Target.setAutoAttach", "Target.getTargets", "Target.attachToTarget", "Runtime.evaluate"]
        {
            assert!(!refused(method), "{method}");
        }
    }
}
