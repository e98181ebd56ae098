//! The frames clients receive, and the CDP errors in them. (Client frames are read in
//! `envelope`.)
//!
//! Params, results and event payloads pass through as raw JSON text: the envelope (`id`,
//! `method`, `sessionId`) is all the router needs, so nothing it forwards is parsed into a tree.

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

/// [`response`] without its result: the text before it and the text after it.
pub fn response_parts(id: i64, session_id: &str) -> (String, String) {
    let head = format!("{{\"id\":{id},\"result\":");
    let mut tail = String::with_capacity(session_id.len() + 16);
    push_session(&mut tail, session_id);
    tail.push('}');
    (head, tail)
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

    // The envelope's errors, worded as Chromium's (see `envelope`).
    pub fn not_json(what: &str, position: usize) -> CdpError {
        err(-32700, format!("JSON: {what} at position {position}"))
    }
    pub fn not_an_object() -> CdpError {
        err(-32600, "Message must be an object")
    }
    pub fn no_id() -> CdpError {
        err(-32600, "Message must have integer 'id' property")
    }
    pub fn no_method() -> CdpError {
        err(-32600, "Message must have string 'method' property")
    }
    pub fn bad_session_id() -> CdpError {
        err(-32600, "Message may have string 'sessionId' property")
    }
    pub fn bad_params() -> CdpError {
        err(-32600, "Message may have object 'params' property")
    }
    pub fn unknown_property() -> CdpError {
        err(-32600, "Message has property other than 'id', 'method', 'sessionId', 'params'")
    }
    pub fn duplicate_property() -> CdpError {
        err(-32700, "CBOR: duplicate map key")
    }
    pub fn bad_property_name() -> CdpError {
        err(-32700, "CBOR: invalid map key")
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
    // A method's params that do not fit it, worded as Chromium's (see `params_shape`).
    pub fn params_not_an_object() -> CdpError {
        invalid_params_data("Failed to deserialize params - CBOR: map start expected at position 7")
    }
    pub fn params_missing() -> CdpError {
        invalid_params_data("Failed to deserialize params - CBOR: map start expected at position 0")
    }
    fn invalid_params_data(data: &str) -> CdpError {
        CdpError { code: -32602, message: "Invalid parameters".into(), data: Some(data.into()) }
    }
    pub fn no_target() -> CdpError {
        err(-32602, "No target with given id found")
    }
    pub fn no_session() -> CdpError {
        err(-32602, "No session with given id")
    }
    pub fn no_extension() -> CdpError {
        err(
            -32000,
            "The tabtunnel extension is not connected to this daemon, so no browser or tab is available now; it reconnects on its own while Chrome runs (its side panel shows why not)",
        )
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
    pub fn denied_by_policy(method: &str, rule: &str) -> CdpError {
        err(-32000, format!("'{method}' is denied by tabtunnel's policy: {rule}"))
    }
    pub fn navigation_denied(url: &str, rule: &str) -> CdpError {
        err(-32000, format!("Navigating to {url} is denied by tabtunnel's policy: {rule}"))
    }
    pub fn not_a_web_page(method: &str, why: &str) -> CdpError {
        err(-32000, format!("'{method}' is refused by tabtunnel: {why}"))
    }
    pub fn cookies_unreadable() -> CdpError {
        err(
            -32000,
            "The answer is withheld by tabtunnel's policy: it may hold cookies this agent may not see, and it could not be read to hide them",
        )
    }
    pub fn clipboard_refused(method: &str) -> CdpError {
        err(
            -32000,
            format!("'{method}' is refused by tabtunnel: it would paste (or, for params it cannot read, might paste) the user's clipboard or selection, which no agent reads; type the text instead"),
        )
    }
    pub fn local_file_refused(method: &str, why: &str) -> CdpError {
        err(-32000, format!("'{method}' is refused by tabtunnel: {why} ({})", crate::local_files::RULE))
    }
    pub fn refused_by_user(method: &str, why: &str) -> CdpError {
        err(-32000, format!("'{method}' was not allowed: tabtunnel asked, and {why}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
