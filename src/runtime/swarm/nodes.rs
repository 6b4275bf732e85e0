//! The nodes' own engines, each reached with bounded calls: a node that does not answer costs
//! seconds, never minutes, and never more than its own cells (issue 22).
//!
//! - Every request to a node's engine is bounded by [`NODE_TIMEOUT_S`] (bollard's timeout
//!   covers a request up to its response's head; streams are bounded by the node being lost).
//! - An error reaching a node is *confirmed* ([`Nodes::confirm`]): the manager is asked
//!   whether the node is Down, and the engine is pinged, for at most [`CONFIRM`]. A node the
//!   manager marks Down, or whose engine stays silent that long, is lost: its cells end
//!   [`RuntimeError::NodeLost`], and later calls to it fail at once (re-pinged at most every
//!   [`REPING`]) instead of waiting out a timeout each.
//! - What cannot be removed from a silent node is written to the [`Left`] file; once the node
//!   answers again (a later call, listing, or the next command), it is removed first: the
//!   cells of a node that comes back after it was declared lost are stopped and removed
//!   (fencing).
//! - Every warning names the node, once per node and episode.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bollard::Docker;

use super::super::docker::DockerRuntime;
use super::super::{ObjectKind, ObjectRef, RuntimeError};
use super::left::Left;

/// Seconds one request to a node's engine may take before its response's head.
pub const NODE_TIMEOUT_S: u64 = 10;
/// How long a ping of a node's engine may take.
const PING: Duration = Duration::from_secs(3);
/// How long an error reaching a node is confirmed against the manager and the engine.
pub const CONFIRM: Duration = Duration::from_secs(45);
/// How often a node declared lost is pinged again (between, calls to it fail at once).
const REPING: Duration = Duration::from_secs(10);
/// How often the manager is asked about a node while confirming.
const CONFIRM_POLL: Duration = Duration::from_secs(1);

/// Where warnings go (the command's printer, or stderr).
#[derive(Clone)]
pub struct Warn(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for Warn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Warn")
    }
}

impl Default for Warn {
    fn default() -> Self {
        Self(Arc::new(|line| {
            #[expect(
                clippy::print_stderr,
                reason = "the default sink of a runtime used without a printer"
            )]
            {
                eprintln!("warning: {line}");
            }
        }))
    }
}

/// The nodes' engines and what is known of their reachability.
#[derive(Debug)]
pub(super) struct Nodes {
    engines: BTreeMap<String, DockerRuntime>,
    addresses: BTreeMap<String, String>,
    /// Nodes declared lost, with when they were last pinged.
    lost: Mutex<HashMap<String, Instant>>,
    /// What was said about which node in this episode (`waiting`, `lost`, `skipped`).
    warned: Mutex<BTreeSet<(String, &'static str)>>,
    left: Left,
    warn: Warn,
    /// The manager: fencing spares a cell's namesake created since.
    manager: Docker,
}

/// True when an engine error means the engine was not reached (no answer, a broken stream),
/// as opposed to the engine answering with an error.
pub(super) fn unreached(error: &RuntimeError) -> bool {
    matches!(
        error,
        RuntimeError::Unreachable { .. }
            | RuntimeError::NodeLost { .. }
            | RuntimeError::Operation { status: None, .. }
    )
}

impl Nodes {
    pub(super) fn new(
        engines: BTreeMap<String, (String, DockerRuntime)>,
        left: Left,
        warn: Warn,
        manager: Docker,
    ) -> Self {
        let addresses = engines
            .iter()
            .map(|(h, (a, _))| (h.clone(), a.clone()))
            .collect();
        Self {
            engines: engines.into_iter().map(|(h, (_, e))| (h, e)).collect(),
            addresses,
            lost: Mutex::default(),
            warned: Mutex::default(),
            left,
            warn,
            manager,
        }
    }

    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.engines.keys().map(String::as_str)
    }

    pub(super) fn get(&self, host: &str) -> Option<(&str, &DockerRuntime)> {
        self.engines
            .get_key_value(host)
            .map(|(h, e)| (h.as_str(), e))
    }

    pub(super) fn warn(&self, line: &str) {
        (self.warn.0)(line);
    }

    /// Warns once per episode about a node: that calls wait for it, that it is lost (or
    /// left out), that an operation skipped it (unless it was already said to be lost).
    fn warn_once(&self, host: &str, kind: &'static str, line: &str) {
        let mut warned = lock(&self.warned);
        if kind == "skipped" && warned.contains(&(host.to_owned(), "lost")) {
            return;
        }
        if warned.insert((host.to_owned(), kind)) {
            drop(warned);
            self.warn(line);
        }
    }

    /// The node answers again: a later loss is a new episode.
    fn answered(&self, host: &str) {
        lock(&self.warned).retain(|(h, _)| h != host);
    }

    fn address(&self, host: &str) -> &str {
        self.addresses.get(host).map_or("?", String::as_str)
    }

    /// True when the node's engine answers a ping within [`PING`].
    pub(super) async fn answers(&self, host: &str) -> bool {
        let Some((_, engine)) = self.get(host) else {
            return false;
        };
        matches!(
            tokio::time::timeout(PING, engine.client().ping()).await,
            Ok(Ok(_))
        )
    }

    /// Leaves out every node whose engine does not answer now, with a warning naming it;
    /// refuses only when none answers (then no cell could run).
    pub(super) async fn left_out_silent(&self, manager: &str) -> Result<(), RuntimeError> {
        let hosts: Vec<&str> = self.names().collect();
        let answers =
            futures_util::future::join_all(hosts.iter().map(|host| self.answers(host))).await;
        for (host, answered) in hosts.iter().zip(&answers) {
            if !answered {
                lock(&self.lost).insert((*host).to_owned(), Instant::now());
                self.warn_once(
                    host,
                    "lost",
                    &format!(
                        "node `{host}` ({}) does not answer: left out; cells run on the nodes that answer, and what multicooker left there is removed once it answers (by the next command, or `multicooker clean --all`)",
                        self.address(host)
                    ),
                );
            }
        }
        if !hosts.is_empty() && !answers.contains(&true) {
            return Err(RuntimeError::Unreachable {
                endpoint: Some(manager.to_owned()),
                message: format!(
                    "no node's engine answers (MULTICOOKER_SWARM_NODES: {})",
                    hosts
                        .iter()
                        .map(|h| format!("{h}={}", self.address(h)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        Ok(())
    }

    /// Marks a node lost (warning once): later calls to it fail at once.
    pub(super) fn declare_lost(&self, host: &str, why: &str) {
        lock(&self.lost).insert(host.to_owned(), Instant::now());
        self.warn_once(
            host,
            "lost",
            &format!(
                "node `{host}` ({}) is lost ({why}): its cells end `node_lost` (unscored), and what multicooker left there is removed once it answers again",
                self.address(host)
            ),
        );
    }

    /// `Ok` when calls may go to the node: not lost, or lost and answering again (then what
    /// was left there is removed first: fencing). `Err(NodeLost)` at once otherwise.
    pub(super) async fn usable(&self, host: &str) -> Result<(), RuntimeError> {
        let pinged = lock(&self.lost).get(host).copied();
        let Some(pinged) = pinged else {
            return Ok(());
        };
        let lost = || RuntimeError::NodeLost {
            node: host.to_owned(),
        };
        if pinged.elapsed() < REPING {
            return Err(lost());
        }
        if !self.answers(host).await {
            lock(&self.lost).insert(host.to_owned(), Instant::now());
            return Err(lost());
        }
        lock(&self.lost).remove(host);
        self.answered(host);
        self.fence(host).await;
        Ok(())
    }

    /// Confirms an error reaching `host`: `NodeLost` when the manager marks the node Down or
    /// its engine stays silent for [`CONFIRM`]; the error itself when the engine answers.
    pub(super) async fn confirm(
        &self,
        manager: &Docker,
        host: &str,
        error: RuntimeError,
    ) -> RuntimeError {
        if !unreached(&error) || !self.engines.contains_key(host) {
            return error;
        }
        if lock(&self.lost).contains_key(host) {
            return RuntimeError::NodeLost {
                node: host.to_owned(),
            };
        }
        self.warn_once(
            host,
            "waiting",
            &format!(
                "waiting for node `{host}` ({}): its engine did not answer ({error}); asking the manager (at most {}s)",
                self.address(host),
                CONFIRM.as_secs()
            ),
        );
        let start = Instant::now();
        loop {
            if lock(&self.lost).contains_key(host) {
                break;
            }
            if let Some(state) = node_state(manager, host).await
                && matches!(state.as_str(), "down" | "disconnected")
            {
                self.declare_lost(host, &format!("the manager marks it {state}"));
                break;
            }
            if self.answers(host).await {
                self.answered(host);
                return error;
            }
            if start.elapsed() > CONFIRM {
                self.declare_lost(
                    host,
                    &format!("its engine did not answer for {}s", CONFIRM.as_secs()),
                );
                break;
            }
            tokio::time::sleep(CONFIRM_POLL).await;
        }
        RuntimeError::NodeLost {
            node: host.to_owned(),
        }
    }

    /// Records an object left on a node that could not be reached.
    pub(super) fn leave(&self, host: &str, object: ObjectRef) {
        self.left.add(host, object);
    }

    /// Removes what was left on `host` (it answers): its cells' containers are killed and
    /// removed with their volumes, other objects removed. What still fails stays recorded.
    pub(super) async fn fence(&self, host: &str) {
        let Some((_, engine)) = self.get(host) else {
            return;
        };
        let objects = self.left.of(host);
        if objects.is_empty() {
            return;
        }
        let mut removed = 0;
        for object in objects {
            let done = match object.kind {
                ObjectKind::Cell => {
                    let live = live_services(&self.manager, &object.name).await;
                    super::objects::sweep_cell_but(engine, &object.name, &live).await
                }
                ObjectKind::Volume => {
                    super::objects::remove_volume(engine.client(), &object.name).await
                }
                _ => engine.engine_remove(&object).await,
            };
            if done.is_ok() {
                self.left.forget(host, &object);
                removed += 1;
            }
        }
        self.warn(&format!(
            "node `{host}` answers again: removed {removed} object(s) multicooker had left there while it was lost"
        ));
    }

    /// Fences every node that was left something and answers now (at connect and listing).
    pub(super) async fn fence_answering(&self) {
        for host in self.left.hosts() {
            if lock(&self.lost).contains_key(&host) || !self.answers(&host).await {
                continue;
            }
            self.fence(&host).await;
        }
    }

    /// Nodes currently declared lost.
    pub(super) fn lost(&self) -> Vec<String> {
        let mut hosts: Vec<String> = lock(&self.lost).keys().cloned().collect();
        hosts.sort();
        hosts
    }

    /// Warns that a node was skipped by an operation (once per episode).
    pub(super) fn skipped(&self, host: &str, what: &str) {
        self.warn_once(
            host,
            "skipped",
            &format!(
                "node `{host}` ({}) does not answer: {what} skipped it; what multicooker left there is removed once it answers (or by `multicooker clean --all`)",
                self.address(host)
            ),
        );
    }
}

/// The ids of the services named `name` the manager has now (a cell created again under the
/// name of one left on a lost node). The manager not answering spares none.
async fn live_services(manager: &Docker, name: &str) -> Vec<String> {
    let mut filters = HashMap::new();
    filters.insert("name".to_owned(), vec![name.to_owned()]);
    let options = bollard::query_parameters::ListServicesOptionsBuilder::default()
        .filters(&filters)
        .build();
    tokio::time::timeout(PING, manager.list_services(Some(options)))
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default()
        .into_iter()
        // The engine's name filter matches prefixes.
        .filter(|s| s.spec.as_ref().and_then(|s| s.name.as_deref()) == Some(name))
        .filter_map(|s| s.id)
        .collect()
}

/// The manager's state of a node (`ready`, `down`, …), by hostname; `None` if it cannot say.
pub(super) async fn node_state(manager: &Docker, host: &str) -> Option<String> {
    let node = tokio::time::timeout(PING, manager.inspect_node(host))
        .await
        .ok()?
        .ok()?;
    node.status?.state.map(|s| s.to_string())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_errors_that_never_reached_the_engine_are_confirmed() {
        let answered = RuntimeError::Operation {
            operation: "remove",
            object: ObjectRef::cell("c"),
            status: Some(409),
            message: "in use".into(),
        };
        assert!(
            !unreached(&answered),
            "the engine answered: not a lost node"
        );
        let broken = RuntimeError::Operation {
            operation: "wait for",
            object: ObjectRef::cell("c"),
            status: None,
            message: "client error (Connect)".into(),
        };
        assert!(unreached(&broken));
        assert!(unreached(&RuntimeError::NodeLost { node: "n2".into() }));
    }
}
