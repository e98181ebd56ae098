//! Chrome's events about tabs (debugger detached, tab removed, updated, moved between windows,
//! navigation started or committed) turned into calls on the parts that follow them: `sharing`
//! for shared tabs, `agent_tabs` for prepared ones, `off_tab_writes`, `placement`, `gestures`.
//! Kept apart from those parts so that none of them needs to call another back.

use serde::Deserialize;
use tabtunnel_extension_core::sharing::Detached;
use tabtunnel_wire::{TabId, WindowId};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::sharing::{changed, navigated, release, unshare};
use super::state::{is_shared, with};
use super::{
    agent_tabs, gestures, late_documents, off_tab_writes, placement, reattach, relatives, web_only, workers,
};
use crate::chrome;
use crate::js::from_js;

pub fn listen() {
    let on_detach = Closure::<dyn FnMut(JsValue, String)>::new(|source: JsValue, reason: String| {
        let Some(source) = from_js::<chrome::DebuggerSource>(&source).filter(|s| s.session_id.is_none())
        else {
            return;
        };
        if let Some(target_id) = source.target_id {
            return workers::detached(&target_id, &reason);
        }
        let Some(tab_id) = source.tab_id else { return };
        match with(|w| w.shared.detached(tab_id, &reason)) {
            Detached::NotShared => agent_tabs::lost(tab_id),
            Detached::Reattach => {
                log!("debugger detached from tab {tab_id}: {reason}");
                reattach::target_closed(tab_id)
            }
            Detached::Unshare(why) => {
                log!("debugger detached from tab {tab_id}: {reason}");
                unshare(tab_id, why)
            }
        }
    });
    chrome::on_debugger_detach(&on_detach);
    on_detach.forget();

    let on_removed = Closure::<dyn FnMut(TabId, JsValue)>::new(|tab_id: TabId, _info: JsValue| {
        with(|w| {
            w.popups.tab_removed(tab_id);
            w.early_events.tab_removed(tab_id);
            w.off_tab_writes.newborn.removed(tab_id);
        });
        gestures::tab_closed(tab_id);
        relatives::removed(tab_id);
        late_documents::forget(tab_id, true);
        if is_shared(tab_id) {
            unshare(tab_id, with(|w| w.shared.closed(tab_id)));
        } else {
            agent_tabs::lost(tab_id);
            off_tab_writes::left(tab_id); // one that was being shared
        }
    });
    chrome::on_tab_removed(&on_removed);
    on_removed.forget();

    let on_updated =
        Closure::<dyn FnMut(TabId, JsValue, JsValue)>::new(|tab_id: TabId, change: JsValue, tab: JsValue| {
            if let Some(group_id) =
                js_sys::Reflect::get(&change, &"groupId".into()).ok().and_then(|g| g.as_f64())
            {
                if let Some(left) = placement::group_changed(tab_id, group_id as i32) {
                    spawn_local(async move {
                        if left.await {
                            release(tab_id).await;
                        }
                    });
                }
            }
            if let Some(url) = js_sys::Reflect::get(&change, &"url".into()).ok().and_then(|u| u.as_string()) {
                agent_tabs::navigated(tab_id, &url);
                navigated(tab_id, &url);
            }
            let relevant =
                ["url", "title"].iter().any(|k| js_sys::Reflect::has(&change, &(*k).into()).unwrap_or(false));
            if relevant && is_shared(tab_id) {
                if js_sys::Reflect::has(&change, &"url".into()).unwrap_or(false) {
                    with(|w| w.shared.navigated(tab_id, js_sys::Date::now()));
                }
                if let Some(tab) = from_js::<chrome::Tab>(&tab) {
                    changed(tab_id, |info| {
                        info.url = tab.url;
                        info.title = tab.title;
                    });
                }
            }
        });
    chrome::on_tab_updated(&on_updated);
    on_updated.forget();

    let on_attached = Closure::<dyn FnMut(TabId, JsValue)>::new(|tab_id: TabId, info: JsValue| {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct AttachInfo {
            new_window_id: WindowId,
        }
        if let Some(AttachInfo { new_window_id }) = from_js(&info) {
            changed(tab_id, |info| info.window_id = new_window_id);
            if placement::window_changed(tab_id, new_window_id) {
                spawn_local(release(tab_id));
            }
            agent_tabs::moved(tab_id, new_window_id);
        }
    });
    chrome::on_tab_attached(&on_attached);
    on_attached.forget();

    let on_navigation = |late: fn(&JsValue)| {
        Closure::<dyn FnMut(JsValue)>::new(move |details: JsValue| {
            off_tab_writes::frame_navigated(&details);
            late(&details);
            if let Some((tab_id, url)) = web_only::main_frame(&details) {
                navigated(tab_id, &url);
            }
        })
    };
    let before = on_navigation(late_documents::started);
    chrome::on_before_navigate(&before);
    before.forget();
    let committed = on_navigation(late_documents::committed);
    chrome::on_navigation_committed(&committed);
    committed.forget();
    let failed = Closure::<dyn FnMut(JsValue)>::new(|details: JsValue| late_documents::failed(&details));
    chrome::on_navigation_error(&failed);
    failed.forget();
}
