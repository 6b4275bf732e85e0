//! Collect: the only way bytes a cell wrote reach the host disk.
//!
//! The engine hands over a tar of one of the cell's areas; every entry is checked before a byte
//! is written. Only folders and regular files are recreated; links, hard links, devices, FIFOs
//! and sockets are skipped and recorded, never followed. Entries that are too deep, whose path
//! is too long or not a plain relative path, or that would pass the size or file-count cap are
//! skipped and recorded too: a hostile tree costs the cell those entries, never the cell's
//! result or the judging of others. File contents pass through the run's redactor on their way
//! to disk, so no login a cell copied into its output is ever written. What is written belongs
//! to the operator alone (folders 0700, files 0600).
//!
//! This module never follows a link on the host: it writes only below a folder it has just
//! created, with `O_NOFOLLOW` and `O_EXCL`.

use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use crate::fsx::{CopyReport, Skip, Skipped};
use crate::redact::{Redaction, Redactor};

/// Limits of one collected area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Total bytes of regular files.
    pub max_bytes: u64,
    /// Folders and files.
    pub max_entries: u64,
    /// Folders below the area's root.
    pub max_depth: usize,
    /// Bytes of a path relative to the area's root.
    pub max_path_bytes: usize,
}

pub use crate::fsx::MAX_DEPTH;

/// Scans what a cell left (collected to `dir`) for token-shaped strings and warns about each,
/// naming the cell as `who`: the same check for a participant's sealed output and a judge's
/// outbox.
pub fn warn_token_shapes(
    progress: &dyn crate::progress::Progress,
    who: &str,
    dir: &Path,
) -> Vec<crate::redact::TokenShape> {
    let found = crate::redact::token_shapes(dir);
    for shape in &found {
        progress.note(&format!(
            "warning: {who} left a token-shaped string ({}) in {}: look before publishing",
            shape.kind,
            crate::sanitize::one_line(&shape.path)
        ));
    }
    found
}
/// Default limit on a relative path, so that the host path (cook folder, `judging/_normalized/`
/// and the like in front of it) stays well inside the host's 4096 bytes.
pub const MAX_PATH_BYTES: usize = 1024;
/// Default limit on entries of one area.
pub const MAX_ENTRIES: u64 = 200_000;
/// At most this many skipped entries are listed one by one; the rest are counted.
const LISTED_SKIPS: usize = 200;

impl Bounds {
    /// The default bounds with this size cap.
    pub fn with_max_bytes(max_bytes: u64) -> Self {
        Self {
            max_bytes,
            max_entries: MAX_ENTRIES,
            max_depth: MAX_DEPTH,
            max_path_bytes: MAX_PATH_BYTES,
        }
    }
}

/// What a collection wrote and left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Collected {
    /// Files, bytes and the skipped entries (listed up to a limit).
    #[serde(flatten)]
    pub copy: CopyReport,
    /// Skipped entries beyond those listed.
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_unlisted: u64,
    /// Files in which a secret was replaced on the way.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<Redaction>,
    /// Why the rest of the stream was not read (a sparse file claiming more than the area can
    /// hold, or a broken stream); what came before is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes the field by reference"
)]
fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl Collected {
    fn skip(&mut self, path: String, skip: Skip) {
        if self.copy.skipped.len() < LISTED_SKIPS {
            self.copy.skipped.push(Skipped { path, skip });
        } else {
            self.skipped_unlisted += 1;
        }
    }
}

/// Unpacks the tar `archive` (entries start with the area's own folder name, which is
/// dropped) into `dest`, which must not exist yet.
pub fn unpack(
    archive: impl Read,
    dest: &Path,
    bounds: Bounds,
    redactor: &Redactor,
) -> io::Result<Collected> {
    std::fs::DirBuilder::new().mode(0o700).create(dest)?;
    // An area cannot hold more than its cap, but a sparse file can claim any size: the stream
    // is read no further than the cap plus every entry's tar overhead.
    let limit = bounds
        .max_bytes
        .saturating_add(bounds.max_entries.saturating_mul(1024))
        .saturating_add(16 << 20);
    let mut archive = tar::Archive::new(Limited {
        inner: archive,
        left: limit,
    });
    let mut unpacker = Unpacker {
        dest,
        bounds,
        redactor,
        report: Collected::default(),
        entries_seen: 0,
        dropped: Vec::new(),
    };
    let entries = match archive.entries() {
        Ok(entries) => entries,
        Err(e) => {
            unpacker.report.cut = Some(e.to_string());
            return Ok(unpacker.report);
        }
    };
    for entry in entries {
        let cut = match entry {
            Ok(mut entry) => unpacker.entry(&mut entry),
            Err(e) => Some(e),
        };
        if let Some(e) = cut {
            unpacker.report.cut = Some(format!("the rest was not read: {e}"));
            break;
        }
    }
    Ok(unpacker.report)
}

/// The state of one collection.
struct Unpacker<'a> {
    dest: &'a Path,
    bounds: Bounds,
    redactor: &'a Redactor,
    report: Collected,
    entries_seen: u64,
    /// Where a too-deep or skipped folder begins: everything below it goes with it, once.
    dropped: Vec<PathBuf>,
}

impl Unpacker<'_> {
    /// Checks and writes one entry; returns the error that ends the stream, if one did.
    fn entry<R: Read>(&mut self, entry: &mut tar::Entry<'_, R>) -> Option<io::Error> {
        let raw = entry.path_bytes().into_owned();
        let Some(relative) = relative_path(&raw) else {
            self.report.skip(lossy(&raw), Skip::BadPath);
            return None;
        };
        if relative.as_os_str().is_empty() || self.dropped.iter().any(|d| relative.starts_with(d)) {
            return None;
        }
        let shown = relative.to_string_lossy().into_owned();
        let kind = entry.header().entry_type();
        if let Some(skip) = refuse(entry, kind) {
            self.report.skip(shown, skip);
            return None;
        }
        if let Some(skip) = self.out_of_bounds(&relative, kind.is_dir()) {
            self.report.skip(shown, skip);
            return None;
        }
        let target = self.dest.join(&relative);
        if !target.parent().is_some_and(Path::is_dir) {
            // Its folder was skipped (or the tar lists a file before its folder).
            self.report.skip(shown, Skip::BadPath);
            return None;
        }
        if kind.is_dir() {
            match std::fs::DirBuilder::new().mode(0o700).create(&target) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && target.is_dir() => {}
                Err(e) => self.report.skip(shown, unreadable(&e)),
            }
            return None;
        }
        // The entry's size, PAX extensions included (a file over 8 GiB has its size there).
        if self.report.copy.bytes.saturating_add(entry.size()) > self.bounds.max_bytes {
            self.report.skip(shown, Skip::SizeCap);
            return None;
        }
        match write_file(entry, &target, self.redactor) {
            Ok((written, replaced)) => {
                self.report.copy.files += 1;
                self.report.copy.bytes += written;
                if replaced {
                    self.report.redacted.push(Redaction {
                        path: shown,
                        action: "redacted",
                    });
                }
                None
            }
            Err(e) => {
                let _ = std::fs::remove_file(&target);
                self.report.skip(shown, unreadable(&e));
                (e.kind() == io::ErrorKind::FileTooLarge).then_some(e)
            }
        }
    }

    /// Why an entry is past the depth, path or count bounds (a folder cut here takes everything
    /// below it along).
    fn out_of_bounds(&mut self, relative: &Path, folder: bool) -> Option<Skip> {
        if relative.components().count() > self.bounds.max_depth {
            self.dropped.push(relative.to_path_buf());
            return Some(Skip::TooDeep);
        }
        if relative.as_os_str().len() > self.bounds.max_path_bytes
            || relative.iter().any(|part| part.len() > 255)
        {
            if folder {
                self.dropped.push(relative.to_path_buf());
            }
            return Some(Skip::PathTooLong);
        }
        self.entries_seen += 1;
        (self.entries_seen > self.bounds.max_entries).then_some(Skip::CountCap)
    }
}

/// A reader that fails once `left` bytes were read.
struct Limited<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                "the area's stream is longer than its cap allows",
            ));
        }
        let room = usize::try_from(self.left).unwrap_or(usize::MAX);
        let take = buffer.len().min(room);
        let read = self.inner.read(&mut buffer[..take])?;
        self.left -= read as u64;
        Ok(read)
    }
}

/// The entry path without its first component (the area's own folder), if every component is
/// a plain name.
fn relative_path(raw: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let path = Path::new(std::ffi::OsStr::from_bytes(raw));
    let mut parts = path.components();
    match parts.next() {
        Some(Component::Normal(_)) => {}
        _ => return None,
    }
    let mut relative = PathBuf::new();
    for part in parts {
        match part {
            Component::Normal(name) => relative.push(name),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(relative)
}

/// Why an entry is not recreated, for anything but a folder or a regular file.
fn refuse<R: Read>(entry: &tar::Entry<'_, R>, kind: tar::EntryType) -> Option<Skip> {
    use tar::EntryType as T;
    match kind {
        T::Regular | T::Continuous | T::Directory => None,
        T::Symlink => Some(Skip::Symlink {
            target: entry
                .link_name_bytes()
                .map(|l| lossy(&l))
                .unwrap_or_default(),
        }),
        T::Link => Some(Skip::Hardlink),
        T::Fifo => Some(Skip::Special { kind: "fifo" }),
        T::Char => Some(Skip::Special {
            kind: "char_device",
        }),
        T::Block => Some(Skip::Special {
            kind: "block_device",
        }),
        _ => Some(Skip::Special { kind: "other" }),
    }
}

fn write_file(
    entry: &mut impl Read,
    target: &Path,
    redactor: &Redactor,
) -> io::Result<(u64, bool)> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(target)?;
    let mut out = io::BufWriter::new(file);
    let mut stream = redactor.stream();
    let mut buffer = vec![0u8; 256 << 10];
    let mut written = 0u64;
    loop {
        let read = entry.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        let clean = stream.push(&buffer[..read]);
        out.write_all(&clean)?;
        written += clean.len() as u64;
    }
    let rest = stream.finish();
    out.write_all(&rest)?;
    written += rest.len() as u64;
    out.flush()?;
    Ok((written, stream.replaced()))
}

fn unreadable(error: &io::Error) -> Skip {
    Skip::Unreadable {
        error: error.to_string(),
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests;
