//! Writes sent by workers that belong to no tab, on the sites shared tabs show.
//!
//! The gesture guard pauses the writes of a shared tab's documents, frames and dedicated
//! workers (their debugger sessions' `Fetch`). A shared worker or a service worker is no tab's:
//! Chrome attaches neither under a page, and the extension finds them only by polling, after
//! their first requests. So an agent's page could start a `SharedWorker` from a `blob:` script
//! of its own, or register a service worker, and pay from there unasked. Chrome tells such
//! requests apart (`tabId` -1) and names the origin that sent them; two `declarativeNetRequest`
//! session rules refuse their writes sent by, or to, a host a shared tab showed (or began to
//! load, so the rule is in place before its document runs) since it was shared, in its top frame
//! or any frame (a `data:` worker has no origin, but what it could carry from the page, a
//! token read there, only that page's site takes). Hosts are kept until the tab is no longer
//! shared: a worker outlives the page that started it as long as any page of its origin holds it
//! (one kept for going back, too). What the human's own pages on such a site send from their
//! workers is refused as well meanwhile (a service worker's background sync, or a write it
//! passes on).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use tabtunnel_wire::TabId;

use crate::workers::origin_of;

/// The rules' ids among the extension's session rules (the navigation rules count up from 1).
pub const RULE_IDS: [i32; 2] = [i32::MAX, i32::MAX - 1];
/// Methods that change something on a server (`declarativeNetRequest`'s names).
pub const WRITE_METHODS: &[&str] = &["connect", "delete", "patch", "post", "put", "other"];
/// Every resource type but documents.
pub const SUBRESOURCES: &[&str] = &[
    "stylesheet",
    "script",
    "image",
    "font",
    "object",
    "xmlhttprequest",
    "ping",
    "csp_report",
    "media",
    "websocket",
    "webtransport",
    "webbundle",
    "other",
];

/// The hosts each shared tab showed, and the rules last put in place.
#[derive(Debug, Default)]
pub struct OffTabWrites {
    hosts: BTreeMap<TabId, BTreeSet<String>>,
    /// What the browser's rules cover now (`None`: unknown, as for a new worker: rules of an
    /// earlier one may be in place).
    installed: Option<BTreeSet<String>>,
}

/// A change of the browser's rules: remove [`RULE_IDS`], then add `rules`.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleUpdate {
    pub rules: Vec<Value>,
    hosts: BTreeSet<String>,
}

impl OffTabWrites {
    /// A shared tab (or one being shared) shows or starts to load `url` in some frame.
    pub fn showed(&mut self, tab_id: TabId, url: &str) {
        if let Some(host) = host_of(url) {
            self.hosts.entry(tab_id).or_default().insert(host);
        }
    }

    /// The tab is no longer shared.
    pub fn left(&mut self, tab_id: TabId) {
        self.hosts.remove(&tab_id);
    }

    /// The rules the hosts call for, if they differ from those in place; once applied, report it
    /// with [`OffTabWrites::applied`].
    pub fn update(&self) -> Option<RuleUpdate> {
        let hosts: BTreeSet<String> = self.hosts.values().flatten().cloned().collect();
        if self.installed.as_ref() == Some(&hosts) {
            return None;
        }
        let rule = |id: i32, sites: &str| {
            let mut condition = json!({
                "tabIds": [-1],
                "requestMethods": WRITE_METHODS,
                "resourceTypes": SUBRESOURCES,
            });
            condition[sites] = json!(hosts);
            json!({ "id": id, "priority": 1, "action": { "type": "block" }, "condition": condition })
        };
        let rules = if hosts.is_empty() {
            Vec::new()
        } else {
            // Sent by such a site's worker, or to such a site by a worker of no origin (`data:`),
            // which could carry what the agent read in the page.
            vec![rule(RULE_IDS[0], "initiatorDomains"), rule(RULE_IDS[1], "requestDomains")]
        };
        Some(RuleUpdate { rules, hosts })
    }

    /// The browser took `update`.
    pub fn applied(&mut self, update: RuleUpdate) {
        self.installed = Some(update.hosts);
    }
}

/// The host of an http(s) URL (or of the page that made a `blob:` one), lower case, without
/// user, port or the brackets of an IPv6 address, as `initiatorDomains` names it.
fn host_of(url: &str) -> Option<String> {
    let origin = origin_of(url)?;
    let authority = &origin[origin.find("://")? + 3..];
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split_once(']')?.0,
        None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domains(update: &RuleUpdate) -> Vec<&str> {
        let [by, to] = &update.rules[..] else { panic!("two rules: {:?}", update.rules) };
        assert_eq!(by["condition"]["initiatorDomains"], to["condition"]["requestDomains"]);
        let hosts = by["condition"]["initiatorDomains"].as_array().unwrap();
        hosts.iter().map(|d| d.as_str().unwrap()).collect()
    }

    #[test]
    fn hosts_are_read_as_chrome_names_initiators() {
        assert_eq!(host_of("http://127.0.0.1:8000/shop").as_deref(), Some("127.0.0.1"));
        assert_eq!(host_of("https://Shop.Example/x?y#z").as_deref(), Some("shop.example"));
        assert_eq!(host_of("https://user:pw@bank.test:443/").as_deref(), Some("bank.test"));
        assert_eq!(host_of("blob:https://a.test/8c4e-11").as_deref(), Some("a.test"));
        assert_eq!(host_of("http://[::1]:9/").as_deref(), Some("::1"));
        for none in ["about:blank", "data:text/html,x", "chrome-extension://abc/p.html", "file:///x", ""] {
            assert_eq!(host_of(none), None, "{none}");
        }
    }

    #[test]
    fn worker_writes_are_refused_on_every_site_a_shared_tab_showed_until_it_is_unshared() {
        let mut w = OffTabWrites::default();
        // A new worker does not know what an earlier one left: it clears the rules.
        let first = w.update().expect("the rules set at start");
        assert!(first.rules.is_empty());
        w.applied(first);
        assert_eq!(w.update(), None, "nothing changed");

        w.showed(1, "https://shop.example/checkout");
        w.showed(1, "https://pay.example/frame"); // a frame of it
        w.showed(2, "http://127.0.0.1:8000/app");
        w.showed(2, "about:blank");
        let update = w.update().expect("rules");
        assert_eq!(domains(&update), ["127.0.0.1", "pay.example", "shop.example"]);
        for (rule, id) in update.rules.iter().zip(RULE_IDS) {
            assert_eq!(rule["id"], id);
            assert_eq!(rule["action"]["type"], "block");
            assert_eq!(rule["condition"]["tabIds"], json!([-1]), "only requests of no tab");
            assert_eq!(rule["condition"]["requestMethods"], json!(WRITE_METHODS));
            assert!(!rule.to_string().contains("main_frame"), "never a document");
        }
        w.applied(update);
        assert_eq!(w.update(), None);

        // A tab that went on to another site still holds the first: a worker started there may
        // live on in a page kept for going back.
        w.showed(1, "https://news.example/");
        let update = w.update().unwrap();
        assert_eq!(domains(&update), ["127.0.0.1", "news.example", "pay.example", "shop.example"]);
        w.applied(update);

        w.left(1);
        let update = w.update().unwrap();
        assert_eq!(domains(&update), ["127.0.0.1"]);
        w.applied(update);
        w.left(2);
        let update = w.update().unwrap();
        assert!(update.rules.is_empty(), "no shared tab: the rules go");
        w.applied(update);
        assert_eq!(w.update(), None);
    }

    #[test]
    fn an_update_not_applied_is_asked_for_again() {
        let mut w = OffTabWrites::default();
        w.applied(w.update().unwrap());
        w.showed(1, "https://shop.example/");
        let failed = w.update().unwrap();
        drop(failed); // the browser refused it: nothing changed there
        assert_eq!(domains(&w.update().unwrap()), ["shop.example"]);
    }
}
