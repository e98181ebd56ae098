//! Which of an agent's `Input` commands are gestures the guard looks at before they reach the
//! page: a press (mouse, touch, tap), a drop, Enter and Space key presses, and text with a line
//! break (Chrome submits a single-line field's form for it). Measured in Chromium 156
//! (`tests/bench/gesture-routes.mjs`): a form is submitted by `keyDown` with text `\r`, by
//! `char` `\r` after a bare `rawKeyDown`, and by `Input.insertText` with `\n`; a button is
//! clicked by Space's `keyUp` after its `keyDown`, so holding the `keyDown` holds the click.
//! A drop acts where the pointer lets go: `Input.dispatchDragEvent` `drop` (how Playwright and
//! puppeteer drag), and the release of a mouse or a touch that moved since it went down (a
//! page's own drag and drop, native or scripted, drops there; a "Drop here to delete" zone is
//! such a target). A release where its press was is the click the press already was, unless
//! the pointer went elsewhere meanwhile: then it drops where it was last seen (a pointer-event
//! drag library drops on what the last move was over, wherever the release lands). Each finger
//! of a touch is followed by its id: one that went further than a tap drops where it lets go
//! (the touch's end, or a move that no longer lists it), while another may rest.
//! Moves, other releases and other keys pass at once.

use super::rule::Gesture;
use serde_json::Value;

/// How far (CSS pixels) a pointer may move between going down and letting go and still be a
/// click; Chrome starts a drag only past a few pixels too.
const CLICK_SLOP: f64 = 2.0;

/// Where a pointer went down, where it is now, and whether it went past the click's slop
/// meanwhile, while it is down: per client session.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Track {
    at: (f64, f64),
    now: (f64, f64),
    travelled: bool,
}

impl Track {
    fn at(point: (f64, f64)) -> Self {
        Track { at: point, now: point, travelled: false }
    }

    fn moved_to(self, now: (f64, f64)) -> Self {
        Track { now, travelled: self.travelled || moved(self.at, now), ..self }
    }
}

fn moved(from: (f64, f64), to: (f64, f64)) -> bool {
    (from.0 - to.0).abs().max((from.1 - to.1).abs()) > CLICK_SLOP
}

/// The pointers down in one client session: the mouse, or each finger by its touch point id.
#[derive(Debug, Clone, PartialEq)]
pub struct PointerDown {
    tracks: Vec<(i64, Track)>,
}

/// The mouse's id among the tracks.
const MOUSE: i64 = -1;

impl PointerDown {
    fn at(point: (f64, f64)) -> Self {
        PointerDown { tracks: vec![(MOUSE, Track::at(point))] }
    }

    fn mouse(&self) -> Option<Track> {
        self.tracks.iter().find(|(id, _)| *id == MOUSE).map(|(_, t)| *t)
    }
}

/// What an `Input` command does: the gesture it makes, if any, and the pointer's state after
/// it (`down` the state before it).
pub fn read(
    method: &str,
    params: Option<&str>,
    down: Option<PointerDown>,
) -> (Option<Gesture>, Option<PointerDown>) {
    if !method.starts_with("Input.") {
        return (None, down);
    }
    let params: Value = params.and_then(|p| serde_json::from_str(p).ok()).unwrap_or(Value::Null);
    let str_of = |key: &str| params[key].as_str().unwrap_or_default();
    let point = |p: &Value| (p["x"].as_f64().unwrap_or(0.0), p["y"].as_f64().unwrap_or(0.0));
    let drop_at = |(x, y): (f64, f64)| Some(Gesture::Drop { x, y });
    // A finger that went further than a tap lets go where it last was (a page's own drag follows
    // its touch, whichever finger it is).
    let let_go =
        |tracks: &[(i64, Track)]| tracks.iter().find(|(_, t)| t.travelled).and_then(|(_, t)| drop_at(t.now));
    let fingers = || -> Vec<(i64, (f64, f64))> {
        let points = params["touchPoints"].as_array().map(Vec::as_slice).unwrap_or_default();
        points.iter().enumerate().map(|(i, p)| (p["id"].as_i64().unwrap_or(i as i64), point(p))).collect()
    };
    match (method, str_of("type")) {
        ("Input.dispatchMouseEvent" | "Input.emulateTouchFromMouseEvent", "mousePressed") => {
            let (x, y) = point(&params);
            (Some(Gesture::Press { x, y }), Some(PointerDown::at((x, y))))
        }
        ("Input.dispatchMouseEvent" | "Input.emulateTouchFromMouseEvent", "mouseMoved") => {
            let here = point(&params);
            let down = down.map(|d| match d.mouse() {
                Some(t) => PointerDown { tracks: vec![(MOUSE, t.moved_to(here))] },
                None => d,
            });
            (None, down)
        }
        // A release with no press on record acts where it is too (a `pointerup` handler).
        ("Input.dispatchMouseEvent" | "Input.emulateTouchFromMouseEvent", "mouseReleased") => {
            let here = point(&params);
            let gesture = match down.as_ref().and_then(PointerDown::mouse) {
                None => drop_at(here),
                Some(d) if moved(d.at, here) => drop_at(here),
                Some(d) if d.travelled => drop_at(d.now),
                Some(_) => None,
            };
            (gesture, None)
        }
        // The first finger down taps; another joins the tracks.
        ("Input.dispatchTouchEvent", "touchStart") => {
            let mut tracks = down.map(|d| d.tracks).unwrap_or_default();
            tracks.retain(|(id, _)| *id != MOUSE);
            let first = tracks.is_empty();
            for (id, at) in fingers() {
                if !tracks.iter().any(|(known, _)| *known == id) {
                    tracks.push((id, Track::at(at)));
                }
            }
            let tap =
                first.then(|| tracks.first().map(|(_, t)| Gesture::Tap { x: t.at.0, y: t.at.1 })).flatten();
            (tap, Some(PointerDown { tracks }))
        }
        // Fingers listed move; one no longer listed has let go.
        ("Input.dispatchTouchEvent", "touchMove") => {
            let Some(down) = down else { return (None, None) };
            let listed = fingers();
            let (kept, gone): (Vec<_>, Vec<_>) =
                down.tracks.into_iter().partition(|(id, _)| listed.iter().any(|(l, _)| l == id));
            let tracks: Vec<_> = kept
                .into_iter()
                .map(|(id, t)| {
                    let here = listed.iter().find(|(l, _)| *l == id).map_or(t.now, |(_, p)| *p);
                    (id, t.moved_to(here))
                })
                .collect();
            (let_go(&gone), (!tracks.is_empty()).then_some(PointerDown { tracks }))
        }
        // A touch end lets every finger go: where each let go is where it last was.
        ("Input.dispatchTouchEvent", "touchEnd") => (down.and_then(|d| let_go(&d.tracks)), None),
        ("Input.dispatchTouchEvent", "touchCancel") => (None, None),
        // A mouse release right after (puppeteer's `drop`) is the drop's own end, no second one.
        ("Input.dispatchDragEvent", "drop") => {
            let here = point(&params);
            (drop_at(here), Some(PointerDown::at(here)))
        }
        ("Input.synthesizeTapGesture", _) => {
            let (x, y) = point(&params);
            (Some(Gesture::Tap { x, y }), down)
        }
        ("Input.dispatchKeyEvent", "keyDown" | "rawKeyDown" | "char") => (key(&params), down),
        ("Input.insertText" | "Input.imeSetComposition", _) if str_of("text").contains(['\r', '\n']) => {
            (Some(Gesture::LineBreak), down)
        }
        _ => (None, down),
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
        read(method, Some(params), None).0
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
        assert_eq!(read("Input.dispatchMouseEvent", None, None).0, None);
        assert_eq!(of("Input.dispatchMouseEvent", "not json"), None);
    }

    /// Runs `inputs` in order as one client session does: the gestures they make.
    fn gestures(inputs: &[(&str, &str)]) -> Vec<Option<Gesture>> {
        let mut down = None;
        inputs
            .iter()
            .map(|(method, params)| {
                let (gesture, next) = read(method, Some(params), down.take());
                down = next;
                gesture
            })
            .collect()
    }

    const MOUSE: &str = "Input.dispatchMouseEvent";
    const TOUCH: &str = "Input.dispatchTouchEvent";

    #[test]
    fn a_release_where_its_press_was_is_that_click() {
        let click = gestures(&[
            (MOUSE, r#"{"type":"mousePressed","x":10,"y":20,"button":"left","clickCount":1}"#),
            (MOUSE, r#"{"type":"mouseReleased","x":11,"y":21,"button":"left","clickCount":1}"#),
        ]);
        assert_eq!(click, [Some(Gesture::Press { x: 10.0, y: 20.0 }), None]);
        let tap = gestures(&[
            (TOUCH, r#"{"type":"touchStart","touchPoints":[{"x":3,"y":4}]}"#),
            (TOUCH, r#"{"type":"touchMove","touchPoints":[{"x":4,"y":5}]}"#),
            (TOUCH, r#"{"type":"touchEnd","touchPoints":[]}"#),
        ]);
        assert_eq!(tap, [Some(Gesture::Tap { x: 3.0, y: 4.0 }), None, None]);
        let cancelled = gestures(&[
            (TOUCH, r#"{"type":"touchStart","touchPoints":[{"x":3,"y":4}]}"#),
            (TOUCH, r#"{"type":"touchMove","touchPoints":[{"x":300,"y":4}]}"#),
            (TOUCH, r#"{"type":"touchCancel","touchPoints":[]}"#),
            (TOUCH, r#"{"type":"touchEnd","touchPoints":[]}"#),
        ]);
        assert_eq!(cancelled, [Some(Gesture::Tap { x: 3.0, y: 4.0 }), None, None, None]);
    }

    #[test]
    fn a_pointer_that_moved_while_down_drops_where_it_lets_go() {
        let drag = gestures(&[
            (MOUSE, r#"{"type":"mousePressed","x":10,"y":20,"button":"left","clickCount":1}"#),
            (MOUSE, r#"{"type":"mouseMoved","x":100,"y":120,"button":"left","buttons":1}"#),
            (MOUSE, r#"{"type":"mouseReleased","x":200,"y":220,"button":"left","clickCount":1}"#),
        ]);
        assert_eq!(
            drag,
            [Some(Gesture::Press { x: 10.0, y: 20.0 }), None, Some(Gesture::Drop { x: 200.0, y: 220.0 })]
        );
        let swipe = gestures(&[
            (TOUCH, r#"{"type":"touchStart","touchPoints":[{"x":3,"y":4}]}"#),
            (TOUCH, r#"{"type":"touchMove","touchPoints":[{"x":90,"y":4}]}"#),
            (TOUCH, r#"{"type":"touchMove","touchPoints":[{"x":150,"y":60}]}"#),
            (TOUCH, r#"{"type":"touchEnd","touchPoints":[]}"#),
        ]);
        assert_eq!(swipe[3], Some(Gesture::Drop { x: 150.0, y: 60.0 }));
        // Away and back to where it went down: dropped where it was last seen before the release
        // (a pointer-event drag library's target), not a click.
        let back = gestures(&[
            (MOUSE, r#"{"type":"mousePressed","x":10,"y":20,"button":"left","clickCount":1}"#),
            (MOUSE, r#"{"type":"mouseMoved","x":100,"y":120,"button":"left","buttons":1}"#),
            (MOUSE, r#"{"type":"mouseMoved","x":300,"y":320,"button":"left","buttons":1}"#),
            (MOUSE, r#"{"type":"mouseReleased","x":10,"y":20,"button":"left","clickCount":1}"#),
        ]);
        assert_eq!(back[3], Some(Gesture::Drop { x: 300.0, y: 320.0 }));
        let touch_back = gestures(&[
            (TOUCH, r#"{"type":"touchStart","touchPoints":[{"x":3,"y":4}]}"#),
            (TOUCH, r#"{"type":"touchMove","touchPoints":[{"x":90,"y":4}]}"#),
            (TOUCH, r#"{"type":"touchMove","touchPoints":[{"x":4,"y":4}]}"#),
            (TOUCH, r#"{"type":"touchEnd","touchPoints":[]}"#),
        ]);
        assert_eq!(touch_back[3], Some(Gesture::Drop { x: 4.0, y: 4.0 }));
        // One finger rests while a second drags: the second drops, whether the touch ends or
        // it alone lifts.
        for end in [
            r#"{"type":"touchEnd","touchPoints":[]}"#,
            r#"{"type":"touchMove","touchPoints":[{"id":0,"x":5,"y":5}]}"#,
        ] {
            let two = gestures(&[
                (TOUCH, r#"{"type":"touchStart","touchPoints":[{"id":0,"x":5,"y":5}]}"#),
                (
                    TOUCH,
                    r#"{"type":"touchStart","touchPoints":[{"id":0,"x":5,"y":5},{"id":1,"x":50,"y":60}]}"#,
                ),
                (
                    TOUCH,
                    r#"{"type":"touchMove","touchPoints":[{"id":0,"x":5,"y":5},{"id":1,"x":150,"y":260}]}"#,
                ),
                (TOUCH, end),
            ]);
            assert_eq!(
                two,
                [
                    Some(Gesture::Tap { x: 5.0, y: 5.0 }),
                    None,
                    None,
                    Some(Gesture::Drop { x: 150.0, y: 260.0 })
                ]
            );
        }
        // A release with no press on record: what is under it acts (a `pointerup` handler).
        assert_eq!(
            of(MOUSE, r#"{"type":"mouseReleased","x":1,"y":2}"#),
            Some(Gesture::Drop { x: 1.0, y: 2.0 })
        );
    }

    #[test]
    fn a_drag_event_drops_once() {
        // Playwright drops with `Input.dispatchDragEvent` and no release; puppeteer releases the
        // mouse where it dropped: one drop either way.
        let drop = r#"{"type":"drop","x":200,"y":220,"data":{"items":[],"dragOperationsMask":1}}"#;
        let over = r#"{"type":"dragOver","x":200,"y":220,"data":{"items":[],"dragOperationsMask":1}}"#;
        let puppeteer = gestures(&[
            (MOUSE, r#"{"type":"mousePressed","x":10,"y":20,"button":"left","clickCount":1}"#),
            ("Input.dispatchDragEvent", over),
            ("Input.dispatchDragEvent", drop),
            (MOUSE, r#"{"type":"mouseReleased","x":200,"y":220,"button":"left","clickCount":1}"#),
        ]);
        assert_eq!(puppeteer[1..], [None, Some(Gesture::Drop { x: 200.0, y: 220.0 }), None]);
    }
}
