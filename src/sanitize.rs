//! Text from a cell made safe for a terminal: control characters (escape sequences, carriage
//! returns, bells, C1 controls) are shown, never obeyed, so a cell cannot forge a line of
//! multicooker's output, set the terminal's title or hide text. Bidirectional overrides and
//! isolates (which reorder what a reader sees, e.g. a file name that reads as another) are shown
//! as `<U+202E>`. Used on every byte of a cell that is logged or printed.
//!
//! [`fenced`] makes a cell's multi-line text (a judge's review) inert in markdown: a fenced
//! block whose fence is longer than any backtick run inside, so it can neither close the fence
//! nor render (images, links, HTML).

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
    c.is_control() && c != '\n' && c != '\t' || is_bidi(c)
}

/// Bidirectional marks, embeddings, overrides and isolates.
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_safe(out: &mut String, c: char) {
    match c {
        c if !is_unsafe(c) => out.push(c),
        c if is_bidi(c) => out.push_str(&format!("<U+{:04X}>", c as u32)),
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

/// A name a cell chose (a file name) for one terminal line: like [`terminal_safe`], with
/// newlines and tabs shown too (`^J`, `^I`), so it cannot start a forged line.
pub fn one_line(text: &str) -> String {
    terminal_safe(&text.replace('\n', "^J").replace('\t', "^I")).into_owned()
}

/// A cell's multi-line text as an inert markdown block: terminal-safe, inside a fence of
/// backticks longer than any backtick run in it (at least three).
pub fn fenced(text: &str) -> String {
    let safe = terminal_safe(text);
    let longest = safe.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{}\n{fence}", safe.trim_end_matches('\n'))
}

/// A short text a cell chose (a label, a file name, a key) as an inline markdown code span on
/// one line: terminal-safe, its fence longer than any backtick run inside, so it renders as
/// nothing but text.
pub fn code(text: &str) -> String {
    let safe = terminal_safe(&text.replace(['\n', '\r'], " ")).into_owned();
    let longest = safe.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if safe.starts_with('`') || safe.ends_with('`') || safe.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{safe}{pad}{fence}")
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
        assert_eq!(
            terminal_safe("invoice\u{202e}fdp.exe \u{2066}x\u{2069}"),
            "invoice<U+202E>fdp.exe <U+2066>x<U+2069>"
        );
    }

    /// A review that opens a fence of its own, or holds longer backtick runs, stays inside ours.
    #[test]
    fn a_fenced_block_outlasts_every_backtick_run_inside() {
        let review = "fine\n```\nunclosed ![b](http://evil.example/x.png) <img src=x onerror=alert(1)>\n`````x\r[mc] ok\x1b[2J";
        let block = fenced(review);
        assert!(block.starts_with("``````text\n"), "{block}");
        assert!(block.ends_with("\n``````"), "{block}");
        assert!(block.contains("x^M[mc] ok^[[2J"), "{block}");
        assert_eq!(fenced("plain"), "```text\nplain\n```");
        assert_eq!(one_line("a\n[mc] ok\r\u{202e}"), "a^J[mc] ok^M<U+202E>");
        assert_eq!(code("A"), "`A`");
        assert_eq!(code("x`](http://e/)"), "``x`](http://e/)``");
        assert_eq!(code("`a\nb\u{1b}`"), "`` `a b^[` ``");
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
