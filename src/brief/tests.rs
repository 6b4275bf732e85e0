use std::path::Path;

use super::*;

const GOOD: &str = r"
name: hello-task
timeout_s: 60
participants:
  - name: alpha
    flavor: dummy
    model: quality:4
  - {name: bravo, flavor: dummy, timeout_s: 30, resources: {mem_limit: 512m, cpus: '0.5'}}
judges:
  - {name: judge, flavor: dummy}
rubric:
  scale: [0, 5]
  dimensions:
    - {id: correctness, weight: 60}
    - {id: clarity, weight: 40}
judging: {policy: allow_self}
outputs:
  required:
    - {path: RESULT.md, kind: markdown}
";

fn load_text(text: &str) -> Result<Loaded, BriefError> {
    parse(Path::new("cooks/x/brief.yaml"), text.as_bytes())
}

fn problems(text: &str) -> Vec<String> {
    match load_text(text) {
        Err(BriefError::Invalid { problems, .. }) => {
            problems.iter().map(ToString::to_string).collect()
        }
        other => panic!("expected field problems, got {other:?}"),
    }
}

#[test]
fn a_good_brief_parses_with_defaults_applied() {
    let brief = load_text(GOOD).unwrap().brief;
    assert_eq!(brief.participants.len(), 2);
    assert_eq!(brief.participants[0].model.as_deref(), Some("quality:4"));
    assert_eq!(brief.judge_timeout_s, DEFAULT_JUDGE_TIMEOUT_S);
    assert_eq!(
        brief.timeout_for(&brief.participants[1], crate::state::Role::Participant),
        30
    );
    assert_eq!(brief.participants[1].resources.mem_limit, Some(512 << 20));
    assert_eq!(brief.participants[1].resources.cpus, Some(0.5));
    assert_eq!(brief.judging.policy, JudgingPolicy::AllowSelf);
    assert_eq!(brief.rubric.unwrap().scale, (0, 5));
}

#[test]
fn the_default_policy_is_require_distinct_flavor() {
    let text = GOOD.replace("judging: {policy: allow_self}", "");
    assert_eq!(
        load_text(&text).unwrap().brief.judging.policy,
        JudgingPolicy::RequireDistinctFlavor
    );
}

#[test]
fn unknown_fields_name_the_field_and_the_allowed_ones() {
    let text = GOOD.replace("timeout_s: 60", "timeout_s: 60\ntimeuot: 3");
    let error = load_text(&text).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`cooks/x/brief.yaml`: field `timeuot`: unknown field (allowed: name, timeout_s, \
         judge_timeout_s, participants, judges, rubric, judging, outputs, resources, network, consult, \
         verify, scoring, budget, harbor)"
    );
    assert_eq!(error.hint().unwrap(), "did you mean `timeout_s`?");
    let text = GOOD.replace("model: quality:4", "modle: x");
    assert_eq!(
        problems(&text),
        [
            "field `participants[0].modle`: unknown field (allowed: name, flavor, timeout_s, model, resources, network, budget)"
        ]
    );
}

#[test]
fn bad_names_are_refused() {
    let text = GOOD.replace("name: alpha", "name: ../alpha");
    assert_eq!(
        problems(&text),
        ["field `participants[0].name`: `../alpha` may not contain `/`"]
    );
    let text = GOOD.replace("name: alpha", "name: \"al\\0pha\"");
    assert_eq!(
        problems(&text),
        ["field `participants[0].name`: `al\\0pha` may not contain `\\0`"]
    );
    let text = GOOD.replace("{name: judge,", "{name: Alpha,");
    assert_eq!(
        problems(&text),
        ["field `judges[0].name`: `Alpha` is already used by `participants[0].name`"]
    );
}

#[test]
fn a_missing_rubric_is_an_error_when_there_are_judges() {
    let start = GOOD.find("rubric:").unwrap();
    let end = GOOD.find("judging:").unwrap();
    let text = format!("{}{}", &GOOD[..start], &GOOD[end..]);
    let error = load_text(&text).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`cooks/x/brief.yaml`: field `rubric`: is required when `judges` is set"
    );
    assert!(error.hint().unwrap().contains("dimensions"));
}

#[test]
fn rubric_weights_scale_and_ids_are_checked() {
    let text = GOOD.replace("weight: 40", "weight: 30");
    assert_eq!(
        problems(&text),
        ["field `rubric.dimensions`: weights sum to 90, expected 100"]
    );
    let text = GOOD.replace("scale: [0, 5]", "scale: [5, 0]");
    assert_eq!(
        problems(&text),
        ["field `rubric.scale`: must be `[lo, hi]` with integers lo < hi, not `[5,0]`"]
    );
    let text = GOOD.replace("id: clarity", "id: correctness");
    assert_eq!(
        problems(&text),
        ["field `rubric.dimensions[1].id`: `correctness` is a duplicate id"]
    );
}

#[test]
fn flavors_policies_and_limits_are_checked() {
    let text = GOOD.replace(
        "{name: judge, flavor: dummy}",
        "{name: judge, flavor: claud}",
    );
    let error = load_text(&text).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`cooks/x/brief.yaml`: field `judges[0].flavor`: unknown flavor `claud`"
    );
    assert!(error.hint().unwrap().starts_with("did you mean `claude`?"));
    let text = GOOD.replace("policy: allow_self", "policy: sometimes");
    assert_eq!(
        problems(&text),
        ["field `judging.policy`: unknown policy `sometimes`"]
    );
    let text = GOOD.replace("mem_limit: 512m", "mem_limit: two gigs");
    assert_eq!(
        problems(&text),
        [
            "field `participants[1].resources.mem_limit`: must be a size such as `2g`, `512m` or a byte count, not `\"two gigs\"`"
        ]
    );
    let text = GOOD.replace("timeout_s: 60", "timeout_s: true");
    assert_eq!(
        problems(&text),
        ["field `timeout_s`: must be a positive integer, not `true`"]
    );
}

#[test]
fn required_outputs_stay_inside_out() {
    let text = GOOD.replace("path: RESULT.md", "path: ../escape.md");
    assert_eq!(
        problems(&text),
        ["field `outputs.required[0].path`: `../escape.md` must be a relative path inside out/"]
    );
}

#[test]
fn several_problems_are_reported_together() {
    let text = GOOD
        .replace("name: alpha", "name: a/b")
        .replace("policy: allow_self", "policy: x");
    let error = load_text(&text).unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("`cooks/x/brief.yaml` has 2 problems:"),
        "{message}"
    );
}

#[test]
fn yaml_syntax_errors_and_bombs_are_refused() {
    assert!(matches!(
        load_text("name: [unclosed"),
        Err(BriefError::Syntax { .. })
    ));
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 0..12 {
        let prev = if i == 0 {
            "a".to_owned()
        } else {
            format!("b{}", i - 1)
        };
        bomb.push_str(&format!("b{i}: &b{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    assert!(
        matches!(load_text(&bomb), Err(BriefError::Syntax { .. })),
        "a billion-laughs brief must be refused"
    );
}

#[test]
fn self_judging_under_warn_is_a_warning() {
    let text = GOOD
        .replace("policy: allow_self", "policy: warn")
        .replace(
            "{name: judge, flavor: dummy}",
            "{name: judge, flavor: claude}",
        )
        .replace(
            "{name: bravo, flavor: dummy,",
            "{name: bravo, flavor: claude,",
        );
    let loaded = load_text(&text).unwrap();
    assert_eq!(loaded.warnings.len(), 1);
    assert!(loaded.warnings[0].contains("anti-self-judging is off"));
    // The offline dummy is no vendor: a dummy judge of dummies is nothing to warn about.
    let dummies = GOOD.replace("policy: allow_self", "policy: warn");
    assert!(load_text(&dummies).unwrap().warnings.is_empty());
}

#[test]
fn sizes_parse_like_docker() {
    assert_eq!(parse_bytes("512m"), Some(512 << 20));
    assert_eq!(parse_bytes("1.5g"), Some(3 << 29));
    assert_eq!(parse_bytes("1024"), Some(1024));
    assert_eq!(parse_bytes("xg"), None);
    assert_eq!(parse_bytes("2gb"), Some(2 << 30));
}

#[test]
fn network_defaults_to_allowlist_and_takes_shorthand_or_mapping() {
    let brief = load_text(GOOD).unwrap().brief;
    assert_eq!(brief.network.mode, NetworkMode::Allowlist);
    let text = GOOD.replace(
        "timeout_s: 60",
        "timeout_s: 60\nnetwork: {mode: allowlist, allow: [Registry.NPMjs.org:443], allow_private: true}",
    ).replace("model: quality:4", "model: quality:4\n    network: open");
    let brief = load_text(&text).unwrap().brief;
    assert_eq!(brief.network.allow, ["registry.npmjs.org:443"]);
    assert!(brief.network.allow_private);
    assert_eq!(
        brief.network_for(&brief.participants[0]).mode,
        NetworkMode::Open
    );
    assert_eq!(
        brief.network_for(&brief.participants[1]).allow,
        ["registry.npmjs.org:443"]
    );
}

#[test]
fn bad_network_settings_are_refused() {
    let text = GOOD.replace("timeout_s: 60", "timeout_s: 60\nnetwork: wide-open");
    assert_eq!(
        problems(&text),
        ["field `network`: unknown network mode `wide-open`"]
    );
    let text = GOOD.replace(
        "timeout_s: 60",
        "timeout_s: 60\nnetwork: {allow: [\"evil.com\", \"a b:1\"]}",
    );
    assert_eq!(
        problems(&text),
        [
            "field `network.allow[0]`: `\"evil.com\"` is not `host:port`",
            "field `network.allow[1]`: `\"a b:1\"` is not `host:port`"
        ]
    );
    let text = GOOD.replace(
        "{name: judge, flavor: dummy}",
        "{name: judge, flavor: dummy, network: open}",
    );
    assert_eq!(
        problems(&text),
        ["field `judges[0].network`: judges may not have open egress"]
    );
}

#[test]
fn a_huge_brief_is_refused_before_parsing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("brief.yaml");
    let file = fs_err::File::create(&path).unwrap();
    file.set_len(MAX_BRIEF_BYTES + 1).unwrap();
    let error = load(&path).unwrap_err();
    assert!(matches!(error, BriefError::TooLarge { .. }), "{error}");
    assert!(error.to_string().contains("may be at most 1048576 bytes"));
}

#[test]
fn judging_modes_and_bias_measurements_parse_and_conflicts_name_the_fix() {
    let text = GOOD.replace(
        "judging: {policy: allow_self}",
        "judging: {mode: pairwise, blinding_probe: true}",
    );
    let judging = load_text(&text).unwrap().brief.judging;
    assert_eq!(judging.mode, JudgingMode::Pairwise);
    assert!(judging.blinding_probe && !judging.self_preference);
    let text = GOOD.replace(
        "judging: {policy: allow_self}",
        "judging: {self_preference: true}",
    );
    assert!(load_text(&text).unwrap().brief.judging.self_preference);

    let bad = GOOD.replace(
        "judging: {policy: allow_self}",
        "judging: {mode: tournament, self_preference: yes-please}",
    );
    let found = problems(&bad);
    assert!(
        found
            .iter()
            .any(|p| p.contains("judging.mode") && p.contains("unknown mode `tournament`")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|p| p.contains("judging.self_preference") && p.contains("true or false")),
        "{found:?}"
    );
    let counted = GOOD.replace(
        "judging: {policy: allow_self}",
        "judging: {policy: allow_self, self_preference: true}",
    );
    let Err(BriefError::Invalid { problems, .. }) = load_text(&counted) else {
        panic!("self-judgments cannot be both counted and measured");
    };
    assert_eq!(problems[0].field, "judging.self_preference");
    assert!(
        problems[0]
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("remove `judging.policy`")),
        "{problems:?}"
    );
}

#[test]
fn excluding_inconsistent_judges_is_a_pairwise_flag_and_a_bad_value_names_the_field() {
    let text = GOOD.replace(
        "judging: {policy: allow_self}",
        "judging: {mode: pairwise, exclude_inconsistent_judges: true}",
    );
    assert!(
        load_text(&text)
            .unwrap()
            .brief
            .judging
            .exclude_inconsistent_judges
    );
    let bad = GOOD.replace(
        "judging: {policy: allow_self}",
        "judging: {mode: pairwise, exclude_inconsistent_judges: sometimes}",
    );
    let found = problems(&bad);
    assert!(
        found
            .iter()
            .any(|p| p.contains("judging.exclude_inconsistent_judges")
                && p.contains("must be true or false, not")),
        "{found:?}"
    );
    let rubric = GOOD.replace(
        "judging: {policy: allow_self}",
        "judging: {exclude_inconsistent_judges: true}",
    );
    let found = problems(&rubric);
    assert!(
        found
            .iter()
            .any(|p| p.contains("exclude_inconsistent_judges") && p.contains("pairwise")),
        "{found:?}"
    );
}

/// The schema's problems and the checks only code can make come out together, in the order of
/// the file's sections, each under its own path; a bad scale does not hide the weights' sum.
#[test]
fn mistakes_in_every_section_are_reported_together_in_file_order() {
    let text = r#"
name: x
timeout_s: 0
participants:
  - {name: a, flavor: claud, timeout_s: -1, resources: {mem_limit: lots, cpus: 0}}
  - {name: A, flavor: dummy, network: {mode: opne, allow: ["nope"]}}
  - 7
judges:
  - {name: j, flavor: dummy, budget: {tokens: 0}}
rubric: {scale: [5, 1], dimensions: [{id: c, weight: 50}]}
judging: {mode: pairwise, null_participant: true, strict: true}
verify: {image: dockerfile, command: []}
scoring: {verify: 50}
"#;
    let fields: Vec<String> = problems(text)
        .iter()
        .map(|p| p.split('`').nth(1).unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        fields,
        [
            "timeout_s",
            "participants[0].flavor",
            "participants[0].timeout_s",
            "participants[0].resources.mem_limit",
            "participants[0].resources.cpus",
            "participants[1].name",
            "participants[1].network.mode",
            "participants[1].network.allow[0]",
            "participants[2]",
            "judges[0].budget.tokens",
            "rubric.scale",
            "rubric.dimensions",
            "judging.strict",
            "judging.null_participant",
            "verify.command",
            "verify.tests",
            "scoring.jury",
        ]
    );
}
