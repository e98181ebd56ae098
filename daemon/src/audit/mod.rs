//! The audit trail on disk: one JSON object per line in `<data dir>/audit/audit.jsonl`, owner-only,
//! rotated by size (`audit.jsonl.1` is the previous file, up to [`KEEP`] of them), written by a
//! task of its own so the hub never waits on the disk; every line sealed into a chain
//! ([`chain`]); and `tabtunnel audit` (and `audit verify`), which read it.

pub mod chain;
mod line;
mod plain;

pub use line::{escape_controls, Line};

use std::io::{BufRead, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use tabtunnel_core::redact::Redactor;
use tabtunnel_core::AuditRecord;
use tokio::sync::mpsc;

/// A file is rotated past this size.
pub const ROTATE_BYTES: u64 = 16 << 20;
/// Rotated files kept besides the current one.
pub const KEEP: usize = 4;
/// Records queued for the writer; past this the hub drops them (and says so) rather than wait.
const QUEUE: usize = 65_536;

pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("audit")
}

pub fn current_file(data_dir: &Path) -> PathBuf {
    dir(data_dir).join("audit.jsonl")
}

fn rotated_file(data_dir: &Path, n: usize) -> PathBuf {
    dir(data_dir).join(format!("audit.jsonl.{n}"))
}

/// The sending half: the hub hands records over without ever waiting.
#[derive(Clone)]
pub struct AuditLog {
    tx: mpsc::Sender<(AuditRecord, SystemTime)>,
}

impl AuditLog {
    /// Starts the writer task for `data_dir`, sealing with the key in `config_dir`. The task
    /// first checks the trail as it was ([`check_at_start`]; up to a second for a full one, so
    /// not on the way to serving): the receiver gets what is wrong with it, if anything.
    pub fn start(
        data_dir: &Path,
        config_dir: &Path,
    ) -> Result<(Self, tokio::sync::oneshot::Receiver<Option<String>>), String> {
        let never_sealed = never_sealed(config_dir);
        let mut writer = Writer::open(data_dir, config_dir)?;
        let (tx, mut rx) = mpsc::channel::<(AuditRecord, SystemTime)>(QUEUE);
        let (checked, check) = tokio::sync::oneshot::channel();
        let (data_dir, config_dir) = (data_dir.to_owned(), config_dir.to_owned());
        tokio::task::spawn_blocking(move || {
            let _ = checked.send(if never_sealed { None } else { check_at_start(&data_dir, &config_dir) });
            while let Some((record, at)) = rx.blocking_recv() {
                writer.append(&Line::new(&record, at));
                // Write what else is queued before flushing: one write for a burst.
                while let Ok((record, at)) = rx.try_recv() {
                    writer.append(&Line::new(&record, at));
                }
                writer.flush();
            }
        });
        Ok((AuditLog { tx }, check))
    }

    /// Queues a record; `false` when the writer is behind by [`QUEUE`] records (it is dropped).
    pub fn record(&self, record: AuditRecord) -> bool {
        self.tx.try_send((record, SystemTime::now())).is_ok()
    }
}

struct Writer {
    data_dir: PathBuf,
    file: std::io::BufWriter<std::fs::File>,
    size: u64,
    sealer: chain::Sealer,
    /// [`ROTATE_BYTES`]; smaller in tests.
    rotate_bytes: u64,
}

fn open_owner_only(path: &Path) -> std::io::Result<std::fs::File> {
    crate::platform::open_owner_only(std::fs::OpenOptions::new().create(true).append(true), path)
}

impl Writer {
    fn open(data_dir: &Path, config_dir: &Path) -> Result<Self, String> {
        let dir = dir(data_dir);
        crate::token::create_private_dir(&dir)?;
        let path = current_file(data_dir);
        let mut file = open_owner_only(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let size = file.seek(std::io::SeekFrom::End(0)).unwrap_or(0);
        let sealer = chain::Sealer::open(config_dir, &path)?;
        Ok(Writer {
            data_dir: data_dir.to_owned(),
            file: std::io::BufWriter::new(file),
            size,
            sealer,
            rotate_bytes: ROTATE_BYTES,
        })
    }

    fn append(&mut self, line: &Line) {
        let text = self.sealer.seal(&serde_json::to_string(line).expect("a line serializes"));
        if self.size + text.len() as u64 > self.rotate_bytes && self.size > 0 {
            self.rotate();
        }
        match self.file.write_all(text.as_bytes()) {
            Ok(()) => self.size += text.len() as u64,
            Err(e) => tracing::warn!("cannot write the audit trail: {e}"),
        }
    }

    /// Writes what is buffered, then the head: a head never names a line not yet written.
    fn flush(&mut self) {
        if let Err(e) = self.file.flush() {
            tracing::warn!("cannot write the audit trail: {e}");
        }
        self.sealer.save_head();
    }

    /// `audit.jsonl` becomes `.1`, `.1` becomes `.2`..., the oldest beyond [`KEEP`] goes.
    fn rotate(&mut self) {
        self.flush();
        let dropped = rotated_file(&self.data_dir, KEEP);
        if dropped.exists() {
            self.sealer.dropping(&dropped, SystemTime::now());
        }
        let _ = std::fs::remove_file(dropped);
        for n in (1..KEEP).rev() {
            let _ = std::fs::rename(rotated_file(&self.data_dir, n), rotated_file(&self.data_dir, n + 1));
        }
        let current = current_file(&self.data_dir);
        let _ = std::fs::rename(&current, rotated_file(&self.data_dir, 1));
        if let Some(oldest) = (1..=KEEP).rev().map(|n| rotated_file(&self.data_dir, n)).find(|f| f.exists()) {
            self.sealer.oldest_is(&oldest);
        }
        match open_owner_only(&current) {
            Ok(file) => {
                self.file = std::io::BufWriter::new(file);
                self.size = 0;
            }
            Err(e) => tracing::warn!("cannot start a new audit file: {e}"),
        }
    }
}

/// `tabtunnel audit`: prints the trail, oldest first, then follows it if asked. What it prints
/// goes through `redactor` (the daemon redacts what it writes; a trail written by an older one
/// may hold a secret).
pub fn print(
    data_dir: &Path,
    agent: Option<&str>,
    follow: bool,
    json: bool,
    redactor: &Redactor,
) -> Result<(), String> {
    let folder = std::cell::RefCell::new(plain::Folder::default());
    let out = |text: String| {
        // A closed pipe (`| head`) ends the command quietly.
        if writeln!(std::io::stdout(), "{}", redactor.text(&text)).is_err() {
            std::process::exit(0);
        }
    };
    let show = |text: &str| {
        if json {
            if let Some(line) = shown(text, agent, json, redactor) {
                out(line);
            }
            return;
        }
        let Some(line) =
            serde_json::from_str::<Line>(text).ok().filter(|l| agent.is_none_or(|a| a == l.agent))
        else {
            return;
        };
        folder.borrow_mut().push(line).into_iter().for_each(out);
    };
    let current = current_file(data_dir);
    if !current.exists() && !follow {
        return Err(format!("no audit trail at {} yet", current.display()));
    }
    for n in (1..=KEEP).rev() {
        if let Ok(file) = std::fs::File::open(rotated_file(data_dir, n)) {
            std::io::BufReader::new(file).lines().map_while(Result::ok).for_each(|l| show(&l));
        }
    }
    let mut position = 0;
    if let Ok(file) = std::fs::File::open(&current) {
        let mut reader = std::io::BufReader::new(file);
        position = read_lines_from(&mut reader, &show);
    }
    folder.borrow_mut().flush().into_iter().for_each(out);
    if !follow {
        return Ok(());
    }
    loop {
        std::thread::sleep(Duration::from_millis(250));
        folder.borrow_mut().flush().into_iter().for_each(out);
        let Ok(file) = std::fs::File::open(&current) else { continue };
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len < position {
            position = 0; // rotated: the new file starts over
        }
        let mut reader = std::io::BufReader::new(file);
        if reader.seek(std::io::SeekFrom::Start(position)).is_ok() {
            position += read_lines_from(&mut reader, &show);
        }
    }
}

/// The trail's files, oldest first, with the names `verify` reports them by.
fn files(data_dir: &Path) -> Vec<(String, PathBuf)> {
    let mut files: Vec<_> = (1..=KEEP).rev().map(|n| rotated_file(data_dir, n)).collect();
    files.push(current_file(data_dir));
    files
        .into_iter()
        .filter(|f| f.exists())
        .map(|f| (f.file_name().unwrap_or_default().to_string_lossy().into_owned(), f))
        .collect()
}

/// Checks the trail's seals (`tabtunnel audit verify`, `doctor`, the daemon at start).
pub fn verify(data_dir: &Path, config_dir: &Path) -> Result<chain::Report, String> {
    let files = files(data_dir);
    let head = chain::Head::load(config_dir);
    if files.is_empty() && head.is_none() {
        return Err(format!("no audit trail at {} yet", current_file(data_dir).display()));
    }
    let key = match chain::Key::load(config_dir) {
        Ok(key) => key,
        // Never sealed (a trail from before seals): its lines are counted, not checked.
        Err(_) if head.is_none() && !files.iter().any(|(_, f)| chain::holds_a_seal(f)) => chain::Key::none(),
        Err(e) => return Err(e),
    };
    Ok(chain::verify(&key, head.as_ref(), &files))
}

/// No daemon sealed a trail here yet (no key and no head): nothing to check.
fn never_sealed(config_dir: &Path) -> bool {
    !config_dir.join(chain::KEY_FILE).exists() && !config_dir.join(chain::HEAD_FILE).exists()
}

/// The daemon's check at start: what is wrong with the trail, if anything (logged, and shown in
/// the side panel).
fn check_at_start(data_dir: &Path, config_dir: &Path) -> Option<String> {
    let problem = match verify(data_dir, config_dir) {
        Ok(report) if report.problem.is_none() => {
            tracing::info!("audit trail: {report}");
            return None;
        }
        Ok(report) => report.to_string(),
        Err(e) => format!("BROKEN: {e}"),
    };
    tracing::warn!("the audit trail: {problem}; `tabtunnel audit verify` says more");
    Some(problem)
}

/// A line of the trail as `tabtunnel audit` prints it, if it is a line of `agent`'s.
fn shown(text: &str, agent: Option<&str>, json: bool, redactor: &Redactor) -> Option<String> {
    let line = serde_json::from_str::<Line>(text).ok()?;
    if agent.is_some_and(|a| a != line.agent) {
        return None;
    }
    Some(if json { redacted_json(text, redactor) } else { redactor.text(&line.human()).into_owned() })
}

/// A line of the trail as JSON with every string in it redacted; as it is when it holds no
/// secret.
fn redacted_json(text: &str, redactor: &Redactor) -> String {
    fn strings(value: &mut serde_json::Value, redactor: &Redactor) {
        match value {
            serde_json::Value::String(text) => redactor.string(text),
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| strings(v, redactor)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| strings(v, redactor)),
            _ => {}
        }
    }
    if matches!(redactor.text(text), std::borrow::Cow::Borrowed(_)) {
        return text.to_owned();
    }
    let Ok(mut value) = serde_json::from_str::<serde_json::Value>(text) else {
        return redactor.text(text).into_owned();
    };
    strings(&mut value, redactor);
    value.to_string()
}

/// Shows every whole line from the reader's position; returns the bytes consumed.
fn read_lines_from(reader: &mut impl BufRead, show: &impl Fn(&str)) -> u64 {
    let mut consumed = 0;
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return consumed,
            // A half-written last line is read again next time.
            Ok(_) if !line.ends_with('\n') => return consumed,
            Ok(n) => {
                consumed += n as u64;
                show(line.trim_end());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabtunnel_core::AgentId;
    use tabtunnel_core::Outcome;

    #[test]
    fn the_plain_output_cannot_be_forged_or_drive_the_terminal() {
        let mut r = record("Page.navigate", Outcome::Allowed);
        r.url =
            Some("http://x/\n2026-01-01T00:00:00Z  admin  tab 1  Page.navigate ok\u{1b}[2J\u{202e}".into());
        let human = Line::new(&r, SystemTime::UNIX_EPOCH).human();
        assert!(!human.contains('\n') && !human.contains('\u{1b}') && !human.contains('\u{202e}'), "{human}");
        assert!(human.contains("\\n2026") && human.contains("\\u{1b}[2J"), "{human}");
        assert_eq!(escape_controls("https://bücher.example/ä"), "https://bücher.example/ä");
    }

    fn record(method: &str, outcome: Outcome) -> AuditRecord {
        AuditRecord {
            agent: AgentId::new("a"),
            tab: Some(3),
            method: method.into(),
            url: None,
            outcome,
            question: None,
            step: Default::default(),
            identity: Default::default(),
        }
    }

    #[test]
    fn a_policy_choice_and_a_standing_answer_read_as_such_not_as_denials() {
        let rule = "[default] gestures sending = \"allow\"";
        let line =
            Line::new(&record("request", Outcome::AllowedBy { rule: rule.into() }), SystemTime::UNIX_EPOCH);
        assert_eq!(
            (line.outcome.as_str(), line.rule.as_deref(), line.answer.as_deref()),
            ("allowed", Some(rule), None)
        );
        assert!(line.human().ends_with(&format!("request  allowed by {rule}")), "{}", line.human());
        let standing = "standing answer 1: sending on https://m.test for 600 s more";
        for event in ["given", "used", "taken back", "expired"] {
            let line = Line::new(
                &record("standing answer", Outcome::Standing { event, rule: standing.into() }),
                SystemTime::UNIX_EPOCH,
            );
            assert_eq!((line.outcome.as_str(), line.answer.as_deref()), ("standing", Some(event)));
            assert!(line.human().ends_with(&format!("{standing}: {event}")), "{}", line.human());
            assert!(!line.human().contains("DENIED") && !line.human().contains("asked"));
        }
    }

    #[test]
    fn a_gesture_question_is_kept_with_what_the_human_saw() {
        let mut r = record(
            "Input.dispatchMouseEvent",
            Outcome::Asked { rule: "the gesture guard: x".into(), answer: "denied" },
        );
        r.question = Some(Box::new(tabtunnel_wire::gestures::GestureQuestion {
            gesture: "click".into(),
            origin: "https://shop.test".into(),
            element: "Pay €1,240.00\n".into(),
            form: "POST https://shop.test/pay".into(),
            amounts: vec!["€1,240.00".into()],
            fields: vec!["card number".into()],
            reasons: vec!["x".into()],
            ..Default::default()
        }));
        let line = Line::new(&r, SystemTime::UNIX_EPOCH);
        let json: serde_json::Value = serde_json::to_value(&line).unwrap();
        assert_eq!(json["context"]["element"], "Pay €1,240.00\n");
        assert_eq!(json["context"]["amounts"][0], "€1,240.00");
        let human = line.human();
        assert!(human.contains("[click on https://shop.test, element \"Pay €1,240.00\\n\", form \"POST https://shop.test/pay\", amounts €1,240.00, fields card number]"), "{human}");
    }

    #[test]
    fn lines_say_who_did_what_and_what_the_policy_made_of_it() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_500_000_123);
        let mut r =
            record("Network.getCookies", Outcome::Denied { rule: "deny_methods x in [default]".into() });
        r.step = tabtunnel_core::steps::Step {
            id: 4,
            words: "was refused: Network.getCookies (deny_methods x in [default])".into(),
        };
        r.identity = tabtunnel_core::Identity {
            token_id: Some("0123456789ab".into()),
            client: Some("chrome-devtools-mcp 1.11.0".into()),
        };
        let denied = Line::new(&r, at);
        let text = serde_json::to_string(&denied).unwrap();
        assert_eq!(
            text,
            r#"{"time":"2025-11-30T10:53:20.123Z","agent":"a","tab":3,"method":"Network.getCookies","outcome":"denied","rule":"deny_methods x in [default]","step":"was refused: Network.getCookies (deny_methods x in [default])","step_id":4,"token_id":"0123456789ab","client":"chrome-devtools-mcp 1.11.0"}"#
        );
        assert!(
            denied
                .human()
                .ends_with("tab 3    was refused: Network.getCookies (deny_methods x in [default])"),
            "{}",
            denied.human()
        );
        // A line from before steps in words says the method.
        let old = Line::new(
            &record("Network.getCookies", Outcome::Denied { rule: "deny_methods x in [default]".into() }),
            at,
        );
        assert!(
            old.human().ends_with("Network.getCookies  DENIED by deny_methods x in [default]"),
            "{}",
            old.human()
        );
    }

    /// A trail written before the daemon redacted every field (as ab66cbf wrote a denied
    /// navigation's rule): `tabtunnel audit` prints it, plain and `--json`, without the secrets.
    #[test]
    fn tabtunnel_audit_prints_no_secret() {
        let (owner, extension) = ("1f".repeat(32), "2e".repeat(32));
        let agent = format!("tta_{}", "4c".repeat(32));
        let named = format!("http://127.0.0.1:1/{owner}/json/version?e={}&t={agent}", &extension[..40]);
        let mut r =
            record("Page.navigate", Outcome::Denied { rule: format!("allow_origins (origin of {named}…)") });
        r.url = Some(named.clone());
        r.question = Some(Box::new(tabtunnel_wire::gestures::GestureQuestion {
            request: format!("POST {named}"),
            reasons: vec![named.clone()],
            ..Default::default()
        }));
        let text = serde_json::to_string(&Line::new(&r, SystemTime::UNIX_EPOCH)).unwrap();
        let redactor = Redactor::new([&owner, &extension]);
        for json in [false, true] {
            let out = shown(&text, None, json, &redactor).unwrap();
            for piece in [&owner[..8], &extension[..8], &agent[4..12]] {
                assert!(!out.contains(piece), "{piece} in {out}");
            }
            assert!(
                out.contains("origin of http://127.0.0.1:1/<secret>/json/version?e=<secret>&t=<secret>"),
                "{out}"
            );
            if json {
                let line: Line = serde_json::from_str(&out).unwrap();
                assert_eq!(line.context.unwrap().reasons[0], line.url.unwrap());
            }
        }
        // A line without a secret is printed as it was written.
        let plain = serde_json::to_string(&Line::new(
            &record("Runtime.evaluate", Outcome::Allowed),
            SystemTime::UNIX_EPOCH,
        ))
        .unwrap();
        assert_eq!(shown(&plain, None, true, &redactor).unwrap(), plain);
        assert_eq!(shown(&plain, Some("b"), true, &redactor), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_trail_a_burst_pushed_out_says_so() {
        let data = tempfile::tempdir().unwrap();
        let config = data.path().join("config");
        let mut writer = Writer::open(data.path(), &config).unwrap();
        writer.rotate_bytes = 1 << 20;
        let mut big = record("Page.navigate", Outcome::Denied { rule: "allow_origins".into() });
        big.url = Some(format!("https://no.test/{}", "a".repeat(100 << 10)));
        let line = Line::new(&big, SystemTime::now());
        let per_line = serde_json::to_string(&line).unwrap().len() as u64 + 1;
        for _ in 0..((KEEP as u64 + 1) * (writer.rotate_bytes / per_line + 1)) {
            writer.append(&line);
        }
        writer.flush();
        let report = verify(data.path(), &config).unwrap();
        assert_eq!(report.problem, None, "{report}");
        let rotated = report.rotated_out.clone().expect("the head says what went");
        assert_eq!(Some(rotated.through + 1), report.first, "{report}");
        assert!(rotated.young().is_some(), "{rotated:?}");
        assert!(report.to_string().contains("a burst filled the trail"), "{report}");
    }

    #[test]
    fn the_file_is_owner_only_and_rotates() {
        use std::os::unix::fs::PermissionsExt;
        let data = tempfile::tempdir().unwrap();
        let mut writer = Writer::open(data.path(), &data.path().join("config")).unwrap();
        let line = Line::new(&record("Runtime.evaluate", Outcome::Allowed), SystemTime::now());
        let per_line = serde_json::to_string(&line).unwrap().len() as u64 + 1;
        for _ in 0..(ROTATE_BYTES / per_line + 10) {
            writer.append(&line);
        }
        writer.flush();
        let current = current_file(data.path());
        assert_eq!(std::fs::metadata(&current).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(rotated_file(data.path(), 1).exists(), "rotated past {ROTATE_BYTES} bytes");
        assert!(std::fs::metadata(&current).unwrap().len() < ROTATE_BYTES);
        assert_eq!(std::fs::metadata(dir(data.path())).unwrap().permissions().mode() & 0o777, 0o700);
        let report = verify(data.path(), &data.path().join("config")).unwrap();
        assert_eq!(
            (report.problem.clone(), report.first),
            (None, Some(0)),
            "sealed across the rotation: {report}"
        );
    }
}
