//! Text from a cell made safe for a terminal: control characters (escape sequences, carriage
//! returns, bells, C1 controls) are shown, never obeyed, so a cell cannot forge a line of
//! multicooker's output, set the terminal's title or hide text. Used on every byte of a cell
//! that is logged or printed.

use std::borrow::Cow;

/// `text` with every control character but tab and newline replaced by a visible form
/// (`^[` for ESC, `^M` for a carriage return, U+FFFD for C1 controls).
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut safe = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_safe(&mut safe, c);
    }
    Cow::Owned(safe)
}

fn is_unsafe(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

fn push_safe(out: &mut String, c: char) {
    match c {
        c if !is_unsafe(c) => out.push(c),
        '\u{7f}' => out.push_str("^?"),
        c if (c as u32) < 0x20 => {
            out.push('^');
            out.push(char::from(u8::try_from(c as u32 + 0x40).unwrap_or(b'?')));
        }
        _ => out.push('\u{fffd}'),
    }
}

/// Sanitizes a byte stream chunk by chunk: a UTF-8 sequence split across chunks is kept whole,
/// invalid bytes become U+FFFD.
#[derive(Debug, Default)]
pub struct TerminalStream {
    pending: Vec<u8>,
}

impl TerminalStream {
    /// The safe text of what can be decoded so far.
    pub fn push(&mut self, chunk: &[u8]) -> String {
        self.pending.extend_from_slice(chunk);
        let mut out = String::with_capacity(self.pending.len());
        let mut consumed = 0;
        for piece in self.pending.utf8_chunks() {
            for c in piece.valid().chars() {
                push_safe(&mut out, c);
            }
            consumed += piece.valid().len();
            let invalid = piece.invalid();
            if invalid.is_empty() {
                continue;
            }
            // An incomplete sequence at the very end may complete with the next chunk.
            let at_end = consumed + invalid.len() == self.pending.len();
            if at_end && invalid.len() < 4 && invalid[0] >= 0xc0 {
                break;
            }
            out.push('\u{fffd}');
            consumed += invalid.len();
        }
        self.pending.drain(..consumed);
        out
    }

    /// What is left at the end of the stream.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        terminal_safe(&String::from_utf8_lossy(&rest)).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_carriage_returns_are_shown_not_obeyed() {
        let forged = "work\r\x1b[2K[mc] cook.finished all ok\x1b]0;pwned\x07\u{9b}31m";
        assert_eq!(
            terminal_safe(forged),
            "work^M^[[2K[mc] cook.finished all ok^[]0;pwned^G\u{fffd}31m"
        );
        assert!(matches!(terminal_safe("plain\ttext\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_stream_keeps_split_characters_whole() {
        let text = "é€😀\x1b!".as_bytes();
        for split in 0..text.len() {
            let mut stream = TerminalStream::default();
            let mut out = stream.push(&text[..split]);
            out.push_str(&stream.push(&text[split..]));
            out.push_str(&stream.finish());
            assert_eq!(out, "é€😀^[!", "split at {split}");
        }
        let mut stream = TerminalStream::default();
        assert_eq!(stream.push(b"a\xffb"), "a\u{fffd}b");
    }
}
