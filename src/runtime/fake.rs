//! An in-memory runtime for unit tests of pure orchestration logic (timeouts, classification,
//! teardown order). Anything touching real containers, networks or mounts is tested against
//! the real engine instead.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};

use super::{
    CellExit, CellSpec, EngineInfo, ImageSpec, LogChunk, NetworkSpec, ObjectKind, ObjectRef,
    Runtime, RuntimeError, Selector,
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
}

#[derive(Debug, Default)]
struct State {
    scripts: HashMap<String, FakeCell>,
    created: Vec<ObjectRef>,
    specs: HashMap<String, CellSpec>,
    removed: Vec<String>,
    killed: Vec<String>,
    fail_removal: Vec<String>,
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

impl Runtime for FakeRuntime {
    async fn info(&self) -> Result<EngineInfo, RuntimeError> {
        Ok(EngineInfo {
            backend: "fake",
            version: "0".into(),
            api_version: "1.41".into(),
            mem_total: 16 << 30,
            cpus: 2,
        })
    }
    async fn image_exists(&self, tag: &str) -> Result<bool, RuntimeError> {
        Ok(self.lock().created.contains(&ObjectRef::image(tag)))
    }
    async fn image_labels(
        &self,
        tag: &str,
    ) -> Result<Option<std::collections::BTreeMap<String, String>>, RuntimeError> {
        Ok(self
            .lock()
            .created
            .contains(&ObjectRef::image(tag))
            .then(std::collections::BTreeMap::new))
    }
    async fn build_image(&self, spec: &ImageSpec) -> Result<(), RuntimeError> {
        self.lock().created.push(ObjectRef::image(&spec.tag));
        Ok(())
    }
    async fn create_network(&self, spec: &NetworkSpec) -> Result<(), RuntimeError> {
        self.lock().created.push(ObjectRef::network(&spec.name));
        Ok(())
    }
    async fn create_cell(&self, spec: &CellSpec) -> Result<(), RuntimeError> {
        if self.script_of(&spec.name).fail_create {
            return Err(refused("create", ObjectRef::cell(&spec.name)));
        }
        let mut state = self.lock();
        state.created.push(ObjectRef::cell(&spec.name));
        state.specs.insert(spec.name.clone(), spec.clone());
        Ok(())
    }
    async fn connect_network(&self, _network: &str, _cell: &str) -> Result<(), RuntimeError> {
        Ok(())
    }
    async fn start_cell(&self, _name: &str) -> Result<(), RuntimeError> {
        Ok(())
    }
    async fn wait_cell(&self, name: &str) -> Result<CellExit, RuntimeError> {
        let script = self.script_of(name);
        tokio::time::sleep(script.runs_for).await;
        Ok(CellExit {
            code: script.code,
            oom_killed: script.oom_killed,
        })
    }
    async fn kill_cell(&self, name: &str) -> Result<(), RuntimeError> {
        self.lock().killed.push(name.to_owned());
        Ok(())
    }
    fn cell_logs(&self, name: &str) -> BoxStream<'static, Result<LogChunk, RuntimeError>> {
        let text = self.script_of(name).stdout;
        stream::iter([Ok(LogChunk::Stdout(bytes::Bytes::from(text)))]).boxed()
    }
    async fn remove(&self, object: &ObjectRef) -> Result<(), RuntimeError> {
        let mut state = self.lock();
        if state.fail_removal.contains(&object.name) {
            return Err(refused("remove", object.clone()));
        }
        state.removed.push(object.name.clone());
        Ok(())
    }
    async fn list(&self, _selector: &Selector) -> Result<Vec<ObjectRef>, RuntimeError> {
        let state = self.lock();
        Ok(state
            .created
            .iter()
            .filter(|o| o.kind != ObjectKind::Volume && !state.removed.contains(&o.name))
            .cloned()
            .collect())
    }
}
