//! Reading a client's CDP frame by its envelope (`id`, `method`, `sessionId`, `params`) with the
//! rules of Chromium's own endpoint, so a client gets the answer Chrome would give it.
//!
//! Measured against Chromium 156 (the table is the `chromium_answers` test below):
//! - text that is not JSON: `-32700 "JSON: <what> at position <n>"`, without an id;
//! - JSON that is not an object: `-32600 "Message must be an object"`, without an id;
//! - `id` must be an integer in 32 bits; a float with an integral value counts (`2.0`, `1e3`),
//!   anything else is `-32600 "Message must have integer 'id' property"`, without an id;
//! - `method` must be a non-empty ASCII string (Chrome keeps other text as UTF-16, which its
//!   dispatcher refuses; a lone surrogate `"\ud800"` too);
//! - `sessionId`, when present, must be an ASCII string (`""` is the root session);
//! - `params`, when present, must be an object, an array or `null`; the method then decides
//!   what an array or `null` means (see `params_shape`);
//! - no other property (`-32600`), no property twice and no name other than ASCII (`-32700`,
//!   worded as Chromium's without its position, which counts bytes of Chrome's CBOR encoding);
//! - every error about the envelope is answered without `sessionId`.
//!
//! Chromium stops at the first bad property, in frame order, and answers with the id only if
//! the id came before it. Here the first bad property decides the error too, but a valid `id`
//! anywhere in the frame is always answered, so no client waits forever for its reply.

use crate::frames::{errors, CdpError, ClientCommand};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;

/// A frame that passed the envelope rules; owns only what had escapes (practically never).
pub struct ParsedFrame<'a> {
    id: i64,
    method: Cow<'a, str>,
    session_id: Cow<'a, str>,
    /// `None` when absent or `null`: Chromium treats both alike.
    params: Option<&'a RawValue>,
}

impl ParsedFrame<'_> {
    pub fn command(&self) -> ClientCommand<'_> {
        ClientCommand { id: self.id, method: &self.method, session_id: &self.session_id, params: self.params }
    }
}

/// A frame refused by the envelope rules: one error reply, with `id` when the frame has one.
#[derive(Debug, PartialEq)]
pub struct Rejection {
    pub id: Option<i64>,
    pub error: CdpError,
}

pub fn parse(text: &str) -> Result<ParsedFrame<'_>, Rejection> {
    let envelope: Envelope =
        serde_json::from_str(text).map_err(|e| Rejection { id: None, error: json_error(text, &e) })?;
    let Envelope { id, method, session_id, params, problem, .. } = envelope;
    let problem = problem.or(if id.is_none() {
        Some(Problem::NoId)
    } else if method.is_none() {
        Some(Problem::NoMethod)
    } else {
        None
    });
    match (problem, id, method) {
        (None, Some(id), Some(method)) => {
            Ok(ParsedFrame { id, method, session_id: session_id.unwrap_or_default(), params })
        }
        (problem, id, _) => Err(Rejection { id, error: problem.unwrap_or(Problem::NoMethod).error() }),
    }
}

/// What is wrong with an envelope; the first one in frame order is the answer.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Problem {
    NotAnObject,
    NoId,
    NoMethod,
    BadSessionId,
    BadParams,
    UnknownProperty,
    DuplicateProperty,
    BadPropertyName,
}

impl Problem {
    fn error(self) -> CdpError {
        match self {
            Problem::NotAnObject => errors::not_an_object(),
            Problem::NoId => errors::no_id(),
            Problem::NoMethod => errors::no_method(),
            Problem::BadSessionId => errors::bad_session_id(),
            Problem::BadParams => errors::bad_params(),
            Problem::UnknownProperty => errors::unknown_property(),
            Problem::DuplicateProperty => errors::duplicate_property(),
            Problem::BadPropertyName => errors::bad_property_name(),
        }
    }
}

#[derive(Default)]
struct Envelope<'a> {
    /// The first `id` property was there (valid or not); a later one is a duplicate.
    id_seen: bool,
    id: Option<i64>,
    method: Option<Cow<'a, str>>,
    session_id: Option<Cow<'a, str>>,
    params_seen: bool,
    params: Option<&'a RawValue>,
    problem: Option<Problem>,
}

impl<'a> Envelope<'a> {
    fn note(&mut self, problem: Problem) {
        self.problem.get_or_insert(problem);
    }

    fn property(&mut self, name: &[u8], value: &'a RawValue) {
        match name {
            b"id" if self.id_seen => self.note(Problem::DuplicateProperty),
            b"id" => {
                self.id_seen = true;
                self.id = parse_id(value.get());
                if self.id.is_none() {
                    self.note(Problem::NoId);
                }
            }
            // As in Chromium, a second `method` (or non-empty `sessionId`) is a duplicate.
            b"method" if self.method.is_some() => self.note(Problem::DuplicateProperty),
            b"method" => match ascii_string(value).filter(|m| !m.is_empty()) {
                Some(method) => self.method = Some(method),
                None => self.note(Problem::NoMethod),
            },
            b"sessionId" if self.session_id.as_ref().is_some_and(|s| !s.is_empty()) => {
                self.note(Problem::DuplicateProperty)
            }
            b"sessionId" => match ascii_string(value) {
                Some(session_id) => self.session_id = Some(session_id),
                None => self.note(Problem::BadSessionId),
            },
            b"params" if self.params_seen => self.note(Problem::DuplicateProperty),
            b"params" => {
                self.params_seen = true;
                match value.get().as_bytes().first() {
                    Some(b'{' | b'[') => self.params = Some(value),
                    Some(b'n') => {} // null: as if absent
                    _ => self.note(Problem::BadParams),
                }
            }
            other if other.is_ascii() => self.note(Problem::UnknownProperty),
            _ => self.note(Problem::BadPropertyName),
        }
    }
}

impl<'de: 'a, 'a> de::Deserialize<'de> for Envelope<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a CDP message")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut envelope = Envelope::default();
        // Every property is read, even after a problem, so that a valid `id` is never missed.
        while let Some(PropertyName(name)) = map.next_key()? {
            let value: &'de RawValue = map.next_value()?;
            envelope.property(&name, value);
        }
        Ok(envelope)
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Envelope::not_an_object())
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Envelope::not_an_object())
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Envelope::not_an_object())
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Envelope::not_an_object())
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Envelope::not_an_object())
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Envelope::not_an_object())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Envelope::not_an_object())
    }
}

impl Envelope<'_> {
    fn not_an_object() -> Self {
        Envelope { problem: Some(Problem::NotAnObject), ..Envelope::default() }
    }
}

/// A property name as bytes: read without unescaping into UTF-8, so a name with a lone
/// surrogate is refused as a bad name (as Chromium does) rather than as unreadable JSON.
struct PropertyName<'a>(Cow<'a, [u8]>);

impl<'de: 'a, 'a> de::Deserialize<'de> for PropertyName<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> Visitor<'de> for NameVisitor {
            type Value = PropertyName<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a property name")
            }
            fn visit_borrowed_bytes<E>(self, v: &'de [u8]) -> Result<Self::Value, E> {
                Ok(PropertyName(Cow::Borrowed(v)))
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Self::Value, E> {
                Ok(PropertyName(Cow::Owned(v.to_vec())))
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(PropertyName(Cow::Borrowed(v.as_bytes())))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(PropertyName(Cow::Owned(v.as_bytes().to_vec())))
            }
        }
        d.deserialize_bytes(NameVisitor)
    }
}

/// A 32-bit integer id, also when written as an integral float (`2.0`, `1e3`), as Chromium
/// reads it.
fn parse_id(raw: &str) -> Option<i64> {
    if let Ok(id) = raw.parse::<i32>() {
        return Some(id.into());
    }
    integral(serde_json::from_str(raw).ok()?)
}

/// A number as Chromium reads a 32-bit integer parameter: also an integral float (`2.0`).
pub(crate) fn integral(value: f64) -> Option<i64> {
    let in_range = (f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&value);
    // `as` is exact here: the value is integral and within i32.
    (in_range && value.fract() == 0.0).then_some(value as i64)
}

/// A JSON string that is ASCII text; `None` for anything else (not a string, a lone
/// surrogate, other than ASCII).
fn ascii_string(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    let s: Cow<str> = match serde_json::from_str::<&str>(text) {
        Ok(borrowed) => borrowed.into(),
        Err(_) => serde_json::from_str::<String>(text).ok()?.into(),
    };
    s.is_ascii().then_some(s)
}

/// Chromium's wording for text that is not JSON: `JSON: <what> at position <byte offset>`,
/// the offset being where the bad token starts (or the end, for text that stops early).
fn json_error(text: &str, e: &serde_json::Error) -> CdpError {
    let what = e.to_string();
    let what = what.split(" at line ").next().unwrap_or_default();
    let (chromium, at) = match what {
        "EOF while parsing a value" if text.trim().is_empty() => ("no input", At::End),
        "EOF while parsing a value" => ("value expected", At::End),
        "EOF while parsing an object" => ("comma or map end expected", At::End),
        "EOF while parsing a list" => ("comma or array end expected", At::End),
        "EOF while parsing a string" => ("invalid token", At::StringStart),
        "expected value" => ("value expected", At::Here),
        "expected `,` or `}`" => ("comma or map end expected", At::Here),
        "expected `,` or `]`" => ("comma or array end expected", At::Here),
        "expected `:`" => ("colon expected", At::Here),
        "key must be a string" => ("string literal expected", At::Here),
        "trailing characters" => ("unprocessed input remains", At::Here),
        "trailing comma" => ("unexpected map or array end", At::Here),
        "number out of range" => ("invalid number", At::TokenStart),
        "recursion limit exceeded" => ("stack limit exceeded", At::Here),
        _ => ("invalid token", At::TokenStart),
    };
    let here = byte_offset(text, e.line(), e.column());
    let position = match at {
        At::End => text.len(),
        // The unterminated string starts at the last quote (an escaped one inside it aside).
        At::StringStart => text.rfind('"').unwrap_or(0),
        At::Here => here,
        // serde_json points inside a bad literal or number; Chromium at its first byte.
        At::TokenStart => {
            let before = &text.as_bytes()[..here];
            let token = before.iter().rev().take_while(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b));
            here - token.count()
        }
    };
    errors::not_json(chromium, position)
}

enum At {
    End,
    StringStart,
    Here,
    TokenStart,
}

/// serde_json reports a 1-based line and column (in bytes); Chromium a 0-based byte offset.
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::error_response;
    use serde_json::{json, Value};

    /// What the core answers to `frame` when the envelope refuses it.
    fn answer(frame: &str) -> Value {
        let rejection = parse(frame).err().unwrap_or_else(|| panic!("accepted: {frame}"));
        serde_json::from_str(&error_response(rejection.id, "", &rejection.error)).unwrap()
    }

    fn accepted(frame: &str) -> (i64, String, String, Option<String>) {
        let parsed = parse(frame).unwrap_or_else(|r| panic!("refused {frame}: {r:?}"));
        let c = parsed.command();
        (c.id, c.method.to_owned(), c.session_id.to_owned(), c.params.map(|p| p.get().to_owned()))
    }

    /// Chromium 156's answers on its own browser endpoint, frame for frame (recorded with raw
    /// frames over its WebSocket), where they concern the envelope.
    #[test]
    fn chromium_answers() {
        let e = |code: i64, message: &str| json!({"error": {"code": code, "message": message}});
        let with_id = |id: i64, code: i64, message: &str| json!({"id": id, "error": {"code": code, "message": message}});
        const NO_ID: &str = "Message must have integer 'id' property";
        const NO_METHOD: &str = "Message must have string 'method' property";
        const BAD_SESSION: &str = "Message may have string 'sessionId' property";
        const BAD_PARAMS: &str = "Message may have object 'params' property";
        const OTHER: &str = "Message has property other than 'id', 'method', 'sessionId', 'params'";
        let table: Vec<(&str, Value)> = vec![
            ("not json", e(-32700, "JSON: invalid token at position 0")),
            ("", e(-32700, "JSON: no input at position 0")),
            ("   ", e(-32700, "JSON: no input at position 3")),
            (
                r#"{"id":22,"method":"Browser.getVersion"}x"#,
                e(-32700, "JSON: unprocessed input remains at position 39"),
            ),
            (r#"{"id":38}x"#, e(-32700, "JSON: unprocessed input remains at position 9")),
            (
                r#"{"id":3 "method":"Browser.getVersion"}"#,
                e(-32700, "JSON: comma or map end expected at position 8"),
            ),
            (
                r#"{"id":4,"method":"Browser.getVersion""#,
                e(-32700, "JSON: comma or map end expected at position 37"),
            ),
            (
                r#"{"id":8,"method":"A.b","params":[1,2}"#,
                e(-32700, "JSON: comma or array end expected at position 36"),
            ),
            (r#"{"id":5,"method":"Browser.getVer"#, e(-32700, "JSON: invalid token at position 17")),
            (r#"{id:10}"#, e(-32700, "JSON: string literal expected at position 1")),
            (r#"{"id":2,"method":"A.b","params":{"a":}}"#, e(-32700, "JSON: value expected at position 37")),
            (
                r#"{"id":14,"method":"A.b","params":{"a":01}}"#,
                e(-32700, "JSON: invalid token at position 38"),
            ),
            ("[1,2]", e(-32600, "Message must be an object")),
            (r#""str""#, e(-32600, "Message must be an object")),
            ("5", e(-32600, "Message must be an object")),
            ("null", e(-32600, "Message must be an object")),
            ("{}", e(-32600, NO_ID)),
            (r#"{"method":"Browser.getVersion"}"#, e(-32600, NO_ID)),
            (r#"{"id":2147483648,"method":"Browser.getVersion"}"#, e(-32600, NO_ID)),
            (r#"{"id":4294967296,"method":"Browser.getVersion"}"#, e(-32600, NO_ID)),
            (r#"{"id":-2147483649,"method":"Browser.getVersion"}"#, e(-32600, NO_ID)),
            (r#"{"id":1e20,"method":"Browser.getVersion"}"#, e(-32600, NO_ID)),
            (r#"{"id":1.5,"method":"Browser.getVersion"}"#, e(-32600, NO_ID)),
            (r#"{"id":"7","method":"Browser.getVersion"}"#, e(-32600, NO_ID)),
            (r#"{"id":"\u0031","method":"Browser.getVersion"}"#, e(-32600, NO_ID)),
            (r#"{"id":null,"method":"Browser.getVersion"}"#, e(-32600, NO_ID)),
            (r#"{"id":true,"method":"Browser.getVersion"}"#, e(-32600, NO_ID)),
            (r#"{"id":8,"method":"\ud800"}"#, with_id(8, -32600, NO_METHOD)),
            (r#"{"id":30,"method":"\ud800","sessionId":"S"}"#, with_id(30, -32600, NO_METHOD)),
            (r#"{"id":11,"method":"Runtime.evaluaté","sessionId":"S"}"#, with_id(11, -32600, NO_METHOD)),
            (r#"{"id":14,"method":7}"#, with_id(14, -32600, NO_METHOD)),
            (r#"{"id":15}"#, with_id(15, -32600, NO_METHOD)),
            (r#"{"id":18,"method":""}"#, with_id(18, -32600, NO_METHOD)),
            (r#"{"id":1,"method":"Browser.getVersion","params":5}"#, with_id(1, -32600, BAD_PARAMS)),
            (r#"{"id":2,"method":"Browser.getVersion","params":true}"#, with_id(2, -32600, BAD_PARAMS)),
            (r#"{"id":3,"method":"Browser.getVersion","params":"s"}"#, with_id(3, -32600, BAD_PARAMS)),
            // Envelope errors carry no sessionId, even for a command sent on a session.
            (
                r#"{"id":1,"method":"Runtime.evaluate","params":5,"sessionId":"S"}"#,
                with_id(1, -32600, BAD_PARAMS),
            ),
            (
                r#"{"id":9,"method":"Browser.getVersion","extra":1,"another":{"x":[1]}}"#,
                with_id(9, -32600, OTHER),
            ),
            (
                r#"{"id":10,"method":"Runtime.evaluate","params":{},"sessionId":"S","x":1}"#,
                with_id(10, -32600, OTHER),
            ),
            (r#"{"id":10,"method":"Browser.getVersion","sessionId":5}"#, with_id(10, -32600, BAD_SESSION)),
            (r#"{"id":11,"method":"Browser.getVersion","sessionId":null}"#, with_id(11, -32600, BAD_SESSION)),
            (
                r#"{"id":29,"method":"Browser.getVersion","sessionId":"\ud800"}"#,
                with_id(29, -32600, BAD_SESSION),
            ),
            (r#"{"id":13,"method":"Browser.getVersion","sessionId":"é"}"#, with_id(13, -32600, BAD_SESSION)),
            (
                r#"{"id":19,"id":20,"method":"Browser.getVersion"}"#,
                with_id(19, -32700, "CBOR: duplicate map key"),
            ),
            (r#"{"id":21,"method":"A.b","method":"A.b"}"#, with_id(21, -32700, "CBOR: duplicate map key")),
            (
                r#"{"id":22,"method":"A.b","params":{},"params":{}}"#,
                with_id(22, -32700, "CBOR: duplicate map key"),
            ),
            (
                r#"{"id":24,"method":"A.b","sessionId":"S","sessionId":"S"}"#,
                with_id(24, -32700, "CBOR: duplicate map key"),
            ),
            (r#"{"id":15,"méthod":"Browser.getVersion"}"#, with_id(15, -32700, "CBOR: invalid map key")),
            (
                r#"{"id":13,"\ud800":1,"method":"Browser.getVersion"}"#,
                with_id(13, -32700, "CBOR: invalid map key"),
            ),
        ];
        let wrong: Vec<String> = table
            .into_iter()
            .filter(|(frame, expected)| answer(frame) != *expected)
            .map(|(frame, expected)| format!("{frame}\n  got      {}\n  expected {expected}", answer(frame)))
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Where Chromium answers without the id because the bad property came before it, the id is
    /// kept: the client would otherwise wait for its answer forever.
    #[test]
    fn a_valid_id_anywhere_is_always_answered() {
        for (frame, id, code) in [
            (r#"{"method":"\ud800","id":16}"#, 16, -32600),
            (r#"{"x":1,"id":17,"method":"Browser.getVersion"}"#, 17, -32600),
            (r#"{"params":5,"id":18,"method":"Browser.getVersion"}"#, 18, -32600),
            (r#"{"sessionId":5,"id":19,"method":"Browser.getVersion"}"#, 19, -32600),
            (r#"{"method":7,"id":20}"#, 20, -32600),
            (r#"{"méthod":"Browser.getVersion","id":14}"#, 14, -32700),
        ] {
            let reply = answer(frame);
            assert_eq!(
                (reply["id"].as_i64(), reply["error"]["code"].as_i64()),
                (Some(id), Some(code)),
                "{frame}"
            );
        }
    }

    #[test]
    fn chromium_accepts_these() {
        let get_version = |id: i64| (id, "Browser.getVersion".to_owned(), String::new(), None);
        assert_eq!(accepted(r#"{"id":2.0,"method":"Browser.getVersion"}"#), get_version(2));
        assert_eq!(accepted(r#"{"id":1e3,"method":"Browser.getVersion"}"#), get_version(1000));
        assert_eq!(accepted(r#"{"id":1.0e1,"method":"Browser.getVersion"}"#), get_version(10));
        assert_eq!(accepted(r#"{"id":-0,"method":"Browser.getVersion"}"#), get_version(0));
        assert_eq!(accepted(r#"{"id":-1,"method":"Browser.getVersion"}"#), get_version(-1));
        assert_eq!(accepted(r#"{"id":2147483647,"method":"Browser.getVersion"}"#), get_version(2147483647));
        assert_eq!(accepted(r#"{"id":-2147483648,"method":"Browser.getVersion"}"#), get_version(-2147483648));
        assert_eq!(accepted(r#"{"id":5,"method":"Browser.getVersion","params":null}"#), get_version(5));
        assert_eq!(accepted(r#"{"id":12,"method":"Browser.getVersion","sessionId":""}"#), get_version(12));
        assert_eq!(
            accepted(r#"{"id":23,"method":"Browser.getVersion","sessionId":"","sessionId":""}"#),
            get_version(23)
        );
        assert_eq!(accepted(r#"{"id":28,"method":"Browser.get\u0056ersion"}"#), get_version(28));
        assert_eq!(accepted(r#"{"i\u0064":45,"method":"Browser.getVersion"}"#), get_version(45));
        assert_eq!(accepted("\n{\"id\" : 40 , \"method\" : \"Browser.getVersion\" } "), get_version(40));
        // Params stay raw: arrays pass the envelope, as do duplicates and lone surrogates inside.
        assert_eq!(accepted(r#"{"id":4,"method":"A.b","params":[]}"#).3.as_deref(), Some("[]"));
        let (_, _, _, params) = accepted(r#"{"id":43,"method":"A.b","params":{"e":"1","e":"\ud800"}}"#);
        assert_eq!(params.as_deref(), Some(r#"{"e":"1","e":"\ud800"}"#));
        let (id, method, session, params) = accepted(
            r#"{"id":5,"method":"Runtime.evaluate","params":{"expression":"1+1"},"sessionId":"AB"}"#,
        );
        assert_eq!((id, method.as_str(), session.as_str()), (5, "Runtime.evaluate", "AB"));
        assert_eq!(params.as_deref(), Some(r#"{"expression":"1+1"}"#));
    }
}
