//! Strict checking of a parsed `brief.yaml` tree into a [`Brief`]. Every problem names its
//! field (`participants[1].name`), says what is wrong and, where one exists, the fix. All
//! problems are collected, so one run shows everything to correct.

use serde_json::{Map, Value};

use super::model::{
    Actor, Brief, DEFAULT_JUDGE_TIMEOUT_S, DEFAULT_TIMEOUT_S, Dimension, Judging, JudgingMode,
    JudgingPolicy, Network, NetworkMode, Outputs, Profile, RequiredOutput, Resources, Rubric,
};
use super::names::check_actor_name;
use super::{KNOWN_FLAVORS, Problem};
use crate::error::suggest;

const TOP_KEYS: &[&str] = &[
    "name",
    "timeout_s",
    "judge_timeout_s",
    "participants",
    "judges",
    "rubric",
    "judging",
    "outputs",
    "resources",
    "network",
    "consult",
    "verify",
    "scoring",
    "budget",
    "harbor",
];
const ACTOR_KEYS: &[&str] = &[
    "name",
    "flavor",
    "timeout_s",
    "model",
    "resources",
    "network",
    "budget",
];
const NETWORK_KEYS: &[&str] = &["mode", "allow", "allow_private", "web_tools"];
const RUBRIC_KEYS: &[&str] = &["scale", "dimensions"];
const DIMENSION_KEYS: &[&str] = &["id", "weight"];
const JUDGING_KEYS: &[&str] = &[
    "policy",
    "strict_schema",
    "mode",
    "self_preference",
    "blinding_probe",
    "exclude_inconsistent_judges",
    "null_participant",
    "over_budget",
];
const OUTPUTS_KEYS: &[&str] = &["required"];
const REQUIRED_KEYS: &[&str] = &["path", "kind"];
const RESOURCE_KEYS: &[&str] = &[
    "profile",
    "mem_limit",
    "memswap_limit",
    "cpus",
    "pids_limit",
    "out_limit",
];

/// Collects problems while walking the tree.
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

    /// Reports keys of `map` that are not in `allowed`.
    pub(super) fn unknown_keys(
        &mut self,
        prefix: &str,
        map: &Map<String, Value>,
        allowed: &[&str],
    ) {
        for key in map.keys().filter(|k| !allowed.contains(&k.as_str())) {
            let hint = suggest(key, allowed.iter().copied()).map_or_else(
                || format!("remove `{key}`"),
                |s| format!("did you mean `{s}`?"),
            );
            let problem = format!("unknown field (allowed: {})", allowed.join(", "));
            self.problem(join(prefix, key), problem, Some(hint));
        }
    }

    pub(super) fn mapping<'v>(
        &mut self,
        field: &str,
        value: &'v Value,
    ) -> Option<&'v Map<String, Value>> {
        let map = value.as_object();
        if map.is_none() {
            self.problem(
                field,
                format!("must be a mapping, not {}", kind(value)),
                None,
            );
        }
        map
    }

    pub(super) fn positive_int(&mut self, field: &str, value: Option<&Value>) -> Option<u64> {
        let value = value.filter(|v| !v.is_null())?;
        if let Some(n) = value.as_u64().filter(|n| *n > 0) {
            Some(n)
        } else {
            self.problem(
                field,
                format!("must be a positive integer, not {}", show(value)),
                None,
            );
            None
        }
    }

    pub(super) fn string(&mut self, field: &str, value: Option<&Value>) -> Option<String> {
        let value = value.filter(|v| !v.is_null())?;
        if let Some(text) = value.as_str() {
            Some(text.to_owned())
        } else {
            self.problem(
                field,
                format!("must be a string, not {}", kind(value)),
                None,
            );
            None
        }
    }
}

/// Checks the whole tree.
pub(super) fn check(root: &Value, checker: &mut Checker) -> Option<Brief> {
    let Some(map) = root.as_object() else {
        checker.problem(
            "(top level)",
            format!("must be a mapping, not {}", kind(root)),
            None,
        );
        return None;
    };
    checker.unknown_keys("", map, TOP_KEYS);
    let name = check_brief_name(map.get("name"), checker);
    let timeout_s = checker
        .positive_int("timeout_s", map.get("timeout_s"))
        .unwrap_or(DEFAULT_TIMEOUT_S);
    let judge_timeout_s = checker
        .positive_int("judge_timeout_s", map.get("judge_timeout_s"))
        .unwrap_or(DEFAULT_JUDGE_TIMEOUT_S);
    if map.contains_key("harbor") {
        // A Harbor cook's built-in participant: the task's reference solution, no CLI.
        checker.custom_flavors.push(super::ORACLE_FLAVOR.to_owned());
    }
    let participants = check_actors("participants", map.get("participants"), true, checker);
    let judges = check_actors("judges", map.get("judges"), false, checker);
    check_unique_names(&participants, &judges, checker);
    let rubric = map
        .get("rubric")
        .filter(|v| !v.is_null())
        .and_then(|v| check_rubric(v, checker));
    if rubric.is_none() && !judges.is_empty() && !map.contains_key("rubric") {
        checker.problem(
            "rubric",
            "is required when `judges` is set",
            Some(
                "add `rubric: {scale: [0, 5], dimensions: [{id: correctness, weight: 100}]}`"
                    .into(),
            ),
        );
    }
    let judging = map
        .get("judging")
        .filter(|v| !v.is_null())
        .map_or_else(Judging::default, |v| check_judging(v, checker));
    let outputs = map
        .get("outputs")
        .filter(|v| !v.is_null())
        .map_or_else(Outputs::default, |v| check_outputs(v, checker));
    let resources = check_resources("resources", map.get("resources"), checker);
    let network = map
        .get("network")
        .filter(|v| !v.is_null())
        .and_then(|v| check_network("network", v, checker))
        .unwrap_or_default();
    let verify = map
        .get("verify")
        .filter(|v| !v.is_null())
        .and_then(|v| super::verify::check_verify(v, checker));
    let scoring = map.get("scoring").filter(|v| !v.is_null()).and_then(|v| {
        super::verify::check_scoring(
            v,
            map.contains_key("verify") || map.contains_key("harbor"),
            checker,
        )
    });
    let flavors: Vec<&str> = participants
        .iter()
        .chain(&judges)
        .map(|a| a.flavor.as_str())
        .collect();
    let budget = super::budget::check("budget", map.get("budget"), &flavors, checker);
    let harbor = map
        .get("harbor")
        .filter(|v| !v.is_null())
        .and_then(|v| super::harbor::check(v, map.contains_key("verify"), checker));
    if !checker.problems.is_empty() {
        return None;
    }
    let brief = Brief {
        name: name?,
        timeout_s,
        judge_timeout_s,
        participants,
        judges,
        rubric,
        judging,
        outputs,
        resources,
        network,
        consult: map.get("consult").cloned(),
        verify,
        scoring,
        budget,
        harbor,
    };
    warn_about_self_judging(&brief, checker);
    Some(brief)
}

fn check_brief_name(value: Option<&Value>, checker: &mut Checker) -> Option<String> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        checker.problem(
            "name",
            "is required",
            Some("add `name: <short-task-name>`".into()),
        );
        return None;
    };
    let name = checker.string("name", Some(value))?;
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
    value: Option<&Value>,
    required: bool,
    checker: &mut Checker,
) -> Vec<Actor> {
    let value = value.filter(|v| !v.is_null());
    let Some(items) = value.map(Value::as_array) else {
        if required {
            checker.problem(
                list,
                "is required",
                Some(format!(
                    "add `{list}:` with at least one `- name: <name>` entry"
                )),
            );
        }
        return Vec::new();
    };
    let Some(items) = items else {
        checker.problem(
            list,
            format!(
                "must be a list, not {}",
                kind(value.unwrap_or(&Value::Null))
            ),
            None,
        );
        return Vec::new();
    };
    if required && items.is_empty() {
        checker.problem(
            list,
            "must not be empty",
            Some(format!(
                "add at least one `- name: <name>` entry to `{list}`"
            )),
        );
    }
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let actor = check_actor(&format!("{list}[{i}]"), item, checker)?;
            check_judge_network(list, i, &actor, checker);
            Some(actor)
        })
        .collect()
}

fn check_actor(field: &str, value: &Value, checker: &mut Checker) -> Option<Actor> {
    let map = checker.mapping(field, value)?;
    checker.unknown_keys(field, map, ACTOR_KEYS);
    let name_field = join(field, "name");
    let Some(name) = checker.string(&name_field, map.get("name")) else {
        if map.get("name").is_none_or(Value::is_null) {
            checker.problem(
                &name_field,
                "is required",
                Some("give every entry a `name:`".into()),
            );
        }
        return None;
    };
    if let Err((problem, hint)) = check_actor_name(&name) {
        checker.problem(
            &name_field,
            format!("`{}` {problem}", name.escape_debug()),
            Some(hint.into()),
        );
        return None;
    }
    let flavor_field = join(field, "flavor");
    let flavor = checker
        .string(&flavor_field, map.get("flavor"))
        .unwrap_or_else(|| name.clone());
    if !KNOWN_FLAVORS.contains(&flavor.as_str()) && !checker.custom_flavors.contains(&flavor) {
        let hint = suggest(&flavor, KNOWN_FLAVORS.iter().copied()).map_or_else(
            || {
                format!(
                    "known flavors: {} (or add `flavors/{flavor}/Dockerfile` to the cook)",
                    KNOWN_FLAVORS.join(", ")
                )
            },
            |s| {
                format!(
                    "did you mean `{s}`? (known flavors: {})",
                    KNOWN_FLAVORS.join(", ")
                )
            },
        );
        let problem = if map.contains_key("flavor") {
            format!("unknown flavor `{flavor}`")
        } else {
            format!("unknown flavor `{flavor}` (the flavor defaults to the name)")
        };
        checker.problem(flavor_field, problem, Some(hint));
    }
    let timeout_s = checker.positive_int(&join(field, "timeout_s"), map.get("timeout_s"));
    let model = checker
        .string(&join(field, "model"), map.get("model"))
        .filter(|m| !m.is_empty());
    let resources = check_resources(&join(field, "resources"), map.get("resources"), checker);
    let network_field = join(field, "network");
    let network = map
        .get("network")
        .filter(|v| !v.is_null())
        .and_then(|v| check_network(&network_field, v, checker));
    let budget = super::budget::check(
        &join(field, "budget"),
        map.get("budget"),
        &[flavor.as_str()],
        checker,
    );
    Some(Actor {
        name,
        flavor,
        timeout_s,
        model,
        resources,
        network,
        budget,
    })
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

/// `network: none|allowlist|open` or `network: {mode, allow: [host:port], allow_private}`.
pub(super) fn check_network(field: &str, value: &Value, checker: &mut Checker) -> Option<Network> {
    let mode_of = |text: &str, checker: &mut Checker, field: &str| {
        let mode = NetworkMode::parse(text);
        if mode.is_none() {
            checker.problem(
                field,
                format!("unknown network mode `{text}`"),
                Some(format!("use one of: {}", NetworkMode::NAMES.join(", "))),
            );
        }
        mode
    };
    if let Some(text) = value.as_str() {
        return mode_of(text, checker, field).map(|mode| Network {
            mode,
            ..Network::default()
        });
    }
    let map = checker.mapping(field, value)?;
    checker.unknown_keys(field, map, NETWORK_KEYS);
    let mut network = Network::default();
    if let Some(text) = checker.string(&join(field, "mode"), map.get("mode")) {
        network.mode = mode_of(&text, checker, &join(field, "mode"))?;
    }
    if let Some(list) = map.get("allow").filter(|v| !v.is_null()) {
        let Some(items) = list.as_array() else {
            checker.problem(
                join(field, "allow"),
                format!("must be a list, not {}", kind(list)),
                None,
            );
            return None;
        };
        for (i, item) in items.iter().enumerate() {
            let entry = format!("{field}.allow[{i}]");
            match item.as_str().and_then(normalize_target) {
                Some(target) => network.allow.push(target),
                None => checker.problem(
                    entry,
                    format!("{} is not `host:port`", show(item)),
                    Some("for example `registry.npmjs.org:443`".into()),
                ),
            }
        }
    }
    for (key, slot) in [
        ("allow_private", &mut network.allow_private),
        ("web_tools", &mut network.web_tools),
    ] {
        match map.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => *slot = *b,
            Some(other) => checker.problem(
                join(field, key),
                format!("must be true or false, not {}", show(other)),
                None,
            ),
        }
    }
    Some(network)
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

fn check_rubric(value: &Value, checker: &mut Checker) -> Option<Rubric> {
    let map = checker.mapping("rubric", value)?;
    checker.unknown_keys("rubric", map, RUBRIC_KEYS);
    let scale = match map.get("scale").filter(|v| !v.is_null()) {
        None => Some((0, 5)),
        Some(scale) => check_scale(scale, checker),
    };
    let dimensions = match map.get("dimensions").filter(|v| !v.is_null()) {
        None => {
            checker.problem(
                "rubric.dimensions",
                "is required",
                Some("list the dimensions as `- {id: correctness, weight: 100}`".into()),
            );
            None
        }
        Some(dims) => check_dimensions(dims, checker),
    };
    Some(Rubric {
        scale: scale?,
        dimensions: dimensions?,
    })
}

fn check_scale(value: &Value, checker: &mut Checker) -> Option<(i64, i64)> {
    let pair = value
        .as_array()
        .filter(|a| a.len() == 2)
        .and_then(|a| Some((a[0].as_i64()?, a[1].as_i64()?)));
    match pair {
        Some((lo, hi)) if lo < hi => Some((lo, hi)),
        _ => {
            checker.problem(
                "rubric.scale",
                format!(
                    "must be `[lo, hi]` with integers lo < hi, not {}",
                    show(value)
                ),
                Some("for example `scale: [0, 5]`".into()),
            );
            None
        }
    }
}

fn check_dimensions(value: &Value, checker: &mut Checker) -> Option<Vec<Dimension>> {
    let Some(items) = value.as_array().filter(|a| !a.is_empty()) else {
        checker.problem(
            "rubric.dimensions",
            "must be a non-empty list",
            Some("list the dimensions as `- {id: correctness, weight: 100}`".into()),
        );
        return None;
    };
    let before = checker.problems.len();
    let mut dimensions = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("rubric.dimensions[{i}]");
        let Some(map) = checker.mapping(&field, item) else {
            continue;
        };
        checker.unknown_keys(&field, map, DIMENSION_KEYS);
        let id = checker.string(&join(&field, "id"), map.get("id"));
        let weight = checker.positive_int(&join(&field, "weight"), map.get("weight"));
        match (id, weight) {
            (Some(id), _) if id.trim().is_empty() || id.chars().any(char::is_control) => {
                checker.problem(join(&field, "id"), "must be a non-empty name", None);
            }
            (Some(id), _) if dimensions.iter().any(|d: &Dimension| d.id == id) => {
                checker.problem(
                    join(&field, "id"),
                    format!("`{id}` is a duplicate id"),
                    None,
                );
            }
            (Some(id), Some(weight)) => dimensions.push(Dimension {
                id,
                weight: u32::try_from(weight).unwrap_or(u32::MAX),
            }),
            (None, _) if map.get("id").is_none() => {
                checker.problem(join(&field, "id"), "is required", None);
            }
            (None | Some(_), _) if map.get("weight").is_none() => {
                checker.problem(join(&field, "weight"), "is required", None);
            }
            _ => {}
        }
    }
    if checker.problems.len() > before {
        return None;
    }
    let sum: u64 = dimensions.iter().map(|d| u64::from(d.weight)).sum();
    if sum != 100 {
        checker.problem(
            "rubric.dimensions",
            format!("weights sum to {sum}, expected 100"),
            Some("adjust the `weight:` values so they add up to 100".into()),
        );
        return None;
    }
    Some(dimensions)
}

fn check_judging(value: &Value, checker: &mut Checker) -> Judging {
    let mut judging = Judging::default();
    let Some(map) = checker.mapping("judging", value) else {
        return judging;
    };
    checker.unknown_keys("judging", map, JUDGING_KEYS);
    if let Some(policy) = checker.string("judging.policy", map.get("policy")) {
        match JudgingPolicy::parse(&policy) {
            Some(parsed) => judging.policy = parsed,
            None => checker.problem(
                "judging.policy",
                format!("unknown policy `{policy}`"),
                Some(format!("use one of: {}", JudgingPolicy::NAMES.join(", "))),
            ),
        }
    }
    judging.strict_schema = flag(checker, map, "strict_schema");
    judging.self_preference = flag(checker, map, "self_preference");
    judging.blinding_probe = flag(checker, map, "blinding_probe");
    judging.exclude_inconsistent_judges = flag(checker, map, "exclude_inconsistent_judges");
    judging.null_participant = flag(checker, map, "null_participant");
    if let Some(over) = checker.string("judging.over_budget", map.get("over_budget")) {
        match super::model::OverBudget::parse(&over) {
            Some(parsed) => judging.over_budget = parsed,
            None => checker.problem(
                "judging.over_budget",
                format!("unknown choice `{over}`"),
                Some(format!(
                    "use one of: {}",
                    super::model::OverBudget::NAMES.join(", ")
                )),
            ),
        }
    }
    if let Some(mode) = checker.string("judging.mode", map.get("mode")) {
        match JudgingMode::parse(&mode) {
            Some(parsed) => judging.mode = parsed,
            None => checker.problem(
                "judging.mode",
                format!("unknown mode `{mode}`"),
                Some(format!("use one of: {}", JudgingMode::NAMES.join(", "))),
            ),
        }
    }
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
    judging
}

/// A `true`/`false` option of `judging:`.
pub(super) fn flag(checker: &mut Checker, map: &Map<String, Value>, key: &str) -> bool {
    match map.get(key) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(value)) => *value,
        Some(other) => {
            checker.problem(
                format!("judging.{key}"),
                format!("must be true or false, not {}", show(other)),
                None,
            );
            false
        }
    }
}

fn check_outputs(value: &Value, checker: &mut Checker) -> Outputs {
    let mut outputs = Outputs::default();
    let Some(map) = checker.mapping("outputs", value) else {
        return outputs;
    };
    checker.unknown_keys("outputs", map, OUTPUTS_KEYS);
    let Some(required) = map.get("required").filter(|v| !v.is_null()) else {
        return outputs;
    };
    let Some(items) = required.as_array() else {
        checker.problem(
            "outputs.required",
            format!("must be a list, not {}", kind(required)),
            None,
        );
        return outputs;
    };
    for (i, item) in items.iter().enumerate() {
        let field = format!("outputs.required[{i}]");
        let Some(map) = checker.mapping(&field, item) else {
            continue;
        };
        checker.unknown_keys(&field, map, REQUIRED_KEYS);
        let path_field = join(&field, "path");
        let Some(path) = checker.string(&path_field, map.get("path")) else {
            checker.problem(path_field, "is required", None);
            continue;
        };
        if path.is_empty()
            || path.starts_with('/')
            || path.split(['/', '\\']).any(|part| part == "..")
        {
            checker.problem(
                path_field,
                format!("`{path}` must be a relative path inside out/"),
                Some("write it like `RESULT.md` or `site/index.html`".into()),
            );
            continue;
        }
        let kind = checker.string(&join(&field, "kind"), map.get("kind"));
        outputs.required.push(RequiredOutput { path, kind });
    }
    outputs
}

pub(super) fn check_resources(
    field: &str,
    value: Option<&Value>,
    checker: &mut Checker,
) -> Resources {
    let mut resources = Resources::default();
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return resources;
    };
    let Some(map) = checker.mapping(field, value) else {
        return resources;
    };
    checker.unknown_keys(field, map, RESOURCE_KEYS);
    if let Some(profile) = checker.string(&join(field, "profile"), map.get("profile")) {
        resources.profile = Profile::parse(&profile);
        if resources.profile.is_none() {
            checker.problem(
                join(field, "profile"),
                format!("unknown profile `{profile}`"),
                Some(format!("use one of: {}", Profile::NAMES.join(", "))),
            );
        }
    }
    resources.mem_limit = check_bytes(&join(field, "mem_limit"), map.get("mem_limit"), checker);
    resources.memswap_limit = check_bytes(
        &join(field, "memswap_limit"),
        map.get("memswap_limit"),
        checker,
    );
    if let Some(cpus) = map.get("cpus").filter(|v| !v.is_null()) {
        let parsed = match cpus {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        resources.cpus = parsed.filter(|c| c.is_finite() && *c > 0.0);
        if resources.cpus.is_none() {
            checker.problem(
                join(field, "cpus"),
                format!("must be a positive number, not {}", show(cpus)),
                Some("for example `cpus: 1.5`".into()),
            );
        }
    }
    resources.pids_limit = checker.positive_int(&join(field, "pids_limit"), map.get("pids_limit"));
    resources.out_limit = check_bytes(&join(field, "out_limit"), map.get("out_limit"), checker);
    resources
}

fn check_bytes(field: &str, value: Option<&Value>, checker: &mut Checker) -> Option<u64> {
    let value = value.filter(|v| !v.is_null())?;
    let parsed = match value {
        Value::Number(n) => n.as_u64().filter(|n| *n > 0),
        Value::String(s) => parse_bytes(s),
        _ => None,
    };
    if parsed.is_none() {
        checker.problem(
            field,
            format!(
                "must be a size such as `2g`, `512m` or a byte count, not {}",
                show(value)
            ),
            None,
        );
    }
    parsed
}

/// Parses `512m`, `1.5g`, `1024` (docker's size units, powers of 1024).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_lowercase();
    let (number, unit) = match text.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => text.split_at(i),
        None => (text.as_str(), ""),
    };
    let multiplier: u64 = match unit {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        "t" | "tb" => 1 << 40,
        _ => return None,
    };
    let value: f64 = number
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0)?;
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "sizes are far below 2^52"
    )]
    let bytes = (value * multiplier as f64).round() as u64;
    (bytes > 0).then_some(bytes)
}

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

pub(super) fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

pub(super) fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 {
        format!("`{}…`", text.chars().take(40).collect::<String>())
    } else {
        format!("`{text}`")
    }
}
