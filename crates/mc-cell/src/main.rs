//! mc-cell: the program multicooker runs inside its own images. std only, no dependencies,
//! compiled statically by multicooker's build.rs so it runs in a `FROM scratch` image with no
//! registry. It is the `dummy` flavor (a scriptable stand-in for an LLM coding CLI), its test
//! runner for verifier cells (`verify`), the launcher of code under test (`launch`), the egress proxy that stands beside allowlisted cells,
//! and the canary that checks it.

mod canary;
mod dummy;
mod fake;
mod fake_errors;
mod hostile;
mod init;
mod json;
mod launch;
mod launch_probe;
mod members;
mod probe;
mod program;
mod proxy;
mod rollout;
mod run;
mod script;
mod search;
mod solution;
mod spend;
mod sys;
mod verify;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    // Installed under a CLI's name, mc-cell is that CLI's fake (tests only).
    let invoked = args
        .first()
        .and_then(|a| a.rsplit('/').next())
        .unwrap_or_default();
    if ["claude", "codex", "agy", "grok"].contains(&invoked) {
        return fake::run(invoked, &args[1..]);
    }
    match args.get(1).map(String::as_str) {
        Some("init") => init::run(&args[2..]),
        Some("launch") => launch::run(&args[2..]),
        Some("launch-probe") => launch_probe::run(&args[2..]),
        Some("dummy") => dummy::run(),
        Some("proxy") => proxy::run(&args[2..]),
        Some("canary") => canary::run(&args[2..]),
        Some("run") => run::run(args.get(2).map_or("", String::as_str)),
        Some("verify") => verify::run(&args[2..]),
        Some("program") => program::run(&args[2..]),
        Some("dummy-sleep") => {
            let seconds = args
                .get(2)
                .and_then(|s| s.parse::<f64>().ok())
                .unwrap_or(30.0);
            std::thread::sleep(std::time::Duration::from_secs_f64(seconds.max(0.0)));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "usage: mc-cell dummy | launch -- CMD ARGS… | verify [--spec P] | program PATH | run <flavor> | proxy --allow HOST:PORT,… | canary --proxy HOST:PORT …"
            );
            ExitCode::from(2)
        }
    }
}
