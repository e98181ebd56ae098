//! The docs point at things that exist: every relative Markdown link (and its `#anchor`, as
//! GitHub makes one from a heading) and every backticked repository path (`core/src/guard.rs`,
//! `tests/e2e/`) in the repository's Markdown files. Moved or renamed files break a doc without
//! anyone noticing otherwise; `./dev test docs` runs this alone. The tests ARCHITECTURE.md's
//! invariants name exist too: a renamed test must not leave an invariant held by nothing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Top-level folders whose backticked paths are checked.
const TOP: &[&str] = &[
    "wire/",
    "core/",
    "daemon/",
    "extension/",
    "extension-core/",
    "extension-wasm/",
    "xtask/",
    "tests/",
    "patches/",
    "docs/",
    ".ci/",
];

/// Built, not committed: named in the docs, absent from a fresh clone.
const GENERATED: &[&str] = &["extension/pkg", "tests/node_modules", "target"];

/// Folders never searched for Markdown files.
const SKIP_DIRS: &[&str] = &["target", "node_modules", "pkg", "scratch"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !name.starts_with('.') && !SKIP_DIRS.contains(&name.as_str()) {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The text outside fenced code blocks, line by line (with line numbers from 1).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            lines.push((n + 1, line));
        }
    }
    lines
}

/// Every heading's anchor, with GitHub's `-1`, `-2` for repeats.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for (_, line) in prose_lines(text) {
        let Some(heading) = line.strip_prefix('#') else { continue };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = slug(heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// Link targets `](target)` on a line.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(rest[..end].trim());
            rest = &rest[end..];
        }
    }
    targets
}

/// Inline code spans on a line.
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// A code span that names a repository path: starts with a top-level folder, no spaces,
/// no placeholder or glob. `::item` and a trailing `:` are not part of the path.
fn repo_path(span: &str) -> Option<&str> {
    if !TOP.iter().any(|top| span.starts_with(top)) {
        return None;
    }
    if span.chars().any(|c| c.is_whitespace() || "<>*{}[]|,=?".contains(c)) {
        return None;
    }
    let span = span.split("::").next().unwrap();
    Some(span.trim_end_matches(':'))
}

/// What is wrong with the links and paths of one Markdown file.
fn problems(root: &Path, file: &Path, text: &str) -> Vec<String> {
    let dir = file.parent().unwrap();
    let name = file.strip_prefix(root).unwrap_or(file).display().to_string();
    let own_anchors = anchors(text);
    let mut found = Vec::new();
    for (n, line) in prose_lines(text) {
        for target in link_targets(line) {
            if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target, None),
            };
            let linked = if path.is_empty() { file.to_path_buf() } else { dir.join(path) };
            if !linked.exists() {
                found.push(format!("{name}:{n}: link to a missing file: {target}"));
                continue;
            }
            if let Some(anchor) = anchor {
                let known = if path.is_empty() {
                    own_anchors.contains(anchor)
                } else if linked.extension().is_some_and(|e| e == "md") {
                    anchors(&std::fs::read_to_string(&linked).unwrap()).contains(anchor)
                } else {
                    true
                };
                if !known {
                    found.push(format!("{name}:{n}: link to a missing heading: {target}"));
                }
            }
        }
        for span in code_spans(line) {
            let Some(path) = repo_path(span) else { continue };
            if GENERATED.iter().any(|g| path.starts_with(g)) {
                continue;
            }
            if !root.join(path).exists() {
                found.push(format!("{name}:{n}: no such path in the repository: `{path}`"));
            }
        }
    }
    found
}

#[test]
fn the_docs_links_and_paths_exist() {
    let root = root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("ARCHITECTURE.md")),
        "no Markdown found under {}",
        root.display()
    );
    let found: Vec<String> = files
        .iter()
        .flat_map(|file| problems(&root, file, &std::fs::read_to_string(file).unwrap()))
        .collect();
    assert!(found.is_empty(), "{} broken in the docs:\n{}", found.len(), found.join("\n"));
}

/// Rust sources (not `target/`), for finding test functions by name.
fn rust_sources(dir: &Path, out: &mut String) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !name.starts_with('.') && !SKIP_DIRS.contains(&name.as_str()) {
                rust_sources(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// The code spans of the invariants section that read as a Rust test's name (snake case, with
/// at least two underscores), and are not `fn NAME` anywhere in `sources`.
fn missing_tests(architecture: &str, sources: &str) -> Vec<String> {
    let Some(start) = architecture.find("\n## Invariants") else {
        return vec!["ARCHITECTURE.md has no `## Invariants` section".into()];
    };
    let section = &architecture[start..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |end| end + 1)];
    let mut missing: Vec<String> = section
        .lines()
        .flat_map(code_spans)
        .filter(|span| {
            span.matches('_').count() >= 2
                && span.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .filter(|name| {
            !sources.match_indices(&format!("fn {name}")).any(|(at, found)| {
                !sources[at + found.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
            })
        })
        .map(|name| format!("ARCHITECTURE.md names a test that does not exist: `{name}`"))
        .collect();
    missing.dedup();
    missing
}

#[test]
fn the_tests_the_invariants_name_exist() {
    let root = root();
    let mut sources = String::new();
    for dir in ["wire", "core", "daemon", "extension-core", "extension-wasm", "xtask"] {
        rust_sources(&root.join(dir), &mut sources);
    }
    let missing = missing_tests(&std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap(), &sources);
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn a_renamed_test_is_reported() {
    let doc = "# A\n`not_a_test_here`\n## Invariants\n- held: `a_real_test_name`, `a_gone_test_name`, \
               `a_real_test_name_too_long`, `Core::tick`, `tick`\n## Later\n`another_gone_one`\n";
    let sources = "#[test]\nfn a_real_test_name() {}\nfn a_real_test_name_too_long_x() {}\n";
    assert_eq!(
        missing_tests(doc, sources),
        [
            "ARCHITECTURE.md names a test that does not exist: `a_gone_test_name`",
            "ARCHITECTURE.md names a test that does not exist: `a_real_test_name_too_long`",
        ]
    );
}

#[test]
fn slugs_are_githubs() {
    assert_eq!(slug(" Policy: what each agent may do"), "policy-what-each-agent-may-do");
    assert_eq!(slug("`tabtunnel mcp` (daemon/src/mcp/)"), "tabtunnel-mcp-daemonsrcmcp");
    assert_eq!(slug("Agents' own tokens"), "agents-own-tokens");
    let repeated = anchors("# A\n## A\n```\n# B\n```\n");
    assert!(repeated.contains("a") && repeated.contains("a-1") && !repeated.contains("b"));
}

#[test]
fn a_missing_file_heading_or_path_is_reported() {
    let root = root();
    let file = root.join("README.md");
    let text = "# Here\n[ok](ARCHITECTURE.md) [self](#here) [web](https://example.com/x)\n\
                [gone](NOPE.md) [bad](#nowhere) `core/src/lib.rs` `core/src/nope.rs` \
                `extension/pkg/sw.js` `tests/e2e/*.test.mjs` `core/src/lib.rs::Core`\n\
                ```\n[in code](NOPE2.md) `core/nope`\n```\n";
    let found = problems(&root, &file, text);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].contains("missing file: NOPE.md"));
    assert!(found[1].contains("missing heading: #nowhere"));
    assert!(found[2].contains("`core/src/nope.rs`"));
}
