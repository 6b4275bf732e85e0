//! Strict checking of `verify:` (hidden tests run against every sealed output) and `scoring:`
//! (how their pass rate and the jury's score combine). Problems name the field and the fix,
//! like every other part of brief.yaml; the keys and kinds are declared in `schema.rs`.

use super::model::{
    DEFAULT_VERIFY_TIMEOUT_S, JuryView, Network, NetworkMode, Scoring, VerifierImage, Verify,
};
use super::parse::{Checker, network, resources};
use super::schema::{ScoringDoc, VerifyDoc};

/// Folders of the verifier cell the runner may not come from: the output under test and the
/// results area are the participant's and the runner's writing, never a runner.
const NOT_A_RUNNER: &[&str] = &["/work/output", "/work/results"];

/// Checks `verify:` (its keys and kinds are the schema's); `has` says whether the file gives a
/// key (`verify.tests`).
pub(super) fn check_verify(
    doc: VerifyDoc,
    has: &dyn Fn(&str) -> bool,
    checker: &mut Checker,
) -> Verify {
    let image = doc
        .image
        .and_then(|i| VerifierImage::parse(&i))
        .unwrap_or_default();
    if image == VerifierImage::Dockerfile && !has("verify.tests") {
        // Counts are fixed before any runner runs: a report is never its own measure.
        checker.problem(
            "verify.tests",
            "missing: `image: dockerfile` runs a runner multicooker cannot count the tests of",
            Some("add `tests: N` (how many tests the runner runs); a report listing more, or planning another number, is then caught as tampering".into()),
        );
    }
    Verify {
        image,
        command: doc.command.and_then(|c| check_command(c, checker)),
        timeout_s: doc.timeout_s.unwrap_or(DEFAULT_VERIFY_TIMEOUT_S),
        resources: resources(doc.resources),
        // The verifier runs the participant's code: it gets no network unless the brief says so.
        network: doc.network.map_or(
            Network {
                mode: NetworkMode::None,
                ..Network::default()
            },
            network,
        ),
        tests: doc.tests,
        jury: doc
            .jury
            .and_then(|j| JuryView::parse(&j))
            .unwrap_or_default(),
    }
}

/// `command: [program, arg, …]`: the runner, from the image or the hidden folder.
fn check_command(words: Vec<Option<String>>, checker: &mut Checker) -> Option<Vec<String>> {
    if words.is_empty() {
        checker.problem(
            "verify.command",
            "must be a non-empty list of strings, not `[]`",
            Some("for example `command: [sh, run-tests.sh]` (run in `/work/verify`)".into()),
        );
        return None;
    }
    let command: Vec<String> = words.into_iter().collect::<Option<_>>()?;
    let program = command.first()?;
    if let Some(place) = NOT_A_RUNNER
        .iter()
        .find(|p| program == *p || program.starts_with(&format!("{p}/")))
    {
        checker.problem(
            "verify.command[0]",
            format!("`{program}` runs a program from `{place}`, which the participant wrote"),
            Some("run the runner from the image or from `/work/verify` (the hidden folder)".into()),
        );
        return None;
    }
    Some(command)
}

/// Checks `scoring:` (both weights are required by the schema); `has_verifier` says whether
/// the brief has `verify:` (or `harbor:`) to weigh.
pub(super) fn check_scoring(
    doc: &ScoringDoc,
    has_verifier: bool,
    checker: &mut Checker,
) -> Option<Scoring> {
    let verify = u32::try_from(doc.verify?).ok()?;
    let jury = u32::try_from(doc.jury?).ok()?;
    if verify + jury == 0 {
        checker.problem(
            "scoring",
            "weights sum to 0",
            Some("for example `scoring: {verify: 50, jury: 50}`".into()),
        );
        return None;
    }
    if !has_verifier {
        checker.problem(
            "scoring",
            "weighs the hidden tests, but the brief has no `verify:` (nor `harbor:`, whose task's verifier gives a reward)",
            Some("add `verify:` (and a `verify/` folder), or remove `scoring:`".into()),
        );
        return None;
    }
    Some(Scoring { verify, jury })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn parse(extra: &str) -> Result<crate::brief::Brief, String> {
        let yaml = format!("name: t\nparticipants:\n  - {{name: a, flavor: dummy}}\n{extra}");
        crate::brief::parse(Path::new("b.yaml"), yaml.as_bytes())
            .map(|l| l.brief)
            .map_err(|e| {
                use crate::error::Hint;
                format!("{e} / {}", e.hint().unwrap_or_default())
            })
    }

    #[test]
    fn verify_defaults_to_a_dockerfile_with_no_network_and_a_blind_jury() {
        let brief = parse("verify: {tests: 6}\n").unwrap();
        let verify = brief.verify.unwrap();
        assert_eq!(verify.image, VerifierImage::Dockerfile);
        assert_eq!(verify.network.mode, NetworkMode::None);
        assert_eq!(verify.jury, JuryView::Blind);
        assert_eq!(
            (verify.timeout_s, verify.command, verify.tests),
            (DEFAULT_VERIFY_TIMEOUT_S, None, Some(6))
        );
        assert_eq!(brief.scoring, None);
    }

    #[test]
    fn a_full_verify_and_scoring_section_is_read() {
        let brief = parse(
            "verify: {image: dummy, command: [sh, run.sh], timeout_s: 30, tests: 4, jury: summary, network: {mode: allowlist, allow: [\"pypi.org:443\"]}, resources: {cpus: 0.5}}\nscoring: {verify: 70, jury: 30}\n",
        )
        .unwrap();
        let verify = brief.verify.unwrap();
        assert_eq!(verify.command.unwrap(), ["sh", "run.sh"]);
        assert_eq!((verify.timeout_s, verify.tests), (30, Some(4)));
        assert_eq!(verify.jury, JuryView::Summary);
        assert_eq!(verify.network.allow, ["pypi.org:443"]);
        assert_eq!(verify.resources.cpus, Some(0.5));
        assert_eq!(
            brief.scoring,
            Some(Scoring {
                verify: 70,
                jury: 30
            })
        );
    }

    #[test]
    fn a_runner_from_the_output_under_test_is_refused_with_the_fix() {
        let error =
            parse("verify: {command: [/work/output/run-tests.sh], tests: 1}\n").unwrap_err();
        assert!(
            error.contains("field `verify.command[0]`: `/work/output/run-tests.sh` runs a program from `/work/output`, which the participant wrote"),
            "{error}"
        );
        assert!(error.contains("run the runner from the image or from `/work/verify`"));
    }

    #[test]
    fn mistakes_in_verify_and_scoring_name_their_field() {
        let error = parse(
            "verify: {image: python, jury: open, timeout_s: 0, command: []}\nscoring: {verify: 1}\n",
        )
        .unwrap_err();
        for field in [
            "verify.image",
            "verify.jury",
            "verify.timeout_s",
            "verify.command",
            "verify.tests",
            "scoring.jury",
        ] {
            assert!(
                error.contains(&format!("field `{field}`")),
                "{field}: {error}"
            );
        }
        let error = parse("scoring: {verify: 1, jury: 1}\n").unwrap_err();
        assert!(error.contains("the brief has no `verify:`"), "{error}");
        let error = parse("judging: {mode: pairwise, null_participant: true}\n").unwrap_err();
        assert!(
            error.contains("field `judging.null_participant`"),
            "{error}"
        );
    }
}
