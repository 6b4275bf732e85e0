//! The `multicooker` binary: parse, run, print the error, exit.

use multicooker::cli::Cli;
use multicooker::error::{exit_code_for, hint_for};
use multicooker::output::{OutputOptions, Printer};

fn main() -> std::process::ExitCode {
    // Everything multicooker writes (the cook folder, outputs, logs, archives) is the
    // operator's alone, whoever else has an account on the host (SECURITY.md).
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o077));
    let cli = match Cli::try_parse_args(std::env::args_os()) {
        Ok(cli) => cli,
        Err(error) => return refused(&error),
    };
    let printer =
        multicooker::settings::printer(&cli.global, &multicooker::settings::Env::from_process());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let error = anyhow::Error::new(error).context("cannot start the async runtime");
            printer.failure(&error, None, 2);
            return std::process::ExitCode::from(2);
        }
    };
    let code = match runtime.block_on(multicooker::commands::run(cli)) {
        Ok(code) => code,
        Err(error) => {
            let code = exit_code_for(&error);
            printer.failure(&error, hint_for(&error).as_deref(), code.code());
            code
        }
    };
    std::process::ExitCode::from(code.code())
}

/// A command line clap refused (or `--help`/`--version`): clap's own text, and with `--json`
/// the error as a JSON object on stdout too.
fn refused(error: &clap::Error) -> std::process::ExitCode {
    let _ = error.print();
    let code = u8::try_from(error.exit_code()).unwrap_or(2);
    if error.use_stderr()
        && std::env::args()
            .take_while(|a| a != "--")
            .any(|a| a == "--json")
    {
        let (message, hint) = multicooker::cli::describe_refusal(error);
        Printer::new(OutputOptions {
            json: true,
            ..OutputOptions::default()
        })
        .failure_json(&message, &[], hint.as_deref(), code);
    }
    std::process::ExitCode::from(code)
}
