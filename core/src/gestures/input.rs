//! Which of an agent's `Input` commands are gestures the guard looks at before they reach the
//! page: a press (mouse, touch, tap), Enter and Space key presses, and text with a line break
//! (Chrome submits a single-line field's form for it). Measured in Chromium 156
//! (`tests/bench/gesture-routes.mjs`): a form is submitted by `keyDown` with text `\r`, by
//! `char` `\r` after a bare `rawKeyDown`, and by `Input.insertText` with `\n`; a button is
//! clicked by Space's `keyUp` after its `keyDown`, so holding the `keyDown` holds the click.
//! Moves, releases and other keys pass at once.

use super::rule::Gesture;
use serde_json::Value;

/// The gesture an `Input` command makes, if any. Parses params only for `Input` methods.
pub fn gesture_of(method: &str, params: Option<&str>) -> Option<Gesture> {
    if !method.starts_with("Input.") {
        return None;
    }
    let params: Value = params.and_then(|p| serde_json::from_str(p).ok()).unwrap_or(Value::Null);
    let str_of = |key: &str| params[key].as_str().unwrap_or_default();
    let point = |p: &Value| (p["x"].as_f64().unwrap_or(0.0), p["y"].as_f64().unwrap_or(0.0));
    match method {
        "Input.dispatchMouseEvent" | "Input.emulateTouchFromMouseEvent"
            if str_of("type") == "mousePressed" =>
        {
            let (x, y) = point(&params);
            Some(Gesture::Press { x, y })
        }
        "Input.dispatchTouchEvent" if str_of("type") == "touchStart" => {
            let (x, y) = point(&params["touchPoints"][0]);
            Some(Gesture::Tap { x, y })
        }
        "Input.synthesizeTapGesture" => {
            let (x, y) = point(&params);
            Some(Gesture::Tap { x, y })
        }
        "Input.dispatchKeyEvent" if matches!(str_of("type"), "keyDown" | "rawKeyDown" | "char") => {
            key(&params)
        }
        "Input.insertText" | "Input.imeSetComposition" if str_of("text").contains(['\r', '\n']) => {
            Some(Gesture::LineBreak)
        }
        _ => None,
    }
}

fn key(params: &Value) -> Option<Gesture> {
    let str_of = |k: &str| params[k].as_str().unwrap_or_default();
    let code = |k: &str| params[k].as_i64().unwrap_or(0);
    let text = format!("{}{}", str_of("text"), str_of("unmodifiedText"));
    let commands = params["commands"].as_array().map(Vec::as_slice).unwrap_or_default();
    let enter = str_of("key") == "Enter"
        || matches!(str_of("code"), "Enter" | "NumpadEnter")
        || code("windowsVirtualKeyCode") == 13
        || code("nativeVirtualKeyCode") == 13
        || text.contains(['\r', '\n'])
        || commands.iter().any(|c| {
            matches!(c.as_str(), Some("insertNewline" | "insertLineBreak" | "insertParagraphSeparator"))
        });
    if enter {
        return Some(Gesture::Enter);
    }
    let space = str_of("key") == " "
        || str_of("code") == "Space"
        || code("windowsVirtualKeyCode") == 32
        || code("nativeVirtualKeyCode") == 32
        || text == " ";
    space.then_some(Gesture::Space)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(method: &str, params: &str) -> Option<Gesture> {
        gesture_of(method, Some(params))
    }

    #[test]
    fn presses_taps_and_touches_are_gestures_at_their_point() {
        assert_eq!(
            of(
                "Input.dispatchMouseEvent",
                r#"{"type":"mousePressed","x":10.5,"y":20,"button":"left","clickCount":1}"#
            ),
            Some(Gesture::Press { x: 10.5, y: 20.0 })
        );
        assert_eq!(of("Input.dispatchMouseEvent", r#"{"type":"mouseReleased","x":1,"y":2}"#), None);
        assert_eq!(of("Input.dispatchMouseEvent", r#"{"type":"mouseMoved","x":1,"y":2}"#), None);
        assert_eq!(
            of("Input.emulateTouchFromMouseEvent", r#"{"type":"mousePressed","x":1,"y":2,"button":"left"}"#),
            Some(Gesture::Press { x: 1.0, y: 2.0 })
        );
        assert_eq!(
            of("Input.dispatchTouchEvent", r#"{"type":"touchStart","touchPoints":[{"x":3,"y":4}]}"#),
            Some(Gesture::Tap { x: 3.0, y: 4.0 })
        );
        assert_eq!(of("Input.dispatchTouchEvent", r#"{"type":"touchEnd","touchPoints":[]}"#), None);
        assert_eq!(
            of("Input.synthesizeTapGesture", r#"{"x":5,"y":6}"#),
            Some(Gesture::Tap { x: 5.0, y: 6.0 })
        );
    }

    #[test]
    fn enter_however_a_client_spells_it() {
        // puppeteer and chrome-devtools-mcp: keyDown with text; Playwright: keyDown with text too.
        for params in [
            r#"{"type":"keyDown","key":"Enter","code":"Enter","windowsVirtualKeyCode":13,"text":"\r"}"#,
            r#"{"type":"rawKeyDown","windowsVirtualKeyCode":13}"#,
            r#"{"type":"char","text":"\r"}"#,
            r#"{"type":"keyDown","code":"NumpadEnter"}"#,
            r#"{"type":"keyDown","key":"x","commands":["insertNewline"]}"#,
        ] {
            assert_eq!(of("Input.dispatchKeyEvent", params), Some(Gesture::Enter), "{params}");
        }
        assert_eq!(of("Input.dispatchKeyEvent", r#"{"type":"keyUp","key":"Enter"}"#), None);
        assert_eq!(of("Input.insertText", r#"{"text":"line\nbreak"}"#), Some(Gesture::LineBreak));
        assert_eq!(of("Input.insertText", r#"{"text":"Grace"}"#), None);
    }

    #[test]
    fn space_and_nothing_else() {
        assert_eq!(
            of("Input.dispatchKeyEvent", r#"{"type":"keyDown","key":" ","code":"Space","text":" "}"#),
            Some(Gesture::Space)
        );
        assert_eq!(of("Input.dispatchKeyEvent", r#"{"type":"keyUp","key":" ","code":"Space"}"#), None);
        assert_eq!(of("Input.dispatchKeyEvent", r#"{"type":"keyDown","key":"a","text":"a"}"#), None);
        assert_eq!(of("Input.dispatchKeyEvent", r#"{"type":"keyDown","key":"Tab"}"#), None);
        assert_eq!(of("Runtime.evaluate", r#"{"expression":"1"}"#), None);
        assert_eq!(gesture_of("Input.dispatchMouseEvent", None), None);
        assert_eq!(of("Input.dispatchMouseEvent", "not json"), None);
    }
}
