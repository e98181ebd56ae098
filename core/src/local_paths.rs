//! Paths on the user's disk, read as text (the core does no IO): absolute only, no `.` or `..`
//! component, no control character. Both separators count (`\` is Windows's, and reading it as
//! one on Unix only refuses more). A path is within a directory when the directory's
//! components start the path's.

/// An absolute path: its root (`/`, or a drive such as `c:`) and its components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalPath {
    root: String,
    components: Vec<String>,
}

impl LocalPath {
    /// Reads `text` as an absolute path, or says why it is not one the rules take.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.chars().any(char::is_control) {
            return Err(format!("{text:?} holds a control character"));
        }
        let bytes = text.as_bytes();
        let (root, rest) = if text.starts_with('/') {
            (String::new(), text)
        } else if bytes.len() >= 3
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && matches!(bytes[2], b'/' | b'\\')
        {
            (text[..2].to_ascii_lowercase(), &text[2..])
        } else {
            return Err(format!("{text:?} is not an absolute path"));
        };
        let mut components = Vec::new();
        for part in rest.split(['/', '\\']).filter(|p| !p.is_empty()) {
            if part == "." || part == ".." {
                return Err(format!("{text:?} has a {part:?} component"));
            }
            components.push(part.to_owned());
        }
        Ok(LocalPath { root, components })
    }

    /// A filesystem's root (`/`, `C:\`): a directory that would hold every file.
    pub fn is_root(&self) -> bool {
        self.components.is_empty()
    }

    /// Whether this path is `dir` or lies under it, component by component.
    pub fn is_within(&self, dir: &LocalPath) -> bool {
        self.root == dir.root
            && self.components.len() >= dir.components.len()
            && self.components.iter().zip(&dir.components).all(|(a, b)| a == b)
    }

    /// The same, ASCII case ignored: for the directories that are never given, since macOS's
    /// and Windows's filesystems ignore case (a rule that refuses must not be fooled by it).
    pub fn is_within_any_case(&self, dir: &LocalPath) -> bool {
        self.root.eq_ignore_ascii_case(&dir.root)
            && self.components.len() >= dir.components.len()
            && self.components.iter().zip(&dir.components).all(|(a, b)| a.eq_ignore_ascii_case(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> LocalPath {
        LocalPath::parse(text).unwrap()
    }

    #[test]
    fn absolute_paths_are_read_by_component() {
        let dir = path("/home/me/agent-uploads");
        assert!(path("/home/me/agent-uploads/cv.pdf").is_within(&dir));
        assert!(path("//home///me/agent-uploads/sub/cv.pdf").is_within(&dir));
        assert!(path("/home/me/agent-uploads/").is_within(&dir));
        assert!(!path("/home/me/agent-uploads-2/cv.pdf").is_within(&dir), "a sibling sharing a prefix");
        assert!(!path("/home/me/cv.pdf").is_within(&dir));
        assert!(!path("/home/me/Agent-Uploads/cv.pdf").is_within(&dir), "case counts for what is given");
        assert!(path("/HOME/me/Agent-Uploads/cv.pdf").is_within_any_case(&dir));
        let windows = path(r"C:\Users\me\uploads");
        assert!(path(r"c:/Users\me\uploads\a.txt").is_within(&windows));
        assert!(!path(r"D:\Users\me\uploads\a.txt").is_within(&windows));
        assert!(path("/").is_root() && path(r"C:\").is_root() && !dir.is_root());
    }

    #[test]
    fn relative_dotted_and_odd_paths_are_refused() {
        for text in [
            "",
            "token",
            "./token",
            "~/.config/tabtunnel/token",
            "/home/me/agent-uploads/../.config/tabtunnel/token",
            "/home/me/agent-uploads/./cv.pdf",
            r"/home/me/agent-uploads/..\..\.config",
            r"C:..\x",
            "C:relative",
            r"\\server\share\x",
            r"\rooted-on-the-current-drive",
            "file:///etc/passwd",
            "/home/me/agent-uploads/a\u{0}b",
            "/home/me/agent-uploads/a\nb",
        ] {
            assert!(LocalPath::parse(text).is_err(), "{text:?}");
        }
    }
}
