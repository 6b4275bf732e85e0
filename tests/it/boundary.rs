//! The cell boundary, attacked the way the findings of issue "The cell boundary: a cell reaches
//! the host only through the engine, and only as a checked copy" did: each test plays a hostile
//! cell (the dummy flavor's directives) or a careless user, against the real engine.

use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use multicooker::runtime::{LABEL_ROOT, Labels, NetworkSpec, ObjectRef, Runtime};
use multicooker::state::root_id;

use crate::common::cells::TestCell;
use crate::common::{TestCook, block_on, dummy_brief, engine, show, signal};

/// Every regular file under `dir` (no link followed) whose bytes contain `needle`.
fn files_containing(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            fs_err::read(e.path())
                .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
        })
        .map(|e| e.path().display().to_string())
        .collect()
}

/// Critical finding: a `consult` reviewer replaced `outbox/review.md` with a link (to a
/// root-only host file, or relatively to the label mapping) and `consult` copied what it
/// pointed at into `consult/`, `CONSULT_RESULT.json` and `FEEDBACK.md`; a FIFO hung `consult`.
#[test]
fn a_reviewer_that_plants_links_or_a_fifo_gives_consult_nothing_of_the_host() {
    let mut brief = dummy_brief(&[("alpha", "quality:3"), ("bravo", "quality:2")], "");
    brief.push_str(concat!(
        "consult:\n  reviewers:\n",
        "    - {name: r1, flavor: dummy, model: \"link:review.md@../../judging/_mapping.json\"}\n",
        "    - {name: r2, flavor: dummy, model: \"link:review.md@/etc/shadow\"}\n",
        "    - {name: r3, flavor: dummy, model: \"fifo-as:review.md\"}\n",
    ));
    let cook = TestCook::new("consultlink", &brief);
    cook.cook_judge_report();
    let started = std::time::Instant::now();
    let consulted = cook.run_args(&["consult", cook.name(), "--target", "alpha"]);
    assert!(
        started.elapsed() < Duration::from_secs(90),
        "the FIFO hangs nothing"
    );
    assert_eq!(consulted.status.code(), Some(1), "{}", show(&consulted));
    let result = cook.json("consult/alpha/CONSULT_RESULT.json");
    for reviewer in result["reviewers"].as_array().unwrap() {
        assert_eq!(reviewer["status"], "no_review", "{reviewer}");
    }
    let mapping = fs_err::read(cook.dir().join("judging/_mapping.json")).unwrap();
    let seed_line = String::from_utf8_lossy(&mapping)
        .lines()
        .find(|l| l.contains("\"seed\""))
        .unwrap()
        .trim()
        .to_owned();
    for secret in [seed_line.as_bytes(), b"root:"] {
        let leaked: Vec<String> = files_containing(&cook.dir().join("consult"), secret)
            .into_iter()
            .chain(files_containing(&cook.dir().join("work"), secret))
            .collect();
        assert!(
            leaked.is_empty(),
            "{} leaked into {leaked:?}",
            String::from_utf8_lossy(secret)
        );
    }
    assert!(!cook.dir().join("FEEDBACK.md").exists() || !cook.text("FEEDBACK.md").contains("seed"));
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Medium finding: `out/` had no cap while the cell ran (a cell put 3 GB on the host disk).
#[test]
fn out_is_capped_while_the_cell_runs_and_the_host_disk_never_sees_more() {
    let brief = dummy_brief(&[("hog", "quality:3,big:64M"), ("fine", "quality:4")], "").replace(
        "judge_timeout_s: 60\n",
        "judge_timeout_s: 60\nresources: {out_limit: 8m}\n",
    );
    let cook = TestCook::new("outcap", &brief);
    let output = cook.run("cook");
    assert_eq!(output.status.code(), Some(0), "{}", show(&output));
    let bytes: u64 = walkdir::WalkDir::new(cook.dir().join("work/hog/out"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
        .sum();
    assert!(bytes <= 8 << 20, "{bytes} bytes reached the host");
    let stderr = cook.text("logs/hog/dummy.stderr.log");
    assert!(stderr.contains("No space left"), "{stderr}");
    let result = cook.json("RUN_RESULT.json");
    assert_eq!(
        result["participants"][1]["status"], "ok",
        "the other cell is untouched"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Medium finding: a 2,040-level tree, legal in the cell, was too long a path on the host;
/// the cell was `ok` with a partial inbox and `judge` then failed for every participant.
#[test]
fn a_tree_deeper_than_the_host_allows_costs_its_cell_only_those_entries() {
    let cook = TestCook::new(
        "deep",
        &dummy_brief(
            &[("deep", "quality:4,deep:2040"), ("flat", "quality:3")],
            "",
        ),
    );
    cook.cook_judge_report();
    let trace = cook.json("work/deep/trace.json");
    let skipped = trace["collect"]["skipped"].as_array().unwrap();
    assert_eq!(
        skipped.len(),
        1,
        "one record for the cut subtree: {skipped:?}"
    );
    assert_eq!(skipped[0]["reason"], "too_deep");
    assert!(
        cook.dir()
            .join("judging/_inbox/deep/out/RESULT.md")
            .is_file()
    );
    let judged = cook.json("JUDGE_RESULT.json");
    assert_eq!(
        judged["judges"][0]["count"], 2,
        "every participant scored: {judged}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Medium finding: run as root, outputs belonged to host uid 1000 and `.auth` was 0711, so an
/// unrelated host account with uid 1000 could read them.
#[test]
fn what_cells_give_back_belongs_to_the_operator_alone() {
    let cook = TestCook::new(
        "owner",
        &dummy_brief(&[("a", "quality:3,plant:sub/x.txt")], ""),
    );
    cook.cook_judge_report();
    let me = std::fs::metadata("/proc/self").unwrap().uid();
    for entry in walkdir::WalkDir::new(cook.dir().join("work"))
        .into_iter()
        .chain(walkdir::WalkDir::new(cook.dir().join("judging")))
        .flatten()
    {
        let meta = entry.metadata().unwrap();
        assert_eq!(
            meta.uid(),
            me,
            "{} is not the operator's",
            entry.path().display()
        );
    }
    let out = cook.dir().join("work/a/out");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().mode() & 0o777;
    assert_eq!(mode(&out), 0o700);
    assert_eq!(
        mode(&out.join("RESULT.md")),
        0o400,
        "read-only, shared with its sealed copy"
    );
    assert_eq!(mode(&out.join("sub")), 0o700);
    assert!(
        !cook.dir().join(".auth").exists(),
        "logins never touch the disk"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Low finding: `tail` and the logs passed terminal escape sequences through (a cell printed a
/// forged `[mc] cook.finished all ok` line and set the terminal title).
#[test]
fn tail_and_the_logs_show_escape_sequences_never_obey_them() {
    // YAML escapes: the brief carries ESC and BEL, which the dummy prints as they are.
    let model = "quality:3,say:\\e]0;pwned\\a\\e[2K[mc]_cook.finished_all_ok";
    let cook = TestCook::new("escapes", &dummy_brief(&[("a", model)], ""));
    let cooked = cook.run("cook");
    assert_eq!(cooked.status.code(), Some(0), "{}", show(&cooked));
    let log = fs_err::read(cook.dir().join("logs/a/dummy.stdout.log")).unwrap();
    assert!(
        !log.contains(&0x1b) && !log.contains(&0x07),
        "{}",
        String::from_utf8_lossy(&log)
    );
    assert!(
        String::from_utf8_lossy(&log).contains("^[]0;pwned^G^[[2K[mc] cook.finished all ok"),
        "{}",
        String::from_utf8_lossy(&log)
    );
    let tail = cook.run_args(&["tail", cook.name(), "--no-follow"]);
    assert_eq!(tail.status.code(), Some(0), "{}", show(&tail));
    assert!(
        !tail.stdout.contains(&0x1b) && !tail.stdout.contains(&0x07),
        "{}",
        show(&tail)
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Low finding: after multicooker was killed (SIGKILL) its cells ran on with no deadline and `status`
/// said they "were stopped".
#[test]
fn a_killed_runs_cells_end_at_their_deadline_and_status_says_they_still_run() {
    let brief = dummy_brief(&[("a", "sleep:600")], "").replace("timeout_s: 60", "timeout_s: 3");
    let cook = TestCook::new("deadline", &brief);
    let mut child = cook
        .command(&["cook", cook.name(), "--skip-sandbox-check"])
        .env("MULTICOOKER_CELL_GRACE_S", "5")
        .spawn()
        .unwrap();
    cook.wait_for_cell_state("a", "running", Duration::from_secs(60));
    signal(child.id(), "KILL");
    child.wait().unwrap();
    let status = cook.run_args(&["status", cook.name(), "--json"]);
    let document: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let name = crate::common::cell_name(&cook, multicooker::state::Role::Participant, "a");
    assert_eq!(
        document["still_running"],
        serde_json::json!([name]),
        "{}",
        show(&status)
    );
    // The cell's own init ends it: its timeout (3 s) kills the program, its deadline
    // (timeout + grace) ends the cell, with nobody on the host watching.
    let deadline = std::time::Instant::now() + Duration::from_secs(3 + 5 + 30);
    let ended = block_on(async {
        let runtime = engine().await;
        loop {
            let selector = multicooker::runtime::Selector::cook(cook.name())
                .with(LABEL_ROOT, &root_id(cook.root()));
            if runtime.running(&selector).await.unwrap().is_empty() {
                return true;
            }
            if std::time::Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    assert!(ended, "the cell outlived its deadline");
    let status = cook.run_args(&["status", cook.name()]);
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("none of its cells still runs"),
        "{}",
        show(&status)
    );
    assert_eq!(cook.run("clean").status.code(), Some(0));
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Low finding: a failed image build left the sandbox probe's container and network behind.
#[test]
fn a_failed_image_build_leaves_nothing_behind_in_any_command() {
    let cook = TestCook::new("badbuild", &dummy_brief(&[("a", "quality:3")], ""));
    let flavor = cook.dir().join("flavors/broken");
    fs_err::create_dir_all(&flavor).unwrap();
    fs_err::write(
        flavor.join("Dockerfile"),
        "FROM scratch\nCOPY missing-file /x\n",
    )
    .unwrap();
    fs_err::write(
        cook.dir().join("brief.yaml"),
        dummy_brief(&[("a", "quality:3"), ("b", "quality:2")], "")
            .replace("{name: b, flavor: dummy", "{name: b, flavor: broken"),
    )
    .unwrap();
    let cooked = cook.run("cook");
    assert_eq!(cooked.status.code(), Some(2), "{}", show(&cooked));
    assert!(cook.leftovers().is_empty(), "cook: {:?}", cook.leftovers());
    // The same for a judge and a reviewer of a flavor that cannot build.
    fs_err::write(
        cook.dir().join("brief.yaml"),
        dummy_brief(&[("a", "quality:3")], "").replace(
            "{name: referee, flavor: dummy",
            "{name: referee, flavor: broken",
        ),
    )
    .unwrap();
    assert_eq!(cook.run("cook").status.code(), Some(0));
    let judged = cook.run("judge");
    assert_eq!(judged.status.code(), Some(2), "{}", show(&judged));
    assert!(cook.leftovers().is_empty(), "judge: {:?}", cook.leftovers());
    let consulted = cook.run_args(&["consult", cook.name(), "--target", "a"]);
    assert_eq!(consulted.status.code(), Some(2), "{}", show(&consulted));
    assert!(
        cook.leftovers().is_empty(),
        "consult: {:?}",
        cook.leftovers()
    );
}

/// Low finding: the proxies' shared egress network let its members reach each other.
#[test]
fn members_of_an_isolated_network_cannot_reach_each_other() {
    let cook = TestCook::new("isolated", &dummy_brief(&[("a", "quality:1")], ""));
    let labels = || Labels::new(cook.name(), "test").with(LABEL_ROOT, &root_id(cook.root()));
    let image = {
        let context =
            multicooker::flavor::build_context("dummy", None, &crate::common::images().build_args)
                .unwrap();
        multicooker::flavor::base_tag("dummy", &context.digest)
    };
    let work = tempfile::tempdir().unwrap();
    let seen = block_on(async {
        let runtime = engine().await;
        let mut results = Vec::new();
        for isolated in [false, true] {
            let network = format!("mc-test-{}-{isolated}", std::process::id());
            runtime
                .create_network(&NetworkSpec {
                    name: network.clone(),
                    labels: labels(),
                    internal: true,
                    isolated,
                })
                .await
                .unwrap();
            let server_name = format!("{network}-server");
            let mut server = TestCell::new(
                &server_name,
                &image,
                Some(&network),
                labels(),
                "listen:8080,sleep:60",
                &work.path().join(format!("server-{isolated}")),
            );
            server.start(&runtime).await;
            let mut client = TestCell::new(
                &format!("{network}-client"),
                &image,
                Some(&network),
                labels(),
                &format!("sleep:1,connect:{server_name}:8080"),
                &work.path().join(format!("client-{isolated}")),
            );
            client.start(&runtime).await;
            client.finish(&runtime).await;
            let probes =
                fs_err::read_to_string(work.path().join(format!("client-{isolated}/PROBES.txt")))
                    .unwrap();
            runtime
                .remove(&ObjectRef::cell(&server_name))
                .await
                .unwrap();
            runtime.remove(&ObjectRef::network(&network)).await.unwrap();
            results.push(probes);
        }
        results
    });
    assert!(
        seen[0].contains(" ok"),
        "control: members of a plain network connect: {seen:?}"
    );
    assert!(
        seen[1].contains(" error "),
        "an isolated network's members do not: {seen:?}"
    );
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Low finding: the sandbox probe connected to a fixed public address and ignored
/// `MULTICOOKER_CANARY_DIRECT`.
#[test]
fn the_sandbox_probe_tries_the_configured_address_only() {
    let cook = TestCook::empty("probeaddress");
    let output = cook
        .command(&["doctor", "--sandbox", "--json"])
        .env("MULTICOOKER_CANARY_DIRECT", "203.0.113.77:9")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let egress = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"].as_str().unwrap().starts_with("sandbox: egress"))
        .unwrap()
        .to_string();
    assert!(egress.contains("connect 203.0.113.77:9 error"), "{egress}");
    assert!(!egress.contains("1.1.1.1"), "{egress}");
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}

/// Engine objects carry the cook's labels, volumes included: the anonymous areas of a cell
/// go with it, and nothing of a cook is left on any path.
#[test]
fn a_cells_areas_are_labelled_volumes_that_go_with_it() {
    // Long enough that a loaded machine still lists the areas while the cell runs (CI once
    // listed them after a 3 s cell had ended and was being removed: two of three were gone).
    let cook = TestCook::new("volumes", &dummy_brief(&[("a", "sleep:20")], ""));
    let mut child = cook.command(&["cook", cook.name()]).spawn().unwrap();
    cook.wait_for_cell_state("a", "running", Duration::from_secs(60));
    // Listed again while the cell runs until the three areas show (a loaded engine once listed
    // two of them right after the start, though all three are created with the container).
    let volumes = |objects: &[String]| objects.iter().filter(|o| o.starts_with("volume")).count();
    let mut during = cook.leftovers();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while volumes(&during) < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
        during = cook.leftovers();
    }
    let still_running = fs_err::read_to_string(cook.dir().join("status.json"))
        .is_ok_and(|s| s.contains("\"running\""));
    assert!(
        volumes(&during) >= 3,
        "input, out and control areas, labelled with the cook (cell still running: \
         {still_running}): {during:?}"
    );
    assert!(child.wait().unwrap().success());
    assert!(cook.leftovers().is_empty(), "{:?}", cook.leftovers());
}
