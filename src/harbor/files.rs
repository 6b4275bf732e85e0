//! A task folder's files, read without following a link, with the hash that identifies the task
//! in provenance, and their byte-identical copy into a cook.
//!
//! The task hash is the SHA-256 of one line per regular file, sorted by path:
//! `<path> <x|-> <sha256 of the bytes>\n` (`x` for an executable file). Folders count only
//! through their files; owners and times do not count, so the same task checked out twice has
//! the same hash.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::HarborError;

/// The most a task folder may hold.
pub const MAX_TASK_BYTES: u64 = 512 << 20;
/// The most files a task folder may hold.
pub const MAX_TASK_FILES: usize = 20_000;

/// One regular file of a task.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TaskFile {
    /// Its path inside the task folder, `/`-separated.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// Whether any execute bit is set.
    pub executable: bool,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
}

/// Every regular file of a task, sorted by path, and the task's hash.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TaskFiles {
    /// The files.
    pub files: Vec<TaskFile>,
    /// The task hash (see the module documentation), hex.
    pub hash: String,
}

impl TaskFiles {
    /// True when the task holds this file.
    pub fn has(&self, path: &str) -> bool {
        self.files.iter().any(|f| f.path == path)
    }

    /// The files under `folder/`, with paths relative to it.
    pub fn under<'a>(&'a self, folder: &'a str) -> impl Iterator<Item = (&'a str, &'a TaskFile)> {
        self.files.iter().filter_map(move |f| {
            f.path
                .strip_prefix(folder)
                .and_then(|rest| rest.strip_prefix('/'))
                .map(|rest| (rest, f))
        })
    }
}

/// Reads the manifest of `dir`: every regular file with its hash; a link, FIFO or device
/// anywhere is refused, and so is a folder over [`MAX_TASK_BYTES`] or [`MAX_TASK_FILES`].
pub fn read(dir: &Path) -> Result<TaskFiles, HarborError> {
    use std::os::unix::fs::PermissionsExt;
    let mut files = Vec::new();
    let mut total = 0u64;
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry = entry.map_err(|e| HarborError::Read {
            path: e.path().map_or_else(|| dir.to_owned(), Path::to_owned),
            source: e
                .into_io_error()
                .unwrap_or_else(|| std::io::Error::other("walk failed")),
        })?;
        let kind = entry.file_type();
        if kind.is_dir() {
            continue;
        }
        if !kind.is_file() {
            return Err(HarborError::NotRegular {
                path: entry.path().to_owned(),
            });
        }
        let path = relative(dir, entry.path());
        let metadata = entry.metadata().map_err(|e| HarborError::Read {
            path: entry.path().to_owned(),
            source: e
                .into_io_error()
                .unwrap_or_else(|| std::io::Error::other("stat failed")),
        })?;
        total = total.saturating_add(metadata.len());
        if total > MAX_TASK_BYTES || files.len() >= MAX_TASK_FILES {
            return Err(HarborError::TooLarge {
                dir: dir.to_owned(),
                limit_mb: MAX_TASK_BYTES >> 20,
            });
        }
        let (size, sha256) = hash_file(entry.path())?;
        files.push(TaskFile {
            path,
            size,
            executable: metadata.permissions().mode() & 0o111 != 0,
            sha256,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let hash = task_hash(&files);
    Ok(TaskFiles { files, hash })
}

/// The task hash of a sorted manifest.
pub fn task_hash(files: &[TaskFile]) -> String {
    let mut hasher = Sha256::new();
    for file in files {
        let mode = if file.executable { 'x' } else { '-' };
        hasher.update(format!("{} {mode} {}\n", file.path, file.sha256).as_bytes());
    }
    hex(&hasher.finalize())
}

/// Copies the manifest's files from `from` into `to` (created), byte for byte, each checked
/// against its recorded hash after the copy: a task changed while it was read is refused.
pub fn copy(from: &Path, manifest: &TaskFiles, to: &Path) -> Result<(), HarborError> {
    use std::os::unix::fs::PermissionsExt;
    let write_error = |path: &Path, source| HarborError::Read {
        path: path.to_owned(),
        source,
    };
    for file in &manifest.files {
        let source = from.join(&file.path);
        let target = to.join(&file.path);
        if let Some(parent) = target.parent() {
            fs_err::create_dir_all(parent).map_err(|e| write_error(parent, e))?;
        }
        let mut bytes = Vec::new();
        open_no_follow(&source)
            .and_then(|f| f.take(MAX_TASK_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| write_error(&source, e))?;
        if hex(&Sha256::digest(&bytes)) != file.sha256 {
            return Err(HarborError::Changed { path: source });
        }
        crate::fsx::write_atomic(&target, &bytes).map_err(|e| write_error(&target, e))?;
        let mode = if file.executable { 0o755 } else { 0o644 };
        fs_err::set_permissions(&target, std::fs::Permissions::from_mode(mode))
            .map_err(|e| write_error(&target, e))?;
    }
    Ok(())
}

fn hash_file(path: &Path) -> Result<(u64, String), HarborError> {
    let read_error = |source| HarborError::Read {
        path: path.to_owned(),
        source,
    };
    let mut file = open_no_follow(path).map_err(read_error)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 << 10];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buffer).map_err(read_error)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buffer[..n]);
    }
    Ok((size, hex(&hasher.finalize())))
}

fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

fn relative(dir: &Path, path: &Path) -> String {
    let rest: PathBuf = path.strip_prefix(dir).unwrap_or(path).to_owned();
    rest.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
