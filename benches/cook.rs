//! `cargo bench --bench cook`: wall time and peak memory of `cook`, `judge` and `report` for
//! N = 3, 12 and 48 dummy participants, next to the floor measured in the same run, floors and
//! commands interleaved run by run: the same engine work done bare and in parallel through the
//! engine API. The cook floor is today's definition, kept so that a gain is visible (issue 28):
//! N networks created; N cells of the same image created with the same areas (inputs, `out/`,
//! the control area), started, their inputs and then the go file staged (two uploads), their
//! exit record awaited, their `out/` collected, killed and removed; the networks removed. The
//! judge floor is one bare judge cell with N submissions staged, `outbox/` collected. Prints
//! numbers, where a floor cell's time goes (network, create, start, stage, run, collect,
//! teardown) and what init costs per cell; asserts nothing about time. Targets (issue 28): cook
//! at N = 48 ≤ 0.75 × floor, N = 3 ≤ 1.2 ×, judge ≤ 1.1 ×.
//!
//! The verify phase (issue 14) is measured the same way at N ≤ 12: `multicooker verify --all` on
//! the cooked outputs against its own floor, N bare verifier cells (the sealed output and the
//! hidden spec staged, `mc-cell verify` run, `results/` collected). Target: ≤ 1.3 × its floor.
//!
//! With `MULTICOOKER_BENCH_SWARM=1` (root; see `tests/swarm/swarm.sh`) it also starts a real
//! three-node swarm and times `cook --backend swarm` for N = 12 and N = 48 next to the same
//! floor run through the swarm backend (N services with their overlays, the image pushed and
//! pulled by digest, staged, collected, removed), and where a floor cell's time goes (network,
//! create, start with the push, stage with the pull, run, collect, teardown). Target: ≤ 1.3 ×
//! that floor. `MULTICOOKER_BENCH_SWARM=only` runs the swarm case alone.

#![expect(clippy::print_stdout, reason = "a benchmark prints its numbers")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use futures_util::StreamExt;
use futures_util::future::join_all;
use multicooker::cell::EXIT_RECORD;
use multicooker::cell::names::Names;
use multicooker::runtime::docker::DockerRuntime;
use multicooker::runtime::swarm::{DEFAULT_SWARM_POOL, SwarmConfig, SwarmRuntime};
use multicooker::runtime::{
    Archive, Area, CellSpec, GO_NAME, ImageSpec, Init, LABEL_ROOT, Labels, Limits, LogChunk,
    NetworkSpec, ObjectRef, Runtime, Tmpfs,
};

/// Runs per size (median shown); fewer at N = 48.
const RUNS: usize = 5;
const RUNS_BIG: usize = 3;

fn main() {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let swarm_case = std::env::var("MULTICOOKER_BENCH_SWARM").unwrap_or_default();
    if swarm_case == "only" {
        swarm(&tokio);
        return;
    }
    let runtime = tokio
        .block_on(DockerRuntime::connect(
            &multicooker::settings::Env::from_process().docker(),
        ))
        .expect("a running Docker engine");
    println!(
        "multicooker cook benchmark (median of {RUNS} runs, {RUNS_BIG} at N = 48; seconds; RSS in MiB); load average at the start: {}",
        load_average()
    );
    println!(
        "{:>3}  {:>7} {:>7} {:>6}  {:>7} {:>7} {:>6}  {:>7}  {:>8} {:>9}  {:>7} {:>7} {:>6}",
        "N",
        "floor",
        "cook",
        "ratio",
        "j floor",
        "judge",
        "ratio",
        "report",
        "cook RSS",
        "judge RSS",
        "v floor",
        "verify",
        "ratio"
    );
    let mut splits = Vec::new();
    for n in [3, 12, 48] {
        let runs = if n >= 48 { RUNS_BIG } else { RUNS };
        let verify_too = n <= 12;
        let (mut floors, mut judge_floors, mut verify_floors) =
            (Vec::new(), Vec::new(), Vec::new());
        let (mut cooks, mut judges, mut reports, mut verifies) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut cook_rss, mut judge_rss) = (0, 0);
        // Floors and commands alternate, so that a change of the machine's load hits both.
        for _ in 0..runs {
            floors.push(tokio.block_on(floor(&runtime, n, Phase::Cook)));
            judge_floors.push(tokio.block_on(floor(&runtime, n, Phase::Judge)).seconds);
            if verify_too {
                verify_floors.push(tokio.block_on(floor(&runtime, n, Phase::Verify)).seconds);
            }
            let root = tempfile::tempdir().expect("temp dir");
            write_cook(root.path(), n);
            let (seconds, rss) = timed(root.path(), &["cook"]);
            cooks.push(seconds);
            cook_rss = cook_rss.max(rss);
            if verify_too {
                add_verify(root.path());
                verifies.push(timed(root.path(), &["verify", "--all"]).0);
            }
            let (seconds, rss) = timed(root.path(), &["judge"]);
            judges.push(seconds);
            judge_rss = judge_rss.max(rss);
            reports.push(timed(root.path(), &["report"]).0);
        }
        let floor = median(floors.iter().map(|f| f.seconds).collect());
        splits.push((n, Steps::median(&floors)));
        let (cook, judge, judge_floor) = (median(cooks), median(judges), median(judge_floors));
        let verify = if verify_too {
            let (verify, verify_floor) = (median(verifies), median(verify_floors));
            format!(
                "{verify_floor:>7.2} {verify:>7.2} {:>5.2}x",
                verify / verify_floor
            )
        } else {
            format!("{:>7} {:>7} {:>6}", "–", "–", "–")
        };
        println!(
            "{n:>3}  {floor:>7.2} {cook:>7.2} {:>5.2}x  {judge_floor:>7.2} {judge:>7.2} {:>5.2}x  {:>7.3}  {:>8.1} {:>9.1}  {verify}",
            cook / floor,
            judge / judge_floor,
            median(reports),
            mib(cook_rss),
            mib(judge_rss),
        );
    }
    print_split("docker cook floor", &splits);
    println!(
        "init per cell: `run` above is go staged → init's exit record: init sees the go file (it looks every 10 ms), starts the program as the cell user with its own pipes, reaps it, kills leftovers and prints the record; the dummy's own work is part of it, so init costs at most that. `start` is the engine starting init."
    );
    println!("load average at the end: {}", load_average());
    if swarm_case == "1" {
        swarm(&tokio);
    }
}

/// The 1, 5 and 15 minute load averages, as the kernel says them.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".into(),
        |l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

/// The swarm case: a real three-node swarm started for it, torn down after.
fn swarm(tokio: &tokio::runtime::Runtime) {
    let parent = tempfile::Builder::new()
        .prefix("mcsw")
        .tempdir_in("/tmp")
        .expect("temp dir");
    let dir = parent.path().join("s");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/swarm/swarm.sh");
    let up = Command::new("bash")
        .args([script, "up"])
        .arg(&dir)
        .status()
        .expect("bash");
    // Torn down when this returns or panics (before `parent` removes the folder).
    let _down = Down { script, dir: &dir };
    assert!(
        up.success(),
        "the swarm did not come up (root, iproute2, dockerd, apt-get needed)"
    );
    let env: Vec<(String, String)> = std::fs::read_to_string(dir.join("env"))
        .expect("swarm env")
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .chain([("MULTICOOKER_BACKEND".to_owned(), "swarm".to_owned())])
        .collect();
    // The floor reaches the engines as the cook does: over TCP through the nodes' network.
    let var = |name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map_or_else(|| panic!("{name} in the swarm's env"), |(_, v)| v.clone())
    };
    let config = SwarmConfig {
        manager: var("MULTICOOKER_SWARM_MANAGER"),
        nodes: var("MULTICOOKER_SWARM_NODES")
            .split(',')
            .filter_map(|item| item.split_once('='))
            .map(|(host, address)| (host.to_owned(), address.to_owned()))
            .collect(),
        registry: var("MULTICOOKER_SWARM_REGISTRY"),
        subnet_pool: DEFAULT_SWARM_POOL.to_owned(),
        docker: multicooker::settings::Env::from_process().docker(),
    };
    let runtime = tokio
        .block_on(SwarmRuntime::connect(&config))
        .expect("the swarm");
    println!("swarm (3 nodes; {SWARM_RUNS} runs each, median; seconds)");
    println!(
        "{:>3}  {:>8} {:>8}  {:>7}  {:>8}  {:>10}",
        "N", "floor", "cook", "ratio", "stage ms", "collect ms"
    );
    let mut splits = Vec::new();
    for n in [12, 48] {
        let floors: Vec<Floor> = (0..SWARM_RUNS)
            .map(|_| tokio.block_on(floor(&runtime, n, Phase::Cook)))
            .collect();
        let floor = median(floors.iter().map(|f| f.seconds).collect());
        splits.push((n, Steps::median(&floors)));
        let cooks: Vec<f64> = (0..SWARM_RUNS)
            .map(|_| {
                let root = tempfile::tempdir().expect("temp dir");
                write_cook(root.path(), n);
                let seconds = timed_with(root.path(), &["cook"], &env).0;
                timed_with(root.path(), &["clean"], &env);
                seconds
            })
            .collect();
        let cook = median(cooks);
        println!(
            "{n:>3}  {floor:>8.2} {cook:>8.2}  {:>6.2}x  {:>8.1}  {:>10.1}",
            cook / floor,
            splits[splits.len() - 1].1[3],
            splits[splits.len() - 1].1[5]
        );
    }
    print_split("swarm floor", &splits);
    drop(runtime);
}

/// Runs `swarm.sh down` on drop, on every path out of the swarm case.
struct Down<'a> {
    script: &'a str,
    dir: &'a Path,
}

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .args([self.script, "down"])
            .arg(self.dir)
            .status();
    }
}

const SWARM_RUNS: usize = 2;

/// How one floor cell's time splits over its steps (per-cell means, medians over runs).
fn print_split(what: &str, splits: &[(usize, [f64; 7])]) {
    println!("{what}, per cell (ms): where the time goes");
    print!("{:>3}", "N");
    for name in Steps::NAMES {
        print!("  {name:>8}");
    }
    println!();
    for (n, split) in splits {
        print!("{n:>3}");
        for ms in split {
            print!("  {ms:>8.0}");
        }
        println!();
    }
}

fn mib(kib: i64) -> f64 {
    #[expect(clippy::cast_precision_loss, reason = "display only")]
    let value = kib as f64 / 1024.0;
    value
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Writes `<root>/990101-bench/` with `n` dummy participants and one judge.
fn write_cook(root: &Path, n: usize) {
    let dir = root.join("990101-bench");
    std::fs::create_dir_all(dir.join("raw")).expect("cook folder");
    let mut yaml = String::from("name: bench\ntimeout_s: 120\nparticipants:\n");
    for i in 0..n {
        yaml.push_str(&format!(
            "  - {{name: p{i}, flavor: dummy, model: \"quality:{},solve:{}\"}}\n",
            i % 6,
            40 + i % 3
        ));
    }
    yaml.push_str("judges:\n  - {name: judge, flavor: dummy}\nrubric:\n  dimensions:\n    - {id: correctness, weight: 100}\njudging: {policy: allow_self}\n");
    std::fs::write(dir.join("brief.yaml"), yaml).expect("brief.yaml");
    std::fs::write(dir.join("BRIEF.md"), "Say hello.\n").expect("BRIEF.md");
    std::fs::write(dir.join("JUDGE_BRIEF.md"), "Score correctness 0-5.\n").expect("JUDGE_BRIEF.md");
}

/// The hidden tests of the dummy runner, and `verify:` (added after `cook`, so that `cook` is
/// timed without it).
const SPEC: &str = r#"{"tests": [{"name": "answer", "file": "answer.txt", "equals": "42"}, {"name": "runs", "run": "solution.mcs", "expect": "42"}, {"name": "result", "file": "RESULT.md", "exists": true}]}"#;

/// The rubric a judge floor cell reads (as the judge's inbox writes it).
const RUBRIC_JSON: &str =
    r#"{"scale": [0, 5], "dimensions": [{"id": "correctness", "weight": 100}]}"#;

fn add_verify(root: &Path) {
    let dir = root.join("990101-bench");
    std::fs::create_dir_all(dir.join("verify")).expect("verify/");
    std::fs::write(dir.join("verify/tests.json"), SPEC).expect("tests.json");
    let mut yaml = std::fs::read_to_string(dir.join("brief.yaml")).expect("brief.yaml");
    yaml.push_str("verify: {image: dummy, timeout_s: 120}\n");
    std::fs::write(dir.join("brief.yaml"), yaml).expect("brief.yaml");
}

/// Runs one command of the real binary; returns seconds and the child's peak RSS (KiB).
fn timed(root: &Path, command: &[&str]) -> (f64, i64) {
    timed_with(root, command, &[])
}

/// [`timed`], with extra environment.
fn timed_with(root: &Path, command: &[&str], env: &[(String, String)]) -> (f64, i64) {
    let binary = env!("CARGO_BIN_EXE_multicooker");
    let start = Instant::now();
    let mut child = Command::new(binary)
        .arg(command[0])
        .arg("990101-bench")
        .args(&command[1..])
        .arg("--root")
        .arg(root)
        .args(["--no-progress", "-q"])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::null())
        .spawn()
        .expect("the multicooker binary");
    let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for our own child.
    #[expect(unsafe_code, reason = "std exposes no peak RSS of a child")]
    let rss = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::wait4(pid, &raw mut status, 0, &raw mut usage);
        usage.ru_maxrss
    };
    let seconds = start.elapsed().as_secs_f64();
    drop(child.try_wait());
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "`{}` failed",
        command.join(" ")
    );
    (seconds, rss)
}

/// One floor run: wall seconds, and the mean time per cell of each step, in milliseconds.
struct Floor {
    seconds: f64,
    steps: Steps,
}

/// Where one bare cell's time goes (seconds; per-cell means in a [`Floor`], milliseconds).
#[derive(Default, Clone, Copy)]
struct Steps {
    /// Creating its network (an overlay on a swarm).
    network: f64,
    /// Creating the cell (a swarm only prepares the service here).
    create: f64,
    /// Starting it: on a swarm the service is created here, the image pushed to the registry
    /// the first time (the other cells wait for that push).
    start: f64,
    /// Staging inputs and the go file (on a swarm: waiting for the task's container, which
    /// includes the node's pull by digest).
    stage: f64,
    /// The program, until init's exit record.
    run: f64,
    /// Collecting `out/`.
    collect: f64,
    /// Kill, removal of the cell and its network.
    teardown: f64,
}

impl Steps {
    const NAMES: [&str; 7] = [
        "network", "create", "start", "stage", "run", "collect", "teardown",
    ];

    fn values(&self) -> [f64; 7] {
        [
            self.network,
            self.create,
            self.start,
            self.stage,
            self.run,
            self.collect,
            self.teardown,
        ]
    }

    /// The per-cell means of `all`, in milliseconds.
    fn mean_ms(all: &[Self]) -> Self {
        #[expect(clippy::cast_precision_loss, reason = "a few cells")]
        let n = all.len().max(1) as f64;
        let mean = |pick: fn(&Self) -> f64| all.iter().map(pick).sum::<f64>() * 1000.0 / n;
        Self {
            network: mean(|s| s.network),
            create: mean(|s| s.create),
            start: mean(|s| s.start),
            stage: mean(|s| s.stage),
            run: mean(|s| s.run),
            collect: mean(|s| s.collect),
            teardown: mean(|s| s.teardown),
        }
    }

    /// The median of each step over runs.
    fn median(floors: &[Floor]) -> [f64; 7] {
        let mut out = [0.0; 7];
        for (k, slot) in out.iter_mut().enumerate() {
            *slot = median(floors.iter().map(|f| f.steps.values()[k]).collect());
        }
        out
    }
}

/// Which phase a floor stands beside.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Participant cells: the prompt in, `out/` back.
    Cook,
    /// Verifier cells: an output and the hidden spec in, `mc-cell verify` run, `results/` back.
    Verify,
    /// One judge cell: N submissions and the rubric in, `outbox/` back.
    Judge,
}

/// The image settings a cook resolves from this environment (`MULTICOOKER_BUILD_ARGS`).
fn images() -> multicooker::cell::images::ImageSettings {
    multicooker::cell::images::ImageSettings {
        namespace: None,
        build_args: multicooker::settings::Env::from_process()
            .build_args()
            .expect("MULTICOOKER_BUILD_ARGS is valid"),
    }
}

/// The same engine work as a cook (or a verification), bare and in parallel, with the same
/// hardened cell spec.
async fn floor(runtime: &dyn Runtime, n: usize, phase: Phase) -> Floor {
    let names = Names::for_cook("990101-floor", "bench");
    let labels = Labels::new("990101-floor", "bench").with(LABEL_ROOT, "bench");
    let image = names.image("dummy");
    let context = multicooker::flavor::thin_context(
        &multicooker::cell::images::base_specs(&["dummy".to_owned()], None, &images())
            .expect("dummy context")
            .remove(0)
            .tag,
    )
    .expect("thin context");
    let base = multicooker::cell::images::base_specs(&["dummy".to_owned()], None, &images())
        .expect("dummy context")
        .remove(0);
    multicooker::cell::images::ensure_base(runtime, &base)
        .await
        .expect("base image");
    runtime
        .build_image(&ImageSpec {
            tag: image.clone(),
            labels: labels.clone(),
            context,
        })
        .await
        .expect("image");
    let cells = if phase == Phase::Judge { 1 } else { n };
    let specs: Vec<CellSpec> = (0..cells)
        .map(|i| floor_cell(&names, &labels, &image, (i, phase)))
        .collect();
    let start = Instant::now();
    let timings = join_all(
        specs
            .iter()
            .map(|spec| floor_one(runtime, spec, (phase, n))),
    )
    .await;
    let seconds = start.elapsed().as_secs_f64();
    runtime
        .remove(&ObjectRef::image(&image))
        .await
        .expect("image removal");
    Floor {
        seconds,
        steps: Steps::mean_ms(&timings),
    }
}

/// One bare cell: network, create, start, stage, await the exit record, collect, kill, remove.
/// Returns how long each step took.
async fn floor_one(runtime: &dyn Runtime, spec: &CellSpec, (phase, n): (Phase, usize)) -> Steps {
    let mut steps = Steps::default();
    let mut clock = Instant::now();
    let mut lap = || {
        let seconds = clock.elapsed().as_secs_f64();
        clock = Instant::now();
        seconds
    };
    let network = spec.network.clone().expect("floor cells have a network");
    runtime
        .create_network(&NetworkSpec {
            name: network.clone(),
            labels: spec.labels.clone(),
            internal: true,
            isolated: false,
        })
        .await
        .expect("network");
    steps.network = lap();
    runtime.create_cell(spec).await.expect("create");
    steps.create = lap();
    runtime.start_cell(&spec.name).await.expect("start");
    steps.start = lap();
    let mut logs = runtime.cell_logs(&spec.name);
    let inputs = match phase {
        Phase::Cook => tar_of(&[("PROMPT.txt", b"Say hello.\n")], 0),
        Phase::Verify => tar_of(
            &[
                ("output/answer.txt", b"42\n"),
                ("output/solution.mcs", b"print 42\n"),
                ("output/RESULT.md", b"Say hello.\n"),
                ("verify/tests.json", SPEC.as_bytes()),
            ],
            0,
        ),
        Phase::Judge => {
            let submissions: Vec<(String, Vec<u8>)> = (0..n)
                .map(|i| {
                    (
                        format!("submissions/S{i:02}/out/RESULT.md"),
                        format!("Hello.\n\ndummy-quality: {}\n", i % 6).into_bytes(),
                    )
                })
                .collect();
            let mut files: Vec<(&str, &[u8])> = vec![
                ("PROMPT.txt", b"Score every submission.\n"),
                ("RUBRIC.json", RUBRIC_JSON.as_bytes()),
            ];
            files.extend(submissions.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
            tar_of(&files, 0)
        }
    };
    runtime
        .stage(&spec.name, "/work", inputs)
        .await
        .expect("stage inputs");
    // The floor keeps its second upload: the go file alone.
    runtime
        .stage(&spec.name, "/work", tar_of(&[(GO_NAME, b"")], 0))
        .await
        .expect("stage go");
    steps.stage = lap();
    let mut seen = Vec::new();
    while let Some(Ok(LogChunk::Stdout(bytes) | LogChunk::Stderr(bytes))) = logs.next().await {
        seen.extend_from_slice(&bytes);
        if String::from_utf8_lossy(&seen).contains(EXIT_RECORD) {
            break;
        }
    }
    steps.run = lap();
    let area = match phase {
        Phase::Cook => "/work/out",
        Phase::Verify => "/work/results",
        Phase::Judge => "/work/outbox",
    };
    let mut stream = runtime.collect(&spec.name, area);
    let mut bytes = 0;
    while let Some(chunk) = stream.next().await {
        bytes += chunk.expect("collect").len();
    }
    assert!(bytes > 0, "{area} came back");
    steps.collect = lap();
    runtime.kill_cell(&spec.name).await.expect("kill");
    runtime
        .remove(&ObjectRef::cell(&spec.name))
        .await
        .expect("remove");
    runtime
        .remove(&ObjectRef::network(&network))
        .await
        .expect("network removal");
    steps.teardown = lap();
    steps
}

fn tar_of(files: &[(&str, &[u8])], uid: u64) -> Archive {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o444);
        header.set_uid(uid);
        builder
            .append_data(&mut header, name, *bytes)
            .expect("tar in memory");
    }
    Archive::from_bytes(builder.into_inner().expect("tar in memory"))
}

fn floor_cell(names: &Names, labels: &Labels, image: &str, (i, phase): (usize, Phase)) -> CellSpec {
    let role = match phase {
        Phase::Cook => multicooker::state::Role::Participant,
        Phase::Verify => multicooker::state::Role::Verifier,
        Phase::Judge => multicooker::state::Role::Judge,
    };
    let name = names.cell(role, &format!("p{i}"));
    let (writable, workdir, program) = match phase {
        Phase::Cook => ("/work/out", "/work", None),
        Phase::Judge => ("/work/outbox", "/work", None),
        Phase::Verify => (
            "/work/results",
            "/work/verify",
            Some(vec![
                "/usr/local/bin/mc-cell".to_owned(),
                "verify".to_owned(),
            ]),
        ),
    };
    let area = |target: &str, size_bytes: u64, owner: (u32, u32), mode: u32| Area {
        target: target.into(),
        size_bytes,
        owner,
        mode,
    };
    CellSpec {
        name: name.clone(),
        image: image.to_owned(),
        network: Some(name),
        labels: labels.clone(),
        user: "1000:1000".into(),
        env: if phase == Phase::Judge {
            vec![
                ("HOME".into(), "/home/mc".into()),
                ("MULTICOOKER_JUDGE".into(), "judge".into()),
            ]
        } else {
            vec![("HOME".into(), "/home/mc".into())]
        },
        areas: vec![
            area("/work", 2 << 20, (0, 0), 0o755),
            area(writable, 1 << 30, (1000, 1000), 0o700),
            area("/run/mc-cell", 1 << 20, (0, 0), 0o755),
        ],
        tmpfs: vec![Tmpfs {
            target: "/home/mc".into(),
            size_bytes: 64 << 20,
            mode: 0o700,
            owner: Some((1000, 1000)),
        }],
        limits: Limits {
            memory_bytes: 2 << 30,
            memory_swap_bytes: 2 << 30,
            cpus: 1.0,
            pids: 512,
        },
        workdir: workdir.into(),
        program,
        init: Init {
            wait_for_go: true,
            // Today's floor: init serves launch from the control area in every cell.
            launch: true,
            hold: true,
            timeout: Some(std::time::Duration::from_secs(120)),
            deadline: std::time::Duration::from_secs(240),
            task_root: false,
            go_dir: None,
        },
        task: None,
    }
}
