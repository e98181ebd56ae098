//! Whether a command was already approved, which the files that replay commands pass on.

/// Whether a command was already approved by the human.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Approved {
    No,
    Yes,
    /// Approved, and the browser's rules let its navigation through once.
    YesAndBrowserAllowed,
    /// Through the policy, then the gesture guard (it read the page, or the human allowed it).
    GestureChecked,
}
