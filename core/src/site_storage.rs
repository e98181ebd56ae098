//! Other sites' storage, kept from an agent held to some origins.
//!
//! The Storage domain takes any origin or storage key, not only its page's, and Chrome lets an
//! extension's session use it. Measured through tabtunnel, an agent held to one origin read
//! another site's usage by storage type (`Storage.getUsageAndQuota`), was told each time the
//! human's other site wrote its IndexedDB or its caches, with the database and cache names
//! (`Storage.trackIndexedDBForOrigin`, `trackCacheStorageForOrigin`), and set that site's quota
//! (`Storage.overrideQuotaForOrigin`: its storage fails) and deleted its buckets
//! (`Storage.deleteStorageBucket`), each answered with success.
//!
//! A command naming an origin or a storage key runs only when it is the agent's: an origin (the
//! storage of the site as the human visits it) one of `allow_origins`; a key partitioned under a
//! top-level site (a frame's storage) an origin its pages may frame (`allow_frame_origins` too)
//! under one of its own sites. One that reaches every site's (trust tokens, interest groups,
//! bounce tracking) or names none it can read is refused. CacheStorage, IndexedDB, DOMStorage
//! and FileSystem name theirs the same way; Chrome answers them for the page's own frames only
//! today (or not at all to an extension), and they are checked all the same.
//!
//! Service workers and background services are the browser's, not the tab's: the ServiceWorker
//! domain's `enable` watches every site's registrations (their scopes, and which of the human's
//! tabs each controls), its commands take any scope or origin (unregister, deliver a push
//! message); BackgroundService replays every origin's logged push, sync and fetch events. The
//! commands naming an origin or scope are checked as above, the rest refused.
//!
//! Cookie writes are `cookie_writes`; `Storage.clearDataForOrigin` passes both (it clears an
//! origin's storage, and its host's cookies).

use serde_json::Value;

use crate::origins::Reach;
use crate::policy::AgentPolicy;

/// Why the command may not run for this agent, if it reaches another site's storage (or sites
/// it does not name). `None` for an agent held to no origins.
pub fn refusal(policy: &AgentPolicy, method: &str, params: Option<&str>) -> Option<String> {
    if !policy.restricts_origins() {
        return None;
    }
    reaches(method, params).refusal(
        |key| not_own(policy, key).is_none(),
        "it reaches the storage of every site",
        |key| not_own(policy, key).unwrap_or_default(),
    )
}

/// Whether an event tells an agent held to origins of another site's storage: withheld. The
/// commands that turn such events on are refused, but tracking turned on before the policy
/// held the agent (a policy reloaded while it was connected) reports on; and the Storage
/// domain's browser-wide events, ServiceWorker's (every site's registrations) and
/// BackgroundService's never name only the agent's sites. Only these domains' events are read.
pub fn event_withheld(policy: &AgentPolicy, method: &str, params: &str) -> bool {
    if !policy.restricts_origins() {
        return false;
    }
    match method.split_once('.') {
        Some(("ServiceWorker" | "BackgroundService", _)) => true,
        // A deleted bucket is named by an id only.
        Some(("Storage", "storageBucketDeleted")) => false,
        Some(("Storage", _)) => {
            let params: Value = serde_json::from_str(params).unwrap_or(Value::Null);
            let named = ["/storageKey", "/bucketInfo/bucket/storageKey", "/origin"]
                .iter()
                .find_map(|pointer| params.pointer(pointer).and_then(Value::as_str));
            named.is_none_or(|key| not_own(policy, key).is_some())
        }
        _ => false,
    }
}

/// Why the storage an origin, a URL or a serialized storage key names is not the agent's.
fn not_own(policy: &AgentPolicy, key: &str) -> Option<String> {
    // What the agent sent, in the audit trail and the panel: kept short.
    let shown = |text: &str| text.chars().take(120).collect::<String>();
    let Some(parsed) = StorageKey::parse(key) else {
        return Some(format!("{} is not a storage key it can read", shown(key)));
    };
    match parsed.top_level_site {
        None if policy.owns_origin(parsed.origin) => None,
        None => Some(format!("{} is not one of its origins", shown(parsed.origin))),
        Some(site) if !policy.owns_site(site) => Some(format!(
            "{} is partitioned under {}, not one of its sites",
            shown(parsed.origin),
            shown(site)
        )),
        Some(_) if policy.frames_origin(parsed.origin) => None,
        Some(_) => Some(format!("{} is not an origin its pages may frame", shown(parsed.origin))),
    }
}

/// The origins or storage keys a command names.
fn reaches(method: &str, params: Option<&str>) -> Reach {
    let Some((domain, name)) = method.split_once('.') else { return Reach::Nothing };
    let storage_domain = matches!(
        domain,
        "Storage"
            | "CacheStorage"
            | "IndexedDB"
            | "DOMStorage"
            | "FileSystem"
            | "ServiceWorker"
            | "BackgroundService"
    );
    if !storage_domain {
        return Reach::Nothing;
    }
    let params = params.and_then(|p| serde_json::from_str::<Value>(p).ok()).unwrap_or(Value::Null);
    let at = |path: &[&str]| -> Option<String> {
        path.iter().try_fold(&params, |v, key| v.get(key)).and_then(Value::as_str).map(str::to_owned)
    };
    let named = |paths: &[&[&str]]| Reach::of(paths.iter().filter_map(|p| at(p)).collect());
    // IndexedDB's, CacheStorage's and DOMStorage's ways of naming a site's storage.
    const ORIGIN_OR_KEY: &[&[&str]] =
        &[&["securityOrigin"], &["storageKey"], &["storageBucket", "storageKey"]];
    match (domain, name) {
        ("Storage", "getUsageAndQuota" | "overrideQuotaForOrigin")
        | ("Storage", "trackCacheStorageForOrigin" | "untrackCacheStorageForOrigin")
        | ("Storage", "trackIndexedDBForOrigin" | "untrackIndexedDBForOrigin") => named(&[&["origin"]]),
        ("Storage", "trackCacheStorageForStorageKey" | "untrackCacheStorageForStorageKey")
        | ("Storage", "trackIndexedDBForStorageKey" | "untrackIndexedDBForStorageKey")
        | ("Storage", "setStorageBucketTracking") => named(&[&["storageKey"]]),
        // Clearing an origin's data clears its storage, not only its cookies (`cookie_writes`
        // checks those by host, where ports play no part).
        ("Storage", "clearDataForOrigin") => named(&[&["origin"]]),
        ("Storage", "clearDataForStorageKey") => named(&[&["storageKey"]]),
        ("Storage", "deleteStorageBucket") => named(&[&["bucket", "storageKey"]]),
        ("Storage", "clearTrustTokens" | "clearPrivateVerificationTokens") => named(&[&["issuerOrigin"]]),
        (
            "Storage",
            "getSharedStorageMetadata"
            | "getSharedStorageEntries"
            | "setSharedStorageEntry"
            | "deleteSharedStorageEntry"
            | "clearSharedStorageEntries"
            | "resetSharedStorageBudget"
            | "getInterestGroupDetails",
        ) => named(&[&["ownerOrigin"]]),
        // The page's own frame's key, and the cookie commands (`cookie_writes`, `cookies`).
        (
            "Storage",
            "getStorageKeyForFrame" | "getStorageKey" | "getCookies" | "setCookies" | "clearCookies",
        )
        | ("Storage", "getAffectedUrlsForThirdPartyCookieMetadata") => Reach::Nothing,
        // Every other Storage command is browser-wide: trust and private verification tokens,
        // interest groups, shared storage and attribution tracking, bounce tracking, related
        // website sets (and whatever a later Chrome adds).
        ("Storage", _) => Reach::AllSites,
        ("CacheStorage", "requestCacheNames") | ("IndexedDB", _) => match name {
            "enable" | "disable" => Reach::Nothing,
            _ => named(ORIGIN_OR_KEY),
        },
        // A cache id is `<storage key>|[<bucket>|]<cache name>` (as Chrome 156 writes it).
        ("CacheStorage", _) => match at(&["cacheId"]) {
            Some(id) => match id.split_once('|') {
                Some((key, _)) => Reach::Named(vec![key.to_owned()]),
                None => Reach::AllSites,
            },
            None => Reach::AllSites,
        },
        ("DOMStorage", "enable" | "disable") => Reach::Nothing,
        ("DOMStorage", _) => named(&[&["storageId", "securityOrigin"], &["storageId", "storageKey"]]),
        ("FileSystem", _) => named(&[&["bucketFileSystemLocator", "storageKey"]]),
        ("ServiceWorker" | "BackgroundService", "disable" | "stopObserving") => Reach::Nothing,
        (
            "ServiceWorker",
            "unregister" | "updateRegistration" | "startWorker" | "skipWaiting" | "deliverPushMessage",
        )
        | ("ServiceWorker", "dispatchSyncEvent" | "dispatchPeriodicSyncEvent") => {
            named(&[&["scopeURL"], &["origin"]])
        }
        // `enable` (every site's registrations), a worker by version id (of any site),
        // `stopAllWorkers`, `setForceUpdateOnPageLoad`; every BackgroundService command.
        ("ServiceWorker" | "BackgroundService", _) => Reach::AllSites,
        _ => Reach::Nothing,
    }
}

/// A serialized storage key (or an origin, or a URL: a key without a partition), as far as
/// whose it is matters.
struct StorageKey<'a> {
    /// Its origin (or the URL it was given).
    origin: &'a str,
    /// The top-level site it is partitioned under (`^0<site>`): a frame's storage there.
    top_level_site: Option<&'a str>,
}

impl<'a> StorageKey<'a> {
    /// A nonce (`^1`, `^2`: an opaque frame's) is its origin's, the ancestor bit (`^3`) names
    /// no other site; anything else (an opaque top-level site, a later field) is not read:
    /// `None`, refused.
    fn parse(key: &'a str) -> Option<Self> {
        let mut parts = key.split('^');
        let mut parsed = StorageKey { origin: parts.next()?, top_level_site: None };
        for part in parts {
            match part.split_at_checked(1)? {
                ("0", site) if parsed.top_level_site.is_none() => parsed.top_level_site = Some(site),
                ("1" | "2" | "3", _) => {}
                _ => return None,
            }
        }
        Some(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySet;
    use crate::testing::default_policy as policy;
    use serde_json::json;

    fn refused(set: &PolicySet, method: &str, params: Value) -> Option<String> {
        refusal(set.for_agent("a"), method, Some(&params.to_string()))
    }

    const OWN: &str = "http://127.0.0.1:8000";
    const OTHER: &str = "http://localhost:9000";

    #[test]
    fn an_agent_held_to_origins_reaches_the_storage_of_its_own_origins_only() {
        let set = policy(json!({
            "allow_origins": ["http://127.0.0.1:*"],
            "allow_frame_origins": ["https://*.widgets.test"],
        }));
        let by_origin = [
            "getUsageAndQuota",
            "overrideQuotaForOrigin",
            "trackCacheStorageForOrigin",
            "untrackCacheStorageForOrigin",
            "trackIndexedDBForOrigin",
            "untrackIndexedDBForOrigin",
        ];
        let by_key = [
            "trackCacheStorageForStorageKey",
            "untrackCacheStorageForStorageKey",
            "trackIndexedDBForStorageKey",
            "untrackIndexedDBForStorageKey",
            "setStorageBucketTracking",
        ];
        for name in by_origin {
            let method = format!("Storage.{name}");
            assert_eq!(refused(&set, &method, json!({ "origin": OWN })), None, "{method}");
            // A frame origin's storage as a site the human visits is not the agent's.
            assert!(refused(&set, &method, json!({ "origin": "https://cdn.widgets.test" })).is_some());
            assert_eq!(
                refused(&set, &method, json!({ "origin": OTHER })).as_deref(),
                Some("allow_origins: http://localhost:9000 is not one of its origins"),
                "{method}"
            );
        }
        for name in by_key {
            let method = format!("Storage.{name}");
            assert_eq!(
                refused(&set, &method, json!({ "storageKey": format!("{OWN}/"), "enable": true })),
                None
            );
            assert!(
                refused(&set, &method, json!({ "storageKey": format!("{OTHER}/") })).is_some(),
                "{method}"
            );
        }
        let bucket = |key: &str| json!({ "bucket": { "storageKey": key, "name": "b" } });
        assert_eq!(refused(&set, "Storage.deleteStorageBucket", bucket(&format!("{OWN}/"))), None);
        assert!(refused(&set, "Storage.deleteStorageBucket", bucket(&format!("{OTHER}/"))).is_some());
        assert!(refused(&set, "Storage.clearTrustTokens", json!({ "issuerOrigin": OTHER })).is_some());
        assert!(refused(&set, "Storage.getSharedStorageEntries", json!({ "ownerOrigin": OTHER })).is_some());
        assert_eq!(refused(&set, "Storage.getSharedStorageEntries", json!({ "ownerOrigin": OWN })), None);
        // Another port of a host whose cookies are the agent's is another origin's storage.
        let narrow = policy(json!({ "allow_origins": [OWN] }));
        let clear = json!({ "origin": "http://127.0.0.1:9999", "storageTypes": "all" });
        assert!(refused(&narrow, "Storage.clearDataForOrigin", clear).is_some());
        let clear = json!({ "storageKey": "http://127.0.0.1:9999/", "storageTypes": "all" });
        assert!(refused(&narrow, "Storage.clearDataForStorageKey", clear).is_some());
        let clear = json!({ "origin": OWN, "storageTypes": "all" });
        assert_eq!(refused(&narrow, "Storage.clearDataForOrigin", clear), None);
    }

    #[test]
    fn a_partitioned_key_is_a_frames_storage_under_one_of_the_agents_sites() {
        let set = policy(json!({
            "allow_origins": ["http://127.0.0.1:8000", "https://app.example.com"],
            "allow_frame_origins": ["https://*.widgets.test"],
        }));
        let key = |k: &str| json!({ "storageKey": k });
        let method = "Storage.trackIndexedDBForStorageKey";
        // A frame it may show, under one of its sites (a site has no port; its origins' hosts
        // are the site's or under it), with or without the cross-site ancestor bit.
        for own in [
            "https://cdn.widgets.test/^0http://127.0.0.1",
            "https://cdn.widgets.test/^0https://example.com^31",
            "http://127.0.0.1:8000/^0https://example.com",
            // An opaque frame's (a nonce) of its own origin.
            "http://127.0.0.1:8000/^112345^267890",
        ] {
            assert_eq!(refused(&set, method, key(own)), None, "{own}");
        }
        let refusals = [
            // Its origin embedded under another site: that site's partition, where the human was.
            (
                "http://127.0.0.1:8000/^0https://bank.test",
                "http://127.0.0.1:8000/ is partitioned under https://bank.test, not one of its sites",
            ),
            ("https://bank.test/^0http://127.0.0.1", "https://bank.test/ is not an origin its pages may frame"),
            // Not its site: `http`, not `https`; a frame origin with a nonce has no site of its.
            (
                "https://cdn.widgets.test/^0http://example.com",
                "https://cdn.widgets.test/ is partitioned under http://example.com, not one of its sites",
            ),
            ("https://cdn.widgets.test/^112345^267890", "https://cdn.widgets.test/ is not one of its origins"),
            // A field it cannot read, two partitions, an empty field, no origin at all.
            ("http://127.0.0.1:8000/^4123^5456", "http://127.0.0.1:8000/^4123^5456 is not a storage key it can read"),
            ("http://127.0.0.1:8000/^0http://127.0.0.1^0https://bank.test", "http://127.0.0.1:8000/^0http://127.0.0.1^0https://bank.test is not a storage key it can read"),
            ("http://127.0.0.1:8000/^", "http://127.0.0.1:8000/^ is not a storage key it can read"),
            ("not an origin", "not an origin is not one of its origins"),
        ];
        for (bad, why) in refusals {
            assert_eq!(refused(&set, method, key(bad)), Some(format!("allow_origins: {why}")), "{bad}");
        }
        // What the agent sent is shown short.
        let long = format!("https://{}.test/", "x".repeat(5000));
        assert!(refused(&set, method, key(&long)).unwrap().len() < 200);
    }

    #[test]
    fn events_of_other_sites_storage_are_withheld() {
        let held = policy(json!({ "allow_origins": ["http://127.0.0.1:*"] }));
        let held = held.for_agent("a");
        let withheld = |method: &str, params: Value| event_withheld(held, method, &params.to_string());
        let own = json!({"origin": OWN, "storageKey": format!("{OWN}/"), "bucketId": "1", "databaseName": "d", "objectStoreName": "s"});
        let other = json!({"origin": OTHER, "storageKey": format!("{OTHER}/"), "bucketId": "2", "databaseName": "maildb", "objectStoreName": "s"});
        assert!(!withheld("Storage.indexedDBContentUpdated", own));
        assert!(withheld("Storage.indexedDBContentUpdated", other.clone()));
        assert!(withheld("Storage.cacheStorageListUpdated", json!({"origin": OTHER})));
        let bucket = |key: &str| json!({"bucketInfo": {"bucket": {"storageKey": key}, "id": "2"}});
        assert!(!withheld("Storage.storageBucketCreatedOrUpdated", bucket(&format!("{OWN}/"))));
        assert!(withheld("Storage.storageBucketCreatedOrUpdated", bucket(&format!("{OTHER}/"))));
        assert!(!withheld("Storage.storageBucketDeleted", json!({"bucketId": "2"})));
        // Browser-wide, naming no origin; every site's registrations.
        assert!(withheld("Storage.interestGroupAccessed", json!({"name": "x"})));
        assert!(withheld("ServiceWorker.workerRegistrationUpdated", json!({"registrations": []})));
        assert!(withheld("BackgroundService.backgroundServiceEventReceived", json!({})));
        assert!(!withheld("Network.requestWillBeSent", json!({"documentURL": OTHER})));
        let open = policy(json!({ "deny_methods": ["Input.*"] }));
        assert!(!event_withheld(open.for_agent("a"), "Storage.indexedDBContentUpdated", &other.to_string()));
    }

    #[test]
    fn service_workers_and_background_services_of_other_sites_are_out_of_reach() {
        let set = policy(json!({ "allow_origins": ["http://127.0.0.1:*"] }));
        for (method, params) in [
            ("ServiceWorker.unregister", json!({ "scopeURL": "http://127.0.0.1:8000/app/" })),
            (
                "ServiceWorker.deliverPushMessage",
                json!({ "origin": OWN, "registrationId": "1", "data": "x" }),
            ),
            ("ServiceWorker.disable", json!({})),
            ("BackgroundService.stopObserving", json!({ "service": "pushMessaging" })),
        ] {
            assert_eq!(refused(&set, method, params.clone()), None, "{method} {params}");
        }
        for (method, params) in [
            ("ServiceWorker.unregister", json!({ "scopeURL": "https://mail.test/" })),
            (
                "ServiceWorker.deliverPushMessage",
                json!({ "origin": OTHER, "registrationId": "1", "data": "x" }),
            ),
            (
                "ServiceWorker.dispatchSyncEvent",
                json!({ "origin": OTHER, "registrationId": "1", "tag": "t", "lastChance": true }),
            ),
            ("ServiceWorker.enable", json!({})),
            ("ServiceWorker.stopAllWorkers", json!({})),
            ("ServiceWorker.stopWorker", json!({ "versionId": "3" })),
            ("ServiceWorker.setForceUpdateOnPageLoad", json!({ "forceUpdateOnPageLoad": true })),
            ("BackgroundService.startObserving", json!({ "service": "pushMessaging" })),
            ("BackgroundService.setRecording", json!({ "shouldRecord": true, "service": "backgroundFetch" })),
            ("BackgroundService.clearEvents", json!({ "service": "backgroundSync" })),
        ] {
            assert!(refused(&set, method, params.clone()).is_some(), "{method} {params}");
        }
    }

    #[test]
    fn browser_wide_storage_commands_and_unnamed_sites_are_refused() {
        let set = policy(json!({ "allow_origins": ["http://127.0.0.1:*"] }));
        for method in [
            "Storage.getTrustTokens",
            "Storage.getPrivateVerificationTokens",
            "Storage.setInterestGroupTracking",
            "Storage.setSharedStorageTracking",
            "Storage.runBounceTrackingMitigations",
            "Storage.getRelatedWebsiteSets",
            "Storage.somethingNew",
            "Storage.getUsageAndQuota",
            "CacheStorage.requestCacheNames",
            "IndexedDB.requestDatabaseNames",
            "DOMStorage.getDOMStorageItems",
            "FileSystem.getDirectory",
            "CacheStorage.requestEntries",
        ] {
            assert_eq!(
                refused(&set, method, json!({})).as_deref(),
                Some("allow_origins: it reaches the storage of every site"),
                "{method}"
            );
        }
    }

    #[test]
    fn caches_databases_and_local_storage_name_their_origin() {
        let set = policy(json!({ "allow_origins": ["http://127.0.0.1:*"] }));
        let own_key = format!("{OWN}/");
        let other_key = format!("{OTHER}/");
        let own = [
            ("CacheStorage.requestCacheNames", json!({ "storageKey": own_key })),
            ("CacheStorage.requestEntries", json!({ "cacheId": format!("{own_key}|own"), "skipCount": 0 })),
            ("CacheStorage.deleteCache", json!({ "cacheId": format!("{own_key}|a|b") })),
            ("IndexedDB.requestData", json!({ "securityOrigin": OWN, "databaseName": "d" })),
            ("IndexedDB.requestDatabaseNames", json!({ "storageBucket": { "storageKey": own_key } })),
            ("IndexedDB.enable", json!({})),
            ("DOMStorage.enable", json!({})),
            (
                "DOMStorage.getDOMStorageItems",
                json!({ "storageId": { "securityOrigin": OWN, "isLocalStorage": true } }),
            ),
            (
                "FileSystem.getDirectory",
                json!({ "bucketFileSystemLocator": { "storageKey": own_key, "pathComponents": [] } }),
            ),
            ("Storage.getStorageKeyForFrame", json!({ "frameId": "F" })),
        ];
        for (method, params) in own {
            assert_eq!(refused(&set, method, params.clone()), None, "{method} {params}");
        }
        let other = [
            ("CacheStorage.requestCacheNames", json!({ "securityOrigin": OTHER })),
            ("CacheStorage.requestEntries", json!({ "cacheId": format!("{other_key}|mail") })),
            ("CacheStorage.deleteEntry", json!({ "cacheId": "no bar here", "request": "/" })),
            ("IndexedDB.deleteDatabase", json!({ "storageKey": other_key, "databaseName": "d" })),
            // One of two names another origin.
            ("IndexedDB.requestData", json!({ "securityOrigin": OWN, "storageKey": other_key })),
            (
                "DOMStorage.setDOMStorageItem",
                json!({ "storageId": { "storageKey": other_key }, "key": "k", "value": "v" }),
            ),
            ("FileSystem.getDirectory", json!({ "bucketFileSystemLocator": { "storageKey": other_key } })),
        ];
        for (method, params) in other {
            assert!(refused(&set, method, params.clone()).is_some(), "{method} {params}");
        }
    }

    #[test]
    fn an_agent_held_to_no_origins_reaches_any_storage_and_other_domains_are_not_read() {
        let open = policy(json!({ "deny_methods": ["Input.*"] }));
        assert_eq!(refused(&open, "Storage.getUsageAndQuota", json!({ "origin": OTHER })), None);
        assert_eq!(refused(&open, "Storage.getTrustTokens", json!({})), None);
        let held = policy(json!({ "allow_origins": ["http://127.0.0.1:*"] }));
        assert_eq!(refused(&held, "Runtime.evaluate", json!({ "expression": OTHER })), None);
        assert_eq!(refused(&held, "Network.setCookie", json!({ "url": OTHER })), None, "cookie_writes' job");
        assert_eq!(refusal(held.for_agent("a"), "StorageX.y", None), None);
    }

    /// Through the core: refused before the extension hears of it, naming the rule, recorded;
    /// the agent's own origin's goes through.
    #[test]
    fn the_core_refuses_another_sites_storage_and_records_it() {
        use crate::testing::*;
        use crate::Output;
        let (mut h, session) = scout_on_its_tab(Some(json!({ "allow_origins": ["http://127.0.0.1:*"] })));
        let track = |id: u64, origin: &str| json!({"id": id, "sessionId": session, "method": "Storage.trackIndexedDBForOrigin", "params": {"origin": origin}});
        let step = h.send(1, track(4, OTHER));
        assert!(step.commands().is_empty(), "the extension heard of it");
        let reply = step.only_reply(1);
        assert!(
            reply["error"]["message"].as_str().unwrap().contains("allow_origins: http://localhost:9000"),
            "{reply}"
        );
        let denied = |o: &Output| {
            matches!(o, Output::Audit(r) if r.method == "Storage.trackIndexedDBForOrigin"
                && matches!(&r.outcome, crate::Outcome::Denied { rule } if rule.contains("allow_origins")))
        };
        assert!(step.other.iter().any(denied));
        assert_eq!(h.send(1, track(5, OWN)).commands().len(), 1, "its own origin's goes through");
        // Events of its own origin's storage reach it; another site's, tracked before the policy
        // held it, do not.
        let updated = |origin: &str| {
            let params = json!({"origin": origin, "storageKey": format!("{origin}/"), "bucketId": "1", "databaseName": "d", "objectStoreName": "s"});
            event(1, None, "Storage.indexedDBContentUpdated", &params.to_string())
        };
        assert_eq!(h.ext(updated(OWN)).methods(1), ["Storage.indexedDBContentUpdated"]);
        assert!(h.ext(updated(OTHER)).client.is_empty(), "another site's storage event delivered");
    }
}
