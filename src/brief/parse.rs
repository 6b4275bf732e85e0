//! Strict checking of a parsed `brief.yaml` tree into a [`Brief`]: the declared schema
//! (`schema.rs`) checks every key and kind, then what no table can say is checked here on the
//! typed document. Every problem names its field (`participants[1].name`), says what is wrong
//! and, where one exists, the fix. All problems are collected, so one run shows everything to
//! correct.

use serde_json::Value;

use super::model::{
    Actor, Brief, DEFAULT_JUDGE_TIMEOUT_S, DEFAULT_TIMEOUT_S, Dimension, Judging, JudgingMode,
    JudgingPolicy, Network, NetworkMode, Outputs, OverBudget, Profile, RequiredOutput, Resources,
    Rubric,
};
use super::names::check_actor_name;
use super::schema::{
    ActorDoc, BriefDoc, DIMENSIONS_FIX, DimensionDoc, JudgingDoc, NetworkDoc, OutputsDoc,
    RequiredDoc, ResourcesDoc, RubricDoc,
};
use super::{KNOWN_FLAVORS, Problem};
use crate::error::suggest;
use crate::schema::join;

/// Collects problems while checking.
#[derive(Default)]
pub(super) struct Checker {
    pub(super) problems: Vec<Problem>,
    pub(super) warnings: Vec<String>,
    /// Flavors the cook defines itself (`flavors/<name>/Dockerfile`).
    pub(super) custom_flavors: Vec<String>,
}

impl Checker {
    pub(super) fn problem(
        &mut self,
        field: impl Into<String>,
        problem: impl Into<String>,
        hint: Option<String>,
    ) {
        self.problems.push(Problem {
            field: field.into(),
            problem: problem.into(),
            hint,
        });
    }

    /// No problem was found at `field` or under it (so its semantic checks make sense).
    pub(super) fn clean(&self, field: &str) -> bool {
        !self.problems.iter().any(|p| {
            p.field == field
                || p.field
                    .strip_prefix(field)
                    .is_some_and(|rest| rest.starts_with(['.', '[']))
        })
    }
}

impl From<crate::schema::Problem> for Problem {
    fn from(p: crate::schema::Problem) -> Self {
        Self {
            field: p.path,
            problem: p.problem,
            hint: p.fix,
        }
    }
}

/// Checks the whole tree.
pub(super) fn check(root: &Value, checker: &mut Checker) -> Option<Brief> {
    let schema = crate::schema::check(root, &super::schema::BRIEF);
    checker
        .problems
        .extend(schema.problems.iter().cloned().map(Problem::from));
    if !root.is_object() {
        return None;
    }
    let doc: BriefDoc = match schema.typed() {
        Ok(doc) => doc,
        Err(problem) => {
            checker.problems.push(problem.into());
            return None;
        }
    };
    // Whether the file gives a key at all (`verify.tests`), even one the schema refused.
    let has = |path: &str| {
        path.split('.')
            .try_fold(root, |value, key| value.get(key))
            .is_some()
    };
    if has("harbor") {
        // A Harbor cook's built-in participant: the task's reference solution, no CLI.
        checker.custom_flavors.push(super::ORACLE_FLAVOR.to_owned());
    }
    let brief = check_doc(doc, &has, checker);
    // The schema's problems and the code's, in the order of the file's sections.
    checker
        .problems
        .sort_by_cached_key(|p| crate::schema::rank(&super::schema::BRIEF, &p.field));
    let brief = brief?;
    warn_about_self_judging(&brief, checker);
    Some(brief)
}

/// The typed document's own checks, in file order.
fn check_doc(doc: BriefDoc, has: &dyn Fn(&str) -> bool, checker: &mut Checker) -> Option<Brief> {
    let name = doc.name.and_then(|n| check_brief_name(n, checker));
    let participants = check_actors("participants", doc.participants, checker);
    let judges = check_actors("judges", doc.judges, checker);
    check_unique_names(&participants, &judges, checker);
    let rubric = doc.rubric.and_then(|r| check_rubric(r, checker));
    if rubric.is_none() && !judges.is_empty() && !has("rubric") {
        checker.problem(
            "rubric",
            "is required when `judges` is set",
            Some(
                "add `rubric: {scale: [0, 5], dimensions: [{id: correctness, weight: 100}]}`"
                    .into(),
            ),
        );
    }
    let judging = doc
        .judging
        .map_or_else(Judging::default, |j| check_judging(j, checker));
    let outputs = doc
        .outputs
        .map_or_else(Outputs::default, |o| check_outputs(o, checker));
    let verify = doc
        .verify
        .map(|v| super::verify::check_verify(v, has, checker));
    let scoring = doc
        .scoring
        .and_then(|s| super::verify::check_scoring(&s, has("verify") || has("harbor"), checker));
    let flavors: Vec<&str> = participants
        .iter()
        .chain(&judges)
        .map(|a| a.flavor.as_str())
        .collect();
    let budget = super::budget::check("budget", doc.budget, &flavors, checker);
    let harbor = doc
        .harbor
        .and_then(|h| super::harbor::check(h, has("verify"), checker));
    if !checker.problems.is_empty() {
        return None;
    }
    Some(Brief {
        name: name?,
        timeout_s: doc.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S),
        judge_timeout_s: doc.judge_timeout_s.unwrap_or(DEFAULT_JUDGE_TIMEOUT_S),
        participants,
        judges,
        rubric,
        judging,
        outputs,
        resources: resources(doc.resources),
        network: doc.network.map(network).unwrap_or_default(),
        consult: doc.consult,
        verify,
        scoring,
        budget,
        harbor,
    })
}

fn check_brief_name(name: String, checker: &mut Checker) -> Option<String> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed == "PLACEHOLDER" || name.chars().any(char::is_control) {
        checker.problem(
            "name",
            format!("`{name}` is not a usable name"),
            Some("use a short task name such as `hello-task`".into()),
        );
        return None;
    }
    Some(name)
}

fn check_actors(
    list: &str,
    items: Option<Vec<Option<ActorDoc>>>,
    checker: &mut Checker,
) -> Vec<Actor> {
    let Some(items) = items else {
        return Vec::new();
    };
    if list == "participants" && items.is_empty() {
        checker.problem(
            list,
            "must not be empty",
            Some(format!(
                "add at least one `- name: <name>` entry to `{list}`"
            )),
        );
    }
    items
        .into_iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let actor = check_actor(&format!("{list}[{i}]"), item?, checker)?;
            check_judge_network(list, i, &actor, checker);
            Some(actor)
        })
        .collect()
}

fn check_actor(field: &str, doc: ActorDoc, checker: &mut Checker) -> Option<Actor> {
    let name_field = join(field, "name");
    let name = doc.name?;
    if let Err((problem, hint)) = check_actor_name(&name) {
        checker.problem(
            &name_field,
            format!("`{}` {problem}", name.escape_debug()),
            Some(hint.into()),
        );
        return None;
    }
    let named = doc.flavor.is_some();
    let flavor = doc.flavor.unwrap_or_else(|| name.clone());
    check_flavor(&join(field, "flavor"), &flavor, named, checker);
    let budget = super::budget::check(
        &join(field, "budget"),
        doc.budget,
        &[flavor.as_str()],
        checker,
    );
    Some(Actor {
        name,
        flavor,
        timeout_s: doc.timeout_s,
        model: doc.model.filter(|m| !m.is_empty()),
        resources: resources(doc.resources),
        network: doc.network.map(network),
        budget,
    })
}

/// A flavor multicooker knows or the cook defines; `named` says whether the entry names it
/// (else it is the entry's name).
fn check_flavor(field: &str, flavor: &str, named: bool, checker: &mut Checker) {
    if KNOWN_FLAVORS.contains(&flavor) || checker.custom_flavors.iter().any(|f| f == flavor) {
        return;
    }
    let known = KNOWN_FLAVORS.join(", ");
    let hint = suggest(flavor, KNOWN_FLAVORS.iter().copied()).map_or_else(
        || format!("known flavors: {known} (or add `flavors/{flavor}/Dockerfile` to the cook)"),
        |s| format!("did you mean `{s}`? (known flavors: {known})"),
    );
    let problem = if named {
        format!("unknown flavor `{flavor}`")
    } else {
        format!("unknown flavor `{flavor}` (the flavor defaults to the name)")
    };
    checker.problem(field, problem, Some(hint));
}

/// Names are unique across participants and judges, ignoring case: they name folders, status
/// cells and engine objects (which are lower-case).
fn check_unique_names(participants: &[Actor], judges: &[Actor], checker: &mut Checker) {
    let mut seen: Vec<(String, String)> = Vec::new();
    let all = participants
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("participants[{i}].name"), a));
    let all = all.chain(
        judges
            .iter()
            .enumerate()
            .map(|(i, a)| (format!("judges[{i}].name"), a)),
    );
    for (field, actor) in all {
        let key = actor.name.to_ascii_lowercase();
        if let Some((first, _)) = seen.iter().find(|(_, k)| *k == key) {
            checker.problem(
                field,
                format!("`{}` is already used by `{first}`", actor.name),
                Some("give every participant and judge a different name (case is ignored)".into()),
            );
        } else {
            seen.push((field, key));
        }
    }
}

/// A judge never needs the internet: `open` is refused, and its allowlist is its vendor's API.
fn check_judge_network(list: &str, index: usize, actor: &Actor, checker: &mut Checker) {
    if list != "judges" {
        return;
    }
    if let Some(network) = &actor.network {
        if network.mode == NetworkMode::Open {
            checker.problem(
                format!("judges[{index}].network"),
                "judges may not have open egress",
                Some("use `none`, or `allowlist`, which gives a judge its vendor's API and nothing else".into()),
            );
        } else if !network.allow.is_empty() {
            checker.problem(
                format!("judges[{index}].network.allow"),
                "judges reach only their vendor's API",
                Some("remove `allow` from the judge".into()),
            );
        }
    }
}

/// `network: none|allowlist|open` or `network: {mode, allow: [host:port], allow_private}`,
/// already checked by the schema.
pub(super) fn network(doc: NetworkDoc) -> Network {
    let mode = |text: &str| NetworkMode::parse(text).unwrap_or_default();
    match doc {
        NetworkDoc::Mode(text) => Network {
            mode: mode(&text),
            ..Network::default()
        },
        NetworkDoc::Full {
            mode: text,
            allow,
            allow_private,
            web_tools,
        } => Network {
            mode: text.as_deref().map(mode).unwrap_or_default(),
            allow: allow
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|a| normalize_target(&a))
                .collect(),
            allow_private: allow_private.unwrap_or(false),
            web_tools: web_tools.unwrap_or(false),
        },
    }
}

/// `host:port`, lower-cased, with a plain host name or IP and a port from 1 to 65535.
pub fn normalize_target(text: &str) -> Option<String> {
    let (host, port) = text.trim().rsplit_once(':')?;
    let port: u16 = port.parse().ok().filter(|p| *p > 0)?;
    let host = host.to_ascii_lowercase();
    let plain = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    plain.then(|| format!("{host}:{port}"))
}

fn check_rubric(doc: RubricDoc, checker: &mut Checker) -> Option<Rubric> {
    let dimensions = doc.dimensions?;
    if dimensions.is_empty() {
        checker.problem(
            "rubric.dimensions",
            "must be a non-empty list",
            Some(DIMENSIONS_FIX.into()),
        );
        return None;
    }
    let mut kept: Vec<Dimension> = Vec::new();
    for (i, item) in dimensions.into_iter().enumerate() {
        let field = format!("rubric.dimensions[{i}].id");
        let Some(DimensionDoc {
            id: Some(id),
            weight,
        }) = item
        else {
            continue;
        };
        if id.trim().is_empty() || id.chars().any(char::is_control) {
            checker.problem(field, "must be a non-empty name", None);
        } else if kept.iter().any(|d| d.id == id) {
            checker.problem(field, format!("`{id}` is a duplicate id"), None);
        } else if let Some(weight) = weight {
            let weight = u32::try_from(weight).unwrap_or(u32::MAX);
            kept.push(Dimension { id, weight });
        }
    }
    if !checker.clean("rubric.dimensions") {
        return None;
    }
    let sum: u64 = kept.iter().map(|d| u64::from(d.weight)).sum();
    if sum != 100 {
        checker.problem(
            "rubric.dimensions",
            format!("weights sum to {sum}, expected 100"),
            Some("adjust the `weight:` values so they add up to 100".into()),
        );
        return None;
    }
    Some(Rubric {
        scale: doc.scale.unwrap_or((0, 5)),
        dimensions: kept,
    })
}

fn check_judging(doc: JudgingDoc, checker: &mut Checker) -> Judging {
    let judging = Judging {
        policy: doc
            .policy
            .and_then(|p| JudgingPolicy::parse(&p))
            .unwrap_or_default(),
        strict_schema: doc.strict_schema.unwrap_or(false),
        mode: doc
            .mode
            .and_then(|m| JudgingMode::parse(&m))
            .unwrap_or_default(),
        self_preference: doc.self_preference.unwrap_or(false),
        blinding_probe: doc.blinding_probe.unwrap_or(false),
        exclude_inconsistent_judges: doc.exclude_inconsistent_judges.unwrap_or(false),
        null_participant: doc.null_participant.unwrap_or(false),
        over_budget: doc
            .over_budget
            .and_then(|o| OverBudget::parse(&o))
            .unwrap_or_default(),
    };
    check_judging_combinations(&judging, checker);
    judging
}

/// Options of `judging:` that exclude each other.
fn check_judging_combinations(judging: &Judging, checker: &mut Checker) {
    if judging.exclude_inconsistent_judges && judging.mode != JudgingMode::Pairwise {
        checker.problem(
            "judging.exclude_inconsistent_judges",
            "measures position consistency, which only pairwise verdicts have".to_owned(),
            Some("use `mode: pairwise`, or remove `exclude_inconsistent_judges`".into()),
        );
    }
    if judging.self_preference && judging.policy != JudgingPolicy::RequireDistinctFlavor {
        checker.problem(
            "judging.self_preference",
            format!(
                "measures self-preference only when self-judgments are not counted, but `judging.policy` is `{}`",
                judging.policy
            ),
            Some("remove `judging.policy` (the default is `require_distinct_flavor`) or set `self_preference: false`".into()),
        );
    }
    if judging.null_participant && judging.mode == JudgingMode::Pairwise {
        checker.problem(
            "judging.null_participant",
            "is a calibration check on rubric scores, not pairwise verdicts".to_owned(),
            Some("use `mode: rubric`, or remove `null_participant`".into()),
        );
    }
    if judging.self_preference && judging.mode == JudgingMode::Pairwise {
        checker.problem(
            "judging.self_preference",
            "is measured on rubric scores, not pairwise verdicts".to_owned(),
            Some("use `mode: rubric` for a self-preference run".into()),
        );
    }
}

fn check_outputs(doc: OutputsDoc, checker: &mut Checker) -> Outputs {
    let mut outputs = Outputs::default();
    for (i, item) in doc.required.into_iter().flatten().enumerate() {
        let Some(RequiredDoc {
            path: Some(path),
            kind,
        }) = item
        else {
            continue;
        };
        if path.is_empty()
            || path.starts_with('/')
            || path.split(['/', '\\']).any(|part| part == "..")
        {
            checker.problem(
                format!("outputs.required[{i}].path"),
                format!("`{path}` must be a relative path inside out/"),
                Some("write it like `RESULT.md` or `site/index.html`".into()),
            );
            continue;
        }
        outputs.required.push(RequiredOutput { path, kind });
    }
    outputs
}

/// `resources:`, already checked by the schema.
pub(super) fn resources(doc: Option<ResourcesDoc>) -> Resources {
    let Some(doc) = doc else {
        return Resources::default();
    };
    Resources {
        profile: doc.profile.and_then(|p| Profile::parse(&p)),
        mem_limit: doc.mem_limit,
        memswap_limit: doc.memswap_limit,
        cpus: doc.cpus,
        pids_limit: doc.pids_limit,
        out_limit: doc.out_limit,
    }
}

/// Parses `512m`, `1.5g`, `1024` (docker's size units, powers of 1024).
pub use crate::schema::parse_bytes;

fn warn_about_self_judging(brief: &Brief, checker: &mut Checker) {
    for judge in brief
        .judges
        .iter()
        .filter(|j| crate::flavor::is_vendor(&j.flavor))
    {
        let own: Vec<&str> = brief
            .participants
            .iter()
            .filter(|p| p.flavor == judge.flavor)
            .map(|p| p.name.as_str())
            .collect();
        if own.is_empty() {
            continue;
        }
        match brief.judging.policy {
            JudgingPolicy::RequireDistinctFlavor if own.len() == brief.participants.len() => checker.warnings.push(format!(
                "judge `{}` has flavor `{}` like every participant, so under `require_distinct_flavor` it has nothing to score",
                judge.name, judge.flavor
            )),
            JudgingPolicy::Warn => checker.warnings.push(format!(
                "judge `{}` (flavor `{}`) will score its own flavor's submissions ({}); anti-self-judging is off under `judging.policy: warn`",
                judge.name,
                judge.flavor,
                own.join(", ")
            )),
            _ => {}
        }
    }
}
