//! The frames every command and event makes, written and read without a JSON parser.
//!
//! A command's answer and an event carry CDP's own JSON (a result, event params), which may be
//! large (a 64 MiB evaluation, a 10 MB screenshot) and which the daemon only passes on. The
//! extension writes these two frames by concatenation, in exactly the layout serde would give
//! them; the daemon reads them back by that layout, slicing the payload out without scanning it.
//! Anything else, or any frame that is not in that exact layout, goes through serde as usual.
//!
//! Several frames travel in one WebSocket message: the extension's separated by newlines
//! (everything it writes is compact JSON, which never holds a raw newline), the daemon's as a
//! JSON array (client params may hold raw newlines as whitespace, so only a parser may split
//! them).

use std::borrow::Cow;

/// What closes both hot frames, after the payload.
pub const TAIL: &str = "}}";

/// `{"commandResult":{"id":ID,"result":RESULT}}`: `result` must be JSON (the extension has it
/// from `JSON.stringify`).
pub fn command_result(id: crate::RequestId, result: &str) -> String {
    let mut out = command_result_head(id);
    out.reserve(result.len() + TAIL.len());
    out.push_str(result);
    out.push_str(TAIL);
    out
}

/// [`command_result`] up to its payload: the extension joins head, payload and [`TAIL`] as JS
/// strings, so the payload never enters wasm.
pub fn command_result_head(id: crate::RequestId) -> String {
    format!("{{\"commandResult\":{{\"id\":{id},\"result\":")
}

/// `{"event":{"tabId":T[,"childSessionId":S],"method":M,"params":PARAMS}}`: `params` must be
/// JSON.
pub fn event(tab_id: crate::TabId, child_session_id: Option<&str>, method: &str, params: &str) -> String {
    let mut out = event_head(tab_id, child_session_id, method);
    out.reserve(params.len() + TAIL.len());
    out.push_str(params);
    out.push_str(TAIL);
    out
}

/// [`event`] up to its payload.
pub fn event_head(tab_id: crate::TabId, child_session_id: Option<&str>, method: &str) -> String {
    let mut out = String::with_capacity(method.len() + 80);
    out.push_str("{\"event\":{\"tabId\":");
    out.push_str(&tab_id.to_string());
    if let Some(child) = child_session_id {
        out.push_str(",\"childSessionId\":");
        push_string(&mut out, child);
    }
    out.push_str(",\"method\":");
    push_string(&mut out, method);
    out.push_str(",\"params\":");
    out
}

fn push_string(out: &mut String, text: &str) {
    out.push_str(&serde_json::to_string(text).expect("a string serializes"));
}

/// A hot frame read by its layout: the payload is a slice of the message, unparsed.
#[derive(Debug, PartialEq, Eq)]
pub enum Hot<'a> {
    CommandResult {
        id: crate::RequestId,
        result: &'a str,
    },
    Event {
        tab_id: crate::TabId,
        child_session_id: Option<Cow<'a, str>>,
        method: Cow<'a, str>,
        params: &'a str,
    },
}

/// Reads a hot frame written by [`command_result`] or [`event`]; `None` for any other text.
pub fn read(text: &str) -> Option<Hot<'_>> {
    if let Some(rest) = text.strip_prefix("{\"commandResult\":{\"id\":") {
        let (id, rest) = number(rest)?;
        let result = rest.strip_prefix(",\"result\":")?.strip_suffix(TAIL)?;
        return Some(Hot::CommandResult { id, result });
    }
    let rest = text.strip_prefix("{\"event\":{\"tabId\":")?;
    let (tab_id, rest) = number(rest)?;
    let (child_session_id, rest) = match rest.strip_prefix(",\"childSessionId\":") {
        Some(rest) => {
            let (child, rest) = string(rest)?;
            (Some(child), rest)
        }
        None => (None, rest),
    };
    let (method, rest) = string(rest.strip_prefix(",\"method\":")?)?;
    let params = rest.strip_prefix(",\"params\":")?.strip_suffix(TAIL)?;
    Some(Hot::Event { tab_id, child_session_id, method, params })
}

/// A JSON integer at the start of `text`, and what follows it.
fn number<T: std::str::FromStr>(text: &str) -> Option<(T, &str)> {
    let end = text.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(text.len());
    Some((text[..end].parse().ok()?, &text[end..]))
}

/// A JSON string at the start of `text` (unescaped when it has escapes), and what follows it.
fn string(text: &str) -> Option<(Cow<'_, str>, &str)> {
    let body = text.strip_prefix('"')?;
    let mut escaped = false;
    for (i, b) in body.bytes().enumerate() {
        match b {
            b'"' if !escaped => {
                let raw = &text[..i + 2];
                let value = if raw.contains('\\') {
                    Cow::Owned(serde_json::from_str::<String>(raw).ok()?)
                } else {
                    Cow::Borrowed(&body[..i])
                };
                return Some((value, &text[i + 2..]));
            }
            b'\\' if !escaped => escaped = true,
            _ => escaped = false,
        }
    }
    None
}

/// The frames of one message from the extension (newline-separated).
pub fn split_lines(message: &str) -> impl Iterator<Item = &str> {
    message.split('\n').filter(|line| !line.is_empty())
}

/// One message of the daemon's frames: the frame itself when alone, else a JSON array of them.
pub fn join_array<'a>(frames: impl IntoIterator<Item = &'a str>) -> String {
    let mut frames = frames.into_iter();
    let Some(first) = frames.next() else { return String::new() };
    let mut rest = frames.peekable();
    if rest.peek().is_none() {
        return first.to_owned();
    }
    let mut out = String::with_capacity(first.len() * 2 + 2);
    out.push('[');
    out.push_str(first);
    for frame in rest {
        out.push(',');
        out.push_str(frame);
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CommandResult, Event, FromExtension, RawValue, ToExtension};

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn hot_frames_are_exactly_what_serde_writes_and_reads() {
        let result = r#"{"result":{"type":"number","value":2}}"#;
        let text = command_result(7, result);
        assert_eq!(text, FromExtension::CommandResult(CommandResult::ok(7, raw(result))).to_json());
        assert_eq!(read(&text), Some(Hot::CommandResult { id: 7, result }));
        for child in [None, Some("AB12"), Some("q\"uo\\te")] {
            let params = r#"{"args":[{"type":"string","value":"}}"}]}"#;
            let text = event(3, child, "Runtime.consoleAPICalled", params);
            let serde = FromExtension::Event(Event {
                tab_id: 3,
                child_session_id: child.map(str::to_owned),
                method: "Runtime.consoleAPICalled".into(),
                params: raw(params),
            })
            .to_json();
            assert_eq!(text, serde);
            assert_eq!(
                read(&text),
                Some(Hot::Event {
                    tab_id: 3,
                    child_session_id: child.map(Cow::Borrowed).map(|c| Cow::Owned(c.into_owned())),
                    method: "Runtime.consoleAPICalled".into(),
                    params,
                })
            );
        }
    }

    #[test]
    fn anything_else_is_left_to_serde() {
        for other in [
            r#"{"commandResult":{"id":1,"error":{"code":-32000,"message":"x"}}}"#,
            r#"{"commandResult":{"result":{},"id":1}}"#,
            r#"{"event":{"method":"A.b","tabId":1,"params":{}}}"#,
            r#"{"event":{"tabId":1,"method":"A.b","params":{}} }"#,
            r#"{"event":{"tabId":x,"method":"A.b","params":{}}}"#,
            r#"{"event":{"tabId":1,"method":"A.b"#,
            r#""heartbeat""#,
            "",
        ] {
            assert_eq!(read(other), None, "{other}");
        }
    }

    #[test]
    fn batches_split_and_join() {
        let lines: Vec<&str> = split_lines("{\"a\":1}\n\"heartbeat\"\n").collect();
        assert_eq!(lines, ["{\"a\":1}", "\"heartbeat\""]);
        assert_eq!(join_array(["\"heartbeat\""]), "\"heartbeat\"");
        let two = join_array([r#"{"resetTab":{"tabId":1}}"#, r#""heartbeat""#]);
        let frames: Vec<ToExtension> = serde_json::from_str(&two).unwrap();
        assert!(matches!(frames[..], [ToExtension::ResetTab { tab_id: 1 }, ToExtension::Heartbeat]));
        assert_eq!(join_array(std::iter::empty()), "");
    }
}
