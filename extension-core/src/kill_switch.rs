//! The kill switch: one click in the side panel (or the keyboard shortcut) stops every agent at
//! once. Every tab is detached, and the daemon closes every client connection and refuses new
//! ones until the human turns it off again. The state is kept in `chrome.storage.local`, so a
//! restarted worker or browser stays stopped. [`crate::machine`] acts on what this decides.

/// The key in `chrome.storage.local`.
pub const STORAGE_KEY: &str = "killSwitch";
/// The command in `manifest.json` (`Alt+Shift+K` unless the user changed it).
pub const COMMAND: &str = "kill-switch";

#[derive(Debug, Default)]
pub struct KillSwitch {
    engaged: bool,
}

impl KillSwitch {
    pub fn engaged(&self) -> bool {
        self.engaged
    }

    /// The stored state, read at start (missing or unreadable: released).
    pub fn restore(&mut self, stored: Option<&serde_json::Value>) {
        self.engaged = stored.and_then(|v| v.get(STORAGE_KEY)).and_then(|v| v.as_bool()).unwrap_or(false);
    }

    /// Engages or releases; whether that changed anything.
    pub fn set(&mut self, engaged: bool) -> bool {
        std::mem::replace(&mut self.engaged, engaged) != engaged
    }

    /// What a browser command means for the switch: the shortcut only stops; turning agents
    /// back on is a deliberate click.
    pub fn command(name: &str) -> Option<bool> {
        (name == COMMAND).then_some(true)
    }

    /// The items to store.
    pub fn stored(&self) -> serde_json::Value {
        serde_json::json!({ STORAGE_KEY: self.engaged })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restores_what_was_stored_and_nothing_else() {
        let mut k = KillSwitch::default();
        k.restore(Some(&serde_json::json!({ "killSwitch": true })));
        assert!(k.engaged());
        for other in [serde_json::json!({}), serde_json::json!({ "killSwitch": "yes" }), serde_json::json!(7)]
        {
            k.restore(Some(&other));
            assert!(!k.engaged(), "{other}");
        }
        assert!(k.set(true) && !k.set(true), "setting the same state again changes nothing");
        assert_eq!(k.stored(), serde_json::json!({ "killSwitch": true }));
    }

    #[test]
    fn only_our_shortcut_engages_and_never_releases() {
        assert_eq!(KillSwitch::command("kill-switch"), Some(true));
        assert_eq!(KillSwitch::command("_execute_action"), None);
    }
}
