//! The browser's identity for `Hello`, since `chrome.debugger` cannot call `Browser.getVersion`.

use std::cell::RefCell;

use serde::Deserialize;
use tabtunnel_wire::BrowserInfo;
use wasm_bindgen::JsCast;

use crate::{chrome, js::from_js};

thread_local! {
    static CACHED: RefCell<Option<BrowserInfo>> = const { RefCell::new(None) };
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HighEntropy {
    #[serde(default)]
    full_version_list: Vec<Brand>,
}

#[derive(Deserialize)]
struct Brand {
    brand: String,
    version: String,
}

/// Read once per worker lifetime.
pub async fn get() -> BrowserInfo {
    if let Some(info) = CACHED.with_borrow(Clone::clone) {
        return info;
    }
    let user_agent = js_sys::global()
        .unchecked_into::<web_sys::WorkerGlobalScope>()
        .navigator()
        .user_agent()
        .unwrap_or_default();
    // The UA string is reduced (`156.0.0.0`); the high-entropy hints carry the real version.
    let brands = match chrome::high_entropy_values(&["fullVersionList"]).await {
        Ok(v) => from_js::<HighEntropy>(&v).map(|h| h.full_version_list).unwrap_or_default(),
        Err(e) => {
            warn!("userAgentData unavailable ({e}); using the user agent's version");
            Vec::new()
        }
    };
    let info = BrowserInfo {
        product: product(&user_agent, &brands),
        user_agent,
        protocol_version: "1.3".into(),
        js_version: String::new(),
    };
    CACHED.set(Some(info.clone()));
    info
}

/// `Chrome/<full version>`, or `HeadlessChrome/...` like Chrome's own `product`.
fn product(user_agent: &str, brands: &[Brand]) -> String {
    let name = if user_agent.contains("HeadlessChrome/") { "HeadlessChrome" } else { "Chrome" };
    let version = ["Google Chrome", "Chromium"]
        .iter()
        .find_map(|wanted| brands.iter().find(|b| b.brand == *wanted))
        .map(|b| b.version.clone())
        .or_else(|| version_in_user_agent(user_agent, name))
        .unwrap_or_else(|| "0.0.0.0".into());
    format!("{name}/{version}")
}

fn version_in_user_agent(user_agent: &str, name: &str) -> Option<String> {
    let rest = &user_agent[user_agent.find(&format!("{name}/"))? + name.len() + 1..];
    Some(rest.split_whitespace().next()?.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADLESS_UA: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36";

    fn brand(brand: &str, version: &str) -> Brand {
        Brand { brand: brand.into(), version: version.into() }
    }

    #[test]
    fn prefers_the_full_version_and_keeps_headless() {
        let brands = [brand("Not.A/Brand", "99.0.0.0"), brand("Chromium", "156.0.8078.108")];
        assert_eq!(product(HEADLESS_UA, &brands), "HeadlessChrome/156.0.8078.108");
        let chrome_ua = HEADLESS_UA.replace("HeadlessChrome", "Chrome");
        let brands = [brand("Chromium", "156.0.8078.73"), brand("Google Chrome", "156.0.8078.73")];
        assert_eq!(product(&chrome_ua, &brands), "Chrome/156.0.8078.73");
    }

    #[test]
    fn falls_back_to_the_user_agent() {
        assert_eq!(product(HEADLESS_UA, &[]), "HeadlessChrome/156.0.0.0");
    }
}
