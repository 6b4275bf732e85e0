//! What a participant changed in a Harbor task's workdir, for the jury (docs/HARBOR.md, §8):
//! the files added, modified and deleted between the workdir as the environment's image had it
//! and as the participant left it (both collected by the host through the engine before and
//! after its program ran), and a bounded unified diff of the text files.
//!
//! Both trees are the host's checked copies; nothing here follows a link (a link is compared
//! as the text of its target, never read through).

use std::collections::BTreeMap;
use std::path::Path;

/// Cap on one file's part of the diff, in bytes.
pub const FILE_DIFF_CAP: usize = 32 << 10;
/// Cap on the whole diff, in bytes.
pub const DIFF_CAP: usize = 256 << 10;
/// Files larger than this are compared by content but not diffed.
const DIFF_FILE_MAX: u64 = 1 << 20;

/// How a path changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// New in the workdir.
    Added,
    /// Its content, kind or mode changed.
    Modified,
    /// Gone from the workdir.
    Deleted,
}

impl Change {
    fn sign(self) -> char {
        match self {
            Self::Added => 'A',
            Self::Modified => 'M',
            Self::Deleted => 'D',
        }
    }
}

/// The changes between two trees.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Changes {
    /// Each changed path (relative, `/`-separated), sorted.
    pub paths: Vec<(String, Change)>,
    /// The unified diff, within [`DIFF_CAP`].
    pub diff: String,
    /// Files whose diff was cut or left out (binary, too large, over the cap).
    pub not_diffed: Vec<String>,
}

/// One entry of a tree: a file's bytes, a link's target, or a folder.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    File { len: u64, executable: bool },
    Link(String),
    Folder,
}

fn entries(root: &Path) -> BTreeMap<String, Entry> {
    use std::os::unix::fs::PermissionsExt;
    let mut found = BTreeMap::new();
    if !root.is_dir() {
        return found;
    }
    for entry in walkdir::WalkDir::new(root)
        .follow_links(false)
        .min_depth(1)
        .into_iter()
        .flatten()
    {
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let relative = relative.to_string_lossy().into_owned();
        let kind = entry.file_type();
        let value = if kind.is_dir() {
            Entry::Folder
        } else if kind.is_symlink() {
            let target = std::fs::read_link(entry.path()).unwrap_or_default();
            Entry::Link(target.to_string_lossy().into_owned())
        } else if kind.is_file() {
            let meta = entry.metadata().ok();
            Entry::File {
                len: meta.as_ref().map_or(0, std::fs::Metadata::len),
                executable: meta.is_some_and(|m| m.permissions().mode() & 0o111 != 0),
            }
        } else {
            continue;
        };
        found.insert(relative, value);
    }
    found
}

fn same_file(before: &Path, after: &Path) -> bool {
    match (std::fs::read(before), std::fs::read(after)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The changes from `before` to `after` (folders of the host; a missing one is empty).
pub fn between(before: &Path, after: &Path) -> Changes {
    let old = entries(before);
    let new = entries(after);
    let mut changes = Changes::default();
    let mut names: Vec<&String> = old.keys().chain(new.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let change = match (old.get(name), new.get(name)) {
            (None | Some(Entry::Folder), None | Some(Entry::Folder)) => {
                continue;
            }
            (None, Some(_)) => Change::Added,
            (Some(_), None) => Change::Deleted,
            (Some(a), Some(b)) if a == b => {
                if matches!(a, Entry::File { .. })
                    && !same_file(&before.join(name), &after.join(name))
                {
                    Change::Modified
                } else {
                    continue;
                }
            }
            (Some(_), Some(_)) => Change::Modified,
        };
        changes.paths.push((name.clone(), change));
    }
    for (name, change) in &changes.paths {
        let part = file_diff(
            name,
            *change,
            (old.get(name), new.get(name)),
            (&before.join(name), &after.join(name)),
        );
        match part {
            Some(part) if changes.diff.len() + part.len() <= DIFF_CAP => {
                changes.diff.push_str(&part);
            }
            _ => changes.not_diffed.push(name.clone()),
        }
    }
    changes
}

/// The diff of one changed path, or `None` when it is not text or too large to diff.
fn file_diff(
    name: &str,
    change: Change,
    (old, new): (Option<&Entry>, Option<&Entry>),
    (before, after): (&Path, &Path),
) -> Option<String> {
    let text = |entry: Option<&Entry>, path: &Path| -> Option<String> {
        match entry {
            None | Some(Entry::Folder) => Some(String::new()),
            Some(Entry::Link(target)) => Some(format!("-> {target}\n")),
            Some(Entry::File { len, .. }) if *len <= DIFF_FILE_MAX => {
                let bytes = std::fs::read(path).ok()?;
                if bytes.contains(&0) {
                    return None;
                }
                String::from_utf8(bytes).ok()
            }
            Some(Entry::File { .. }) => None,
        }
    };
    let a = text(old, before)?;
    let b = text(new, after)?;
    let (from, to) = match change {
        Change::Added => ("/dev/null".to_owned(), format!("b/{name}")),
        Change::Deleted => (format!("a/{name}"), "/dev/null".to_owned()),
        Change::Modified => (format!("a/{name}"), format!("b/{name}")),
    };
    let diff = similar::TextDiff::from_lines(&a, &b);
    let mut part = format!("diff {name}\n");
    part.push_str(
        &diff
            .unified_diff()
            .context_radius(3)
            .header(&from, &to)
            .to_string(),
    );
    if part.len() > FILE_DIFF_CAP {
        let mut cut = FILE_DIFF_CAP;
        while !part.is_char_boundary(cut) {
            cut -= 1;
        }
        part.truncate(cut);
        part.push_str(&format!(
            "\n[multicooker: the diff of {name} is cut at {} KiB]\n",
            FILE_DIFF_CAP >> 10
        ));
    }
    Some(part)
}

/// `CHANGES.md`: the changed paths, what was not diffed, and where the diff is.
pub fn changes_md(changes: &Changes, workdir: &str, diff_file: &str) -> String {
    let mut text = format!("# What changed in `{workdir}`\n\n");
    if changes.paths.is_empty() {
        text.push_str("Nothing: the workdir is as the task's environment had it.\n");
        return text;
    }
    text.push_str("A = added, M = modified, D = deleted.\n\n");
    for (path, change) in &changes.paths {
        text.push_str(&format!("- {} `{path}`\n", change.sign()));
    }
    text.push_str(&format!("\nThe unified diff is in `{diff_file}`"));
    if changes.not_diffed.is_empty() {
        text.push_str(".\n");
    } else {
        text.push_str(
            "; these are not in it (binary, over 1 MiB, or past the diff's 256 KiB cap):\n\n",
        );
        for path in &changes.not_diffed {
            text.push_str(&format!("- `{path}`\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, bytes: &[u8]) {
        let path = root.join(path);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, bytes).unwrap();
    }

    #[test]
    fn added_modified_deleted_and_unchanged_files_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let (before, after) = (dir.path().join("b"), dir.path().join("a"));
        write(&before, "keep.txt", b"same\n");
        write(&before, "edit.py", b"x = 1\ny = 2\n");
        write(&before, "gone.txt", b"bye\n");
        write(&after, "keep.txt", b"same\n");
        write(&after, "edit.py", b"x = 1\ny = 3\n");
        write(&after, "src/new.rs", b"fn main() {}\n");
        write(&after, "blob.bin", b"\0\x01\x02");
        let changes = between(&before, &after);
        assert_eq!(
            changes.paths,
            [
                ("blob.bin".to_owned(), Change::Added),
                ("edit.py".to_owned(), Change::Modified),
                ("gone.txt".to_owned(), Change::Deleted),
                ("src/new.rs".to_owned(), Change::Added),
            ]
        );
        assert!(
            changes.diff.contains("-y = 2\n+y = 3\n"),
            "{}",
            changes.diff
        );
        assert!(
            changes.diff.contains("+++ b/src/new.rs"),
            "{}",
            changes.diff
        );
        assert!(changes.diff.contains("--- a/gone.txt"), "{}", changes.diff);
        assert_eq!(changes.not_diffed, ["blob.bin"]);
        let md = changes_md(&changes, "/app", "changes.diff");
        assert!(
            md.contains("- M `edit.py`") && md.contains("- `blob.bin`"),
            "{md}"
        );
    }

    #[test]
    fn a_huge_change_is_cut_within_the_caps() {
        let dir = tempfile::tempdir().unwrap();
        let (before, after) = (dir.path().join("b"), dir.path().join("a"));
        fs_err::create_dir_all(&before).unwrap();
        let line = "a line of text that is long enough to add up quickly\n";
        for i in 0..20 {
            write(
                &after,
                &format!("f{i:02}.txt"),
                line.repeat(1000).as_bytes(),
            );
        }
        let changes = between(&before, &after);
        assert_eq!(changes.paths.len(), 20);
        assert!(changes.diff.len() <= DIFF_CAP, "{}", changes.diff.len());
        assert!(changes.diff.contains("is cut at 32 KiB"));
        assert!(!changes.not_diffed.is_empty(), "past the total cap");
        assert!(between(&before, &before).paths.is_empty());
        let md = changes_md(&between(&before, &before), "/app", "changes.diff");
        assert!(md.contains("Nothing"), "{md}");
    }
}
