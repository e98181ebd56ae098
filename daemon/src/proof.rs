//! A daemon proves it is this user's before a client hands it anything secret (the owner token,
//! an agent's token, the extension's secret) or a signal. The port `daemon.json` names may be
//! held by anyone once our daemon has gone, another user's process included.
//!
//! The key is `<config dir>/daemon-key` (owner-only, made once). The client sends a fresh
//! random nonce to `GET /tabtunnel/hello?nonce=<64 hex>`, which the gate lets in without a
//! token (Host, Origin and fetch metadata checked as for every route); the daemon answers
//! `{"pid", "proof"}` with proof = HMAC-SHA256(key, DOMAIN ‖ port ‖ pid ‖ nonce). The client
//! checks it in constant time, on the connection it then sends its request on
//! (`mcp::daemon_api::send`). The answer is worth nothing without the key; the port in it keeps
//! a listener from relaying the question to a daemon of ours on another port, and the pid in it
//! is what `tabtunnel stop` may signal.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::path::Path;

pub const HELLO_PATH: &str = "/tabtunnel/hello";
const KEY_FILE: &str = "daemon-key";
/// Keeps this MAC from meaning anything anywhere else the key might ever be used.
const DOMAIN: &[u8] = b"tabtunnel daemon hello v1\0";
const NONCE_BYTES: usize = 32;

/// The key only this user's daemons (and clients) can read.
#[derive(Clone)]
pub struct Key(Vec<u8>);

impl Key {
    /// `<config dir>/daemon-key`, made on first use by whichever side needs it first.
    pub fn load_or_create(config_dir: &Path) -> Result<Key, String> {
        // Two first users at once: the one that lost the race to create it reads it.
        crate::token::load_or_create_secret(config_dir, KEY_FILE)
            .or_else(|_| crate::token::load_or_create_secret(config_dir, KEY_FILE))
            .map(|hex| Key(hex.into_bytes()))
    }

    fn mac(&self, port: u16, pid: u32, nonce: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("HMAC takes any key");
        mac.update(DOMAIN);
        mac.update(&port.to_be_bytes());
        mac.update(&pid.to_be_bytes());
        mac.update(nonce);
        mac
    }
}

/// What a daemon proves: the key, the port it listens on, its pid.
#[derive(Clone)]
pub struct Identity {
    pub key: Key,
    pub port: u16,
    pub pid: u32,
}

impl Identity {
    /// The answer to `GET /tabtunnel/hello?<query>`, or why there is none.
    pub fn answer(&self, query: Option<&str>) -> Result<String, &'static str> {
        let nonce = query
            .unwrap_or_default()
            .split('&')
            .find_map(|pair| pair.strip_prefix("nonce="))
            .and_then(from_hex)
            .filter(|n| n.len() == NONCE_BYTES)
            .ok_or("the hello takes ?nonce= and 64 hex digits")?;
        let proof = to_hex(&self.key.mac(self.port, self.pid, &nonce).finalize().into_bytes());
        Ok(serde_json::json!({ "pid": self.pid, "proof": proof }).to_string())
    }
}

/// A fresh question: the nonce, and the path that asks it.
pub fn challenge() -> ([u8; NONCE_BYTES], String) {
    let mut nonce = [0u8; NONCE_BYTES];
    getrandom::fill(&mut nonce).expect("the OS random source works");
    let path = format!("{HELLO_PATH}?nonce={}", to_hex(&nonce));
    (nonce, path)
}

/// The pid of the daemon that answered `reply` to `nonce` on `port`, if the answer proves it
/// holds `key`; else why not.
pub fn check(key: &Key, port: u16, nonce: &[u8], reply: &[u8]) -> Result<u32, String> {
    #[derive(serde::Deserialize)]
    struct Reply {
        pid: u32,
        proof: String,
    }
    let reply: Reply = serde_json::from_slice(reply)
        .map_err(|_| "its hello answer is not a tabtunnel daemon's".to_owned())?;
    let proof = from_hex(&reply.proof).ok_or("its proof is not hex")?;
    key.mac(port, reply.pid, nonce)
        .verify_slice(&proof)
        .map(|()| reply.pid)
        .map_err(|_| "it does not hold this user's key".to_owned())
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

/// A listener that is not our daemon, for tests: on a loopback port, it answers every request
/// 200 with `{}` (as a careless or hostile server would) and keeps every byte it was sent.
#[doc(hidden)]
pub mod testing {
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    pub struct Impostor {
        pub port: u16,
        heard: Arc<Mutex<Vec<u8>>>,
    }

    impl Impostor {
        pub async fn start() -> Impostor {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let port = listener.local_addr().expect("bound").port();
            let heard = Arc::new(Mutex::new(Vec::new()));
            let log = heard.clone();
            tokio::spawn(async move {
                while let Ok((mut socket, _)) = listener.accept().await {
                    let log = log.clone();
                    tokio::spawn(async move {
                        let mut buf = [0u8; 4096];
                        while let Ok(n @ 1..) = socket.read(&mut buf).await {
                            log.lock().unwrap().extend_from_slice(&buf[..n]);
                            if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                                let reply = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                                             content-length: 2\r\n\r\n{}";
                                if socket.write_all(reply.as_bytes()).await.is_err() {
                                    return;
                                }
                            }
                        }
                    });
                }
            });
            Impostor { port, heard }
        }

        /// Everything it was sent so far, as text.
        pub fn heard(&self) -> String {
            String::from_utf8_lossy(&self.heard.lock().unwrap()).into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(key: &Key) -> Identity {
        Identity { key: key.clone(), port: 9722, pid: 42 }
    }

    #[test]
    fn an_answer_proves_the_key_the_port_and_the_pid() {
        let dir = tempfile::tempdir().unwrap();
        let key = Key::load_or_create(dir.path()).unwrap();
        assert_eq!(Key::load_or_create(dir.path()).unwrap().0, key.0, "made once");
        assert!(!crate::platform::readable_by_others(&dir.path().join(KEY_FILE)).unwrap());
        let (nonce, path) = challenge();
        let query = path.split_once('?').unwrap().1;
        let reply = identity(&key).answer(Some(query)).unwrap();
        assert_eq!(check(&key, 9722, &nonce, reply.as_bytes()), Ok(42));
        // Another port, another nonce, another key: no proof.
        assert!(check(&key, 9723, &nonce, reply.as_bytes()).is_err());
        assert!(check(&key, 9722, &challenge().0, reply.as_bytes()).is_err());
        let other = Key(b"someone else's".to_vec());
        assert!(check(&other, 9722, &nonce, reply.as_bytes()).is_err());
        // A claimed pid other than the one proved.
        let mut forged: serde_json::Value = serde_json::from_str(&reply).unwrap();
        forged["pid"] = 1.into();
        assert!(check(&key, 9722, &nonce, forged.to_string().as_bytes()).is_err());
    }

    #[test]
    fn malformed_questions_and_answers_are_errors() {
        let key = Key(b"k".to_vec());
        let id = identity(&key);
        for query in
            [None, Some(""), Some("nonce="), Some("nonce=abc"), Some(&*"zz".repeat(32)), Some("nonce=00")]
        {
            assert!(id.answer(query).is_err(), "{query:?}");
        }
        assert!(id.answer(Some(&format!("x=1&nonce={}", "ab".repeat(32)))).is_ok());
        let nonce = [0u8; NONCE_BYTES];
        for reply in [&b""[..], b"{}", b"[1]", br#"{"pid":1,"proof":"xyz"}"#, br#"{"pid":-1,"proof":""}"#] {
            assert!(check(&key, 1, &nonce, reply).is_err());
        }
        assert_eq!(from_hex("é1"), None);
    }
}
