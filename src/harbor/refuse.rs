//! The keys of `task.toml` that change how a task runs and that multicooker does not do yet:
//! each is refused with one message naming it, rather than silently run differently from
//! Harbor. Keys that only describe the task (`[metadata]`, `[task] description`, …) and keys
//! nobody knows are ignored, as Harbor ignores them.

use std::path::Path;

use super::HarborError;

/// One refused key: where it sits, what it is, and what to do instead.
struct Refusal {
    /// Dotted path of the key (`steps`, `verifier.collect`).
    key: &'static str,
    /// What it does, for the message.
    what: &'static str,
    /// The fix.
    fix: &'static str,
}

const REFUSED: &[Refusal] = &[
    Refusal {
        key: "steps",
        what: "a multi-step task (`[[steps]]`)",
        fix: "run each step as a task of its own, or wait for multi-step support",
    },
    Refusal {
        key: "verifier.collect",
        what: "collect hooks (`[[verifier.collect]]`)",
        fix: "let tests/test.sh gather what it needs itself",
    },
    Refusal {
        key: "environment.mcp_servers",
        what: "MCP servers (`environment.mcp_servers`)",
        fix: "remove them: participants get no MCP server in their cell yet",
    },
    Refusal {
        key: "environment.healthcheck",
        what: "a healthcheck (`[environment.healthcheck]`)",
        fix: "start what the task needs in the image, or remove the healthcheck",
    },
    Refusal {
        key: "environment.skills_dir",
        what: "agent skills (`environment.skills_dir`)",
        fix: "remove the key: the CLIs get no task-provided skills yet",
    },
    Refusal {
        key: "environment.env",
        what: "environment variables from the host (`[environment.env]`)",
        fix: "build the values into the image: a cell never sees the host's environment",
    },
    Refusal {
        key: "agent.user",
        what: "another user for the agent (`agent.user`)",
        fix: "remove the key: participants run as the environment's root in the task profile",
    },
    Refusal {
        key: "agent.network_mode",
        what: "a network policy of the agent's own (`agent.network_mode`)",
        fix: "use `environment.allow_internet` or `environment.network_mode`",
    },
    Refusal {
        key: "agent.allowed_hosts",
        what: "hosts of the agent's own (`agent.allowed_hosts`)",
        fix: "use `environment.allowed_hosts`",
    },
    Refusal {
        key: "verifier.network_mode",
        what: "a network policy of the verifier's own (`verifier.network_mode`)",
        fix: "remove it: the verifier has no network",
    },
    Refusal {
        key: "verifier.allowed_hosts",
        what: "hosts for the verifier (`verifier.allowed_hosts`)",
        fix: "remove them: the verifier has no network, so test.sh must not download",
    },
    Refusal {
        key: "verifier.environment_mode",
        what: "a separate verifier environment (`verifier.environment_mode`)",
        fix: "remove it: test.sh runs on the participant's final file system",
    },
    Refusal {
        key: "artifacts",
        what: "artifacts copied out of the environment (`artifacts`)",
        fix: "remove them: multicooker keeps the workdir's changes for the jury instead",
    },
];

/// Refuses the first key of [`REFUSED`] the task sets (an empty list or table, `gpus = 0` and
/// `false` count as unset), and GPUs.
pub(super) fn check(path: &Path, table: &toml::Table) -> Result<(), HarborError> {
    let refuse = |what: String, fix: &str| HarborError::Unsupported {
        path: path.to_owned(),
        what,
        fix: fix.to_owned(),
    };
    for refusal in REFUSED {
        if lookup(table, refusal.key).is_some_and(|v| is_set(v) && !is_root(refusal.key, v)) {
            return Err(refuse(refusal.what.to_owned(), refusal.fix));
        }
    }
    let gpus = lookup(table, "environment.gpus").and_then(toml::Value::as_integer);
    let types = lookup(table, "environment.gpu_types").is_some_and(is_set);
    if gpus.is_some_and(|n| n != 0) || types {
        return Err(refuse(
            "GPUs (`environment.gpus`, `environment.gpu_types`)".to_owned(),
            "set `gpus = 0`: multicooker gives cells no GPU",
        ));
    }
    Ok(())
}

fn lookup<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

/// `agent.user = "root"` (or 0) asks for what the task profile does anyway.
fn is_root(key: &str, value: &toml::Value) -> bool {
    key == "agent.user" && (value.as_str() == Some("root") || value.as_integer() == Some(0))
}

fn is_set(value: &toml::Value) -> bool {
    match value {
        toml::Value::Array(items) => !items.is_empty(),
        toml::Value::Table(table) => !table.is_empty(),
        toml::Value::Boolean(b) => *b,
        toml::Value::String(s) => !s.is_empty(),
        _ => true,
    }
}
