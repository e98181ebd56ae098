//! One step at a time per key (a tab's reset, an agent's tab operation), each after the one
//! begun before it. The worker waits on the previous step's promise; which step is still the
//! latest, and so may clear the key when it ends, is decided here by token rather than by
//! comparing promises after an await.

use std::collections::BTreeMap;

/// The step [`Steps::begin`] started; [`Steps::finish`] takes it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a step must be finished with its token"]
pub struct StepToken(u64);

#[derive(Debug)]
pub struct Steps<K> {
    /// The step begun last on each key that has not finished.
    latest: BTreeMap<K, StepToken>,
    next: u64,
}

impl<K> Default for Steps<K> {
    fn default() -> Self {
        Steps { latest: BTreeMap::new(), next: 0 }
    }
}

impl<K: Ord> Steps<K> {
    /// Begins a step on `key`; it runs after any step begun before it (the caller waits).
    /// Returns its token and whether an earlier step may still be running.
    pub fn begin(&mut self, key: K) -> (StepToken, bool) {
        self.next += 1;
        let token = StepToken(self.next);
        let after = self.latest.insert(key, token).is_some();
        (token, after)
    }

    /// The step of `token` ended. True when it was the latest on `key`, which is free now; a
    /// step begun after it keeps the key (commands arriving meanwhile wait for that one).
    pub fn finish(&mut self, key: &K, token: StepToken) -> bool {
        if self.latest.get(key) == Some(&token) {
            self.latest.remove(key);
            true
        } else {
            false
        }
    }

    /// Whether a step on `key` is running or waiting.
    pub fn busy(&self, key: &K) -> bool {
        self.latest.contains_key(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_that_ends_before_a_later_one_leaves_the_key_to_it() {
        // A reset ends while a screenshot's bring-forward, begun after it, still runs: commands
        // arriving now must still wait for the bring-forward.
        let mut steps = Steps::default();
        let (reset, after) = steps.begin(5);
        assert!(!after);
        let (forward, after) = steps.begin(5);
        assert!(after, "the second waits for the first");
        assert!(!steps.finish(&5, reset), "not the latest: the key stays busy");
        assert!(steps.busy(&5));
        assert!(steps.finish(&5, forward));
        assert!(!steps.busy(&5));
    }

    #[test]
    fn keys_are_independent_and_a_token_finishes_once() {
        let mut steps = Steps::default();
        let (a, _) = steps.begin("a".to_owned());
        let (b, after) = steps.begin("b".to_owned());
        assert!(!after);
        assert!(steps.finish(&"a".to_owned(), a));
        assert!(!steps.finish(&"a".to_owned(), a), "finished already");
        assert!(!steps.finish(&"b".to_owned(), a), "a token of another key");
        assert!(steps.busy(&"b".to_owned()));
        assert!(steps.finish(&"b".to_owned(), b));
    }
}
