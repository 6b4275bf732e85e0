//! The nightly config (YAML): which briefs (cook templates), which participants and judges,
//! how many repeats, and where history lives. Errors name the file, the field and the fix.
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

use serde_json::{Map, Value};

use crate::brief::{KNOWN_FLAVORS, check_actor_name, suggest};

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

const KEYS: &[&str] = &[
    "name",
    "briefs",
    "participants",
    "judges",
    "repeats",
    "history",
    "cooks_root",
    "judging",
    "verify",
    "webhook",
    "seed",
    "backend",
    "budget",
];

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

#[expect(clippy::too_many_lines, reason = "one check per field, in file order")]
fn parse(file: &Path, folders: &Folders<'_>, value: &Value) -> Result<Nightly, ConfigError> {
    let base = folders.base;
    let mut problems = Vec::new();
    let Some(map) = value.as_object() else {
        return Err(ConfigError {
            file: file.to_path_buf(),
            problems: vec![
                "must be a mapping of `name`, `briefs`, `participants`, `judges` …".into(),
            ],
        });
    };
    for key in map.keys().filter(|k| !KEYS.contains(&k.as_str())) {
        let hint = suggest(key, KEYS.iter().copied()).map_or_else(
            || format!("allowed: {}", KEYS.join(", ")),
            |s| format!("did you mean `{s}`?"),
        );
        problems.push(format!("`{key}`: unknown field ({hint})"));
    }
    let name = name_of(map, &mut problems);
    let briefs: Vec<PathBuf> = match map.get("briefs").and_then(Value::as_array) {
        Some(items) if !items.is_empty() => items
            .iter()
            .enumerate()
            .flat_map(|(i, item)| {
                let Some(path) = item.as_str() else {
                    problems.push(format!("`briefs[{i}]`: must be a folder path"));
                    return Vec::new();
                };
                brief_folders(
                    &format!("briefs[{i}]"),
                    &resolve(folders, path),
                    &mut problems,
                )
            })
            .collect(),
        _ => {
            problems.push("`briefs`: a non-empty list of cook template folders".into());
            Vec::new()
        }
    };
    let mut named = std::collections::BTreeMap::<String, &Path>::new();
    for brief in &briefs {
        let name = super::brief_name(brief);
        if let Some(first) = named.insert(name.clone(), brief) {
            problems.push(format!(
                "`briefs`: two briefs are named `{name}` (`{}` and `{}`), and a night's cook folders are named after their brief; rename one folder",
                first.display(),
                brief.display()
            ));
        }
    }
    let flavors = Flavors::of(&briefs);
    let participants = arms(
        map.get("participants"),
        ("participants", &flavors),
        true,
        &mut problems,
    );
    let judges = arms(map.get("judges"), ("judges", &flavors), true, &mut problems);
    let repeats = match map.get("repeats") {
        None => 1,
        Some(v) => {
            if let Some(n) = v.as_u64().filter(|n| (1..=100).contains(n)) {
                u32::try_from(n).unwrap_or(1)
            } else {
                {
                    problems.push(format!(
                        "`repeats`: must be a whole number from 1 to 100, not {v}"
                    ));
                    1
                }
            }
        }
    };
    let judging = match map.get("judging") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            problems.push("`judging`: must be a mapping, e.g. `{mode: pairwise}`".into());
            Map::new()
        }
    };
    let verify = match map.get("verify") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            problems.push("`verify`: must be a mapping of brief.yaml `verify:` defaults, e.g. `{timeout_s: 900}`".into());
            Map::new()
        }
    };
    let webhook = match map.get("webhook") {
        None => None,
        Some(w) => match w.get("url").and_then(Value::as_str) {
            Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
                Some(url.to_owned())
            }
            _ => {
                problems.push("`webhook`: must be `{url: \"https://…\"}`".into());
                None
            }
        },
    };
    let seed = match map.get("seed") {
        None => None,
        Some(v) => {
            let seed = v.as_u64();
            if seed.is_none() {
                problems.push(format!("`seed`: must be a whole number, not {v}"));
            }
            seed
        }
    };
    let backend = match map.get("backend") {
        None => None,
        Some(Value::String(b)) if b == "docker" => Some(crate::runtime::BackendKind::Docker),
        Some(Value::String(b)) if b == "swarm" => Some(crate::runtime::BackendKind::Swarm),
        Some(v) => {
            problems.push(format!(
                "`backend`: must be `docker` or `swarm`, not {v} (`--backend` overrides it)"
            ));
            None
        }
    };
    let budget = map
        .get("budget")
        .and_then(|v| super::budget::parse_night(v, &mut problems));
    let history = map.get("history").and_then(Value::as_str).map_or_else(
        || {
            folders
                .home
                .join(".local/share/multicooker")
                .join(format!("{name}.sqlite"))
        },
        |p| resolve(folders, p),
    );
    let cooks_root = map
        .get("cooks_root")
        .and_then(Value::as_str)
        .map_or_else(|| base.join("cooks"), |p| resolve(folders, p));
    if !problems.is_empty() {
        return Err(ConfigError {
            file: file.to_path_buf(),
            problems,
        });
    }
    Ok(Nightly {
        name,
        file: file.to_path_buf(),
        briefs,
        participants,
        judges,
        repeats,
        history,
        cooks_root,
        judging,
        verify,
        webhook,
        seed,
        backend,
        budget,
    })
}

/// The briefs one `briefs:` entry stands for: a cook template (a folder with brief.yaml), a
/// Harbor task (`task.toml` and `instruction.md`), or a Harbor dataset (a folder of tasks, each
/// a brief of the night). Each task is read and checked here, so a refused key stops the night
/// before anything runs.
fn brief_folders(at: &str, dir: &Path, problems: &mut Vec<String>) -> Vec<PathBuf> {
    if dir.join("brief.yaml").is_file() {
        return vec![dir.to_path_buf()];
    }
    let tasks = match crate::harbor::dataset(dir) {
        Ok(tasks) => tasks,
        Err(
            crate::harbor::HarborError::EmptyDataset { .. }
            | crate::harbor::HarborError::Read { .. },
        ) => {
            problems.push(format!(
                "`{at}`: `{}` has no brief.yaml and is neither a Harbor task (task.toml and instruction.md) nor a folder of Harbor tasks (point it at a cook template folder such as examples/hello-task, a Harbor task, or a dataset folder)",
                dir.display()
            ));
            return Vec::new();
        }
        Err(e) => {
            problems.push(format!("`{at}`: {}", with_fix(&e)));
            return Vec::new();
        }
    };
    tasks
        .into_iter()
        .filter(|task| match crate::harbor::load(task) {
            Ok(_) => true,
            Err(e) => {
                problems.push(format!(
                    "`{at}`: Harbor task `{}`: {}",
                    task.display(),
                    with_fix(&e)
                ));
                false
            }
        })
        .collect()
}

fn with_fix(error: &crate::harbor::HarborError) -> String {
    use crate::error::Hint as _;
    error
        .hint()
        .map_or_else(|| error.to_string(), |fix| format!("{error} ({fix})"))
}

fn name_of(map: &Map<String, Value>, problems: &mut Vec<String>) -> String {
    let Some(name) = map.get("name").and_then(Value::as_str) else {
        problems.push("`name`: required, e.g. `name: models-nightly`".into());
        return String::new();
    };
    if let Err((problem, hint)) = check_actor_name(name) {
        problems.push(format!("`name`: `{name}` {problem} ({hint})"));
        return String::new();
    }
    name.to_owned()
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

fn arms(
    value: Option<&Value>,
    (field, flavors): (&str, &Flavors),
    required: bool,
    problems: &mut Vec<String>,
) -> Vec<Arm> {
    let Some(items) = value.and_then(Value::as_array).filter(|i| !i.is_empty()) else {
        if required {
            problems.push(format!(
                "`{field}`: a non-empty list of `{{name, flavor, model?}}`"
            ));
        }
        return Vec::new();
    };
    let mut arms: Vec<Arm> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let (Some(name), Some(flavor)) = (
            item.get("name").and_then(Value::as_str),
            item.get("flavor").and_then(Value::as_str),
        ) else {
            problems.push(format!("`{at}`: needs `name` and `flavor`"));
            continue;
        };
        if let Err((problem, hint)) = check_actor_name(name) {
            problems.push(format!("`{at}.name`: `{name}` {problem} ({hint})"));
        }
        if let Some(problem) = flavors.problem(field, flavor) {
            problems.push(format!("`{at}.flavor`: {problem}"));
        }
        if arms.iter().any(|a| a.name == name) {
            problems.push(format!("`{at}.name`: `{name}` is listed twice"));
        }
        for key in item.as_object().into_iter().flat_map(Map::keys) {
            if !["name", "flavor", "model", "timeout_s", "budget"].contains(&key.as_str()) {
                problems.push(format!(
                    "`{at}.{key}`: unknown field (allowed: name, flavor, model, timeout_s, budget)"
                ));
            }
        }
        let budget = item
            .get("budget")
            .and_then(|v| super::budget::parse_cap(&format!("{at}.budget"), v, &[], problems));
        arms.push(Arm {
            name: name.to_owned(),
            flavor: flavor.to_owned(),
            model: item.get("model").and_then(Value::as_str).map(str::to_owned),
            timeout_s: item.get("timeout_s").and_then(Value::as_u64),
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
}
