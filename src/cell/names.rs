//! Engine object names, derived from the cook *folder* name (never from brief.yaml's `name`),
//! so two cooks scaffolded from one example never collide (docs/BEHAVIOR.md §10.13), plus a short
//! id of the root folder, so equal folder names under two roots never collide either.

use sha2::Digest;

use crate::state::Role;

pub use crate::runtime::names::{MAX_OBJECT_NAME, fit};

/// A short tag of a run id, for names that must tell runs apart and stay short.
pub fn run_tag(run_id: &str) -> String {
    let digest = sha2::Sha256::digest(run_id.as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// Names of one cook's engine objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    project: String,
}

impl Names {
    /// Names for a cook folder.
    pub fn for_paths(paths: &crate::state::CookPaths) -> Self {
        Self::for_cook(paths.name(), &paths.root_id())
    }

    /// Names for the cook folder `cook` under the root `root_id`: `mc-<cook>-<root id>`,
    /// lower-cased. Characters an engine name cannot hold are replaced and a short hash of the
    /// original keeps the result unique.
    pub fn for_cook(cook: &str, root_id: &str) -> Self {
        let clean: String = cook
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .collect();
        let clean = clean
            .trim_matches(|c: char| !c.is_ascii_alphanumeric())
            .to_owned();
        // Short enough that `<project>-<role>-` stays whole in a fitted name (see [`fit`]).
        let project = if clean == cook && clean.len() <= 28 {
            format!("mc-{clean}")
        } else {
            let digest = sha2::Sha256::digest(cook.as_bytes());
            let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
            let head: String = clean
                .chars()
                .take(20)
                .collect::<String>()
                .trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_owned();
            format!("mc-{head}-{short}")
        };
        let root: String = root_id
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(6)
            .collect::<String>()
            .to_ascii_lowercase();
        Self {
            project: format!("{project}-{root}"),
        }
    }

    /// The prefix shared by every object of the cook.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// The container of a participant (`<project>-p-<name>`), judge (`-j-`), reviewer (`-r-`)
    /// or a participant's verifier (`-v-`).
    pub fn cell(&self, role: Role, actor: &str) -> String {
        let tag = match role {
            Role::Participant => "p",
            Role::Judge => "j",
            Role::Reviewer => "r",
            Role::Verifier => "v",
        };
        fit(&format!(
            "{}-{tag}-{}",
            self.project,
            actor.to_ascii_lowercase()
        ))
    }

    /// The cell's own network (same name as the cell).
    pub fn network(&self, role: Role, actor: &str) -> String {
        self.cell(role, actor)
    }

    /// The cook's image of a flavor.
    pub fn image(&self, flavor: &str) -> String {
        format!("{}-{flavor}:latest", self.project)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_folder_and_stay_valid() {
        let names = Names::for_cook("251122-hello", "abc123");
        assert_eq!(
            names.cell(Role::Participant, "Alpha"),
            "mc-251122-hello-abc123-p-alpha"
        );
        assert_eq!(
            names.cell(Role::Judge, "judge"),
            "mc-251122-hello-abc123-j-judge"
        );
        assert_eq!(names.image("dummy"), "mc-251122-hello-abc123-dummy:latest");
        assert_ne!(
            Names::for_cook("251122-hello", "abc123"),
            Names::for_cook("251123-hello", "abc123")
        );
        assert_ne!(
            Names::for_cook("251122-hello", "abc123"),
            Names::for_cook("251122-hello", "def456")
        );
        let odd = Names::for_cook("251122-Héllo World", "abc123");
        assert!(
            odd.project().starts_with("mc-251122-h-llo-world-"),
            "{}",
            odd.project()
        );
        assert_ne!(odd, Names::for_cook("251122-Hèllo World", "abc123"));
    }

    #[test]
    fn every_name_fits_a_dns_label_and_keeps_its_prefix() {
        let names = Names::for_cook("20261125-models-nightly-code-review-audit-r1", "abc123");
        let actor = "a".repeat(40);
        for role in [
            Role::Participant,
            Role::Judge,
            Role::Reviewer,
            Role::Verifier,
        ] {
            let cell = names.cell(role, &actor);
            assert!(cell.len() <= MAX_OBJECT_NAME, "{cell}");
            assert!(cell.starts_with(&names.cell(role, "")), "{cell}");
            assert_ne!(cell, names.cell(role, &"a".repeat(39)));
            for derived in [
                crate::cell::plan::proxy_name(&cell),
                crate::cell::egress::canary_name(&cell),
                crate::cell::egress::own_egress_network(&cell),
            ] {
                assert!(derived.len() <= MAX_OBJECT_NAME, "{derived}");
            }
        }
        assert_eq!(fit("short"), "short");
        let probe = format!(
            "{}-{}-sandbox-probe",
            names.project(),
            run_tag("1795588187776-11785")
        );
        assert!(probe.len() <= MAX_OBJECT_NAME, "{probe}");
    }
}
