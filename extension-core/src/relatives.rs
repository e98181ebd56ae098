//! Tabs whose pages reach into each other: a page that opened another (`window.open`, a link
//! or form into a new window) holds its window, and the page opened holds `window.opener`; every
//! window of one browsing context group can reach the others of the same origin (their DOM, their
//! `fetch`, their timers). A tab an agent holds must have no such relative that another holds
//! (the human, or another agent): the agent's script would write from the human's tab, where no
//! guard and no read-only rule stands, and live on there after the tab is taken back.
//!
//! Chrome's `tabs.Tab.openerTabId` does not say which tabs are related (see [`crate::popups`]);
//! `webNavigation.onCreatedNavigationTarget` does, and is kept here for as long as both tabs are
//! open. A relation is cut by giving the tab a new document in a browsing context group of its
//! own: a reload whose response the browser's rules give
//! `Cross-Origin-Opener-Policy: noopener-allow-popups` ([`SEVERING_POLICY`]), which severs the
//! page from its opener and every page it opened, both ways, even of the same origin (measured in
//! Chromium 156: the opener's handle reads `closed`, a named lookup finds nothing). Browsers
//! apply the policy only to secure pages (https, or a loopback host): a plain-http page keeps its
//! relatives ([`severable`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use tabtunnel_wire::TabId;

use crate::sharing::Replace;

/// The response header a severing reload gets (`off_tab_writes`' rule), whatever the site sent.
pub const SEVERING_POLICY: &str = "noopener-allow-popups";

/// Which tab's page opened which tab, while both are open.
#[derive(Debug, Default)]
pub struct Relatives {
    /// Each tab a page opened, with the tab of that page.
    opened_by: BTreeMap<TabId, TabId>,
}

/// A link as `chrome.storage.session` keeps it for a restarted worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredLink {
    pub tab_id: TabId,
    pub opened_by: TabId,
}

impl Relatives {
    /// `webNavigation.onCreatedNavigationTarget`: a page in `source` opened `tab`.
    pub fn opened(&mut self, tab: TabId, source: TabId) {
        if tab != source {
            self.opened_by.insert(tab, source);
        }
    }

    /// A tab closed: its page and every handle to it are gone, but not its browsing context
    /// group: the tabs it joined still find each other by name (`window.open('', 'kid2')`
    /// from one window its page opened reaches the other, and the page that opened it), so
    /// they stay related to one another.
    pub fn removed(&mut self, tab: TabId) {
        self.leaves_its_group(tab);
    }

    /// The tab got a document in a browsing context group of its own: it has no relatives, and
    /// those it leaves behind stay one group.
    pub fn severed(&mut self, tab: TabId) {
        self.leaves_its_group(tab);
    }

    fn leaves_its_group(&mut self, tab: TabId) {
        let source = self.opened_by.remove(&tab);
        let opened: Vec<TabId> = self.opened_by.iter().filter(|(_, s)| **s == tab).map(|(t, _)| *t).collect();
        // Each tab it opened is linked to its opener instead, else to the first of them.
        let mut joined = source;
        for kin in opened {
            match joined {
                Some(to) => {
                    self.opened_by.insert(kin, to);
                }
                None => {
                    self.opened_by.remove(&kin);
                    joined = Some(kin);
                }
            }
        }
    }

    /// Every other tab whose pages may reach `tab`'s, through any chain of openers both ways.
    pub fn of(&self, tab: TabId) -> BTreeSet<TabId> {
        let mut family = BTreeSet::from([tab]);
        let mut next = vec![tab];
        while let Some(at) = next.pop() {
            let links = self.opened_by.iter().filter(|(t, s)| **t == at || **s == at);
            for (&opened, &source) in links {
                for kin in [opened, source] {
                    if family.insert(kin) {
                        next.push(kin);
                    }
                }
            }
        }
        family.remove(&tab);
        family
    }

    /// Whether `tab` has a relative that `holder` does not say is held as it will be: the tab
    /// must be severed before it changes hands.
    pub fn has_strangers(&self, tab: TabId, same_holder: impl Fn(TabId) -> bool) -> bool {
        !self.strangers(tab, same_holder).is_empty()
    }

    /// The relatives of `tab` that `holder` does not say are held as it will be.
    pub fn strangers(&self, tab: TabId, same_holder: impl Fn(TabId) -> bool) -> Vec<TabId> {
        self.of(tab).into_iter().filter(|kin| !same_holder(*kin)).collect()
    }

    /// What is done to the document of a tab changing hands: at least a reload (severing it,
    /// `worker/sharing.rs`) when a relative stays with another holder.
    pub fn replace(&self, tab: TabId, replace: Replace, same_holder: impl Fn(TabId) -> bool) -> Replace {
        match replace {
            Replace::Nothing if self.has_strangers(tab, same_holder) => Replace::Reload { twice: false },
            replace => replace,
        }
    }

    pub fn stored(&self) -> Vec<StoredLink> {
        self.opened_by.iter().map(|(&tab_id, &opened_by)| StoredLink { tab_id, opened_by }).collect()
    }

    /// What a worker before this one kept; links it learnt itself meanwhile stay.
    pub fn restore(&mut self, stored: Vec<StoredLink>) {
        for StoredLink { tab_id, opened_by } in stored {
            self.opened_by.entry(tab_id).or_insert(opened_by);
        }
    }
}

/// Whether a page at `url` is the browser's own: every navigation to one puts the tab in a
/// browsing context group of its own. (Another extension's page does not: a page that opened
/// the tab still reaches it, and can send it back to the web.)
pub fn browsers_own(url: &str) -> bool {
    let scheme = url.split_once(':').map(|(s, _)| s.to_ascii_lowercase()).unwrap_or_default();
    matches!(scheme.as_str(), "chrome" | "chrome-untrusted" | "devtools" | "chrome-search")
}

/// Whether a reload of a page at `url` can sever it (the browser applies an opener policy to
/// secure pages only).
pub fn severable(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once("://") else { return false };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    match scheme.to_ascii_lowercase().as_str() {
        "https" => true,
        "http" => {
            host == "localhost"
                || host.ends_with(".localhost")
                || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_is_every_tab_reachable_by_openers_both_ways() {
        let mut r = Relatives::default();
        r.opened(2, 1); // 1 opened 2
        r.opened(3, 2); // 2 opened 3
        r.opened(5, 4);
        assert_eq!(r.of(1), BTreeSet::from([2, 3]));
        assert_eq!(r.of(3), BTreeSet::from([1, 2]));
        assert_eq!(r.of(4), BTreeSet::from([5]));
        assert_eq!(r.of(9), BTreeSet::new());
        r.opened(7, 7);
        assert_eq!(r.of(7), BTreeSet::new(), "a page navigating its own tab opens nothing");
    }

    #[test]
    fn a_severed_or_closed_tab_has_no_relatives_and_leaves_the_others_one_group() {
        let mut r = Relatives::default();
        r.opened(2, 1);
        r.opened(3, 2);
        r.severed(2);
        assert_eq!(r.of(2), BTreeSet::new());
        assert_eq!(r.of(1), BTreeSet::from([3]), "1 and 3 stay one group, without 2");
        assert_eq!(r.of(3), BTreeSet::from([1]));
        r.severed(1);
        r.opened(2, 1);
        r.removed(1);
        assert_eq!(r.of(2), BTreeSet::new());
    }

    #[test]
    fn the_tabs_a_closed_tab_joined_stay_related() {
        // The human's page 1 opened 2 and 3, then closed: 2 and 3 still reach each other.
        let mut r = Relatives::default();
        r.opened(2, 1);
        r.opened(3, 1);
        r.opened(4, 1);
        r.removed(1);
        assert_eq!(r.of(2), BTreeSet::from([3, 4]));
        assert_eq!(r.of(4), BTreeSet::from([2, 3]));
        // 5 opened 6, 6 opened 7, and 6 closed: 5 and 7 are one group still.
        r.opened(6, 5);
        r.opened(7, 6);
        r.removed(6);
        assert_eq!(r.of(5), BTreeSet::from([7]));
        assert_eq!(r.of(7), BTreeSet::from([5]));
        // A severed tab leaves its group; the others stay one.
        r.severed(2);
        assert_eq!(r.of(2), BTreeSet::new());
        assert_eq!(r.of(3), BTreeSet::from([4]));
    }

    #[test]
    fn strangers_are_relatives_held_otherwise() {
        let mut r = Relatives::default();
        r.opened(2, 1);
        r.opened(3, 1);
        let agents = |t: TabId| t != 1; // 2 and 3 are the agent's, 1 the human's
        assert!(r.has_strangers(2, agents));
        assert!(!r.has_strangers(2, |t| t == 1 || t == 3), "every relative the agent's");
        assert!(!r.has_strangers(9, |_| false), "no relative, no stranger");
        assert_eq!(r.strangers(1, |t| t == 3), [2]);
    }

    #[test]
    fn a_tab_leaving_a_relative_behind_gets_a_new_document_even_if_nobody_drove_it() {
        let mut r = Relatives::default();
        r.opened(2, 1);
        let reload = Replace::Reload { twice: false };
        assert_eq!(r.replace(1, Replace::Nothing, |_| false), reload, "its popup stays the agent's");
        assert_eq!(r.replace(1, Replace::Nothing, |_| true), Replace::Nothing);
        assert_eq!(r.replace(3, Replace::Nothing, |_| false), Replace::Nothing, "no relative");
        let twice = Replace::Reload { twice: true };
        assert_eq!(r.replace(1, twice, |_| false), twice);
        assert_eq!(r.replace(1, Replace::Close, |_| false), Replace::Close);
    }

    #[test]
    fn what_a_restarted_worker_restores_adds_to_what_it_learnt() {
        let mut r = Relatives::default();
        r.opened(2, 1);
        let mut restarted = Relatives::default();
        restarted.opened(4, 3);
        restarted.restore(r.stored());
        assert_eq!(restarted.of(1), BTreeSet::from([2]));
        assert_eq!(restarted.of(3), BTreeSet::from([4]));
        let json = serde_json::to_string(&r.stored()).unwrap();
        assert_eq!(json, r#"[{"tabId":2,"openedBy":1}]"#);
    }

    #[test]
    fn only_the_browsers_own_pages_sever_by_being_shown() {
        for yes in ["chrome://settings/", "CHROME://newtab", "chrome-untrusted://x/", "devtools://devtools/x"]
        {
            assert!(browsers_own(yes), "{yes}");
        }
        for no in ["chrome-extension://abc/page.html", "about:blank", "https://chrome.example/", ""] {
            assert!(!browsers_own(no), "{no}");
        }
    }

    #[test]
    fn only_secure_pages_can_be_severed() {
        for yes in [
            "https://bank.example/pay",
            "HTTPS://x.test",
            "http://localhost:8000/",
            "http://app.localhost/",
            "http://127.0.0.1:9/x",
            "http://[::1]:80/",
            "http://user@localhost./",
        ] {
            assert!(severable(yes), "{yes}");
        }
        for no in [
            "http://shop.test:9851/",
            "http://127.0.0.1.evil.test/",
            "http://localhost.evil.test/",
            "http://10.0.0.1/",
            "http://127.evil.test.x/",
            "about:blank",
            "data:text/html,x",
            "file:///x",
            "",
        ] {
            assert!(!severable(no), "{no}");
        }
    }
}
