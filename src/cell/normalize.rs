//! Normalizing before another cell sees an output (judges, reviewers, the chef): what betrays the
//! author is removed from the copies, so a judge scores the work, not the vendor. Vendor files and
//! folders (CLAUDE.md, AGENTS.md, GEMINI.md, `.claude/`, `.codex/`, `.gemini/` …), session logs and
//! "Co-Authored-By" / "Generated with" trailer lines go; everything stripped is listed in the
//! host-side record (`judging/_normalized.json`, then summary.json). The sealed inbox itself is
//! never changed: the copy shares its files (hard links, `CopyOptions::share`), and a file that
//! loses lines is written anew over its name, never in place.

use std::io;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::fsx::{self, CopyOptions};

/// File names that name their vendor, at any depth.
const VENDOR_FILES: &[&str] = &[
    "CLAUDE.md",
    "CLAUDE.local.md",
    "AGENTS.md",
    "AGENTS.override.md",
    "GEMINI.md",
    "GROK.md",
    ".claude.json",
    ".mcp.json",
];

/// Folder names that are a vendor's own state, at any depth.
const VENDOR_DIRS: &[&str] = &[
    ".claude", ".codex", ".gemini", ".grok", ".agy", ".cursor", ".aider",
];

/// Text files larger than this are left as they are (trailers live in small text files).
const MAX_TEXT_BYTES: u64 = 4 << 20;

/// Session logs and transcripts a CLI may leave in its output.
static SESSION_LOG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(session|transcript|rollout|conversation|chat)[-_.].*\.(jsonl|json|log|md)$")
        .expect("a valid regex")
});

/// Attribution trailers: `Co-Authored-By: …` and `Generated with/by <assistant>` lines.
static TRAILER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\W*(co-authored-by:.*|.*\bgenerated (with|by)\b.*\b(claude|anthropic|codex|openai|chatgpt|gpt-?\d|gemini|google|antigravity|grok|xai|copilot)\b.*)$",
    )
    .expect("a valid regex")
});

/// Copies a sealed output into `dest` without what betrays its author, and lists what was
/// stripped (paths relative to the sealed folder; folders end in `/`).
pub fn normalized_copy(sealed: &Path, dest: &Path) -> io::Result<Vec<String>> {
    fsx::remove_tree(dest)?;
    let options = CopyOptions {
        ignore: &[],
        max_bytes: u64::MAX,
        read_only: false,
        share: true,
    };
    fsx::copy_tree_no_follow(sealed, dest, &options)?;
    let mut stripped = Vec::new();
    let mut walker = walkdir::WalkDir::new(dest)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
        .into_iter();
    while let Some(entry) = walker.next() {
        let entry = entry.map_err(io::Error::other)?;
        let name = entry.file_name().to_string_lossy();
        let relative = entry
            .path()
            .strip_prefix(dest)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        if entry.file_type().is_dir() {
            if VENDOR_DIRS.contains(&name.as_ref()) {
                walker.skip_current_dir();
                fsx::remove_tree(entry.path())?;
                stripped.push(format!("{relative}/"));
            }
            continue;
        }
        if VENDOR_FILES.contains(&name.as_ref()) || SESSION_LOG.is_match(&name) {
            fs_err::remove_file(entry.path())?;
            stripped.push(relative);
            continue;
        }
        if relative != "meta.json"
            && entry.metadata().is_ok_and(|m| m.len() <= MAX_TEXT_BYTES)
            && let Some(lines) = strip_trailers(entry.path())?
        {
            stripped.push(format!(
                "{relative}: {lines} attribution line{}",
                if lines == 1 { "" } else { "s" }
            ));
        }
    }
    Ok(stripped)
}

/// Removes attribution lines from a UTF-8 text file; how many went, if any.
fn strip_trailers(path: &Path) -> io::Result<Option<usize>> {
    let bytes = fs_err::read(path)?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(None);
    };
    let mut removed = 0;
    let kept: String = text
        .split_inclusive('\n')
        .filter(|line| {
            let trailer = TRAILER.is_match(line.trim_end_matches(['\n', '\r']));
            removed += usize::from(trailer);
            !trailer
        })
        .collect();
    if removed == 0 {
        return Ok(None);
    }
    // A new file over the name: the old one is shared with the sealed copy.
    fsx::write_atomic(path, kept.as_bytes())?;
    Ok(Some(removed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_files_session_logs_and_trailers_are_stripped_and_listed() {
        let dir = tempfile::tempdir().unwrap();
        let sealed = dir.path().join("sealed");
        let write = |relative: &str, text: &str| {
            let path = sealed.join(relative);
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(path, text).unwrap();
        };
        write("meta.json", "{\"exit_class\": \"ok\"}");
        write(
            "out/RESULT.md",
            "answer\n\nCo-Authored-By: Claude <noreply@anthropic.com>\n🤖 Generated with [Claude Code](https://claude.com/claude-code)\nGenerated with care by hand\nend\n",
        );
        write("out/CLAUDE.md", "# project memory");
        write("out/sub/AGENTS.md", "agents");
        write("out/.codex/sessions/x.jsonl", "{}");
        write("out/.gemini/settings.json", "{}");
        write("out/rollout-2026-11-22.jsonl", "{}");
        write("out/src/main.rs", "fn main() {}\n");
        let dest = dir.path().join("dest");
        let stripped = normalized_copy(&sealed, &dest).unwrap();
        assert_eq!(
            stripped,
            [
                "out/.codex/",
                "out/.gemini/",
                "out/CLAUDE.md",
                "out/RESULT.md: 2 attribution lines",
                "out/rollout-2026-11-22.jsonl",
                "out/sub/AGENTS.md",
            ]
        );
        assert_eq!(
            fs_err::read_to_string(dest.join("out/RESULT.md")).unwrap(),
            "answer\n\nGenerated with care by hand\nend\n",
            "only attribution lines go"
        );
        assert!(dest.join("out/src/main.rs").is_file());
        assert!(!dest.join("out/.codex").exists() && !dest.join("out/CLAUDE.md").exists());
        assert!(
            sealed.join("out/CLAUDE.md").is_file(),
            "the sealed inbox is untouched"
        );
    }

    #[test]
    fn binary_files_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let sealed = dir.path().join("sealed/out");
        fs_err::create_dir_all(&sealed).unwrap();
        let bytes = b"\xff\xfeCo-Authored-By: x\n".to_vec();
        fs_err::write(sealed.join("blob.bin"), &bytes).unwrap();
        let dest = dir.path().join("dest");
        assert!(
            normalized_copy(&dir.path().join("sealed"), &dest)
                .unwrap()
                .is_empty()
        );
        assert_eq!(fs_err::read(dest.join("out/blob.bin")).unwrap(), bytes);
    }
}
