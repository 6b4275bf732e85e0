//! File helpers every module shares: atomic writes, append-only lines, and the no-follow tree
//! copy used for sealing outputs and filling judge inboxes.
//!
//! The copy never follows a symlink, never copies a device, FIFO or socket, and never copies a
//! file that is hard-linked to something outside the tree being copied: each such entry is
//! skipped and recorded, so a contestant cannot make the host read files it was not given
//! (docs/BEHAVIOR.md §10.9). Every I/O error names its path (`fs-err`).
//!
//! What multicooker writes is the operator's alone: the binary runs with umask 077, and every
//! mode set here is the owner's only (folders 0700, files 0600; read-only copies 0500 / 0400).
//! A copy may share storage with its source ([`CopyOptions::share`]): each file is made
//! read-only (0400) and hard-linked, so one output's bytes are stored once however many sealed,
//! normalized, judge and round copies there are; a link that cannot be made (another file
//! system) falls back to a copy. Nothing writes a shared file in place: whoever changes one
//! writes a new file over its name. Cells never see these files: they get bytes only as archives
//! through the engine.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use fs_err::os::unix::fs::OpenOptionsExt as _;

use serde::Serialize;

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, fsync, rename.
/// A reader sees the old content or the new one, never a mix.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{}.", file_name_lossy(path)))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| with_path(&e, dir))?;
    temp.write_all(bytes)
        .map_err(|e| with_path(&e, temp.path()))?;
    temp.as_file()
        .sync_all()
        .map_err(|e| with_path(&e, temp.path()))?;
    temp.persist(path).map_err(|e| with_path(&e.error, path))?;
    Ok(())
}

/// Serializes `value` as pretty JSON (2-space indent, trailing newline) and writes it atomically.
pub fn write_json_atomic(path: &Path, value: &impl Serialize) -> io::Result<()> {
    write_atomic(path, &to_json_pretty(value))
}

/// Pretty JSON with a trailing newline, the format of every JSON file multicooker writes.
pub fn to_json_pretty(value: &impl Serialize) -> Vec<u8> {
    let mut bytes =
        serde_json::to_vec_pretty(value).expect("serializing plain data to JSON cannot fail");
    bytes.push(b'\n');
    bytes
}

/// Appends one line with a single `write` on an `O_APPEND` descriptor, then fsyncs, so
/// concurrent appenders never interleave within a line.
pub fn append_line(path: &Path, line: &[u8]) -> io::Result<()> {
    let mut buffer = Vec::with_capacity(line.len() + 1);
    buffer.extend_from_slice(line);
    buffer.push(b'\n');
    let mut file = fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(&buffer)?;
    file.file().sync_all().map_err(|e| with_path(&e, path))
}

/// Writes a file and fsyncs it (not atomic; for files only multicooker reads back).
pub fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = fs_err::File::create(path)?;
    file.write_all(bytes)?;
    file.file().sync_all().map_err(|e| with_path(&e, path))
}

/// Removes a directory tree if it exists, first making read-only (sealed) directories
/// writable so a non-root user can remove them. Missing is success.
pub fn remove_tree(path: &Path) -> io::Result<()> {
    match fs_err::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(meta) if !meta.is_dir() => return fs_err::remove_file(path),
        Ok(_) => {}
    }
    for entry in walkdir::WalkDir::new(path).follow_links(false) {
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_dir() {
            let _ = std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o700));
        }
    }
    fs_err::remove_dir_all(path)
}

/// Why the no-follow copy left an entry out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Skip {
    /// A symbolic link; it is not followed and not recreated.
    Symlink {
        /// Where it pointed, as written in the link.
        target: String,
    },
    /// A regular file with hard links outside the copied tree.
    Hardlink,
    /// A FIFO, socket or device file.
    Special {
        /// `fifo`, `socket`, `char_device` or `block_device`.
        kind: &'static str,
    },
    /// A dependency or build folder the reference never seals (`node_modules`, `target`, …).
    Ignored,
    /// Copying it would exceed the size cap.
    SizeCap,
    /// Deeper than the folder depth a collected area may have (everything below it goes too).
    TooDeep,
    /// Its path, or one of its names, is longer than a collected area may hold.
    PathTooLong,
    /// Past the number of entries a collected area may hold.
    CountCap,
    /// Not a plain relative path inside the area (absolute, `..`, or its folder was skipped).
    BadPath,
    /// It could not be read.
    Unreadable {
        /// The I/O error.
        error: String,
    },
}

/// One entry the copy left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Path relative to the copied root (lossy UTF-8).
    pub path: String,
    /// Why.
    #[serde(flatten)]
    pub skip: Skip,
}

/// What a no-follow copy did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CopyReport {
    /// Regular files copied.
    pub files: u64,
    /// Bytes copied.
    pub bytes: u64,
    /// Entries left out, in walk order.
    pub skipped: Vec<Skipped>,
}

/// Options of [`copy_tree_no_follow`].
#[derive(Debug, Clone)]
pub struct CopyOptions {
    /// Basenames never copied (at any depth below the root).
    pub ignore: &'static [&'static str],
    /// Total bytes at most; files that would pass it are skipped.
    pub max_bytes: u64,
    /// Make the copy read-only (files 0400, directories 0500) once complete.
    pub read_only: bool,
    /// Share storage with the source: each file is made read-only (0400) and hard-linked
    /// (copied if it cannot be linked). Only for trees multicooker built itself (collected,
    /// sealed, normalized copies), whose hard links are its own: the check for links outside
    /// the tree is left out.
    pub share: bool,
}

/// Folder and file names that sealing never copies, as in the reference (docs/BEHAVIOR.md §4.7).
/// Default depth limit of a walked tree: far deeper than any real project, far shallower than
/// the host's limit.
pub const MAX_DEPTH: usize = 64;

pub const SEAL_IGNORE: &[&str] = &[
    "node_modules",
    ".pnpm-store",
    ".yarn",
    ".npm",
    ".expo",
    ".turbo",
    ".next",
    ".nuxt",
    ".svelte-kit",
    "dist",
    "build",
    ".output",
    "Pods",
    "DerivedData",
    ".gradle",
    "__pycache__",
    ".venv",
    "venv",
    ".pytest_cache",
    ".mypy_cache",
    "target",
    ".DS_Store",
];

/// Copies the tree at `source` into `dest` (created; must not exist) without following any
/// link. Symlinks, special files and files hard-linked outside the tree are skipped and recorded.
/// A missing `source` yields an empty `dest`.
pub fn copy_tree_no_follow(
    source: &Path,
    dest: &Path,
    options: &CopyOptions,
) -> io::Result<CopyReport> {
    private_dir(dest)?;
    let mut report = CopyReport::default();
    if !fs_err::symlink_metadata(source).is_ok_and(|m| m.is_dir()) {
        finish_read_only(dest, options)?;
        return Ok(report);
    }
    let links_inside = count_links_inside(source);
    let mut walker = walkdir::WalkDir::new(source)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
        .into_iter();
    while let Some(entry) = walker.next() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                let path = e.path().map_or_else(String::new, |p| relative(source, p));
                report.skipped.push(Skipped {
                    path,
                    skip: Skip::Unreadable {
                        error: e.to_string(),
                    },
                });
                continue;
            }
        };
        let rel = entry
            .path()
            .strip_prefix(source)
            .unwrap_or(entry.path())
            .to_path_buf();
        let rel_text = rel.to_string_lossy().into_owned();
        if options.ignore.iter().any(|name| entry.file_name() == *name) {
            if entry.file_type().is_dir() {
                walker.skip_current_dir();
            }
            report.skipped.push(Skipped {
                path: rel_text,
                skip: Skip::Ignored,
            });
            continue;
        }
        if let Some(skip) = copy_entry(
            &entry,
            &dest.join(&rel),
            &links_inside,
            options,
            &mut report,
        )? {
            report.skipped.push(Skipped {
                path: rel_text,
                skip,
            });
        }
    }
    finish_read_only(dest, options)?;
    Ok(report)
}

/// Copies one walked entry; returns why it was skipped, if it was.
fn copy_entry(
    entry: &walkdir::DirEntry,
    target: &Path,
    links_inside: &HashMap<(u64, u64), u64>,
    options: &CopyOptions,
    report: &mut CopyReport,
) -> io::Result<Option<Skip>> {
    let meta = match entry.metadata() {
        Ok(meta) => meta,
        Err(e) => {
            return Ok(Some(Skip::Unreadable {
                error: e.to_string(),
            }));
        }
    };
    let file_type = entry.file_type();
    if file_type.is_symlink() {
        let target = std::fs::read_link(entry.path())
            .map(|t| t.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Ok(Some(Skip::Symlink { target }));
    }
    if file_type.is_dir() {
        private_dir(target)?;
        return Ok(None);
    }
    if !file_type.is_file() {
        return Ok(Some(Skip::Special {
            kind: special_kind(file_type),
        }));
    }
    if !options.share
        && meta.nlink() > 1
        && links_inside
            .get(&(meta.dev(), meta.ino()))
            .copied()
            .unwrap_or(0)
            < meta.nlink()
    {
        return Ok(Some(Skip::Hardlink));
    }
    if report.bytes.saturating_add(meta.len()) > options.max_bytes {
        return Ok(Some(Skip::SizeCap));
    }
    let copied = if options.share {
        share_regular_file(entry.path(), target, &meta)
    } else {
        copy_regular_file(
            entry.path(),
            target,
            &meta,
            options.max_bytes - report.bytes,
        )
    };
    match copied {
        Ok(copied) => {
            report.files += 1;
            report.bytes += copied;
            Ok(None)
        }
        Err(e)
            if e.kind() == io::ErrorKind::PermissionDenied
                || e.raw_os_error() == Some(libc::ELOOP) =>
        {
            Ok(Some(Skip::Unreadable {
                error: e.to_string(),
            }))
        }
        Err(e) => Err(e),
    }
}

/// Copies a regular file, opening it with `O_NOFOLLOW` and re-checking its identity so a
/// swap for a symlink between the walk and the open cannot redirect the read.
fn copy_regular_file(
    source: &Path,
    target: &Path,
    walked: &std::fs::Metadata,
    budget: u64,
) -> io::Result<u64> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(source)
        .map_err(|e| with_path(&e, source))?;
    let opened = file.metadata().map_err(|e| with_path(&e, source))?;
    if !opened.is_file() || opened.ino() != walked.ino() || opened.dev() != walked.dev() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("`{}` changed while copying", source.display()),
        ));
    }
    let mut out = fs_err::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(target)?;
    let copied = io::copy(&mut file.take(budget), &mut out)?;
    // An executable stays executable for its owner (issue 25: a nightly's copy of a template's
    // `flavors/` lost the bit, and every cell of that custom image failed with "Permission
    // denied"); no other bit is taken from the source.
    if walked.permissions().mode() & 0o100 != 0 {
        let mode = out.metadata()?.permissions().mode() | 0o100;
        out.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    Ok(copied)
}

/// Creates a folder (and its missing parents) for the operator only (0700).
fn private_dir(path: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(|e| with_path(&e, path))
}

/// Makes `source` read-only and hard-links `target` to it; copies it when it cannot be linked
/// (another file system, too many links). The link is checked to be the walked file.
fn share_regular_file(source: &Path, target: &Path, walked: &std::fs::Metadata) -> io::Result<u64> {
    if walked.mode() & 0o777 != 0o400 {
        fs_err::set_permissions(source, std::fs::Permissions::from_mode(0o400))?;
    }
    if std::fs::hard_link(source, target).is_err() {
        let copied = copy_regular_file(source, target, walked, walked.len())?;
        fs_err::set_permissions(target, std::fs::Permissions::from_mode(0o400))?;
        return Ok(copied);
    }
    let linked = fs_err::symlink_metadata(target)?;
    if !linked.is_file() || linked.ino() != walked.ino() || linked.dev() != walked.dev() {
        let _ = fs_err::remove_file(target);
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("`{}` changed while copying", source.display()),
        ));
    }
    Ok(walked.len())
}

/// How many times each (device, inode) of a regular file occurs inside `root`.
fn count_links_inside(root: &Path) -> HashMap<(u64, u64), u64> {
    let mut counts = HashMap::new();
    for entry in walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_file()
            && let Ok(meta) = entry.metadata()
            && meta.nlink() > 1
        {
            *counts.entry((meta.dev(), meta.ino())).or_insert(0) += 1;
        }
    }
    counts
}

fn special_kind(file_type: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_fifo() {
        "fifo"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_char_device() {
        "char_device"
    } else if file_type.is_block_device() {
        "block_device"
    } else {
        "unknown"
    }
}

fn finish_read_only(dest: &Path, options: &CopyOptions) -> io::Result<()> {
    if !options.read_only {
        return Ok(());
    }
    // Deepest first, so a directory loses its write bit only after its children are done.
    let entries: Vec<_> = walkdir::WalkDir::new(dest)
        .follow_links(false)
        .contents_first(true)
        .into_iter()
        .flatten()
        .collect();
    for entry in entries {
        let mode = if entry.file_type().is_dir() {
            0o500
        } else {
            0o400
        };
        fs_err::set_permissions(entry.path(), std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// Reads at most `limit` bytes of a file; a larger file is an error naming its size.
pub fn read_capped(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = fs_err::File::open(path)?;
    let len = file.metadata()?.len();
    if len > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "`{}` is {len} bytes, more than the {limit} bytes allowed",
                path.display()
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

fn file_name_lossy(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned())
}

fn with_path(error: &io::Error, path: &Path) -> io::Error {
    io::Error::new(error.kind(), format!("{error} (at `{}`)", path.display()))
}

/// The path as text for messages and JSON (lossy).
pub fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Returns `path` if absolute, else `base/path`, without touching the file system.
pub fn absolute_from(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> CopyOptions {
        CopyOptions {
            ignore: SEAL_IGNORE,
            max_bytes: 1 << 20,
            read_only: false,
            share: false,
        }
    }

    /// Issue 25: a nightly's copy of a template's `flavors/` lost the executable bit.
    #[test]
    fn an_executable_stays_executable_for_its_owner_and_nothing_else_is_taken() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("flavors");
        fs_err::create_dir_all(&src).unwrap();
        fs_err::write(src.join("run.sh"), "#!/bin/sh\n").unwrap();
        fs_err::write(src.join("notes.txt"), "x").unwrap();
        fs_err::set_permissions(src.join("run.sh"), std::fs::Permissions::from_mode(0o4777))
            .unwrap();
        let dest = tmp.path().join("copy");
        copy_tree_no_follow(&src, &dest, &options()).unwrap();
        let mode = |name: &str| {
            fs_err::metadata(dest.join(name))
                .unwrap()
                .permissions()
                .mode()
        };
        assert_ne!(mode("run.sh") & 0o100, 0, "{:o}", mode("run.sh"));
        assert_eq!(mode("run.sh") & 0o4000, 0, "no setuid bit is copied");
        assert_eq!(mode("notes.txt") & 0o111, 0, "{:o}", mode("notes.txt"));
    }

    #[test]
    fn copy_skips_symlinks_fifos_and_outside_hardlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("out");
        fs_err::create_dir_all(src.join("nested")).unwrap();
        fs_err::write(src.join("RESULT.md"), "hello").unwrap();
        fs_err::hard_link(src.join("RESULT.md"), src.join("nested/inside-link")).unwrap();
        fs_err::write(tmp.path().join("secret"), "host secret").unwrap();
        fs_err::hard_link(tmp.path().join("secret"), src.join("outside-link")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", src.join("passwd")).unwrap();
        std::os::unix::fs::symlink("../secret", src.join("relative")).unwrap();
        let fifo = std::ffi::CString::new(src.join("fifo").to_str().unwrap()).unwrap();
        #[expect(unsafe_code, reason = "test fixture: std has no mkfifo")]
        // SAFETY: `fifo` is a valid NUL-terminated path.
        let rc = unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) };
        assert_eq!(rc, 0);
        let _socket = std::os::unix::net::UnixListener::bind(src.join("socket")).unwrap();
        fs_err::create_dir_all(src.join("node_modules/x")).unwrap();

        let dest = tmp.path().join("sealed");
        let report = copy_tree_no_follow(&src, &dest, &options()).unwrap();

        assert_eq!(
            fs_err::read_to_string(dest.join("RESULT.md")).unwrap(),
            "hello"
        );
        assert_eq!(
            fs_err::read_to_string(dest.join("nested/inside-link")).unwrap(),
            "hello"
        );
        for absent in [
            "outside-link",
            "passwd",
            "relative",
            "fifo",
            "socket",
            "node_modules",
        ] {
            assert!(
                fs_err::symlink_metadata(dest.join(absent)).is_err(),
                "{absent} was copied"
            );
        }
        let reasons: Vec<(String, Skip)> = report
            .skipped
            .into_iter()
            .map(|s| (s.path, s.skip))
            .collect();
        assert_eq!(
            reasons,
            vec![
                ("fifo".into(), Skip::Special { kind: "fifo" }),
                ("node_modules".into(), Skip::Ignored),
                ("outside-link".into(), Skip::Hardlink),
                (
                    "passwd".into(),
                    Skip::Symlink {
                        target: "/etc/passwd".into()
                    }
                ),
                (
                    "relative".into(),
                    Skip::Symlink {
                        target: "../secret".into()
                    }
                ),
                ("socket".into(), Skip::Special { kind: "socket" }),
            ]
        );
        assert_eq!(report.files, 2);
    }

    #[test]
    fn device_files_are_skipped_and_odd_names_are_copied() {
        use std::os::unix::ffi::OsStrExt;
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("out");
        fs_err::create_dir_all(&src).unwrap();
        let device = std::ffi::CString::new(src.join("null").to_str().unwrap()).unwrap();
        #[expect(unsafe_code, reason = "test fixture: std has no mknod")]
        // SAFETY: `device` is a valid NUL-terminated path; (1, 3) is /dev/null's number.
        let rc =
            unsafe { libc::mknod(device.as_ptr(), libc::S_IFCHR | 0o644, libc::makedev(1, 3)) };
        assert_eq!(
            rc,
            0,
            "creating a device file needs root (CI runs as root): {}",
            io::Error::last_os_error()
        );
        let odd = std::ffi::OsStr::from_bytes(b"caf\xe9-\xff.txt");
        fs_err::write(src.join(odd), "latin-1 name").unwrap();
        let dest = tmp.path().join("d");
        let report = copy_tree_no_follow(&src, &dest, &options()).unwrap();
        assert_eq!(
            fs_err::read_to_string(dest.join(odd)).unwrap(),
            "latin-1 name"
        );
        assert!(fs_err::symlink_metadata(dest.join("null")).is_err());
        assert_eq!(
            report.skipped,
            vec![Skipped {
                path: "null".into(),
                skip: Skip::Special {
                    kind: "char_device"
                }
            }]
        );
    }

    #[test]
    fn a_hundred_thousand_files_are_sealed() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("out");
        for dir in 0..100 {
            let sub = src.join(format!("d{dir}"));
            fs_err::create_dir_all(&sub).unwrap();
            for file in 0..1000 {
                std::fs::write(sub.join(format!("f{file}")), b"x").unwrap();
            }
        }
        let options = CopyOptions {
            read_only: true,
            ..options()
        };
        let report = copy_tree_no_follow(&src, &tmp.path().join("d"), &options).unwrap();
        assert_eq!((report.files, report.bytes), (100_000, 100_000));
        assert!(report.skipped.is_empty());
    }

    #[test]
    fn copy_stops_at_the_size_cap_and_records_it() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("out");
        fs_err::create_dir_all(&src).unwrap();
        fs_err::write(src.join("a.txt"), vec![b'a'; 600]).unwrap();
        fs_err::write(src.join("b.txt"), vec![b'b'; 600]).unwrap();
        let options = CopyOptions {
            max_bytes: 1000,
            ..options()
        };
        let report = copy_tree_no_follow(&src, &tmp.path().join("d"), &options).unwrap();
        assert_eq!((report.files, report.bytes), (1, 600));
        assert_eq!(
            report.skipped,
            vec![Skipped {
                path: "b.txt".into(),
                skip: Skip::SizeCap
            }]
        );
    }

    #[test]
    fn read_only_copy_can_still_be_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("out");
        fs_err::create_dir_all(src.join("d")).unwrap();
        fs_err::write(src.join("d/f"), "x").unwrap();
        let dest = tmp.path().join("sealed");
        copy_tree_no_follow(
            &src,
            &dest,
            &CopyOptions {
                read_only: true,
                ..options()
            },
        )
        .unwrap();
        let mode = fs_err::metadata(dest.join("d/f"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o400);
        remove_tree(&dest).unwrap();
        assert!(!dest.exists());
    }

    #[test]
    fn write_atomic_replaces_content() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("status.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs_err::read_to_string(&path).unwrap(), "two");
        assert_eq!(
            fs_err::read_dir(tmp.path()).unwrap().count(),
            1,
            "no temp file left behind"
        );
    }

    /// A shared copy stores each file once: the same inode, read-only for the operator only;
    /// a file replaced over its name in one copy leaves the other as it was.
    #[test]
    fn a_shared_copy_links_read_only_files_and_a_rewrite_never_reaches_the_source() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("out");
        fs_err::create_dir_all(src.join("sub")).unwrap();
        fs_err::write(src.join("sub/big.bin"), vec![7u8; 4096]).unwrap();
        fs_err::write(src.join("RESULT.md"), "answer\n").unwrap();
        fs_err::hard_link(src.join("RESULT.md"), src.join("sub/again.md")).unwrap();
        let shared = CopyOptions {
            share: true,
            read_only: true,
            ..options()
        };
        let sealed = tmp.path().join("sealed");
        let report = copy_tree_no_follow(&src, &sealed, &shared).unwrap();
        assert_eq!((report.files, report.skipped.len()), (3, 0));
        let normalized = tmp.path().join("normalized");
        let again = CopyOptions {
            read_only: false,
            ..shared.clone()
        };
        copy_tree_no_follow(&sealed, &normalized, &again).unwrap();
        let meta = |p: &Path| fs_err::symlink_metadata(p).unwrap();
        for copy in [&sealed, &normalized] {
            let (a, b) = (
                meta(&src.join("sub/big.bin")),
                meta(&copy.join("sub/big.bin")),
            );
            assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()), "stored once");
            assert_eq!(b.mode() & 0o777, 0o400);
        }
        assert_eq!(meta(&sealed).mode() & 0o777, 0o500);
        assert_eq!(meta(&normalized.join("sub")).mode() & 0o777, 0o700);
        write_atomic(&normalized.join("RESULT.md"), b"stripped\n").unwrap();
        assert_eq!(
            fs_err::read_to_string(sealed.join("RESULT.md")).unwrap(),
            "answer\n"
        );
        assert_eq!(
            fs_err::read_to_string(src.join("sub/again.md")).unwrap(),
            "answer\n"
        );
        // An unshared copy of the same tree still refuses the links it did not make.
        let unshared = copy_tree_no_follow(&sealed, &tmp.path().join("plain"), &options()).unwrap();
        assert!(
            unshared.skipped.iter().all(|s| s.skip == Skip::Hardlink),
            "{unshared:?}"
        );
        assert_eq!(unshared.skipped.len(), 3);
        remove_tree(&sealed).unwrap();
        assert_eq!(fs_err::read(src.join("sub/big.bin")).unwrap().len(), 4096);
    }
}
