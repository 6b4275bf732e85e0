//! `cargo bench --bench cook`: wall time and peak memory of `cook`, `judge` and `report` for
//! N = 3 and N = 12 dummy participants, next to the floor measured in the same run: the same
//! Docker work done bare and in parallel through the engine API (N networks created, N
//! containers of the same image created, started, waited and removed, the networks removed).
//! Prints numbers; asserts nothing about time. Target: cook ≤ 1.3 × floor at N = 12.

#![expect(clippy::print_stdout, reason = "a benchmark prints its numbers")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use futures_util::future::join_all;
use multicooker::cook::names::Names;
use multicooker::runtime::docker::DockerRuntime;
use multicooker::runtime::{
    CellSpec, ImageSpec, LABEL_ROOT, Labels, Limits, Mount, NetworkSpec, ObjectRef, Runtime, Tmpfs,
};

const RUNS: usize = 3;

fn main() {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let runtime = tokio
        .block_on(DockerRuntime::connect())
        .expect("a running Docker engine");
    println!("multicooker cook benchmark ({RUNS} runs each, median shown; seconds; RSS in MiB)");
    println!(
        "{:>3}  {:>8} {:>8} {:>8} {:>8}  {:>7}  {:>9}  {:>9}",
        "N", "floor", "cook", "judge", "report", "ratio", "cook RSS", "judge RSS"
    );
    for n in [3, 12] {
        let floor = median(
            (0..RUNS)
                .map(|_| tokio.block_on(floor(&runtime, n)))
                .collect(),
        );
        let mut cooks = Vec::new();
        let mut judges = Vec::new();
        let mut reports = Vec::new();
        let (mut cook_rss, mut judge_rss) = (0, 0);
        for _ in 0..RUNS {
            let root = tempfile::tempdir().expect("temp dir");
            write_cook(root.path(), n);
            let (seconds, rss) = timed(root.path(), "cook");
            cooks.push(seconds);
            cook_rss = cook_rss.max(rss);
            let (seconds, rss) = timed(root.path(), "judge");
            judges.push(seconds);
            judge_rss = judge_rss.max(rss);
            reports.push(timed(root.path(), "report").0);
        }
        let cook = median(cooks);
        println!(
            "{n:>3}  {floor:>8.2} {cook:>8.2} {:>8.2} {:>8.3}  {:>6.2}x  {:>9.1}  {:>9.1}",
            median(judges),
            median(reports),
            cook / floor,
            mib(cook_rss),
            mib(judge_rss)
        );
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
            "  - {{name: p{i}, flavor: dummy, model: \"quality:{}\"}}\n",
            i % 6
        ));
    }
    yaml.push_str("judges:\n  - {name: judge, flavor: dummy}\nrubric:\n  dimensions:\n    - {id: correctness, weight: 100}\njudging: {policy: allow_self}\n");
    std::fs::write(dir.join("brief.yaml"), yaml).expect("brief.yaml");
    std::fs::write(dir.join("BRIEF.md"), "Say hello.\n").expect("BRIEF.md");
    std::fs::write(dir.join("JUDGE_BRIEF.md"), "Score correctness 0-5.\n").expect("JUDGE_BRIEF.md");
}

/// Runs one command of the real binary; returns seconds and the child's peak RSS (KiB).
fn timed(root: &Path, command: &str) -> (f64, i64) {
    let binary = env!("CARGO_BIN_EXE_multicooker");
    let start = Instant::now();
    let mut child = Command::new(binary)
        .args([command, "990101-bench", "--root"])
        .arg(root)
        .args(["--no-progress", "-q"])
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
        "`{command}` failed"
    );
    (seconds, rss)
}

/// The same engine work as a cook, bare and in parallel, with the same hardened cell spec.
async fn floor(runtime: &DockerRuntime, n: usize) -> f64 {
    let work = tempfile::tempdir().expect("temp dir");
    let names = Names::for_cook("990101-floor", "bench");
    let labels = Labels::new("990101-floor", "bench").with(LABEL_ROOT, "bench");
    let image = names.image("dummy");
    let context = multicooker::flavor::build_context("dummy", None).expect("dummy context");
    runtime
        .build_image(&ImageSpec {
            tag: image.clone(),
            labels: labels.clone(),
            context: context.tar,
        })
        .await
        .expect("image");
    let prompt = work.path().join("PROMPT.txt");
    std::fs::write(&prompt, "Say hello.\n").expect("prompt");
    let specs: Vec<CellSpec> = (0..n)
        .map(|i| floor_cell(work.path(), &names, &labels, &image, i))
        .collect();
    let start = Instant::now();
    join_all(specs.iter().map(|spec| async move {
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
        runtime.create_cell(spec).await.expect("create");
        runtime.start_cell(&spec.name).await.expect("start");
        runtime.wait_cell(&spec.name).await.expect("wait");
        runtime
            .remove(&ObjectRef::cell(&spec.name))
            .await
            .expect("remove");
        runtime
            .remove(&ObjectRef::network(&network))
            .await
            .expect("network removal");
    }))
    .await;
    let seconds = start.elapsed().as_secs_f64();
    runtime
        .remove(&ObjectRef::image(&image))
        .await
        .expect("image removal");
    seconds
}

fn floor_cell(work: &Path, names: &Names, labels: &Labels, image: &str, i: usize) -> CellSpec {
    let out = work.join(format!("out-{i}"));
    std::fs::create_dir_all(&out).expect("out");
    std::os::unix::fs::chown(&out, Some(1000), Some(1000)).expect("chown out");
    let name = names.cell(multicooker::state::Role::Participant, &format!("p{i}"));
    CellSpec {
        name: name.clone(),
        image: image.to_owned(),
        network: Some(name),
        labels: labels.clone(),
        user: "1000:1000".into(),
        env: vec![("HOME".into(), "/home/mc".into())],
        mounts: vec![
            Mount {
                source: work.join("PROMPT.txt"),
                target: "/work/PROMPT.txt".into(),
                read_only: true,
            },
            Mount {
                source: out,
                target: "/work/out".into(),
                read_only: false,
            },
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
        workdir: "/work".into(),
        command: None,
    }
}
