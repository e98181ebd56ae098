//! The WebSocket upgrade of every socket the daemon serves, on tokio-tungstenite directly.
//!
//! Why not axum's `WebSocketUpgrade`: its socket sends whole messages only, and tungstenite
//! copies a whole message into its write buffer before writing it (and keeps that buffer's
//! capacity for the socket's life, tungstenite-rs #500). A 64 MiB answer then cost the daemon
//! two more copies of it. With the stream itself, the client writer sends a large frame as
//! fragments of the bytes it already holds (`server::feed_frame`). The handshake is RFC 6455's
//! over HTTP/1.1, the only HTTP `accept.rs` serves.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use std::future::Future;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::WebSocketStream;

pub type Socket = WebSocketStream<TokioIo<Upgraded>>;

/// A request to upgrade to a WebSocket, checked; [`Upgrade::on_upgrade`] answers it.
pub struct Upgrade {
    accept: HeaderValue,
    on_upgrade: OnUpgrade,
}

impl<S: Send + Sync> FromRequestParts<S> for Upgrade {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Response> {
        if parts.method != Method::GET {
            return Err(refuse(StatusCode::METHOD_NOT_ALLOWED, "a WebSocket upgrade is a GET"));
        }
        if !has_token(&parts.headers, header::CONNECTION, "upgrade")
            || !has_token(&parts.headers, header::UPGRADE, "websocket")
        {
            return Err(refuse(StatusCode::BAD_REQUEST, "this is a WebSocket endpoint: upgrade to one"));
        }
        if parts.headers.get(header::SEC_WEBSOCKET_VERSION).is_none_or(|v| v.as_bytes() != b"13") {
            return Err(refuse(StatusCode::BAD_REQUEST, "only WebSocket version 13 is spoken"));
        }
        let Some(key) = parts.headers.get(header::SEC_WEBSOCKET_KEY) else {
            return Err(refuse(StatusCode::BAD_REQUEST, "the upgrade has no Sec-WebSocket-Key"));
        };
        let accept =
            HeaderValue::from_str(&derive_accept_key(key.as_bytes())).expect("base64 is a header value");
        let Some(on_upgrade) = parts.extensions.remove::<OnUpgrade>() else {
            return Err(refuse(StatusCode::UPGRADE_REQUIRED, "this connection cannot be upgraded"));
        };
        Ok(Self { accept, on_upgrade })
    }
}

impl Upgrade {
    /// Switches protocols, then runs `session` on the socket (once the client has the answer).
    pub fn on_upgrade<F, Fut>(self, config: WebSocketConfig, session: F) -> Response
    where
        F: FnOnce(Socket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let on_upgrade = self.on_upgrade;
        tokio::spawn(async move {
            match on_upgrade.await {
                Ok(upgraded) => {
                    let socket =
                        WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config));
                    session(socket.await).await;
                }
                Err(e) => tracing::debug!("a WebSocket upgrade failed: {e}"),
            }
        });
        (
            StatusCode::SWITCHING_PROTOCOLS,
            [
                (header::CONNECTION, HeaderValue::from_static("upgrade")),
                (header::UPGRADE, HeaderValue::from_static("websocket")),
                (header::SEC_WEBSOCKET_ACCEPT, self.accept),
            ],
        )
            .into_response()
    }
}

fn refuse(status: StatusCode, why: &str) -> Response {
    (status, format!("tabtunnel: {why}\n")).into_response()
}

/// Whether header `name` lists `token` (comma-separated, any case).
fn has_token(headers: &HeaderMap, name: HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|item| item.trim().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_tokens_are_found_in_lists_in_any_case() {
        let mut headers = HeaderMap::new();
        headers.append(header::CONNECTION, HeaderValue::from_static("keep-alive, Upgrade"));
        assert!(has_token(&headers, header::CONNECTION, "upgrade"));
        assert!(!has_token(&headers, header::UPGRADE, "websocket"));
        headers.append(header::UPGRADE, HeaderValue::from_static("h2c"));
        headers.append(header::UPGRADE, HeaderValue::from_static("WebSocket"));
        assert!(has_token(&headers, header::UPGRADE, "websocket"));
    }

    #[test]
    fn the_accept_key_is_rfc_6455s() {
        // RFC 6455, section 1.3.
        assert_eq!(derive_accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }
}
