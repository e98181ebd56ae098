//! CDP's `TargetFilter`: which targets a `Target.setDiscoverTargets` or `setAutoAttach` covers.
//! Applied to workers; tabs and pages follow the topology rules of `emulation`.

use serde_json::Value;

/// The entries are matched in order, and the first whose `type` matches (or that names no
/// type) includes or excludes the target; no match excludes it. No filter at all is Chrome's
/// default: everything but `browser` and `tab`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetFilter(Option<Vec<Entry>>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    target_type: Option<String>,
    exclude: bool,
}

impl TargetFilter {
    /// The `filter` of a command's params; entries that are not objects match nothing.
    pub fn of(params: &Value) -> TargetFilter {
        let Some(entries) = params["filter"].as_array() else { return TargetFilter(None) };
        let entries = entries
            .iter()
            .filter(|e| e.is_object())
            .map(|e| Entry {
                target_type: e["type"].as_str().map(str::to_owned),
                exclude: e["exclude"].as_bool().unwrap_or(false),
            })
            .collect();
        TargetFilter(Some(entries))
    }

    pub fn allows(&self, target_type: &str) -> bool {
        match &self.0 {
            None => !matches!(target_type, "browser" | "tab"),
            Some(entries) => entries
                .iter()
                .find(|e| e.target_type.as_deref().is_none_or(|t| t == target_type))
                .is_some_and(|e| !e.exclude),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TargetFilter;
    use serde_json::json;

    #[test]
    fn the_first_matching_entry_decides_and_no_filter_is_chromes_default() {
        let none = TargetFilter::of(&json!({}));
        assert!(none.allows("service_worker") && none.allows("page") && !none.allows("tab"));
        // puppeteer's auto-attach: everything but pages.
        let pptr = TargetFilter::of(&json!({"filter": [{"type": "page", "exclude": true}, {}]}));
        assert!(pptr.allows("shared_worker") && !pptr.allows("page"));
        let only_pages = TargetFilter::of(&json!({"filter": [{"type": "page"}]}));
        assert!(only_pages.allows("page") && !only_pages.allows("service_worker"));
        assert!(!TargetFilter::of(&json!({"filter": []})).allows("service_worker"));
    }
}
