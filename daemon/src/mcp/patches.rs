//! Fixes for pinned children that can only be made in the child (`patches/` at the repository
//! root, each with a README saying why and when to drop it), applied when tabtunnel installs
//! them. A patch touches only a file whose content is exactly the one it was written for.

use sha2::{Digest, Sha256};
use std::path::Path;

pub struct FilePatch<'a> {
    /// The package directory under `node_modules`.
    pub package: &'a str,
    pub version: &'a str,
    /// The patched file, relative to the package directory.
    pub file: &'a str,
    /// SHA-256 of the file as the pinned version ships it.
    pub original_sha256: &'a str,
    /// A unified diff of that one file.
    pub diff: &'a str,
}

pub const PATCHES: &[FilePatch<'static>] = &[FilePatch {
    package: "chrome-devtools-mcp",
    version: "1.11.0",
    file: "build/src/third_party/index.js",
    original_sha256: "b047499006b0027bd37165fa8197fa6fa5caa9b8c07d938992857659270ec493",
    diff: include_str!("../../../patches/chrome-devtools-mcp@1.11.0/set-methods-for-node-20.patch"),
}];

/// The text every patch feeds into the install dir's name: new patches mean a new install.
pub fn fingerprint() -> String {
    PATCHES
        .iter()
        .map(|p| format!("{}@{}:{}:{}\n{}", p.package, p.version, p.file, p.original_sha256, p.diff))
        .collect()
}

/// Applies every patch under `node_modules`.
pub fn apply_all(modules: &Path) -> Result<(), String> {
    PATCHES.iter().try_for_each(|patch| apply_one(patch, modules))
}

fn apply_one(patch: &FilePatch<'_>, modules: &Path) -> Result<(), String> {
    let package_dir = modules.join(patch.package);
    let manifest = std::fs::read_to_string(package_dir.join("package.json"))
        .map_err(|e| format!("cannot read {}'s package.json: {e}", patch.package))?;
    let version = serde_json::from_str::<serde_json::Value>(&manifest)
        .ok()
        .and_then(|m| m["version"].as_str().map(str::to_owned))
        .unwrap_or_default();
    if version != patch.version {
        return Err(format!(
            "refusing to patch {}: installed version {version:?}, the patch is for {}",
            patch.package, patch.version
        ));
    }
    let path = package_dir.join(patch.file);
    let original =
        std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let patched = patched_text(&original, patch.original_sha256, patch.diff)
        .map_err(|e| format!("{}@{} {}: {e}", patch.package, patch.version, patch.file))?;
    crate::token::write_owner_only(&path, patched.as_bytes())
        .and_then(|()| crate::platform::set_public_mode(&path, false))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tracing::info!("patched {}@{} {}", patch.package, patch.version, patch.file);
    Ok(())
}

/// `original` with `diff` applied, provided `original` hashes to `expected_sha256`.
fn patched_text(original: &str, expected_sha256: &str, diff: &str) -> Result<String, String> {
    let actual = sha256_hex(original.as_bytes());
    if actual != expected_sha256 {
        return Err(format!(
            "refusing to patch: the file is not the one the patch was written for (SHA-256 {actual}, \
             expected {expected_sha256})"
        ));
    }
    let diff = diffy::Patch::from_str(diff).map_err(|e| format!("the patch does not parse: {e}"))?;
    diffy::apply(original, &diff).map_err(|e| format!("the patch does not apply: {e}"))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGINAL: &str = "one\ntwo\nthree\nfour\n";
    const DIFF: &str = "--- a/f.js\n+++ b/f.js\n@@ -1,4 +1,4 @@\n one\n-two\n+TWO\n three\n four\n";

    #[test]
    fn applies_to_the_expected_content_only() {
        let sha = sha256_hex(ORIGINAL.as_bytes());
        assert_eq!(patched_text(ORIGINAL, &sha, DIFF).unwrap(), "one\nTWO\nthree\nfour\n");
        let other = "one\ntwo\nthree\nfour\nfive\n";
        let refused = patched_text(other, &sha, DIFF).unwrap_err();
        assert!(refused.contains("refusing to patch"), "{refused}");
        // Content that hashes right but does not match the context still fails cleanly.
        let wrong_context = "uno\ndos\n";
        assert!(patched_text(wrong_context, &sha256_hex(wrong_context.as_bytes()), DIFF).is_err());
    }

    #[test]
    fn patches_a_package_in_place_and_refuses_another_version() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("pkg");
        std::fs::create_dir_all(package.join("lib")).unwrap();
        std::fs::write(package.join("package.json"), r#"{"version":"1.0.0"}"#).unwrap();
        std::fs::write(package.join("lib/f.js"), ORIGINAL).unwrap();
        let sha = sha256_hex(ORIGINAL.as_bytes());
        let patch = FilePatch {
            package: "pkg",
            version: "1.0.0",
            file: "lib/f.js",
            original_sha256: &sha,
            diff: DIFF,
        };
        apply_one(&patch, dir.path()).unwrap();
        assert_eq!(std::fs::read_to_string(package.join("lib/f.js")).unwrap(), "one\nTWO\nthree\nfour\n");
        // Applying twice is refused: the file is no longer the original.
        assert!(apply_one(&patch, dir.path()).unwrap_err().contains("refusing"));
        std::fs::write(package.join("package.json"), r#"{"version":"1.0.1"}"#).unwrap();
        assert!(apply_one(&patch, dir.path()).unwrap_err().contains("installed version"));
    }

    #[test]
    fn every_shipped_patch_parses_and_names_its_file() {
        for patch in PATCHES {
            let parsed = diffy::Patch::from_str(patch.diff).expect("parses");
            assert!(!parsed.hunks().is_empty());
            assert_eq!(parsed.modified(), Some(format!("b/{}", patch.file).as_str()));
            assert_eq!(patch.original_sha256.len(), 64);
        }
    }
}
