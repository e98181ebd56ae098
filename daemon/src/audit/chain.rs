//! The trail's seals: every line carries its place (`seq`, counted across rotated files), the
//! seal of the line before it (`prev`) and its own (`mac`: HMAC-SHA256, under
//! `<config dir>/audit-key`, of the line as written up to its seal). `<config dir>/audit-head.json`
//! keeps where the kept trail starts and what the next line chains to, so a cut end or a removed
//! oldest file shows as well. [`verify`] names the first line that was changed, removed,
//! inserted or moved. Who can read the key (this user's processes that read the config dir)
//! can still write a trail that verifies: docs/security.md says so.

use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use std::fmt;
use std::io::{BufRead, Read, Seek};
use std::path::{Path, PathBuf};

use crate::proof::{from_hex, to_hex};

pub const KEY_FILE: &str = "audit-key";
pub const HEAD_FILE: &str = "audit-head.json";
/// What the first line ever written chains to.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// How a line ends: `…,"mac":"<64 hex>"}`.
const SEAL: &str = ",\"mac\":\"";
const MAC_HEX: usize = 64;
/// Keeps these MACs from meaning anything anywhere else.
const DOMAIN: &[u8] = b"tabtunnel audit line v1\0";

/// The key the seals are made with, kept with the daemon's secrets.
#[derive(Clone)]
pub struct Key(Vec<u8>);

impl Key {
    /// `<config dir>/audit-key`, made on first use (by the daemon).
    pub fn load_or_create(config_dir: &Path) -> Result<Key, String> {
        crate::token::load_or_create_secret(config_dir, KEY_FILE).map(|hex| Key(hex.into_bytes()))
    }

    /// The key, if there is one: a reader never makes one.
    pub fn load(config_dir: &Path) -> Result<Key, String> {
        let path = config_dir.join(KEY_FILE);
        std::fs::read_to_string(&path)
            .map(|text| Key(text.trim().as_bytes().to_vec()))
            .map_err(|e| format!("cannot read the trail's key {}: {e}", path.display()))
    }

    /// No key: for a trail that was never sealed, whose lines are only counted.
    pub fn none() -> Key {
        Key(Vec::new())
    }

    fn mac(&self, body: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0).expect("HMAC takes any key");
        mac.update(DOMAIN);
        mac.update(body);
        mac
    }
}

/// Where the kept trail starts and what comes next: written after every burst of lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// The place of the oldest sealed line kept (rotation moves it).
    pub first: u64,
    /// The place the next line gets.
    pub next: u64,
    /// The seal the next line chains to.
    pub prev: String,
    /// What the last rotation dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotated_out: Option<RotatedOut>,
    /// The last rotation that dropped records [`RotatedOut::early`] (a burst or a flood pushed
    /// them out), kept when later rotations are ordinary ones, so a rotation after the flood
    /// does not hide it; and how many rotations did so in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed_out: Option<RotatedOut>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pushed_out_times: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Default for Head {
    fn default() -> Self {
        Head {
            first: 0,
            next: 0,
            prev: GENESIS.into(),
            rotated_out: None,
            pushed_out: None,
            pushed_out_times: 0,
        }
    }
}

/// Records up to `through` left the trail when it rotated at `at`; the newest of them was
/// written at `written` (both RFC 3339).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RotatedOut {
    pub through: u64,
    pub written: String,
    pub at: String,
}

/// Records younger than this when rotated out were pushed out by a burst, not by time.
pub const YOUNG: std::time::Duration = std::time::Duration::from_secs(3600);
/// The trail keeps at least this much of the past when nobody floods it (five files of 16 MiB
/// hold weeks of an agent's ordinary steps): records rotated out younger than this were pushed
/// out early, by a flood however slow (one line every few seconds for days).
pub const KEPT_AT_LEAST: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

impl RotatedOut {
    /// How old the newest record rotated out was.
    fn age(&self) -> Option<std::time::Duration> {
        let written = humantime::parse_rfc3339(&self.written).ok()?;
        let at = humantime::parse_rfc3339(&self.at).ok()?;
        at.duration_since(written).ok()
    }

    /// How old the newest record rotated out was, if it was [`YOUNG`].
    pub fn young(&self) -> Option<std::time::Duration> {
        self.age().filter(|age| *age < YOUNG)
    }

    /// How old the newest record rotated out was, if it was younger than [`KEPT_AT_LEAST`].
    pub fn early(&self) -> Option<std::time::Duration> {
        self.age().filter(|age| *age < KEPT_AT_LEAST)
    }
}

impl fmt::Display for RotatedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "records up to {} were rotated out at {}", self.through, self.at)?;
        if let Some(age) = self.young() {
            write!(
                f,
                ", {} s after the newest of them was written: a burst filled the trail (`tabtunnel audit` shows whose)",
                age.as_secs()
            )?;
        } else if let Some(age) = self.early() {
            write!(
                f,
                ", {} h after the newest of them was written: the trail kept less than {} days, a flood may have filled it (`tabtunnel audit` shows whose)",
                age.as_secs() / 3600,
                KEPT_AT_LEAST.as_secs() / 86_400
            )?;
        }
        Ok(())
    }
}

impl Head {
    pub fn load(config_dir: &Path) -> Option<Head> {
        let text = std::fs::read_to_string(config_dir.join(HEAD_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn save(&self, config_dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string(self).expect("a head serializes");
        crate::token::write_owner_only(&config_dir.join(HEAD_FILE), text.as_bytes())
    }
}

/// A line of the trail as read back: its place and seal, if it has a valid one.
enum LineSeal {
    Sealed {
        seq: u64,
        prev: String,
        mac: String,
    },
    /// No seal at all: a line written before lines were sealed.
    Unsealed,
    /// A seal that does not match what the line says.
    Broken,
}

fn read_line(key: &Key, line: &str) -> LineSeal {
    let Some(at) = line.rfind(SEAL) else { return LineSeal::Unsealed };
    let mac_hex = &line[at + SEAL.len()..];
    let Some(mac_hex) = mac_hex.strip_suffix("\"}").filter(|m| m.len() == MAC_HEX) else {
        return LineSeal::Broken;
    };
    let Some(mac) = from_hex(mac_hex) else { return LineSeal::Broken };
    let body = format!("{}}}", &line[..at]);
    if key.mac(body.as_bytes()).verify_slice(&mac).is_err() {
        return LineSeal::Broken;
    }
    match place(&body) {
        Some((seq, prev)) => LineSeal::Sealed { seq, prev: prev.to_owned(), mac: mac_hex.to_owned() },
        None => LineSeal::Broken,
    }
}

/// `{"seq":N,"prev":"<64 hex>"`, as [`Sealer::seal`] starts every line (read after the seal
/// matched, so only this daemon's own writing is read here).
fn place(body: &str) -> Option<(u64, &str)> {
    let rest = body.strip_prefix("{\"seq\":")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let seq = rest[..digits].parse().ok()?;
    let prev = rest[digits..].strip_prefix(",\"prev\":\"")?.get(..MAC_HEX)?;
    Some((seq, prev))
}

/// Seals lines for the writer, and keeps the head.
pub struct Sealer {
    key: Key,
    config_dir: PathBuf,
    head: Head,
}

impl Sealer {
    /// Takes the chain up where the last daemon left it: the head, or a sealed line past it in
    /// `current` (a daemon that stopped between writing lines and the head).
    pub fn open(config_dir: &Path, current: &Path) -> Result<Sealer, String> {
        let key = Key::load_or_create(config_dir)?;
        let mut head = Head::load(config_dir).unwrap_or_default();
        if let Some((seq, mac)) = last_sealed(&key, current) {
            if seq >= head.next {
                if head.next == 0 && head.prev == GENESIS {
                    head.first = seq; // no head kept: the chain starts where the file shows it
                }
                head.next = seq + 1;
                head.prev = mac;
            }
        }
        Ok(Sealer { key, config_dir: config_dir.to_owned(), head })
    }

    /// The line's text to write (with its newline): `json` is the line without its place, an
    /// object.
    pub fn seal(&mut self, json: &str) -> String {
        debug_assert!(json.starts_with('{') && json.ends_with('}'));
        let place = format!("{{\"seq\":{},\"prev\":\"{}\"", self.head.next, self.head.prev);
        let mut text = String::with_capacity(json.len() + place.len() + SEAL.len() + MAC_HEX + 4);
        text.push_str(&place);
        if json.len() > 2 {
            text.push(',');
        }
        text.push_str(&json[1..]);
        let mac = to_hex(&self.key.mac(text.as_bytes()).finalize().into_bytes());
        text.pop();
        text.push_str(SEAL);
        text.push_str(&mac);
        text.push_str("\"}\n");
        self.head.next += 1;
        self.head.prev = mac;
        text
    }

    /// The oldest file kept now starts at the first sealed line of `oldest` (after a rotation
    /// dropped the one before it).
    pub fn oldest_is(&mut self, oldest: &Path) {
        if let Some(seq) = first_sealed(&self.key, oldest) {
            self.head.first = seq;
        }
    }

    /// The oldest kept file, `dropped`, is about to go: remember what it held.
    pub fn dropping(&mut self, dropped: &Path, at: std::time::SystemTime) {
        if let Some((through, line)) = last_sealed_line(&self.key, dropped) {
            let written = serde_json::from_str::<serde_json::Value>(&line)
                .ok()
                .and_then(|v| v.get("time")?.as_str().map(str::to_owned))
                .unwrap_or_default();
            let at = humantime::format_rfc3339_millis(at).to_string();
            let rotated = RotatedOut { through, written, at };
            if rotated.early().is_some() {
                tracing::warn!("the audit trail: {rotated}");
                self.head.pushed_out = Some(rotated.clone());
                self.head.pushed_out_times += 1;
            }
            self.head.rotated_out = Some(rotated);
        }
    }

    pub fn save_head(&self) {
        if let Err(e) = self.head.save(&self.config_dir) {
            tracing::warn!("cannot write the audit trail's head: {e}");
        }
    }

    pub fn head(&self) -> &Head {
        &self.head
    }
}

/// The last sealed line of a file, read from its end.
fn last_sealed(key: &Key, path: &Path) -> Option<(u64, String)> {
    last_sealed_with(key, path, |_, mac| mac)
}

/// The last sealed line of `path`: its place and its text.
fn last_sealed_line(key: &Key, path: &Path) -> Option<(u64, String)> {
    last_sealed_with(key, path, |line, _| line.to_owned())
}

fn last_sealed_with(key: &Key, path: &Path, what: impl Fn(&str, String) -> String) -> Option<(u64, String)> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let from = len.saturating_sub(256 << 10);
    file.seek(std::io::SeekFrom::Start(from)).ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    let tail = String::from_utf8_lossy(&tail);
    tail.lines().rev().find_map(|line| match read_line(key, line) {
        LineSeal::Sealed { seq, mac, .. } => Some((seq, what(line, mac))),
        _ => None,
    })
}

/// Whether any line of the file carries a seal.
pub fn holds_a_seal(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else { return false };
    std::io::BufReader::new(file).lines().map_while(Result::ok).any(|line| line.contains(SEAL))
}

fn first_sealed(key: &Key, path: &Path) -> Option<u64> {
    let file = std::fs::File::open(path).ok()?;
    std::io::BufReader::new(file).lines().map_while(Result::ok).find_map(|line| match read_line(key, &line) {
        LineSeal::Sealed { seq, .. } => Some(seq),
        _ => None,
    })
}

/// Where a line is: its file's name and its line number (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    pub file: String,
    pub line: u64,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} line {}", self.file, self.line)
    }
}

/// The first thing wrong with a trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The line's seal does not match what it says.
    Changed { at: At },
    /// A line without a seal after sealed ones.
    Unsealed { at: At },
    /// Lines `from..=to` are gone; the line at `at` is the one after them.
    Removed { from: u64, to: u64, at: At },
    /// Line `seq` is not where it was written: expected before `at`, found at `found`.
    Moved { seq: u64, at: At, found: At },
    /// Line `seq` is at `at` a second time, or out of its order.
    Inserted { seq: u64, at: At },
    /// The trail ends at `last` (none: no sealed line) but the daemon wrote up to `written`.
    CutEnd { last: Option<u64>, written: u64 },
    /// The last line stops in the middle.
    CutLine { at: At },
    /// The head the daemon keeps is gone, so a cut end cannot be seen.
    NoHead,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Changed { at } => write!(f, "{at} was changed (its seal does not match it)"),
            Problem::Unsealed { at } => write!(f, "{at} has no seal: it was inserted or changed"),
            Problem::Removed { from, to, at } if from == to => {
                write!(f, "record {from} was removed (before {at})")
            }
            Problem::Removed { from, to, at } => {
                write!(f, "records {from} to {to} were removed (before {at})")
            }
            Problem::Moved { seq, at, found } => {
                write!(f, "record {seq} was moved: it belongs before {at}, it is at {found}")
            }
            Problem::Inserted { seq, at } => {
                write!(f, "{at} repeats record {seq} out of its place: it was inserted")
            }
            Problem::CutEnd { last: Some(last), written } => {
                write!(f, "the trail ends at record {last} but {written} was written: its end was cut")
            }
            Problem::CutEnd { last: None, written } => {
                write!(f, "the trail holds no sealed record but {written} was written: it was emptied")
            }
            Problem::CutLine { at } => write!(f, "{at} stops in the middle: the trail's end was cut"),
            Problem::NoHead => write!(f, "{HEAD_FILE} is gone: a cut end of the trail cannot be seen"),
        }
    }
}

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// Sealed lines read.
    pub sealed: u64,
    /// Lines before the first sealed one (written by a tabtunnel that did not seal).
    pub unsealed: u64,
    pub first: Option<u64>,
    pub last: Option<u64>,
    pub problem: Option<Problem>,
    /// What the last rotation dropped, as the head says.
    pub rotated_out: Option<RotatedOut>,
    /// The last rotation that dropped records early, and how many did, as the head says.
    pub pushed_out: Option<(RotatedOut, u64)>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.problem, self.first, self.last) {
            (Some(problem), ..) => write!(f, "BROKEN: {problem}")?,
            (None, Some(first), Some(last)) => write!(f, "unbroken: records {first} to {last}")?,
            (None, ..) => write!(f, "unbroken: no sealed record yet")?,
        }
        if self.unsealed > 0 {
            write!(f, " ({} older lines before them carry no seal and are not checked)", self.unsealed)?;
        }
        if let Some(rotated) = &self.rotated_out {
            write!(f, "; {rotated}")?;
        }
        if let Some((pushed, times)) = &self.pushed_out {
            if Some(pushed) != self.rotated_out.as_ref() {
                write!(f, "; earlier, {pushed}")?;
            }
            if *times > 1 {
                write!(f, " ({times} rotations dropped records early)")?;
            }
        }
        Ok(())
    }
}

/// Checks the trail `files` (oldest first: name for messages, path) against `key` and `head`.
pub fn verify(key: &Key, head: Option<&Head>, files: &[(String, PathBuf)]) -> Report {
    let mut report = Report {
        rotated_out: head.and_then(|h| h.rotated_out.clone()),
        pushed_out: head.and_then(|h| Some((h.pushed_out.clone()?, h.pushed_out_times))),
        ..Report::default()
    };
    let mut expected: Option<(u64, String)> = None;
    // After a gap: the places missing, looked for in the rest of the trail.
    let mut gap: Option<(u64, u64, At)> = None;
    for (name, path) in files {
        let Ok(file) = std::fs::File::open(path) else { continue };
        let mut reader = std::io::BufReader::new(file);
        let mut number = 0;
        let mut text = String::new();
        loop {
            text.clear();
            match reader.read_line(&mut text) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => {
                    // Not UTF-8: a changed line; skip past it.
                    number += 1;
                    report
                        .problem
                        .get_or_insert(Problem::Changed { at: At { file: name.clone(), line: number } });
                    let _ = reader.skip_until(b'\n');
                    continue;
                }
            }
            number += 1;
            let at = At { file: name.clone(), line: number };
            if !text.ends_with('\n') {
                report.problem.get_or_insert(Problem::CutLine { at });
                break;
            }
            let read = read_line(key, text.trim_end_matches('\n'));
            if let Some((from, to, gap_at)) = &gap {
                if let LineSeal::Sealed { seq, .. } = read {
                    if (*from..=*to).contains(&seq) {
                        report.problem = Some(Problem::Moved { seq, at: gap_at.clone(), found: at });
                        return report;
                    }
                }
                continue;
            }
            if report.problem.is_some() {
                continue;
            }
            match read {
                LineSeal::Unsealed if expected.is_none() => report.unsealed += 1,
                LineSeal::Unsealed => report.problem = Some(Problem::Unsealed { at }),
                LineSeal::Broken => report.problem = Some(Problem::Changed { at }),
                LineSeal::Sealed { seq, prev, mac } => {
                    report.sealed += 1;
                    match &expected {
                        None => {
                            let first_kept = head.map_or(seq, |h| h.first);
                            if seq > first_kept {
                                gap = Some((first_kept, seq - 1, at.clone()));
                                report.problem = Some(Problem::Removed { from: first_kept, to: seq - 1, at });
                            } else if seq == 0 && prev != GENESIS {
                                report.problem = Some(Problem::Inserted { seq, at });
                            }
                            report.first = Some(seq);
                        }
                        Some((want, want_prev)) if seq == *want && prev == *want_prev => {}
                        Some((want, _)) if seq > *want => {
                            gap = Some((*want, seq - 1, at.clone()));
                            report.problem = Some(Problem::Removed { from: *want, to: seq - 1, at });
                        }
                        Some(_) => report.problem = Some(Problem::Inserted { seq, at }),
                    }
                    report.last = Some(seq);
                    expected = Some((seq + 1, mac));
                }
            }
        }
    }
    if report.problem.is_some() {
        return report;
    }
    match head {
        Some(head) if head.next > 0 && report.last.is_none_or(|last| last + 1 < head.next) => {
            report.problem = Some(Problem::CutEnd { last: report.last, written: head.next - 1 });
        }
        None if report.sealed > 0 => report.problem = Some(Problem::NoHead),
        _ => {}
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Trail {
        config: tempfile::TempDir,
        data: tempfile::TempDir,
    }

    impl Trail {
        fn new() -> Trail {
            Trail { config: tempfile::tempdir().unwrap(), data: tempfile::tempdir().unwrap() }
        }

        fn file(&self, name: &str) -> PathBuf {
            self.data.path().join(name)
        }

        /// Writes `n` lines (`{"n":i}`) into `name` with a sealer taking up the chain.
        fn write(&self, name: &str, n: u64) {
            let mut sealer = Sealer::open(self.config.path(), &self.file(name)).unwrap();
            let mut text = std::fs::read_to_string(self.file(name)).unwrap_or_default();
            for i in 0..n {
                text.push_str(&sealer.seal(&format!("{{\"n\":{i}}}")));
            }
            std::fs::write(self.file(name), text).unwrap();
            sealer.save_head();
        }

        /// Writes `n` lines written at `time` (RFC 3339) into `name`.
        fn write_at(&self, name: &str, n: u64, time: &str) {
            let mut sealer = Sealer::open(self.config.path(), &self.file(name)).unwrap();
            let mut text = std::fs::read_to_string(self.file(name)).unwrap_or_default();
            for i in 0..n {
                text.push_str(&sealer.seal(&format!("{{\"time\":\"{time}\",\"n\":{i}}}")));
            }
            std::fs::write(self.file(name), text).unwrap();
            sealer.save_head();
        }

        /// A rotation at `at` dropping `dropped` (the oldest file) and keeping `oldest`.
        fn rotate(&self, dropped: &str, oldest: &str, at: &str) {
            let mut sealer = Sealer::open(self.config.path(), &self.file(oldest)).unwrap();
            sealer.dropping(&self.file(dropped), humantime::parse_rfc3339(at).unwrap());
            sealer.oldest_is(&self.file(oldest));
            sealer.save_head();
            std::fs::remove_file(self.file(dropped)).unwrap();
        }

        fn lines(&self, name: &str) -> Vec<String> {
            std::fs::read_to_string(self.file(name)).unwrap().lines().map(str::to_owned).collect()
        }

        fn set_lines(&self, name: &str, lines: &[String]) {
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            std::fs::write(self.file(name), text).unwrap();
        }

        fn verify(&self, names: &[&str]) -> Report {
            let key = Key::load(self.config.path()).unwrap();
            let files: Vec<_> = names.iter().map(|n| (n.to_string(), self.file(n))).collect();
            verify(&key, Head::load(self.config.path()).as_ref(), &files)
        }
    }

    fn at(file: &str, line: u64) -> At {
        At { file: file.into(), line }
    }

    #[test]
    fn a_written_trail_verifies_across_restarts_and_files() {
        let t = Trail::new();
        t.write("a", 3);
        t.write("a", 2); // a second daemon takes the chain up
        t.write("b", 4); // a rotation: the next file goes on from the last line
        let report = t.verify(&["a", "b"]);
        assert_eq!(report.problem, None, "{report}");
        assert_eq!((report.first, report.last, report.sealed), (Some(0), Some(8), 9));
        let line: serde_json::Value = serde_json::from_str(&t.lines("a")[1]).unwrap();
        assert_eq!(line["seq"], 1);
        assert_eq!(line["n"], 1, "the line's own fields stay as they were");
    }

    #[test]
    fn a_changed_line_is_named() {
        let t = Trail::new();
        t.write("a", 5);
        let mut lines = t.lines("a");
        lines[2] = lines[2].replace("\"n\":2", "\"n\":7");
        t.set_lines("a", &lines);
        assert_eq!(t.verify(&["a"]).problem, Some(Problem::Changed { at: at("a", 3) }));
        // Its seal made again without the key, or a plain line in its place, neither passes.
        let mut lines = t.lines("a");
        lines[2] = r#"{"seq":2,"prev":"x","n":7}"#.into();
        t.set_lines("a", &lines);
        assert_eq!(t.verify(&["a"]).problem, Some(Problem::Unsealed { at: at("a", 3) }));
    }

    #[test]
    fn a_removed_line_is_named() {
        let t = Trail::new();
        t.write("a", 5);
        let mut lines = t.lines("a");
        lines.remove(1);
        t.set_lines("a", &lines);
        assert_eq!(t.verify(&["a"]).problem, Some(Problem::Removed { from: 1, to: 1, at: at("a", 2) }));
    }

    #[test]
    fn an_inserted_copy_is_named() {
        let t = Trail::new();
        t.write("a", 5);
        let mut lines = t.lines("a");
        let copy = lines[1].clone();
        lines.insert(3, copy);
        t.set_lines("a", &lines);
        assert_eq!(t.verify(&["a"]).problem, Some(Problem::Inserted { seq: 1, at: at("a", 4) }));
    }

    #[test]
    fn a_line_from_another_trail_is_named() {
        let t = Trail::new();
        t.write("a", 3);
        let other = Trail::new();
        other.write("a", 3);
        let mut lines = t.lines("a");
        lines.insert(1, other.lines("a")[1].clone());
        t.set_lines("a", &lines);
        assert_eq!(t.verify(&["a"]).problem, Some(Problem::Changed { at: at("a", 2) }));
    }

    #[test]
    fn swapped_lines_are_named() {
        let t = Trail::new();
        t.write("a", 5);
        let mut lines = t.lines("a");
        lines.swap(1, 2);
        t.set_lines("a", &lines);
        assert_eq!(
            t.verify(&["a"]).problem,
            Some(Problem::Moved { seq: 1, at: at("a", 2), found: at("a", 3) })
        );
    }

    #[test]
    fn a_cut_end_is_named() {
        let t = Trail::new();
        t.write("a", 5);
        let mut lines = t.lines("a");
        lines.truncate(3);
        t.set_lines("a", &lines);
        assert_eq!(t.verify(&["a"]).problem, Some(Problem::CutEnd { last: Some(2), written: 4 }));
        t.set_lines("a", &[]);
        assert_eq!(t.verify(&["a"]).problem, Some(Problem::CutEnd { last: None, written: 4 }));
        // Cut in the middle of its last line.
        let t = Trail::new();
        t.write("a", 2);
        let text = std::fs::read_to_string(t.file("a")).unwrap();
        std::fs::write(t.file("a"), &text[..text.len() - 10]).unwrap();
        assert_eq!(t.verify(&["a"]).problem, Some(Problem::CutLine { at: at("a", 2) }));
    }

    #[test]
    fn a_removed_oldest_file_is_named_unless_rotation_dropped_it() {
        let t = Trail::new();
        t.write("a", 3);
        t.write("b", 3);
        assert_eq!(t.verify(&["b"]).problem, Some(Problem::Removed { from: 0, to: 2, at: at("b", 1) }));
        // Rotation dropping "a" moves the head's start.
        let mut sealer = Sealer::open(t.config.path(), &t.file("b")).unwrap();
        sealer.oldest_is(&t.file("b"));
        sealer.save_head();
        assert_eq!(t.verify(&["b"]).problem, None);
        assert_eq!(sealer.head().first, 3);
    }

    #[test]
    fn a_flood_stays_named_after_later_rotations_and_a_slow_one_is_seen() {
        let t = Trail::new();
        // A burst: records pushed out 10 s after they were written.
        t.write_at("a", 2, "2026-12-01T10:00:00Z");
        t.write_at("b", 2, "2026-12-01T10:00:05Z");
        t.rotate("a", "b", "2026-12-01T10:00:10Z");
        let report = t.verify(&["b"]);
        assert!(report.to_string().contains("a burst filled the trail"), "{report}");
        // Then ordinary rotations, weeks later: the burst is still said.
        t.write_at("c", 2, "2026-12-20T10:00:00Z");
        t.rotate("b", "c", "2027-01-10T10:00:00Z");
        let report = t.verify(&["c"]);
        assert_eq!(report.problem, None, "{report}");
        assert_eq!(report.rotated_out.as_ref().map(|r| r.through), Some(3));
        assert!(report.to_string().contains("earlier, records up to 1 were rotated out"), "{report}");
        assert!(report.to_string().contains("a burst filled the trail"), "{report}");
        // A slow flood: records pushed out three hours after they were written.
        let t = Trail::new();
        t.write_at("a", 2, "2026-12-01T10:00:00Z");
        t.write_at("b", 2, "2026-12-01T12:00:00Z");
        t.rotate("a", "b", "2026-12-01T13:00:00Z");
        let report = t.verify(&["b"]);
        assert!(report.to_string().contains("3 h after the newest of them was written"), "{report}");
        assert!(report.to_string().contains("a flood may have filled it"), "{report}");
        // Records kept longer than a week went by time: nothing is said.
        let t = Trail::new();
        t.write_at("a", 2, "2026-11-01T10:00:00Z");
        t.write_at("b", 2, "2026-12-01T12:00:00Z");
        t.rotate("a", "b", "2026-12-01T13:00:00Z");
        let report = t.verify(&["b"]);
        assert!(!report.to_string().contains("flood") && !report.to_string().contains("burst"), "{report}");
        assert_eq!(report.pushed_out, None);
    }

    #[test]
    fn a_removed_head_is_named_and_lines_before_sealing_are_counted() {
        let t = Trail::new();
        std::fs::write(t.file("a"), "{\"old\":1}\n{\"old\":2}\n").unwrap();
        t.write("a", 2);
        let report = t.verify(&["a"]);
        assert_eq!((report.problem.clone(), report.unsealed, report.sealed), (None, 2, 2), "{report}");
        assert!(report.to_string().contains("2 older lines"), "{report}");
        std::fs::remove_file(t.config.path().join(HEAD_FILE)).unwrap();
        assert_eq!(t.verify(&["a"]).problem, Some(Problem::NoHead));
    }

    #[test]
    fn a_daemon_stopped_before_its_head_was_written_is_taken_up() {
        let t = Trail::new();
        t.write("a", 2);
        let mut sealer = Sealer::open(t.config.path(), &t.file("a")).unwrap();
        let mut text = std::fs::read_to_string(t.file("a")).unwrap();
        text.push_str(&sealer.seal("{}"));
        std::fs::write(t.file("a"), &text).unwrap(); // no save_head: stopped here
        t.write("a", 1);
        let report = t.verify(&["a"]);
        assert_eq!((report.problem.clone(), report.last), (None, Some(3)), "{report}");
        assert!(t.lines("a")[2].starts_with("{\"seq\":2,"), "an empty line sealed too");
    }
}

#[cfg(test)]
mod cost {
    use super::*;

    /// `cargo test --release -p tabtunnel --lib audit::chain::cost -- --ignored --nocapture`:
    /// what sealing and checking a full trail (5 files of 16 MiB) costs.
    #[test]
    #[ignore]
    fn sealing_and_checking_a_full_trail() {
        let config = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let path = data.path().join("audit.jsonl");
        let mut sealer = Sealer::open(config.path(), &path).unwrap();
        let line = r#"{"time":"2026-12-03T10:53:20.123Z","agent":"agent-1","tab":1234567,"method":"Runtime.callFunctionOn","url":"https://shop.example/cart?item=12345","outcome":"allowed"}"#;
        let mut text = String::new();
        let started = std::time::Instant::now();
        while text.len() < 80 << 20 {
            text.push_str(&sealer.seal(line));
        }
        let sealing = started.elapsed();
        let lines = text.lines().count();
        std::fs::write(&path, &text).unwrap();
        sealer.save_head();
        let started = std::time::Instant::now();
        let report = verify(&sealer.key, Some(sealer.head()), &[("audit.jsonl".into(), path)]);
        let checking = started.elapsed();
        assert_eq!(report.problem, None);
        println!(
            "{lines} lines, {} MiB: sealing {:.2} us/line, checking {:.0} ms in all",
            text.len() >> 20,
            sealing.as_secs_f64() * 1e6 / lines as f64,
            checking.as_secs_f64() * 1e3
        );
    }
}
