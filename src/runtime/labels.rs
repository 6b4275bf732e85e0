//! Labels on every engine object, and selectors that find objects by them.
//!
//! Every object carries `io.multicooker.cook=<cook folder>` and `io.multicooker.role=<role>`;
//! `clean` and the ledger's backstop find leftovers by these, which also covers a run killed
//! with SIGKILL.

use std::collections::BTreeMap;

/// The cook folder name the object belongs to.
pub const LABEL_COOK: &str = "io.multicooker.cook";
/// `participant`, `judge`, `network` or `image`.
pub const LABEL_ROLE: &str = "io.multicooker.role";
/// The participant or judge name, for per-cell objects.
pub const LABEL_ACTOR: &str = "io.multicooker.actor";
/// The flavor, on images and cells.
pub const LABEL_FLAVOR: &str = "io.multicooker.flavor";
/// A hash of the cooks folder (`--root`) the cook lives in; `clean --all` sweeps one root.
pub const LABEL_ROOT: &str = "io.multicooker.root";
/// The cell an area's volume belongs to (swept with it on every node).
pub const LABEL_CELL: &str = "io.multicooker.cell";
/// The id of the command run that created the object.
pub const LABEL_RUN: &str = "io.multicooker.run";
/// The Unix second by which a cell's init has ended it (its deadline, set when it is created).
pub const LABEL_DEADLINE: &str = "io.multicooker.deadline";
/// The namespace (`--namespace`) of an object shared by the cooks of one namespace (a flavor's
/// base image); absent in the default namespace.
pub const LABEL_NAMESPACE: &str = "io.multicooker.namespace";

/// A set of labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels(BTreeMap<String, String>);

impl Labels {
    /// The two labels every object carries.
    pub fn new(cook: &str, role: &str) -> Self {
        let mut labels = Self::default();
        labels.0.insert(LABEL_COOK.into(), cook.into());
        labels.0.insert(LABEL_ROLE.into(), role.into());
        labels
    }

    /// Labels of an object shared by every cook (a flavor's base image): a role, no cook.
    pub fn shared(role: &str) -> Self {
        let mut labels = Self::default();
        labels.0.insert(LABEL_ROLE.into(), role.into());
        labels
    }

    /// Adds a label.
    #[must_use]
    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    /// The value of a label.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// The labels as owned pairs, for engine calls.
    pub fn to_map(&self) -> std::collections::HashMap<String, String> {
        self.0.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Iterates over the labels.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// Which objects to find: every condition must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    conditions: Vec<(String, Option<String>)>,
}

impl Selector {
    /// Objects of one cook.
    pub fn cook(cook: &str) -> Self {
        Self::default().with(LABEL_COOK, cook)
    }

    /// Objects with this role (e.g. `base` images, which belong to no cook).
    pub fn role(role: &str) -> Self {
        Self::default().with(LABEL_ROLE, role)
    }

    /// Objects of any cook.
    pub fn any_cook() -> Self {
        Self {
            conditions: vec![(LABEL_COOK.into(), None)],
        }
    }

    /// Adds `key` (any value).
    #[must_use]
    pub fn has(mut self, key: &str) -> Self {
        self.conditions.push((key.into(), None));
        self
    }

    /// Adds `key=value`.
    #[must_use]
    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.conditions.push((key.into(), Some(value.into())));
        self
    }

    /// Filters in the engine's `label=` syntax (`key` or `key=value`).
    pub fn engine_filters(&self) -> Vec<String> {
        self.conditions
            .iter()
            .map(|(k, v)| v.as_ref().map_or_else(|| k.clone(), |v| format!("{k}={v}")))
            .collect()
    }

    /// True when `labels` satisfy every condition.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.conditions
            .iter()
            .all(|(k, v)| match (labels.get(k), v) {
                (Some(_), None) => true,
                (Some(actual), Some(wanted)) => actual == wanted,
                (None, _) => false,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_match_and_render_engine_filters() {
        let labels = Labels::new("251122-hello", "participant").with(LABEL_ACTOR, "alpha");
        assert!(Selector::cook("251122-hello").matches(&labels));
        assert!(Selector::any_cook().matches(&labels));
        assert!(!Selector::cook("251122-other").matches(&labels));
        assert_eq!(
            Selector::cook("c")
                .with(LABEL_ROLE, "judge")
                .engine_filters(),
            ["io.multicooker.cook=c", "io.multicooker.role=judge"]
        );
        let namespaced = Labels::shared("base").with(LABEL_NAMESPACE, "alpha");
        let any_namespace = Selector::role("base").has(LABEL_NAMESPACE);
        assert!(any_namespace.matches(&namespaced));
        assert!(!any_namespace.matches(&Labels::shared("base")));
        assert_eq!(
            any_namespace.engine_filters(),
            ["io.multicooker.role=base", "io.multicooker.namespace"]
        );
    }
}
