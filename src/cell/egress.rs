//! Egress control around an allowlisted cell. The cell's own network is internal (no route
//! out); beside it runs a proxy (`mc-cell proxy`, a static program in a `FROM scratch` image),
//! attached to the cell's network and to the cook's egress network, which allows `CONNECT` to
//! exactly the cell's allowlist. Before the cell's clock starts, a canary (`mc-cell canary`) on
//! the cell's network proves that a host not on the list is refused, that an allowed one is
//! reachable, and that a direct connection without the proxy fails. A failed canary stops the
//! cell with that reason; it is never scored as a model failure.
//!
//! The egress network isolates its members from each other, so one cell's proxy cannot reach
//! another's; a proxy refuses private and metadata addresses unless the brief allows private
//! ones for local test doubles.

use std::path::Path;
use std::time::Duration;

use futures_util::StreamExt;

use super::plan::{CellPlan, Egress, PROXY_PORT, proxy_name};
use crate::runtime::{
    CellSpec, INIT_PATH, Init, LABEL_ROLE, Labels, Ledger, Limits, LogChunk, ObjectRef, Runtime,
};

/// Where the canary's direct connection goes unless the operator names another address: a
/// documentation-only address (TEST-NET-3, RFC 5737) that no network routes, so the canary
/// never contacts a real host.
pub const DEFAULT_CANARY_DIRECT: &str = "203.0.113.1:443";
/// A target no allowlist contains: the proxy must refuse it.
pub const CANARY_DENIED: &str = "canary-denied.invalid:443";
/// How long a canary may take.
const CANARY_TIMEOUT: Duration = Duration::from_secs(60);

/// What the cells of one phase share for egress control.
#[derive(Debug, Clone)]
pub struct EgressContext {
    /// The image holding `mc-cell` (the dummy flavor's base image).
    pub tools_image: String,
    /// The cook's egress network (bridge with a route out, members isolated); `None` on a
    /// backend whose networks cannot isolate their members: each proxy then gets an egress
    /// network of its own ([`own_egress_network`]).
    pub network: Option<String>,
    /// Where the canary's direct connection goes (must fail).
    pub direct: String,
}

/// The canary's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Canary {
    /// Every check passed.
    pub passed: bool,
    /// The canary's own report, or why it could not run.
    pub report: serde_json::Value,
}

/// The name of a cell's canary.
pub fn canary_name(cell: &str) -> String {
    super::names::fit(&format!("{cell}-canary"))
}

/// The program of a tool cell: the tools image's own `mc-cell` (the same static program init
/// is), which the cell's image does not provide.
fn tool_program(arguments: Vec<String>) -> Vec<String> {
    let mut program = vec![INIT_PATH.to_owned()];
    program.extend(arguments);
    program
}

fn tool_spec(
    plan: &CellPlan,
    name: String,
    role: &str,
    image: &str,
    command: Vec<String>,
) -> CellSpec {
    let mut labels = Labels::default();
    for (key, value) in plan.spec.labels.iter() {
        labels = labels.with(key, value);
    }
    CellSpec {
        name,
        image: image.to_owned(),
        network: plan.spec.network.clone(),
        labels: labels.with(LABEL_ROLE, role),
        user: plan.spec.user.clone(),
        env: Vec::new(),
        areas: Vec::new(),
        tmpfs: Vec::new(),
        limits: Limits {
            memory_bytes: 128 << 20,
            memory_swap_bytes: 128 << 20,
            cpus: 0.5,
            pids: 256,
        },
        workdir: "/".to_owned(),
        program: Some(tool_program(command)),
        // A proxy lives as long as its cell may, and not a moment longer when multicooker is
        // gone: its init ends it at the cell's deadline.
        init: Init {
            wait_for_go: false,
            launch: false,
            hold: false,
            timeout: None,
            deadline: plan.spec.init.deadline + CANARY_TIMEOUT,
            task_root: false,
            go_dir: None,
        },
        task: None,
    }
}

/// The proxy's cell: created on the egress network, then attached to the cell's network.
pub fn proxy_spec(plan: &CellPlan, context: &EgressContext) -> CellSpec {
    let Egress::Proxy {
        allow,
        allow_private,
    } = &plan.egress
    else {
        unreachable!("proxy_spec is only called for cells with a proxy")
    };
    let mut command = vec![
        "proxy".to_owned(),
        "--listen".to_owned(),
        format!("0.0.0.0:{PROXY_PORT}"),
    ];
    command.extend(["--allow".to_owned(), allow.join(",")]);
    if *allow_private {
        command.push("--allow-private".to_owned());
    }
    let mut spec = tool_spec(
        plan,
        proxy_name(&plan.spec.name),
        "proxy",
        &context.tools_image,
        command,
    );
    spec.network = Some(
        context
            .network
            .clone()
            .unwrap_or_else(|| own_egress_network(&plan.spec.name)),
    );
    spec
}

/// The egress network of one cell's proxy, where networks cannot isolate their members.
pub fn own_egress_network(cell: &str) -> String {
    super::names::fit(&format!("{cell}-egress"))
}

/// The canary's cell, on the cell's own network.
pub fn canary_spec(plan: &CellPlan, context: &EgressContext) -> CellSpec {
    let proxy = format!("{}:{PROXY_PORT}", proxy_name(&plan.spec.name));
    let mut command = vec![
        "canary".to_owned(),
        "--proxy".to_owned(),
        proxy,
        "--denied".to_owned(),
        CANARY_DENIED.to_owned(),
    ];
    if let Some(first) = plan.egress.allowed().first() {
        command.extend(["--allowed".to_owned(), first.clone()]);
    }
    command.extend(["--direct".to_owned(), context.direct.clone()]);
    tool_spec(
        plan,
        canary_name(&plan.spec.name),
        "canary",
        &context.tools_image,
        command,
    )
}

/// Creates and starts the cell's proxy, its log streaming into `proxy.log` beside the cell's
/// (redacted, terminal-safe and capped like every cell log).
pub async fn start_proxy(
    runtime: &dyn Runtime,
    redactor: &std::sync::Arc<crate::redact::Redactor>,
    ledger: &Ledger,
    plan: &CellPlan,
    context: &EgressContext,
) -> Result<(), String> {
    let spec = proxy_spec(plan, context);
    if context.network.is_none() {
        let network = crate::runtime::NetworkSpec {
            name: own_egress_network(&plan.spec.name),
            labels: plan
                .network
                .as_ref()
                .map_or_else(|| plan.spec.labels.clone(), |n| n.labels.clone()),
            internal: false,
            isolated: false,
        };
        ledger.record(ObjectRef::network(&network.name));
        runtime
            .create_network(&network)
            .await
            .map_err(|e| e.to_string())?;
    }
    ledger.record(ObjectRef::cell(&spec.name));
    runtime
        .create_cell(&spec)
        .await
        .map_err(|e| e.to_string())?;
    let network = plan.spec.network.as_deref().unwrap_or_default();
    runtime
        .connect_network(network, &spec.name)
        .await
        .map_err(|e| e.to_string())?;
    runtime
        .start_cell(&spec.name)
        .await
        .map_err(|e| e.to_string())?;
    let log = plan
        .stdout_log
        .parent()
        .unwrap_or(Path::new("."))
        .join("proxy.log");
    let stream = runtime.cell_logs(&spec.name);
    let redactor = redactor.clone();
    tokio::spawn(async move {
        if let Ok(mut file) = super::logs::SafeLog::create(&log, &redactor).await {
            let mut stream = stream;
            while let Some(Ok(LogChunk::Stdout(bytes) | LogChunk::Stderr(bytes))) =
                stream.next().await
            {
                let _ = file.write(&bytes).await;
            }
            let _ = file.finish().await;
        }
    });
    Ok(())
}

/// Runs the canary to completion and reads its verdict.
pub async fn run_canary(
    runtime: &dyn Runtime,
    ledger: &Ledger,
    plan: &CellPlan,
    context: &EgressContext,
) -> Canary {
    let spec = canary_spec(plan, context);
    ledger.record(ObjectRef::cell(&spec.name));
    let failed = |why: String| Canary {
        passed: false,
        report: serde_json::json!({"passed": false, "error": why}),
    };
    if let Err(e) = runtime.create_cell(&spec).await {
        return failed(e.to_string());
    }
    if let Err(e) = runtime.start_cell(&spec.name).await {
        return failed(e.to_string());
    }
    let waited = tokio::time::timeout(CANARY_TIMEOUT, runtime.wait_cell(&spec.name)).await;
    let mut output = Vec::new();
    let mut stream = runtime.cell_logs(&spec.name);
    while let Ok(Some(Ok(LogChunk::Stdout(bytes) | LogChunk::Stderr(bytes)))) =
        tokio::time::timeout(Duration::from_secs(5), stream.next()).await
    {
        output.extend_from_slice(&bytes);
    }
    let _ = ledger.release(runtime, &ObjectRef::cell(&spec.name)).await;
    let text = String::from_utf8_lossy(&output);
    let report = text
        .lines()
        .find_map(|line| line.strip_prefix("MULTICOOKER-CANARY "))
        .and_then(|json| serde_json::from_str::<serde_json::Value>(json).ok());
    match (waited, report) {
        (Ok(Ok(exit)), Some(report)) => Canary {
            passed: exit.code == 0 && report["passed"] == true,
            report,
        },
        (Err(_), _) => failed(format!(
            "the canary took longer than {}s",
            CANARY_TIMEOUT.as_secs()
        )),
        (_, None) => failed(format!("the canary reported nothing: {}", text.trim())),
        (Ok(Err(e)), _) => failed(e.to_string()),
    }
}

/// A one-line reason from a failed canary's report.
pub fn failure_reason(canary: &Canary) -> String {
    if let Some(error) = canary.report["error"].as_str() {
        return error.to_owned();
    }
    let failed: Vec<String> = ["denied_refused", "allowed_reachable", "direct_blocked"]
        .iter()
        .filter(|check| canary.report[**check]["ok"] == false)
        .map(|check| {
            format!(
                "{check} ({})",
                canary.report[*check]["detail"].as_str().unwrap_or("?")
            )
        })
        .collect();
    failed.join("; ")
}
