//! Flavors whose cells run one at a time: their login ships a refresh token that rotates, so
//! two cells using it at once would log each other out. One permit per flavor in-process, and
//! one lock file per flavor across processes (another multicooker run on the same host).

use tokio_util::sync::CancellationToken;

/// Where host-wide flavor locks live: per user, under the host home.
pub(super) fn lock_dir(home: &std::path::Path) -> std::path::PathBuf {
    home.join(".cache/multicooker/locks")
}

/// Takes the host-wide lock of a serial flavor, waiting while another process holds it (or
/// until cancelled). `None` when no lock file can be made: the in-process lock still holds.
pub(super) async fn host_lock(
    dir: &std::path::Path,
    flavor: &str,
    cancel: &CancellationToken,
) -> Option<std::fs::File> {
    std::fs::create_dir_all(dir).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(format!("{flavor}.lock")))
        .ok()?;
    loop {
        match file.try_lock() {
            Ok(()) => return Some(file),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(_)) => return None,
        }
        tokio::select! {
            () = tokio::time::sleep(std::time::Duration::from_millis(250)) => {}
            () = cancel.cancelled() => return None,
        }
    }
}
