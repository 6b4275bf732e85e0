//! What multicooker had to leave on a node it could not reach (a lost node's cells, the
//! copies of an image it pulled), kept in a file per swarm so that the next call that reaches
//! the node, or the next command, removes it (docs/ENGINE.md §4b).
//!
//! The file is `~/.cache/multicooker/swarm/<manager>.left.json`: `{"node": [["cell",
//! "name"], …]}`, rewritten atomically on every change. Two commands writing it at the same
//! moment may lose one's entry; the objects still carry their cook's labels, so
//! `multicooker clean --all` finds them anyway.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use sha2::Digest;

use super::super::{ObjectKind, ObjectRef};

/// The file of one swarm (none when there is no HOME: then only this process remembers).
#[derive(Debug, Default)]
pub(super) struct Left {
    path: Option<PathBuf>,
    objects: Mutex<BTreeMap<String, Vec<ObjectRef>>>,
}

impl Left {
    /// The file of the swarm whose manager is `manager` under `home`, read now.
    pub(super) fn open(manager: &str, home: Option<&std::path::Path>) -> Self {
        let path = home.map(|home| {
            let digest = sha2::Sha256::digest(manager.as_bytes());
            let tag: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
            home.join(format!(".cache/multicooker/swarm/{tag}.left.json"))
        });
        let objects = path
            .as_ref()
            .and_then(|p| fs_err::read_to_string(p).ok())
            .map(|text| parse(&text))
            .unwrap_or_default();
        Self {
            path,
            objects: Mutex::new(objects),
        }
    }

    /// Records an object left on `host`.
    pub(super) fn add(&self, host: &str, object: ObjectRef) {
        let mut objects = self.lock();
        let list = objects.entry(host.to_owned()).or_default();
        if !list.contains(&object) {
            list.push(object);
            self.save(&objects);
        }
    }

    /// Forgets an object once removed.
    pub(super) fn forget(&self, host: &str, object: &ObjectRef) {
        let mut objects = self.lock();
        if let Some(list) = objects.get_mut(host) {
            list.retain(|o| o != object);
            if list.is_empty() {
                objects.remove(host);
            }
            self.save(&objects);
        }
    }

    /// What was left on `host`.
    pub(super) fn of(&self, host: &str) -> Vec<ObjectRef> {
        self.lock().get(host).cloned().unwrap_or_default()
    }

    /// Nodes something was left on.
    pub(super) fn hosts(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    fn save(&self, objects: &BTreeMap<String, Vec<ObjectRef>>) {
        let Some(path) = &self.path else {
            return;
        };
        let value: BTreeMap<&str, Vec<[&str; 2]>> = objects
            .iter()
            .map(|(host, list)| {
                let items = list.iter().map(|o| [kind_word(o.kind), &o.name]).collect();
                (host.as_str(), items)
            })
            .collect();
        if let Some(parent) = path.parent() {
            let _ = fs_err::create_dir_all(parent);
        }
        // Best effort: the objects carry their labels, `clean --all` finds them regardless.
        let _ = crate::fsx::write_json_atomic(path, &value);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Vec<ObjectRef>>> {
        self.objects
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn kind_word(kind: ObjectKind) -> &'static str {
    match kind {
        ObjectKind::Cell => "cell",
        ObjectKind::Network => "network",
        ObjectKind::Image => "image",
        ObjectKind::Volume => "volume",
    }
}

fn parse(text: &str) -> BTreeMap<String, Vec<ObjectRef>> {
    let parsed: BTreeMap<String, Vec<[String; 2]>> = serde_json::from_str(text).unwrap_or_default();
    parsed
        .into_iter()
        .map(|(host, items)| {
            let objects = items
                .into_iter()
                .filter_map(|[kind, name]| {
                    let kind = match kind.as_str() {
                        "cell" => ObjectKind::Cell,
                        "network" => ObjectKind::Network,
                        "image" => ObjectKind::Image,
                        "volume" => ObjectKind::Volume,
                        _ => return None,
                    };
                    Some(ObjectRef { kind, name })
                })
                .collect();
            (host, objects)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_left_survives_a_reopen_and_is_forgotten_once_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.left.json");
        let left = Left {
            path: Some(path.clone()),
            objects: Mutex::default(),
        };
        left.add("n2", ObjectRef::cell("mc-a-p-x"));
        left.add("n2", ObjectRef::image("reg:5000/img@sha256:ab"));
        left.add("n2", ObjectRef::cell("mc-a-p-x"));
        let reopened = parse(&fs_err::read_to_string(&path).unwrap());
        assert_eq!(
            reopened["n2"],
            [
                ObjectRef::cell("mc-a-p-x"),
                ObjectRef::image("reg:5000/img@sha256:ab")
            ]
        );
        left.forget("n2", &ObjectRef::cell("mc-a-p-x"));
        left.forget("n2", &ObjectRef::image("reg:5000/img@sha256:ab"));
        assert!(left.hosts().is_empty());
        assert!(parse(&fs_err::read_to_string(&path).unwrap()).is_empty());
        assert!(
            parse("not json").is_empty(),
            "a damaged file is an empty one"
        );
    }
}
