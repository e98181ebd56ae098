//! Small helpers at the Rust/JS boundary.

use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::{prelude::*, JsCast};

macro_rules! log {
    ($($t:tt)*) => { web_sys::console::log_1(&format!("[tabtunnel] {}", format_args!($($t)*)).into()) };
}

macro_rules! warn {
    ($($t:tt)*) => { web_sys::console::warn_1(&format!("[tabtunnel] {}", format_args!($($t)*)).into()) };
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    pub fn set_timeout(handler: &js_sys::Function, ms: i32) -> JsValue;
    /// `performance.now()`: milliseconds, finer than `Date.now()`.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub fn performance_now() -> f64;
    #[wasm_bindgen(js_name = queueMicrotask)]
    pub fn queue_microtask(callback: &js_sys::Function);
    /// `JSON.parse` of a JS string, which never enters wasm (js_sys's takes a `&str`).
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    pub fn parse_json(text: &JsValue) -> Result<JsValue, JsValue>;
    /// A WebSocket, seen through a `send` that takes a JS string (or bytes).
    type TextSocket;
    #[wasm_bindgen(method, js_name = send, catch)]
    fn send(this: &TextSocket, text: &js_sys::JsString) -> Result<(), JsValue>;
    #[wasm_bindgen(method, js_name = send, catch)]
    fn send_bytes(this: &TextSocket, bytes: &js_sys::Uint8Array) -> Result<(), JsValue>;
    /// `TextEncoder`, through an `encodeInto` that takes a JS string (web_sys's takes a `&str`).
    type Utf8Encoder;
    #[wasm_bindgen(constructor, js_class = TextEncoder)]
    fn new() -> Utf8Encoder;
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(this: &Utf8Encoder, text: &js_sys::JsString, into: &js_sys::Uint8Array) -> EncodedInto;
    type EncodedInto;
    #[wasm_bindgen(method, getter)]
    fn written(this: &EncodedInto) -> f64;
}

/// Above this many UTF-16 units a message leaves as UTF-8 bytes (see [`send_js`]).
const LARGE_MESSAGE: u32 = 1 << 20;

/// `WebSocket.send` of a JS string, which never enters wasm (web_sys's takes a `&str`). A large
/// one (an answer of megabytes) is encoded into one UTF-8 buffer first and sent as a binary
/// message, which the daemon reads as text all the same: `send` of a long string joined from
/// pieces flattens it and then encodes it, `encodeInto` does both at once (measured on a 64 MiB
/// answer: 100-134 ms in the worker instead of 296-339, the whole trip ~200 ms shorter).
pub fn send_js(ws: &web_sys::WebSocket, text: &js_sys::JsString) -> Result<(), JsValue> {
    let socket = ws.unchecked_ref::<TextSocket>();
    if text.length() < LARGE_MESSAGE {
        return socket.send(text);
    }
    // At most 3 bytes of UTF-8 per UTF-16 unit; the pages past what is written are never touched.
    let buffer = js_sys::Uint8Array::new_with_length(text.length().saturating_mul(3));
    let written = Utf8Encoder::new().encode_into(text, &buffer).written() as u32;
    socket.send_bytes(&buffer.subarray(0, written))
}

/// `JSON.stringify(value)` as a JS string, kept out of wasm; `undefined` (a command without a
/// result) is `{}`.
pub fn json_js(value: &JsValue) -> Option<js_sys::JsString> {
    if value.is_undefined() {
        return Some("{}".into());
    }
    let text = js_sys::JSON::stringify(value).ok()?;
    text.is_string().then_some(text)
}

/// A serde value as a plain JS object. Through JSON text on purpose: serde-wasm-bindgen would
/// produce `Map`s, which chrome.* APIs do not accept as objects.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    let text = serde_json::to_string(value).expect("plain data always serializes");
    js_sys::JSON::parse(&text).expect("serde_json writes valid JSON")
}

/// A JS value read into a serde type; `None` when it does not fit.
pub fn from_js<T: DeserializeOwned>(value: &JsValue) -> Option<T> {
    serde_json::from_str(&json_text(value)?).ok()
}

/// `JSON.stringify(value)`; `None` for `undefined` and what JSON cannot represent.
pub fn json_text(value: &JsValue) -> Option<String> {
    if value.is_undefined() {
        return None;
    }
    js_sys::JSON::stringify(value).ok()?.as_string()
}

/// The message of a thrown value or rejected promise (chrome.* reject with `Error`s).
pub fn error_message(err: &JsValue) -> String {
    if let Some(e) = err.dyn_ref::<js_sys::Error>() {
        return e.message().into();
    }
    err.as_string().or_else(|| json_text(err)).unwrap_or_else(|| "unknown error".into())
}

/// Resolves after `ms` milliseconds (setTimeout exists in both the worker and the page).
pub async fn sleep(ms: u32) {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        set_timeout(&resolve, ms as i32);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Resolves once `performance.now()` has reached `at`: a machine's `WakeAt` (a timer may fire
/// a little early, and a machine woken before its deadline would find nothing due and wait on).
pub async fn sleep_until(at: f64) {
    loop {
        let left = at - performance_now();
        if left <= 0.0 {
            return;
        }
        sleep(left.ceil() as u32).await;
    }
}

/// `work`'s outcome, or `None` if it took longer than `ms` (it is dropped then).
pub async fn within<T>(ms: u32, work: impl std::future::Future<Output = T>) -> Option<T> {
    let timeout = sleep(ms);
    futures_util::pin_mut!(work, timeout);
    match futures_util::future::select(work, timeout).await {
        futures_util::future::Either::Left((outcome, _)) => Some(outcome),
        futures_util::future::Either::Right(_) => None,
    }
}
