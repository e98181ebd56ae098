//! Where the daemon listens: its default port, and the URLs it hands out for it.

pub const DEFAULT_PORT: u16 = 9722;

/// `scheme://127.0.0.1:PORT[/<token>]path`
pub(crate) fn url(port: u16, token: Option<&str>, scheme: &str, path: &str) -> String {
    match token {
        Some(token) => format!("{scheme}://127.0.0.1:{port}/{token}{path}"),
        None => format!("{scheme}://127.0.0.1:{port}{path}"),
    }
}
