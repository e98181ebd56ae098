//! What the fields a write carries say it does, by their names and values (`body::Fields`),
//! where no label does: a generic `Save` that sends `visibility_level=20` shares.
//!
//! - **Sharing** (exposure): a visibility, privacy or sharing field set to a value anyone can
//!   see (`public`, `anyone`, `everyone`, `internal`, `unlisted`, `open`; GitLab's levels 10
//!   and 20; Mattermost's `O`), or a flag whose name ends in `public`, `everyone` or `anyone`
//!   set true (`is_web_public=true`; `is_private=false` says nothing). A role, permission,
//!   access level or group written **for another person** (the write names a user or member,
//!   in its fields or, when it is no GET, its path: `PATCH /org/users/7 {role}`,
//!   `albumUsers: [{userId, role}]`, `users[]=5&new_role=editor`) or an invite's; a group that
//!   makes an administrator. A role alone (an onboarding survey's `role=developer`) is none.
//! - **Paying**: a payment provider's token or method id (`paymentToken`, `payment_intent`,
//!   `stripeToken`, `payment_method_nonce`).
//! - **Deleting**: a SQL statement that destroys (`TRUNCATE`, `DROP TABLE`, `DELETE FROM`) as a
//!   value.
//! - **Secrets**: accepting an OAuth consent (a `consent` URL and a field named, or a button's
//!   value saying, `accept`, `approve`, `allow` or `grant`; a cookie banner's consent is none).
//!
//! [`is_draft`] says a write is a draft's save (`_draft=1`, `status=draft`): it sends nothing.

use super::body::Fields;
use super::vocabulary::{self, split_identifier, Kind, Label};

/// A kind the fields say, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub kind: Kind,
    pub why: String,
}

fn words(name: &str) -> Label {
    Label::new(&split_identifier(name))
}

/// The last word of a field's name (`project[visibility_level]` → `level`), and the whole.
fn ends_with(name: &Label, entries: &[&str]) -> bool {
    entries.iter().any(|e| name.ends_with(e))
}

fn truthy(value: &str) -> bool {
    matches!(value.trim().to_ascii_lowercase().as_str(), "true" | "1" | "on" | "yes")
}

const VISIBILITY_NAMES: &[&str] =
    &["visibility", "visibility level", "privacy", "share", "sharing", "audience", "access", "acl"];
const EXPOSED: &[&str] = &[
    "public",
    "anyone",
    "everyone",
    "internal",
    "unlisted",
    "open",
    "o",
    "web public",
    "anyone with link",
    "public-read",
    "public-read-write",
];
const PUBLIC_FLAGS: &[&str] = &["public", "everyone", "anyone"];
const ROLE_NAMES: &[&str] = &[
    "role",
    "roles",
    "role id",
    "role ids",
    "permission",
    "permissions",
    "access level",
    "invite as",
    "scopes",
    "group ids",
    "groups",
    "add groups",
];
const GROUP_NAMES: &[&str] = &["group ids", "groups", "add groups", "group"];
const ADMIN_VALUES: &[&str] = &["admin", "administrator", "owner", "superuser", "super admin"];
/// Fields and path words that name another person.
const PERSONS: &[&str] = &[
    "user",
    "users",
    "user id",
    "user ids",
    "username",
    "member",
    "members",
    "member account",
    "invite",
    "invites",
    "invitee",
    "invitation",
    "invitations",
    "collaborator",
    "collaborators",
    "staff",
    "people",
];
const PAYMENT_TOKENS: &[&str] = &[
    "payment token",
    "payment intent",
    "stripe token",
    "payment method nonce",
    "payment method id",
    "payment method token",
];
const CONSENTED: &[&str] = &["accept", "approve", "allow", "grant", "authorize"];

/// What the fields of a write say (see the module's documentation). `url_words` are its
/// URL's (`rule::url_words`); `by_get` a GET form's fields, whose path names no person.
pub fn said(read: &Fields, url_words: &str, by_get: bool) -> Vec<Said> {
    let mut out: Vec<Said> = Vec::new();
    let mut push = |kind, why: String| {
        if !out.iter().any(|s| s.kind == kind) {
            out.push(Said { kind, why });
        }
    };
    let url = Label::new(url_words);
    let names: Vec<Label> = read.names.iter().map(|n| words(n)).collect();
    // A path names another person by a plural or an invite (`/org/users/7`); `/user/…` and
    // `/users/me/…` are one's own.
    let path_person = !by_get && PERSONS.iter().any(|p| p.ends_with('s') && url.has(p)) && !url.has("me");
    let person = path_person || names.iter().any(|n| ends_with(n, PERSONS));
    for (name, value) in &read.pairs {
        let name_words = words(name);
        let value_lower = value.trim().to_lowercase();
        let value_words = Label::new(&split_identifier(value));
        if ends_with(&name_words, VISIBILITY_NAMES)
            && (EXPOSED.contains(&value_lower.as_str())
                || (name_words.ends_with("visibility level") && matches!(value_lower.as_str(), "10" | "20")))
        {
            push(Kind::Sharing, format!("it sets {name}={value}"));
        }
        if ends_with(&name_words, PUBLIC_FLAGS) && !name_words.has("private") && truthy(value) {
            push(Kind::Sharing, format!("it sets {name}={value}"));
        }
        if ends_with(&name_words, ROLE_NAMES) && !value_lower.is_empty() {
            if person {
                push(Kind::Sharing, format!("it gives another person a role ({name}={value})"));
            } else if ends_with(&name_words, GROUP_NAMES) && ADMIN_VALUES.iter().any(|a| value_words.has(a)) {
                push(Kind::Sharing, format!("it makes an administrator ({name}={value})"));
            }
        }
        if destroys(value) {
            push(Kind::Deleting, format!("it sends a SQL statement that destroys ({})", clip(value)));
        }
    }
    if let Some(name) = read.names.iter().find(|n| ends_with(&words(n), PAYMENT_TOKENS)) {
        push(Kind::Paying, format!("it sends a payment method ({name})"));
    }
    let cookies = url.has("cookie") || url.has("cookies") || names.iter().any(|n| n.has("cookie"));
    let consents = read.pairs.iter().any(|(name, value)| {
        ends_with(&words(name), CONSENTED) || CONSENTED.iter().any(|c| Label::new(value).has(c))
    });
    if url.has("consent") && !cookies && consents {
        push(Kind::Secrets, "it accepts an application's access to the account (consent)".into());
    }
    out
}

/// What a GET form's fields say it writes all the same: a submit button or action field that
/// deletes (WordPress's `delete_all=Empty Trash`, `action=delete`) or a role given to a person
/// its fields name (`users[]=5&new_role=editor`). Nothing else: a GET form that filters by
/// `visibility=public` or `role=editor` reads.
pub fn said_by_get(read: &Fields) -> Vec<Said> {
    let mut out: Vec<Said> = said(read, "", true).into_iter().filter(|s| s.kind == Kind::Sharing).collect();
    out.retain(|s| s.why.starts_with("it gives another person a role"));
    let named = read.pairs.iter().filter(|(_, v)| !v.is_empty()).map(|(n, _)| n.clone());
    for name in named.chain(super::body::operations(read)) {
        let deletes = vocabulary::find(&split_identifier(&name), &[])
            .into_iter()
            .find(|f| f.kind == Some(Kind::Deleting));
        if let Some(found) = deletes.filter(|_| out.iter().all(|s| s.kind != Kind::Deleting)) {
            out.push(Said { kind: Kind::Deleting, why: format!("it sends {name} ({})", found.describe()) });
        }
    }
    out
}

/// A SQL statement that destroys data, as a value on its own (`TRUNCATE \`orders\``).
fn destroys(value: &str) -> bool {
    let first: Vec<String> = value.split_whitespace().take(2).map(str::to_ascii_lowercase).collect();
    match first.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["truncate", ..] => true,
        ["drop", what] => matches!(what, "table" | "database" | "schema"),
        ["delete", "from"] => true,
        _ => false,
    }
}

fn clip(text: &str) -> String {
    text.chars().take(40).collect()
}

/// A draft's save: it sends nothing yet (`_draft=1`, `is_draft=true`, `status=draft`).
pub fn is_draft(read: &Fields) -> bool {
    read.pairs.iter().any(|(name, value)| {
        let name = words(name);
        (ends_with(&name, &["draft", "is draft", "save draft"]) && truthy(value))
            || (name.ends_with("status") && value.trim().eq_ignore_ascii_case("draft"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gestures::body::fields;

    fn kinds(body: &str, url: &str) -> Vec<Kind> {
        said(&fields(body, ""), url, false).into_iter().map(|s| s.kind).collect()
    }

    #[test]
    fn visibility_fields_set_to_what_anyone_sees_share() {
        assert_eq!(
            kinds("project%5Bvisibility_level%5D=20&project%5Bname%5D=x", "acme billing"),
            [Kind::Sharing]
        );
        assert_eq!(kinds("is_private=false&is_web_public=true", "streams 12"), [Kind::Sharing]);
        assert_eq!(kinds(r#"{"visibility":"public","text":"hi"}"#, "notes create"), [Kind::Sharing]);
        assert_eq!(kinds(r#"{"privacy":"O"}"#, "channels ch7 privacy"), [Kind::Sharing]);
        assert_eq!(kinds(r#"{"public":true}"#, "gists 3"), [Kind::Sharing]);
        // An object store's canned ACL (S3, Spaces, GCS's XML API).
        assert_eq!(kinds(r#"{"acl":"public-read"}"#, "spaces assets prod acl"), [Kind::Sharing]);
        assert_eq!(kinds("x-amz-acl=public-read-write", "bucket"), [Kind::Sharing]);
        assert!(kinds(r#"{"acl":"private"}"#, "spaces assets prod acl").is_empty());
        assert!(kinds(r#"{"acl":"bucket-owner-full-control"}"#, "bucket").is_empty());
    }

    #[test]
    fn private_settings_and_other_flags_share_nothing() {
        assert!(kinds("project%5Bvisibility_level%5D=0", "acme billing").is_empty());
        assert!(kinds("is_private=false", "streams 12").is_empty(), "not private is not public");
        assert!(kinds("history_public_to_subscribers=true", "streams 12").is_empty());
        assert!(kinds(r#"{"visibility":"private"}"#, "notes create").is_empty());
        assert!(kinds(r#"{"public":false}"#, "gists 3").is_empty());
    }

    #[test]
    fn a_role_for_another_person_shares_and_ones_own_role_does_not() {
        assert_eq!(kinds(r#"{"role":"Admin"}"#, "api org users 7"), [Kind::Sharing]);
        assert_eq!(
            kinds(r#"{"albumUsers":[{"userId":"u-tom","role":"editor"}]}"#, "albums 0d users"),
            [Kind::Sharing]
        );
        let wordpress = said(
            &fields("users%5B%5D=5&new_role=administrator&changeit=Alterar", ""),
            "wp admin users php",
            true,
        );
        assert_eq!(wordpress.len(), 1);
        assert_eq!(
            kinds(r#"{"name":"Cleaner","group_ids":["system-admin"]}"#, "config auth create"),
            [Kind::Sharing]
        );
        // An onboarding survey: one's own role.
        assert!(kinds("role=developer&company_size=10", "onboarding").is_empty());
        assert!(kinds(r#"{"role":"admin","team_size":"5"}"#, "onboarding survey").is_empty());
        assert!(kinds(r#"{"role":"developer"}"#, "api users me onboarding").is_empty());
        // A GET form listing users by role names nobody: its path does not count.
        assert!(said(&fields("role=editor&s=", ""), "wp admin users php", true).is_empty());
        assert!(said_by_get(&fields("role=editor&s=", "")).is_empty());
        assert!(said_by_get(&fields("visibility=public&sort=name", "")).is_empty(), "a filter");
        assert!(kinds(r#"{"group_ids":["system-users"],"name":"x"}"#, "config auth create").is_empty());
    }

    #[test]
    fn payment_methods_destructive_sql_and_consent() {
        let multipart = "--b\r\nContent-Disposition: form-data; name=\"paymentToken\"\r\n\r\npm_1\r\n--b--";
        let read = fields(multipart, "multipart/form-data; boundary=b");
        assert_eq!(said(&read, "api accounts premium", false)[0].kind, Kind::Paying);
        assert_eq!(kinds("payment_intent=pi_3", "module stripe"), [Kind::Paying]);
        assert!(kinds("payment_option=card&country=IT", "checkout").is_empty());
        assert_eq!(kinds("db=x&sql_query=TRUNCATE+%60orders%60", "sql"), [Kind::Deleting]);
        assert_eq!(kinds("sql_query=DROP%20TABLE%20t", "sql"), [Kind::Deleting]);
        assert!(kinds("sql_query=SELECT+*+FROM+t&q=drop+shipping", "sql").is_empty());
        assert!(kinds("message=please+delete+from+my+list", "sql").is_empty(), "a sentence is no statement");
        assert_eq!(
            kinds("code=Qa1&accept=Ja", "realms acme login actions consent client id x"),
            [Kind::Secrets]
        );
        assert!(kinds("code=Qa1&cancel=Nein", "realms acme login actions consent").is_empty());
        assert_eq!(kinds("challenge=c9&submit=Allow+access", "oauth2 consent"), [Kind::Secrets]);
        assert!(kinds("challenge=c9&deny=Deny+access", "oauth2 consent").is_empty());
        assert!(kinds("accept=all", "api cookie consent").is_empty(), "a cookie banner");
    }

    #[test]
    fn get_forms_that_delete_or_give_roles() {
        let empty_trash = fields("post_status=trash&_wpnonce=a1&s=&delete_all=Esvaziar+lixeira", "");
        assert_eq!(said_by_get(&empty_trash)[0].kind, Kind::Deleting);
        let search = fields("post_status=trash&_wpnonce=a1&s=mar%C3%A7o&m=0", "");
        assert!(said_by_get(&search).is_empty(), "searching the trash");
        assert!(
            said_by_get(&fields("s=delete+account&filter_action=Filter", "")).is_empty(),
            "a value searched"
        );
        assert!(said_by_get(&fields("remove_filter=1", "")).is_empty(), "a filter is no data");
        let role = said_by_get(&fields("users%5B%5D=5&new_role=administrator&changeit=Alterar", ""));
        assert_eq!(role.iter().map(|s| s.kind).collect::<Vec<_>>(), [Kind::Sharing]);
    }

    #[test]
    fn drafts_are_saves() {
        assert!(is_draft(&fields("_draft=1&_to=a", "")));
        assert!(is_draft(&fields(r#"{"posts":[{"status":"draft"}]}"#, "")));
        assert!(!is_draft(&fields("_draft=&_to=a", "")));
        assert!(!is_draft(&fields(r#"{"status":"published"}"#, "")));
    }
}
