//! The cook folders under a root as a whole: listing them, how long one has been idle, pruning
//! one (`multicooker prune`, optionally keeping its results), and the login snapshots a killed
//! run left in `<cook>/.auth/` (`multicooker clean`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What `prune --keep-results` keeps.
const RESULTS: &[&str] = &[
    "brief.yaml",
    "BRIEF.md",
    "JUDGE_BRIEF.md",
    "RUN.json",
    "RUN_RESULT.json",
    "JUDGE_RESULT.json",
    "status.json",
    "events.jsonl",
    "leaderboard.md",
    "leaderboard.html",
    "summary.json",
    "artifacts.json",
];

/// Every cook folder (a folder with a `brief.yaml`) directly under `root`, unsorted; none when
/// the root cannot be read.
pub fn cook_dirs(root: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("brief.yaml").is_file())
}

/// The last time anything in the cook folder's top level changed.
#[must_use]
pub fn last_activity(cook: &Path) -> SystemTime {
    let mut latest = std::fs::metadata(cook)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH);
    for entry in std::fs::read_dir(cook).into_iter().flatten().flatten() {
        if let Ok(modified) = entry.metadata().and_then(|m| m.modified()) {
            latest = latest.max(modified);
        }
    }
    latest
}

/// Deletes a cook folder, or with `keep_results` everything but its results and briefs.
///
/// # Errors
/// When a file or folder cannot be removed.
pub fn remove_cook(cook: &Path, keep_results: bool) -> std::io::Result<()> {
    if !keep_results {
        return crate::fsx::remove_tree(cook);
    }
    for entry in fs_err::read_dir(cook)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if RESULTS.contains(&name.as_str()) {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            crate::fsx::remove_tree(&path)?;
        } else {
            fs_err::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Login snapshots a killed run left in `<cook>/.auth/` (a finished cell's is already gone),
/// removed unless `dry_run`; what could not be removed is added to `failed`.
pub fn remove_login_snapshots(
    cook_dirs: &[PathBuf],
    dry_run: bool,
    failed: &mut Vec<String>,
) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in cook_dirs {
        let auth = dir.join(".auth");
        let Ok(entries) = std::fs::read_dir(&auth) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !dry_run && let Err(error) = crate::fsx::remove_tree(&path) {
                failed.push(format!("{}: {error}", path.display()));
                continue;
            }
            found.push(path);
        }
        if !dry_run {
            let _ = std::fs::remove_dir(&auth);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_login_snapshots_are_removed_and_results_kept() {
        let root = tempfile::tempdir().unwrap();
        let cook = root.path().join("251122-a");
        fs_err::create_dir_all(cook.join(".auth/p-x/claude")).unwrap();
        fs_err::write(cook.join(".auth/p-x/claude/.credentials.json"), "{}").unwrap();
        fs_err::write(cook.join("RUN_RESULT.json"), "{}").unwrap();
        let mut failed = Vec::new();
        let dry = remove_login_snapshots(std::slice::from_ref(&cook), true, &mut failed);
        assert_eq!(dry, [cook.join(".auth/p-x")]);
        assert!(cook.join(".auth/p-x/claude/.credentials.json").is_file());
        let removed = remove_login_snapshots(std::slice::from_ref(&cook), false, &mut failed);
        assert_eq!(removed, dry);
        assert!(failed.is_empty());
        assert!(!cook.join(".auth").exists());
        assert!(cook.join("RUN_RESULT.json").is_file());
    }

    #[test]
    fn keeping_results_removes_only_what_a_run_made() {
        let root = tempfile::tempdir().unwrap();
        let cook = root.path().join("251122-a");
        fs_err::create_dir_all(cook.join("work/p/out")).unwrap();
        fs_err::write(cook.join("brief.yaml"), "name: a\n").unwrap();
        fs_err::write(cook.join("summary.json"), "{}").unwrap();
        fs_err::write(cook.join("notes.txt"), "x").unwrap();
        let listed: Vec<PathBuf> = cook_dirs(root.path()).collect();
        assert_eq!(listed, std::slice::from_ref(&cook));
        remove_cook(&cook, true).unwrap();
        assert!(cook.join("brief.yaml").is_file() && cook.join("summary.json").is_file());
        assert!(!cook.join("work").exists() && !cook.join("notes.txt").exists());
        remove_cook(&cook, false).unwrap();
        assert!(!cook.exists());
    }
}
