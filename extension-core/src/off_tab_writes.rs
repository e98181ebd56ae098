//! Writes sent by workers that belong to no tab, while tabs are shared.
//!
//! The gesture guard pauses the writes of a shared tab's documents, frames and dedicated
//! workers (their debugger sessions' `Fetch`). A shared worker or a service worker is no tab's:
//! Chrome attaches neither under a page, and the extension finds them only by polling, after
//! their first requests. So an agent's page could start a `SharedWorker` from a `blob:` script
//! of its own, or register a service worker, and pay from there unasked. Chrome tells such
//! requests apart (`tabId` -1) and names the origin that sent them; `declarativeNetRequest`
//! session rules refuse their writes
//! - sent by, or to, a host a shared tab showed (or began to load, so the rule is in place before
//!   its document runs) since it was shared, in its top frame or any frame. Hosts are kept until
//!   the tab is no longer shared: a worker outlives the page that started it as long as any page
//!   of its origin holds it (one kept for going back, too);
//! - sent to another site than the sender's (`thirdParty`, which a `data:` worker's requests
//!   always are: it has no origin, so it could send a page's token, or the human's cookies kept
//!   for cross-site use, to any site).
//!
//! A shared tab's own writes are refused the same way while its debugger is away for a reset
//! (detached, then attached again for the next client: its page runs on, unguarded, and an agent
//! starts a reset at will by leaving): [`OffTabWrites::unguarded`], from before the detach until
//! the guard is armed again.
//!
//! Tabs born while tabs are shared have every write refused until it is known whose they are
//! ([`crate::newborn_tabs`]): a shared page's popup until it is armed. Their pages' scripts and
//! frames, to any site; their first document only when a page on a host a shared tab showed
//! sent it (a form posted into a new window), so that the human's own forms into a new window,
//! elsewhere, go as they did.
//!
//! What the human's own pages send from their workers is refused as well meanwhile: on such a
//! site, and to another site from any (a service worker's background sync, or analytics it
//! sends on). Should the browser refuse the rules (a host it cannot take), every write of a
//! worker outside any tab is refused instead until the hosts change: failing open would let any
//! page that names such a host pay from a worker.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};
use tabtunnel_wire::TabId;

use crate::newborn_tabs::NewbornTabs;
use crate::rule_priorities::{OFF_TAB, OVER_POLICY_RULES};
use crate::workers::origin_of;

/// The rules' ids among the extension's session rules (the navigation rules count up from 1).
pub const RULE_IDS: [i32; 8] = [
    i32::MAX,
    i32::MAX - 1,
    i32::MAX - 2,
    i32::MAX - 3,
    i32::MAX - 4,
    i32::MAX - 5,
    i32::MAX - 6,
    i32::MAX - 7,
];
/// What a document of a shared tab, or of a tab not known yet, is loaded with: no
/// `fetchLater()` (its quota is none, so the call throws).
pub const NO_DEFERRED_FETCH: &str = "deferred-fetch=(), deferred-fetch-minimal=()";
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

/// The hosts each shared tab showed, the tabs without their guard, the tabs just born, and the
/// rules last put in place.
#[derive(Debug, Default)]
pub struct OffTabWrites {
    /// Every shared tab (or one being shared), with the hosts it showed.
    hosts: BTreeMap<TabId, BTreeSet<String>>,
    unguarded: BTreeSet<TabId>,
    /// Shared tabs loading a document begun before their guard was armed (`late_documents`).
    late: BTreeSet<TabId>,
    /// Tabs reloaded into a browsing context group of their own (`crate::relatives`).
    severing: BTreeSet<TabId>,
    pub newborn: NewbornTabs,
    /// What the browser's rules cover now (`None`: unknown, as for a new worker: rules of an
    /// earlier one may be in place).
    installed: Option<Cover>,
    /// Hosts whose rules the browser refused: while they are the hosts, every site is covered.
    refused: Option<BTreeSet<String>>,
}

/// What a set of rules covers: the hosts named, or every site; the tabs unguarded; and, while
/// a tab is shared, the tabs known (every other tab's writes are refused).
#[derive(Debug, Clone, PartialEq)]
struct Cover {
    hosts: BTreeSet<String>,
    everywhere: bool,
    tabs: BTreeSet<TabId>,
    known: Option<Known>,
    severing: BTreeSet<TabId>,
}

/// The tabs whose writes go while a tab is shared: every write, or only the documents they send;
/// and the tabs shared.
#[derive(Debug, Clone, PartialEq)]
struct Known {
    tabs: BTreeSet<TabId>,
    unclaimed: BTreeSet<TabId>,
    shared: BTreeSet<TabId>,
}

/// A change of the browser's rules: remove [`RULE_IDS`], then add `rules`.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleUpdate {
    pub rules: Vec<Value>,
    cover: Cover,
}

impl OffTabWrites {
    /// A shared tab (or one being shared) shows or starts to load `url` in some frame.
    pub fn showed(&mut self, tab_id: TabId, url: &str) {
        self.hosts.entry(tab_id).or_default().extend(names_of(url));
    }

    /// The tab is no longer shared.
    pub fn left(&mut self, tab_id: TabId) {
        self.hosts.remove(&tab_id);
        self.unguarded.remove(&tab_id);
        self.late.remove(&tab_id);
    }

    /// A shared tab's debugger goes away for a while (`true`: every write of the tab is refused,
    /// documents included), or its guard is armed again (`false`).
    pub fn unguarded(&mut self, tab_id: TabId, unguarded: bool) {
        if unguarded {
            self.unguarded.insert(tab_id);
        } else {
            self.unguarded.remove(&tab_id);
        }
    }

    /// Whether a shared tab's writes are refused while a document it loads is not yet the
    /// guard's ([`crate::late_documents`]), as for [`OffTabWrites::unguarded`].
    pub fn late(&mut self, tab_id: TabId, held: bool) {
        if held {
            self.late.insert(tab_id);
        } else {
            self.late.remove(&tab_id);
        }
    }

    /// Whether the documents a tab loads get [`crate::relatives::SEVERING_POLICY`], which puts
    /// each in a browsing context group of its own (`true`, until `false`).
    pub fn severing(&mut self, tab_id: TabId, severing: bool) {
        if severing {
            self.severing.insert(tab_id);
        } else {
            self.severing.remove(&tab_id);
        }
    }

    /// The rules the hosts call for, if they differ from those in place; once applied, report it
    /// with [`OffTabWrites::applied`], or [`OffTabWrites::refused`].
    pub fn update(&self) -> Option<RuleUpdate> {
        let hosts: BTreeSet<String> = self.hosts.values().flatten().cloned().collect();
        let everywhere = !hosts.is_empty() && self.refused.as_ref() == Some(&hosts);
        let known = match self.newborn.known() {
            Some(tabs) if !self.hosts.is_empty() => Some(Known {
                tabs: tabs.clone(),
                unclaimed: self.newborn.unclaimed().collect(),
                shared: self.hosts.keys().copied().collect(),
            }),
            _ => None,
        };
        let tabs = self.unguarded.union(&self.late).copied().collect();
        let cover = Cover { hosts, everywhere, tabs, known, severing: self.severing.clone() };
        if self.installed.as_ref() == Some(&cover) {
            return None;
        }
        let rule = |id: i32, only: Option<(&str, Value)>| {
            let mut condition = json!({
                "tabIds": [-1],
                "requestMethods": WRITE_METHODS,
                "resourceTypes": SUBRESOURCES,
            });
            if let Some((key, value)) = only {
                condition[key] = value;
            }
            json!({ "id": id, "priority": OFF_TAB, "action": { "type": "block" }, "condition": condition })
        };
        let mut rules = if cover.hosts.is_empty() {
            Vec::new()
        } else if cover.everywhere {
            vec![rule(RULE_IDS[0], None)]
        } else {
            vec![
                // Sent by such a site's worker,
                rule(RULE_IDS[0], Some(("initiatorDomains", json!(cover.hosts)))),
                // or to such a site by a worker of another (or of none),
                rule(RULE_IDS[1], Some(("requestDomains", json!(cover.hosts)))),
                // or by any worker to another site than its own (a `data:` worker's, always).
                rule(RULE_IDS[2], Some(("domainType", json!("thirdParty")))),
            ]
        };
        if !cover.tabs.is_empty() {
            let every_type: Vec<&str> =
                ["main_frame", "sub_frame"].iter().chain(SUBRESOURCES).copied().collect();
            let condition =
                json!({ "tabIds": cover.tabs, "requestMethods": WRITE_METHODS, "resourceTypes": every_type });
            rules.push(json!({ "id": RULE_IDS[3], "priority": OVER_POLICY_RULES, "action": { "type": "block" }, "condition": condition }));
        }
        if let Some(known) = &cover.known {
            let condition = |types: Vec<&str>, also: &BTreeSet<TabId>| {
                let excluded: Vec<TabId> =
                    std::iter::once(-1).chain(known.tabs.union(also).copied()).collect();
                json!({ "excludedTabIds": excluded, "requestMethods": WRITE_METHODS, "resourceTypes": types })
            };
            let scripts_and_frames = ["sub_frame"].iter().chain(SUBRESOURCES).copied().collect();
            let scripts = condition(scripts_and_frames, &BTreeSet::new());
            rules.push(json!({ "id": RULE_IDS[4], "priority": OFF_TAB, "action": { "type": "block" }, "condition": scripts }));
            if !cover.hosts.is_empty() {
                // A tab seen born that no page claimed yet sends its documents (a form the human
                // sends in a tab just opened); a form posted into a popup goes as it is born.
                let mut documents = condition(vec!["main_frame"], &known.unclaimed);
                if !cover.everywhere {
                    documents["initiatorDomains"] = json!(cover.hosts);
                }
                rules.push(json!({ "id": RULE_IDS[5], "priority": OFF_TAB, "action": { "type": "block" }, "condition": documents }));
            }
            // What a page queues with `fetchLater()` the browser sends itself, and for a
            // document begun before its guard was armed (a popup's first page), past the guard
            // for the document's whole life: the documents of shared tabs, and of tabs not known
            // yet, have none. Set, not appended: one policy field that does not parse (a page's
            // own, seen on real sites) makes the browser drop the whole header, ours with it, so
            // these documents lose the page's own policy.
            let human: Vec<TabId> = known.tabs.difference(&known.shared).copied().collect();
            let header =
                json!({ "header": "permissions-policy", "operation": "set", "value": NO_DEFERRED_FETCH });
            let mut condition = json!({ "resourceTypes": ["main_frame", "sub_frame"] });
            if !human.is_empty() {
                condition["excludedTabIds"] = json!(human);
            }
            let action = json!({ "type": "modifyHeaders", "responseHeaders": [header] });
            rules.push(json!({ "id": RULE_IDS[6], "priority": OVER_POLICY_RULES, "action": action, "condition": condition }));
        }
        if !cover.severing.is_empty() {
            let header = json!({
                "header": "cross-origin-opener-policy",
                "operation": "set",
                "value": crate::relatives::SEVERING_POLICY,
            });
            let condition = json!({ "tabIds": cover.severing, "resourceTypes": ["main_frame"] });
            let action = json!({ "type": "modifyHeaders", "responseHeaders": [header] });
            rules.push(json!({ "id": RULE_IDS[7], "priority": OVER_POLICY_RULES, "action": action, "condition": condition }));
        }
        Some(RuleUpdate { rules, cover })
    }

    /// The browser took `update`.
    pub fn applied(&mut self, update: RuleUpdate) {
        self.installed = Some(update.cover);
    }

    /// The browser refused `update` and kept what it had: the next update covers every site
    /// for as long as the hosts stay these. Whether it should be asked for at once.
    pub fn refused(&mut self, update: RuleUpdate) -> bool {
        if update.cover.everywhere || update.cover.hosts.is_empty() {
            return false; // nothing narrower to fall back from
        }
        self.refused = Some(update.cover.hosts);
        true
    }
}

/// Every name the browser may give the host of an http(s) URL (or of the page that made a `blob:`
/// one) when it matches `initiatorDomains` and `requestDomains`: lower case, without user or
/// port; an IPv6 address with and without its brackets, a name with and without its trailing
/// dots (`localhost.` is another origin than `localhost`, though the same host).
fn names_of(url: &str) -> Vec<String> {
    let Some(host) = host_of(url) else { return Vec::new() };
    let mut names = vec![host.clone()];
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        names.push(v6.to_owned());
    } else {
        let bare = host.trim_end_matches('.');
        if bare != host && !bare.is_empty() {
            names.push(bare.to_owned());
        }
    }
    names
}

/// The host of an http(s) URL (or of the page that made a `blob:` one), lower case, without
/// user or port, as the URL writes it (an IPv6 address in brackets).
fn host_of(url: &str) -> Option<String> {
    let origin = origin_of(url)?;
    let authority = &origin[origin.find("://")? + 3..];
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(v6) => &host[..v6.find(']')? + 2],
        None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
    };
    (!host.is_empty() && host != "[]").then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::newborn_tabs::CLAIM_MS;

    fn domains(update: &RuleUpdate) -> Vec<&str> {
        let [by, to, cross_site] = &update.rules[..] else { panic!("three rules: {:?}", update.rules) };
        assert_eq!(by["condition"]["initiatorDomains"], to["condition"]["requestDomains"]);
        assert_eq!(cross_site["condition"]["domainType"], "thirdParty");
        let hosts = by["condition"]["initiatorDomains"].as_array().unwrap();
        hosts.iter().map(|d| d.as_str().unwrap()).collect()
    }

    #[test]
    fn hosts_are_named_every_way_chrome_may_name_them() {
        assert_eq!(names_of("http://127.0.0.1:8000/shop"), ["127.0.0.1"]);
        assert_eq!(names_of("https://Shop.Example/x?y#z"), ["shop.example"]);
        assert_eq!(names_of("https://user:pw@bank.test:443/"), ["bank.test"]);
        assert_eq!(names_of("blob:https://a.test/8c4e-11"), ["a.test"]);
        // Red team run 9: a page on [::1] and one on `localhost.` paid from a shared worker.
        assert_eq!(names_of("http://[::1]:9/"), ["[::1]", "::1"]);
        assert_eq!(names_of("http://[FE80::1]/"), ["[fe80::1]", "fe80::1"]);
        assert_eq!(names_of("http://localhost.:8000/shop"), ["localhost.", "localhost"]);
        assert_eq!(names_of("https://shop.example../"), ["shop.example..", "shop.example"]);
        for none in [
            "about:blank",
            "data:text/html,x",
            "chrome-extension://abc/p.html",
            "file:///x",
            "",
            "http://[]/",
        ] {
            assert_eq!(names_of(none), Vec::<String>::new(), "{none}");
        }
    }

    #[test]
    fn refused_rules_fall_back_to_every_site_until_the_hosts_change() {
        let mut w = OffTabWrites::default();
        w.applied(w.update().unwrap());
        w.showed(1, "https://shop.example/");
        let refused = w.update().unwrap();
        assert!(w.refused(refused), "asked for again at once");
        let everywhere = w.update().expect("the fallback");
        let [rule] = &everywhere.rules[..] else { panic!("one rule: {:?}", everywhere.rules) };
        assert_eq!(rule["condition"]["tabIds"], json!([-1]));
        assert_eq!(rule["condition"]["requestMethods"], json!(WRITE_METHODS));
        for key in ["initiatorDomains", "requestDomains", "domainType"] {
            assert!(rule["condition"].get(key).is_none(), "every site: {rule}");
        }
        // Never a loop: the fallback names no host the browser could refuse.
        assert!(!w.refused(everywhere.clone()));
        w.applied(everywhere);
        assert_eq!(w.update(), None);
        // Other hosts: named rules are tried again.
        w.showed(2, "https://news.example/");
        assert_eq!(domains(&w.update().unwrap()), ["news.example", "shop.example"]);
        // No shared tab: no rule at all, whatever was refused.
        w.left(1);
        w.left(2);
        assert!(w.update().unwrap().rules.is_empty());
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
        assert_eq!(update.rules.len(), 3, "no tab without its guard");
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
    fn a_tab_without_its_guard_has_every_write_refused_until_it_is_armed_again_or_unshared() {
        let mut writes = OffTabWrites::default();
        writes.showed(1, "https://shop.test/checkout");
        writes.applied(writes.update().unwrap());
        writes.unguarded(1, true);
        let update = writes.update().expect("the tab's own rule");
        let [.., tab] = &update.rules[..] else { panic!() };
        assert_eq!(update.rules.len(), 4);
        assert_eq!(tab["id"], RULE_IDS[3]);
        assert_eq!(tab["condition"]["tabIds"], json!([1]));
        // An agent's policy lets its sites through with `allow` rules on its tabs: this one
        // must outrank them.
        assert!(tab["priority"].as_i64().unwrap() > crate::rule_priorities::ALWAYS_THROUGH as i64);
        assert_eq!(tab["condition"]["requestMethods"], json!(WRITE_METHODS));
        let types = tab["condition"]["resourceTypes"].as_array().unwrap();
        assert!(
            types.contains(&json!("main_frame")) && types.contains(&json!("xmlhttprequest")),
            "forms too"
        );
        writes.applied(update);
        writes.unguarded(1, false);
        assert_eq!(writes.update().unwrap().rules.len(), 3, "armed again");

        writes.unguarded(1, true);
        writes.unguarded(2, true); // no host shown yet
        writes.left(1);
        let update = writes.update().unwrap();
        assert_eq!(update.rules.len(), 1, "tab 2's alone: {:?}", update.rules);
        assert_eq!(update.rules[0]["condition"]["tabIds"], json!([2]));
        writes.applied(update);
        writes.left(2);
        assert_eq!(writes.update().unwrap().rules, Vec::<Value>::new());
    }

    #[test]
    fn a_tab_loading_a_late_document_has_every_write_refused_beside_a_reset_of_another() {
        let mut writes = OffTabWrites::default();
        writes.showed(1, "https://shop.test/");
        writes.late(1, true);
        writes.unguarded(2, true);
        let update = writes.update().unwrap();
        assert_eq!(update.rules.last().unwrap()["condition"]["tabIds"], json!([1, 2]));
        writes.applied(update);
        writes.unguarded(1, false); // a reset of tab 1 ending does not let its late document go
        assert_eq!(writes.update(), None);
        writes.late(1, false);
        assert_eq!(writes.update().unwrap().rules.last().unwrap()["condition"]["tabIds"], json!([2]));
        writes.late(2, true);
        writes.left(2);
        assert_eq!(writes.update().unwrap().rules.len(), 3, "no tab held: the workers' rules alone");
    }

    #[test]
    fn while_a_tab_is_shared_tabs_not_known_have_their_writes_refused() {
        let mut w = OffTabWrites::default();
        w.newborn.listed([1, 2, 3]);
        w.applied(w.update().unwrap());
        assert_eq!(w.update(), None, "nothing shared: no rule, whatever was born");
        w.newborn.created(0.0, 4, None);
        w.newborn.in_normal_window(4);
        assert_eq!(w.update(), None);

        // An agent's tab on about:blank: a popup it opens is held all the same.
        w.showed(1, "about:blank");
        let update = w.update().expect("rules for tabs born now");
        let [scripts, no_deferred] = &update.rules[..] else { panic!("two rules: {:?}", update.rules) };
        assert_eq!(no_deferred["id"], RULE_IDS[6]);
        assert_eq!(no_deferred["condition"]["excludedTabIds"], json!([2, 3]), "the human's tabs keep it");
        assert_eq!(no_deferred["condition"]["resourceTypes"], json!(["main_frame", "sub_frame"]));
        assert_eq!(no_deferred["action"]["responseHeaders"][0]["value"], NO_DEFERRED_FETCH);
        assert_eq!(
            no_deferred["action"]["responseHeaders"][0]["operation"], "set",
            "whatever the page's says"
        );
        assert!(
            no_deferred["priority"].as_i64().unwrap() > crate::rule_priorities::ALWAYS_THROUGH as i64,
            "over a policy's allow rules"
        );
        assert_eq!(scripts["id"], RULE_IDS[4]);
        assert_eq!(scripts["condition"]["excludedTabIds"], json!([-1, 1, 2, 3]), "4 not known yet");
        assert_eq!(scripts["condition"]["requestMethods"], json!(WRITE_METHODS));
        let types = scripts["condition"]["resourceTypes"].as_array().unwrap();
        assert!(types.contains(&json!("xmlhttprequest")) && types.contains(&json!("ping")));
        assert!(types.contains(&json!("sub_frame")) && !types.contains(&json!("main_frame")));
        assert!(scripts["condition"].get("initiatorDomains").is_none(), "to and from any site");
        w.applied(update);

        // On a site: the documents a page there sends into a new tab, too.
        w.showed(1, "https://shop.example/cart");
        let update = w.update().unwrap();
        let [.., scripts, documents, _] = &update.rules[..] else { panic!() };
        assert_eq!(scripts["id"], RULE_IDS[4]);
        assert_eq!(documents["id"], RULE_IDS[5]);
        assert_eq!(documents["condition"]["resourceTypes"], json!(["main_frame"]));
        assert_eq!(documents["condition"]["initiatorDomains"], json!(["shop.example"]));
        assert_eq!(documents["condition"]["excludedTabIds"], json!([-1, 1, 2, 3, 4]), "4 unclaimed yet");
        w.applied(update);

        // A tab seen born, no page claimed yet: the documents it sends go (a form the human
        // sends in a tab just opened), not its scripts' writes.
        w.newborn.created(0.0, 5, None);
        w.newborn.in_normal_window(5);
        let update = w.update().unwrap();
        assert_eq!(update.rules[3]["condition"]["excludedTabIds"], json!([-1, 1, 2, 3]));
        assert_eq!(update.rules[4]["condition"]["excludedTabIds"], json!([-1, 1, 2, 3, 4, 5]));
        w.applied(update);
        w.newborn.opened_by_page(5, 1, true);
        let update = w.update().unwrap();
        assert_eq!(update.rules[4]["condition"]["excludedTabIds"], json!([-1, 1, 2, 3, 4]), "claimed");
        w.applied(update);

        // Known: let through.
        w.newborn.handle_timeout(CLAIM_MS);
        let update = w.update().expect("4 is known");
        assert_eq!(update.rules[3]["condition"]["excludedTabIds"], json!([-1, 1, 2, 3, 4]));
        w.applied(update);
        // Hosts the browser refused: documents from every site.
        w.showed(1, "https://bad host/");
        let refused = w.update().unwrap();
        assert!(w.refused(refused));
        let update = w.update().unwrap();
        let documents = update.rules.iter().find(|r| r["id"] == RULE_IDS[5]).unwrap();
        assert!(documents["condition"].get("initiatorDomains").is_none());
        w.applied(update);

        // Known, unshared: it keeps `fetchLater()`; shared: not.
        let no_deferred = |w: &mut OffTabWrites| {
            w.installed = None; // whatever is in place: the rules as they would be
            let update = w.update().unwrap();
            update.rules.iter().find(|r| r["id"] == RULE_IDS[6]).unwrap()["condition"]["excludedTabIds"]
                .clone()
        };
        assert_eq!(no_deferred(&mut w), json!([2, 3, 4]));
        w.showed(4, "https://other.example/");
        assert_eq!(no_deferred(&mut w), json!([2, 3]));
        w.left(4);
        w.left(1);
        assert!(w.update().unwrap().rules.is_empty(), "nothing shared");
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

    #[test]
    fn a_severing_reload_gets_an_opener_policy_of_its_own_and_only_while_it_lasts() {
        let mut w = OffTabWrites::default();
        w.applied(w.update().unwrap());
        w.severing(4, true);
        let update = w.update().expect("a rule");
        let [rule] = &update.rules[..] else { panic!("one rule: {:?}", update.rules) };
        assert_eq!(rule["id"], RULE_IDS[7]);
        assert_eq!(rule["condition"], json!({ "tabIds": [4], "resourceTypes": ["main_frame"] }));
        let header = &rule["action"]["responseHeaders"][0];
        assert_eq!(header["header"], "cross-origin-opener-policy");
        assert_eq!(header["operation"], "set", "the site's own policy must not keep the group");
        assert_eq!(header["value"], crate::relatives::SEVERING_POLICY);
        w.applied(update);
        w.left(4);
        assert_eq!(w.update(), None, "its end is the caller's, not the tab's unsharing");
        w.severing(4, false);
        let update = w.update().expect("the rule goes");
        assert!(update.rules.is_empty(), "{:?}", update.rules);
    }
}
