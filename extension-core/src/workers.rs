//! Service and shared workers of agents' pages, as targets of those agents (found by the scan
//! of [`crate::worker_scan`], which `extension-wasm`'s `worker/workers.rs` runs): which are announced,
//! under which handle, whose they are, and whether our debugger session on each is open.

use std::collections::{BTreeMap, BTreeSet};

use tabtunnel_wire::{TabId, TabInfo, TargetKind, UnshareReason, WindowId};

/// A worker has no window.
pub const NO_WINDOW: WindowId = -1;

/// Whether a `tab_id` of the wire is a worker's handle.
pub fn is_worker(tab_id: TabId) -> bool {
    tab_id < 0
}

/// The origin (`scheme://host[:port]`) of an http(s) URL, or of the page that made a `blob:`
/// URL; `None` for the rest (a `data:` worker has no origin of its own to tell whose it is).
pub fn origin_of(url: &str) -> Option<&str> {
    let url = url.strip_prefix("blob:").unwrap_or(url);
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"))?;
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    (host_end > 0).then(|| &url[..url.len() - rest.len() + host_end])
}

/// The agent a worker at `worker_url` belongs to: the owner of the shared page of the worker's
/// origin that navigated last (`pages` come with the time each last changed its URL), the page
/// most likely to have started it. A worker serves, and can be reached by, any page of its
/// origin; an agent with a page there can already do there what the page can.
pub fn owning_agent<'a>(
    worker_url: &str,
    pages: impl IntoIterator<Item = (&'a TabInfo, f64)>,
) -> Option<&'a str> {
    let origin = origin_of(worker_url)?;
    pages
        .into_iter()
        .filter(|(t, _)| origin_of(&t.url) == Some(origin))
        .fold(None, |last: Option<(&TabInfo, f64)>, (t, at)| match last {
            Some((_, latest)) if latest >= at => last,
            _ => Some((t, at)),
        })
        .map(|(t, _)| t.agent.as_str())
}

/// The workers announced to the daemon, by handle.
#[derive(Debug, Default)]
pub struct Workers {
    known: BTreeMap<TabId, KnownWorker>,
    /// Listed targets that are neither service nor shared workers (dedicated workers, which
    /// their pages' own auto-attach finds), so each is looked at once.
    passed_over: BTreeSet<String>,
    last_handle: TabId,
}

#[derive(Debug)]
struct KnownWorker {
    info: TabInfo,
    /// Our debugger session on it is open.
    attached: bool,
}

/// A worker no longer shared.
#[derive(Debug, PartialEq, Eq)]
pub struct Ended {
    pub info: TabInfo,
    /// Our session on it was open (to be closed, unless Chrome closed it).
    pub attached: bool,
}

impl Workers {
    /// What the daemon was told of each, for a `Hello`.
    pub fn infos(&self) -> impl Iterator<Item = TabInfo> + '_ {
        self.known.values().map(|k| k.info.clone())
    }

    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// The known workers Chrome no longer lists (`listed`: the worker targets' ids).
    pub fn gone(&self, listed: &[&str]) -> Vec<TabId> {
        self.known
            .iter()
            .filter(|(_, k)| !listed.contains(&k.info.target_id.as_str()))
            .map(|(h, _)| *h)
            .collect()
    }

    /// Whether a listed target is new: neither announced nor passed over.
    pub fn is_new(&self, target_id: &str) -> bool {
        !self.passed_over.contains(target_id) && self.known.values().all(|k| k.info.target_id != target_id)
    }

    /// A target that is not a service or shared worker: not looked at again.
    pub fn pass_over(&mut self, target_id: String) {
        self.passed_over.insert(target_id);
    }

    /// The description of a worker to announce (negative handle: never a tab's), or `None`
    /// when its CDP `type` is not a service or shared worker's.
    #[allow(clippy::too_many_arguments)]
    pub fn describe(
        &mut self,
        target_id: &str,
        cdp_type: &str,
        url: String,
        title: String,
        browser_context_id: String,
        agent: String,
    ) -> Option<TabInfo> {
        let kind = TargetKind::of_worker_type(cdp_type)?;
        self.last_handle -= 1;
        Some(TabInfo {
            tab_id: self.last_handle,
            window_id: NO_WINDOW,
            target_id: target_id.to_owned(),
            browser_context_id,
            url,
            title,
            opener_target_id: None,
            agent,
            created: false,
            kind,
        })
    }

    /// Announced to the daemon.
    pub fn announce(&mut self, info: TabInfo) {
        self.known.insert(info.tab_id, KnownWorker { info, attached: false });
    }

    /// No longer shared: what it was, if known.
    pub fn end(&mut self, handle: TabId) -> Option<Ended> {
        self.known.remove(&handle).map(|k| Ended { info: k.info, attached: k.attached })
    }

    pub fn handles(&self) -> Vec<TabId> {
        self.known.keys().copied().collect()
    }

    /// The worker a debugger event or detach came from.
    pub fn handle_of(&self, target_id: &str) -> Option<TabId> {
        self.known.iter().find(|(_, k)| k.info.target_id == target_id).map(|(h, _)| *h)
    }

    /// For a command: the worker's target id, and whether our session must be opened first.
    pub fn target(&self, handle: TabId) -> Result<(String, bool), String> {
        let known = self.known.get(&handle).ok_or_else(|| format!("Worker {handle} is no longer shared"))?;
        Ok((known.info.target_id.clone(), !known.attached))
    }

    /// Our session on the worker opened.
    pub fn attached(&mut self, handle: TabId) {
        if let Some(k) = self.known.get_mut(&handle) {
            k.attached = true;
        }
    }

    /// The daemon's `ResetTab` (its last client left): the session to close, if open.
    pub fn reset(&mut self, handle: TabId) -> Option<String> {
        let known = self.known.get_mut(&handle)?;
        std::mem::replace(&mut known.attached, false).then(|| known.info.target_id.clone())
    }

    /// Chrome closed our session on a worker for `reason`: its handle, and why it is no longer
    /// shared if it is not (it ended, or the human cancelled debugging).
    pub fn detached(&mut self, target_id: &str, reason: &str) -> Option<(TabId, Option<UnshareReason>)> {
        let handle = self.handle_of(target_id)?;
        self.known.get_mut(&handle)?.attached = false;
        let why = match reason {
            "target_closed" => Some(UnshareReason::Closed),
            "canceled_by_user" => Some(UnshareReason::CanceledByUser),
            _ => None,
        };
        Some((handle, why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sharing::tests::tab;

    fn page(tab_id: i32, agent: &str, url: &str) -> TabInfo {
        TabInfo { url: url.into(), ..tab(tab_id, agent, true) }
    }

    #[test]
    fn origins_of_http_and_blob_urls_only() {
        assert_eq!(origin_of("http://127.0.0.1:8000/sw.js"), Some("http://127.0.0.1:8000"));
        assert_eq!(origin_of("https://example.com"), Some("https://example.com"));
        assert_eq!(origin_of("https://example.com?x#y"), Some("https://example.com"));
        assert_eq!(origin_of("blob:https://a.test/8c4e-11"), Some("https://a.test"));
        for none in ["data:text/javascript,1", "chrome-extension://abc/sw.js", "about:blank", "http:///x", ""]
        {
            assert_eq!(origin_of(none), None, "{none}");
        }
    }

    #[test]
    fn a_worker_is_the_agent_whose_page_has_its_origin() {
        let pages = [
            page(1, "human", "https://mail.test/inbox"),
            page(2, "a", "http://127.0.0.1:8000/app.html"),
            page(3, "b", "http://127.0.0.1:8000/other.html"),
            page(4, "human", "http://127.0.0.1:8000/form.html"),
        ];
        let at = |times: [f64; 4]| pages.iter().zip(times);
        let owner = |url: &str, times| owning_agent(url, at(times));
        assert_eq!(
            owner("http://127.0.0.1:8000/sw.js", [0.0, 20.0, 10.0, 5.0]),
            Some("a"),
            "the page that navigated last"
        );
        assert_eq!(owner("http://127.0.0.1:8000/sw.js", [0.0, 20.0, 30.0, 5.0]), Some("b"));
        assert_eq!(owner("https://mail.test/worker.js", [0.0; 4]), Some("human"));
        assert_eq!(owner("http://127.0.0.1:9000/sw.js", [0.0; 4]), None, "another port is another origin");
        assert_eq!(owner("data:text/javascript,1", [0.0; 4]), None);
    }

    #[test]
    fn workers_get_negative_handles_and_are_looked_at_once() {
        let mut w = Workers::default();
        let d = |w: &mut Workers, id: &str, kind: &str| {
            w.describe(id, kind, "u".into(), String::new(), String::new(), "a".into())
        };
        assert_eq!(d(&mut w, "D", "worker"), None, "a dedicated worker is its page's");
        w.pass_over("D".into());
        assert!(!w.is_new("D"));
        let sw = d(&mut w, "S", "service_worker").unwrap();
        let shw = d(&mut w, "H", "shared_worker").unwrap();
        assert_eq!((sw.tab_id, shw.tab_id), (-1, -2));
        assert!(is_worker(sw.tab_id) && !is_worker(1));
        w.announce(sw.clone());
        w.announce(shw);
        assert!(!w.is_new("S"));
        assert_eq!(w.gone(&["S"]), [-2], "no longer listed");
        assert_eq!(w.handle_of("S"), Some(-1));
        assert_eq!(w.infos().count(), 2);
    }

    #[test]
    fn a_worker_is_attached_only_while_a_client_uses_it() {
        let mut w = Workers::default();
        let info =
            w.describe("S", "service_worker", "u".into(), String::new(), String::new(), "a".into()).unwrap();
        w.announce(info.clone());
        assert_eq!(w.target(-1), Ok(("S".to_owned(), true)), "the first command attaches");
        w.attached(-1);
        assert_eq!(w.target(-1), Ok(("S".to_owned(), false)));
        assert_eq!(w.reset(-1), Some("S".to_owned()), "its last client left: detach");
        assert_eq!(w.reset(-1), None, "once");
        w.attached(-1);
        assert_eq!(w.detached("S", "other"), Some((-1, None)), "still shared, not attached");
        assert_eq!(w.target(-1), Ok(("S".to_owned(), true)));
        assert_eq!(w.detached("S", "target_closed"), Some((-1, Some(UnshareReason::Closed))));
        assert_eq!(w.end(-1), Some(Ended { info, attached: false }));
        assert!(w.target(-1).is_err());
        assert_eq!(w.detached("S", "target_closed"), None);
    }
}
