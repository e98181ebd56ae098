//! The daemon's log (stderr; `daemon.log` when started on demand): every line goes through the
//! one redaction ([`tabtunnel_core::redact`]) as it is written, whatever event or field holds
//! the text, so no secret of a daemon in this process (or anything shaped like an agent token)
//! reaches it. Only lines that are written pay for it: a filtered-out event is never formatted.

use std::io::Write;
use std::sync::{LazyLock, RwLock};
use tabtunnel_core::redact::Redactor;

/// The secrets of every daemon started in this process (tests start several).
static SECRETS: LazyLock<RwLock<Redactor>> = LazyLock::new(Default::default);

/// Keeps these secrets out of the log from now on.
pub fn keep_out<S: AsRef<str>>(secrets: impl IntoIterator<Item = S>) {
    let mut redactor = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    for secret in secrets {
        redactor.add(secret.as_ref());
    }
}

/// `text` as the log may show it.
pub fn redact(text: &str) -> String {
    SECRETS.read().unwrap_or_else(|e| e.into_inner()).text(text).into_owned()
}

/// The log's writer, for `tracing_subscriber::fmt().with_writer(...)`.
#[derive(Clone, Copy, Default)]
pub struct Stderr;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Stderr {
    type Writer = Redacting<std::io::Stderr>;

    fn make_writer(&'a self) -> Self::Writer {
        Redacting(std::io::stderr())
    }
}

/// Writes each buffer redacted. The fmt layer hands over one whole event per write, so a secret
/// is never split between two.
pub struct Redacting<W>(pub W);

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let redactor = SECRETS.read().unwrap_or_else(|e| e.into_inner());
        self.0.write_all(redactor.text(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error naming each kind of secret, as an event of the daemon's would: the line written
    /// holds none of them.
    #[test]
    fn log_lines_hold_no_secret() {
        let (owner, extension, key) = ("1f".repeat(32), "2e".repeat(32), "3d".repeat(16));
        keep_out([&owner, &extension, &key]);
        let agent = format!("tta_{}", "4c".repeat(32));
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let sink = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || Redacting(Sink(sink.clone())))
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(
                uri = %format!("/x?t={}&e={}", &owner[..40], extension.to_ascii_uppercase()),
                "refused: {agent} at http://127.0.0.1:1/{key}/tabtunnel/navigation%2F{}",
                owner.bytes().map(|b| format!("%{b:02x}")).collect::<String>()
            );
        });
        let text = String::from_utf8(lines.lock().unwrap().clone()).unwrap();
        assert!(text.contains("refused: <secret> at http://127.0.0.1:1/<secret>/tabtunnel"), "{text}");
        for piece in [&owner[..8], &owner[32..40], &extension[..8], &key[..8], &agent[4..12], "%31%66%31%66"]
        {
            assert!(!text.to_ascii_lowercase().contains(piece), "{piece} in {text}");
        }
        assert_eq!(redact(&format!("tabtunnel: cannot use {owner}")), "tabtunnel: cannot use <secret>");
    }

    struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
