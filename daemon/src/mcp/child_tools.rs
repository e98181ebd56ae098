//! Which of the child's tools an agent may call, and which of their arguments name files.
//!
//! Each child runs in the user's account, so a tool that runs code in the child's Node process
//! (@playwright/mcp's `browser_run_code_unsafe`: its `page.constructor.constructor('return
//! process')()` reached `require`, ran commands and read the owner token), starts programs
//! (chrome-devtools-mcp's screencast runs ffmpeg) or reads and writes the disk freely would
//! make an agent the user. So only the tools listed here, of the pinned versions, are offered
//! or forwarded: what acts in the page over CDP, and files only inside the session's work
//! directory (`work_dir`). A tool a newer child adds stays hidden until it is read and listed.
//! @playwright/mcp 0.0.83 cannot leave `browser_run_code_unsafe` out itself: its "core"
//! tools are always on (`filteredTools`, playwright-core `lib/coreBundle.js`; `--caps` only
//! adds), so this list is the only gate.

use super::child::ToolKind;
use super::work_dir::WorkDir;
use serde_json::Value;

/// An argument naming a file, and what the child does with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    /// Writes (or creates a directory) there.
    Write,
    /// Reads it in the child's process: Playwright builds the File in page JS over CDP, so the
    /// daemon's local-files rule never sees the path (and `sourcePath` runs it as a script).
    Read,
    /// Hands it to the browser by path (`DOM.setFileInputFiles`): an absolute path is the
    /// daemon's to judge (its local-files rule, the agent's `allow_file_uploads`).
    Upload,
}

/// A tool an agent may call, with the arguments (string or list of strings) that name files.
type Tool = (&'static str, &'static [(&'static str, Use)]);

/// @playwright/mcp 0.0.83, its default tools (no `--caps`); left out: `browser_run_code_unsafe`
/// (code in the child's process).
const PLAYWRIGHT: &[Tool] = &[
    ("browser_click", &[]),
    ("browser_close", &[]),
    ("browser_console_messages", &[("filename", Use::Write)]),
    ("browser_drag", &[]),
    ("browser_drop", &[("paths", Use::Read)]),
    ("browser_emulate_media", &[]),
    // Evaluates `function` in the page (`page.evaluate`), not in the child.
    ("browser_evaluate", &[("filename", Use::Write)]),
    ("browser_file_upload", &[("paths", Use::Read)]),
    ("browser_fill_form", &[]),
    ("browser_find", &[("filename", Use::Write)]),
    ("browser_handle_dialog", &[]),
    ("browser_hover", &[]),
    ("browser_navigate", &[]),
    ("browser_navigate_back", &[]),
    ("browser_network_request", &[("filename", Use::Write)]),
    ("browser_network_requests", &[("filename", Use::Write)]),
    ("browser_press_key", &[]),
    ("browser_resize", &[]),
    ("browser_select_option", &[]),
    ("browser_snapshot", &[("filename", Use::Write)]),
    ("browser_tabs", &[]),
    ("browser_take_screenshot", &[("filename", Use::Write)]),
    ("browser_type", &[]),
    ("browser_wait_for", &[]),
];

/// chrome-devtools-mcp 1.11.0, its default tools; left out: `screencast_start` and
/// `screencast_stop` (run ffmpeg in the child's process).
const CHROME_DEVTOOLS: &[Tool] = &[
    ("click", &[]),
    ("close_page", &[]),
    ("drag", &[]),
    ("emulate", &[]),
    // `function` and `initScript` run in the page; `sourcePath` is read by the child.
    ("evaluate_script", &[("sourcePath", Use::Read), ("filePath", Use::Write)]),
    ("fill", &[]),
    ("fill_form", &[]),
    ("get_console_message", &[]),
    ("get_css_styles", &[]),
    ("get_network_request", &[("requestFilePath", Use::Write), ("responseFilePath", Use::Write)]),
    ("handle_dialog", &[]),
    ("hover", &[]),
    ("lighthouse_audit", &[("outputDirPath", Use::Write)]),
    ("list_console_messages", &[]),
    ("list_network_requests", &[]),
    ("list_pages", &[]),
    ("navigate_page", &[]),
    ("new_page", &[]),
    ("performance_analyze_insight", &[]),
    ("performance_start_trace", &[("filePath", Use::Write)]),
    ("performance_stop_trace", &[("filePath", Use::Write)]),
    ("press_key", &[]),
    ("resize_page", &[]),
    ("select_page", &[]),
    ("take_heapsnapshot", &[("filePath", Use::Write)]),
    ("take_screenshot", &[("filePath", Use::Write)]),
    ("take_snapshot", &[("filePath", Use::Write)]),
    ("type_text", &[]),
    ("upload_file", &[("filePaths", Use::Upload)]),
    ("wait_for", &[]),
];

fn tools(kind: ToolKind) -> &'static [Tool] {
    match kind {
        ToolKind::Playwright => PLAYWRIGHT,
        ToolKind::ChromeDevtools => CHROME_DEVTOOLS,
    }
}

fn find(kind: ToolKind, name: &str) -> Option<&'static Tool> {
    tools(kind).iter().find(|(tool, _)| *tool == name)
}

/// Whether the child's tool `name` is offered to agents.
pub fn offered(kind: ToolKind, name: &str) -> bool {
    find(kind, name).is_some()
}

/// Why a call of the child's tool `name` with `arguments` is not forwarded, if it is not: a
/// tool not offered, or a file outside `work` (`WorkDir::resolve`).
pub fn refusal(kind: ToolKind, name: &str, arguments: Option<&Value>, work: &WorkDir) -> Option<String> {
    let Some((_, paths)) = find(kind, name) else {
        return Some(format!("{name} is not a tool of this server"));
    };
    let arguments = match arguments {
        None | Some(Value::Null) => return None,
        Some(Value::Object(arguments)) => arguments,
        Some(_) => return Some(format!("{name}: its arguments are not an object")),
    };
    paths.iter().find_map(|(key, how)| {
        let named: Vec<&Value> = match arguments.get(*key) {
            None | Some(Value::Null) => return None,
            Some(Value::Array(list)) => list.iter().collect(),
            Some(one) => vec![one],
        };
        named.into_iter().find_map(|value| {
            let Some(text) = value.as_str() else {
                return Some(format!("{name}: {key} {value} is not a file name"));
            };
            if *how == Use::Upload && is_absolute(text) {
                return None;
            }
            work.resolve(text).err().map(|why| format!("{name}: {key} {why}"))
        })
    })
}

/// Absolute as the child (on this platform) reads it, so it names that path to the browser,
/// whose every route to a local path the daemon judges by its own rule.
fn is_absolute(text: &str) -> bool {
    std::path::Path::new(text).is_absolute()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[cfg(unix)]
    const ABSOLUTE: &str = "/home/u/.bashrc";
    #[cfg(windows)]
    const ABSOLUTE: &str = "C:\\Users\\u\\.bashrc";

    fn work() -> (tempfile::TempDir, WorkDir) {
        let parent = tempfile::tempdir().unwrap();
        let work = WorkDir::create(parent.path()).unwrap();
        (parent, work)
    }

    #[test]
    fn code_in_the_childs_process_is_neither_offered_nor_forwarded() {
        let (_parent, work) = work();
        for (kind, name) in [
            (ToolKind::Playwright, "browser_run_code_unsafe"),
            (ToolKind::ChromeDevtools, "screencast_start"),
            (ToolKind::ChromeDevtools, "screencast_stop"),
            // Tools a child has behind flags we never pass, or may add later.
            (ToolKind::Playwright, "browser_install"),
            (ToolKind::Playwright, "browser_set_storage_state"),
            (ToolKind::ChromeDevtools, "install_extension"),
            // Another child's tool.
            (ToolKind::ChromeDevtools, "browser_click"),
            (ToolKind::Playwright, "click"),
            (ToolKind::Playwright, ""),
        ] {
            assert!(!offered(kind, name), "{kind:?} {name}");
            let why = refusal(kind, name, Some(&json!({"code": "async () => 1"})), &work);
            assert!(why.is_some_and(|w| w.contains("not a tool")), "{kind:?} {name}");
        }
        assert!(offered(ToolKind::Playwright, "browser_click"));
        assert!(offered(ToolKind::ChromeDevtools, "take_snapshot"));
    }

    #[test]
    fn every_file_argument_stays_in_the_work_directory() {
        let (_parent, work) = work();
        let cases: &[(ToolKind, &str, &str)] = &[
            (ToolKind::Playwright, "browser_snapshot", "filename"),
            (ToolKind::Playwright, "browser_take_screenshot", "filename"),
            (ToolKind::Playwright, "browser_console_messages", "filename"),
            (ToolKind::Playwright, "browser_evaluate", "filename"),
            (ToolKind::Playwright, "browser_find", "filename"),
            (ToolKind::Playwright, "browser_network_request", "filename"),
            (ToolKind::Playwright, "browser_network_requests", "filename"),
            (ToolKind::Playwright, "browser_file_upload", "paths"),
            (ToolKind::Playwright, "browser_drop", "paths"),
            (ToolKind::ChromeDevtools, "evaluate_script", "sourcePath"),
            (ToolKind::ChromeDevtools, "evaluate_script", "filePath"),
            (ToolKind::ChromeDevtools, "get_network_request", "requestFilePath"),
            (ToolKind::ChromeDevtools, "get_network_request", "responseFilePath"),
            (ToolKind::ChromeDevtools, "lighthouse_audit", "outputDirPath"),
            (ToolKind::ChromeDevtools, "performance_start_trace", "filePath"),
            (ToolKind::ChromeDevtools, "performance_stop_trace", "filePath"),
            (ToolKind::ChromeDevtools, "take_heapsnapshot", "filePath"),
            (ToolKind::ChromeDevtools, "take_screenshot", "filePath"),
            (ToolKind::ChromeDevtools, "take_snapshot", "filePath"),
            (ToolKind::ChromeDevtools, "upload_file", "filePaths"),
        ];
        for (kind, tool, key) in cases {
            assert_eq!(refusal(*kind, tool, Some(&json!({ *key: "out/page.yml" })), &work), None);
            assert_eq!(refusal(*kind, tool, Some(&json!({ *key: ["a.png", "b.png"] })), &work), None);
            for bad in [
                json!(".bashrc/../../.bashrc"),
                json!("../token"),
                json!("~/.config/tabtunnel/token"),
                json!("file:///home/u/.bashrc"),
                json!(["ok.png", "../../.ssh/id_ed25519"]),
                json!(7),
                json!([{"path": "x"}]),
            ] {
                let refused = refusal(*kind, tool, Some(&json!({ *key: bad })), &work);
                assert!(refused.is_some(), "{kind:?} {tool} {key} {bad}");
            }
            // An absolute path: the daemon judges uploads by path itself; all else is refused.
            let absolute = refusal(*kind, tool, Some(&json!({ *key: ABSOLUTE })), &work);
            assert_eq!(absolute.is_none(), *tool == "upload_file", "{tool} {key}");
        }
        assert!(refusal(ToolKind::Playwright, "browser_snapshot", Some(&json!("x")), &work).is_some());
        assert_eq!(refusal(ToolKind::Playwright, "browser_snapshot", None, &work), None);
    }
}
