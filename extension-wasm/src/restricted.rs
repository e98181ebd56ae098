//! Which pages `chrome.debugger` cannot attach to (and tabtunnel will not share). Checked before sharing so the panel can say
//! why, instead of showing Chrome's terse attach error.

/// `Err(why)` when a tab showing `url` cannot be shared.
pub fn check_debuggable(url: &str) -> Result<(), String> {
    const SCHEMES: &[&str] = &[
        "chrome://",
        "chrome-untrusted://",
        "chrome-search://",
        "chrome-extension://",
        "devtools://",
        "edge://",
        "view-source:",
    ];
    const WEB_STORE: &[&str] = &["https://chromewebstore.google.com/", "https://chrome.google.com/webstore"];
    let lower = url.to_ascii_lowercase();
    if SCHEMES.iter().any(|s| lower.starts_with(s)) {
        let scheme = lower.split(':').next().unwrap_or_default();
        return Err(format!(
            "Chrome does not allow debugging {scheme}: pages. Open a web page in this tab to share it."
        ));
    }
    if WEB_STORE.iter().any(|s| lower.starts_with(s)) {
        return Err("Chrome does not allow debugging the Chrome Web Store.".into());
    }
    // tabtunnel's own rule beyond Chrome's: agents get web pages only (a `file:` page would let
    // them read local files, tabtunnel's secrets among them).
    if !url.is_empty() && !tabtunnel_wire::destinations::is_allowed(url) {
        return Err("tabtunnel shares web pages only. Open a web page in this tab to share it.".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_debuggable;

    #[test]
    fn web_pages_pass_and_browser_pages_do_not() {
        for ok in ["https://example.com/", "http://127.0.0.1:8080/x", "about:blank", ""] {
            assert!(check_debuggable(ok).is_ok(), "{ok}");
        }
        for bad in [
            "chrome://newtab/",
            "chrome-extension://abcdef/page.html",
            "devtools://devtools/bundled/inspector.html",
            "https://chromewebstore.google.com/detail/x",
            "https://chrome.google.com/webstore/category/extensions",
            "file:///tmp/a.html",
            "mailto:someone@example.com",
        ] {
            assert!(check_debuggable(bad).is_err(), "{bad}");
        }
    }
}
