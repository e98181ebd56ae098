//! One client's queue of frames waiting to be written to its socket, bounded in frames and in
//! bytes. The hub pushes without ever waiting; the client's writer task takes frames off.
//!
//! A client whose queue would grow past either bound is not reading fast enough: the push
//! fails, the queue is freed at once, and the writer is told to stop, even in the middle of a
//! write to a peer that reads nothing. Its socket task then ends and the socket closes. (A
//! queue that is empty takes any one frame, however large: a client may ask for a 100 MB
//! screenshot, and its writer takes it off the queue before the next frame comes.)

use axum::extract::ws::Utf8Bytes;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

/// How much may wait for one client before it counts as too slow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: usize,
    pub max_frames: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_bytes: 32 << 20, max_frames: 8192 }
    }
}

/// What was queued when the client went over its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    pub bytes: usize,
    pub frames: usize,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Utf8Bytes>,
    bytes: usize,
    /// The hub let go: write what is queued, then close.
    finished: bool,
    overflowed: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// A frame came, or the outbox finished or overflowed. One waiter: the writer.
    wake: Notify,
    /// The outbox overflowed: stop writing now. One waiter: the writer, mid-write.
    stop: Notify,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned one still holds a consistent queue.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The hub's end. Dropping it lets the writer finish what is queued and close the socket.
pub struct Outbox {
    shared: Arc<Shared>,
    limits: Limits,
}

/// The writer task's end.
pub struct OutboxReader {
    shared: Arc<Shared>,
}

pub fn outbox(limits: Limits) -> (Outbox, OutboxReader) {
    let shared = Arc::new(Shared::default());
    (Outbox { shared: shared.clone(), limits }, OutboxReader { shared })
}

impl Outbox {
    /// Queues a frame, or, if that would exceed the limits, frees the queue, stops the writer
    /// and reports what was queued.
    pub fn push(&self, frame: Utf8Bytes) -> Result<(), Overflow> {
        let mut state = self.shared.state();
        if state.overflowed {
            return Err(Overflow { bytes: 0, frames: 0 });
        }
        let over = state.queue.len() + 1 > self.limits.max_frames
            || state.bytes + frame.len() > self.limits.max_bytes;
        if over && !state.queue.is_empty() {
            let overflow = Overflow { bytes: state.bytes + frame.len(), frames: state.queue.len() + 1 };
            state.overflowed = true;
            state.bytes = 0;
            let queued = std::mem::take(&mut state.queue);
            drop(state);
            drop(queued);
            self.shared.stop.notify_one();
            self.shared.wake.notify_one();
            return Err(overflow);
        }
        state.bytes += frame.len();
        state.queue.push_back(frame);
        drop(state);
        self.shared.wake.notify_one();
        Ok(())
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.shared.state().finished = true;
        self.shared.wake.notify_one();
    }
}

impl OutboxReader {
    /// The next frame to write; `None` once the outbox finished and is empty, or overflowed.
    pub async fn next(&self) -> Option<Utf8Bytes> {
        loop {
            {
                let mut state = self.shared.state();
                if state.overflowed {
                    return None;
                }
                if let Some(frame) = state.queue.pop_front() {
                    state.bytes -= frame.len();
                    return Some(frame);
                }
                if state.finished {
                    return None;
                }
            }
            // A notify_one before we wait leaves a permit, so no wake-up is lost.
            self.shared.wake.notified().await;
        }
    }

    /// Resolves when the outbox overflows (never, if it does not).
    pub async fn overflowed(&self) {
        loop {
            if self.shared.state().overflowed {
                return;
            }
            self.shared.stop.notified().await;
        }
    }

    pub fn has_overflowed(&self) -> bool {
        self.shared.state().overflowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn frame(len: usize) -> Utf8Bytes {
        "x".repeat(len).into()
    }

    const LIMITS: Limits = Limits { max_bytes: 100, max_frames: 4 };

    #[tokio::test]
    async fn frames_come_out_in_order_then_the_end() {
        let (outbox, reader) = outbox(LIMITS);
        outbox.push("a".into()).unwrap();
        outbox.push("b".into()).unwrap();
        drop(outbox);
        assert_eq!(reader.next().await.as_deref(), Some("a"));
        assert_eq!(reader.next().await.as_deref(), Some("b"));
        assert_eq!(reader.next().await, None);
        assert!(!reader.has_overflowed());
    }

    #[tokio::test]
    async fn too_many_bytes_overflow_and_free_the_queue() {
        let (outbox, reader) = outbox(LIMITS);
        outbox.push(frame(60)).unwrap();
        assert_eq!(outbox.push(frame(60)), Err(Overflow { bytes: 120, frames: 2 }));
        assert!(reader.has_overflowed());
        assert_eq!(reader.next().await, None, "nothing queued is written");
        assert!(outbox.push(frame(1)).is_err(), "an overflowed outbox takes nothing more");
        assert_eq!(outbox.shared.state().queue.len(), 0);
    }

    #[tokio::test]
    async fn too_many_frames_overflow() {
        let (outbox, _reader) = outbox(LIMITS);
        for _ in 0..4 {
            outbox.push(frame(1)).unwrap();
        }
        assert_eq!(outbox.push(frame(1)), Err(Overflow { bytes: 5, frames: 5 }));
    }

    #[tokio::test]
    async fn an_empty_queue_takes_one_large_frame_and_taken_frames_no_longer_count() {
        let (outbox, reader) = outbox(LIMITS);
        outbox.push(frame(1000)).unwrap();
        assert_eq!(reader.next().await.map(|f| f.len()), Some(1000));
        for _ in 0..3 {
            outbox.push(frame(30)).unwrap();
            assert_eq!(reader.next().await.map(|f| f.len()), Some(30));
        }
        outbox.push(frame(90)).unwrap();
        assert!(outbox.push(frame(20)).is_err());
    }

    #[tokio::test]
    async fn the_writer_is_stopped_mid_write() {
        let (outbox, reader) = outbox(LIMITS);
        let writer = tokio::spawn(async move {
            while reader.next().await.is_some() {
                // A peer that reads nothing: this write never completes.
                tokio::select! {
                    () = std::future::pending::<()>() => {}
                    () = reader.overflowed() => return "stopped",
                }
            }
            "finished"
        });
        outbox.push(frame(10)).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        outbox.push(frame(60)).unwrap();
        assert!(outbox.push(frame(60)).is_err());
        assert_eq!(tokio::time::timeout(Duration::from_secs(5), writer).await.unwrap().unwrap(), "stopped");
    }
}
