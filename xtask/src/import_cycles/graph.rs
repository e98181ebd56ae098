//! One crate's module tree (from its root file through `mod x;`), name resolution of `use`
//! bindings and code paths to the file that defines the item, and the cycles of the resulting
//! "file A uses an item of file B" graph.
//!
//! Resolution follows re-exports and imports to the defining file, so a facade's `pub use` is
//! no dependency of its own; a `use` counts only when its name appears in the file's code (or it
//! imports a trait, whose methods need no name). Declaring `mod child;` is no use of the child,
//! and a file of `impl T { .. }` blocks naming `T` extends `T` rather than uses it.

use super::scan::{scan, Bind, FileScan, ItemKind};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub struct CrateGraph {
    pub files: Vec<PathBuf>,
    scans: Vec<FileScan>,
    modules: Vec<Module>,
}

struct Module {
    file: usize,
    scope: usize,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
}

enum Res {
    Module(usize),
    Item {
        module: usize,
        name: String,
    },
    /// Another crate's (through an import of it).
    External,
}

/// An edge of the file graph and the names that make it.
pub type Edges = BTreeMap<(usize, usize), BTreeSet<String>>;

const MAX_DEPTH: usize = 32;

impl CrateGraph {
    /// Loads the tree from `root` (`src/lib.rs`, `src/main.rs`); `read` gives a file's text.
    pub fn load(root: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Result<Self, String> {
        let mut g = CrateGraph { files: Vec::new(), scans: Vec::new(), modules: Vec::new() };
        let src = read(root).ok_or_else(|| format!("cannot read {}", root.display()))?;
        g.add_file(
            root.to_path_buf(),
            src,
            None,
            root.parent().unwrap_or(Path::new("")).to_path_buf(),
            read,
        )?;
        Ok(g)
    }

    fn add_file(
        &mut self,
        path: PathBuf,
        src: String,
        parent: Option<usize>,
        dir: PathBuf,
        read: &dyn Fn(&Path) -> Option<String>,
    ) -> Result<usize, String> {
        if self.files.contains(&path) {
            return Err(format!("{} is loaded twice", path.display()));
        }
        let file = self.files.len();
        self.files.push(path.clone());
        self.scans.push(scan(&src));
        let file_dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
        self.add_scope(file, 0, parent, dir, &file_dir, read)
    }

    /// The module of scope `scope` of `file`, whose child modules' files live in `dir`.
    fn add_scope(
        &mut self,
        file: usize,
        scope: usize,
        parent: Option<usize>,
        dir: PathBuf,
        file_dir: &Path,
        read: &dyn Fn(&Path) -> Option<String>,
    ) -> Result<usize, String> {
        let id = self.modules.len();
        self.modules.push(Module { file, scope, parent, children: BTreeMap::new() });
        let inline = self.scans[file].scopes[scope].inline_mods.clone();
        for (name, sub) in inline {
            let child = self.add_scope(file, sub, Some(id), dir.join(&name), file_dir, read)?;
            self.modules[id].children.insert(name, child);
        }
        let declared = self.scans[file].scopes[scope].file_mods.clone();
        for (name, attr) in declared {
            let (path, src, child_dir) = match attr {
                Some(p) => {
                    let base = if scope == 0 { file_dir.to_path_buf() } else { dir.clone() };
                    let path = base.join(p);
                    let src = read(&path).ok_or_else(|| format!("cannot read {}", path.display()))?;
                    let child_dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
                    (path, src, child_dir)
                }
                None => {
                    let flat = dir.join(format!("{name}.rs"));
                    let nested = dir.join(&name).join("mod.rs");
                    if let Some(src) = read(&flat) {
                        (flat, src, dir.join(&name))
                    } else if let Some(src) = read(&nested) {
                        (nested, src, dir.join(&name))
                    } else {
                        return Err(format!("no file for `mod {name};` (looked for {})", flat.display()));
                    }
                }
            };
            let child = self.add_file(path, src, Some(id), child_dir, read)?;
            self.modules[id].children.insert(name, child);
        }
        Ok(id)
    }

    fn scope(&self, m: usize) -> &super::scan::Scope {
        &self.scans[self.modules[m].file].scopes[self.modules[m].scope]
    }

    fn resolve(&self, from: usize, path: &[String], depth: usize) -> Option<Res> {
        let (first, rest) = path.split_first()?;
        let mut cur = match first.as_str() {
            "crate" | "$crate" => Res::Module(0),
            "self" => Res::Module(from),
            "super" => Res::Module(self.modules[from].parent?),
            "::" => return None,
            name => self.lookup(from, name, depth)?,
        };
        for seg in rest {
            let Res::Module(m) = cur else { break };
            cur = match seg.as_str() {
                "super" => Res::Module(self.modules[m].parent?),
                "self" => Res::Module(m),
                name => self
                    .lookup(m, name, depth)
                    .unwrap_or_else(|| Res::Item { module: m, name: name.to_string() }),
            };
        }
        Some(cur)
    }

    /// `name` as seen in module `m`: a child module, an item defined there, or where an import
    /// of it leads.
    fn lookup(&self, m: usize, name: &str, depth: usize) -> Option<Res> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(&c) = self.modules[m].children.get(name) {
            return Some(Res::Module(c));
        }
        let scope = self.scope(m);
        if scope.defs.contains_key(name) {
            return Some(Res::Item { module: m, name: name.to_string() });
        }
        for u in &scope.uses {
            if u.bind == Bind::Name(name.to_string()) {
                return Some(self.resolve(m, &u.path, depth + 1).unwrap_or(Res::External));
            }
        }
        for u in &scope.uses {
            if u.bind == Bind::Glob {
                if let Some(Res::Module(g)) = self.resolve(m, &u.path, depth + 1) {
                    if g != m {
                        if let Some(r) = self.lookup(g, name, depth + 1) {
                            return Some(r);
                        }
                    }
                }
            }
        }
        None
    }

    fn is_trait(&self, module: usize, name: &str) -> bool {
        self.scope(module).defs.get(name) == Some(&ItemKind::Trait)
    }

    /// Every "file uses an item of another file" edge, with the names behind it.
    pub fn edges(&self) -> Edges {
        let mut edges = Edges::new();
        let add = |from: usize, res: Option<Res>, edges: &mut Edges| {
            if let Some(Res::Item { module, name }) = res {
                let to = self.modules[module].file;
                if to != from && !self.scans[from].extends.contains(&name) {
                    edges.entry((from, to)).or_default().insert(name);
                }
            }
        };
        for (m, module) in self.modules.iter().enumerate() {
            let file = module.file;
            let idents = &self.scans[file].code_idents;
            let scope = self.scope(m);
            if scope.test {
                continue;
            }
            for u in &scope.uses {
                match &u.bind {
                    Bind::Name(name) => {
                        let res = self.resolve(m, &u.path, 0);
                        let used = name == "_"
                            || idents.contains(name)
                            || matches!(&res, Some(Res::Item { module, name }) if self.is_trait(*module, name));
                        if used {
                            add(file, res, &mut edges);
                        }
                    }
                    Bind::Glob => {
                        let Some(Res::Module(g)) = self.resolve(m, &u.path, 0) else { continue };
                        let visible = self.scope(g);
                        let names = visible.defs.keys().cloned().chain(visible.uses.iter().filter_map(|u| {
                            match &u.bind {
                                Bind::Name(n) => Some(n.clone()),
                                Bind::Glob => None,
                            }
                        }));
                        for name in names.collect::<BTreeSet<_>>() {
                            let res = self.lookup(g, &name, 0);
                            let trait_import = matches!(&res, Some(Res::Item { module, name }) if self.is_trait(*module, name));
                            if idents.contains(&name) || trait_import {
                                add(file, res, &mut edges);
                            }
                        }
                    }
                }
            }
            for path in &scope.paths {
                add(file, self.resolve(m, path, 0), &mut edges);
            }
        }
        edges
    }
}

/// Strongly connected components of more than one file (Tarjan), each sorted, in file order.
pub fn cycles(n: usize, edges: &Edges) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        adj: Vec<Vec<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: &'a mut Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for w in self.adj[v].clone() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.out.push(scc);
                }
            }
        }
    }
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in edges.keys() {
        adj[a].push(b);
    }
    let mut out = Vec::new();
    let mut t = Tarjan {
        adj,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: &mut out,
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    out.sort();
    out
}
