//! A lost node costs only its own cells (issue 22), on the real swarm of `tests/it/swarm.rs`,
//! whose engines multicooker reaches over TCP through the nodes' own network: a node down at
//! the start is left out (a cook runs on the others; `clean --all` cleans what it reaches and
//! names what it could not), and a night survives a node's engine killed, then a node cut
//! off, in the middle of a cook: the lost cells end `node_lost` and unscored, the others are
//! scored, the night ends partial (exit 3) with a ranking and the reason; the same `--night`
//! once the node is back finishes it; after `clean` no node holds anything of a cook, and the
//! registry no tag but the base images'.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::swarm::{NODES, Swarm};
use crate::common::{JUDGE_BRIEF, TestCook, show};

fn run(cook: &TestCook, swarm: &Swarm, args: &[&str]) -> std::process::Output {
    cook.command(args)
        .envs(swarm.env())
        .output()
        .expect("the multicooker binary runs")
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A worker whose engine is killed before the command starts is left out with a warning;
/// the cook runs on the other nodes, and `clean --all` says which node it could not reach.
pub(crate) fn a_node_down_at_the_start_is_left_out(swarm: &Swarm) {
    swarm.kill("n3");
    swarm.wait_for_node("n3", "down", Duration::from_secs(120));
    let participants = [("a", "quality:4"), ("b", "quality:3"), ("c", "quality:2")];
    let cook = TestCook::new(
        "swarm-down",
        &crate::common::dummy_brief(&participants, "quality:3"),
    );
    let cooked = run(&cook, swarm, &["cook", cook.name(), "--backend", "swarm"]);
    assert_eq!(cooked.status.code(), Some(0), "{}", show(&cooked));
    let said = stderr(&cooked);
    assert!(
        said.contains("node `n3`") && said.contains("left out"),
        "the silent node is named once: {said}"
    );
    assert_eq!(
        said.matches("node `n3`").count(),
        1,
        "one warning, not one per call: {said}"
    );
    let result = cook.json("RUN_RESULT.json");
    for entry in result["participants"].as_array().unwrap() {
        assert_eq!(entry["status"], "ok", "{entry}");
        assert_ne!(entry["node"], "n3", "{entry}");
    }
    let clean = run(&cook, swarm, &["clean", "--all", "--backend", "swarm"]);
    assert_eq!(clean.status.code(), Some(0), "{}", show(&clean));
    assert!(
        stderr(&clean).contains("node `n3`"),
        "clean says what it could not reach: {}",
        show(&clean)
    );
    swarm.revive("n3");
}

/// How a node is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loss {
    /// Its engine is killed (connections refused at once).
    Kill,
    /// Its link is cut (nothing answers: every call would wait).
    Cut,
}

/// A night of one brief × one repeat × three participants × one judge, with a worker lost
/// while participants run on it.
pub(crate) fn a_night_survives_a_lost_node(swarm: &Swarm, loss: Loss) {
    let tag = format!("{loss:?}").to_lowercase();
    let cook = TestCook::empty(&format!("swarm-night-{tag}"));
    let root = cook.root().to_path_buf();
    let config = night_config(&root, &tag);
    let config = config.to_str().unwrap();
    let night = "2026-11-26";
    let mut command = cook.command(&["nightly", config, "--night", night]);
    command.envs(swarm.env());
    let mut running = Night::spawn(command, &root);
    let (node, lost_cells) =
        worker_running_participants(swarm, &mut running, Duration::from_secs(300));
    let started = Instant::now();
    match loss {
        Loss::Kill => swarm.kill(node),
        Loss::Cut => swarm.cut(node),
    }
    let output = running.finish();
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(3), "partial: {}", show(&output));
    let noun = if lost_cells == 1 { "cell" } else { "cells" };
    let reason = format!("node `{node}` was lost: {lost_cells} {noun} not scored");
    assert!(stdout.contains(&reason), "{reason}: {}", show(&output));
    let history = run(&cook, swarm, &["history", config, "--json"]);
    let history: Value = serde_json::from_slice(&history.stdout).unwrap();
    let record = &history["nights"][0];
    assert_eq!(record["status"], "partial", "{record}");
    let participants = record["participants"].as_array().unwrap();
    let unscored = participants
        .iter()
        .filter(|p| p["scored_cells"] == 0)
        .count();
    assert_eq!(
        unscored, lost_cells,
        "the lost cells are unscored, never 0: {record}"
    );
    assert!(
        participants
            .iter()
            .filter(|p| p["scored_cells"] == 1)
            .all(|p| p["estimate"].as_f64().is_some()),
        "the others are scored and ranked: {record}"
    );
    #[expect(
        clippy::print_stderr,
        reason = "the measured delay, shown with --nocapture"
    )]
    {
        eprintln!("{loss:?} of `{node}`: the night ended {took:?} later");
    }
    match loss {
        Loss::Kill => swarm.revive(node),
        Loss::Cut => swarm.heal(node),
    }
    let again = run(&cook, swarm, &["nightly", config, "--night", night]);
    assert_eq!(again.status.code(), Some(0), "{}", show(&again));
    let said = stderr(&again);
    assert!(
        said.contains(&format!("node `{node}` answers again: removed")),
        "what was left on the node is removed once it answers (fencing): {said}"
    );
    assert!(
        !said.contains("killed earlier run"),
        "nothing was killed: {said}"
    );
    let history = run(&cook, swarm, &["history", config, "--json"]);
    let history: Value = serde_json::from_slice(&history.stdout).unwrap();
    let record = &history["nights"][0];
    assert_eq!(record["status"], "ok", "the same night, finished: {record}");
    for p in record["participants"].as_array().unwrap() {
        assert_eq!(p["scored_cells"], 1, "{p}");
    }
    let clean = run(&cook, swarm, &["clean", "--all", "--backend", "swarm"]);
    assert_eq!(clean.status.code(), Some(0), "{}", show(&clean));
    let left = swarm.leftovers_after(Duration::from_secs(60));
    assert!(
        left.is_empty(),
        "after the night that lost `{node}`: {left:?}"
    );
    let tags = swarm.registry_tags();
    assert!(
        tags.is_empty(),
        "the registry keeps only base images: {tags:?}"
    );
}

fn night_config(root: &Path, tag: &str) -> std::path::PathBuf {
    let dir = root.join("brief-a");
    fs_err::create_dir_all(dir.join("raw")).unwrap();
    fs_err::write(
        dir.join("brief.yaml"),
        "name: t\ntimeout_s: 240\njudge_timeout_s: 120\nparticipants:\n  - {name: x, flavor: dummy}\nrubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 60}\n    - {id: clarity, weight: 40}\n",
    )
    .unwrap();
    fs_err::write(dir.join("BRIEF.md"), "# brief-a\n\nSay hello.\n").unwrap();
    fs_err::write(dir.join("JUDGE_BRIEF.md"), JUDGE_BRIEF).unwrap();
    let config = root.join("nightly.yaml");
    fs_err::write(
        &config,
        format!(
            "name: lost{tag}\nbackend: swarm\nbriefs: [brief-a]\nparticipants:\n  - {{name: a, flavor: dummy, model: \"quality:5,sleep:60\"}}\n  - {{name: b, flavor: dummy, model: \"quality:3,sleep:60\"}}\n  - {{name: c, flavor: dummy, model: \"quality:1,sleep:60\"}}\njudges:\n  - {{name: j1, flavor: dummy}}\nrepeats: 1\nhistory: {0}/h.sqlite\ncooks_root: {0}\njudging: {{policy: allow_self}}\n",
            root.display()
        ),
    )
    .unwrap();
    config
}

/// Lines read from a pipe as they come, each with the time since the night started; the
/// reader ends at the pipe's end.
struct Lines {
    lines: std::sync::Arc<std::sync::Mutex<Vec<(Duration, String)>>>,
    reader: std::thread::JoinHandle<()>,
}

impl Lines {
    fn read(pipe: impl std::io::Read + Send + 'static, start: Instant) -> Self {
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(pipe)).map_while(Result::ok)
            {
                into.lock().unwrap().push((start.elapsed(), line));
            }
        });
        Self { lines, reader }
    }

    /// Everything, once the pipe has ended.
    fn all(self) -> Vec<u8> {
        let Self { lines, reader } = self;
        reader.join().unwrap();
        let lines = lines.lock().unwrap().clone();
        lines
            .into_iter()
            .flat_map(|(_, line)| (line + "\n").into_bytes())
            .collect()
    }

    /// What came so far (a process the night started may still hold the pipe).
    fn so_far(&self) -> Vec<(Duration, String)> {
        self.lines.lock().unwrap().clone()
    }

    /// What came so far, each line with the second it came.
    fn stamped(&self) -> String {
        self.so_far()
            .into_iter()
            .map(|(at, line)| format!("[{:6.1}s] {line}\n", at.as_secs_f64()))
            .collect()
    }
}

/// A night running in the background, its output read as it comes (a pipe left unread would
/// stall it once full).
struct Night {
    child: std::process::Child,
    /// The night's folder (its log, its cooks).
    root: std::path::PathBuf,
    stdout: Lines,
    stderr: Lines,
}

impl Night {
    fn spawn(mut command: std::process::Command, root: &Path) -> Self {
        let start = Instant::now();
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = Lines::read(child.stdout.take().unwrap(), start);
        let stderr = Lines::read(child.stderr.take().unwrap(), start);
        Self {
            child,
            root: root.to_path_buf(),
            stdout,
            stderr,
        }
    }

    /// Waits for the night to end: its status and output.
    fn finish(mut self) -> std::process::Output {
        let status = self.child.wait().unwrap();
        std::process::Output {
            status,
            stdout: self.stdout.all(),
            stderr: self.stderr.all(),
        }
    }

    /// The night's log and its cooks' events, as written so far.
    fn logs(&self) -> String {
        let mut files = vec![self.root.join("h.log.jsonl")];
        if let Ok(entries) = fs_err::read_dir(&self.root) {
            let mut cooks: Vec<_> = entries
                .filter_map(Result::ok)
                .map(|e| e.path().join("events.jsonl"))
                .filter(|p| p.is_file())
                .collect();
            cooks.sort();
            files.extend(cooks);
        }
        files
            .iter()
            .map(|file| {
                let text = fs_err::read_to_string(file).unwrap_or_else(|e| format!("({e})\n"));
                format!("--- {}:\n{text}", file.display())
            })
            .collect()
    }

    /// Fails with `why`, what the swarm looks like, what the night printed (each line with
    /// the second it came) and logged, once the night is killed.
    fn fail(&mut self, swarm: &Swarm, why: &str) -> ! {
        let state = swarm.describe();
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The pipes' last lines, if nothing else holds them.
        std::thread::sleep(Duration::from_millis(500));
        panic!(
            "{why}\n--- the night's stdout:\n{}--- its stderr:\n{}{}--- the swarm then:\n{state}",
            self.stdout.stamped(),
            self.stderr.stamped(),
            self.logs()
        );
    }
}

/// Waits until all three participants run, and returns a worker (not the manager) that runs
/// some, with how many. If the night ends or the deadline passes first, fails with what the
/// night printed and what the swarm looks like.
fn worker_running_participants(
    swarm: &Swarm,
    night: &mut Night,
    deadline: Duration,
) -> (&'static str, usize) {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = night.child.try_wait() {
            night.fail(
                swarm,
                &format!("the night ended ({status}) before its participants all ran"),
            );
        }
        let counts: Vec<(&str, Result<usize, String>)> = NODES
            .iter()
            .map(|n| (*n, swarm.running_with_role(n, "participant")))
            .collect();
        let total: usize = counts.iter().filter_map(|(_, c)| c.as_ref().ok()).sum();
        if total == 3 {
            if let Some((node, Ok(count))) = counts
                .iter()
                .find(|(n, c)| *n != NODES[0] && c.as_ref().is_ok_and(|c| *c > 0))
            {
                return (node, *count);
            }
            night.fail(
                swarm,
                &format!("three participants, all on the manager: {counts:?}"),
            );
        }
        if start.elapsed() >= deadline {
            night.fail(
                swarm,
                &format!(
                    "the participants never all ran within {deadline:?} (running on each node, or why its engine could not say): {counts:?}"
                ),
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}
