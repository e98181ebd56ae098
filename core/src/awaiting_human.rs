//! What waits while the human is asked (the guard's questions): a command, a navigation the
//! page started, or what the gesture guard holds.

use crate::gestures::HeldGesture;
use crate::session::ConnId;

/// What waits for the human's answer to one question.
#[derive(Debug)]
pub(crate) enum AwaitingHuman {
    /// A client's command, replayed from its text when allowed.
    Command { conn: ConnId, text: String },
    /// A navigation the page started, answered to the daemon's navigation endpoint.
    Navigation { id: u64 },
    /// A gesture or request the gesture guard holds (`gestures/`).
    Gesture(Box<HeldGesture>),
}
