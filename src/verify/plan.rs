//! A verifier's cell: a read-only copy of one sealed output (`/work/output`) and of the hidden
//! material (`/work/verify`, its working directory), a writable `/work/results`, nothing else;
//! the runner from the image or the hidden folder (brief checking refuses one from the output
//! or the results), no network unless `verify.network` says so, `verify`'s own timeout and
//! resources.

use std::path::Path;

use sha2::Digest as _;

use crate::brief::{Actor, VerifierImage, Verify};
use crate::cell::files::{INPUT_AREA, VERIFY_HIDDEN, VERIFY_OUTPUT, VERIFY_RESULTS, VerifierFiles};
use crate::cell::images::{self, FlavorImages};
use crate::cell::names::Names;
use crate::cell::plan::{CellPlan, PlanContext};
use crate::flavor::FlavorError;
use crate::state::{CookPaths, Role};

/// The dummy image's runner: `mc-cell verify` reads `/work/verify/tests.json`.
pub const DUMMY_RUNNER: &[&str] = &["/usr/local/bin/mc-cell", "verify"];
/// Cap on a verifier's `results/`.
pub const RESULTS_BYTES: u64 = 64 << 20;
/// The flavor name a verifier's objects and logs carry.
pub const VERIFY_FLAVOR: &str = "verify";

/// The images the verifier cells run, and the tag they run.
pub fn verifier_images(
    paths: &CookPaths,
    names: &Names,
    verify: &Verify,
    run_id: &str,
    settings: &images::ImageSettings,
) -> Result<(Vec<FlavorImages>, String), FlavorError> {
    match verify.image {
        VerifierImage::Dummy => {
            let flavors = ["dummy".to_owned()];
            let specs = images::image_specs(paths, names, &flavors, run_id, settings)?;
            Ok((specs, names.image("dummy")))
        }
        VerifierImage::Dockerfile => {
            let images = images::verifier_images(paths, names, run_id, settings)?;
            let tag = images.cook.tag.clone();
            Ok((vec![images], tag))
        }
    }
}

/// The plan of the verifier of `participant`'s sealed output, running `image`.
pub fn verifier_plan(
    context: &PlanContext<'_>,
    verify: &Verify,
    participant: &str,
    image: &str,
) -> CellPlan {
    let paths = context.paths;
    let actor = Actor {
        name: participant.to_owned(),
        flavor: VERIFY_FLAVOR.to_owned(),
        timeout_s: Some(verify.timeout_s),
        model: None,
        resources: verify.resources,
        network: Some(verify.network.clone()),
        budget: None,
    };
    let dir = paths.verification_of(participant);
    let mut plan = context.base(&actor, Role::Verifier, &dir.join("logs"));
    image.clone_into(&mut plan.spec.image);
    plan.spec.workdir = format!("{INPUT_AREA}/{VERIFY_HIDDEN}");
    plan.spec.program = Some(
        verify
            .command
            .clone()
            .unwrap_or_else(|| match verify.image {
                VerifierImage::Dummy => DUMMY_RUNNER.iter().map(|s| (*s).to_owned()).collect(),
                VerifierImage::Dockerfile => Vec::new(),
            }),
    )
    .filter(|program| !program.is_empty());
    for (key, area) in [
        ("MULTICOOKER_OUTPUT", VERIFY_OUTPUT),
        ("MULTICOOKER_VERIFY", VERIFY_HIDDEN),
        ("MULTICOOKER_RESULTS", VERIFY_RESULTS),
    ] {
        plan.spec
            .env
            .push((key.to_owned(), format!("{INPUT_AREA}/{area}")));
    }
    plan.files = VerifierFiles {
        hidden: paths.hidden(),
        results_cap: RESULTS_BYTES,
    }
    .files(paths, participant, dir.join("results"));
    plan
}

/// SHA-256 of a sealed output: every regular file's relative path and bytes, in name order,
/// links never followed. A changed output is verified again.
pub fn output_digest(dir: &Path) -> std::io::Result<String> {
    let mut hasher = sha2::Sha256::new();
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
    {
        let entry = entry.map_err(std::io::Error::other)?;
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        hasher.update(relative.to_string_lossy().as_bytes());
        hasher.update([0]);
        let mut file = fs_err::File::open(entry.path())?;
        let mut buffer = vec![0u8; 64 << 10];
        loop {
            let read = std::io::Read::read(&mut file, &mut buffer)?;
            if read == 0 {
                break;
            }
            hasher.update(&buffer[..read]);
        }
        hasher.update([0]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::files::Input;
    use crate::cell::plan::CellUser;

    #[test]
    fn a_verifier_gets_the_sealed_output_and_the_hidden_folder_and_writes_only_results() {
        let brief = crate::brief::parse(
            Path::new("b.yaml"),
            b"name: t\nparticipants:\n  - {name: a, flavor: dummy}\nverify: {image: dummy, timeout_s: 9}\n",
        )
        .unwrap()
        .brief;
        let paths = CookPaths::new("/cooks/251122-t".into());
        let names = Names::for_paths(&paths);
        let context = PlanContext {
            paths: &paths,
            names: &names,
            brief: &brief,
            user: CellUser::resolve(Some("1000:1000")).unwrap(),
            profile: crate::brief::Profile::Medium,
            run_id: "r",
            grace: crate::cell::plan::CELL_GRACE,
        };
        let verify = brief.verify.as_ref().unwrap();
        let plan = verifier_plan(&context, verify, "a", "img");
        let inputs: Vec<(String, String, bool)> = plan
            .files
            .inputs
            .iter()
            .map(|i| {
                let source = i.host_source().unwrap().display().to_string();
                (i.path().to_owned(), source, matches!(i, Input::Hidden(_)))
            })
            .collect();
        assert_eq!(
            inputs,
            [
                (
                    "output".into(),
                    "/cooks/251122-t/judging/_inbox/a/out".into(),
                    false
                ),
                ("verify".into(), "/cooks/251122-t/verify".into(), true),
            ]
        );
        assert_eq!(plan.files.writable.len(), 1);
        assert_eq!(plan.files.writable[0].target(), "/work/results");
        assert_eq!(plan.spec.workdir, "/work/verify");
        assert_eq!(
            plan.spec.program.as_deref(),
            Some(&["/usr/local/bin/mc-cell".to_owned(), "verify".to_owned()][..])
        );
        assert_eq!(plan.timeout.as_secs(), 9);
        assert!(plan.network.is_none(), "no network by default");
        assert!(plan.spec.name.ends_with("-v-a"), "{}", plan.spec.name);
    }
}
