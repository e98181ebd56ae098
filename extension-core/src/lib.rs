//! The extension's decisions, in the shape of `tabtunnel-core` (and quinn-proto, str0m): inputs
//! in (daemon frames, chrome events, panel requests, completed effects, time), effects out
//! (chrome calls, frames to the daemon, persistence, panel updates, timers). No `chrome.*`, no
//! JS, no clock, no IO: `extension-wasm` interprets the effects and turns what happens in Chrome
//! into inputs. CDP params and results stay opaque here, as in the core.

pub mod early_events;
pub mod epochs;
pub mod focus;
pub mod gestures;
pub mod placement;
pub mod popups;
pub mod prepared;
pub mod sharing;
pub mod steps;
pub mod workers;
