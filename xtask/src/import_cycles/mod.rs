//! `cargo run -p xtask -- import-cycles [CRATE_DIR...]`: every file-level import cycle in the
//! crates' `src/` (all workspace crates by default). A cycle is a set of files each reaching the
//! others through "uses an item defined in" edges; see `graph` for what counts as a use. Exits
//! non-zero when any crate has one; there is no allowlist.

mod graph;
mod lexer;
mod scan;

use graph::{cycles, CrateGraph};
use std::path::{Path, PathBuf};

pub const WORKSPACE_CRATES: &[&str] =
    &["wire", "core", "daemon", "extension-core", "extension-wasm", "xtask"];

/// The report for the crates in `dirs` (relative to `root`), and whether any cycle was found.
pub fn check(
    root: &Path,
    dirs: &[&str],
    read: &dyn Fn(&Path) -> Option<String>,
) -> Result<(String, bool), String> {
    let mut report = String::new();
    let mut found = false;
    for dir in dirs {
        let src = Path::new(dir).join("src");
        let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"].iter().map(|f| src.join(f)).collect();
        if let Ok(bins) = std::fs::read_dir(root.join(&src).join("bin")) {
            let mut bins: Vec<PathBuf> = bins
                .filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
                .map(|e| src.join("bin").join(e.file_name()))
                .collect();
            bins.sort();
            roots.extend(bins);
        }
        let mut any_root = false;
        for crate_root in roots {
            if read(&root.join(&crate_root)).is_none() {
                continue;
            }
            any_root = true;
            let rel = |p: &Path| -> Option<String> { read(&root.join(p)) };
            let g = CrateGraph::load(&crate_root, &rel)?;
            let edges = g.edges();
            for scc in cycles(g.files.len(), &edges) {
                found = true;
                report.push_str(&format!(
                    "import cycle of {} files in {}'s tree:\n",
                    scc.len(),
                    crate_root.display()
                ));
                for ((a, b), names) in &edges {
                    if scc.contains(a) && scc.contains(b) {
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        report.push_str(&format!(
                            "  {} -> {}: {}\n",
                            g.files[*a].display(),
                            g.files[*b].display(),
                            names.join(", ")
                        ));
                    }
                }
            }
        }
        if !any_root {
            return Err(format!("{dir}: no src/lib.rs or src/main.rs"));
        }
    }
    Ok((report, found))
}

#[cfg(test)]
mod tests {
    use super::check;
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    fn run(files: &[(&str, &str)]) -> (String, bool) {
        let tree: BTreeMap<PathBuf, String> =
            files.iter().map(|(p, s)| (Path::new("/ws").join(p), s.to_string())).collect();
        check(Path::new("/ws"), &["k"], &|p| tree.get(p).cloned()).unwrap()
    }

    /// A crate root that re-exports its children and defines what they use, a `mod.rs` whose
    /// child reads its constant while it uses the child's type, and a chain through `use`.
    const CYCLIC: &[(&str, &str)] = &[
        (
            "k/src/lib.rs",
            "mod a; pub mod g; mod b; mod c; pub use a::A; pub struct Root; /// crate::c::C in a doc\nfn f() {}",
        ),
        ("k/src/a.rs", "use crate::Root; pub struct A(Root);"),
        ("k/src/g/mod.rs", "mod rule; pub const TIMEOUT: u8 = 1; pub fn go() -> rule::Rule { todo!() }"),
        ("k/src/g/rule.rs", "pub struct Rule; fn t() -> u8 { super::TIMEOUT }"),
        ("k/src/b.rs", "use crate::c::C; pub struct B; fn f(_: C) {}"),
        ("k/src/c.rs", "pub struct C; fn f() { let _ = crate::b::B; }\n#[cfg(test)] mod tests { use super::*; }"),
    ];

    #[test]
    fn reports_each_cycle_with_the_names_making_it() {
        let (report, found) = run(CYCLIC);
        assert!(found);
        assert_eq!(
            report,
            "import cycle of 2 files in k/src/lib.rs's tree:\n  \
             k/src/g/mod.rs -> k/src/g/rule.rs: Rule\n  k/src/g/rule.rs -> k/src/g/mod.rs: TIMEOUT\n\
             import cycle of 2 files in k/src/lib.rs's tree:\n  \
             k/src/b.rs -> k/src/c.rs: C\n  k/src/c.rs -> k/src/b.rs: B\n"
        );
    }

    #[test]
    fn a_shared_type_in_its_own_file_breaks_the_cycle() {
        let (report, found) = run(&[
            ("k/src/lib.rs", "mod a; mod b; mod ab; pub use a::A;"),
            ("k/src/ab.rs", "pub struct Shared;"),
            ("k/src/a.rs", "use crate::ab::Shared; use crate::b::B; pub struct A(Shared, B);"),
            // Reaches `Shared` through the root's would-be facade and a glob: still ab.rs.
            (
                "k/src/b.rs",
                "use crate::ab::*; pub struct B(Shared);\n#[cfg(test)] mod tests { use super::*; }",
            ),
        ]);
        assert_eq!((report.as_str(), found), ("", false));
    }

    #[test]
    fn re_exports_unused_imports_and_traits_are_told_apart() {
        // lib.rs only re-exports `A` (no use of a.rs), so a.rs using the root's item is no cycle;
        // an import of a trait is a use even when its name never appears.
        let (_, found) = run(&[
            ("k/src/lib.rs", "mod a; mod t; pub use a::A; pub struct Root;"),
            ("k/src/a.rs", "pub struct A(crate::Root);"),
            ("k/src/t.rs", "pub trait T { fn m(&self); }"),
        ]);
        assert!(!found);
        // Another crate's item re-exported by the root is that crate's, not the root's.
        let (_, found) = run(&[
            ("k/src/lib.rs", "mod a; pub use other::X; fn f(_: a::A) {}"),
            ("k/src/a.rs", "pub struct A(crate::X);"),
        ]);
        assert!(!found);
        let (report, found) = run(&[
            ("k/src/lib.rs", "mod a; mod t; use t::T as _; pub struct Root; fn f(a: a::A) { a.m() }"),
            ("k/src/a.rs", "pub struct A(crate::Root);"),
            ("k/src/t.rs", "pub trait T { fn m(&self); } impl T for crate::a::A { fn m(&self) {} } fn f(_: crate::Root) {}"),
        ]);
        assert!(found);
        assert!(report.contains("k/src/lib.rs -> k/src/t.rs: T\n"), "{report}");
    }

    #[test]
    fn a_file_extending_a_type_with_impl_blocks_does_not_use_it() {
        // The root's `Core` gets inputs from `a.rs`; the root uses `a.rs`'s type. Not a cycle,
        // until `a.rs` uses another of the root's items.
        let extending = [
            ("k/src/lib.rs", "mod a; pub struct Core { a: a::Part } pub struct Other;"),
            ("k/src/a.rs", "use crate::Core; pub struct Part; impl Core { fn input(&mut self) {} }"),
        ];
        assert!(!run(&extending).1);
        let (report, found) = run(&[
            extending[0],
            (
                "k/src/a.rs",
                "use crate::{Core, Other}; pub struct Part; impl Core { fn i(&self, _: Other) {} }",
            ),
        ]);
        assert!(found);
        assert!(report.contains("k/src/a.rs -> k/src/lib.rs: Other\n"), "{report}");
    }

    #[test]
    fn a_missing_module_file_is_an_error_not_a_pass() {
        let tree: BTreeMap<PathBuf, String> =
            [(PathBuf::from("/ws/k/src/lib.rs"), "mod gone;".to_string())].into();
        let err = check(Path::new("/ws"), &["k"], &|p| tree.get(p).cloned()).unwrap_err();
        assert!(err.contains("gone"), "{err}");
    }
}
