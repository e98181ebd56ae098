//! One client's queue of frames waiting to be written to its socket, bounded in bytes. The hub
//! pushes without ever waiting; the client's writer task takes frames off.
//!
//! A client is dropped when it has stopped reading, not merely because a burst got ahead of
//! it or its machine is busy: either its queue would grow past `max_bytes` (256 MiB, Chrome's
//! own send buffer for a DevTools client: memory stays bounded, whatever the client does), or
//! more than `stall_bytes` wait and its writer has taken nothing for `stall_timeout` (30 s)
//! plus the time the frame it is writing takes at a very slow reader's pace
//! ([`Limits::patience`]): a client that reads takes something within seconds, however far
//! behind and however loaded its machine (a reading puppeteer on two busy cores went over 5 s
//! without taking a frame, and was dropped by a 5 s rule). Either way the queue is freed at
//! once and the writer is told to stop, even in the middle of a write. Its socket task then
//! ends and the socket closes. (A queue that is empty takes any one frame, however large: a
//! client may ask for a 100 MB screenshot, and its writer takes it off the queue before the
//! next frame comes.)
//!
//! Before any of that, a client with more than [`NOT_READING_BYTES`] waiting is not reading as
//! the fair share counts it, so that its commands wait rather than Chrome working on its behalf
//! (`core/src/fair_share.rs`), until no more than [`READING_AGAIN_BYTES`] wait. The outbox keeps
//! that state itself and wakes the hub each time it turns back to reading
//! ([`Outbox::wake_when_reading`]): the hub, told late, reads the state, never a byte count that
//! may have grown again since.
//!
//! A frame around a large result (`ClientFrame::Around`) is counted at its length, and holds
//! the buffer the extension's message was read into; the hub shares one only when that is at
//! most four times the result (`hub::shares_bytes`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tabtunnel_core::ClientFrame;
use tokio::sync::Notify;
use tokio::time::Instant;

/// What a queued frame costs beyond its text: its slot in the queue and the allocation's own
/// bookkeeping. Counted in the byte bound, so that many tiny frames are bounded too.
pub const FRAME_OVERHEAD: usize = 64;

/// A client with more than this waiting is not reading (a few answers of a MiB: enough that a
/// reading client's writer never runs dry)...
pub const NOT_READING_BYTES: usize = 4 << 20;
/// ...until no more than this waits.
pub const READING_AGAIN_BYTES: usize = 1 << 20;

/// An empty queue keeps room for this many frames; a burst's larger room is given back.
const KEPT_CAPACITY: usize = 1024;

/// The slowest reading still counted as reading: a frame being written buys its writer one
/// second per this many bytes beyond `stall_timeout` (a 64 MiB answer: 64 s more).
const SLOWEST_READ_BYTES_PER_SEC: usize = 1 << 20;

/// How much may wait for one client, and for how long without progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes (each frame's text plus [`FRAME_OVERHEAD`]) that may wait: past them the client
    /// is dropped at once.
    pub max_bytes: usize,
    /// A client with more than this waiting whose writer takes nothing for its
    /// [`patience`](Limits::patience) has stopped reading.
    pub stall_bytes: usize,
    /// How long a writer with more than `stall_bytes` waiting may take nothing, beyond the
    /// time its frame in flight takes to read.
    pub stall_timeout: Duration,
    /// Bytes that may wait for all clients together: past them, the hub gives up on the
    /// clients that have taken nothing for longest until the rest fit ([`over_the_total`]:
    /// many connections that stop reading hold at most this, not `max_bytes` each).
    pub max_total_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 256 << 20,
            stall_bytes: 1 << 20,
            stall_timeout: Duration::from_secs(30),
            max_total_bytes: 1 << 30,
        }
    }
}

impl Limits {
    /// The defaults with `max_bytes` per client, and room for all clients together of four
    /// such clients (at least the default's).
    pub fn with_max_bytes(max_bytes: usize) -> Self {
        let default = Limits::default();
        Limits {
            max_bytes,
            max_total_bytes: default.max_total_bytes.max(max_bytes.saturating_mul(4)),
            ..default
        }
    }

    /// How long a client with `queued` bytes waiting, whose writer last took a frame of
    /// `in_flight` bytes, may take nothing before it counts as stopped: never at or under
    /// `stall_bytes`; past it, `stall_timeout` plus `in_flight` at [`SLOWEST_READ_BYTES_PER_SEC`]
    /// (progress is bytes read: one large frame is one take, and reading it takes a while).
    /// Not less the more waits: a reader behind a burst has more waiting, not less patience due;
    /// `max_bytes` bounds what it may hold.
    pub fn patience(&self, queued: usize, in_flight: usize) -> Option<Duration> {
        if queued <= self.stall_bytes {
            return None;
        }
        let reading = Duration::from_secs_f64(in_flight as f64 / SLOWEST_READ_BYTES_PER_SEC as f64);
        Some(self.stall_timeout + reading)
    }
}

/// What waits for one client (in bytes as the bound counts them), and how long its writer has
/// taken nothing while something waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backlog {
    pub bytes: usize,
    pub idle: Duration,
}

/// Which clients to give up on when all of them together hold more than `max_total`: those
/// that have taken nothing for longest first (a stopped client before one reading behind a
/// burst, however much more waits for the reader), until the rest hold no more than it.
pub fn over_the_total<K: Copy>(mut backlogs: Vec<(K, Backlog)>, max_total: usize) -> Vec<K> {
    let mut total: usize = backlogs.iter().map(|(_, b)| b.bytes).sum();
    if total <= max_total {
        return Vec::new();
    }
    backlogs.sort_unstable_by_key(|(_, b)| std::cmp::Reverse((b.idle, b.bytes)));
    let mut given_up = Vec::new();
    for (key, backlog) in backlogs {
        if total <= max_total {
            break;
        }
        if backlog.bytes > 0 {
            total -= backlog.bytes;
            given_up.push(key);
        }
    }
    given_up
}

/// Why a client was given up on, and what was queued then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    pub bytes: usize,
    pub frames: usize,
    /// `None`: past a byte bound; else how long the writer had taken nothing.
    pub stalled_for: Option<Duration>,
}

struct State {
    queue: VecDeque<ClientFrame>,
    /// The queue's cost: each frame's length plus [`FRAME_OVERHEAD`].
    bytes: usize,
    /// When the writer last took a frame, or the queue last filled from empty (an idle writer
    /// is not behind): how long the client has shown no progress.
    progress_at: Instant,
    /// The length of the frame the writer last took: it may still be writing it.
    in_flight: usize,
    /// The hub let go: write what is queued, then close.
    finished: bool,
    overflowed: bool,
    /// Whether the client reads, as the fair share counts it ([`NOT_READING_BYTES`]).
    reading: bool,
    /// Who to wake each time it turns back to reading ([`Outbox::wake_when_reading`]).
    on_reading: Option<Arc<Notify>>,
}

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

    /// Gives up on the client: frees the queue, stops the writer.
    fn give_up(&self, mut state: MutexGuard<'_, State>, overflow: Overflow) -> Overflow {
        state.overflowed = true;
        state.bytes = 0;
        let queued = std::mem::take(&mut state.queue);
        drop(state);
        drop(queued);
        self.stop.notify_one();
        self.wake.notify_one();
        overflow
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
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            bytes: 0,
            progress_at: Instant::now(),
            in_flight: 0,
            finished: false,
            overflowed: false,
            reading: true,
            on_reading: None,
        }),
        wake: Notify::new(),
        stop: Notify::new(),
    });
    (Outbox { shared: shared.clone(), limits }, OutboxReader { shared })
}

impl Outbox {
    /// Queues a frame, or, if that would exceed `max_bytes`, frees the queue, stops the writer
    /// and reports what was queued.
    pub fn push(&self, frame: ClientFrame) -> Result<(), Overflow> {
        let mut state = self.shared.state();
        if state.overflowed {
            return Err(Overflow { bytes: 0, frames: 0, stalled_for: None });
        }
        let cost = frame.len() + FRAME_OVERHEAD;
        if state.queue.is_empty() {
            state.progress_at = Instant::now();
        } else if state.bytes + cost > self.limits.max_bytes {
            let overflow =
                Overflow { bytes: state.bytes + cost, frames: state.queue.len() + 1, stalled_for: None };
            return Err(self.shared.give_up(state, overflow));
        }
        state.bytes += cost;
        state.queue.push_back(frame);
        if state.bytes > NOT_READING_BYTES {
            state.reading = false;
        }
        drop(state);
        self.shared.wake.notify_one();
        Ok(())
    }

    /// What waits now, and for how long the client has shown no progress.
    pub fn backlog(&self, now: Instant) -> Backlog {
        let state = self.shared.state();
        let idle = if state.queue.is_empty() {
            Duration::ZERO
        } else {
            now.saturating_duration_since(state.progress_at)
        };
        Backlog { bytes: state.bytes, idle }
    }

    /// Whether the client reads what it is sent: false once more than [`NOT_READING_BYTES`]
    /// wait, true again once no more than [`READING_AGAIN_BYTES`] do.
    pub fn reading(&self) -> bool {
        self.shared.state().reading
    }

    /// Wakes `hub` every time the client turns back to reading from now on, and at once if it
    /// reads now: whoever is woken late still finds the state as it is then.
    pub fn wake_when_reading(&self, hub: Arc<Notify>) {
        let mut state = self.shared.state();
        if state.reading {
            hub.notify_one();
        }
        state.on_reading = Some(hub);
    }

    /// Gives up on the client now (all clients together hold too much, and it has taken
    /// nothing for longest: [`over_the_total`]), as by an overflow.
    pub fn give_up(&self) -> Overflow {
        let state = self.shared.state();
        let overflow = Overflow { bytes: state.bytes, frames: state.queue.len(), stalled_for: None };
        self.shared.give_up(state, overflow)
    }

    /// Whether the client has stopped reading as of `now` (see [`Limits::patience`]); if so,
    /// it is given up on as by an overflow.
    pub fn check_stalled(&self, now: Instant) -> Option<Overflow> {
        let state = self.shared.state();
        let idle = now.saturating_duration_since(state.progress_at);
        let patience = self.limits.patience(state.bytes, state.in_flight)?;
        if state.overflowed || idle < patience {
            return None;
        }
        let overflow = Overflow { bytes: state.bytes, frames: state.queue.len(), stalled_for: Some(idle) };
        Some(self.shared.give_up(state, overflow))
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        self.shared.state().finished = true;
        self.shared.wake.notify_one();
    }
}

impl State {
    fn take(&mut self) -> Option<ClientFrame> {
        let frame = self.queue.pop_front()?;
        self.bytes -= frame.len() + FRAME_OVERHEAD;
        self.progress_at = Instant::now();
        self.in_flight = frame.len();
        if !self.reading && self.bytes <= READING_AGAIN_BYTES {
            self.reading = true;
            if let Some(hub) = &self.on_reading {
                hub.notify_one();
            }
        }
        if self.queue.is_empty() && self.queue.capacity() > KEPT_CAPACITY {
            self.queue = VecDeque::new();
        }
        Some(frame)
    }
}

impl OutboxReader {
    /// The next frame to write; `None` once the outbox finished and is empty, or overflowed.
    pub async fn next(&self) -> Option<ClientFrame> {
        loop {
            {
                let mut state = self.shared.state();
                if state.overflowed {
                    return None;
                }
                if let Some(frame) = state.take() {
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

    /// The next frame if one is queued now, without waiting: a writer that took one frame
    /// takes what else is there before flushing the socket once.
    pub fn next_ready(&self) -> Option<ClientFrame> {
        let mut state = self.shared.state();
        if state.overflowed {
            return None;
        }
        state.take()
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

    fn frame(len: usize) -> ClientFrame {
        "x".repeat(len).into()
    }

    /// Room for three frames of 100 bytes (164 each with the overhead); more than one waiting is
    /// behind.
    const LIMITS: Limits = Limits {
        max_bytes: 500,
        stall_bytes: 200,
        stall_timeout: Duration::from_secs(10),
        max_total_bytes: 1 << 20,
    };

    #[tokio::test]
    async fn frames_come_out_in_order_then_the_end() {
        let (outbox, reader) = outbox(LIMITS);
        outbox.push(String::from("a").into()).unwrap();
        outbox.push(String::from("b").into()).unwrap();
        drop(outbox);
        assert_eq!(reader.next().await.map(ClientFrame::into_text).as_deref(), Some("a"));
        assert_eq!(reader.next().await.map(ClientFrame::into_text).as_deref(), Some("b"));
        assert_eq!(reader.next().await, None);
        assert!(!reader.has_overflowed());
    }

    #[tokio::test]
    async fn ready_frames_come_out_without_waiting() {
        let (outbox, reader) = outbox(LIMITS);
        assert_eq!(reader.next_ready(), None);
        outbox.push(frame(10)).unwrap();
        outbox.push(frame(20)).unwrap();
        assert_eq!(reader.next_ready().map(|f| f.len()), Some(10));
        assert_eq!(reader.next().await.map(|f| f.len()), Some(20));
        assert_eq!(reader.next_ready(), None);
        outbox.push(frame(200)).unwrap();
        reader.next_ready().unwrap();
        outbox.push(frame(200)).expect("taken frames no longer count");
    }

    #[tokio::test]
    async fn too_many_bytes_overflow_and_free_the_queue() {
        let (outbox, reader) = outbox(LIMITS);
        for _ in 0..3 {
            outbox.push(frame(100)).unwrap();
        }
        let overflow = outbox.push(frame(100)).unwrap_err();
        assert_eq!(overflow, Overflow { bytes: 4 * (100 + FRAME_OVERHEAD), frames: 4, stalled_for: None });
        assert!(reader.has_overflowed());
        assert_eq!(reader.next().await, None, "nothing queued is written");
        assert!(outbox.push(frame(1)).is_err(), "an overflowed outbox takes nothing more");
        assert_eq!(outbox.shared.state().queue.len(), 0);
    }

    #[tokio::test]
    async fn many_tiny_frames_are_bounded_by_what_each_costs() {
        let (outbox, _reader) = outbox(LIMITS);
        for _ in 0..LIMITS.max_bytes / FRAME_OVERHEAD {
            outbox.push(frame(0)).unwrap();
        }
        assert!(outbox.push(frame(0)).is_err());
    }

    #[tokio::test]
    async fn an_empty_queue_takes_one_large_frame_and_taken_frames_no_longer_count() {
        let (outbox, reader) = outbox(LIMITS);
        outbox.push(frame(1000)).unwrap();
        assert_eq!(reader.next().await.map(|f| f.len()), Some(1000));
        for _ in 0..5 {
            outbox.push(frame(100)).unwrap();
            assert_eq!(reader.next().await.map(|f| f.len()), Some(100));
        }
        outbox.push(frame(200)).unwrap();
        assert!(outbox.push(frame(300)).is_err());
    }

    #[tokio::test]
    async fn a_client_behind_that_takes_nothing_for_the_stall_timeout_is_given_up_on() {
        let (outbox, reader) = outbox(LIMITS);
        // Before the first push (the clock starts there): a thread descheduled between the two
        // makes the client look idle for less, never for more.
        let start = Instant::now();
        outbox.push(frame(100)).unwrap();
        outbox.push(frame(100)).unwrap();
        let patience = LIMITS.patience(2 * (100 + FRAME_OVERHEAD), 0).unwrap();
        assert_eq!(outbox.check_stalled(start), None);
        assert_eq!(outbox.check_stalled(start + patience - Duration::from_millis(100)), None, "not yet");
        let later = Instant::now() + patience;
        let overflow = outbox.check_stalled(later).expect("stalled");
        assert_eq!((overflow.bytes, overflow.frames), (2 * (100 + FRAME_OVERHEAD), 2));
        assert!(overflow.stalled_for.unwrap() >= patience);
        assert!(reader.has_overflowed());
        assert_eq!(reader.next().await, None, "nothing queued is written");
    }

    #[test]
    fn patience_is_the_stall_timeout_plus_reading_the_frame_in_flight_however_much_waits() {
        let limits = Limits::default();
        let mib = 1 << 20;
        assert_eq!(limits.patience(mib, 0), None);
        assert_eq!(limits.patience(mib + 1, 0), Some(Duration::from_secs(30)));
        assert_eq!(limits.patience(200 * mib, 0), Some(Duration::from_secs(30)), "not less the more waits");
        assert_eq!(limits.patience(2 * mib, 64 * mib), Some(Duration::from_secs(30 + 64)));
    }

    /// Seen on two loaded cores: a reading puppeteer took nothing for 5.2 s with 3.5 MiB of a
    /// 200,000-message flood waiting, and was dropped. Reading is slow there, not stopped.
    #[tokio::test]
    async fn a_reader_that_pauses_for_seconds_with_megabytes_waiting_is_kept() {
        let (outbox, reader) = outbox(Limits::default());
        let start = Instant::now();
        for _ in 0..7000 {
            outbox.push(frame(500)).unwrap();
        }
        assert_eq!(outbox.check_stalled(start + Duration::from_secs(10)), None, "ten seconds without a take");
        assert!(!reader.has_overflowed());
        let pushed = Instant::now();
        assert!(outbox.check_stalled(pushed + Duration::from_secs(31)).is_some(), "half a minute is stopped");
    }

    #[test]
    fn over_the_total_the_longest_idle_go_first_until_the_rest_fit() {
        let backlog =
            |mib: usize, idle_s: u64| Backlog { bytes: mib << 20, idle: Duration::from_secs(idle_s) };
        let mib = 1 << 20;
        let reading = ("reading", backlog(250, 0));
        let stopped = [("a", backlog(100, 20)), ("b", backlog(100, 25)), ("c", backlog(100, 5))];
        let all = |v: &[(&'static str, Backlog)]| v.to_vec();
        assert_eq!(
            over_the_total(all(&[reading, stopped[0]]), 400 * mib),
            Vec::<&str>::new(),
            "under the bound"
        );
        // 550 MiB against 400: the reader, far more behind but reading, stays.
        let mut clients = all(&stopped);
        clients.push(reading);
        assert_eq!(over_the_total(clients.clone(), 400 * mib), ["b", "a"]);
        assert_eq!(over_the_total(clients, 100 * mib), ["b", "a", "c", "reading"]);
        // An empty queue frees nothing: never given up on for the total.
        assert_eq!(over_the_total(vec![("empty", backlog(0, 0)), ("x", backlog(2, 1))], mib), ["x"]);
    }

    /// A frame taken is not a frame read: a writer still writing a 64 MiB answer to a slow
    /// reader has taken nothing since, and is given the time to read it.
    #[tokio::test]
    async fn a_large_frame_being_written_buys_the_time_to_read_it() {
        let (outbox, reader) = outbox(Limits::default());
        outbox.push(frame(64 << 20)).unwrap();
        assert_eq!(reader.next_ready().map(|f| f.len()), Some(64 << 20));
        // The queue fills from empty, so the clock starts at the first push: read before it for
        // "not yet" and after for "stopped", so that a thread descheduled between the two
        // (seconds, at nice 19 on a loaded machine) cannot turn either into the other.
        let before = Instant::now();
        for _ in 0..4 {
            outbox.push(frame(1 << 20)).unwrap();
        }
        let pushed = Instant::now();
        assert_eq!(outbox.check_stalled(before + Duration::from_secs(60)), None, "still reading it");
        assert!(outbox.check_stalled(pushed + Duration::from_secs(95)).is_some());
    }

    #[tokio::test]
    async fn a_client_that_keeps_taking_frames_or_is_little_behind_is_not_stalled() {
        let (outbox, reader) = outbox(LIMITS);
        outbox.push(frame(100)).unwrap();
        let behind_a_little = Instant::now() + LIMITS.stall_timeout * 10;
        assert_eq!(outbox.check_stalled(behind_a_little), None, "at most stall_bytes wait");
        outbox.push(frame(100)).unwrap();
        let before_take = Instant::now();
        reader.next_ready().unwrap();
        outbox.push(frame(100)).unwrap();
        // Progress counts from the last frame taken.
        let patience = LIMITS.patience(2 * (100 + FRAME_OVERHEAD), 100).unwrap();
        let since_taken = before_take + patience - Duration::from_millis(100);
        assert_eq!(outbox.check_stalled(since_taken), None);
        // An idle writer is not behind: a queue that fills from empty starts the clock again,
        // however long ago the writer last took a frame.
        while reader.next_ready().is_some() {}
        {
            let mut state = outbox.shared.state();
            state.progress_at =
                state.progress_at.checked_sub(Duration::from_secs(60)).unwrap_or(state.progress_at);
        }
        let before_push = Instant::now();
        outbox.push(frame(100)).unwrap();
        outbox.push(frame(100)).unwrap();
        let patience = LIMITS.patience(2 * (100 + FRAME_OVERHEAD), 100).unwrap();
        assert_eq!(outbox.check_stalled(before_push + patience - Duration::from_millis(100)), None);
        let after_idle = Instant::now() + patience;
        assert!(outbox.check_stalled(after_idle).is_some(), "queued at once, nothing taken since");
    }

    /// Whether `hub` was woken (a permit waits), without waiting.
    fn woken(hub: &Notify) -> bool {
        use futures_util::FutureExt;
        hub.notified().now_or_never().is_some()
    }

    #[tokio::test]
    async fn a_client_past_the_bound_is_not_reading_and_wakes_the_hub_each_time_it_reads_again() {
        let (outbox, reader) = outbox(Limits::default());
        let mib = |outbox: &Outbox| outbox.push(frame((1 << 20) - FRAME_OVERHEAD)).unwrap();
        for _ in 0..4 {
            mib(&outbox);
        }
        assert!(outbox.reading(), "4 MiB waiting: still reading");
        mib(&outbox);
        assert!(!outbox.reading());
        let hub = Arc::new(Notify::new());
        outbox.wake_when_reading(hub.clone());
        assert!(!woken(&hub));
        // Down to 2 MiB: not yet; to 1 MiB: reading, and the hub is woken.
        for _ in 0..3 {
            reader.next_ready().unwrap();
        }
        assert!(!outbox.reading() && !woken(&hub));
        reader.next_ready().unwrap();
        assert!(outbox.reading() && woken(&hub));
        // More comes before the hub looks: it finds the client not reading again, and is woken
        // again when it reads (a wake-up taken once would leave it not reading for ever).
        for _ in 0..4 {
            mib(&outbox);
        }
        assert!(!outbox.reading());
        while outbox.shared.state().bytes > READING_AGAIN_BYTES {
            assert!(!woken(&hub));
            reader.next_ready().unwrap();
        }
        assert!(outbox.reading() && woken(&hub));
        // A hub that asks while the client reads is woken at once.
        let late = Arc::new(Notify::new());
        outbox.wake_when_reading(late.clone());
        assert!(woken(&late));
    }

    #[tokio::test]
    async fn an_emptied_queue_gives_back_a_burst_s_room() {
        let (outbox, reader) = outbox(Limits::default());
        for _ in 0..10 * KEPT_CAPACITY {
            outbox.push(frame(1)).unwrap();
        }
        while reader.next_ready().is_some() {}
        assert!(outbox.shared.state().queue.capacity() <= KEPT_CAPACITY);
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
        for _ in 0..3 {
            outbox.push(frame(100)).unwrap();
        }
        assert!(outbox.push(frame(100)).is_err());
        assert_eq!(tokio::time::timeout(Duration::from_secs(5), writer).await.unwrap().unwrap(), "stopped");
    }
}
