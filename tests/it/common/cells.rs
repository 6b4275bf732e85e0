//! One-off cells for tests that drive the engine directly (test doubles, probes, hostile
//! cells): built with the same areas, init and staging the runner uses, and collected through
//! the same checked path.

use std::path::Path;
use std::time::Duration;

use futures_util::StreamExt;
use multicooker::cell::collect::{self, Bounds, Collected};
use multicooker::cell::files::{CellFiles, Input, Writable};
use multicooker::cell::plan::CellUser;
use multicooker::cell::{EXIT_RECORD, stage};
use multicooker::redact::Redactor;
use multicooker::runtime::{CellSpec, Init, Labels, Limits, LogChunk, Runtime, Tmpfs};

/// A hardened dummy cell with `/work` (its prompt) and a collected `/work/out`.
pub(crate) struct TestCell {
    /// The spec (areas are set when it is started).
    pub(crate) spec: CellSpec,
    /// Its files.
    pub(crate) files: CellFiles,
}

impl TestCell {
    /// A cell of `image` on `network` running the dummy with `model`, output into `out`.
    pub(crate) fn new(
        name: &str,
        image: &str,
        network: Option<&str>,
        labels: Labels,
        model: &str,
        out: &Path,
    ) -> Self {
        let spec = CellSpec {
            name: name.to_owned(),
            image: image.to_owned(),
            network: network.map(str::to_owned),
            labels,
            user: "1000:1000".into(),
            env: vec![
                ("MULTICOOKER_MODEL".into(), model.into()),
                ("HOME".into(), "/tmp".into()),
            ],
            areas: Vec::new(),
            tmpfs: vec![Tmpfs {
                target: "/tmp".into(),
                size_bytes: 64 << 20,
                mode: 0o1777,
                owner: None,
            }],
            limits: Limits {
                memory_bytes: 256 << 20,
                memory_swap_bytes: 256 << 20,
                cpus: 0.5,
                pids: 64,
            },
            workdir: "/work".into(),
            program: Some(vec![
                multicooker::runtime::INIT_PATH.to_owned(),
                "dummy".to_owned(),
            ]),
            init: Init {
                wait_for_go: true,
                launch: true,
                hold: true,
                timeout: Some(Duration::from_secs(300)),
                deadline: Duration::from_secs(600),
                task_root: false,
                go_dir: None,
            },
            task: None,
        };
        let files = CellFiles {
            inputs: vec![Input::Text {
                path: "PROMPT.txt".into(),
                bytes: b"probe".to_vec(),
            }],
            writable: vec![Writable {
                path: "out".into(),
                cap_bytes: 64 << 20,
                seed: None,
                collect_to: out.to_path_buf(),
                mounted: true,
                before_to: None,
            }],
            login: None,
            input_area: None,
        };
        Self { spec, files }
    }

    /// Creates and starts it, stages its files and the go file.
    pub(crate) async fn start(&mut self, runtime: &dyn Runtime) {
        let archives = self.prepare();
        runtime.create_cell(&self.spec).await.unwrap();
        self.stage(runtime, archives).await;
    }

    /// Sets the spec's areas; returns the tars to stage once it is created.
    pub(crate) fn prepare(&mut self) -> Vec<(String, multicooker::runtime::Archive)> {
        let user = CellUser::resolve(Some("1000:1000")).unwrap();
        let staging = stage::prepare(&self.files, user, self.spec.init.launch).unwrap();
        self.spec.areas = staging.areas;
        staging.archives
    }

    /// Starts the created cell and stages the tars.
    pub(crate) async fn stage(
        &self,
        runtime: &dyn Runtime,
        archives: Vec<(String, multicooker::runtime::Archive)>,
    ) {
        runtime.start_cell(&self.spec.name).await.unwrap();
        for (target, archive) in archives {
            runtime
                .stage(&self.spec.name, &target, archive)
                .await
                .unwrap();
        }
    }

    /// Waits for init's exit record, collects `out/` and removes the cell; returns the
    /// program's exit code (from the record) and the collection report.
    pub(crate) async fn finish(&self, runtime: &dyn Runtime) -> (Option<i64>, Collected) {
        let (record, collected) = self.finish_with_record(runtime).await;
        (record["code"].as_i64(), collected)
    }

    /// As [`TestCell::finish`], returning init's whole exit record.
    pub(crate) async fn finish_with_record(
        &self,
        runtime: &dyn Runtime,
    ) -> (serde_json::Value, Collected) {
        let mut logs = runtime.cell_logs(&self.spec.name);
        let mut seen = Vec::new();
        while let Some(Ok(LogChunk::Stdout(bytes) | LogChunk::Stderr(bytes))) = logs.next().await {
            seen.extend_from_slice(&bytes);
            if String::from_utf8_lossy(&seen).contains(EXIT_RECORD) {
                break;
            }
        }
        let text = String::from_utf8_lossy(&seen).into_owned();
        let record = text
            .split(EXIT_RECORD)
            .nth(1)
            .and_then(|rest| rest.lines().next())
            .and_then(|json| serde_json::from_str::<serde_json::Value>(json).ok())
            .unwrap_or_default();
        let collected = self.collect(runtime).await;
        runtime
            .remove(&multicooker::runtime::ObjectRef::cell(&self.spec.name))
            .await
            .unwrap();
        (record, collected)
    }

    /// Collects `out/` into its host folder through the checked path.
    pub(crate) async fn collect(&self, runtime: &dyn Runtime) -> Collected {
        let mut tar = Vec::new();
        let mut stream = runtime.collect(&self.spec.name, "/work/out");
        while let Some(chunk) = stream.next().await {
            tar.extend_from_slice(&chunk.unwrap());
        }
        let dest = self.files.writable[0].collect_to.clone();
        let _ = fs_err::remove_dir_all(&dest);
        collect::unpack(
            tar.as_slice(),
            &dest,
            Bounds::with_max_bytes(self.files.writable[0].cap_bytes),
            &Redactor::new(&[]),
        )
        .unwrap()
    }
}
