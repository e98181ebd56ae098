//! Which URLs an agent may open at all, whatever its policy: both sides check it, the daemon
//! before a navigation or a new tab leaves it, the extension before it opens, navigates or keeps
//! a debugger session on a tab.
//!
//! `chrome.debugger` may attach to the extension's own pages, and a page of ours runs with the
//! extension's privileges (`chrome.debugger` on every tab, the extension's storage and secrets,
//! answering the human's questions). `chrome://` pages change the browser's settings; `file:`
//! reads the user's files (tabtunnel's config dir among them); other schemes start programs
//! outside the browser. So an agent opens the web only: an allowlist, not a list of the schemes
//! known today. A URL is read as Chrome reads its scheme (GURL): leading and trailing spaces
//! and control characters trimmed, tabs and newlines removed, the scheme lowercased; a URL with
//! no scheme is refused too, since `chrome.tabs` reads it relative to the extension's own pages.

/// The rule, as errors and the audit trail name it.
pub const RULE: &str =
    "web pages only: no agent opens the browser's or an extension's pages, local files or other programs";

/// `Err(why)` for a URL no agent may load as a page, a frame or a new tab.
pub fn check(url: &str) -> Result<(), String> {
    if allowed(&normalized(url), 0) {
        Ok(())
    } else {
        Err(format!("{} is not a web page ({RULE})", shown(url)))
    }
}

/// Whether a URL is one an agent may load (see [`check`]).
pub fn is_allowed(url: &str) -> bool {
    allowed(&normalized(url), 0)
}

/// The URL as GURL reads it before its scheme: C0 controls and spaces trimmed at both ends,
/// tabs and newlines removed everywhere.
fn normalized(url: &str) -> String {
    url.trim_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect()
}

fn allowed(url: &str, depth: u8) -> bool {
    let Some((scheme, rest)) = split_scheme(url) else { return false };
    match scheme.as_str() {
        "http" | "https" | "data" | "javascript" => true,
        "about" => {
            let page = rest.split(['?', '#']).next().unwrap_or_default();
            page.eq_ignore_ascii_case("blank") || page.eq_ignore_ascii_case("srcdoc")
        }
        // Their origin is the URL inside: `blob:chrome-extension://<id>/...` is the extension's.
        "blob" | "filesystem" if depth == 0 => {
            matches!(split_scheme(rest), Some((inner, _)) if inner == "http" || inner == "https")
        }
        _ => false,
    }
}

/// `(lowercased scheme, what follows the colon)`, when the URL starts with a valid scheme.
fn split_scheme(url: &str) -> Option<(String, &str)> {
    let colon = url.find(':')?;
    let scheme = &url[..colon];
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then(|| (scheme.to_ascii_lowercase(), &url[colon + 1..]))
}

/// At most 120 characters of a URL, for a message.
fn shown(url: &str) -> String {
    let mut chars = url.chars();
    let head: String = chars.by_ref().take(120).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_web_is_allowed() {
        for url in [
            "https://example.com/",
            "http://127.0.0.1:8080/x?y#z",
            "HTTPS://EXAMPLE.COM",
            "  https://example.com/ ",
            "data:text/html,<p>hi",
            "about:blank",
            "about:blank#frag",
            "about:srcdoc",
            "ABOUT:BLANK",
            "javascript:void(0)",
            "blob:https://example.com/5f1a",
            "filesystem:http://example.com/temporary/x",
        ] {
            assert!(is_allowed(url), "{url}");
            assert!(check(url).is_ok(), "{url}");
        }
    }

    #[test]
    fn privileged_pages_files_and_programs_are_not() {
        for url in [
            "chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm/sidepanel.html",
            "chrome-extension://otherextensionidotherextensionid/popup.html",
            "chrome://settings/resetProfileSettings",
            "chrome://extensions",
            "chrome-untrusted://print/",
            "chrome-search://local-ntp/",
            "devtools://devtools/bundled/inspector.html",
            "chrome-devtools://devtools/bundled/inspector.html",
            "edge://settings",
            "brave://settings",
            "view-source:https://example.com/",
            "file:///home/user/.config/tabtunnel/daemon.json",
            "about:settings",
            "about:version",
            "vscode://file/etc/passwd",
            "mailto:someone@example.com",
            "blob:chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm/5f1a",
            "filesystem:chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm/temporary/x",
            "blob:blob:https://example.com/x",
        ] {
            assert!(!is_allowed(url), "{url}");
            let why = check(url).unwrap_err();
            assert!(why.contains("not a web page"), "{why}");
        }
    }

    #[test]
    fn urls_are_read_as_chrome_reads_their_scheme() {
        for url in [
            "CHROME-EXTENSION://jmlcgbpniifikmbmclnhinffofckiihm/sidepanel.html",
            "  chrome-extension://jmlcgbpniifikmbmclnhinffofckiihm/sidepanel.html",
            "\u{1}chrome://settings",
            "chr\tome-exten\nsion://jmlcgbpniifikmbmclnhinffofckiihm/sidepanel.html",
            "chrome-extension:jmlcgbpniifikmbmclnhinffofckiihm/sidepanel.html",
            "blob:\tchrome-extension://x/y",
        ] {
            assert!(!is_allowed(url), "{url:?}");
        }
    }

    #[test]
    fn a_url_without_a_scheme_is_refused_since_the_extension_would_read_it_as_its_own() {
        for url in
            ["sidepanel.html", "/sidepanel.html", "./sw.js", "//example.com/", "", "   ", ":x", "1http://x"]
        {
            assert!(!is_allowed(url), "{url:?}");
        }
    }

    #[test]
    fn a_long_url_is_shown_cut() {
        let url = format!("chrome://{}", "a".repeat(500));
        let why = check(&url).unwrap_err();
        assert!(why.chars().count() < 300, "{why}");
        assert!(why.contains('…'));
    }
}
