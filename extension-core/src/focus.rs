//! The human's focus against agents' clicks. Chrome activates a tab's window when a page gets a
//! mouse press or a touch, synthetic ones included (measured: `Input.dispatchMouseEvent
//! mousePressed` and `dispatchTouchEvent touchStart` do; moves, releases, keys and `insertText`
//! do not; focus emulation does not prevent it). So an agent's click would take the human's
//! focus. The guard remembers the human's window and gives focus straight back when it moves to
//! an agent's window right after that agent pressed there.

use tabtunnel_wire::WindowId;

/// How long after an agent's pointer press a focus change to its window counts as caused by it.
pub const PRESS_FOCUS_WINDOW_MS: f64 = 1500.0;

#[derive(Debug, Default)]
pub struct FocusGuard {
    /// The last focused window that is not an agent's.
    human_window: Option<WindowId>,
    /// The agent window an agent last pressed in, and when (`Date.now()`).
    pressed: Option<(WindowId, f64)>,
}

impl FocusGuard {
    pub fn human_window(&self) -> Option<WindowId> {
        self.human_window
    }

    /// The human focused a normal window of theirs: true when that is news.
    pub fn human_focused(&mut self, window_id: WindowId) -> bool {
        self.human_window.replace(window_id) != Some(window_id)
    }

    /// The worker starts: the human's window, unless a focus change told it already.
    pub fn human_window_found(&mut self, window_id: WindowId) {
        self.human_window.get_or_insert(window_id);
    }

    /// An agent is about to press in its own window `window_id`.
    pub fn agent_pressing(&mut self, window_id: WindowId, now: f64) {
        self.pressed = Some((window_id, now));
    }

    /// The human asked to see an agent's window (its picture in the panel): the focus change that
    /// follows is theirs, not an agent's press to undo. Nothing of the agent's page changes:
    /// its focus is emulated and its tab stays the visible one of its window.
    pub fn human_brings_forward(&mut self, window_id: WindowId) {
        self.pressed.take_if(|(pressed, _)| *pressed == window_id);
    }

    /// The focus moved to the agent window `window_id`: the human's window to give it back to,
    /// if an agent's press there just took it.
    pub fn agent_window_focused(&self, window_id: WindowId, now: f64) -> Option<WindowId> {
        match (self.pressed, self.human_window) {
            (Some((pressed, at)), Some(human))
                if pressed == window_id && now - at < PRESS_FOCUS_WINDOW_MS =>
            {
                Some(human)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn focus_taken_by_an_agents_press_goes_back_to_the_human() {
        let mut focus = FocusGuard::default();
        assert!(focus.human_focused(1));
        assert!(!focus.human_focused(1), "no news");
        assert_eq!(focus.agent_window_focused(10, 0.0), None, "no press: the human went there");
        focus.agent_pressing(10, 100.0);
        assert_eq!(focus.agent_window_focused(10, 200.0), Some(1));
        assert_eq!(focus.agent_window_focused(11, 200.0), None, "another agent's window");
        assert_eq!(focus.agent_window_focused(10, 100.0 + PRESS_FOCUS_WINDOW_MS), None, "long after");
    }

    #[test]
    fn a_window_the_human_brings_forward_keeps_the_focus_even_right_after_an_agents_press() {
        let mut focus = FocusGuard::default();
        focus.human_focused(1);
        focus.agent_pressing(10, 100.0);
        focus.human_brings_forward(11);
        assert_eq!(focus.agent_window_focused(10, 200.0), Some(1), "another window: still the press's");
        focus.human_brings_forward(10);
        assert_eq!(focus.agent_window_focused(10, 200.0), None, "the human's own doing");
    }

    #[test]
    fn the_window_found_at_start_does_not_override_a_focus_change() {
        let mut focus = FocusGuard::default();
        focus.human_focused(2);
        focus.human_window_found(1);
        assert_eq!(focus.human_window(), Some(2));
    }
}
