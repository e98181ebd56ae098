//! What one file says about modules: the items it defines, the modules it declares (`mod x;`
//! and inline `mod x { .. }`), its `use` bindings and the multi-segment paths in its code, each
//! under the (inline) module it sits in. Nothing is resolved here; see `graph`.

use super::lexer::{lex, Tok};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default)]
pub struct FileScan {
    /// Module scopes in this file: 0 is the file's own module, the others inline `mod x { .. }`.
    pub scopes: Vec<Scope>,
    /// Every identifier in the file's code outside `use` declarations: a `use` binding whose
    /// name is never mentioned (a pure re-export, or unused) is no use of the item.
    pub code_idents: BTreeSet<String>,
    /// Types this file has inherent `impl T { .. }` blocks for: such a file is part of `T`
    /// (core spreads its state machine's inputs over files so), so naming `T` is no use of it.
    pub extends: BTreeSet<String>,
}

#[derive(Debug, Default)]
pub struct Scope {
    /// Under `#[cfg(test)]`: test code is no part of the crate's structure (a test harness uses
    /// everything), so its imports are not edges.
    pub test: bool,
    /// Items defined here, and whether each is a trait (a trait import is a use even unnamed:
    /// its methods are called).
    pub defs: BTreeMap<String, ItemKind>,
    /// `mod x;` with its `#[path]`, if any (`#[cfg(test)]` ones are left out).
    pub file_mods: Vec<(String, Option<String>)>,
    pub inline_mods: Vec<(String, usize)>,
    pub uses: Vec<UseBinding>,
    pub paths: Vec<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Trait,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseBinding {
    pub path: Vec<String>,
    pub bind: Bind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bind {
    Name(String),
    Glob,
}

enum Frame {
    Module(usize),
    Block,
}

pub fn scan(src: &str) -> FileScan {
    let t = lex(src);
    let mut f = FileScan { scopes: vec![Scope::default()], ..FileScan::default() };
    let mut stack: Vec<Frame> = Vec::new();
    let mut pending_path: Option<String> = None;
    let mut pending_test = false;
    let mut i = 0;
    while i < t.len() {
        let scope = stack
            .iter()
            .rev()
            .find_map(|fr| match fr {
                Frame::Module(s) => Some(*s),
                Frame::Block => None,
            })
            .unwrap_or(0);
        let module_level = matches!(stack.last(), None | Some(Frame::Module(_)));
        match &t[i] {
            Tok::Ident(kw) if kw == "use" && t.get(i + 1) != Some(&Tok::Punct('<')) => {
                let mut out = Vec::new();
                i = use_tree(&t, i + 1, Vec::new(), &mut out);
                if !std::mem::take(&mut pending_test) {
                    f.scopes[scope].uses.extend(out);
                }
                continue;
            }
            Tok::Ident(kw) if kw == "mod" => {
                if let Some(Tok::Ident(name)) = t.get(i + 1) {
                    match t.get(i + 2) {
                        Some(Tok::Punct(';')) => {
                            let path = pending_path.take();
                            if !std::mem::take(&mut pending_test) {
                                f.scopes[scope].file_mods.push((name.clone(), path));
                            }
                            i += 3;
                            continue;
                        }
                        Some(Tok::Punct('{')) => {
                            let id = f.scopes.len();
                            let test = std::mem::take(&mut pending_test) || f.scopes[scope].test;
                            f.scopes.push(Scope { test, ..Scope::default() });
                            f.scopes[scope].inline_mods.push((name.clone(), id));
                            stack.push(Frame::Module(id));
                            i += 3;
                            continue;
                        }
                        _ => {}
                    }
                }
            }
            Tok::Ident(kw) if module_level && is_item_keyword(kw) => {
                if let Some(name) = item_name(&t, i) {
                    let kind = if kw == "trait" { ItemKind::Trait } else { ItemKind::Other };
                    f.scopes[scope].defs.insert(name, kind);
                }
            }
            Tok::Ident(kw) if module_level && kw == "impl" && starts_item(&t, i) => {
                if let Some(name) = inherent_impl(&t, i + 1) {
                    f.extends.insert(name);
                }
            }
            Tok::Punct('#') => {
                if let [Tok::Punct('['), Tok::Ident(p), Tok::Punct('='), Tok::Str(path), Tok::Punct(']'), ..] =
                    &t[i + 1..]
                {
                    if p == "path" {
                        pending_path = Some(path.clone());
                    }
                }
                if is_cfg_test(&t[i + 1..]) {
                    pending_test = true;
                }
            }
            Tok::Punct('{') => {
                pending_test = false;
                stack.push(Frame::Block);
            }
            Tok::Punct('}') | Tok::Punct(';') => {
                pending_test = false;
                if t[i] == Tok::Punct('}') {
                    stack.pop();
                }
            }
            _ => {}
        }
        if let Tok::Ident(s) = &t[i] {
            f.code_idents.insert(s.clone());
        }
        if i == 0 || t[i - 1] != Tok::PathSep {
            if let Some((path, end)) = code_path(&t, i) {
                for seg in &path {
                    f.code_idents.insert(seg.clone());
                }
                f.scopes[scope].paths.push(path);
                i = end;
                continue;
            }
        }
        i += 1;
    }
    f
}

/// Whether the token at `i` begins an item (not `-> impl Trait` or `x: impl Trait`).
fn starts_item(t: &[Tok], i: usize) -> bool {
    match i.checked_sub(1).map(|p| &t[p]) {
        None | Some(Tok::Punct('}' | ';' | ']')) => true,
        Some(Tok::Ident(w)) => w == "unsafe" || w == "default",
        _ => false,
    }
}

/// The type of an inherent `impl<..> path::T<..> {` starting after `impl`; `None` for a
/// trait's `impl X for T`.
fn inherent_impl(t: &[Tok], mut i: usize) -> Option<String> {
    let mut depth = 0usize;
    let mut name = None;
    while let Some(tok) = t.get(i) {
        match tok {
            Tok::Punct('<') => depth += 1,
            Tok::Punct('>') => depth = depth.saturating_sub(1),
            Tok::Punct('{') if depth == 0 => return name,
            Tok::Ident(w) if depth == 0 && (w == "for" || w == "where") => {
                return if w == "where" { name } else { None };
            }
            Tok::Ident(w) if depth == 0 => name = Some(w.clone()),
            Tok::Punct(';') => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// `[cfg(test)]`, `[cfg(all(test, ..))]`: an attribute that keeps what follows out of builds.
fn is_cfg_test(t: &[Tok]) -> bool {
    let [Tok::Punct('['), Tok::Ident(cfg), Tok::Punct('('), ..] = t else { return false };
    if cfg != "cfg" {
        return false;
    }
    let body = t.iter().skip(3).take_while(|t| **t != Tok::Punct(']'));
    let idents: Vec<&Tok> = body.collect();
    idents.contains(&&Tok::Ident("test".into())) && !idents.contains(&&Tok::Ident("not".into()))
}

fn is_item_keyword(kw: &str) -> bool {
    matches!(kw, "fn" | "struct" | "enum" | "trait" | "type" | "union" | "static" | "const" | "macro_rules")
}

/// The name an item keyword at `i` introduces: `const fn f` names `f` (through the `fn`),
/// `static mut X` names `X`, `macro_rules! m` names `m`; `fn(u8)` (a type) names nothing.
fn item_name(t: &[Tok], i: usize) -> Option<String> {
    let mut j = i + 1;
    if t.get(j) == Some(&Tok::Punct('!')) {
        j += 1;
    }
    match t.get(j) {
        Some(Tok::Ident(n)) if n == "mut" => match t.get(j + 1) {
            Some(Tok::Ident(n)) => Some(n.clone()),
            _ => None,
        },
        Some(Tok::Ident(n)) if matches!(n.as_str(), "fn" | "unsafe" | "async" | "extern") => None,
        Some(Tok::Ident(n)) => Some(n.clone()),
        _ => None,
    }
}

/// A path of two or more segments starting at `i` (`a::b`, `crate::x::Y`, `$crate::z`).
fn code_path(t: &[Tok], i: usize) -> Option<(Vec<String>, usize)> {
    let (first, mut j) = match (&t[i], t.get(i + 1)) {
        (Tok::Punct('$'), Some(Tok::Ident(c))) if c == "crate" => ("$crate".to_string(), i + 2),
        (Tok::Ident(s), _) => (s.clone(), i + 1),
        _ => return None,
    };
    let mut path = vec![first];
    while let (Some(Tok::PathSep), Some(Tok::Ident(s))) = (t.get(j), t.get(j + 1)) {
        path.push(s.clone());
        j += 2;
    }
    (path.len() >= 2).then_some((path, j))
}

/// One `use` tree from `i` (after `use` or inside braces) to its end; returns the index after
/// the tree (the `;` of the declaration is skipped as well).
fn use_tree(t: &[Tok], mut i: usize, mut path: Vec<String>, out: &mut Vec<UseBinding>) -> usize {
    if t.get(i) == Some(&Tok::PathSep) {
        path.push("::".into());
        i += 1;
    }
    loop {
        match t.get(i) {
            Some(Tok::Punct('$')) if matches!(t.get(i + 1), Some(Tok::Ident(c)) if c == "crate") => {
                path.push("$crate".into());
                i += 2;
            }
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                i += 1;
            }
            Some(Tok::Punct('*')) => {
                out.push(UseBinding { path, bind: Bind::Glob });
                return end_of_tree(t, i + 1);
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                while i < t.len() && t[i] != Tok::Punct('}') {
                    i = use_tree(t, i, path.clone(), out);
                    if t.get(i) == Some(&Tok::Punct(',')) {
                        i += 1;
                    }
                }
                return end_of_tree(t, i + 1);
            }
            _ => return end_of_tree(t, i),
        }
        if t.get(i) == Some(&Tok::PathSep) {
            i += 1;
            continue;
        }
        let mut alias = None;
        if matches!(t.get(i), Some(Tok::Ident(a)) if a == "as") {
            if let Some(Tok::Ident(a)) = t.get(i + 1) {
                alias = Some(a.clone());
            }
            i += 2;
        }
        if path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        if let Some(name) = alias.or_else(|| path.last().cloned()) {
            out.push(UseBinding { path, bind: Bind::Name(name) });
        }
        return end_of_tree(t, i);
    }
}

/// Past a top-level `;` ending the declaration; inside braces, stop at `,` or `}`.
fn end_of_tree(t: &[Tok], i: usize) -> usize {
    if t.get(i) == Some(&Tok::Punct(';')) {
        i + 1
    } else {
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(path: &str, bind: Bind) -> UseBinding {
        UseBinding { path: path.split("::").map(String::from).collect(), bind }
    }

    #[test]
    fn use_trees_flatten_to_bindings() {
        let f = scan(
            "pub use crate::a::{self, b::{C, D as E}, f::*};\nuse super::super::G;\nuse ::ext::H;\n\
             use $crate::m::N;",
        );
        let uses = &f.scopes[0].uses;
        assert_eq!(
            uses,
            &[
                b("crate::a", Bind::Name("a".into())),
                b("crate::a::b::C", Bind::Name("C".into())),
                b("crate::a::b::D", Bind::Name("E".into())),
                b("crate::a::f", Bind::Glob),
                b("super::super::G", Bind::Name("G".into())),
                UseBinding {
                    path: vec!["::".into(), "ext".into(), "H".into()],
                    bind: Bind::Name("H".into())
                },
                b("$crate::m::N", Bind::Name("N".into())),
            ]
        );
        assert!(!f.code_idents.contains("C"), "names in use declarations are not code");
    }

    #[test]
    fn items_modules_and_paths_land_in_their_scope() {
        let f = scan(
            "pub(crate) const fn f() { let x = crate::a::B::new(); struct Local; }\n\
             static mut S: u8 = 0; type T = fn(u8);\n\
             #[cfg(test)] #[path = \"t.rs\"] mod tests;\nmod child;\n\
             mod inline { use super::f; const K: u8 = 1; fn g() { child::X; } }\n\
             pub trait Tr {} impl Tr for u8 { const C: u8 = 0; }",
        );
        let top = &f.scopes[0];
        let defs: Vec<_> = top.defs.keys().cloned().collect();
        assert_eq!(defs, ["S", "T", "Tr", "f"]);
        assert_eq!(top.defs["Tr"], ItemKind::Trait);
        assert_eq!(top.file_mods, [("child".to_string(), None)], "the cfg(test) module is left out");
        assert_eq!(top.paths, [vec!["crate", "a", "B", "new"]]);
        let inner = &f.scopes[1];
        assert_eq!(top.inline_mods, [("inline".to_string(), 1)]);
        assert_eq!(inner.defs.keys().collect::<Vec<_>>(), ["K", "g"]);
        assert_eq!(inner.uses, [b("super::f", Bind::Name("f".into()))]);
        assert_eq!(inner.paths, [vec!["child", "X"]]);
        assert!(!inner.test);
    }

    #[test]
    fn inherent_impls_are_told_from_trait_impls() {
        let f = scan(
            "impl Core { fn a() {} } impl<'a, T: X<U>> crate::m::Other<'a, T> where T: Y { }\n\
             impl Display for AgentId {} impl<T> From<T> for Third {} fn f() { impl Local {} }\n\
             fn g() -> impl Iterator<Item = u8> { todo!() } unsafe impl Send for X {}",
        );
        assert_eq!(f.extends.iter().collect::<Vec<_>>(), ["Core", "Other"]);
    }

    #[test]
    fn test_only_code_is_marked() {
        let f = scan(
            "#[cfg(test)] use crate::testing::H; use crate::a::A;
             #[cfg(all(test, unix))] mod tests { mod deeper { use crate::b::B; } }
             #[cfg(not(test))] mod real {} #[cfg(test)] mod t; #[path = \"p.rs\"] mod p;",
        );
        assert_eq!(f.scopes[0].uses, [b("crate::a::A", Bind::Name("A".into()))]);
        let flags: Vec<_> = f.scopes.iter().map(|s| s.test).collect();
        assert_eq!(flags, [false, true, true, false], "the file, tests, tests::deeper, real");
        assert_eq!(f.scopes[0].file_mods, [("p".to_string(), Some("p.rs".to_string()))]);
    }
}
