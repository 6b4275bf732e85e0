//! The backend conformance suite: what every backend of the runtime seam must do, checked
//! through the seam alone (`dyn Runtime`), never through a backend's own API. CI runs it against
//! the local Docker engine; a new backend joins [`backends`] and must pass it unchanged.
//!
//! - the hardening baseline, seen from inside a cell;
//! - staging in and collecting out, with hostile trees on both sides (links, FIFOs, sockets,
//!   hard links, 100,000 files, a tree deeper than the host allows, odd names, a big file);
//! - the size cap of an area, held while the cell runs;
//! - logs, init's timeout and exit record, kill, idempotent removal, listing by labels;
//! - zero leftovers.

use std::sync::Arc;
use std::time::Duration;

use multicooker::brief::NetworkMode;
use multicooker::cell::files::Input;
use multicooker::cell::plan::CellUser;
use multicooker::cell::sandbox::{ProbeSettings, probe};
use multicooker::runtime::{
    LABEL_ROOT, Labels, Limits, LogChunk, ObjectKind, ObjectRef, Selector, SharedRuntime,
};
use multicooker::state::{CookPaths, root_id};

use crate::common::cells::TestCell;
use crate::common::{TestCook, block_on, engine};

/// The local engine, behind the seam.
async fn docker() -> SharedRuntime {
    Arc::new(engine().await)
}

/// Runs every check of the suite against `runtime` (the swarm test calls this; the local
/// engine runs each check as a test of its own, in parallel).
pub(crate) async fn all(backend: &str, runtime: &SharedRuntime) {
    hardening(backend, runtime).await;
    hostile_trees(backend, runtime).await;
    area_cap(backend, runtime).await;
    lifecycle(backend, runtime).await;
}

/// The dummy's base image (every backend gets it the same way a cook does).
fn image() -> String {
    let context =
        multicooker::flavor::build_context("dummy", None, &crate::common::images().build_args)
            .unwrap();
    multicooker::flavor::base_tag("dummy", &context.digest)
}

fn labels(cook: &TestCook) -> Labels {
    Labels::new(cook.name(), "conformance").with(LABEL_ROOT, &root_id(cook.root()))
}

/// Objects of this test still on the backend.
async fn leftovers(runtime: &SharedRuntime, cook: &TestCook) -> Vec<ObjectRef> {
    let selector = Selector::cook(cook.name()).with(LABEL_ROOT, &root_id(cook.root()));
    runtime.list(&selector).await.unwrap()
}

#[test]
fn conformance_the_hardening_baseline_holds_inside_a_cell() {
    block_on(async { hardening("docker", &docker().await).await });
}

async fn hardening(backend: &str, runtime: &SharedRuntime) {
    let cook = TestCook::empty("conf-hardening");
    let settings = ProbeSettings {
        cook: cook.name().to_owned(),
        root_id: root_id(cook.root()),
        project: format!("mc-conf-{}", std::process::id()),
        user: CellUser::resolve(Some("1000:1000")).unwrap(),
        limits: Limits {
            memory_bytes: 512 << 20,
            memory_swap_bytes: 512 << 20,
            cpus: 0.5,
            pids: 128,
        },
        images: crate::common::images(),
        network: NetworkMode::Allowlist,
        direct: "203.0.113.1:443".into(),
    };
    let report = probe(
        runtime,
        &settings,
        tokio_util::sync::CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(report.passed, "{backend}: {:?}", report.failures());
    assert!(leftovers(runtime, &cook).await.is_empty(), "{backend}");
}

#[test]
fn conformance_staging_and_collecting_hostile_trees_copy_only_what_is_safe() {
    block_on(async { hostile_trees("docker", &docker().await).await });
}

#[expect(
    clippy::too_many_lines,
    reason = "one scenario, its assertions in order"
)]
async fn hostile_trees(backend: &str, runtime: &SharedRuntime) {
    let cook = TestCook::empty("conf-trees");
    // A careless user's raw/: odd names, a link to the host's passwd, a FIFO, a nested folder.
    let paths = CookPaths::new(cook.dir());
    let raw = paths.raw();
    fs_err::create_dir_all(raw.join("nested/deeper")).unwrap();
    for name in ["a b.txt", "ünï😀.md", "-rf", "nested/deeper/leaf.txt"] {
        fs_err::write(raw.join(name), name).unwrap();
    }
    std::os::unix::fs::symlink("/etc/passwd", raw.join("passwd")).unwrap();
    let fifo = std::ffi::CString::new(raw.join("fifo").to_str().unwrap()).unwrap();
    #[expect(unsafe_code, reason = "test fixture: std has no mkfifo")]
    // SAFETY: a valid NUL-terminated path.
    let made = unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) };
    assert_eq!(made, 0);
    let work = tempfile::tempdir().unwrap();
    let model = "quality:3,read:/work/raw/nested/deeper/leaf.txt,read:/work/raw/passwd,deep:100,many:100000,odd-names,escape,big:8M";
    let out = work.path().join(format!("{backend}-out"));
    let mut cell = TestCell::new(
        &format!("mc-conf-trees-{}-{backend}", std::process::id()),
        &image(),
        None,
        labels(&cook),
        model,
        &out,
    );
    cell.spec.limits.memory_bytes = 1 << 30;
    cell.spec.limits.memory_swap_bytes = 1 << 30;
    cell.files.writable[0].cap_bytes = 512 << 20;
    cell.files.inputs.push(Input::Copy {
        path: "raw".into(),
        source: paths.share_raw(),
    });
    let staged = multicooker::cell::stage::prepare(
        &cell.files,
        CellUser::resolve(Some("1000:1000")).unwrap(),
        cell.spec.init.launch,
    )
    .unwrap();
    let refused: Vec<&str> = staged.skipped.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(
        refused,
        ["raw/fifo", "raw/passwd"],
        "{backend}: never staged"
    );
    cell.spec.init.timeout = Some(Duration::from_secs(240));
    cell.start(&**runtime).await;
    let (code, collected) = cell.finish(&**runtime).await;
    assert_eq!(code, Some(0), "{backend}");
    let probes = fs_err::read_to_string(out.join("PROBES.txt")).unwrap();
    assert!(
        probes.contains("read /work/raw/nested/deeper/leaf.txt ok")
            && probes.contains("read /work/raw/passwd error"),
        "{backend}: staged copies are there, links are not: {probes}"
    );
    let many = fs_err::read_dir(out.join("many")).unwrap().count();
    assert_eq!(many, 100_000, "{backend}: every one of 100,000 files");
    let mut odd: Vec<String> = fs_err::read_dir(out.join("odd"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    odd.sort();
    assert_eq!(
        odd.len(),
        7,
        "{backend}: odd names kept as they are: {odd:?}"
    );
    assert!(odd.contains(&"new\nline".to_owned()) && odd.contains(&"n".repeat(255)));
    let big = fs_err::read(out.join("big.bin")).unwrap();
    assert!(
        big.len() == 8 << 20 && big.iter().all(|b| *b == b'x'),
        "{backend}"
    );
    let reasons: Vec<(String, String)> = collected
        .copy
        .skipped
        .iter()
        .map(|s| {
            let value = serde_json::to_value(&s.skip).unwrap();
            (s.path.clone(), value["reason"].as_str().unwrap().to_owned())
        })
        .collect();
    let reason_of = |path: &str| {
        reasons
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, r)| r.clone())
    };
    assert_eq!(
        reason_of("passwd").as_deref(),
        Some("symlink"),
        "{reasons:?}"
    );
    assert_eq!(reason_of("rootdir").as_deref(), Some("symlink"));
    assert_eq!(reason_of("fifo").as_deref(), Some("special"));
    assert!(
        reasons.iter().filter(|(_, r)| r == "too_deep").count() == 1,
        "{backend}: one record for the cut subtree: {reasons:?}"
    );
    for entry in walkdir::WalkDir::new(&out).follow_links(false) {
        let entry = entry.unwrap();
        assert!(
            entry.file_type().is_dir() || entry.file_type().is_file(),
            "{backend}: only folders and files reach the host: {}",
            entry.path().display()
        );
    }
    assert!(leftovers(runtime, &cook).await.is_empty(), "{backend}");
}

#[test]
fn conformance_an_areas_cap_holds_while_the_cell_runs() {
    block_on(async { area_cap("docker", &docker().await).await });
}

async fn area_cap(backend: &str, runtime: &SharedRuntime) {
    let cook = TestCook::empty("conf-cap");
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join(backend);
    let mut cell = TestCell::new(
        &format!("mc-conf-cap-{}-{backend}", std::process::id()),
        &image(),
        None,
        labels(&cook),
        "quality:3,big:64M,sparse:10G",
        &out,
    );
    cell.files.writable[0].cap_bytes = 4 << 20;
    cell.start(&**runtime).await;
    let (code, collected) = cell.finish(&**runtime).await;
    assert_eq!(
        code,
        Some(0),
        "{backend}: the dummy reports failures and goes on"
    );
    assert!(
        collected.copy.bytes <= 4 << 20,
        "{backend}: {} bytes",
        collected.copy.bytes
    );
    let on_disk: u64 = walkdir::WalkDir::new(&out)
        .into_iter()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
        .sum();
    assert!(on_disk <= 4 << 20, "{backend}: {on_disk} bytes on the host");
    assert!(leftovers(runtime, &cook).await.is_empty(), "{backend}");
}

#[test]
fn conformance_logs_timeout_kill_removal_and_listing_by_labels() {
    block_on(async { lifecycle("docker", &docker().await).await });
}

async fn lifecycle(backend: &str, runtime: &SharedRuntime) {
    let cook = TestCook::empty("conf-life");
    let work = tempfile::tempdir().unwrap();
    let name = format!("mc-conf-life-{}-{backend}", std::process::id());
    let mut cell = TestCell::new(
        &name,
        &image(),
        None,
        labels(&cook),
        "say:hello_from_the_cell,warn:on_stderr,sleep:600",
        &work.path().join(backend),
    );
    cell.spec.init.timeout = Some(Duration::from_secs(2));
    cell.start(&**runtime).await;
    let found = leftovers(runtime, &cook).await;
    assert!(
        found.contains(&ObjectRef::cell(&name)),
        "{backend}: {found:?}"
    );
    assert!(
        found
            .iter()
            .filter(|o| o.kind == ObjectKind::Volume)
            .count()
            >= 3,
        "{backend}: its areas carry its labels: {found:?}"
    );
    let selector = Selector::cook(cook.name()).with(LABEL_ROOT, &root_id(cook.root()));
    assert_eq!(
        runtime.running(&selector).await.unwrap(),
        std::slice::from_ref(&name)
    );
    let mut logs = runtime.cell_logs(&name);
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let record = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(chunk) = futures_util::StreamExt::next(&mut logs).await {
            match chunk.unwrap() {
                LogChunk::Stdout(bytes) => stdout.extend_from_slice(&bytes),
                LogChunk::Stderr(bytes) => stderr.extend_from_slice(&bytes),
            }
            let text = String::from_utf8_lossy(&stdout).into_owned();
            if let Some(rest) = text.split(multicooker::cell::EXIT_RECORD).nth(1)
                && rest.contains('\n')
            {
                return serde_json::from_str::<serde_json::Value>(rest.lines().next().unwrap())
                    .unwrap();
            }
        }
        panic!("{backend}: the log ended without an exit record");
    })
    .await
    .expect("init kills the program at its timeout and says so");
    assert_eq!(record["timed_out"], true, "{backend}: {record}");
    assert!(String::from_utf8_lossy(&stdout).contains("hello from the cell"));
    assert!(String::from_utf8_lossy(&stderr).contains("on stderr"));
    // The cell holds (its areas with it) until the host is done, then dies when killed.
    assert_eq!(
        runtime.running(&selector).await.unwrap(),
        std::slice::from_ref(&name)
    );
    runtime.kill_cell(&name).await.unwrap();
    let exit = tokio::time::timeout(Duration::from_secs(30), runtime.wait_cell(&name))
        .await
        .expect("wait returns once the cell is killed")
        .unwrap();
    assert_ne!(exit.code, 0, "{backend}");
    runtime.kill_cell(&name).await.unwrap();
    runtime.remove(&ObjectRef::cell(&name)).await.unwrap();
    runtime.remove(&ObjectRef::cell(&name)).await.unwrap();
    assert!(
        leftovers(runtime, &cook).await.is_empty(),
        "{backend}: a cell's removal takes its areas along"
    );
}

/// `read_image_files` (a Harbor task's `[verifier] user` is resolved in its environment image):
/// the files as the image has them, `None` for a path it lacks, an error for a folder or a file
/// over the cap, and the cell it was read through gone after each call. Not in [`all`]: the
/// swarm backend cannot (Harbor tasks run on the docker backend) and says so.
#[test]
fn conformance_files_of_an_image_are_read_without_running_it() {
    block_on(async {
        let runtime = docker().await;
        let cook = TestCook::empty("conf-read-image");
        let name = format!("mc-conf-read-{}", std::process::id());
        let labels = labels(&cook);
        let image = image();
        // The dummy's image is `FROM scratch` plus mc-cell: the program as its build put it.
        let context =
            multicooker::flavor::build_context("dummy", None, &crate::common::images().build_args)
                .unwrap();
        let built: Vec<u8> = tar::Archive::new(context.tar.as_slice())
            .entries()
            .unwrap()
            .map(Result::unwrap)
            .find(|e| e.path().unwrap().ends_with("mc-cell"))
            .map(|mut e| {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut e, &mut bytes).unwrap();
                bytes
            })
            .expect("the dummy's context holds mc-cell");
        let program = "/usr/local/bin/mc-cell";
        let files = runtime
            .read_image_files(
                &image,
                (&name, &labels),
                &[program, "/etc/passwd"],
                64 << 20,
            )
            .await
            .unwrap();
        assert!(
            files[0].as_deref() == Some(built.as_slice()),
            "the file as the image has it"
        );
        assert_eq!(files[1], None, "a path the image lacks");
        assert!(leftovers(&runtime, &cook).await.is_empty());
        for (path, cap, said) in [
            ("/etc", 1 << 20, "not a regular file"),
            ("/usr/local/bin/mc-cell", 8, "over 8 bytes"),
        ] {
            let error = runtime
                .read_image_files(&image, (&name, &labels), &[path], cap)
                .await
                .unwrap_err()
                .to_string();
            assert!(error.contains(said), "{path}: {error}");
            assert!(
                leftovers(&runtime, &cook).await.is_empty(),
                "{path}: the cell is removed after a failure too"
            );
        }
    });
}

/// A build context holding `dockerfile` and a file `marker`.
fn context_of(dockerfile: &str) -> Vec<u8> {
    let mut context = tar::Builder::new(Vec::new());
    for (name, bytes) in [("Dockerfile", dockerfile.as_bytes()), ("marker", b"m\n")] {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        context.append_data(&mut header, name, bytes).unwrap();
    }
    context.into_inner().unwrap()
}

/// `image_user` (a Harbor task's test.sh runs as its environment image's configured user when
/// `[verifier] user` is unset): the last `USER` of the image's Dockerfile as written, a base's
/// replaced by its child's, empty for an image naming none, an error for an image that does not
/// exist. Not in [`all`]: Harbor tasks run on the docker backend.
#[test]
fn conformance_the_configured_user_of_an_image_is_read() {
    block_on(async {
        let runtime = docker().await;
        let cook = TestCook::empty("conf-image-user");
        let labels = labels(&cook);
        let base = image();
        let context =
            multicooker::flavor::build_context("dummy", None, &crate::common::images().build_args)
                .unwrap();
        let dockerfile: String = tar::Archive::new(context.tar.as_slice())
            .entries()
            .unwrap()
            .map(Result::unwrap)
            .find(|e| e.path().unwrap().ends_with("Dockerfile"))
            .map(|mut e| std::io::read_to_string(&mut e).unwrap())
            .expect("the dummy's context holds its Dockerfile");
        let written = dockerfile
            .lines()
            .filter_map(|l| l.strip_prefix("USER "))
            .next_back()
            .expect("the dummy's Dockerfile names a USER")
            .trim();
        assert_eq!(runtime.image_user(&base).await.unwrap(), written);
        let pid = std::process::id();
        let built = [
            (
                format!("mc-conf-user-{pid}:child"),
                format!("FROM {base}\nUSER tester:staff\n"),
                "tester:staff",
            ),
            (
                format!("mc-conf-user-{pid}:none"),
                "FROM scratch\nCOPY marker /marker\n".to_owned(),
                "",
            ),
        ];
        for (tag, dockerfile, _) in &built {
            let spec = multicooker::runtime::ImageSpec {
                tag: tag.clone(),
                labels: labels.clone(),
                context: context_of(dockerfile),
            };
            runtime.build_image(&spec).await.unwrap();
        }
        for (tag, _, user) in &built {
            let read = runtime.image_user(tag).await;
            runtime.remove(&ObjectRef::image(tag)).await.unwrap();
            assert_eq!(read.unwrap(), *user, "{tag}");
            let error = runtime.image_user(tag).await.unwrap_err().to_string();
            assert!(error.contains(tag.as_str()), "{tag} is gone: {error}");
        }
        assert!(leftovers(&runtime, &cook).await.is_empty());
    });
}
