//! A cook's rounds: the latest with a result ([`latest`]), and two of them compared. Round k of
//! a participant is `rounds/<k>/<participant>/`, or, for the latest round, the live
//! `work/<participant>/out/`; [`changes`] says which files were added, removed or changed
//! between two of them (by size and SHA-256, links not followed).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::CookPaths;

/// Relative path → (size, SHA-256) of every regular file under a folder.
pub type Files = BTreeMap<String, (u64, String)>;

/// One file that differs between two rounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// `added`, `changed` or `removed`.
    pub kind: &'static str,
    /// The path inside the participant's output, as the participant named it (not sanitized).
    pub path: String,
    /// Its size in the earlier round, if it was there.
    pub bytes_before: Option<u64>,
    /// Its size in the later round, if it is there.
    pub bytes_after: Option<u64>,
}

/// The latest round with a result: N of the highest `REFINE_<N>_RESULT.json`, else 1 when
/// `RUN_RESULT.json` exists.
#[must_use]
pub fn latest(paths: &CookPaths) -> Option<u32> {
    let refined = std::fs::read_dir(paths.dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("REFINE_")?
                .strip_suffix("_RESULT.json")?
                .parse::<u32>()
                .ok()
        })
        .max();
    refined.or_else(|| paths.run_result().is_file().then_some(1))
}

/// Relative path → size and SHA-256 of every regular file (links are not followed).
#[must_use]
pub fn files(root: &Path) -> Files {
    use sha2::Digest as _;
    walkdir::WalkDir::new(root)
        .follow_links(false)
        .min_depth(1)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let bytes = std::fs::read(e.path()).ok()?;
            let relative = e
                .path()
                .strip_prefix(root)
                .ok()?
                .to_string_lossy()
                .into_owned();
            let digest: String = sha2::Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            Some((relative, (bytes.len() as u64, digest)))
        })
        .collect()
}

/// Where a participant's output of `round` is (`latest`: the cook's latest round).
#[must_use]
pub fn round_dir(paths: &CookPaths, round: u32, latest: u32, participant: &str) -> Option<PathBuf> {
    let kept = paths
        .dir()
        .join("rounds")
        .join(round.to_string())
        .join(participant);
    if kept.is_dir() {
        Some(kept)
    } else if round == latest {
        Some(paths.out(participant)).filter(|p| p.is_dir())
    } else {
        None
    }
}

/// The files added, changed or removed from `before` to `after`, sorted by path.
#[must_use]
pub fn changes(before: &Files, after: &Files) -> Vec<Change> {
    let change = |kind, path: &String, bytes_before, bytes_after| Change {
        kind,
        path: path.clone(),
        bytes_before,
        bytes_after,
    };
    let mut changes = Vec::new();
    for (path, (size, hash)) in after {
        match before.get(path) {
            None => changes.push(change("added", path, None, Some(*size))),
            Some((old, old_hash)) if old_hash != hash => {
                changes.push(change("changed", path, Some(*old), Some(*size)));
            }
            Some(_) => {}
        }
    }
    for (path, (size, _)) in before {
        if !after.contains_key(path) {
            changes.push(change("removed", path, Some(*size), None));
        }
    }
    changes.sort_by(|x, y| x.path.cmp(&y.path));
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_changed_and_removed_files_are_told_apart() {
        let entry = |size: u64, hash: &str| (size, hash.to_owned());
        let before: Files = [
            ("a".to_owned(), entry(1, "x")),
            ("b".to_owned(), entry(2, "y")),
            ("c".to_owned(), entry(3, "z")),
        ]
        .into();
        let after: Files = [
            ("a".to_owned(), entry(1, "x")),
            ("b".to_owned(), entry(5, "w")),
            ("d".to_owned(), entry(4, "v")),
        ]
        .into();
        let found = changes(&before, &after);
        let seen: Vec<(&str, &str, Option<u64>, Option<u64>)> = found
            .iter()
            .map(|c| (c.kind, c.path.as_str(), c.bytes_before, c.bytes_after))
            .collect();
        assert_eq!(
            seen,
            [
                ("changed", "b", Some(2), Some(5)),
                ("removed", "c", Some(3), None),
                ("added", "d", None, Some(4)),
            ]
        );
    }
}
