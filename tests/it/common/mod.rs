//! The test context: a temporary cooks root, a unique cook, the real binary, and the leftover
//! check every integration test ends with. Dropping a [`TestCook`] runs the binary's own
//! `clean`, so one failing test cannot poison the next.

#![allow(
    dead_code,
    reason = "each test file uses a different part of the context"
)]

pub(crate) mod browser;
pub(crate) mod cells;
pub(crate) mod real_checks;
pub(crate) mod real_clis;
pub(crate) mod swarm;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use multicooker::runtime::docker::DockerRuntime;
use multicooker::runtime::{LABEL_ROOT, Runtime, Selector};
use serde_json::Value;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// The default judging brief written by [`TestCook::new`].
pub(crate) const JUDGE_BRIEF: &str = "Score each submission 0-5 on correctness and clarity.\n";

/// A brief with dummy participants `(name, model)` and one dummy judge, policy `allow_self`.
pub(crate) fn dummy_brief(participants: &[(&str, &str)], judge_model: &str) -> String {
    let mut yaml = String::from("name: test\ntimeout_s: 60\njudge_timeout_s: 60\nparticipants:\n");
    for (name, model) in participants {
        yaml.push_str(&format!(
            "  - {{name: {name}, flavor: dummy, model: \"{model}\"}}\n"
        ));
    }
    yaml.push_str(&format!(
        "judges:\n  - {{name: referee, flavor: dummy, model: \"{judge_model}\"}}\n"
    ));
    yaml.push_str("rubric:\n  scale: [0, 5]\n  dimensions:\n    - {id: correctness, weight: 60}\n    - {id: clarity, weight: 40}\n");
    yaml.push_str("judging: {policy: allow_self}\n");
    yaml
}

/// Copies a bundled example to `target` with every `flavor:` set to `dummy` and its hidden
/// tests left out (`verify:`, `scoring:` and `verify/`): their images install Python from
/// Docker Hub, and the machines these tests run on reach no image registry. Hidden
/// verification itself is tested with the dummy's runner (`verify*.rs`).
pub(crate) fn copy_example_as_dummy(example: &Path, target: &Path) {
    let flavor = regex::Regex::new(r"flavor: [a-z]+").unwrap();
    for entry in walkdir::WalkDir::new(example).into_iter().flatten() {
        let relative = entry.path().strip_prefix(example).unwrap();
        if relative.starts_with("verify") {
            continue;
        }
        let to = target.join(relative);
        if entry.file_type().is_dir() {
            fs_err::create_dir_all(&to).unwrap();
        } else if relative == Path::new("brief.yaml") {
            let yaml = fs_err::read_to_string(entry.path()).unwrap();
            let mut kept = String::new();
            let mut skipping = false;
            for line in yaml.lines() {
                if !line.starts_with([' ', '#']) && !line.is_empty() {
                    skipping = line.starts_with("verify:") || line.starts_with("scoring:");
                }
                if !skipping {
                    kept.push_str(line);
                    kept.push('\n');
                }
            }
            fs_err::write(&to, flavor.replace_all(&kept, "flavor: dummy").as_ref()).unwrap();
        } else {
            fs_err::copy(entry.path(), &to).unwrap();
        }
    }
}

/// One cook in its own temporary root.
pub(crate) struct TestCook {
    root: tempfile::TempDir,
    name: String,
    /// Base images built from this cook's own `flavors/` (the fake CLIs), removed after it.
    own_bases: std::sync::Mutex<Vec<String>>,
}

/// How many live tests use each base image built from a cook's own Dockerfile. The last one
/// to end removes it (issue 17: the suite used to leave its fake CLIs' images behind), under
/// this lock, so a test starting then builds it afresh instead of losing it mid-cook.
static OWN_BASES: std::sync::Mutex<Vec<(String, usize)>> = std::sync::Mutex::new(Vec::new());

impl TestCook {
    /// A cook folder with this brief.yaml, a BRIEF.md, a `JUDGE_BRIEF.md` and raw/.
    pub(crate) fn new(tag: &str, brief_yaml: &str) -> Self {
        let cook = Self::empty(tag).with_files(brief_yaml);
        fs_err::write(cook.dir().join("raw/notes.md"), "reference notes\n").unwrap();
        cook
    }

    /// Writes the cook folder (as [`TestCook::new`] does) for a cook made with [`TestCook::empty`].
    pub(crate) fn with_files(self, brief_yaml: &str) -> Self {
        let dir = self.dir();
        fs_err::create_dir_all(dir.join("raw")).unwrap();
        fs_err::write(dir.join("brief.yaml"), brief_yaml).unwrap();
        fs_err::write(dir.join("BRIEF.md"), "# Brief\n\nSay hello.\n").unwrap();
        fs_err::write(dir.join("JUDGE_BRIEF.md"), JUDGE_BRIEF).unwrap();
        self
    }

    /// A unique cook name in a fresh root, with no folder yet.
    pub(crate) fn empty(tag: &str) -> Self {
        build_base_image_once();
        let root = tempfile::Builder::new().prefix("mc-it-").tempdir().unwrap();
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let name = format!("990101-{tag}-{}-{n}", std::process::id());
        Self {
            root,
            name,
            own_bases: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Gives the cook its own flavor `flavor` built from `dockerfile` (a fixture), and removes
    /// that base image once no running test uses it any more.
    pub(crate) fn install_flavor(&self, flavor: &str, dockerfile: &Path) {
        let dir = self.dir().join("flavors").join(flavor);
        fs_err::create_dir_all(&dir).unwrap();
        fs_err::copy(dockerfile, dir.join("Dockerfile")).unwrap();
        let tag = multicooker::cell::images::base_specs(
            &[flavor.to_owned()],
            Some(&self.dir()),
            &images(),
        )
        .unwrap()
        .remove(0)
        .tag;
        let mut counts = OWN_BASES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match counts.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, n)) => *n += 1,
            None => counts.push((tag.clone(), 1)),
        }
        self.own_bases.lock().unwrap().push(tag);
    }

    /// The cook's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The cooks root.
    pub(crate) fn root(&self) -> &Path {
        self.root.path()
    }

    /// The cook folder.
    pub(crate) fn dir(&self) -> PathBuf {
        self.root.path().join(&self.name)
    }

    /// The binary with `--root` and deterministic settings; `args` first.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_multicooker"));
        command
            .args(args)
            .arg("--root")
            .arg(self.root.path())
            .arg("--no-progress")
            .env("MULTICOOKER_SEED", "7")
            .env_remove("MULTICOOKER_ROOT")
            .env_remove("MULTICOOKER_KEEP")
            .stdin(Stdio::null());
        command
    }

    /// Starts the binary in the background with its output piped, so its progress stays out
    /// of the test output; `wait_with_output` then shows it when an assertion fails.
    pub(crate) fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the multicooker binary starts")
    }

    /// Runs cook, judge and report, each of which must exit 0.
    pub(crate) fn cook_judge_report(&self) {
        for command in ["cook", "judge", "report"] {
            let output = self.run(command);
            assert_eq!(
                output.status.code(),
                Some(0),
                "{command}: {}",
                show(&output)
            );
        }
    }

    /// Runs `multicooker <command> <cook>` to completion.
    pub(crate) fn run(&self, command: &str) -> Output {
        self.run_args(&[command, &self.name])
    }

    /// Runs the binary with these arguments to completion.
    pub(crate) fn run_args(&self, args: &[&str]) -> Output {
        self.command(args)
            .output()
            .expect("the multicooker binary runs")
    }

    /// Reads a JSON file of the cook.
    pub(crate) fn json(&self, relative: &str) -> Value {
        let text = fs_err::read_to_string(self.dir().join(relative)).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Reads a text file of the cook.
    pub(crate) fn text(&self, relative: &str) -> String {
        fs_err::read_to_string(self.dir().join(relative)).unwrap()
    }

    /// Engine objects (containers, networks, volumes, images) labelled with this cook.
    pub(crate) fn leftovers(&self) -> Vec<String> {
        self.objects(Selector::cook(&self.name))
    }

    /// Engine objects labelled with any cook of this root (for commands that make several).
    pub(crate) fn leftovers_under_root(&self) -> Vec<String> {
        self.objects(Selector::any_cook())
    }

    fn objects(&self, selector: Selector) -> Vec<String> {
        let root_id = multicooker::state::root_id(self.root.path());
        let selector = selector.with(LABEL_ROOT, &root_id);
        block_on(async {
            let runtime = engine().await;
            runtime
                .list(&selector)
                .await
                .unwrap()
                .iter()
                .map(ToString::to_string)
                .collect()
        })
    }

    /// Waits until status.json says `cell` is running (or the deadline passes).
    pub(crate) fn wait_for_cell_state(&self, cell: &str, state: &str, deadline: Duration) {
        let start = Instant::now();
        while start.elapsed() < deadline {
            if let Ok(text) = fs_err::read_to_string(self.dir().join("status.json"))
                && let Ok(status) = serde_json::from_str::<Value>(&text)
                && status["cells"][cell]["state"] == state
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("cell `{cell}` never reached `{state}` within {deadline:?}");
    }
}

impl Drop for TestCook {
    fn drop(&mut self) {
        let _ = self
            .command(&["clean", &self.name.clone()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let tags = std::mem::take(
            &mut *self
                .own_bases
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if tags.is_empty() {
            return;
        }
        let mut counts = OWN_BASES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut unused = Vec::new();
        for tag in tags {
            if let Some(index) = counts.iter().position(|(t, _)| *t == tag) {
                counts[index].1 -= 1;
                if counts[index].1 == 0 {
                    counts.remove(index);
                    unused.push(tag);
                }
            }
        }
        // Removed while the lock is held: no test can start using one meanwhile.
        block_on(async {
            let runtime = engine().await;
            for tag in unused {
                let _ = runtime
                    .remove(&multicooker::runtime::ObjectRef {
                        kind: multicooker::runtime::ObjectKind::Image,
                        name: tag,
                    })
                    .await;
            }
        });
    }
}

/// Builds the dummy flavor's shared base image once per test run (through the binary's own
/// `build-base`), so parallel tests do not all build it at the same time.
fn build_base_image_once() {
    static BASE: std::sync::Once = std::sync::Once::new();
    BASE.call_once(|| {
        let root = tempfile::tempdir().unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_multicooker"))
            .args(["build-base", "dummy", "--no-progress", "--root"])
            .arg(root.path())
            .output()
            .expect("the multicooker binary runs");
        assert!(
            output.status.success(),
            "the dummy image must build before the tests can run (is the Docker engine running?):\n{}",
            show(&output)
        );
    });
}

/// The image settings the binary resolves from the tests' environment (its
/// `MULTICOOKER_BUILD_ARGS`), in the default namespace.
pub(crate) fn images() -> multicooker::cell::images::ImageSettings {
    multicooker::cell::images::ImageSettings {
        namespace: None,
        build_args: multicooker::settings::Env::from_process()
            .build_args()
            .expect("MULTICOOKER_BUILD_ARGS is valid"),
    }
}

/// Connects to the real engine, or fails saying how to fix it.
pub(crate) async fn engine() -> DockerRuntime {
    match DockerRuntime::connect(&multicooker::settings::Env::from_process().docker()).await {
        Ok(runtime) => runtime,
        Err(e) => panic!(
            "these tests need a running Docker engine ({e}); start it (`sudo systemctl start docker`) or set DOCKER_HOST"
        ),
    }
}

/// The mounts of a running container, as the engine reports them.
pub(crate) fn mounts_of(container: &str) -> Vec<bollard::models::MountPoint> {
    block_on(async {
        let docker = bollard::Docker::connect_with_local_defaults().unwrap();
        docker
            .inspect_container(container, None)
            .await
            .unwrap()
            .mounts
            .unwrap_or_default()
    })
}

/// The engine name of a cook's cell.
pub(crate) fn cell_name(cook: &TestCook, role: multicooker::state::Role, actor: &str) -> String {
    let root_id = multicooker::state::root_id(cook.root());
    multicooker::cell::names::Names::for_cook(cook.name(), &root_id).cell(role, actor)
}

/// Runs a future to completion on a fresh runtime.
pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// stdout and stderr of an output, for assertion messages.
pub(crate) fn show(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Sends a signal to a process (the test drives the real binary like a user's terminal would).
pub(crate) fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}
