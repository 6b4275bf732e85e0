//! What a role's cell is given and what it gives back, as types.
//!
//! A cell reads only [`Input`]s, which are texts multicooker wrote or [`Shareable`] cook
//! files; a `Shareable` is made only by [`CookPaths`] methods for material a cell may see, so
//! the label mapping, logins of other cells, anything under `judging/_*` and the hidden
//! `verify/` folder cannot be named here at all. Hidden material is a [`Hidden`], which only
//! [`VerifierFiles`] accepts and turns into an input ([`HiddenCopy`] has no other maker), so no
//! participant's, judge's, reviewer's or chef's files can hold it. A cell writes only its [`Writable`] areas, which reach the host through
//! [`super::collect`]. Its login, if its flavor needs one, is a [`CellLogin`] held in memory.
//!
//! Inputs land in the cell's input area (`/work`, read-only for the cell); writable areas are
//! folders of it (`/work/out`, `/work/outbox`) of their own, capped while the cell runs.

use std::path::PathBuf;

use crate::creds::CellLogin;
use crate::state::{CookPaths, Hidden, Shareable};

/// The cell's input area: root's, read-only for the cell, its working directory.
pub const INPUT_AREA: &str = "/work";

/// Something a cell reads, at a path relative to [`INPUT_AREA`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A text multicooker wrote (a prompt).
    Text {
        /// Path in the input area.
        path: String,
        /// Its bytes.
        bytes: Vec<u8>,
    },
    /// An empty folder.
    Folder {
        /// Path in the input area.
        path: String,
    },
    /// A cook file or folder a cell may see, copied (never linked).
    Copy {
        /// Path in the input area.
        path: String,
        /// The host file or folder.
        source: Shareable,
    },
    /// The cook's hidden material, copied (never linked): a verifier's only.
    Hidden(HiddenCopy),
}

impl Input {
    /// Its path in the input area.
    pub fn path(&self) -> &str {
        match self {
            Self::Text { path, .. } | Self::Folder { path } | Self::Copy { path, .. } => path,
            Self::Hidden(hidden) => hidden.path(),
        }
    }

    /// The host file or folder it copies, if it copies one.
    pub fn host_source(&self) -> Option<&std::path::Path> {
        match self {
            Self::Text { .. } | Self::Folder { .. } => None,
            Self::Copy { source, .. } => Some(source.path()),
            Self::Hidden(hidden) => Some(hidden.source().path()),
        }
    }
}

/// The hidden material staged into a verifier cell. Its fields are private and only
/// [`VerifierFiles::files`] makes one: the type keeps hidden material out of every other role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenCopy {
    path: String,
    source: Hidden,
}

impl HiddenCopy {
    /// Path in the input area.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The host folder.
    pub fn source(&self) -> &Hidden {
        &self.source
    }
}

/// An area the cell writes, collected to the host when its program ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writable {
    /// Its folder in the input area (`out`, `outbox`).
    pub path: String,
    /// Size cap while the cell runs, and on what is collected.
    pub cap_bytes: u64,
    /// What it holds when the cell starts (a refine round's previous output).
    pub seed: Option<Shareable>,
    /// The host folder the collection replaces.
    pub collect_to: PathBuf,
    /// An area mounted for the cell (`true`), or a folder of the image's own root file system,
    /// collected as the program left it (`false`: a Harbor participant's workdir).
    pub mounted: bool,
    /// Also collected before the program starts, to this host folder (the folder as the image
    /// has it: what a Harbor participant's changes are measured against).
    pub before_to: Option<PathBuf>,
}

impl Writable {
    /// The area's path inside the cell: `path` under the input area, or `path` itself when
    /// it is absolute (a Harbor verifier's `/logs/verifier`).
    pub fn target(&self) -> String {
        if self.path.starts_with('/') {
            self.path.clone()
        } else {
            format!("{INPUT_AREA}/{}", self.path)
        }
    }
}

/// Everything a cell gets and gives back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CellFiles {
    /// What it reads.
    pub inputs: Vec<Input>,
    /// What it writes.
    pub writable: Vec<Writable>,
    /// Its own login, if its flavor needs one.
    pub login: Option<CellLogin>,
    /// Where its inputs land instead of [`INPUT_AREA`] (a Harbor task's `/tests` or
    /// `/solution`, whose environment may use `/work` itself).
    pub input_area: Option<&'static str>,
}

impl CellFiles {
    /// Where its inputs land.
    pub fn input_area(&self) -> &str {
        self.input_area.unwrap_or(INPUT_AREA)
    }
}

/// A participant: BRIEF.md, raw/, its prompt (and a chef's anonymized input); writes `out/`.
#[derive(Debug, Clone)]
pub struct ParticipantFiles {
    /// Its prompt.
    pub prompt: String,
    /// A refine round's previous output, edited in place.
    pub seed: Option<Shareable>,
    /// A chef's anonymized submissions and ranking (`chef-input/`).
    pub chef_input: Option<Shareable>,
    /// Cap on `out/`.
    pub out_cap: u64,
}

impl ParticipantFiles {
    /// The files of participant `name` of the cook at `paths`.
    pub fn files(self, paths: &CookPaths, name: &str) -> CellFiles {
        let mut inputs = vec![
            copy("BRIEF.md", paths.share_brief_md()),
            copy("raw", paths.share_raw()),
            text("PROMPT.txt", self.prompt),
        ];
        if let Some(chef) = self.chef_input {
            inputs.push(copy("chef-input", chef));
        }
        CellFiles {
            inputs,
            writable: vec![Writable {
                path: "out".into(),
                cap_bytes: self.out_cap,
                seed: self.seed,
                collect_to: paths.out(name),
                mounted: true,
                before_to: None,
            }],
            login: None,
            input_area: None,
        }
    }
}

/// A judge: the briefs, raw/ and its own work folder (prompt, rubric, labelled submissions,
/// probe); writes `outbox/`. Never the mapping: no `Shareable` names it.
#[derive(Debug, Clone, Copy)]
pub struct JudgeFiles {
    /// Cap on `outbox/`.
    pub outbox_cap: u64,
    /// The blinding probe's PROBE.json is staged.
    pub probe: bool,
}

impl JudgeFiles {
    /// The files of judge `name`.
    pub fn files(self, paths: &CookPaths, name: &str) -> CellFiles {
        let work = |file: &str| paths.share_judge_work(name, file);
        let mut inputs = vec![
            copy("BRIEF.md", paths.share_brief_md()),
            copy("JUDGE_BRIEF.md", paths.share_judge_brief_md()),
            copy("raw", paths.share_raw()),
            copy("PROMPT.txt", work("PROMPT.txt")),
            copy("RUBRIC.json", work("RUBRIC.json")),
            copy("submissions", work("submissions")),
        ];
        if self.probe {
            inputs.push(copy("PROBE.json", work("PROBE.json")));
        }
        CellFiles {
            inputs,
            writable: vec![Writable {
                path: "outbox".into(),
                cap_bytes: self.outbox_cap,
                seed: None,
                collect_to: paths.judge_dir(name),
                mounted: true,
                before_to: None,
            }],
            login: None,
            input_area: None,
        }
    }
}

/// A `consult` reviewer: BRIEF.md, raw/, its prompt and a normalized copy of the candidate;
/// writes `outbox/`.
#[derive(Debug, Clone, Copy)]
pub struct ReviewerFiles {
    /// Cap on `outbox/`.
    pub outbox_cap: u64,
}

impl ReviewerFiles {
    /// The files of reviewer `name`; its outbox is collected to `collect_to`.
    pub fn files(self, paths: &CookPaths, name: &str, collect_to: PathBuf) -> CellFiles {
        let work = |file: &str| paths.share_consult_work(name, file);
        CellFiles {
            inputs: vec![
                copy("BRIEF.md", paths.share_brief_md()),
                copy("raw", paths.share_raw()),
                copy("PROMPT.txt", work("PROMPT.txt")),
                copy("candidate", work("candidate")),
            ],
            writable: vec![Writable {
                path: "outbox".into(),
                cap_bytes: self.outbox_cap,
                seed: None,
                collect_to,
                mounted: true,
                before_to: None,
            }],
            login: None,
            input_area: None,
        }
    }
}

/// Where a verifier cell finds the output under test (read-only).
pub const VERIFY_OUTPUT: &str = "output";
/// Where a verifier cell finds the hidden material (read-only): its working directory.
pub const VERIFY_HIDDEN: &str = "verify";
/// The verifier's writable results area.
pub const VERIFY_RESULTS: &str = "results";

/// A verifier: a read-only copy of one sealed output (`output/`) and of the hidden material
/// (`verify/`); writes `results/`. Nothing else: no brief, no raw/, no prompt.
#[derive(Debug, Clone)]
pub struct VerifierFiles {
    /// The hidden material.
    pub hidden: Hidden,
    /// Cap on `results/`.
    pub results_cap: u64,
}

impl VerifierFiles {
    /// The files of the verifier of `participant`'s sealed output; its results are collected
    /// to `collect_to`.
    pub fn files(self, paths: &CookPaths, participant: &str, collect_to: PathBuf) -> CellFiles {
        CellFiles {
            inputs: vec![
                copy(VERIFY_OUTPUT, paths.share_sealed_out(participant)),
                Input::Hidden(HiddenCopy {
                    path: VERIFY_HIDDEN.to_owned(),
                    source: self.hidden,
                }),
            ],
            writable: vec![Writable {
                path: VERIFY_RESULTS.into(),
                cap_bytes: self.results_cap,
                seed: None,
                collect_to,
                mounted: true,
                before_to: None,
            }],
            login: None,
            input_area: None,
        }
    }
}

fn copy(path: &str, source: Shareable) -> Input {
    Input::Copy {
        path: path.to_owned(),
        source,
    }
}

fn text(path: &str, text: String) -> Input {
    Input::Text {
        path: path.to_owned(),
        bytes: text.into_bytes(),
    }
}

/// Where a Harbor task's verifier finds its tests, as Harbor puts them.
pub const HARBOR_TESTS: &str = "/tests";
/// Where a Harbor task's test.sh writes the reward: the verifier's only writable area.
pub const HARBOR_VERIFIER_LOGS: &str = "/logs/verifier";
/// Where the oracle finds the task's solution.
pub const HARBOR_SOLUTION: &str = "/solution";

/// A Harbor task's verifier (docs/HARBOR.md): the task's `tests/` at `/tests`, and
/// `/logs/verifier`, a fresh area whatever the participant left at that path, collected to the
/// host. The participant's final file system is the cell's image.
#[derive(Debug, Clone)]
pub struct HarborVerifierFiles {
    /// The task's `tests/`.
    pub tests: Hidden,
    /// Cap on `/logs/verifier`.
    pub logs_cap: u64,
}

impl HarborVerifierFiles {
    /// The cell's files; `/logs/verifier` is collected to `collect_to`.
    pub fn files(self, collect_to: PathBuf) -> CellFiles {
        CellFiles {
            inputs: vec![Input::Hidden(HiddenCopy {
                path: ".".into(),
                source: self.tests,
            })],
            writable: vec![Writable {
                path: HARBOR_VERIFIER_LOGS.into(),
                cap_bytes: self.logs_cap,
                seed: None,
                collect_to,
                mounted: true,
                before_to: None,
            }],
            login: None,
            input_area: Some(HARBOR_TESTS),
        }
    }
}

/// Where a CLI working inside a Harbor task's environment finds its prompt: outside every
/// folder of the task, read-only.
pub const HARBOR_PROMPT_AREA: &str = "/run/multicooker";

/// Cap on what is collected of a Harbor participant's workdir, before and after (files past it
/// are skipped and recorded, never a failure).
pub const HARBOR_WORKDIR_CAP: u64 = 64 << 20;

/// A participant working inside a Harbor task's environment: its prompt (the task's
/// `instruction.md`, verbatim) at [`HARBOR_PROMPT_AREA`]`/PROMPT.txt`, for a CLI. Its result is
/// its final file system; its `workdir`, when known, is collected as the image has it before
/// the program starts (`before_to`) and as the program left it (`after_to`), so the jury sees
/// what it changed.
pub fn task_participant_files(
    instruction: Option<Shareable>,
    workdir: Option<(&str, PathBuf, PathBuf)>,
) -> CellFiles {
    CellFiles {
        inputs: instruction
            .map(|i| vec![copy("PROMPT.txt", i)])
            .unwrap_or_default(),
        writable: workdir
            .map(|(path, before_to, after_to)| Writable {
                path: path.to_owned(),
                cap_bytes: HARBOR_WORKDIR_CAP,
                seed: None,
                collect_to: after_to,
                mounted: false,
                before_to: Some(before_to),
            })
            .into_iter()
            .collect(),
        login: None,
        input_area: Some(HARBOR_PROMPT_AREA),
    }
}

/// The oracle (a Harbor task's reference solution as a participant): `solution/` at
/// `/solution`, its workdir collected as for any participant ([`task_participant_files`]).
pub fn oracle_files(solution: Shareable, workdir: Option<(&str, PathBuf, PathBuf)>) -> CellFiles {
    CellFiles {
        inputs: vec![copy(".", solution)],
        input_area: Some(HARBOR_SOLUTION),
        ..task_participant_files(None, workdir)
    }
}
