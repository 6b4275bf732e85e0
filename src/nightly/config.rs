//! The nightly config (YAML): which briefs (cook templates), which participants and judges,
//! how many repeats, and where history lives. Errors name the file, the field and the fix.
//!
//! The keys and kinds are declared once as [`crate::schema`] tables (`TOP`, `ARM`, `WEBHOOK` and
//! the night's `budget::NIGHT_BUDGET`); the walker reports every problem at once, and the
//! checked document is read with serde. Only what a table cannot say is code: brief folders and
//! Harbor datasets on disk, two briefs with one name, flavors against the templates, the
//! oracle's rule, names, paths against the config's folder, the webhook's scheme.
//!
//! ```yaml
//! name: models-nightly
//! briefs: [../examples/hello-task, briefs/refactor]   # templates (brief.yaml, BRIEF.md, JUDGE_BRIEF.md), Harbor tasks or datasets
//! participants:
//!   - {name: claude, flavor: claude, model: opus}
//!   - {name: codex, flavor: codex}
//!   # - {name: oracle, flavor: oracle}   # a task's solution, when every brief is a Harbor task
//! judges:
//!   - {name: agy-judge, flavor: agy}
//! repeats: 2
//! history: ~/.local/share/multicooker/models-nightly.sqlite   # default
//! cooks_root: cooks                                          # default, next to this file
//! judging: {mode: pairwise}                                  # optional, merged into every brief
//! verify: {timeout_s: 900}                                   # optional, defaults of briefs with verify/
//! webhook: {url: "https://hooks.example/nightly"}            # optional
//! seed: 7                                                    # optional
//! budget: {tokens: 20000000, usd: 200, on_exhausted: finish} # optional, the whole night
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::brief::{KNOWN_FLAVORS, check_actor_name};
use crate::schema::{
    self, Field, Kind, Problem, REQUIRED, TOP_LEVEL, UNKNOWN_FIELD, Wrong, kind_of,
};

/// One participant or judge of the nightly.
#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    /// Its name (as in brief.yaml).
    pub name: String,
    /// Its flavor.
    pub flavor: String,
    /// Its model, if pinned.
    pub model: Option<String>,
    /// Its own timeout (arms with unequal timeouts make a night not comparable).
    pub timeout_s: Option<u64>,
    /// Its cap per cell (`budget:` of its brief entry).
    pub budget: Option<crate::brief::Budget>,
}

/// A parsed nightly config.
#[derive(Debug, Clone, PartialEq)]
pub struct Nightly {
    /// The config's name (history and cook names derive from it).
    pub name: String,
    /// The config file.
    pub file: PathBuf,
    /// Brief templates, absolute.
    pub briefs: Vec<PathBuf>,
    /// Participants.
    pub participants: Vec<Arm>,
    /// Judges.
    pub judges: Vec<Arm>,
    /// Cooks per brief.
    pub repeats: u32,
    /// The `SQLite` history store.
    pub history: PathBuf,
    /// Where the night's cooks go.
    pub cooks_root: PathBuf,
    /// `judging:` keys merged into every brief.
    pub judging: Map<String, Value>,
    /// `verify:` defaults of every brief that has hidden tests (its own keys win).
    pub verify: Map<String, Value>,
    /// Where to POST the night's summary.
    pub webhook: Option<String>,
    /// Seed of the label shuffles and the blinding probe's permutations (default: derived from
    /// the night).
    pub seed: Option<u64>,
    /// Where the night's cells run when neither `--backend` nor `MULTICOOKER_BACKEND` says.
    pub backend: Option<crate::runtime::BackendKind>,
    /// The night's spending cap over every cell, and what happens to running cells once it is
    /// reached.
    pub budget: Option<super::budget::NightBudget>,
}

/// The config's keys and kinds; what a table cannot say (briefs on disk, flavors against the
/// templates, names, paths, the webhook's scheme) is checked on [`Doc`] by [`parse`].
const TOP: Kind = Kind::Map(&[
    Field::required("name", Kind::Str, "required, e.g. `name: models-nightly`"),
    Field::required("briefs", Kind::List(&Kind::Str), BRIEFS),
    Field::required("participants", Kind::List(&Kind::Map(ARM)), ARMS),
    Field::required("judges", Kind::List(&Kind::Map(ARM)), ARMS),
    Field::new(
        "repeats",
        Kind::Range {
            min: 1,
            max: 100,
            what: "a whole number from 1 to 100",
        },
    ),
    Field::new("history", Kind::Str),
    Field::new("cooks_root", Kind::Str),
    Field::new("judging", Kind::Check(mapping))
        .explained("a mapping", "e.g. `judging: {mode: pairwise}`"),
    Field::new("verify", Kind::Check(mapping)).explained(
        "a mapping of brief.yaml `verify:` defaults",
        "e.g. `verify: {timeout_s: 900}`",
    ),
    Field::new("webhook", Kind::Map(WEBHOOK)).explained("a mapping", WEBHOOK_EXAMPLE),
    Field::new("seed", Kind::Count),
    Field::new(
        "backend",
        Kind::Choice {
            noun: "backend",
            names: &["docker", "swarm"],
        },
    )
    .explained("`docker` or `swarm`", "`--backend` overrides it"),
    Field::new("budget", super::budget::NIGHT_BUDGET).explained(
        "a mapping",
        "e.g. `budget: {tokens: 20000000, usd: 200, on_exhausted: finish}`",
    ),
]);

/// An entry of `participants:` or `judges:`; its `budget:` is a brief's, judged by
/// [`crate::brief::check_budget`].
const ARM: &[Field] = &[
    Field::required(
        "name",
        Kind::Str,
        "required, e.g. `{name: claude, flavor: claude}`",
    ),
    Field::required(
        "flavor",
        Kind::Str,
        "required, e.g. `{name: claude, flavor: claude}`",
    ),
    Field::new("model", Kind::Str),
    Field::new("timeout_s", Kind::PosInt),
    Field::new("budget", Kind::Any),
];

const WEBHOOK: &[Field] = &[Field::required(
    "url",
    Kind::Str,
    "required, e.g. `webhook: {url: \"https://hooks.example/nightly\"}`",
)];

/// What a missing or empty `briefs:` says.
const BRIEFS: &str = "a non-empty list of cook template folders";
/// What a missing or empty `participants:` or `judges:` says.
const ARMS: &str = "a non-empty list of `{name, flavor, model?}`";

/// How a webhook is written.
const WEBHOOK_EXAMPLE: &str = "e.g. `webhook: {url: \"https://hooks.example/nightly\"}`";

/// The fix of a config that is no mapping.
const TOP_FIX: &str = "a mapping of `name`, `briefs`, `participants`, `judges` …";

/// A mapping of keys another file defines (brief.yaml's `judging:` and `verify:`).
fn mapping(value: &Value) -> Result<(), Wrong> {
    if value.is_object() {
        Ok(())
    } else {
        Err((format!("must be a mapping, not {}", kind_of(value)), None))
    }
}

/// The config as [`TOP`] checked it: every value here has its declared kind.
#[derive(Debug, Deserialize)]
struct Doc {
    name: Option<String>,
    briefs: Option<Vec<Option<String>>>,
    participants: Option<Vec<Option<ArmDoc>>>,
    judges: Option<Vec<Option<ArmDoc>>>,
    repeats: Option<u32>,
    history: Option<String>,
    cooks_root: Option<String>,
    judging: Option<Map<String, Value>>,
    verify: Option<Map<String, Value>>,
    webhook: Option<WebhookDoc>,
    seed: Option<u64>,
    backend: Option<Backend>,
    budget: Option<Value>,
}

/// `backend:` as [`TOP`] checked it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Backend {
    Docker,
    Swarm,
}

/// An entry of `participants:` or `judges:` as [`ARM`] checked it.
#[derive(Debug, Deserialize)]
struct ArmDoc {
    name: Option<String>,
    flavor: Option<String>,
    model: Option<String>,
    timeout_s: Option<u64>,
    budget: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct WebhookDoc {
    url: Option<String>,
}

/// A config that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("`{}` is invalid:\n{}", .file.display(), .problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
pub struct ConfigError {
    /// The config file.
    pub file: PathBuf,
    /// One line per problem: field, what is wrong, the fix.
    pub problems: Vec<String>,
}

crate::hint_source!(ConfigError);

impl crate::error::Hint for ConfigError {
    fn hint(&self) -> Option<String> {
        Some("fix each field as said; `multicooker nightly --help` shows a full example".into())
    }
}

/// The folders a config's paths are relative to.
struct Folders<'a> {
    /// The config's own folder.
    base: &'a Path,
    /// The user's home (`~`).
    home: &'a Path,
}

/// Expands `~/` and makes `path` absolute against the config's folder.
fn resolve(folders: &Folders<'_>, path: &str) -> PathBuf {
    let base = folders.base;
    if let Some(rest) = path.strip_prefix("~/") {
        return folders.home.join(rest);
    }
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// Reads and checks a nightly config; `home` (`HOME`, `.` when unset) is what `~/` and the
/// default history under `~/.local/share/multicooker` mean.
pub fn load(file: &Path, home: &Path) -> Result<Nightly, ConfigError> {
    let fail = |problem: String| ConfigError {
        file: file.to_path_buf(),
        problems: vec![problem],
    };
    let text = fs_err::read_to_string(file).map_err(|e| fail(format!("cannot be read: {e}")))?;
    let options = serde_saphyr::options! { with_snippet: false, strict_booleans: true };
    let value: Value = serde_saphyr::from_str_with_options(&text, options)
        .map_err(|e| fail(format!("is not valid YAML: {e}")))?;
    let base = file
        .canonicalize()
        .ok()
        .and_then(|f| f.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    parse(file, &Folders { base: &base, home }, &value)
}

fn parse(file: &Path, folders: &Folders<'_>, value: &Value) -> Result<Nightly, ConfigError> {
    let checked = schema::check(value, &TOP);
    let mut problems = checked.problems.clone();
    // Not a mapping: the walker said so, and there is nothing more to check.
    let nightly = if checked.value.is_object() {
        match checked.typed::<Doc>() {
            Ok(doc) => Some(nightly(file, folders, doc, &mut problems)),
            Err(problem) => {
                problems.push(problem);
                None
            }
        }
    } else {
        None
    };
    // The schema's problems and the code's, in the order of the config's keys.
    problems.sort_by_cached_key(|p| schema::rank(&TOP, &p.path));
    match nightly {
        Some(nightly) if problems.is_empty() => Ok(nightly),
        _ => Err(ConfigError {
            file: file.to_path_buf(),
            problems: problems.iter().map(line).collect(),
        }),
    }
}

/// The night a checked [`Doc`] describes, after the checks no table can make.
fn nightly(file: &Path, folders: &Folders<'_>, doc: Doc, problems: &mut Vec<Problem>) -> Nightly {
    let name = doc.name.map_or_else(String::new, |name| {
        named("name", name, problems).unwrap_or_default()
    });
    let briefs = briefs(doc.briefs, folders, problems);
    let flavors = Flavors::of(&briefs);
    let participants = arms(doc.participants, ("participants", &flavors), problems);
    let judges = arms(doc.judges, ("judges", &flavors), problems);
    let webhook = doc.webhook.and_then(|w| w.url).and_then(|url| {
        if url.starts_with("http://") || url.starts_with("https://") {
            return Some(url);
        }
        problems.push(Problem::new(
            "webhook.url",
            format!("must start with `http://` or `https://`, not `{url}`"),
            Some(WEBHOOK_EXAMPLE.into()),
        ));
        None
    });
    let budget = doc.budget.and_then(|value| {
        let reported = problems
            .iter()
            .any(|p| p.path.starts_with("budget.") && p.path != "budget.on_exhausted");
        super::budget::parse_night(&value, reported, problems)
    });
    let history = doc.history.map_or_else(
        || {
            folders
                .home
                .join(".local/share/multicooker")
                .join(format!("{name}.sqlite"))
        },
        |p| resolve(folders, &p),
    );
    Nightly {
        name,
        file: file.to_path_buf(),
        briefs,
        participants,
        judges,
        repeats: doc.repeats.unwrap_or(1),
        history,
        cooks_root: doc
            .cooks_root
            .map_or_else(|| folders.base.join("cooks"), |p| resolve(folders, &p)),
        judging: doc.judging.unwrap_or_default(),
        verify: doc.verify.unwrap_or_default(),
        webhook,
        seed: doc.seed,
        backend: doc.backend.map(|b| match b {
            Backend::Docker => crate::runtime::BackendKind::Docker,
            Backend::Swarm => crate::runtime::BackendKind::Swarm,
        }),
        budget,
    }
}

/// One problem as the config reports it: `` `field`: problem (fix) ``. A missing key says what
/// it needs; an unknown key with a likely meaning says only that.
fn line(problem: &Problem) -> String {
    let at = if problem.path == TOP_LEVEL {
        TOP_LEVEL.to_owned()
    } else {
        format!("`{}`", problem.path)
    };
    let top = || (problem.path == TOP_LEVEL).then_some(TOP_FIX);
    match problem.fix.as_deref().or_else(top) {
        // A required key's fix reads as what the key needs ("required, e.g. …").
        Some(fix) if problem.problem == REQUIRED => format!("{at}: {fix}"),
        Some(fix)
            if problem.problem.starts_with(UNKNOWN_FIELD) && fix.starts_with("did you mean") =>
        {
            format!("{at}: {UNKNOWN_FIELD} ({fix})")
        }
        Some(fix) => format!("{at}: {} ({fix})", problem.problem),
        None => format!("{at}: {}", problem.problem),
    }
}

/// `name` if it is a good name for a config, participant or judge at `at`.
fn named(at: &str, name: String, problems: &mut Vec<Problem>) -> Option<String> {
    match check_actor_name(&name) {
        Ok(()) => Some(name),
        Err((problem, fix)) => {
            problems.push(Problem::new(
                at,
                format!("`{name}` {problem}"),
                Some(fix.to_owned()),
            ));
            None
        }
    }
}

/// The brief folders of `briefs:`, absolute, each entry expanded (a Harbor dataset is many);
/// two briefs with one name are refused, since a night's cook folders are named after them.
fn briefs(
    entries: Option<Vec<Option<String>>>,
    folders: &Folders<'_>,
    problems: &mut Vec<Problem>,
) -> Vec<PathBuf> {
    let entries = entries.unwrap_or_default();
    if entries.is_empty() && !problems.iter().any(|p| p.path == "briefs") {
        problems.push(Problem::new("briefs", REQUIRED, Some(BRIEFS.into())));
    }
    let briefs: Vec<PathBuf> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, entry)| Some((i, entry.as_deref()?)))
        .flat_map(|(i, path)| {
            brief_folders(&format!("briefs[{i}]"), &resolve(folders, path), problems)
        })
        .collect();
    let mut named = std::collections::BTreeMap::<String, &Path>::new();
    for brief in &briefs {
        let name = super::brief_name(brief);
        if let Some(first) = named.insert(name.clone(), brief) {
            problems.push(Problem::new(
                "briefs",
                format!(
                    "two briefs are named `{name}` (`{}` and `{}`), and a night's cook folders are named after their brief",
                    first.display(),
                    brief.display()
                ),
                Some("rename one folder".into()),
            ));
        }
    }
    briefs
}

/// The briefs one `briefs:` entry stands for: a cook template (a folder with brief.yaml), a
/// Harbor task (`task.toml` and `instruction.md`), or a Harbor dataset (a folder of tasks, each
/// a brief of the night). Each task is read and checked here, so a refused key stops the night
/// before anything runs.
fn brief_folders(at: &str, dir: &Path, problems: &mut Vec<Problem>) -> Vec<PathBuf> {
    if dir.join("brief.yaml").is_file() {
        return vec![dir.to_path_buf()];
    }
    let tasks = match crate::harbor::dataset(dir) {
        Ok(tasks) => tasks,
        Err(
            crate::harbor::HarborError::EmptyDataset { .. }
            | crate::harbor::HarborError::Read { .. },
        ) => {
            problems.push(Problem::new(
                at,
                format!(
                    "`{}` has no brief.yaml and is neither a Harbor task (task.toml and instruction.md) nor a folder of Harbor tasks",
                    dir.display()
                ),
                Some("point it at a cook template folder such as examples/hello-task, a Harbor task, or a dataset folder".into()),
            ));
            return Vec::new();
        }
        Err(e) => {
            problems.push(harbor_problem(at, "", &e));
            return Vec::new();
        }
    };
    tasks
        .into_iter()
        .filter(|task| match crate::harbor::load(task) {
            Ok(_) => true,
            Err(e) => {
                let task = format!("Harbor task `{}`: ", task.display());
                problems.push(harbor_problem(at, &task, &e));
                false
            }
        })
        .collect()
}

/// A Harbor error at `at`, after `prefix`, with its fix.
fn harbor_problem(at: &str, prefix: &str, error: &crate::harbor::HarborError) -> Problem {
    use crate::error::Hint as _;
    Problem::new(at, format!("{prefix}{error}"), error.hint())
}

/// The flavors an arm may name: the built-in ones, and the custom ones the briefs' templates
/// define (`flavors/<name>/Dockerfile`; issue 25: a nightly refused its templates' own flavors).
/// A custom flavor must be defined by every template, since every brief's cook runs every arm.
struct Flavors {
    /// Defined by every template.
    everywhere: Vec<String>,
    /// Each custom flavor with the templates that define it.
    defined: std::collections::BTreeMap<String, Vec<PathBuf>>,
    templates: usize,
    /// Every brief is a Harbor task, so the oracle may be a participant (docs/HARBOR.md §6).
    tasks_only: bool,
}

impl Flavors {
    fn of(briefs: &[PathBuf]) -> Self {
        let mut defined = std::collections::BTreeMap::<String, Vec<PathBuf>>::new();
        for brief in briefs {
            let Ok(entries) = std::fs::read_dir(brief.join("flavors")) else {
                continue;
            };
            for entry in entries.flatten() {
                if entry.path().join("Dockerfile").is_file() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    defined.entry(name).or_default().push(brief.clone());
                }
            }
        }
        let everywhere = defined
            .iter()
            .filter(|(_, by)| by.len() == briefs.len())
            .map(|(name, _)| name.clone())
            .collect();
        Self {
            everywhere,
            defined,
            templates: briefs.len(),
            tasks_only: briefs.iter().all(|b| crate::harbor::is_task(b)),
        }
    }

    /// Why `flavor` cannot be used by an arm of `field`, if it cannot.
    fn problem(&self, field: &str, flavor: &str) -> Option<String> {
        if flavor == crate::brief::ORACLE_FLAVOR {
            return self.oracle_problem(field);
        }
        if KNOWN_FLAVORS.contains(&flavor) || self.everywhere.iter().any(|f| f == flavor) {
            return None;
        }
        if let Some(by) = self.defined.get(flavor) {
            let names: Vec<String> = by.iter().map(|b| format!("`{}`", b.display())).collect();
            return Some(format!(
                "custom flavor `{flavor}` is defined only by {} of the {} briefs ({}); every brief's template needs `flavors/{flavor}/Dockerfile`",
                by.len(),
                self.templates,
                names.join(", ")
            ));
        }
        let mut known: Vec<&str> = KNOWN_FLAVORS.to_vec();
        known.extend(self.everywhere.iter().map(String::as_str));
        Some(format!(
            "unknown flavor `{flavor}` (known: {}; a custom flavor is a template's `flavors/<name>/Dockerfile`)",
            known.join(", ")
        ))
    }

    /// The oracle runs a Harbor task's `solution/solve.sh`: a participant of nights whose
    /// every brief is a task.
    fn oracle_problem(&self, field: &str) -> Option<String> {
        if field != "participants" {
            return Some(format!(
                "the oracle (flavor `{}`) is a participant, never one of the `{field}`",
                crate::brief::ORACLE_FLAVOR
            ));
        }
        (!self.tasks_only).then(|| {
            format!(
                "the oracle (flavor `{}`) runs a Harbor task's solution, so every `briefs:` entry must be a Harbor task or a dataset of them; run it in a night of its own",
                crate::brief::ORACLE_FLAVOR
            )
        })
    }
}

/// The arms of `participants:` or `judges:` (`field`) as [`ARM`] checked them: each name a
/// good one and listed once, each flavor one every brief can run, each `budget:` a cap.
fn arms(
    items: Option<Vec<Option<ArmDoc>>>,
    (field, flavors): (&str, &Flavors),
    problems: &mut Vec<Problem>,
) -> Vec<Arm> {
    let items = items.unwrap_or_default();
    if items.is_empty() && !problems.iter().any(|p| p.path == field) {
        problems.push(Problem::new(field, REQUIRED, Some(ARMS.into())));
    }
    let mut arms: Vec<Arm> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let at = format!("{field}[{i}]");
        // A missing or bad `name` or `flavor` is reported already.
        let Some(ArmDoc {
            name: Some(name),
            flavor: Some(flavor),
            model,
            timeout_s,
            budget,
        }) = item
        else {
            continue;
        };
        if arms.iter().any(|a| a.name == name) {
            problems.push(Problem::new(
                format!("{at}.name"),
                format!("`{name}` is listed twice"),
                None,
            ));
        }
        let name = named(&format!("{at}.name"), name.clone(), problems).unwrap_or(name);
        if let Some(problem) = flavors.problem(field, &flavor) {
            problems.push(Problem::new(format!("{at}.flavor"), problem, None));
        }
        let budget = budget
            .and_then(|v| super::budget::parse_cap(&format!("{at}.budget"), &v, &[], problems));
        arms.push(Arm {
            name,
            flavor,
            model,
            timeout_s,
            budget,
        });
    }
    arms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(dir: &Path) -> PathBuf {
        let brief = dir.join("brief-a");
        fs_err::create_dir_all(&brief).unwrap();
        fs_err::write(brief.join("brief.yaml"), "name: a\n").unwrap();
        brief
    }

    #[test]
    fn a_good_config_resolves_paths_against_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        template(dir.path());
        let file = dir.path().join("nightly.yaml");
        fs_err::write(&file, "name: n\nbriefs: [brief-a]\nparticipants:\n  - {name: a, flavor: dummy, model: \"quality:3\"}\njudges:\n  - {name: j, flavor: dummy}\nrepeats: 2\nhistory: h.sqlite\njudging: {mode: pairwise}\n").unwrap();
        let nightly = load(&file, Path::new("/home/mc-test")).unwrap();
        assert_eq!(nightly.repeats, 2);
        assert_eq!(
            nightly.briefs[0],
            dir.path().canonicalize().unwrap().join("brief-a")
        );
        assert_eq!(nightly.history.file_name().unwrap(), "h.sqlite");
        assert_eq!(nightly.participants[0].model.as_deref(), Some("quality:3"));
        assert_eq!(nightly.judging["mode"], "pairwise");
    }

    /// Issue 25: a nightly refused the custom flavors its templates define.
    #[test]
    fn a_custom_flavor_every_template_defines_is_accepted_and_one_some_lack_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let a = template(dir.path());
        let b = dir.path().join("brief-b");
        fs_err::create_dir_all(&b).unwrap();
        fs_err::write(b.join("brief.yaml"), "name: b\n").unwrap();
        for (brief, flavor) in [(&a, "mine"), (&b, "mine"), (&a, "only-a")] {
            let at = brief.join("flavors").join(flavor);
            fs_err::create_dir_all(&at).unwrap();
            fs_err::write(at.join("Dockerfile"), "FROM scratch\n").unwrap();
        }
        let file = dir.path().join("nightly.yaml");
        let config = |flavor: &str| {
            format!(
                "name: n\nbriefs: [brief-a, brief-b]\nparticipants:\n  - {{name: a, flavor: {flavor}}}\njudges:\n  - {{name: j, flavor: dummy}}\n"
            )
        };
        fs_err::write(&file, config("mine")).unwrap();
        assert_eq!(
            load(&file, Path::new("/home/mc-test"))
                .unwrap()
                .participants[0]
                .flavor,
            "mine"
        );
        fs_err::write(&file, config("only-a")).unwrap();
        let error = load(&file, Path::new("/home/mc-test"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`participants[0].flavor`: custom flavor `only-a` is defined only by 1 of the 2 briefs")
                && error.contains("flavors/only-a/Dockerfile"),
            "{error}"
        );
    }

    /// Issue 26, the oracle: it runs at night as a participant of a night over Harbor tasks only.
    #[test]
    fn the_oracle_is_a_participant_of_nights_over_tasks_only() {
        let dir = tempfile::tempdir().unwrap();
        template(dir.path());
        let tasks = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/harbor");
        let file = dir.path().join("nightly.yaml");
        let config = |briefs: &str, judge: &str| {
            format!(
                "name: n\nbriefs: [{briefs}]\nparticipants:\n  - {{name: a, flavor: dummy}}\n  - {{name: oracle, flavor: oracle}}\njudges:\n  - {{name: j, flavor: {judge}}}\n"
            )
        };
        fs_err::write(&file, config(tasks, "dummy")).unwrap();
        let nightly = load(&file, Path::new("/home/mc-test")).unwrap();
        assert_eq!(nightly.participants[1].flavor, "oracle");
        for (briefs, judge, expected) in [
            (
                format!("{tasks}, brief-a"),
                "dummy",
                "`participants[1].flavor`: the oracle (flavor `oracle`) runs a Harbor task's solution",
            ),
            (
                tasks.to_owned(),
                "oracle",
                "`judges[0].flavor`: the oracle (flavor `oracle`) is a participant, never one of the `judges`",
            ),
        ] {
            fs_err::write(&file, config(&briefs, judge)).unwrap();
            let error = load(&file, Path::new("/home/mc-test"))
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "`{expected}` in:\n{error}");
        }
    }

    #[test]
    fn every_problem_names_its_field_and_fix() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("nightly.yaml");
        fs_err::write(&file, "name: n\nbrifs: []\nbriefs: [missing]\nparticipants:\n  - {name: a, flavor: nosuch}\n  - {name: a, flavor: dummy}\nrepeats: 0\n").unwrap();
        let error = load(&file, Path::new("/home/mc-test"))
            .unwrap_err()
            .to_string();
        for expected in [
            "`brifs`: unknown field (did you mean `briefs`?)",
            "`briefs[0]`:",
            "has no brief.yaml",
            "`participants[0].flavor`: unknown flavor `nosuch`",
            "`participants[1].name`: `a` is listed twice",
            "`judges`: a non-empty list",
            "`repeats`: must be a whole number from 1 to 100",
        ] {
            assert!(error.contains(expected), "`{expected}` in:\n{error}");
        }
        assert!(error.starts_with(&format!("`{}` is invalid", file.display())));
    }

    /// Issue 24: the tables and the checks no table can make report every problem at once, each
    /// at its path, in the order of the config's keys; a config with eleven mistakes shows
    /// eleven lines.
    #[test]
    fn every_mistake_is_one_line_at_its_path_all_at_once() {
        let dir = tempfile::tempdir().unwrap();
        template(dir.path());
        let file = dir.path().join("nightly.yaml");
        fs_err::write(&file, "name: n/x\nbriefs: [brief-a, 7]\nparticipants:\n  - {name: a, flavor: dummy}\n  - {name: b, flavor: dummy, timeout_s: 0, modle: m}\njudges: []\nrepeats: 0\nseed: -1\nwebhook: {url: \"ftp://x\"}\nbackend: k8s\nbudget: {tokns: 5}\njudging: pairwise\n").unwrap();
        let error = load(&file, Path::new("/home/mc-test")).unwrap_err();
        assert_eq!(
            error.problems,
            [
                "`name`: `n/x` may not contain `/` (use letters, digits, `-` and `_`, starting with a letter or digit)",
                "`briefs[1]`: must be a string, not a number",
                "`participants[1].modle`: unknown field (did you mean `model`?)",
                "`participants[1].timeout_s`: must be a positive integer, not `0`",
                "`judges`: a non-empty list of `{name, flavor, model?}`",
                "`repeats`: must be a whole number from 1 to 100, not `0`",
                "`judging`: must be a mapping, not `\"pairwise\"` (e.g. `judging: {mode: pairwise}`)",
                "`webhook.url`: must start with `http://` or `https://`, not `ftp://x` (e.g. `webhook: {url: \"https://hooks.example/nightly\"}`)",
                "`seed`: must be a whole number, not `-1`",
                "`backend`: must be `docker` or `swarm`, not `\"k8s\"` (`--backend` overrides it)",
                "`budget.tokns`: unknown field (did you mean `tokens`?)",
            ]
        );
    }

    #[test]
    fn a_config_that_is_no_mapping_says_so_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("nightly.yaml");
        fs_err::write(&file, "- name: n\n").unwrap();
        let error = load(&file, Path::new("/home/mc-test")).unwrap_err();
        assert_eq!(
            error.problems,
            [
                "(top level): must be a mapping, not a list (a mapping of `name`, `briefs`, `participants`, `judges` …)"
            ]
        );
    }

    #[test]
    fn a_missing_key_says_what_it_needs_and_a_wrong_shape_its_example() {
        let dir = tempfile::tempdir().unwrap();
        template(dir.path());
        let file = dir.path().join("nightly.yaml");
        fs_err::write(&file, "briefs: [brief-a]\nparticipants:\n  - {name: a}\njudges:\n  - {name: j, flavor: dummy, budget: {}}\nwebhook: {}\nverify: 5\nbudget: 5\n").unwrap();
        let error = load(&file, Path::new("/home/mc-test")).unwrap_err();
        assert_eq!(
            error.problems,
            [
                "`name`: required, e.g. `name: models-nightly`",
                "`participants[0].flavor`: required, e.g. `{name: claude, flavor: claude}`",
                "`judges[0].budget`: sets no cap (set `tokens`, `usd` or both, or remove `budget`)",
                "`verify`: must be a mapping of brief.yaml `verify:` defaults, not `5` (e.g. `verify: {timeout_s: 900}`)",
                "`webhook.url`: required, e.g. `webhook: {url: \"https://hooks.example/nightly\"}`",
                "`budget`: must be a mapping, not `5` (e.g. `budget: {tokens: 20000000, usd: 200, on_exhausted: finish}`)",
            ]
        );
    }

    #[test]
    fn the_optional_keys_are_read_into_the_night() {
        let dir = tempfile::tempdir().unwrap();
        template(dir.path());
        let file = dir.path().join("nightly.yaml");
        fs_err::write(&file, "name: n\nbriefs: [brief-a]\nparticipants:\n  - {name: a, flavor: dummy, timeout_s: 60}\njudges:\n  - {name: j, flavor: dummy}\nbackend: swarm\nseed: 7\nverify: {timeout_s: 900}\nwebhook: {url: \"https://hooks.example/n\"}\ncooks_root: ~/c\n").unwrap();
        let nightly = load(&file, Path::new("/home/mc-test")).unwrap();
        assert_eq!(nightly.backend, Some(crate::runtime::BackendKind::Swarm));
        assert_eq!(nightly.seed, Some(7));
        assert_eq!(nightly.verify["timeout_s"], 900);
        assert_eq!(nightly.webhook.as_deref(), Some("https://hooks.example/n"));
        assert_eq!(nightly.cooks_root, Path::new("/home/mc-test/c"));
        assert_eq!(nightly.participants[0].timeout_s, Some(60));
        assert_eq!(nightly.repeats, 1);
        assert_eq!(
            nightly.history,
            Path::new("/home/mc-test/.local/share/multicooker/n.sqlite")
        );
    }
}
