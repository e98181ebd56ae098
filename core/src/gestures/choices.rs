//! The policy's choices per kind of gesture, per agent and per site: `ask` (the default for
//! every kind but signing in), `allow` (no question) or `deny` (refused without a question);
//! signing in is asked `once` per site and agent by default. Also which standing answers a
//! question offers (`standing_minutes`, and for paying only with `standing_for_paying`).
//!
//! ```toml
//! [default.gestures]
//! sending = "ask"
//! sign_in = "once"                # once | ask | allow | deny
//! standing_minutes = [10, 60]     # [] offers none
//! [default.gestures.sites."https://*.bank.example"]
//! paying = "deny"
//! ```
//!
//! An agent's section is laid over `[default]`'s: its own site rules, then its own section, then
//! `[default]`'s site rules, then `[default]`'s section decide, the first that names the kind
//! (the strictest where several of its site patterns match). A `deny` that applies anywhere
//! wins, as a denied method in `[default]` holds for every agent.

use crate::origins::{origin_of, OriginPattern};
use serde::Deserialize;
use std::collections::BTreeMap;
use tabtunnel_wire::gestures::GestureKind;

/// What the policy says about one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Choice {
    /// Allowed without a question (weakest).
    Allow,
    /// Asked the first time, then remembered for the daemon's life (signing in only).
    Once,
    Ask,
    /// Refused without a question (strictest).
    Deny,
}

impl Choice {
    fn name(self) -> &'static str {
        match self {
            Choice::Allow => "allow",
            Choice::Once => "once",
            Choice::Ask => "ask",
            Choice::Deny => "deny",
        }
    }
}

/// A section's `gestures` table as written (and each of its `sites`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoicesFile {
    pub paying: Option<Choice>,
    pub deleting: Option<Choice>,
    pub secrets: Option<Choice>,
    pub sending: Option<Choice>,
    pub sharing: Option<Choice>,
    #[serde(alias = "signing_in", alias = "signing-in")]
    pub sign_in: Option<Choice>,
    /// The standing answers a question offers, in minutes (default 10 and 60).
    pub standing_minutes: Option<Vec<f64>>,
    /// Whether a question about paying offers standing answers (default no).
    pub standing_for_paying: Option<bool>,
    /// Choices on the pages of some origins (origin patterns, as `allow_origins`).
    pub sites: Option<BTreeMap<String, ChoicesFile>>,
}

impl ChoicesFile {
    fn get(&self, kind: GestureKind) -> Option<Choice> {
        match kind {
            GestureKind::Paying => self.paying,
            GestureKind::Deleting => self.deleting,
            GestureKind::Secrets => self.secrets,
            GestureKind::Sending => self.sending,
            GestureKind::Sharing => self.sharing,
            GestureKind::SigningIn => self.sign_in,
        }
    }
}

/// How a key reads in the file, for the rules' names.
fn key(kind: GestureKind) -> &'static str {
    match kind {
        GestureKind::SigningIn => "sign_in",
        kind => kind.name(),
    }
}

/// The built-in choice.
pub fn built_in(kind: GestureKind) -> Choice {
    match kind {
        GestureKind::SigningIn => Choice::Once,
        _ => Choice::Ask,
    }
}

pub const DEFAULT_STANDING_MINUTES: [u64; 2] = [10, 60];
/// The longest standing answer a policy may offer: a day.
const MAX_STANDING_MINUTES: f64 = 24.0 * 60.0;

#[derive(Debug, Clone)]
struct Layer {
    site: Option<OriginPattern>,
    /// 0 for the agent's own site rules, 1 its section, 2 `[default]`'s site rules, 3 `[default]`.
    rank: u8,
    choices: [Option<Choice>; 6],
    /// Where it is written: `[agent.x] gestures.sites."https://a.example"`.
    place: String,
}

/// One agent's choices, compiled.
#[derive(Debug, Clone)]
pub struct Choices {
    layers: Vec<Layer>,
    /// The standing answers a question offers (ms each).
    pub standing_ms: Vec<u64>,
    pub standing_for_paying: bool,
}

impl Default for Choices {
    fn default() -> Self {
        Choices {
            layers: Vec::new(),
            standing_ms: DEFAULT_STANDING_MINUTES.iter().map(|m| m * 60_000).collect(),
            standing_for_paying: false,
        }
    }
}

fn kinds_of(file: &ChoicesFile, where_: &str) -> Result<[Option<Choice>; 6], String> {
    let mut out = [None; 6];
    for (i, kind) in GestureKind::ALL.into_iter().enumerate() {
        let choice = file.get(kind);
        if choice == Some(Choice::Once) && kind != GestureKind::SigningIn {
            return Err(format!(
                "{where_}: {} = \"once\" is for sign_in only (ask, allow or deny)",
                key(kind)
            ));
        }
        out[i] = choice;
    }
    Ok(out)
}

fn standing_ms(minutes: &[f64], where_: &str) -> Result<Vec<u64>, String> {
    if minutes.len() > 4 {
        return Err(format!("{where_}: standing_minutes offers at most 4 periods"));
    }
    minutes
        .iter()
        .map(|m| {
            if m.is_finite() && *m > 0.0 && *m <= MAX_STANDING_MINUTES {
                Ok((m * 60_000.0).round().max(1.0) as u64)
            } else {
                Err(format!("{where_}: standing_minutes {m} is not a number of minutes in (0, 1440]"))
            }
        })
        .collect()
}

impl Choices {
    /// A section's choices (`name`: `default`, `agent.x`) laid over its base's.
    pub fn compile(name: &str, own: Option<&ChoicesFile>, base: Option<&Choices>) -> Result<Choices, String> {
        let mut choices = base.cloned().unwrap_or_default();
        let Some(own) = own else { return Ok(choices) };
        let where_ = format!("[{name}] gestures");
        // The agent's own rank above the default's.
        let (site_rank, section_rank) = if base.is_some() { (0, 1) } else { (2, 3) };
        let mut mine = Vec::new();
        for (pattern, site) in own.sites.iter().flatten() {
            let here = format!("{where_}.sites.{pattern:?}");
            if site.sites.is_some() || site.standing_minutes.is_some() || site.standing_for_paying.is_some() {
                return Err(format!("{here}: a site names kinds only"));
            }
            let site_pattern = OriginPattern::parse(pattern).map_err(|e| format!("{here}: {e}"))?;
            mine.push(Layer {
                site: Some(site_pattern),
                rank: site_rank,
                choices: kinds_of(site, &here)?,
                place: here,
            });
        }
        mine.push(Layer {
            site: None,
            rank: section_rank,
            choices: kinds_of(own, &where_)?,
            place: where_.clone(),
        });
        mine.extend(choices.layers);
        choices.layers = mine;
        if let Some(minutes) = &own.standing_minutes {
            choices.standing_ms = standing_ms(minutes, &where_)?;
        }
        if let Some(paying) = own.standing_for_paying {
            choices.standing_for_paying = paying;
        }
        Ok(choices)
    }

    /// The choice for `kind` on the page of `origin`, and the rule that made it (`None`: the
    /// built-in one).
    pub fn of(&self, kind: GestureKind, origin: &str) -> (Choice, Option<String>) {
        let i = GestureKind::ALL.iter().position(|k| *k == kind).expect("every kind is listed");
        let page = origin_of(origin);
        let applies = |l: &&Layer| match &l.site {
            None => true,
            Some(p) => page.as_ref().is_some_and(|o| p.matches(o)),
        };
        let named: Vec<(&Layer, Choice)> =
            self.layers.iter().filter(applies).filter_map(|l| Some((l, l.choices[i]?))).collect();
        let rule = |l: &Layer, c: Choice| Some(format!("{} {} = \"{}\"", l.place, key(kind), c.name()));
        if let Some((l, c)) = named.iter().find(|(_, c)| *c == Choice::Deny) {
            return (*c, rule(l, *c));
        }
        let Some(rank) = named.iter().map(|(l, _)| l.rank).min() else { return (built_in(kind), None) };
        let (l, c) = named.iter().filter(|(l, _)| l.rank == rank).max_by_key(|(_, c)| *c).expect("ranked");
        (*c, rule(l, *c))
    }

    /// The standing answers a question about `kinds` offers.
    pub fn offers(&self, kinds: &[GestureKind]) -> Vec<u64> {
        let paying = kinds.contains(&GestureKind::Paying) && !self.standing_for_paying;
        if kinds.is_empty() || paying {
            return Vec::new();
        }
        self.standing_ms.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use GestureKind::*;

    fn file(toml_like: serde_json::Value) -> ChoicesFile {
        serde_json::from_value(toml_like).unwrap()
    }

    #[test]
    fn built_in_asks_for_every_kind_but_signing_in_which_is_once() {
        let c = Choices::default();
        for kind in [Paying, Deleting, Secrets, Sending, Sharing] {
            assert_eq!(c.of(kind, "https://a.example"), (Choice::Ask, None));
        }
        assert_eq!(c.of(SigningIn, "https://a.example"), (Choice::Once, None));
        assert_eq!(c.offers(&[Sending]), vec![600_000, 3_600_000]);
        assert!(c.offers(&[Paying]).is_empty(), "paying offers no standing answer");
        assert!(c.offers(&[Sending, Paying]).is_empty());
        assert!(c.offers(&[]).is_empty(), "nothing to stand for");
    }

    #[test]
    fn agent_and_site_layers_decide_and_a_deny_anywhere_wins() {
        let default = file(serde_json::json!({
            "sending": "ask", "deleting": "deny",
            "sites": { "https://mail.example": { "sending": "allow" }, "https://*.bank.example": { "paying": "deny" } }
        }));
        let agent = file(serde_json::json!({
            "paying": "allow", "deleting": "allow", "sign_in": "ask", "standing_for_paying": true,
            "standing_minutes": [0.1],
            "sites": { "https://shop.example": { "sharing": "allow" } }
        }));
        let d = Choices::compile("default", Some(&default), None).unwrap();
        let a = Choices::compile("agent.x", Some(&agent), Some(&d)).unwrap();
        assert_eq!(d.of(Sending, "https://mail.example").0, Choice::Allow);
        assert_eq!(d.of(Sending, "https://other.example").0, Choice::Ask);
        let (deny, rule) = a.of(Deleting, "https://shop.example");
        assert_eq!(deny, Choice::Deny, "[default]'s deny holds for every agent");
        assert_eq!(rule.as_deref(), Some("[default] gestures deleting = \"deny\""));
        let (deny, rule) = a.of(Paying, "https://www.bank.example");
        assert_eq!(deny, Choice::Deny);
        assert!(rule.unwrap().contains(r#"sites."https://*.bank.example" paying"#));
        assert_eq!(a.of(Paying, "https://shop.example").0, Choice::Allow, "the agent's own section");
        assert_eq!(a.of(Sharing, "https://shop.example").0, Choice::Allow, "the agent's site");
        assert_eq!(a.of(Sharing, "https://shop.example:8443").0, Choice::Ask, "another origin");
        assert_eq!(a.of(SigningIn, "https://shop.example").0, Choice::Ask);
        assert_eq!(d.of(SigningIn, "https://shop.example").0, Choice::Once);
        assert_eq!(a.offers(&[Paying]), vec![6_000]);
        assert_eq!(d.offers(&[Sending]), vec![600_000, 3_600_000], "the agent's settings are its own");
    }

    #[test]
    fn mistakes_say_where() {
        for (bad, says) in [
            (serde_json::json!({"sending": "once"}), "for sign_in only"),
            (serde_json::json!({"standing_minutes": [0]}), "standing_minutes 0"),
            (serde_json::json!({"standing_minutes": [2000]}), "(0, 1440]"),
            (serde_json::json!({"standing_minutes": [1, 2, 3, 4, 5]}), "at most 4"),
            (serde_json::json!({"sites": {"mail.example": {"sending": "allow"}}}), "not an origin pattern"),
            (serde_json::json!({"sites": {"https://a.example": {"standing_minutes": [1]}}}), "kinds only"),
        ] {
            let error = Choices::compile("default", Some(&file(bad.clone())), None).unwrap_err();
            assert!(error.contains(says) && error.contains("[default] gestures"), "{bad}: {error}");
        }
        assert!(serde_json::from_value::<ChoicesFile>(serde_json::json!({"sending": "maybe"})).is_err());
        assert!(serde_json::from_value::<ChoicesFile>(serde_json::json!({"buying": "ask"})).is_err());
        let signing: ChoicesFile = serde_json::from_value(serde_json::json!({"signing-in": "deny"})).unwrap();
        assert_eq!(signing.sign_in, Some(Choice::Deny));
    }
}
