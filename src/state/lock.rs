//! One command at a time per cook. `cook`, `judge` and `report` hold an exclusive lock on
//! `<cook>/.mc-run.lock` while they run; a second one is refused with who holds it. The lock is
//! the kernel's (`flock`), so a killed process never leaves a stale lock: its file may remain,
//! with the dead owner's pid, and the next command simply takes it. Taking it also closes the
//! cook folder to everyone but its owner (0700): a folder made by hand, or by an older version,
//! keeps no copy of an output, log or login readable by another account.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::Hint;

/// The lock file of a cook.
pub fn run_lock_path(cook: &Path) -> PathBuf {
    cook.join(".mc-run.lock")
}

/// Takes group and other bits off the cook folder (its owner's alone); a folder that cannot be
/// changed (another owner's) is left as it is.
fn close_to_others(cook: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    if let Ok(meta) = std::fs::symlink_metadata(cook)
        && meta.is_dir()
        && meta.permissions().mode() & 0o077 != 0
    {
        let mode = meta.permissions().mode() & 0o700;
        let _ = std::fs::set_permissions(cook, std::fs::Permissions::from_mode(mode));
    }
}

/// Why a cook cannot be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("`{cook}` is busy: {holder}")]
    Busy {
        /// The cook folder name.
        cook: String,
        /// What the lock file says of its owner.
        holder: String,
        /// The owner's pid, if recorded.
        pid: Option<u32>,
    },
    /// The lock file cannot be opened or locked.
    #[error("cannot lock `{}`", .path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

crate::hint_source!(LockError);

impl Hint for LockError {
    fn hint(&self) -> Option<String> {
        match self {
            Self::Busy { pid: Some(pid), .. } => Some(format!(
                "wait for it to finish, or stop it (Ctrl-C in its terminal, or `kill {pid}`) and run this again"
            )),
            Self::Busy { pid: None, .. } => Some("wait for it to finish and run this again".into()),
            Self::Io { .. } => Some("check the cook folder's permissions".into()),
        }
    }
}

/// A held lock; released when dropped (or when the process dies). Dropping it also removes the
/// lock file, while still holding the lock, so a command that ends normally (refused or not)
/// leaves no `.mc-run.lock` behind; only a killed process leaves its file, which the next
/// command takes.
#[derive(Debug)]
pub struct RunLock {
    file: std::fs::File,
    path: PathBuf,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Unlinked before the descriptor closes: a process waiting on this inode sees, once it
        // gets the lock, that the path no longer names it, and starts over (see `acquire_file`).
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// Whether `file` is still the file at `path` (not unlinked or replaced since it was opened).
fn still_at(file: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

impl RunLock {
    /// Takes the cook's lock for `command`, or says who holds it.
    pub fn acquire(cook: &Path, command: &str) -> Result<Self, LockError> {
        let name = cook
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let lock = Self::acquire_file(&run_lock_path(cook), &name, command)?;
        close_to_others(cook);
        Ok(lock)
    }

    /// Takes the lock file at `path` (guarding `what`) for `command`.
    pub fn acquire_file(path: &Path, what: &str, command: &str) -> Result<Self, LockError> {
        // A holder that ends removes the file while holding it; whoever opened that inode
        // before then must open the path again (a few rounds at most).
        let mut rounds = 0;
        loop {
            let file = Self::acquire_once(path, what)?;
            rounds += 1;
            if still_at(&file, path) || rounds >= 8 {
                let lock = Self {
                    file,
                    path: path.to_path_buf(),
                };
                lock.write_owner(command)?;
                return Ok(lock);
            }
            // Closing it releases the stale inode's lock; the path belongs to whoever
            // created it again.
            drop(file);
        }
    }

    /// Opens (creating) the file at `path` and takes its lock, or says who holds it.
    fn acquire_once(path: &Path, what: &str) -> Result<std::fs::File, LockError> {
        let path = path.to_path_buf();
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let owner: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                let pid = owner
                    .get("pid")
                    .and_then(serde_json::Value::as_u64)
                    .and_then(|p| u32::try_from(p).ok());
                let holder = match (owner.get("command").and_then(|c| c.as_str()), pid) {
                    (Some(command), Some(pid)) => {
                        let since = owner.get("since").and_then(|s| s.as_str()).unwrap_or("?");
                        format!(
                            "`multicooker {command}` (pid {pid}) has been running on it since {since}"
                        )
                    }
                    _ => "another multicooker command is running on it".to_owned(),
                };
                return Err(LockError::Busy {
                    cook: what.to_owned(),
                    holder,
                    pid,
                });
            }
            Err(std::fs::TryLockError::Error(source)) => return Err(io(source)),
        }
        Ok(file)
    }

    /// Records who holds the lock, for `status` and for a refused second command.
    fn write_owner(&self, command: &str) -> Result<(), LockError> {
        let io = |source| LockError::Io {
            path: self.path.clone(),
            source,
        };
        let owner = serde_json::json!({
            "command": command,
            "pid": std::process::id(),
            "since": jiff::Timestamp::now().to_string(),
        });
        self.file.set_len(0).map_err(io)?;
        (&self.file)
            .write_all(format!("{owner}\n").as_bytes())
            .map_err(io)
    }
}

/// Who holds a cook's lock right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The command (`cook`, `judge` …).
    pub command: String,
    /// Its process id.
    pub pid: u32,
    /// Since when (RFC 3339).
    pub since: String,
}

/// The process running on this cook, if any: the lock is held (the kernel says so) and its
/// file names the owner. A lock file left by a dead process is no holder.
pub fn holder(cook: &Path) -> Option<Holder> {
    let path = run_lock_path(cook);
    let file = std::fs::OpenOptions::new().read(true).open(&path).ok()?;
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            None
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let text = std::fs::read_to_string(&path).ok()?;
            let owner: serde_json::Value = serde_json::from_str(&text).ok()?;
            Some(Holder {
                command: owner.get("command")?.as_str()?.to_owned(),
                pid: u32::try_from(owner.get("pid")?.as_u64()?).ok()?,
                since: owner
                    .get("since")
                    .and_then(|s| s.as_str())
                    .unwrap_or("?")
                    .to_owned(),
            })
        }
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_command_is_refused_and_a_dead_holders_lock_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let held = RunLock::acquire(dir.path(), "cook").unwrap();
        let error = RunLock::acquire(dir.path(), "judge").unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("is busy: `multicooker cook` (pid ")
                && message.contains(&std::process::id().to_string()),
            "{message}"
        );
        assert!(error.hint().unwrap().contains("kill"));
        drop(held);
        // Issue 25: a command that ends leaves no lock file.
        assert!(!run_lock_path(dir.path()).exists());
        assert_eq!(holder(dir.path()), None, "a released lock has no holder");
        // A killed holder's file stays with its pid (no process holds the flock): it is taken.
        std::fs::write(
            run_lock_path(dir.path()),
            r#"{"command":"cook","pid":4194303,"since":"x"}"#,
        )
        .unwrap();
        assert_eq!(
            holder(dir.path()),
            None,
            "a dead holder's file has no holder"
        );
        let again = RunLock::acquire(dir.path(), "report").unwrap();
        let now = holder(dir.path()).unwrap();
        assert_eq!(
            (now.command.as_str(), now.pid),
            ("report", std::process::id())
        );
        let text = std::fs::read_to_string(run_lock_path(dir.path())).unwrap();
        assert!(text.contains("\"command\":\"report\""), "{text}");
        drop(again);
    }
}
