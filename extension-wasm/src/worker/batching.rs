//! When frames for the daemon leave. They are queued on the socket ([`super::daemon`]) and
//! sent together, as one WebSocket message, because the worker pays per message far more
//! than per byte (a message costs a task in the network service and one here).
//!
//! Each answer and event arrives in a task of its own, so waiting for the end of the current
//! task (a microtask) gathers nothing. While commands are still running, more answers are on
//! their way: the queue then leaves in a task of its own, behind those already waiting. When
//! nothing is running, nothing is coming, and it leaves at once (a microtask), so a lone
//! command's answer never waits.

use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use web_sys::MessageChannel;

use super::daemon;
use crate::js::queue_microtask;

#[derive(Default)]
struct Batching {
    /// Commands from the daemon not yet answered.
    running: u32,
    /// A flush is queued as a microtask / as a task.
    microtask: bool,
    task: bool,
    /// What runs the flush: a microtask callback, and a channel whose messages are tasks.
    flush_callback: Option<js_sys::Function>,
    channel: Option<MessageChannel>,
}

thread_local! {
    static BATCHING: RefCell<Batching> = RefCell::new(Batching::default());
}

/// Sets up the flush callbacks; once, at start.
pub fn install() {
    let callback = Closure::<dyn FnMut()>::new(flush).into_js_value().unchecked_into::<js_sys::Function>();
    let channel = MessageChannel::new().ok();
    if let Some(channel) = &channel {
        channel.port1().set_onmessage(Some(&callback));
    }
    BATCHING.with_borrow_mut(|b| {
        b.flush_callback = Some(callback);
        b.channel = channel;
    });
}

pub fn command_started() {
    BATCHING.with_borrow_mut(|b| b.running += 1);
}

pub fn command_done() {
    BATCHING.with_borrow_mut(|b| b.running = b.running.saturating_sub(1));
}

/// A frame was queued: make sure a flush will follow.
pub fn queued() {
    BATCHING.with_borrow_mut(|b| {
        let Some(callback) = &b.flush_callback else { return };
        if b.running == 0 || b.channel.is_none() {
            if !b.microtask {
                b.microtask = true;
                queue_microtask(callback);
            }
        } else if !b.task && !b.microtask {
            b.task = true;
            if let Some(channel) = &b.channel {
                let _ = channel.port2().post_message(&JsValue::NULL);
            }
        }
    });
}

fn flush() {
    BATCHING.with_borrow_mut(|b| {
        b.microtask = false;
        b.task = false;
    });
    daemon::flush();
}
