//! A cell's logs on their way to the host: redacted and made terminal-safe before a byte is
//! written, capped per stream, and watched for the exit record the cell's init prints when the
//! program ends (which is how the runner learns that a holding cell's program is done).

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
/// What starts the exit record (the same constant `mc-cell init` prints).
pub const EXIT_RECORD: &str = "\u{1e}[mc-cell] exit ";

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

/// Finds the exit record in stdout and keeps it out of the log.
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
            return (Vec::new(), None);
        }
        self.pending.extend_from_slice(chunk);
        let marker = EXIT_RECORD.as_bytes();
        if !self.in_record {
            if let Some(at) = find(&self.pending, marker) {
                let text = self.pending[..at].to_vec();
                self.pending.drain(..at + marker.len());
                self.in_record = true;
                let (_, record) = self.push(&[]);
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
            if self.pending.len() > 4096 {
                // Not a record init wrote: give up on it.
                self.done = true;
            }
            return (Vec::new(), None);
        };
        let record = serde_json::from_slice::<ExitRecord>(&self.pending[..end]).ok();
        self.done = record.is_some();
        self.in_record = false;
        self.pending.drain(..=end);
        (Vec::new(), record)
    }

    fn finish(&mut self) -> Vec<u8> {
        if self.in_record || self.done {
            return Vec::new();
        }
        std::mem::take(&mut self.pending)
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
                "hello\n",
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

    #[test]
    fn output_without_a_record_is_kept_whole() {
        let mut watch = RecordWatch::default();
        let (mut log, record) = watch.push("ends with \u{1e}[mc".as_bytes());
        log.extend(watch.finish());
        assert!(record.is_none());
        assert_eq!(String::from_utf8(log).unwrap(), "ends with \u{1e}[mc");
    }
}
