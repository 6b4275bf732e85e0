//! What a refine round is (`multicooker refine`, docs/BEHAVIOR.md §10.19): round N+1 on top of
//! each selected participant's previous output, with shared feedback (`FEEDBACK.md` or a file
//! given) and personal feedback (`FEEDBACK_<participant>.md`, else `FEEDBACK_<flavor>.md`).
//!
//! Nothing is lost: before anything runs, each participant's round-N output is copied to
//! `rounds/<N>/<participant>/` (and the sealed inbox to `rounds/<N>/_inbox/`). Round numbers
//! never skip: a refine that died leaves no `REFINE_<N>_RESULT.json`, so the next one runs the
//! same round again, starting from the snapshot it took, not from whatever the dead run left in
//! `out/`. Other participants' cells stay in status.json.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::{CellsCooked, Round, Run};
use crate::brief::Brief;
use crate::cook::Refine;
use crate::error::UserError;
use crate::fsx::{self, CopyOptions};
use crate::state::{CookPaths, now_iso};

/// The feedback every participant of a round gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedFeedback {
    /// Its text (empty: none).
    pub text: String,
    /// The cook's FEEDBACK.md, when it was looked for and is missing.
    pub missing: Option<PathBuf>,
}

/// The shared feedback: `file`, else the cook's FEEDBACK.md (none when it is missing, which
/// [`SharedFeedback::missing`] says).
///
/// # Errors
/// `file` cannot be read.
pub fn shared_feedback(
    paths: &CookPaths,
    file: Option<&Path>,
) -> Result<SharedFeedback, UserError> {
    if let Some(path) = file {
        let text = fs_err::read_to_string(path).map_err(|e| {
            UserError::new(
                format!("cannot read the feedback file `{}`: {e}", path.display()),
                "pass an existing file to --feedback",
            )
        })?;
        return Ok(SharedFeedback {
            text,
            missing: None,
        });
    }
    let path = paths.dir().join("FEEDBACK.md");
    Ok(match std::fs::read_to_string(&path) {
        Ok(text) => SharedFeedback {
            text,
            missing: None,
        },
        Err(_) => SharedFeedback {
            text: String::new(),
            missing: Some(path),
        },
    })
}

/// Prepares round `previous + 1` for `selected`: takes (or puts back) round `previous`'s
/// snapshot, writes each participant's prompt, and records the round in `REFINE_<N>.json`.
/// The caller holds the cook's run lock.
///
/// # Errors
/// The cook folder cannot be copied, read or written.
pub fn prepare(
    paths: &CookPaths,
    brief: &Brief,
    selected: &[String],
    previous: u32,
    shared: &str,
) -> std::io::Result<Refine> {
    let round = previous + 1;
    snapshot(paths, selected, previous)?;
    let prompts = prompts(paths, brief, selected, round, shared)?;
    fsx::write_json_atomic(
        &paths.dir().join(format!("REFINE_{round}.json")),
        &json!({"started_at": now_iso(), "round_num": round, "prev_round": previous, "participants": selected, "timeout_s": brief.timeout_s, "snapshot": format!("rounds/{previous}")}),
    )?;
    Ok(Refine { round, prompts })
}

/// Runs the round `refine` prepared for `selected` in their flavors' images.
///
/// # Errors
/// As [`super::cook::cells`].
pub async fn cells(
    run: &Run<'_>,
    selected: &[String],
    refine: Refine,
) -> anyhow::Result<CellsCooked> {
    let round = Round {
        phase: "refine",
        refine: Some(refine),
        ..Round::default()
    };
    super::cook::cells(run, selected, round).await
}

/// Replaces `to` with a copy of `from` (links not followed, seal-ignored files left out).
fn copy_clean(from: &Path, to: &Path) -> std::io::Result<()> {
    fsx::remove_tree(to)?;
    fsx::copy_tree_no_follow(
        from,
        to,
        &CopyOptions {
            ignore: fsx::SEAL_IGNORE,
            max_bytes: u64::MAX,
            read_only: false,
            share: true,
        },
    )
    .map(|_| ())
}

/// Takes round `previous`'s snapshot, or, when an earlier attempt at this round already took
/// it, puts it back into `out/`.
fn snapshot(paths: &CookPaths, participants: &[String], previous: u32) -> std::io::Result<()> {
    let round_dir = paths.dir().join("rounds").join(previous.to_string());
    for participant in participants {
        let kept = round_dir.join(participant);
        if kept.is_dir() {
            let out = paths.out(participant);
            fsx::remove_tree(&out)?;
            copy_clean(&kept, &out)?;
        } else {
            copy_clean(&paths.out(participant), &kept)?;
        }
    }
    if paths.inbox().is_dir() && !round_dir.join("_inbox").is_dir() {
        copy_clean(&paths.inbox(), &round_dir.join("_inbox"))?;
    }
    Ok(())
}

/// The refine prompt: the round, the rules, the feedback, then the brief.
fn refine_prompt(round: u32, shared: &str, personal: Option<&str>, brief_md: &str) -> String {
    let previous = round - 1;
    let mut parts = vec![
        format!(
            "This is round {round} of the brief below. ./out/ holds your round {previous} result: improve it in place.\n\n\
- Address the feedback below; keep what already works.\n- Stay inside this worktree; ./raw/ is read-only reference.\n\
- Add a section \"Round {round} changes\" to ./out/RESULT.md listing what you changed and why.\n- When you are done, just exit."
        ),
        "# Shared feedback (applies to all participants)".to_owned(),
        if shared.trim().is_empty() {
            "(none provided)".to_owned()
        } else {
            shared.trim().to_owned()
        },
    ];
    if let Some(personal) = personal.filter(|p| !p.trim().is_empty()) {
        parts.push("# Personal feedback (addressed specifically to you)".to_owned());
        parts.push(personal.trim().to_owned());
    }
    parts.push(format!("---\n\n# BRIEF.md\n\n{brief_md}"));
    parts.join("\n\n")
}

/// Each selected participant's prompt for `round`, with its personal feedback
/// (`FEEDBACK_<participant>.md`, else `FEEDBACK_<flavor>.md`).
fn prompts(
    paths: &CookPaths,
    brief: &Brief,
    selected: &[String],
    round: u32,
    shared: &str,
) -> std::io::Result<BTreeMap<String, String>> {
    let brief_md = fs_err::read_to_string(paths.brief_md())?;
    let mut prompts = BTreeMap::new();
    for participant in brief
        .participants
        .iter()
        .filter(|p| selected.contains(&p.name))
    {
        let personal = [&participant.name, &participant.flavor]
            .iter()
            .find_map(|n| {
                std::fs::read_to_string(paths.dir().join(format!("FEEDBACK_{n}.md"))).ok()
            });
        prompts.insert(
            participant.name.clone(),
            refine_prompt(round, shared, personal.as_deref(), &brief_md),
        );
    }
    Ok(prompts)
}
