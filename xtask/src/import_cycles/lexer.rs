//! A small Rust lexer: enough tokens to find modules, items, `use` trees and paths. Comments
//! are dropped (so doc links are not imports); string literals are kept whole (a `#[path]` needs
//! them) and never searched for paths.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    Str(String),
    /// `::`
    PathSep,
    Punct(char),
}

pub fn lex(src: &str) -> Vec<Tok> {
    let s: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i = skip_block_comment(&s, i);
        } else if c == '"' {
            let (text, end) = quoted(&s, i + 1);
            out.push(Tok::Str(text));
            i = end;
        } else if let Some((text, end)) = prefixed_string(&s, i) {
            out.push(Tok::Str(text));
            i = end;
        } else if c == '\'' {
            i = char_or_lifetime(&s, i);
        } else if c == ':' && next == Some(':') {
            out.push(Tok::PathSep);
            i += 2;
        } else if c.is_ascii_digit() {
            while i < s.len() && (s[i].is_alphanumeric() || s[i] == '_') {
                i += 1;
            }
        } else if is_ident_start(c) {
            let start = if c == 'r' && next == Some('#') && s.get(i + 2).is_some_and(|&c| is_ident_start(c)) {
                i + 2
            } else {
                i
            };
            let mut end = start;
            while end < s.len() && is_ident_continue(s[end]) {
                end += 1;
            }
            out.push(Tok::Ident(s[start..end].iter().collect()));
            i = end;
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Block comments nest in Rust.
fn skip_block_comment(s: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < s.len() {
        if s[i] == '/' && s.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// The body of a `"..."` string starting after its opening quote, and the index after it.
fn quoted(s: &[char], mut i: usize) -> (String, usize) {
    let start = i;
    while i < s.len() && s[i] != '"' {
        i += if s[i] == '\\' { 2 } else { 1 };
    }
    let end = i.min(s.len());
    (s[start..end].iter().collect(), end + 1)
}

/// `b"..."`, `c"..."`, `r"..."`, `r#"..."#`, `br##"..."##`, ...
fn prefixed_string(s: &[char], i: usize) -> Option<(String, usize)> {
    let mut j = i;
    if matches!(s[j], 'b' | 'c') {
        j += 1;
    }
    let raw = s.get(j) == Some(&'r');
    if raw {
        j += 1;
    }
    if j == i {
        return None;
    }
    if !raw {
        return (s.get(j) == Some(&'"')).then(|| quoted(s, j + 1));
    }
    let hashes = s[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if s.get(j) != Some(&'"') {
        return None;
    }
    let start = j + 1;
    let mut k = start;
    while k < s.len() {
        if s[k] == '"' && s[k + 1..].iter().take(hashes).filter(|&&c| c == '#').count() == hashes {
            return Some((s[start..k].iter().collect(), k + 1 + hashes));
        }
        k += 1;
    }
    Some((s[start..].iter().collect(), s.len()))
}

/// `'a'`, `'\n'`, `'\u{1F600}'` are characters; `'a` and `'static` are lifetimes. Neither
/// matters here: skip both.
fn char_or_lifetime(s: &[char], i: usize) -> usize {
    if s.get(i + 1) == Some(&'\\') {
        let mut j = i + 2;
        while j < s.len() && s[j] != '\'' {
            j += 1;
        }
        return j + 1;
    }
    if s.get(i + 2) == Some(&'\'') {
        return i + 3;
    }
    let mut j = i + 1;
    while j < s.len() && is_ident_continue(s[j]) {
        j += 1;
    }
    j
}

#[cfg(test)]
mod tests {
    use super::{lex, Tok};

    fn idents(src: &str) -> Vec<String> {
        lex(src)
            .into_iter()
            .filter_map(|t| match t {
                Tok::Ident(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn comments_strings_chars_and_lifetimes_hide_no_code_and_fake_none() {
        let src = r####"
            // crate::a::B in a comment
            /* nested /* crate::c */ still comment */ real
            let s = "crate::d::E \" quote"; let r = r#"crate::f"#; let b = b"x";
            let c = '"'; let q = '\''; fn f<'a>(x: &'a str) {}
            let n = 1.5e3_f64; r#type
        "####;
        assert_eq!(
            idents(src),
            [
                "real", "let", "s", "let", "r", "let", "b", "let", "c", "let", "q", "fn", "f", "x", "str",
                "let", "n", "type"
            ]
        );
        assert!(lex(src).contains(&Tok::Str("crate::f".into())));
    }
}
