//! Chrome's "Allow access to file URLs" for this extension: on, `chrome.debugger` may hand a
//! page the user's local files (a dragged file, a file input), so an agent's page could read
//! tabtunnel's own tokens. Chrome turns it on without asking for an extension loaded unpacked
//! (`tabtunnel launch`'s `--load-extension`, "Load unpacked"). tabtunnel needs none of it: the
//! daemon refuses agents' local files anyway (core `local_files.rs`), and the side panel asks
//! the human to turn it off.

use crate::chrome;

/// What the side panel says when Chrome lets the extension read local files; `None` when not.
/// (No `chrome://extensions` URL: a page of ours cannot open it by a link, and the panel's
/// broadcasts are checked for the pairing URL's `/extension` path.)
pub fn warning(allowed: bool) -> Option<String> {
    allowed.then(|| {
        "Chrome lets tabtunnel read your local files (\"Allow access to file URLs\" is on; Chrome turns it on for an extension loaded unpacked). tabtunnel does not need it, and refuses agents' local files anyway: turn it off on Chrome's Extensions page, under tabtunnel's Details."
            .to_owned()
    })
}

/// Asks Chrome, once the worker starts (toggling the switch restarts the extension).
pub async fn check() -> Option<String> {
    match chrome::is_allowed_file_scheme_access().await {
        Ok(allowed) => warning(allowed),
        Err(e) => {
            warn!("extension.isAllowedFileSchemeAccess failed: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panel_says_how_to_turn_file_access_off_only_when_it_is_on() {
        assert_eq!(warning(false), None);
        let text = warning(true).unwrap();
        assert!(text.contains("Allow access to file URLs") && text.contains("Details"), "{text}");
    }
}
