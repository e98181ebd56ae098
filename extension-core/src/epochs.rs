//! Which debugger session of a tab a command was meant for. A session lost under its clients
//! (`target_closed`, then a re-attach) starts a new epoch: commands sent before are answered
//! "Target closed" rather than run on the new session, whose clients start over.

use std::collections::BTreeMap;

use tabtunnel_wire::TabId;

/// What a command of an older session is answered.
pub const TARGET_CLOSED: &str = "Target closed: the tab's debugger session was lost";

#[derive(Debug, Default)]
pub struct Epochs {
    epochs: BTreeMap<TabId, u64>,
}

impl Epochs {
    /// The tab's session now: stamped on a command as it arrives.
    pub fn current(&self, tab_id: TabId) -> u64 {
        self.epochs.get(&tab_id).copied().unwrap_or(0)
    }

    /// The tab's session was lost under its clients and a new one began.
    pub fn bump(&mut self, tab_id: TabId) {
        *self.epochs.entry(tab_id).or_default() += 1;
    }

    /// Whether a command stamped `epoch` may run now; `Err` with its answer if its session is
    /// gone.
    pub fn check(&self, tab_id: TabId, epoch: u64) -> Result<(), &'static str> {
        if self.current(tab_id) == epoch {
            Ok(())
        } else {
            Err(TARGET_CLOSED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_sent_before_target_closed_is_answered_target_closed() {
        let mut epochs = Epochs::default();
        let before = epochs.current(4);
        let other_tab = epochs.current(5);
        epochs.bump(4); // target_closed, re-attached
        assert_eq!(epochs.check(4, before), Err(TARGET_CLOSED));
        assert_eq!(epochs.check(4, epochs.current(4)), Ok(()), "one sent after runs");
        assert_eq!(epochs.check(5, other_tab), Ok(()), "other tabs are untouched");
    }
}
