//! The policy's presets: named sets of method rules a section can start from.
//!
//! `read-only` is an allowlist, not a list of what to forbid: the protocol has hundreds of
//! methods that change a page (and gains more every release), so a read-only agent may call
//! only methods that read, and its scripts in the page run without side effects (see
//! `read_only.rs`). Its tabs also may not send anything but GET and HEAD requests, open
//! WebSockets or navigate (the extension's rules).

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Only methods that read; scripts may read but not write; the page, its storage and its
    /// place do not change. Snapshots, screenshots and reading scripts still work.
    ReadOnly,
    /// No reading or writing cookies through CDP, and cookies hidden from every other route.
    NoCookies,
    /// Only what page-level tools need: the page, its DOM, scripts, input, screenshots.
    Minimal,
}

/// The cookie methods: they read or write the user's logins.
pub const COOKIE_GETTERS: &[&str] =
    &["Network.getCookies", "Network.getAllCookies", "Storage.getCookies", "Page.getCookies"];
const COOKIE_SETTERS: &[&str] = &[
    "Network.setCookie",
    "Network.setCookies",
    "Network.deleteCookies",
    "Network.clearBrowserCookies",
    "Storage.setCookies",
    "Storage.clearCookies",
];
/// Interception rewrites what pages load.
const INTERCEPTION: &[&str] =
    &["Fetch.*", "Network.setRequestInterception", "Network.continueInterceptedRequest"];

/// What `read-only` lets through: methods that read the page, and the set-up clients send
/// before they read (attaching, enabling domains, isolated worlds for their own scripts).
const READ_ONLY_ALLOWED: &[&str] = &[
    "*.enable",
    "*.disable",
    "Browser.getVersion",
    "Browser.getWindowForTarget",
    "Browser.getWindowBounds",
    // Answered by tabtunnel itself; Playwright sends it when it connects.
    "Browser.setDownloadBehavior",
    "Target.setAutoAttach",
    "Target.setDiscoverTargets",
    "Target.getTargets",
    "Target.getTargetInfo",
    "Target.getBrowserContexts",
    "Target.getDevToolsTarget",
    "Target.attachToTarget",
    "Target.attachToBrowserTarget",
    "Target.detachFromTarget",
    "Target.activateTarget",
    "Target.autoAttachRelated",
    "Inspector.*",
    "Log.*",
    "Console.*",
    "Page.get*",
    "Page.capture*",
    "Page.createIsolatedWorld",
    "Page.setLifecycleEventsEnabled",
    "Page.startScreencast",
    "Page.stopScreencast",
    "Page.screencastFrameAck",
    "Page.printToPDF",
    "Page.bringToFront",
    "Page.searchInResource",
    "Runtime.evaluate",
    "Runtime.callFunctionOn",
    "Runtime.getProperties",
    "Runtime.releaseObject",
    "Runtime.releaseObjectGroup",
    "Runtime.runIfWaitingForDebugger",
    "Runtime.get*",
    "Runtime.globalLexicalScopeNames",
    "Runtime.queryObjects",
    "Runtime.awaitPromise",
    "Runtime.discardConsoleEntries",
    "Runtime.setAsyncCallStackDepth",
    "Runtime.setCustomObjectFormatterEnabled",
    "Runtime.setMaxCallStackSizeToCapture",
    "Runtime.addBinding",
    "Runtime.removeBinding",
    "DOM.get*",
    "DOM.describeNode",
    "DOM.resolveNode",
    "DOM.requestNode",
    "DOM.querySelector",
    "DOM.querySelectorAll",
    "DOM.performSearch",
    "DOM.discardSearchResults",
    "DOM.requestChildNodes",
    "DOM.pushNodeByPathToFrontend",
    "DOM.pushNodesByBackendIdsToFrontend",
    "DOM.collectClassNamesFromSubtree",
    "DOM.scrollIntoViewIfNeeded",
    "DOM.setInspectedNode",
    "DOM.setNodeStackTracesEnabled",
    "DOM.highlightNode",
    "DOM.highlightRect",
    "DOM.hideHighlight",
    "DOMSnapshot.*",
    "Accessibility.*",
    "CSS.get*",
    "CSS.trackComputedStyleUpdates",
    "CSS.trackComputedStyleUpdatesForNode",
    "CSS.takeComputedStyleUpdates",
    "CSS.startRuleUsageTracking",
    "CSS.stopRuleUsageTracking",
    "CSS.takeCoverageDelta",
    "CSS.resolveValues",
    "Overlay.*",
    "Performance.*",
    "PerformanceTimeline.*",
    "Tracing.*",
    "IO.read",
    "IO.close",
    "LayerTree.*",
    "Memory.get*",
    "SystemInfo.*",
    "Media.*",
    "Audits.getEncodedResponse",
    "Audits.checkContrast",
    "Audits.checkFormsIssues",
    "Network.get*",
    "Network.searchInResponseBody",
    "Network.loadNetworkResource",
    "Network.streamResourceContent",
    "Network.setAttachDebugStack",
    "DOMDebugger.getEventListeners",
    "Animation.get*",
    "Animation.resolveAnimation",
    "IndexedDB.request*",
    "CacheStorage.request*",
    "DOMStorage.getDOMStorageItems",
    "Storage.get*",
];

/// What `read-only` refuses although `*.enable` would let it through: domains whose enabling
/// changes how the page runs (pausing requests, pausing scripts, fake authenticators, dialogs
/// handled by the agent).
const READ_ONLY_DENIED: &[&str] = &[
    "Fetch.*",
    "Debugger.*",
    "DOMDebugger.set*",
    "EventBreakpoints.*",
    "WebAuthn.*",
    "DeviceAccess.*",
    "FedCm.*",
    "Autofill.*",
    "Extensions.*",
    "PWA.*",
    "BluetoothEmulation.*",
    "ServiceWorker.*",
];

impl Preset {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Preset::ReadOnly => "read-only",
            Preset::NoCookies => "no-cookies",
            Preset::Minimal => "minimal",
        }
    }

    /// Method patterns the preset refuses (checked before anything is allowed).
    pub(crate) fn denied(self) -> Vec<&'static [&'static str]> {
        match self {
            Preset::NoCookies => vec![COOKIE_GETTERS, COOKIE_SETTERS],
            Preset::Minimal => vec![COOKIE_GETTERS, COOKIE_SETTERS, INTERCEPTION],
            Preset::ReadOnly => vec![COOKIE_SETTERS, READ_ONLY_DENIED],
        }
    }

    /// The only method patterns the preset lets through, if it is an allowlist.
    pub(crate) fn allowed(self) -> Option<&'static [&'static str]> {
        match self {
            Preset::Minimal => Some(&[
                "Browser.*",
                "Target.*",
                "Inspector.*",
                "Page.*",
                "Runtime.*",
                "DOM.*",
                "CSS.*",
                "Accessibility.*",
                "Input.*",
                "Emulation.*",
                "Overlay.*",
                "Log.*",
                // Clients turn domains on at start; their events are then gated as usual.
                "*.enable",
                "*.disable",
            ]),
            Preset::ReadOnly => Some(READ_ONLY_ALLOWED),
            Preset::NoCookies => None,
        }
    }
}
