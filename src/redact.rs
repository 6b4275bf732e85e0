//! Redaction of a run's secrets: every login string the run snapshotted is replaced by
//! `[REDACTED]` in the cells' logs (live and once more when the cell ends) and in everything
//! the cells wrote to their writable mounts, before anything is sealed. The secrets are compiled
//! once per run into one matcher.
//!
//! A cell that wants a login out encodes it first, so each secret is matched in its common
//! encodings too ([`encodings`]): standard base64 and base64url at each of the three alignments
//! it can have inside a longer encoded text (the characters that depend on that secret's bytes
//! alone), hex in both cases and URL-encoding (percent escapes in both cases). What a cell
//! could still do (encrypt, split, reverse) no pattern can catch: logins are kept out of cells
//! that do not need them, and each cell gets only its own.

use std::borrow::Cow;
use std::io::{self, Read as _};
use std::path::Path;

use regex::bytes::Regex;
use serde::Serialize;

/// What replaces a secret.
const MARK: &[u8] = b"[REDACTED]";
/// Largest file [`Redactor::tree`] rewrites in memory; a larger file holding a secret is removed.
pub const IN_MEMORY_BYTES: u64 = 256 << 20;

/// What [`Redactor::tree`] did to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redaction {
    /// Path relative to the tree.
    pub path: String,
    /// `redacted` (secrets replaced by `[REDACTED]`) or `removed` (too large to rewrite).
    pub action: &'static str,
}

/// The secrets of one run, compiled.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// `None` when there is nothing to redact.
    regex: Option<Regex>,
    /// Length of the longest secret (the overlap a streaming scan needs).
    longest: usize,
}

impl Redactor {
    /// A redactor for these secrets (empty strings are ignored).
    pub fn new(secrets: &[String]) -> Self {
        let mut secrets: Vec<String> = secrets
            .iter()
            .filter(|s| !s.is_empty())
            .flat_map(|s| std::iter::once(s.clone()).chain(encodings(s)))
            .collect();
        secrets.sort();
        secrets.dedup();
        // Longest first: where one secret begins another, the whole of the longer one goes.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let pattern = secrets
            .iter()
            .map(|s| regex::escape(s))
            .collect::<Vec<_>>()
            .join("|");
        Self {
            regex: (!secrets.is_empty())
                .then(|| Regex::new(&pattern).expect("escaped literals form a valid regex")),
            longest: secrets.iter().map(String::len).max().unwrap_or(0),
        }
    }

    /// `bytes` with every secret replaced.
    pub fn bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        match &self.regex {
            Some(regex) => regex.replace_all(bytes, MARK),
            None => Cow::Borrowed(bytes),
        }
    }

    /// A redactor for a stream of chunks (a log, a collected file): a secret split across two
    /// chunks is still caught, and nothing is held back longer than the longest secret.
    pub fn stream(&self) -> StreamRedactor {
        StreamRedactor {
            regex: self.regex.clone(),
            keep: self.longest.saturating_sub(1),
            pending: Vec::new(),
            replaced: false,
        }
    }

    /// Redacts a finished log file in place (a secret split across two stream chunks escapes
    /// the live pass, never this one).
    pub fn file(&self, path: &Path) {
        if self.regex.is_none() {
            return;
        }
        if let Ok(bytes) = std::fs::read(path)
            && let Cow::Owned(cleaned) = self.bytes(&bytes)
        {
            let _ = crate::fsx::write_atomic(path, &cleaned);
        }
    }

    /// Redacts the regular files under `dir` (links are never followed), so a cell that wrote
    /// a credential into its output cannot carry it out.
    pub fn tree(&self, dir: &Path) -> Vec<Redaction> {
        let Some(regex) = &self.regex else {
            return Vec::new();
        };
        let mut done = Vec::new();
        for entry in walkdir::WalkDir::new(dir)
            .follow_links(false)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
        {
            let path = entry.path();
            let relative = path
                .strip_prefix(dir)
                .unwrap_or(path)
                .to_string_lossy()
                .into_owned();
            let size = entry.metadata().map_or(0, |m| m.len());
            let action = if size <= IN_MEMORY_BYTES {
                let Ok(bytes) = std::fs::read(path) else {
                    continue;
                };
                match self.bytes(&bytes) {
                    Cow::Owned(cleaned) if crate::fsx::write_atomic(path, &cleaned).is_ok() => {
                        "redacted"
                    }
                    _ => continue,
                }
            } else if holds_match(path, regex, self.longest).unwrap_or(true)
                && std::fs::remove_file(path).is_ok()
            {
                "removed"
            } else {
                continue;
            };
            done.push(Redaction {
                path: relative,
                action,
            });
        }
        done
    }
}

/// A string shaped like a credential in a cell's output: not one of the run's own secrets
/// (those are redacted), but reported so the operator looks before publishing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenShape {
    /// Path relative to the scanned folder.
    pub path: String,
    /// Which shape: `anthropic`, `openai`, `xai`, `google_oauth`, `github`, `aws_key`, `jwt`,
    /// `private_key`.
    pub kind: &'static str,
}

/// Files larger than this are not scanned for token shapes.
const SHAPE_SCAN_BYTES: u64 = 4 << 20;

static SHAPES: std::sync::LazyLock<Vec<(&'static str, Regex)>> = std::sync::LazyLock::new(|| {
    [
        ("anthropic", r"sk-ant-[A-Za-z0-9_-]{20,}"),
        (
            "openai",
            r"sk-(?:proj-|svcacct-)[A-Za-z0-9_-]{32,}|sk-[A-Za-z0-9]{40,}",
        ),
        ("xai", r"xai-[A-Za-z0-9]{32,}"),
        ("google_oauth", r"ya29\.[A-Za-z0-9_-]{20,}"),
        ("github", r"gh[pousr]_[A-Za-z0-9]{36}"),
        ("aws_key", r"AKIA[0-9A-Z]{16}"),
        (
            "jwt",
            r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        ),
        ("private_key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    ]
    .into_iter()
    .map(|(kind, pattern)| (kind, Regex::new(pattern).expect("a valid pattern")))
    .collect()
});

/// The token-shaped strings in the regular files under `dir` (links never followed; files up
/// to 4 MiB), one entry per file and shape.
pub fn token_shapes(dir: &Path) -> Vec<TokenShape> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| e.metadata().is_ok_and(|m| m.len() <= SHAPE_SCAN_BYTES))
    {
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        let path = entry
            .path()
            .strip_prefix(dir)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        for (kind, shape) in SHAPES.iter() {
            if shape.is_match(&bytes) {
                found.push(TokenShape {
                    path: path.clone(),
                    kind,
                });
            }
        }
    }
    found
}

/// Secrets shorter than this are matched literally only: a fragment of a few encoded characters
/// would also match unrelated text.
const MIN_ENCODED_BYTES: usize = 8;

/// The forms `secret` takes when encoded: base64 and base64url at the three alignments, hex
/// (lower and upper case), URL-encoding (RFC 3986's, and with everything but letters and digits
/// escaped; upper- and lower-case escapes; when it changes the text).
pub fn encodings(secret: &str) -> Vec<String> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let bytes = secret.as_bytes();
    if bytes.len() < MIN_ENCODED_BYTES {
        return Vec::new();
    }
    let mut forms = Vec::new();
    for offset in 0..3 {
        let mut padded = vec![0u8; offset];
        padded.extend_from_slice(bytes);
        // Characters whose six bits lie inside the secret's bytes only.
        let first = (8 * offset).div_ceil(6);
        let last = 8 * (offset + bytes.len()) / 6;
        for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&padded);
            forms.push(encoded[first..last].to_owned());
        }
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    forms.push(hex.to_ascii_uppercase());
    forms.push(hex);
    // RFC 3986 (unreserved characters kept), and every character but letters and digits
    // escaped (as some encoders do).
    for keep in [&b"-._~"[..], &b""[..]] {
        let escaped: String = bytes
            .iter()
            .map(|&b| {
                if b.is_ascii_alphanumeric() || keep.contains(&b) {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        if escaped != secret {
            forms.push(lower_escapes(&escaped));
            forms.push(escaped);
        }
    }
    forms
}

/// `%2F` → `%2f`: the escapes of a URL-encoded text in lower case.
fn lower_escapes(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let (escape, tail) = rest[at..].split_at(3.min(rest.len() - at));
        out.push_str(&escape.to_ascii_lowercase());
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Redacts a stream chunk by chunk; see [`Redactor::stream`].
#[derive(Debug)]
pub struct StreamRedactor {
    regex: Option<Regex>,
    /// Bytes held back: one less than the longest secret.
    keep: usize,
    pending: Vec<u8>,
    replaced: bool,
}

impl StreamRedactor {
    /// Takes the next chunk and returns what can be written now, redacted.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        let Some(regex) = &self.regex else {
            return chunk.to_vec();
        };
        self.pending.extend_from_slice(chunk);
        // A match starting before `safe` is complete: every secret fits in what is pending.
        let safe = self.pending.len().saturating_sub(self.keep);
        let mut out = Vec::with_capacity(safe);
        let mut last = 0;
        for found in regex.find_iter(&self.pending) {
            if found.start() >= safe {
                break;
            }
            out.extend_from_slice(&self.pending[last..found.start()]);
            out.extend_from_slice(MARK);
            last = found.end();
            self.replaced = true;
        }
        let cut = safe.max(last);
        out.extend_from_slice(&self.pending[last..cut]);
        self.pending.drain(..cut);
        out
    }

    /// What is still held back, redacted: call once at the end of the stream.
    pub fn finish(&mut self) -> Vec<u8> {
        let pending = std::mem::take(&mut self.pending);
        match &self.regex {
            Some(regex) => {
                let cleaned = regex.replace_all(&pending, MARK);
                if let Cow::Owned(_) = cleaned {
                    self.replaced = true;
                }
                cleaned.into_owned()
            }
            None => pending,
        }
    }

    /// A secret was replaced so far.
    pub fn replaced(&self) -> bool {
        self.replaced
    }
}

/// Streams a large file looking for a match (chunks overlap by the longest secret).
fn holds_match(path: &Path, regex: &Regex, longest: usize) -> io::Result<bool> {
    let mut file = std::fs::File::open(path)?;
    let mut buffer = vec![0u8; 8 << 20];
    let mut carried = 0;
    loop {
        let read = file.read(&mut buffer[carried..])?;
        if read == 0 {
            return Ok(false);
        }
        let filled = carried + read;
        if regex.is_match(&buffer[..filled]) {
            return Ok(true);
        }
        carried = longest.saturating_sub(1).min(filled);
        buffer.copy_within(filled - carried..filled, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_split_across_chunks_is_redacted_at_every_split() {
        let secrets = ["sk-secret-123456".to_owned(), "sk-secret".to_owned()];
        let redactor = Redactor::new(&secrets);
        let text = b"a sk-secret-123456 b sk-secret c sk-secret-123456";
        for split in 0..text.len() {
            for second in split..text.len() {
                let mut stream = redactor.stream();
                let mut out = stream.push(&text[..split]);
                out.extend(stream.push(&text[split..second]));
                out.extend(stream.push(&text[second..]));
                out.extend(stream.finish());
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    "a [REDACTED] b [REDACTED] c [REDACTED]",
                    "split at {split} and {second}"
                );
                assert!(stream.replaced());
            }
        }
        let mut plain = Redactor::new(&[]).stream();
        assert_eq!(plain.push(b"abc"), b"abc");
        assert!(plain.finish().is_empty() && !plain.replaced());
    }

    fn redact_tree(dir: &Path, secrets: &[String]) -> Vec<Redaction> {
        Redactor::new(secrets).tree(dir)
    }

    #[test]
    fn secrets_in_outputs_are_redacted_and_links_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("host.txt"), "sk-secret-123456").unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("sub/notes.md"),
            "token sk-secret-123456 here",
        )
        .unwrap();
        std::fs::write(dir.path().join("clean.md"), "nothing").unwrap();
        std::os::unix::fs::symlink(outside.path().join("host.txt"), dir.path().join("link"))
            .unwrap();
        let done = redact_tree(dir.path(), &["sk-secret-123456".to_owned()]);
        assert_eq!(
            done,
            [Redaction {
                path: "sub/notes.md".into(),
                action: "redacted"
            }]
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/notes.md")).unwrap(),
            "token [REDACTED] here"
        );
        assert_eq!(
            std::fs::read_to_string(outside.path().join("host.txt")).unwrap(),
            "sk-secret-123456"
        );
    }

    #[test]
    fn a_secret_across_a_chunk_boundary_is_found_in_a_large_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.bin");
        let mut bytes = vec![b'x'; (8 << 20) - 5];
        bytes.extend_from_slice(b"sk-secret-123456");
        bytes.extend(vec![b'y'; 100]);
        std::fs::write(&path, &bytes).unwrap();
        let regex = regex::bytes::Regex::new("sk-secret-123456").unwrap();
        assert!(holds_match(&path, &regex, 16).unwrap());
        std::fs::write(&path, vec![b'x'; 9 << 20]).unwrap();
        assert!(!holds_match(&path, &regex, 16).unwrap());
    }

    /// A secret written base64 (at every offset inside a longer text, padded or not),
    /// base64url, hex in either case or URL-encoded is redacted like the secret itself, and no
    /// encoded form of it is left.
    #[test]
    fn a_secret_is_redacted_in_its_common_encodings() {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        let secret = "sk-ant-oat01-Zq9/+x~y&z=1 tok".to_owned();
        let redactor = Redactor::new(std::slice::from_ref(&secret));
        let mut leaks = Vec::new();
        for prefix in ["", "a", "ab", "abc", "abcd"] {
            let payload = format!("{prefix}{secret}tail");
            leaks.push(STANDARD.encode(&payload));
            leaks.push(URL_SAFE_NO_PAD.encode(&payload));
        }
        let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
        leaks.push(format!("0x{hex}!"));
        leaks.push(hex.to_ascii_uppercase());
        leaks.push("sk%2Dant%2Doat01%2DZq9%2F%2Bx%7Ey%26z%3D1%20tok".into());
        let url = "sk-ant-oat01-Zq9%2F%2Bx~y%26z%3D1%20tok";
        leaks.push(format!("https://evil.example/?t={url}"));
        leaks.push(
            url.to_ascii_lowercase()
                .replace("sk-ant-oat01-zq9", "sk-ant-oat01-Zq9"),
        );
        for leak in &leaks {
            let cleaned = redactor.bytes(leak.as_bytes());
            assert!(
                matches!(cleaned, Cow::Owned(_)) && cleaned.windows(10).any(|w| w == MARK),
                "not caught: {leak}"
            );
            for form in encodings(&secret) {
                let left = String::from_utf8_lossy(&cleaned);
                assert!(!left.contains(&form), "{form} left in {left}");
            }
        }
        // A streamed copy catches them too, across chunk boundaries.
        let text = leaks.join("\n");
        let mut stream = redactor.stream();
        let mut out = Vec::new();
        for chunk in text.as_bytes().chunks(7) {
            out.extend(stream.push(chunk));
        }
        out.extend(stream.finish());
        assert_eq!(out, redactor.bytes(text.as_bytes()).as_ref());
        // Short secrets are matched literally only: "abc" in hex is everywhere.
        assert!(encodings("abc").is_empty());
        assert_eq!(
            Redactor::new(&["abc".into()]).bytes(b"616263").as_ref(),
            b"616263"
        );
    }

    /// Credentials that are no secret of this run are flagged by shape, with their file.
    #[test]
    fn token_shaped_strings_in_outputs_are_flagged() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/config.py"),
            "KEY = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345'\nAWS = 'AKIAABCDEFGHIJKLMNOP'\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("notes.md"),
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        )
        .unwrap();
        std::fs::write(dir.path().join("clean.md"), "sk-ant is a prefix; AKIA too").unwrap();
        let found: Vec<(String, &str)> = token_shapes(dir.path())
            .into_iter()
            .map(|t| (t.path, t.kind))
            .collect();
        assert_eq!(
            found,
            [
                ("notes.md".to_owned(), "jwt"),
                ("src/config.py".to_owned(), "anthropic"),
                ("src/config.py".to_owned(), "aws_key"),
            ]
        );
    }
}
