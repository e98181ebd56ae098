//! Reading client CDP frames by their envelope only, and writing the frames clients receive.
//!
//! Params, results and event payloads pass through as raw JSON text: the envelope (`id`,
//! `method`, `sessionId`) is all the router needs, so nothing it forwards is parsed into a tree.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::fmt::Write as _;

/// A client command as far as routing cares.
#[derive(Debug)]
pub struct ClientCommand<'a> {
    pub id: i64,
    pub method: &'a str,
    /// `""` for the connection's root session.
    pub session_id: &'a str,
    pub params: Option<&'a RawValue>,
}

/// Why a client frame could not be routed. Each becomes one CDP error reply.
#[derive(Debug, PartialEq, Eq)]
pub enum BadFrame {
    /// Not JSON, or not a JSON object: answered without an id (there is none to answer).
    NotJson,
    /// No integer `id`: answered without an id, as Chrome does.
    NoId,
    /// An id but no string `method`.
    NoMethod { id: i64, session_id: String },
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<MaybeStr<'a>>,
    #[serde(default, rename = "sessionId", borrow)]
    session_id: Option<MaybeStr<'a>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

/// A JSON string field that borrows when it has no escapes and owns when it must unescape.
/// Anything that is not a string deserializes to `NotAString` so that the error reply can say
/// which field was wrong instead of rejecting the whole frame as malformed JSON.
enum MaybeStr<'a> {
    Str(std::borrow::Cow<'a, str>),
    NotAString,
}

impl<'de: 'a, 'a> Deserialize<'de> for MaybeStr<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'a RawValue>::deserialize(d)?;
        if raw.get().starts_with('"') {
            let text: &'a str = raw.get();
            let s: std::borrow::Cow<'a, str> = match serde_json::from_str::<&'a str>(text) {
                Ok(borrowed) => borrowed.into(),
                Err(_) => serde_json::from_str::<String>(text).map_err(serde::de::Error::custom)?.into(),
            };
            Ok(MaybeStr::Str(s))
        } else {
            Ok(MaybeStr::NotAString)
        }
    }
}

/// An owned, parsed client frame; owns only what had escapes (practically never).
pub struct ParsedFrame<'a> {
    id: i64,
    method: std::borrow::Cow<'a, str>,
    session_id: std::borrow::Cow<'a, str>,
    params: Option<&'a RawValue>,
}

impl<'a> ParsedFrame<'a> {
    pub fn command(&self) -> ClientCommand<'_> {
        ClientCommand { id: self.id, method: &self.method, session_id: &self.session_id, params: self.params }
    }
}

pub fn parse_client_frame(text: &str) -> Result<ParsedFrame<'_>, BadFrame> {
    // serde would also read a struct from a JSON array; a CDP frame is an object.
    if !text.trim_start().starts_with('{') {
        return Err(BadFrame::NotJson);
    }
    let env: Envelope = serde_json::from_str(text).map_err(|_| BadFrame::NotJson)?;
    let id = env.id.and_then(|raw| serde_json::from_str::<i64>(raw.get()).ok()).ok_or(BadFrame::NoId)?;
    let session_id = match env.session_id {
        None => "".into(),
        Some(MaybeStr::Str(s)) => s,
        Some(MaybeStr::NotAString) => "<not a string>".into(),
    };
    let method = match env.method {
        Some(MaybeStr::Str(m)) => m,
        _ => return Err(BadFrame::NoMethod { id, session_id: session_id.into_owned() }),
    };
    Ok(ParsedFrame { id, method, session_id, params: env.params })
}

/// Appends `"key":<json string>` to `out`.
fn push_str_field(out: &mut String, key: &str, value: &str) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":");
    // Serializing a &str into a String cannot fail.
    out.push_str(&serde_json::to_string(value).expect("string serializes"));
}

fn push_session(out: &mut String, session_id: &str) {
    if !session_id.is_empty() {
        out.push(',');
        push_str_field(out, "sessionId", session_id);
    }
}

/// `{"id":N,"result":<raw>[,"sessionId":S]}`
pub fn response(id: i64, session_id: &str, result: &str) -> String {
    let mut out = String::with_capacity(result.len() + session_id.len() + 48);
    let _ = write!(out, "{{\"id\":{id},\"result\":");
    out.push_str(result);
    push_session(&mut out, session_id);
    out.push('}');
    out
}

/// `{"id":N,"error":{"code":C,"message":M[,"data":D]}[,"sessionId":S]}`; `id` None for frames
/// that had none.
pub fn error_response(id: Option<i64>, session_id: &str, error: &CdpError) -> String {
    let mut out = String::with_capacity(error.message.len() + session_id.len() + 80);
    out.push('{');
    if let Some(id) = id {
        let _ = write!(out, "\"id\":{id},");
    }
    let _ = write!(out, "\"error\":{{\"code\":{},", error.code);
    push_str_field(&mut out, "message", &error.message);
    if let Some(data) = &error.data {
        out.push(',');
        push_str_field(&mut out, "data", data);
    }
    out.push('}');
    push_session(&mut out, session_id);
    out.push('}');
    out
}

/// `{"method":M,"params":<raw>[,"sessionId":S]}`
pub fn event(method: &str, params: &str, session_id: &str) -> String {
    let mut out = String::with_capacity(method.len() + params.len() + session_id.len() + 48);
    out.push('{');
    push_str_field(&mut out, "method", method);
    out.push_str(",\"params\":");
    out.push_str(params);
    push_session(&mut out, session_id);
    out.push('}');
    out
}

pub use tabtunnel_wire::CdpError;

/// The CDP errors the emulation produces, with Chrome's codes and, where Chrome has one,
/// Chrome's wording (clients match on some of them, e.g. puppeteer on "Session with given id
/// not found").
pub mod errors {
    use super::CdpError;

    fn err(code: i64, message: impl Into<String>) -> CdpError {
        CdpError { code, message: message.into(), data: None }
    }

    pub fn not_json() -> CdpError {
        err(-32700, "Message must be a valid JSON object")
    }
    pub fn no_id() -> CdpError {
        err(-32600, "Message must have integer 'id' property")
    }
    pub fn no_method() -> CdpError {
        err(-32600, "Message must have string 'method' property")
    }
    pub fn session_not_found() -> CdpError {
        err(-32001, "Session with given id not found.")
    }
    pub fn method_not_found(method: &str) -> CdpError {
        err(-32601, format!("'{method}' wasn't found"))
    }
    pub fn not_supported(method: &str, why: &str) -> CdpError {
        err(-32000, format!("'{method}' is not supported by tabtunnel: {why}"))
    }
    pub fn invalid_params(method: &str, what: &str) -> CdpError {
        err(-32602, format!("Invalid parameters for '{method}': {what}"))
    }
    pub fn no_target() -> CdpError {
        err(-32602, "No target with given id found")
    }
    pub fn no_session() -> CdpError {
        err(-32602, "No session with given id")
    }
    pub fn no_browser() -> CdpError {
        err(-32000, "The tabtunnel extension is not connected to the daemon, so there is no browser yet")
    }
    pub fn too_many_in_flight(limit: usize) -> CdpError {
        err(
            -32000,
            format!("More than {limit} commands are waiting for an answer on this connection; wait for some"),
        )
    }
    pub fn extension_gone() -> CdpError {
        err(-32000, "Target closed: the tabtunnel extension disconnected before answering")
    }
    pub fn timed_out(after_ms: u64) -> CdpError {
        err(
            -32000,
            format!(
                "The tab did not answer within {} s (it may be frozen or hung); tabtunnel gave up waiting",
                after_ms / 1000
            ),
        )
    }
    pub fn too_many_agents(agent: &str, limit: usize) -> CdpError {
        err(
            -32000,
            format!(
                "tabtunnel serves at most {limit} agents at once, so agent '{agent}' was refused; disconnect one in the side panel or raise --max-agents"
            ),
        )
    }
    pub fn too_many_tabs(agent: &str, limit: usize) -> CdpError {
        err(
            -32000,
            format!(
                "Agent '{agent}' already has {limit} tabs, the most tabtunnel allows per agent (--max-tabs-per-agent); close one first"
            ),
        )
    }
    pub fn window_not_found() -> CdpError {
        err(-32000, "Browser window not found")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_envelope_and_keeps_params_raw() {
        let f = parse_client_frame(
            r#"{"id":5,"method":"Runtime.evaluate","params":{"expression":"1+1"},"sessionId":"AB"}"#,
        )
        .unwrap();
        let c = f.command();
        assert_eq!((c.id, c.method, c.session_id), (5, "Runtime.evaluate", "AB"));
        assert_eq!(c.params.unwrap().get(), r#"{"expression":"1+1"}"#);
    }

    #[test]
    fn root_session_is_empty_and_params_optional() {
        let f = parse_client_frame(r#"{"id":1,"method":"Browser.getVersion"}"#).unwrap();
        assert_eq!(f.command().session_id, "");
        assert!(f.command().params.is_none());
    }

    #[test]
    fn escaped_strings_are_unescaped() {
        let f = parse_client_frame(r#"{"id":1,"method":"Browser.get\u0056ersion"}"#).unwrap();
        assert_eq!(f.command().method, "Browser.getVersion");
    }

    #[test]
    fn bad_frames_are_classified() {
        assert_eq!(parse_client_frame("not json").err(), Some(BadFrame::NotJson));
        assert_eq!(parse_client_frame("[1,2]").err(), Some(BadFrame::NotJson));
        assert_eq!(parse_client_frame(r#"{"method":"A.b"}"#).err(), Some(BadFrame::NoId));
        assert_eq!(parse_client_frame(r#"{"id":"7","method":"A.b"}"#).err(), Some(BadFrame::NoId));
        assert_eq!(parse_client_frame(r#"{"id":1.5,"method":"A.b"}"#).err(), Some(BadFrame::NoId));
        assert_eq!(
            parse_client_frame(r#"{"id":3,"sessionId":"S"}"#).err(),
            Some(BadFrame::NoMethod { id: 3, session_id: "S".into() })
        );
        assert_eq!(
            parse_client_frame(r#"{"id":3,"method":7}"#).err(),
            Some(BadFrame::NoMethod { id: 3, session_id: "".into() })
        );
    }

    #[test]
    fn writes_frames() {
        assert_eq!(response(1, "", "{}"), r#"{"id":1,"result":{}}"#);
        assert_eq!(response(2, "S", r#"{"a":1}"#), r#"{"id":2,"result":{"a":1},"sessionId":"S"}"#);
        assert_eq!(
            error_response(Some(3), "S", &errors::session_not_found()),
            r#"{"id":3,"error":{"code":-32001,"message":"Session with given id not found."},"sessionId":"S"}"#
        );
        assert_eq!(
            error_response(None, "", &errors::no_id()),
            r#"{"error":{"code":-32600,"message":"Message must have integer 'id' property"}}"#
        );
        assert_eq!(
            event("Page.loadEventFired", r#"{"timestamp":1}"#, "S"),
            r#"{"method":"Page.loadEventFired","params":{"timestamp":1},"sessionId":"S"}"#
        );
        for frame in [response(1, "a\"b", "{}"), event("x\"y", "{}", "")] {
            serde_json::from_str::<serde_json::Value>(&frame).expect("valid JSON");
        }
    }
}
