//! The earliest deadline a module holds, kept so that [`crate::Core::poll_timeout`] reads it in
//! O(1) instead of scanning the module's state on every frame.
//!
//! Arming keeps the earlier of the two; the module sets it exactly when it checks its
//! deadlines (at a timeout). In between it may be earlier than the true next deadline (a
//! command that waited was sent, a question was answered): that costs one early
//! [`crate::Core::handle_timeout`] that finds nothing due and sets it exactly. It is never
//! later, so nothing fires late.

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline(Option<u64>);

impl Deadline {
    /// Something falls due at `at`.
    pub fn arm(&mut self, at: u64) {
        self.0 = Some(self.0.map_or(at, |d| d.min(at)));
    }

    /// The exact earliest deadline, as the module just computed it.
    pub fn set(&mut self, at: Option<u64>) {
        self.0 = at;
    }

    pub fn get(self) -> Option<u64> {
        self.0
    }

    pub fn is_due(self, now: u64) -> bool {
        self.0.is_some_and(|at| at <= now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_earliest_until_set_exactly() {
        let mut d = Deadline::default();
        assert_eq!(d.get(), None);
        assert!(!d.is_due(u64::MAX));
        d.arm(50);
        d.arm(70);
        assert_eq!(d.get(), Some(50));
        d.arm(20);
        assert!(d.is_due(20) && !d.is_due(19));
        d.set(Some(90));
        assert_eq!(d.get(), Some(90), "set replaces, even with a later one");
        d.set(None);
        assert_eq!(d.get(), None);
    }
}
