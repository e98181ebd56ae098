//! The extension's decisions, in the shape of `tabtunnel-core` (and quinn-proto, str0m): inputs
//! in (daemon frames, chrome events, panel requests, completed effects, time), effects out
//! (chrome calls, frames to the daemon, persistence, panel updates, timers). No `chrome.*`, no
//! JS, no clock, no IO: `extension-wasm` interprets the effects and turns what happens in Chrome
//! into inputs. CDP params and results stay opaque here, as in the core.

pub mod agent_tabs;
pub mod backoff;
pub mod batching;
pub mod early_events;
pub mod effect;
pub mod epochs;
pub mod focus;
pub mod gestures;
pub mod input;
pub mod inspect;
pub mod kill_switch;
pub mod late_documents;
pub mod link;
pub mod machine;
pub mod navigation_rules;
pub mod newborn_tabs;
pub mod off_tab_writes;
#[cfg(test)]
mod pair;
pub mod pairing;
pub mod pictures;
pub mod placement;
pub mod popups;
pub mod prepared;
pub mod reattach;
pub mod relatives;
pub mod rule_priorities;
pub mod settings;
pub mod sharing;
pub mod status;
pub mod steps;
#[cfg(test)]
mod testing;
pub mod worker_scan;
pub mod workers;

pub use effect::{ChromeCall, Effect, Level, OpId, WorkerEffect};
pub use input::{ChromeEvent, Completion, Input, PanelInput, TargetChange};
pub use machine::{Config, Machine};
