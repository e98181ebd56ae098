//! `--policy FILE`: the per-agent policy as TOML, read at start and again whenever the file
//! changes. A file that does not parse keeps the last good policy in force, and says why.

use std::path::{Path, PathBuf};
use tabtunnel_core::policy::{PolicyFile, PolicySet};

/// Reads and compiles a policy file.
pub fn load(path: &Path) -> Result<PolicySet, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn parse(text: &str) -> Result<PolicySet, String> {
    let file: PolicyFile = toml::from_str(text).map_err(|e| e.to_string())?;
    PolicySet::compile(&file)
}

/// Watches `path` and calls `apply` with each new policy that compiles.
pub async fn watch<Applied: std::future::Future<Output = ()>>(
    path: PathBuf,
    apply: impl FnMut(PolicySet) -> Applied,
) {
    crate::watch::watch(path, "policy", load, apply).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabtunnel_core::policy::Decision;

    /// The example docs/policy.md shows, exactly: its first TOML block.
    fn documented_example() -> &'static str {
        let doc = include_str!("../../docs/policy.md");
        let start = doc.find("```toml\n").expect("docs/policy.md shows a TOML example") + "```toml\n".len();
        let end = start + doc[start..].find("```").expect("the example ends");
        &doc[start..end]
    }

    #[test]
    fn the_example_policy_reads_as_written() {
        let policy = parse(documented_example()).unwrap();
        assert!(matches!(policy.for_agent("x").method("Network.getCookies"), Decision::Deny(_)));
        assert!(matches!(policy.for_agent("reader").method("Input.insertText"), Decision::Deny(_)));
        assert!(matches!(policy.for_agent("x").navigation("https://mail.example.com/"), Decision::Ask(_)));
    }

    #[test]
    fn choices_per_kind_read_from_toml_per_agent_and_site() {
        use tabtunnel_core::gestures::choices::Choice;
        use tabtunnel_wire::gestures::GestureKind;
        let policy = parse(
            r#"
[default.gestures]
deleting = "deny"
standing_minutes = [10, 60]

[agent.mailer.gestures]
sign_in = "ask"
standing_for_paying = true

[agent.mailer.gestures.sites."https://mail.example.com"]
sending = "allow"
"#,
        )
        .unwrap();
        let mailer = policy.gesture_choices("mailer");
        assert_eq!(mailer.of(GestureKind::Sending, "https://mail.example.com").0, Choice::Allow);
        assert_eq!(mailer.of(GestureKind::Sending, "https://other.example").0, Choice::Ask);
        assert_eq!(mailer.of(GestureKind::SigningIn, "https://mail.example.com").0, Choice::Ask);
        assert_eq!(mailer.of(GestureKind::Deleting, "https://mail.example.com").0, Choice::Deny);
        assert_eq!(mailer.offers(&[GestureKind::Paying]), [600_000, 3_600_000]);
        let other = policy.gesture_choices("x");
        assert_eq!(other.of(GestureKind::SigningIn, "https://mail.example.com").0, Choice::Once);
        assert!(other.offers(&[GestureKind::Paying]).is_empty());
        let error = parse(
            "[default.gestures]
sending = \"sometimes\"
",
        )
        .unwrap_err();
        assert!(error.contains("unknown variant"), "{error}");
    }

    #[test]
    fn mistakes_are_reported_with_where() {
        for (bad, says) in [
            ("[default]\ndeny_methods = \"Network.getCookies\"", "invalid type"),
            ("[default]\ndeny_method = []", "unknown field"),
            ("[agent.reader]\npreset = \"readonly\"", "unknown variant"),
            ("[default]\nallow_origins = [\"example.com\"]", "not an origin pattern"),
            ("[default\n", "parse error"),
        ] {
            let error = parse(bad).unwrap_err();
            assert!(error.to_lowercase().contains(says), "{bad}: {error}");
        }
    }

    use std::time::Duration;

    #[tokio::test]
    async fn a_changed_file_is_read_again_and_a_broken_one_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        std::fs::write(&path, documented_example()).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let watcher = tokio::spawn(watch(path.clone(), move |p| {
            let _ = tx.send(p);
            std::future::ready(())
        }));
        // Make sure the modification time moves even on coarse file systems.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        std::fs::write(&path, "[default\n").unwrap();
        tokio::time::sleep(Duration::from_millis(1100)).await;
        std::fs::write(&path, "[default]\ndeny_methods = [\"Input.*\"]\n").unwrap();
        let reloaded = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.unwrap().unwrap();
        assert!(matches!(reloaded.for_agent("x").method("Input.insertText"), Decision::Deny(_)));
        assert!(rx.try_recv().is_err(), "the broken version was not applied");
        watcher.abort();
    }
}
