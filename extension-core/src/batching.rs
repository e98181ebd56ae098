//! When frames for the daemon leave. They are queued on the connection ([`crate::link`]) and
//! sent together, as one WebSocket message, because the worker pays per message far more
//! than per byte (a message costs a task in the network service and one here).
//!
//! Each answer and event arrives in a task of its own, so waiting for the end of the current
//! task (a microtask) gathers nothing. While commands are still running, more answers are on
//! their way: the queue then leaves in a task of its own, behind those already waiting. When
//! nothing is running, nothing is coming, and it leaves at once (a microtask), so a lone
//! command's answer never waits.
//!
//! Events come one task at a time at the pace Chrome's browser process hands them over, each
//! after the last message left, so neither gathers them. An event that follows the last message
//! within [`EVENT_STREAM_GAP_MS`] is part of a stream: it waits up to [`EVENT_BATCH_MS`] for the
//! ones behind it (measured in a 200,000-message console flood: 34 events a message instead of
//! one, the worker's `WebSocket.send` and the network service's CPU cut to a tenth). A lone
//! event, and anything queued with or after an answer, leaves as before.

/// An event this soon after the last message belongs to a stream (ms).
pub const EVENT_STREAM_GAP_MS: f64 = 2.0;
/// How long an event of a stream may wait for the ones behind it (ms).
pub const EVENT_BATCH_MS: i32 = 2;

/// What was queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// An event: it may wait a little for others.
    Event,
    /// Anything else: answers and the worker's own frames.
    Other,
}

/// How the next flush is to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flush {
    /// One is scheduled already, soon enough.
    AlreadyDue,
    Microtask,
    /// Behind the tasks already waiting (a message on our own channel).
    Task,
    /// After [`EVENT_BATCH_MS`].
    Timer,
}

/// The decisions, without Chrome. Times are `performance.now()` milliseconds.
#[derive(Debug, Default)]
pub struct Schedule {
    /// Commands from the daemon not yet answered.
    pub running: u32,
    /// A flush is queued as a microtask / as a task / on a timer.
    microtask: bool,
    task: bool,
    timer: bool,
    /// When a message last left (`performance.now()`), if one has.
    last_sent: Option<f64>,
}

impl Schedule {
    pub fn queued(&mut self, what: Queued, now: f64, has_channel: bool) -> Flush {
        if self.microtask || self.task {
            return Flush::AlreadyDue;
        }
        let streaming = self.last_sent.is_some_and(|at| now - at < EVENT_STREAM_GAP_MS);
        if what == Queued::Event && streaming {
            if self.timer {
                return Flush::AlreadyDue;
            }
            self.timer = true;
            return Flush::Timer;
        }
        if self.running == 0 || !has_channel {
            self.microtask = true;
            Flush::Microtask
        } else {
            self.task = true;
            Flush::Task
        }
    }

    /// A flush ran (`from_timer`: the timer's), and sent a message if `sent`.
    pub fn flushed(&mut self, from_timer: bool, sent: bool, now: f64) {
        self.microtask = false;
        self.task = false;
        if from_timer {
            self.timer = false;
        }
        if sent {
            self.last_sent = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_frame_leaves_in_a_microtask_or_behind_running_commands() {
        let mut s = Schedule::default();
        assert_eq!(s.queued(Queued::Event, 10.0, true), Flush::Microtask);
        assert_eq!(s.queued(Queued::Other, 10.0, true), Flush::AlreadyDue);
        s.flushed(false, true, 10.0);
        s.running = 1;
        assert_eq!(s.queued(Queued::Other, 10.5, true), Flush::Task, "answers are never held by a timer");
        s.flushed(false, true, 10.5);
        assert_eq!(s.queued(Queued::Other, 10.6, false), Flush::Microtask, "without a channel");
    }

    #[test]
    fn events_of_a_stream_wait_for_one_timer_and_a_quiet_event_does_not() {
        let mut s = Schedule::default();
        assert_eq!(s.queued(Queued::Event, 0.0, true), Flush::Microtask);
        s.flushed(false, true, 0.0);
        assert_eq!(s.queued(Queued::Event, 0.1, true), Flush::Timer);
        assert_eq!(s.queued(Queued::Event, 0.2, true), Flush::AlreadyDue);
        assert_eq!(s.queued(Queued::Event, 1.9, true), Flush::AlreadyDue);
        s.flushed(true, true, 2.1);
        assert_eq!(s.queued(Queued::Event, 2.2, true), Flush::Timer, "the stream goes on");
        s.flushed(true, true, 4.2);
        assert_eq!(s.queued(Queued::Event, 10.0, true), Flush::Microtask, "after a gap, at once");
    }

    #[test]
    fn an_answer_behind_waiting_events_takes_them_along_at_once() {
        let mut s = Schedule { last_sent: Some(0.0), ..Schedule::default() };
        assert_eq!(s.queued(Queued::Event, 0.5, true), Flush::Timer);
        assert_eq!(s.queued(Queued::Other, 0.6, true), Flush::Microtask);
        s.flushed(false, true, 0.7);
        // The timer still fires; it finds nothing, and later events may set a new one.
        s.flushed(true, false, 2.5);
        assert_eq!(s.last_sent, Some(0.7));
        assert_eq!(s.queued(Queued::Event, 2.6, true), Flush::Timer);
    }
}
