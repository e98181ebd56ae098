//! Builds the extension's files into the binary, so an installed `tabtunnel` writes the
//! extension without a source checkout (`tabtunnel install`). They are `extension/` as
//! `cargo run -p xtask -- build-extension` left it; without `extension/pkg/` (a fresh clone
//! built with a plain `cargo build`) the list is empty and `install` says how to get them.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let extension = manifest_dir.join("../extension");
    // A directory here is scanned recursively: any file changed, added or removed rebuilds.
    println!("cargo:rerun-if-changed={}", extension.display());
    let mut files = Vec::new();
    if extension.join("pkg").is_dir() {
        collect(&extension, &extension, &mut files);
        files.sort();
    }
    let mut out =
        String::from("/// The built extension's files: (path relative to the extension dir, contents).\n");
    out.push_str("pub const EXTENSION_FILES: &[(&str, &[u8])] = &[\n");
    for (relative, absolute) in &files {
        writeln!(out, "    ({relative:?}, include_bytes!({:?})),", absolute.display().to_string()).unwrap();
    }
    out.push_str("];\n");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out_dir.join("extension_files.rs"), out).unwrap();
}

/// Every file below `dir` but `pairing.json` (what `tabtunnel launch` stages) and dot files.
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "pairing.json" {
            continue;
        }
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            collect(root, &path, files);
        } else {
            let relative = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            files.push((relative, path.canonicalize().unwrap()));
        }
    }
}
