//! Harbor tasks read as they are (docs/HARBOR.md): a folder with `task.toml`,
//! `instruction.md`, `environment/` (a Dockerfile and its context, unless `docker_image` names a
//! prebuilt image), `tests/test.sh` and optionally `solution/solve.sh`, and a dataset (a folder
//! of such folders).
//!
//! Reading never changes a task: its files are hashed as they are ([`files`]) and copied byte
//! for byte where multicooker keeps them. Multi-container (compose) environments and the
//! `task.toml` keys [`refuse`] lists are refused by name; everything else is read with Harbor's
//! defaults ([`config`]). This module only reads folders: building, running and scoring a task
//! happen in the cell engine and the steps.

pub mod changes;
pub mod config;
mod error;
pub mod files;
mod refuse;
pub mod users;

use std::path::{Path, PathBuf};

pub use config::{EnvironmentConfig, Internet, TaskConfig, VerifierConfig};
pub use error::HarborError;
pub use files::{TaskFile, TaskFiles};

/// The task's configuration file.
pub const TASK_TOML: &str = "task.toml";
/// What the agent is told.
pub const INSTRUCTION: &str = "instruction.md";
/// The environment's Dockerfile.
pub const DOCKERFILE: &str = "environment/Dockerfile";
/// The verifier's entry point.
pub const TEST_SH: &str = "tests/test.sh";
/// The reference solution the oracle runs.
pub const SOLVE_SH: &str = "solution/solve.sh";
/// Compose files that make an environment multi-container.
const COMPOSE_FILES: [&str; 4] = [
    "environment/docker-compose.yaml",
    "environment/docker-compose.yml",
    "environment/compose.yaml",
    "environment/compose.yml",
];
/// The folder of a cook a Harbor task is kept in (`harbor.task` in brief.yaml).
pub const COOK_TASK_DIR: &str = "task";
/// The most `instruction.md` may hold.
pub const MAX_INSTRUCTION_BYTES: u64 = 1 << 20;

/// A Harbor task, read and checked.
#[derive(Debug, Clone)]
pub struct Task {
    /// The folder it was read from.
    pub dir: PathBuf,
    /// Its name: `[task] name`, else the folder's name.
    pub name: String,
    /// `task.toml`.
    pub config: TaskConfig,
    /// `instruction.md`, as the agent receives it.
    pub instruction: String,
    /// Every file with its hash, and the task hash.
    pub files: TaskFiles,
}

impl Task {
    /// Whether the task has a reference solution (`solution/solve.sh`).
    pub fn has_solution(&self) -> bool {
        self.files.has(SOLVE_SH)
    }

    /// The task hash recorded in provenance.
    pub fn hash(&self) -> &str {
        &self.files.hash
    }

    /// Where the agent starts: `[environment] workdir`, else the last absolute `WORKDIR` of
    /// `environment/Dockerfile` (one without variables), else `None` (the base image's own,
    /// which the host cannot know before the build).
    pub fn start_dir(&self) -> Option<String> {
        if let Some(workdir) = &self.config.environment.workdir {
            return Some(workdir.clone());
        }
        let text = std::fs::read_to_string(self.dir.join(DOCKERFILE)).ok()?;
        last_workdir(&text)
    }
}

/// The last `WORKDIR` of a Dockerfile, when it is an absolute path without variables.
fn last_workdir(dockerfile: &str) -> Option<String> {
    let last = dockerfile
        .lines()
        .filter_map(|line| {
            let (instruction, rest) = line.trim_start().split_once(char::is_whitespace)?;
            instruction
                .eq_ignore_ascii_case("WORKDIR")
                .then(|| rest.trim().trim_matches('"').to_owned())
        })
        .next_back()?;
    (last.starts_with('/') && !last.contains('$') && !last.split('/').any(|p| p == ".."))
        .then(|| last.trim_end_matches('/').to_owned())
        .map(|w| if w.is_empty() { "/".to_owned() } else { w })
}

#[cfg(test)]
mod workdir_tests {
    #[test]
    fn the_last_absolute_workdir_of_the_dockerfile_is_where_the_agent_starts() {
        let read = super::last_workdir;
        assert_eq!(read("FROM x\nWORKDIR /app\n").as_deref(), Some("/app"));
        assert_eq!(
            read("FROM x\nWORKDIR /src\nRUN true\nworkdir /app/\n").as_deref(),
            Some("/app")
        );
        assert_eq!(read("FROM x\nWORKDIR $HOME/app\n"), None);
        assert_eq!(read("FROM x\nWORKDIR app\n"), None);
        assert_eq!(read("FROM x\n"), None);
    }
}

/// True when `dir` looks like a Harbor task (it has `task.toml` and `instruction.md`).
pub fn is_task(dir: &Path) -> bool {
    dir.join(TASK_TOML).is_file() && dir.join(INSTRUCTION).is_file()
}

/// Reads the task in `dir`.
pub fn load(dir: &Path) -> Result<Task, HarborError> {
    for required in [TASK_TOML, INSTRUCTION, TEST_SH] {
        if !dir.join(required).is_file() {
            return Err(HarborError::NotATask {
                dir: dir.to_owned(),
                file: required,
            });
        }
    }
    let files = files::read(dir)?;
    let toml_path = dir.join(TASK_TOML);
    let text = read_text(&toml_path, 1 << 20)?;
    let config = config::parse(&toml_path, &text)?;
    if let Some(compose) = COMPOSE_FILES.iter().find(|f| files.has(f)) {
        return Err(HarborError::Unsupported {
            path: dir.join(compose),
            what: "a multi-container environment (docker compose)".into(),
            fix: "multicooker runs single-container tasks: give the task one `environment/Dockerfile`".into(),
        });
    }
    if config.environment.docker_image.is_none() && !files.has(DOCKERFILE) {
        return Err(HarborError::NotATask {
            dir: dir.to_owned(),
            file: DOCKERFILE,
        });
    }
    let instruction = read_text(&dir.join(INSTRUCTION), MAX_INSTRUCTION_BYTES)?;
    let name = config.name.clone().unwrap_or_else(|| folder_name(dir));
    Ok(Task {
        dir: dir.to_owned(),
        name,
        config,
        instruction,
        files,
    })
}

/// Reads the task a cook keeps (`harbor:` in its brief.yaml) and checks it is the task that
/// was copied in: a task edited since `new` is refused, so the provenance's hash names what runs.
/// `folder` is relative to the cook and `hash` the recorded task hash.
pub fn in_cook(cook: &Path, folder: &str, hash: &str) -> Result<Task, HarborError> {
    let task = load(&cook.join(folder))?;
    if task.hash() != hash {
        return Err(HarborError::Edited {
            dir: task.dir,
            recorded: hash.to_owned(),
            found: task.files.hash,
        });
    }
    Ok(task)
}

/// The tasks of a dataset: `dir` itself when it is a task, else its subfolders that are tasks,
/// sorted by name (folders that are not tasks are skipped: datasets hold READMEs and scripts).
pub fn dataset(dir: &Path) -> Result<Vec<PathBuf>, HarborError> {
    if is_task(dir) {
        return Ok(vec![dir.to_owned()]);
    }
    let entries = fs_err::read_dir(dir).map_err(|source| HarborError::Read {
        path: dir.to_owned(),
        source,
    })?;
    let mut tasks: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| is_task(p))
        .collect();
    tasks.sort();
    if tasks.is_empty() {
        return Err(HarborError::EmptyDataset {
            dir: dir.to_owned(),
        });
    }
    Ok(tasks)
}

fn read_text(path: &Path, limit: u64) -> Result<String, HarborError> {
    let bytes = crate::fsx::read_capped(path, limit).map_err(|source| HarborError::Read {
        path: path.to_owned(),
        source,
    })?;
    String::from_utf8(bytes).map_err(|_| HarborError::NotText {
        path: path.to_owned(),
    })
}

fn folder_name(dir: &Path) -> String {
    dir.canonicalize()
        .ok()
        .as_deref()
        .and_then(Path::file_name)
        .or_else(|| dir.file_name())
        .map_or_else(|| "task".to_owned(), |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests;
