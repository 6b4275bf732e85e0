//! Every path of a cook folder, in one place (docs/BEHAVIOR.md §2.3), and how a task name on the
//! command line becomes a cook folder.

use std::path::{Path, PathBuf};

use super::StateError;

/// A cook file or folder that a cell may be shown (copied into it, never linked). Only the
/// `share_*` methods of [`CookPaths`] make one, each for material prepared for cells: there is
/// none for the label mapping, `judging/_*` host files, `.auth/` or hidden material, so no
/// role's cell can be given them (a type, not a comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shareable(PathBuf);

impl Shareable {
    /// The host path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// The cook's hidden material (`verify/`: tests, fixtures, expected outputs, the runner). Only
/// [`CookPaths::hidden`] makes one, and only a verifier's files
/// ([`VerifierFiles`](crate::cell::files::VerifierFiles)) accept it: no other role's cell can be
/// given it, and no [`Shareable`] names anything under `verify/` (a type, not a comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hidden(PathBuf);

impl Hidden {
    /// The host folder.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// The paths of one cook folder. The folder name is the cook's identity: it names the cook in
/// status.json, events, summary.json and every engine object's label.
#[derive(Debug, Clone)]
pub struct CookPaths {
    dir: PathBuf,
    name: String,
    /// The session's namespace (`--namespace`), part of [`CookPaths::root_id`].
    namespace: Option<String>,
}

impl CookPaths {
    /// Paths of the cook folder `dir` (which need not exist yet), in the default namespace.
    pub fn new(dir: PathBuf) -> Self {
        let name = dir
            .file_name()
            .map_or_else(|| "cook".to_owned(), |n| n.to_string_lossy().into_owned());
        Self {
            dir,
            name,
            namespace: None,
        }
    }

    /// The same paths seen from `namespace` (a checked one: [`check_namespace`]).
    #[must_use]
    pub fn in_namespace(mut self, namespace: Option<&str>) -> Self {
        self.namespace = namespace.map(str::to_owned);
        self
    }

    /// The namespace these paths are seen from.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The cook folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder name: the cook's identity.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A short hash identifying the folder that holds this cook (the root) and the namespace,
    /// so objects of cooks under different roots or namespaces can be told apart.
    pub fn root_id(&self) -> String {
        root_id_in(
            self.dir.parent().unwrap_or(Path::new("/")),
            self.namespace.as_deref(),
        )
    }

    /// `brief.yaml`.
    pub fn brief_yaml(&self) -> PathBuf {
        self.dir.join("brief.yaml")
    }
    /// `BRIEF.md`: the task, given to participants and judges.
    pub fn brief_md(&self) -> PathBuf {
        self.dir.join("BRIEF.md")
    }
    /// `JUDGE_BRIEF.md`: the rubric and output format for judges.
    pub fn judge_brief_md(&self) -> PathBuf {
        self.dir.join("JUDGE_BRIEF.md")
    }
    /// `raw/`: reference material, mounted read-only.
    pub fn raw(&self) -> PathBuf {
        self.dir.join("raw")
    }
    /// `verify/`: the hidden material, next to brief.yaml. Never staged into a participant,
    /// judge, reviewer or chef cell, never archived unless asked.
    pub fn verify_dir(&self) -> PathBuf {
        self.dir.join(VERIFY_DIR)
    }
    /// The hidden material, for a verifier cell only.
    pub fn hidden(&self) -> Hidden {
        Hidden(self.verify_dir())
    }
    /// A Harbor task's `tests/` (`task` is its folder in the cook): its verifier's, hidden
    /// from every participant like `verify/`.
    pub fn harbor_tests(&self, task: &str) -> Hidden {
        Hidden(self.dir.join(task).join("tests"))
    }
    /// A Harbor task's `solution/`: the oracle's input, and no other cell's.
    pub fn harbor_solution(&self, task: &str) -> Shareable {
        Shareable(self.dir.join(task).join("solution"))
    }
    /// `verification/`: what the verifier cells gave back, per participant (a name that cannot
    /// be taken for the hidden `verify/` folder).
    pub fn verification(&self) -> PathBuf {
        self.dir.join("verification")
    }
    /// `verification/<participant>/`: its result file, its results area and its logs.
    pub fn verification_of(&self, participant: &str) -> PathBuf {
        self.verification().join(participant)
    }
    /// `verification/_previous/`: earlier results, kept when a verification runs again.
    pub fn verification_previous(&self) -> PathBuf {
        self.verification().join("_previous")
    }
    /// `work/<participant>/`.
    pub fn work(&self, participant: &str) -> PathBuf {
        self.dir.join("work").join(participant)
    }
    /// `work/<participant>/out/`: the participant's only writable mount.
    pub fn out(&self, participant: &str) -> PathBuf {
        self.work(participant).join("out")
    }
    /// `work/<participant>/PROMPT.txt`.
    pub fn prompt(&self, participant: &str) -> PathBuf {
        self.work(participant).join("PROMPT.txt")
    }
    /// `work/<participant>/trace.json`: host-side record of the participant's last run.
    pub fn trace(&self, participant: &str) -> PathBuf {
        self.work(participant).join("trace.json")
    }
    /// `logs/<participant>/`.
    pub fn logs(&self, participant: &str) -> PathBuf {
        self.dir.join("logs").join(participant)
    }
    /// `attempts/round-<round>/<participant>/`: earlier outputs kept when a cell runs again.
    pub fn attempts(&self, round: u32, participant: &str) -> PathBuf {
        self.dir
            .join("attempts")
            .join(format!("round-{round}"))
            .join(participant)
    }
    /// `.auth/`: per-cell login snapshots (never committed, never archived).
    /// (Older versions kept login snapshots here; none is written now, `clean` removes it.)
    pub fn auth_root(&self) -> PathBuf {
        self.dir.join(".auth")
    }
    /// `judging/`.
    pub fn judging(&self) -> PathBuf {
        self.dir.join("judging")
    }
    /// `judging/_inbox/`: sealed outputs.
    pub fn inbox(&self) -> PathBuf {
        self.judging().join("_inbox")
    }
    /// `judging/_inbox/<participant>/`.
    pub fn sealed(&self, participant: &str) -> PathBuf {
        self.inbox().join(participant)
    }
    /// BRIEF.md, for every role.
    pub fn share_brief_md(&self) -> Shareable {
        Shareable(self.brief_md())
    }
    /// `JUDGE_BRIEF.md`, for judges.
    pub fn share_judge_brief_md(&self) -> Shareable {
        Shareable(self.judge_brief_md())
    }
    /// raw/, reference material for every role.
    pub fn share_raw(&self) -> Shareable {
        Shareable(self.raw())
    }
    /// A participant's sealed output (`judging/_inbox/<participant>/out/`), for its own
    /// verifier cell.
    pub fn share_sealed_out(&self, participant: &str) -> Shareable {
        Shareable(self.sealed(participant).join("out"))
    }
    /// A participant's own previous output (a refine round edits it).
    pub fn share_out(&self, participant: &str) -> Shareable {
        Shareable(self.out(participant))
    }
    /// One of `PROMPT.txt`, `RUBRIC.json`, `PROBE.json`, `submissions` of a judge's work
    /// folder, which holds only copies under that judge's labels.
    pub fn share_judge_work(&self, judge: &str, item: &str) -> Shareable {
        debug_assert!(
            ["PROMPT.txt", "RUBRIC.json", "PROBE.json", "submissions"].contains(&item),
            "only what inbox::build_work prepares for the judge"
        );
        Shareable(self.judge_work(judge).join(item))
    }
    /// `PROMPT.txt` or `candidate` of a reviewer's work folder (`consult/_work-<reviewer>/`).
    pub fn share_consult_work(&self, reviewer: &str, item: &str) -> Shareable {
        debug_assert!(["PROMPT.txt", "candidate"].contains(&item));
        Shareable(self.consult_work(reviewer).join(item))
    }
    /// A chef's anonymized input (`chef/<chef>/input/`: normalized copies, ranking by label).
    pub fn share_chef_input(&self, chef: &str) -> Shareable {
        Shareable(self.chef_input(chef))
    }
    /// `consult/_work-<reviewer>/`.
    pub fn consult_work(&self, reviewer: &str) -> PathBuf {
        self.dir.join("consult").join(format!("_work-{reviewer}"))
    }
    /// `chef/<chef>/input/`.
    pub fn chef_input(&self, chef: &str) -> PathBuf {
        self.dir.join("chef").join(chef).join("input")
    }
    /// `judging/_mapping.json`: label → participant per judge. Host only, never mounted.
    pub fn mapping(&self) -> PathBuf {
        self.judging().join("_mapping.json")
    }
    /// `judging/_work-<judge>/`: the judge's inbox, outbox and prompt.
    pub fn judge_work(&self, judge: &str) -> PathBuf {
        self.judging().join(format!("_work-{judge}"))
    }
    /// `judging/_logs/<judge>/`.
    pub fn judge_logs(&self, judge: &str) -> PathBuf {
        self.judging().join("_logs").join(judge)
    }
    /// `judging/<judge>/`: the judge's collected outbox and `scores_deanon.json`.
    pub fn judge_dir(&self, judge: &str) -> PathBuf {
        self.judging().join(judge)
    }
    /// `judging/_previous/`: earlier judge outputs, kept when judging runs again.
    pub fn judging_previous(&self) -> PathBuf {
        self.judging().join("_previous")
    }
    /// `status.json`.
    pub fn status(&self) -> PathBuf {
        self.dir.join("status.json")
    }
    /// `events.jsonl`.
    pub fn events(&self) -> PathBuf {
        self.dir.join("events.jsonl")
    }
    /// `.mc-lock`: guards status read-modify-write and event appends.
    pub fn lock(&self) -> PathBuf {
        self.dir.join(".mc-lock")
    }
    /// `RUN.json`.
    pub fn run_json(&self) -> PathBuf {
        self.dir.join("RUN.json")
    }
    /// `RUN_RESULT.json`.
    pub fn run_result(&self) -> PathBuf {
        self.dir.join("RUN_RESULT.json")
    }
    /// `JUDGE_RESULT.json`.
    pub fn judge_result(&self) -> PathBuf {
        self.dir.join("JUDGE_RESULT.json")
    }
    /// `leaderboard.md`.
    pub fn leaderboard(&self) -> PathBuf {
        self.dir.join("leaderboard.md")
    }
    /// `summary.json`.
    pub fn summary(&self) -> PathBuf {
        self.dir.join("summary.json")
    }
    /// `.gitignore` of the cook.
    pub fn gitignore(&self) -> PathBuf {
        self.dir.join(".gitignore")
    }
}

/// The hidden material's folder name in a cook.
pub const VERIFY_DIR: &str = "verify";

/// The namespace `--namespace` (or `MULTICOOKER_NAMESPACE`) names, checked; an empty one is
/// none.
pub fn check_namespace(namespace: Option<&str>) -> Result<Option<String>, StateError> {
    let namespace = namespace.map(str::trim).filter(|n| !n.is_empty());
    if let Some(ns) = namespace
        && (ns.len() > 32
            || !ns
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return Err(StateError::BadTaskName {
            task: ns.to_owned(),
            problem: "is no namespace: use up to 32 letters, digits, `-` and `_`",
        });
    }
    Ok(namespace.map(str::to_owned))
}

/// [`root_id_in`] the default namespace.
pub fn root_id(root: &Path) -> String {
    root_id_in(root, None)
}

/// A short hash of a cooks folder's canonical path, and of the namespace when there is one:
/// engine names and labels derive from it, so namespaces never share an object.
pub fn root_id_in(root: &Path, namespace: Option<&str>) -> String {
    use sha2::Digest;
    let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut key = canonical.to_string_lossy().into_owned();
    if let Some(namespace) = namespace {
        key = format!("{namespace}\n{key}");
    }
    let digest = sha2::Sha256::digest(key.as_bytes());
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// Resolves `--root`: an absolute path as is; a relative one is looked up in the current
/// directory and then in each ancestor (the first existing folder wins), else it is taken
/// relative to the current directory (docs/BEHAVIOR.md §1.1).
pub fn resolve_root(root: &Path, cwd: &Path) -> PathBuf {
    if root.is_absolute() {
        return root.to_path_buf();
    }
    cwd.ancestors()
        .map(|dir| dir.join(root))
        .find(|candidate| candidate.is_dir())
        .unwrap_or_else(|| cwd.join(root))
}

/// Finds an existing cook folder for `task`: `<root>/<task>`, an absolute path, or, when
/// `task` has no `YYMMDD-` date prefix, the newest `<root>/YYMMDD-<task>`; seen from
/// `namespace`.
pub fn find_cook(
    root: &Path,
    task: &str,
    namespace: Option<&str>,
) -> Result<CookPaths, StateError> {
    let direct = if Path::new(task).is_absolute() {
        PathBuf::from(task)
    } else {
        root.join(task)
    };
    if !Path::new(task).is_absolute() {
        check_task_name(task)?;
    }
    if direct.is_dir() {
        return Ok(CookPaths::new(canonical(direct)).in_namespace(namespace));
    }
    if !has_date_prefix(task)
        && let Some(dated) = newest_dated(root, task)
    {
        return Ok(CookPaths::new(canonical(dated)).in_namespace(namespace));
    }
    Err(StateError::NoCook {
        dir: direct,
        task: task.to_owned(),
        suggestion: closest_cook(root, task),
    })
}

/// A cook folder by its real path: a cook reached through a symbolic link runs, and is found by
/// `status` and `clean`, under its own folder's name and root, whichever name reached it (issue
/// 25: a run started through a link was missed under the real name after a SIGKILL).
fn canonical(dir: PathBuf) -> PathBuf {
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// The existing cook name closest to a mistyped `task`: compared with the folder names, and
/// with their names without the date when `task` has none (`mits` finds `251122-mist` as
/// `mist`).
fn closest_cook(root: &Path, task: &str) -> Option<String> {
    let names: Vec<String> = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .filter(|entry| entry.path().join("brief.yaml").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .map(|name| {
            if !has_date_prefix(task) && has_date_prefix(&name) {
                undated(&name).to_owned()
            } else {
                name
            }
        })
        .collect();
    crate::error::suggest(task, names.iter().map(String::as_str)).map(str::to_owned)
}

/// A task name is one folder name: no separators, no `..`, no leading dot.
pub fn check_task_name(task: &str) -> Result<(), StateError> {
    let problem = if task.is_empty() {
        Some("is empty")
    } else if task.contains('/') || task.contains('\\') {
        Some("may not contain a path separator")
    } else if task.starts_with('.') {
        Some("may not start with `.`")
    } else if task.chars().any(char::is_control) {
        Some("may not contain control characters")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(StateError::BadTaskName {
            task: task.to_owned(),
            problem,
        }),
        None => Ok(()),
    }
}

/// True when `name` starts with a date: six digits and `-` (`251122-hello`), or six digits, `.`,
/// the day's sequence number and `-` (`251122.2-hello`, the second `new hello` of that day).
pub fn has_date_prefix(name: &str) -> bool {
    date_prefix(name).is_some()
}

/// `(date, sequence, length of the prefix)` of a dated name: `251122-hello` is
/// `("251122", 1, 7)`, `251122.2-hello` is `("251122", 2, 9)`.
pub fn date_prefix(name: &str) -> Option<(&str, u32, usize)> {
    let bytes = name.as_bytes();
    if bytes.len() < 8 || !bytes[..6].iter().all(u8::is_ascii_digit) {
        return None;
    }
    match bytes[6] {
        b'-' => Some((&name[..6], 1, 7)),
        b'.' => {
            let digits = bytes[7..].iter().take_while(|b| b.is_ascii_digit()).count();
            let end = 7 + digits;
            let sequence: u32 = name.get(7..end)?.parse().ok()?;
            (digits > 0 && bytes.get(end) == Some(&b'-') && bytes.len() > end + 1).then_some((
                &name[..6],
                sequence,
                end + 1,
            ))
        }
        _ => None,
    }
}

/// The name without its date prefix (`hello` for `251122.2-hello`), or the name itself.
pub fn undated(name: &str) -> &str {
    date_prefix(name).map_or(name, |(_, _, len)| &name[len..])
}

/// The newest `<root>/<date>[.<sequence>]-<task>`: latest date, then highest sequence.
fn newest_dated(root: &Path, task: &str) -> Option<PathBuf> {
    let mut matches: Vec<((String, u32), PathBuf)> = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let (date, sequence, len) = date_prefix(&name)?;
            (&name[len..] == task && entry.path().is_dir())
                .then(|| ((date.to_owned(), sequence), entry.path()))
        })
        .collect();
    matches.sort();
    matches.pop().map(|(_, path)| path)
}

#[cfg(test)]
mod tests {
    /// The "Try it" line run twice in a day: the second `new hello` is `<day>.2-hello`, and
    /// `hello` then means the newest (`.10` after `.9`, a later day after both).
    #[test]
    fn a_day_sequence_is_part_of_the_date_and_the_newest_is_found() {
        use super::{date_prefix, find_cook, undated};
        assert_eq!(date_prefix("251122-hello"), Some(("251122", 1, 7)));
        assert_eq!(date_prefix("251122.12-hello"), Some(("251122", 12, 10)));
        for plain in [
            "251122",
            "251122-",
            "251122.-x",
            "251122.2x-y",
            "25112a-x",
            "hello",
        ] {
            assert_eq!(date_prefix(plain), None, "{plain}");
        }
        assert_eq!(undated("251122.2-hello"), "hello");
        let root = tempfile::tempdir().unwrap();
        for name in [
            "251122-hello",
            "251122.9-hello",
            "251122.10-hello",
            "251121.30-hello",
            "251122.11-hello-2",
        ] {
            std::fs::create_dir(root.path().join(name)).unwrap();
        }
        let found = find_cook(root.path(), "hello", None).unwrap();
        assert_eq!(found.name(), "251122.10-hello");
        std::fs::create_dir(root.path().join("251123-hello")).unwrap();
        assert_eq!(
            find_cook(root.path(), "hello", None).unwrap().name(),
            "251123-hello"
        );
    }

    #[test]
    fn a_cook_reached_through_a_link_is_the_real_folder() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("251126-real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, root.path().join("251126-alias")).unwrap();
        let other = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&real, other.path().join("251126-away")).unwrap();
        let by_real = super::find_cook(root.path(), "real", None).unwrap();
        for (dir, task) in [
            (root.path(), "251126-alias"),
            (root.path(), "alias"),
            (other.path(), "away"),
        ] {
            let found = super::find_cook(dir, task, None).unwrap();
            assert_eq!(found.name(), "251126-real", "{task}");
            assert_eq!(found.dir(), by_real.dir(), "{task}");
            assert_eq!(found.root_id(), by_real.root_id(), "{task}");
        }
    }

    use super::*;

    #[test]
    fn undated_task_finds_newest_dated_folder() {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["251120-hello", "251122-hello", "251121-hello-world"] {
            fs_err::create_dir_all(tmp.path().join(name)).unwrap();
        }
        let cook = find_cook(tmp.path(), "hello", None).unwrap();
        assert_eq!(cook.name(), "251122-hello");
        assert_eq!(
            find_cook(tmp.path(), "251120-hello", None).unwrap().name(),
            "251120-hello"
        );
        assert!(matches!(
            find_cook(tmp.path(), "nope", None),
            Err(StateError::NoCook { .. })
        ));
    }

    #[test]
    fn a_mistyped_task_gets_the_closest_cook_as_a_suggestion() {
        use crate::error::Hint as _;
        let tmp = tempfile::tempdir().unwrap();
        for name in ["251122-mist", "251122-hello", "990101-other"] {
            fs_err::create_dir_all(tmp.path().join(name)).unwrap();
            fs_err::write(tmp.path().join(name).join("brief.yaml"), "").unwrap();
        }
        let error = find_cook(tmp.path(), "mits", None).unwrap_err();
        assert_eq!(error.hint().unwrap(), "did you mean `mist`?");
        let error = find_cook(tmp.path(), "251122-hellp", None).unwrap_err();
        assert_eq!(error.hint().unwrap(), "did you mean `251122-hello`?");
        let error = find_cook(tmp.path(), "zzzz", None).unwrap_err();
        assert!(error.hint().unwrap().contains("multicooker new zzzz"));
    }

    #[test]
    fn task_names_cannot_escape_the_root() {
        for bad in ["../x", "a/b", ".hidden", ""] {
            assert!(check_task_name(bad).is_err(), "{bad} accepted");
        }
        assert!(check_task_name("251122-hello").is_ok());
    }
}
