//! The navigation endpoint's credential: a MAC of one agent and one tab under the daemon's
//! navigation key, never the key itself.
//!
//! The browser's redirect to the endpoint shows in the agent's own network events, so whatever
//! the redirect URL carries, the agent learns. With a MAC of `(agent, tab)` in its path it can
//! only speak for the tab it already drives: another agent's tab, or another agent's name, needs
//! another MAC, which only the key makes. The extension writes the redirects
//! ([`redirect_base`]); the daemon checks them ([`check`]).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Where the endpoint lives under the daemon: `/<mac>/tabtunnel/navigation/<agent>/<tab>`.
pub const PATH: &str = "/tabtunnel/navigation";

fn mac(key: &str, agent: &str, tab: i32) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key.as_bytes()).expect("HMAC takes any key");
    // The agent's name has no NUL (names are checked), so agent and tab cannot run together.
    mac.update(agent.as_bytes());
    mac.update(&[0]);
    mac.update(tab.to_string().as_bytes());
    mac
}

/// The MAC of `(agent, tab)`, lowercase hex.
pub fn sign(key: &str, agent: &str, tab: i32) -> String {
    mac(key, agent, tab).finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `presented` is the MAC of `(agent, tab)`, compared in constant time.
pub fn check(key: &str, agent: &str, tab: i32, presented: &str) -> bool {
    let Some(bytes) = unhex(presented) else { return false };
    mac(key, agent, tab).verify_slice(&bytes).is_ok()
}

/// Whether `presented` (the path's first segment) is the MAC of the agent and tab `path`
/// (`/tabtunnel/navigation/<agent>/<tab>`) names; `false` for any other path.
pub fn check_path(key: &str, presented: &str, path: &str) -> bool {
    let Some(rest) = path.strip_prefix(PATH).and_then(|r| r.strip_prefix('/')) else { return false };
    let Some((agent, tab)) = rest.split_once('/') else { return false };
    match tab.parse::<i32>() {
        Ok(tab) if !agent.is_empty() => check(key, agent, tab, presented),
        _ => false,
    }
}

/// From the daemon's `navigation_url` (`http://HOST:PORT/<key>/tabtunnel/navigation`): the
/// base of `(agent, tab)`'s redirects, `http://HOST:PORT/<mac>/tabtunnel/navigation/<agent>/<tab>`
/// (the navigated URL follows as the query). `None` for a URL not of that shape.
pub fn redirect_base(navigation_url: &str, agent: &str, tab: i32) -> Option<String> {
    let (origin, key) = split(navigation_url)?;
    Some(format!("{origin}/{}{PATH}/{agent}/{tab}", sign(key, agent, tab)))
}

/// The daemon's origin (`http://HOST:PORT`) in `navigation_url`.
pub fn origin(navigation_url: &str) -> Option<&str> {
    split(navigation_url).map(|(origin, _)| origin)
}

fn split(navigation_url: &str) -> Option<(&str, &str)> {
    let rest = navigation_url.strip_suffix(PATH)?;
    let (origin, key) = rest.rsplit_once('/')?;
    (origin.starts_with("http://") && origin["http://".len()..].split('/').count() == 1 && !key.is_empty())
        .then_some((origin, key))
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "fedcba9876543210fedcba9876543210";

    #[test]
    fn a_mac_speaks_for_its_own_agent_and_tab_only() {
        let mac = sign(KEY, "eve", 5);
        assert_eq!(mac.len(), 64);
        assert!(check(KEY, "eve", 5, &mac));
        assert!(check(KEY, "eve", 5, &mac.to_ascii_uppercase()));
        for (agent, tab) in [("alice", 5), ("eve", 6), ("eve", 50), ("eve5", 0), ("ev", 5)] {
            assert!(!check(KEY, agent, tab, &mac), "{agent} {tab}");
        }
        assert!(!check("another key", "eve", 5, &mac));
        assert!(check_path(KEY, &mac, "/tabtunnel/navigation/eve/5"));
        for path in [
            "/tabtunnel/navigation/alice/5",
            "/tabtunnel/navigation/eve/5/x",
            "/tabtunnel/navigation/eve",
            "/x/eve/5",
            "/tabtunnel/navigation//5",
        ] {
            assert!(!check_path(KEY, &mac, path), "{path}");
        }
        for bad in ["", "x", &mac[..62], &format!("{mac}00"), KEY, &mac.replace(&mac[..1], "g")] {
            assert!(!check(KEY, "eve", 5, bad), "{bad}");
        }
    }

    #[test]
    fn the_extension_writes_redirects_without_the_key() {
        let url = format!("http://127.0.0.1:9722/{KEY}{PATH}");
        let base = redirect_base(&url, "eve", 5).unwrap();
        assert_eq!(base, format!("http://127.0.0.1:9722/{}{PATH}/eve/5", sign(KEY, "eve", 5)));
        assert!(!base.contains(KEY));
        assert_eq!(origin(&url), Some("http://127.0.0.1:9722"));
        for bad in [
            "",
            "http://127.0.0.1:9722/tabtunnel/navigation",
            "http://h/a/b/tabtunnel/navigation",
            "ws://h/k/x",
        ] {
            assert_eq!(redirect_base(bad, "eve", 5), None, "{bad}");
        }
    }
}
