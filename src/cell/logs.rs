//! A cell's logs on their way to the host: redacted and made terminal-safe before a byte is
//! written, capped per stream, and watched for the exit record the cell's init prints when the
//! program ends (which is how the runner learns that a holding cell's program is done).
//! Only init can write a record: it relays the program's output with the record separator
//! escaped (`mc-cell init`), and the program cannot reach init's own descriptors.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use serde::Deserialize;
use tokio::io::AsyncWriteExt;
use tokio::sync::oneshot;

use crate::redact::{Redactor, StreamRedactor};
use crate::runtime::{LogChunk, RuntimeError};
use crate::sanitize::TerminalStream;

/// Largest log kept per stream; the rest is dropped with a marker.
pub const LOG_CAP_BYTES: u64 = 64 << 20;
pub use crate::runtime::names::EXIT_RECORD;

/// How the program ended, as the cell's init saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct ExitRecord {
    /// Exit code, when it exited.
    pub code: Option<i64>,
    /// Signal, when one killed it.
    pub signal: Option<i64>,
    /// Init killed it at its timeout.
    pub timed_out: bool,
    /// The cell's memory limit killed one of its processes.
    #[serde(default)]
    pub oom: bool,
}

/// Streams a cell's output into its two log files; the returned receiver gets the exit record
/// once init prints it. `spend`, when given, reads stdout as it arrives (budgets).
pub fn pump(
    stream: BoxStream<'static, Result<LogChunk, RuntimeError>>,
    (stdout, stderr): (PathBuf, PathBuf),
    redactor: Arc<Redactor>,
    spend: Option<Arc<super::budget::CellSpend>>,
) -> (
    tokio::task::JoinHandle<std::io::Result<()>>,
    oneshot::Receiver<ExitRecord>,
) {
    let (sender, receiver) = oneshot::channel();
    let task = tokio::spawn(run_pump(stream, (stdout, stderr), redactor, sender, spend));
    (task, receiver)
}

async fn run_pump(
    mut stream: BoxStream<'static, Result<LogChunk, RuntimeError>>,
    (stdout, stderr): (PathBuf, PathBuf),
    redactor: Arc<Redactor>,
    sender: oneshot::Sender<ExitRecord>,
    spend: Option<Arc<super::budget::CellSpend>>,
) -> std::io::Result<()> {
    let mut out = SafeLog::create(&stdout, &redactor).await?;
    let mut err = SafeLog::create(&stderr, &redactor).await?;
    let mut watch = RecordWatch::default();
    let mut sender = Some(sender);
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(LogChunk::Stdout(bytes)) => {
                let (text, record) = watch.push(&bytes);
                if let Some(spend) = &spend {
                    spend.push(&text);
                }
                out.write(&text).await?;
                if let Some(record) = record
                    && let Some(sender) = sender.take()
                {
                    let _ = sender.send(record);
                }
            }
            Ok(LogChunk::Stderr(bytes)) => err.write(&bytes).await?,
            Err(e) => {
                err.write(format!("\n[multicooker: log stream failed: {e}]\n").as_bytes())
                    .await?;
                break;
            }
        }
    }
    let rest = watch.finish();
    if let Some(spend) = &spend {
        spend.push(&rest);
        spend.finish();
    }
    out.write(&rest).await?;
    out.finish().await?;
    err.finish().await
}

/// Longest record init prints; a "record" longer than this is passed on as text.
const RECORD_MAX: usize = 4096;

/// Finds the exit record in stdout and keeps it out of the log. Never goes silent: whatever is
/// not the first well-formed record (a half record, binary, anything after the record) is
/// passed on as text, and at most [`RECORD_MAX`] bytes are held back.
#[derive(Debug, Default)]
struct RecordWatch {
    pending: Vec<u8>,
    in_record: bool,
    done: bool,
}

impl RecordWatch {
    /// Log bytes that can be written now, and the record once complete.
    fn push(&mut self, chunk: &[u8]) -> (Vec<u8>, Option<ExitRecord>) {
        if self.done {
            return (chunk.to_vec(), None);
        }
        self.pending.extend_from_slice(chunk);
        let marker = EXIT_RECORD.as_bytes();
        if !self.in_record {
            if let Some(at) = find(&self.pending, marker) {
                let mut text = self.pending[..at].to_vec();
                self.pending.drain(..at + marker.len());
                self.in_record = true;
                let (more, record) = self.push(&[]);
                text.extend(more);
                return (text, record);
            }
            // Keep back a tail that may be the start of the marker.
            let keep = (1..marker.len())
                .rev()
                .find(|n| self.pending.ends_with(&marker[..*n]))
                .unwrap_or(0);
            let cut = self.pending.len() - keep;
            return (self.pending.drain(..cut).collect(), None);
        }
        let Some(end) = self.pending.iter().position(|b| *b == b'\n') else {
            if self.pending.len() <= RECORD_MAX {
                return (Vec::new(), None);
            }
            // Not a record init wrote: it is text, and the watch goes on.
            self.in_record = false;
            let mut text = marker.to_vec();
            text.append(&mut self.pending);
            return (text, None);
        };
        let record = serde_json::from_slice::<ExitRecord>(&self.pending[..end]).ok();
        self.in_record = false;
        let line: Vec<u8> = self.pending.drain(..=end).collect();
        if record.is_some() {
            self.done = true;
            return (std::mem::take(&mut self.pending), record);
        }
        let mut text = marker.to_vec();
        text.extend(line);
        let (more, record) = self.push(&[]);
        text.extend(more);
        (text, record)
    }

    fn finish(&mut self) -> Vec<u8> {
        let mut text = Vec::new();
        if self.in_record {
            text.extend_from_slice(EXIT_RECORD.as_bytes());
        }
        text.append(&mut self.pending);
        text
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// One log file: redacted, terminal-safe, capped.
pub struct SafeLog {
    file: tokio::fs::File,
    written: u64,
    cap: u64,
    redact: StreamRedactor,
    terminal: TerminalStream,
}

impl SafeLog {
    /// Creates (truncates) the log at `path`.
    pub async fn create(path: &Path, redactor: &Redactor) -> std::io::Result<Self> {
        Self::with_cap(path, redactor, LOG_CAP_BYTES).await
    }

    /// Creates (truncates) the log at `path`, keeping at most `cap` bytes.
    pub async fn with_cap(path: &Path, redactor: &Redactor, cap: u64) -> std::io::Result<Self> {
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await?;
        }
        Ok(Self {
            file: tokio::fs::File::create(path).await?,
            written: 0,
            cap,
            redact: redactor.stream(),
            terminal: TerminalStream::default(),
        })
    }

    /// Appends a chunk of the cell's output.
    pub async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let clean = self.redact.push(bytes);
        let text = self.terminal.push(&clean);
        self.append(text.as_bytes()).await
    }

    /// Writes what the redactor and the decoder held back, and flushes.
    pub async fn finish(&mut self) -> std::io::Result<()> {
        let rest = self.redact.finish();
        let mut text = self.terminal.push(&rest);
        text.push_str(&self.terminal.finish());
        self.append(text.as_bytes()).await?;
        self.file.flush().await
    }

    async fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.written >= self.cap || bytes.is_empty() {
            return Ok(());
        }
        let room = usize::try_from(self.cap - self.written).unwrap_or(usize::MAX);
        let part = &bytes[..bytes.len().min(room)];
        self.file.write_all(part).await?;
        self.written += part.len() as u64;
        if self.written >= self.cap {
            self.file
                .write_all(b"\n[multicooker: log truncated at the cap]\n")
                .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_record_is_found_across_chunks_and_kept_out_of_the_log() {
        let text = format!(
            "hello\n{EXIT_RECORD}{{\"code\":3,\"signal\":null,\"timed_out\":false}}\nafter"
        );
        let bytes = text.as_bytes();
        for split in 0..bytes.len() {
            let mut watch = RecordWatch::default();
            let (mut log, first) = watch.push(&bytes[..split]);
            let (more, second) = watch.push(&bytes[split..]);
            log.extend(more);
            log.extend(watch.finish());
            assert_eq!(
                String::from_utf8(log).unwrap(),
                "hello\nafter",
                "split at {split}"
            );
            let record = first.or(second).expect("the record is found");
            assert_eq!((record.code, record.timed_out), (Some(3), false));
        }
    }

    /// Regression (issue "The cell boundary"): proxy.log had no cap (169 MB in 3 minutes of
    /// denied CONNECTs); every cell log, the proxy's included, is a capped, safe log.
    #[tokio::test]
    async fn a_log_stops_at_its_cap_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("proxy.log");
        let mut log = SafeLog::with_cap(&path, &Redactor::new(&[]), 1000)
            .await
            .unwrap();
        for _ in 0..100 {
            log.write(b"deny 10.0.0.2:4242: CONNECT evil.example:443 not in allowlist\x1b[2J\n")
                .await
                .unwrap();
        }
        log.finish().await.unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.len() < 1100, "{}", text.len());
        assert!(text.ends_with("[multicooker: log truncated at the cap]\n"));
        assert!(!text.contains('\u{1b}') && text.contains("^[[2J"));
    }

    /// Regression (issue 21): a half record over 16 KiB without a newline made the reader give
    /// up for good (the cell's later usage lines were never counted, its log was empty).
    #[test]
    fn a_half_record_or_binary_garbage_never_silences_the_reader() {
        let mut watch = RecordWatch::default();
        let mut log = Vec::new();
        let half = format!(
            "{EXIT_RECORD}{{\"code\":0,\"pad\":\"{}",
            "q".repeat(20 << 10)
        );
        for piece in half.as_bytes().chunks(1000) {
            let (text, record) = watch.push(piece);
            assert!(record.is_none());
            log.extend(text);
            assert!(watch.pending.len() <= RECORD_MAX + 1000, "bounded");
        }
        let (text, _) = watch.push(b"\x00\xff\xfe garbage\n");
        log.extend(text);
        let usage = b"{\"type\":\"result\",\"usage\":{\"input_tokens\":5}}\n";
        let (text, _) = watch.push(usage);
        log.extend(text);
        let real = format!("{EXIT_RECORD}{{\"code\":3,\"signal\":null,\"timed_out\":false}}\nlate");
        let (text, record) = watch.push(real.as_bytes());
        log.extend(text);
        log.extend(watch.finish());
        assert_eq!(record.map(|r| r.code), Some(Some(3)));
        let log = String::from_utf8_lossy(&log);
        assert!(
            log.ends_with("\"input_tokens\":5}}\nlate"),
            "{}",
            &log[log.len() - 100..]
        );
        assert!(log.contains("garbage"));
        assert_eq!(log.matches('q').count(), 20 << 10);
    }

    #[test]
    fn a_malformed_record_is_text_and_the_real_one_still_counts() {
        let mut watch = RecordWatch::default();
        let text = format!(
            "{EXIT_RECORD}not json\n{EXIT_RECORD}{{\"code\":1,\"signal\":null,\"timed_out\":true}}\n"
        );
        let (log, record) = watch.push(text.as_bytes());
        assert_eq!(record.map(|r| (r.code, r.timed_out)), Some((Some(1), true)));
        assert!(String::from_utf8_lossy(&log).contains("not json"));
    }

    #[test]
    fn output_without_a_record_is_kept_whole() {
        let mut watch = RecordWatch::default();
        let (mut log, record) = watch.push("ends with \u{1e}[mc".as_bytes());
        log.extend(watch.finish());
        assert!(record.is_none());
        assert_eq!(String::from_utf8(log).unwrap(), "ends with \u{1e}[mc");
    }
}
