//! The ledger: every engine object a command creates is recorded *before* the create call, so
//! a failed start or a lost response is still torn down. Teardown runs on every path
//! (success, failure, timeout, Ctrl-C), removes cells before networks before images, carries on
//! past errors and treats "already gone" as success. `Drop` is the backstop: it names what is
//! left and points to `multicooker clean --all`.

use std::sync::Mutex;

use futures_util::future::join_all;

use super::{ObjectKind, ObjectRef, Runtime, RuntimeError};

/// One object teardown could not remove.
#[derive(Debug)]
pub struct TeardownFailure {
    /// The object.
    pub object: ObjectRef,
    /// Why.
    pub error: RuntimeError,
}

/// Objects this command created and has not removed yet.
#[derive(Debug, Default)]
pub struct Ledger {
    objects: Mutex<Vec<ObjectRef>>,
    keep: bool,
}

impl Ledger {
    /// An empty ledger; with `keep`, teardown leaves everything in place (for debugging).
    pub fn new(keep: bool) -> Self {
        Self {
            objects: Mutex::new(Vec::new()),
            keep,
        }
    }

    /// Records an object that is about to be created.
    pub fn record(&self, object: ObjectRef) {
        let mut objects = self.lock();
        if !objects.contains(&object) {
            objects.push(object);
        }
    }

    /// Removes one object now (e.g. a cell that has exited) and forgets it.
    pub async fn release(
        &self,
        runtime: &dyn Runtime,
        object: &ObjectRef,
    ) -> Result<(), RuntimeError> {
        if self.keep {
            return Ok(());
        }
        runtime.remove(object).await?;
        self.lock().retain(|o| o != object);
        Ok(())
    }

    /// What is still recorded.
    pub fn outstanding(&self) -> Vec<ObjectRef> {
        self.lock().clone()
    }

    /// True when debugging keeps objects.
    pub fn keeps(&self) -> bool {
        self.keep
    }

    /// Removes everything recorded: cells, then networks, then volumes, then images, each kind
    /// in parallel. Returns every failure; what failed stays recorded.
    pub async fn teardown(&self, runtime: &dyn Runtime) -> Vec<TeardownFailure> {
        if self.keep {
            return Vec::new();
        }
        let mut failures = Vec::new();
        for kind in [
            ObjectKind::Cell,
            ObjectKind::Network,
            ObjectKind::Volume,
            ObjectKind::Image,
        ] {
            let batch: Vec<ObjectRef> = self
                .lock()
                .iter()
                .filter(|o| o.kind == kind)
                .cloned()
                .collect();
            let results = join_all(batch.iter().map(|object| runtime.remove(object))).await;
            for (object, result) in batch.into_iter().zip(results) {
                match result {
                    Ok(()) => self.lock().retain(|o| *o != object),
                    Err(error) => failures.push(TeardownFailure { object, error }),
                }
            }
        }
        failures
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ObjectRef>> {
        self.objects
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        let left = self.lock().clone();
        if left.is_empty() {
            return;
        }
        let names: Vec<String> = left.iter().map(ToString::to_string).collect();
        let why = if self.keep {
            "kept because MULTICOOKER_KEEP=1"
        } else {
            "could not be removed"
        };
        #[expect(
            clippy::print_stderr,
            reason = "last-resort backstop; the printer may already be gone"
        )]
        {
            eprintln!(
                "warning: {} engine object(s) {why}: {}",
                left.len(),
                names.join(", ")
            );
            eprintln!("hint: remove them with `multicooker clean --all`");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::fake::FakeRuntime;

    #[tokio::test]
    async fn teardown_removes_cells_before_networks_and_forgets_them() {
        let runtime = FakeRuntime::default();
        let ledger = Ledger::new(false);
        ledger.record(ObjectRef::network("net"));
        ledger.record(ObjectRef::cell("cell"));
        ledger.record(ObjectRef::image("img"));
        let failures = ledger.teardown(&runtime).await;
        assert!(failures.is_empty());
        assert_eq!(runtime.removed(), ["cell", "net", "img"]);
        assert!(ledger.outstanding().is_empty());
    }

    #[tokio::test]
    async fn teardown_carries_on_past_failures() {
        let runtime = FakeRuntime::default();
        runtime.fail_removal_of("cell-a");
        let ledger = Ledger::new(false);
        ledger.record(ObjectRef::cell("cell-a"));
        ledger.record(ObjectRef::cell("cell-b"));
        ledger.record(ObjectRef::network("net"));
        let failures = ledger.teardown(&runtime).await;
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].object, ObjectRef::cell("cell-a"));
        assert_eq!(runtime.removed(), ["cell-b", "net"]);
        assert_eq!(ledger.outstanding(), [ObjectRef::cell("cell-a")]);
        runtime.clear_failures();
        assert!(ledger.teardown(&runtime).await.is_empty());
    }
}
