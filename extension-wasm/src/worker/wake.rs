//! Brings the worker back after Chrome stops it. An idle MV3 worker is stopped after about
//! 30 s, and Chrome may stop a busy one too (an update, memory pressure, DevTools closing it):
//! then nothing of ours runs until some extension event starts it again, and the daemon cannot
//! reach a worker that is not running. A repeating alarm is such an event, every 30 s (the
//! shortest period Chrome allows). Its listener does nothing: being started is the point, and a
//! started worker restores its shared tabs and dials the daemon.

use wasm_bindgen::prelude::*;

use crate::chrome;

const ALARM: &str = "tabtunnel-wake";
const PERIOD_MINUTES: f64 = 0.5;

/// In the worker's first turn, like every listener Chrome must find to start the worker for.
pub fn listen() {
    let cb = Closure::<dyn FnMut(JsValue)>::new(|_alarm: JsValue| {});
    chrome::on_alarm(&cb);
    cb.forget();
}

/// Sets the alarm up once; it survives the worker, so later starts find it in place.
pub async fn schedule() {
    if let Err(e) = chrome::ensure_alarm(ALARM, PERIOD_MINUTES).await {
        warn!("cannot set the wake-up alarm: {e}");
    }
}
