//! The frames the core hands the shell for a client, and the extension's answers as the core
//! gets them. An answer the core passes on unchanged (most are) keeps the extension's own bytes:
//! the client frame is a head and a tail the core writes around them, which the shell writes as
//! three pieces, so a 64 MiB result is never copied on its way through the daemon.

use std::borrow::Cow;

use bytes::Bytes;

use crate::frames;

/// One text frame for a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientFrame {
    Whole(String),
    /// Boxed: a queue of small frames pays for a pointer, not three fields, per slot.
    Around(Box<Around>),
}

/// `head`, then the result exactly as the extension sent it, then `tail`: one frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Around {
    pub head: String,
    pub body: Bytes,
    pub tail: String,
}

impl ClientFrame {
    /// Its length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Self::Whole(text) => text.len(),
            Self::Around(around) => around.head.len() + around.body.len() + around.tail.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frame as one text (a copy, for an `Around` one: for tests and the rare caller that
    /// needs the whole, never the socket writer).
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Self::Whole(text) => Cow::Borrowed(text),
            Self::Around(around) => {
                let mut whole = String::with_capacity(self.len());
                whole.push_str(&around.head);
                whole.push_str(
                    std::str::from_utf8(&around.body).expect("a result is the text of a UTF-8 message"),
                );
                whole.push_str(&around.tail);
                Cow::Owned(whole)
            }
        }
    }

    pub fn into_text(self) -> String {
        match self {
            Self::Whole(text) => text,
            around => around.text().into_owned(),
        }
    }
}

impl From<String> for ClientFrame {
    fn from(text: String) -> Self {
        Self::Whole(text)
    }
}

/// A command's result as the extension sent it: its text, and, when the shell has the message
/// it came in as shared bytes, those same bytes (so passing it on costs a reference, not a copy).
#[derive(Debug, Clone, Copy)]
pub struct ResultText<'a> {
    text: &'a str,
    shared: Option<&'a Bytes>,
}

impl<'a> ResultText<'a> {
    /// A result only borrowed: passed on, it is copied.
    pub fn borrowed(text: &'a str) -> Self {
        Self { text, shared: None }
    }

    /// A result that is `message`'s own bytes, all of them (the shell slices the message it
    /// received to the result first).
    ///
    /// # Panics
    /// If `message` does not hold exactly `text`'s bytes.
    pub fn shared(text: &'a str, message: &'a Bytes) -> Self {
        assert!(
            message.as_ptr() == text.as_ptr() && message.len() == text.len(),
            "the shared bytes are the result's own"
        );
        Self { text, shared: Some(message) }
    }

    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// The answer `{"id":N,"result":<this>[,"sessionId":S]}`: around the shared bytes when
    /// there are some, else written whole.
    pub(crate) fn response(&self, id: i64, session_id: &str) -> ClientFrame {
        match self.shared {
            Some(body) => {
                let (head, tail) = frames::response_parts(id, session_id);
                ClientFrame::Around(Box::new(Around { head, body: body.clone(), tail }))
            }
            None => ClientFrame::Whole(frames::response(id, session_id, self.text)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Harness;
    use serde_json::json;

    #[test]
    fn a_shared_result_is_answered_around_its_own_bytes_and_a_borrowed_one_is_copied() {
        let message = Bytes::from_static(br#"{"value":"\u00e9t\u00e9 ok"}"#);
        let text = std::str::from_utf8(&message).unwrap();
        let shared = ResultText::shared(text, &message).response(7, "S1");
        let ClientFrame::Around(around) = &shared else { panic!("copied: {shared:?}") };
        assert_eq!(around.body.as_ptr(), message.as_ptr(), "the body is the message's own bytes");
        let borrowed = ResultText::borrowed(text).response(7, "S1");
        assert!(matches!(borrowed, ClientFrame::Whole(_)));
        assert_eq!(shared.text(), borrowed.text());
        assert_eq!(shared.len(), borrowed.len());
        assert_eq!(shared.into_text(), format!("{{\"id\":7,\"result\":{text},\"sessionId\":\"S1\"}}"));
        let root = ResultText::shared(text, &message).response(8, "");
        assert_eq!(root.into_text(), format!("{{\"id\":8,\"result\":{text}}}"));
    }

    #[test]
    fn an_answer_the_core_passes_on_unchanged_reaches_the_client_as_the_extensions_own_bytes() {
        let mut h = Harness::with_tabs(&[1]);
        h.connect(1);
        let (_, page) = h.puppeteer_attach(1, 1);
        let step = h.send(
            1,
            json!({"id": 10, "sessionId": page, "method": "Runtime.evaluate", "params": {"expression": "x"}}),
        );
        let frames = h.answer_shared(step.commands()[0].id, r#"{"result":{"type":"string","value":"big"}}"#);
        let [(1, ClientFrame::Around(around))] = &frames[..] else { panic!("{frames:?}") };
        assert_eq!(around.head, r#"{"id":10,"result":"#);
        assert_eq!(&around.body[..], br#"{"result":{"type":"string","value":"big"}}"#);
        assert_eq!(around.tail, format!(r#","sessionId":"{page}"}}"#));
    }

    #[test]
    #[should_panic(expected = "the shared bytes are the result's own")]
    fn bytes_that_are_not_the_result_are_refused() {
        let message = Bytes::from_static(b"{\"a\":1}{\"b\":2}");
        let first = std::str::from_utf8(&message[..7]).unwrap();
        ResultText::shared(first, &message);
    }
}
