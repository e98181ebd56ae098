//! Reconnect delays: 0.1 s doubling up to 10 s, back to 0.1 s once a connection is welcomed. The
//! first is short because a restarted daemon listens within ~0.1 s, and a refused dial to
//! loopback costs next to nothing.

const FIRST_MS: u32 = 100;
const MAX_MS: u32 = 10_000;

#[derive(Debug)]
pub struct Backoff {
    next_ms: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next_ms: FIRST_MS }
    }
}

impl Backoff {
    /// The delay to wait now; the following one doubles.
    pub fn next_delay(&mut self) -> u32 {
        let delay = self.next_ms;
        self.next_ms = (delay * 2).min(MAX_MS);
        delay
    }

    pub fn reset(&mut self) {
        self.next_ms = FIRST_MS;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_to_the_cap_and_resets() {
        let mut b = Backoff::default();
        let delays: Vec<u32> = (0..8).map(|_| b.next_delay()).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1600, 3200, 6400, 10_000]);
        b.reset();
        assert_eq!(b.next_delay(), 100);
    }
}
