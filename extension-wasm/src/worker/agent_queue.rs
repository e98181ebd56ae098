//! An agent's tab operations one at a time: the next waits for the one running now.

use wasm_bindgen::prelude::*;

use super::state::with;

/// Runs `work` after the agent's previous tab operation (two at once could each open a window
/// for an agent that has none): creating a tab, preparing one.
pub async fn serially<T, F: std::future::Future<Output = T>>(agent: &str, work: F) -> T {
    let mut resolve = None;
    let done = js_sys::Promise::new(&mut |res, _| resolve = Some(res));
    let (token, previous) = with(|w| {
        (w.agent_steps.begin(agent.to_owned()).0, w.agent_queue.insert(agent.to_owned(), done.clone()))
    });
    if let Some(previous) = previous {
        let _ = wasm_bindgen_futures::JsFuture::from(previous).await;
    }
    let outcome = work.await;
    with(|w| {
        if w.agent_steps.finish(&agent.to_owned(), token) {
            w.agent_queue.remove(agent);
        }
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
    outcome
}
