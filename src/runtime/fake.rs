//! An in-memory runtime for unit tests of pure orchestration logic (timeouts, classification,
//! teardown order). Anything touching real containers, networks or mounts is tested against
//! the real engine instead.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::stream::{self, BoxStream, StreamExt};

use super::{
    CellExit, CellSpec, EngineFuture, EngineInfo, ImageSpec, LogChunk, NetworkSpec, ObjectKind,
    ObjectRef, Runtime, RuntimeError, Selector,
};

/// How a fake cell behaves once started.
#[derive(Debug, Clone, Default)]
pub struct FakeCell {
    /// How long it runs.
    pub runs_for: Duration,
    /// Its exit code.
    pub code: i64,
    /// Whether the memory limit killed it.
    pub oom_killed: bool,
    /// What it prints.
    pub stdout: String,
    /// Creating it fails.
    pub fail_create: bool,
    /// The tar its writable area gives when collected.
    pub collected: Vec<u8>,
    /// The node lost while its output is collected (after the tar's first half).
    pub lost_in_collect: Option<String>,
    /// Cancelled the moment the cell is created (a Ctrl-C between create and start).
    pub cancel_on_create: Option<tokio_util::sync::CancellationToken>,
}

#[derive(Debug, Default)]
struct State {
    scripts: HashMap<String, FakeCell>,
    created: Vec<ObjectRef>,
    specs: HashMap<String, CellSpec>,
    removed: Vec<String>,
    killed: Vec<String>,
    fail_removal: Vec<String>,
    staged: Vec<(String, String, u64)>,
    started: Vec<String>,
}

/// A scripted runtime.
#[derive(Debug, Default)]
pub struct FakeRuntime {
    state: Mutex<State>,
}

impl FakeRuntime {
    /// Scripts the cell named `name`.
    pub fn script(&self, name: &str, cell: FakeCell) {
        self.lock().scripts.insert(name.to_owned(), cell);
    }
    /// Names removed so far, in order.
    pub fn removed(&self) -> Vec<String> {
        self.lock().removed.clone()
    }
    /// Cells killed so far.
    pub fn killed(&self) -> Vec<String> {
        self.lock().killed.clone()
    }
    /// Objects created so far.
    pub fn created(&self) -> Vec<ObjectRef> {
        self.lock().created.clone()
    }
    /// The spec a cell was created with.
    pub fn spec(&self, name: &str) -> Option<CellSpec> {
        self.lock().specs.get(name).cloned()
    }
    /// Cells started so far.
    pub fn started(&self) -> Vec<String> {
        self.lock().started.clone()
    }
    /// What was staged so far: cell, target, tar size.
    pub fn staged(&self) -> Vec<(String, String, u64)> {
        self.lock().staged.clone()
    }
    /// Makes removing `name` fail.
    pub fn fail_removal_of(&self, name: &str) {
        self.lock().fail_removal.push(name.to_owned());
    }
    /// Makes removals succeed again.
    pub fn clear_failures(&self) {
        self.lock().fail_removal.clear();
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
    fn script_of(&self, name: &str) -> FakeCell {
        self.lock().scripts.get(name).cloned().unwrap_or_default()
    }
}

fn refused(operation: &'static str, object: ObjectRef) -> RuntimeError {
    RuntimeError::Operation {
        operation,
        object,
        status: Some(500),
        message: "scripted failure".into(),
    }
}

impl FakeRuntime {
    /// How the fake cell's init would end its program: after `runs_for`, or killed at the
    /// init timeout.
    fn ending(&self, name: &str) -> (Duration, String) {
        let script = self.script_of(name);
        let timeout = self
            .spec(name)
            .and_then(|s| s.init.timeout)
            .unwrap_or(Duration::MAX);
        if script.runs_for > timeout {
            (
                timeout,
                "{\"code\":null,\"signal\":9,\"timed_out\":true}".to_owned(),
            )
        } else {
            (
                script.runs_for,
                format!(
                    "{{\"code\":{},\"signal\":null,\"timed_out\":false,\"oom\":{}}}",
                    script.code, script.oom_killed
                ),
            )
        }
    }
}

impl Runtime for FakeRuntime {
    fn backend(&self) -> &'static str {
        "fake"
    }
    fn info(&self) -> EngineFuture<'_, EngineInfo> {
        async {
            Ok(EngineInfo {
                backend: "fake",
                version: "0".into(),
                api_version: "1.41".into(),
                mem_total: 16 << 30,
                cpus: 2,
                nodes: 1,
            })
        }
        .boxed()
    }
    fn image_exists<'a>(&'a self, tag: &'a str) -> EngineFuture<'a, bool> {
        async move { Ok(self.lock().created.contains(&ObjectRef::image(tag))) }.boxed()
    }
    fn image_labels<'a>(
        &'a self,
        tag: &'a str,
    ) -> EngineFuture<'a, Option<std::collections::BTreeMap<String, String>>> {
        async move {
            Ok(self
                .lock()
                .created
                .contains(&ObjectRef::image(tag))
                .then(std::collections::BTreeMap::new))
        }
        .boxed()
    }
    fn image_id<'a>(&'a self, _tag: &'a str) -> EngineFuture<'a, Option<String>> {
        async { Ok(None) }.boxed()
    }
    fn build_image<'a>(&'a self, spec: &'a ImageSpec) -> EngineFuture<'a, ()> {
        async move {
            self.lock().created.push(ObjectRef::image(&spec.tag));
            Ok(())
        }
        .boxed()
    }
    fn create_network<'a>(&'a self, spec: &'a NetworkSpec) -> EngineFuture<'a, ()> {
        async move {
            self.lock().created.push(ObjectRef::network(&spec.name));
            Ok(())
        }
        .boxed()
    }
    fn create_cell<'a>(&'a self, spec: &'a CellSpec) -> EngineFuture<'a, ()> {
        async move {
            let script = self.script_of(&spec.name);
            if script.fail_create {
                return Err(refused("create", ObjectRef::cell(&spec.name)));
            }
            if let Some(cancel) = script.cancel_on_create {
                cancel.cancel();
            }
            let mut state = self.lock();
            state.created.push(ObjectRef::cell(&spec.name));
            state.specs.insert(spec.name.clone(), spec.clone());
            Ok(())
        }
        .boxed()
    }
    fn connect_network<'a>(&'a self, _network: &'a str, _cell: &'a str) -> EngineFuture<'a, ()> {
        async { Ok(()) }.boxed()
    }
    fn start_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, ()> {
        async move {
            self.lock().started.push(name.to_owned());
            Ok(())
        }
        .boxed()
    }
    fn stage<'a>(
        &'a self,
        cell: &'a str,
        target: &'a str,
        archive: super::Archive,
    ) -> EngineFuture<'a, ()> {
        async move {
            self.lock()
                .staged
                .push((cell.to_owned(), target.to_owned(), archive.len));
            Ok(())
        }
        .boxed()
    }
    fn collect(
        &self,
        cell: &str,
        _source: &str,
    ) -> BoxStream<'static, Result<bytes::Bytes, RuntimeError>> {
        let script = self.script_of(cell);
        let tar = script.collected;
        if let Some(node) = script.lost_in_collect {
            let half = bytes::Bytes::from(tar[..tar.len() / 2].to_vec());
            return stream::iter([Ok(half), Err(RuntimeError::NodeLost { node })]).boxed();
        }
        stream::iter([Ok(bytes::Bytes::from(tar))]).boxed()
    }
    fn wait_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, CellExit> {
        async move {
            let script = self.script_of(name);
            let spec = self.spec(name);
            // A holding init outlives its program until the deadline.
            let lives = match &spec {
                Some(spec) if spec.init.hold => spec.init.deadline,
                _ => self.ending(name).0,
            };
            tokio::time::sleep(lives).await;
            Ok(CellExit {
                code: script.code,
                oom_killed: script.oom_killed,
            })
        }
        .boxed()
    }
    fn oom_killed<'a>(&'a self, name: &'a str) -> EngineFuture<'a, bool> {
        async move { Ok(self.script_of(name).oom_killed) }.boxed()
    }
    fn kill_cell<'a>(&'a self, name: &'a str) -> EngineFuture<'a, ()> {
        async move {
            self.lock().killed.push(name.to_owned());
            Ok(())
        }
        .boxed()
    }
    fn cell_logs(&self, name: &str) -> BoxStream<'static, Result<LogChunk, RuntimeError>> {
        let text = self.script_of(name).stdout;
        let (after, record) = self.ending(name);
        let record = format!("\n{}{record}\n", super::names::EXIT_RECORD);
        let printed = stream::iter([Ok(LogChunk::Stdout(bytes::Bytes::from(text)))]);
        let ended = stream::once(async move {
            tokio::time::sleep(after).await;
            Ok(LogChunk::Stdout(bytes::Bytes::from(record)))
        });
        printed.chain(ended).boxed()
    }
    fn remove<'a>(&'a self, object: &'a ObjectRef) -> EngineFuture<'a, ()> {
        async move {
            let mut state = self.lock();
            if state.fail_removal.contains(&object.name) {
                return Err(refused("remove", object.clone()));
            }
            state.removed.push(object.name.clone());
            Ok(())
        }
        .boxed()
    }
    fn list<'a>(&'a self, _selector: &'a Selector) -> EngineFuture<'a, Vec<ObjectRef>> {
        async move {
            let state = self.lock();
            Ok(state
                .created
                .iter()
                .filter(|o| o.kind != ObjectKind::Volume && !state.removed.contains(&o.name))
                .cloned()
                .collect())
        }
        .boxed()
    }
    fn running<'a>(&'a self, _selector: &'a Selector) -> EngineFuture<'a, Vec<String>> {
        async { Ok(Vec::new()) }.boxed()
    }
    fn program<'a>(&'a self, spec: &'a CellSpec) -> EngineFuture<'a, Vec<String>> {
        async move { Ok(spec.program.clone().unwrap_or_default()) }.boxed()
    }
}
