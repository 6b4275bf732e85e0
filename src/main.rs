//! The `multicooker` binary: parse, run, print the error, exit.

use clap::Parser;
use multicooker::cli::Cli;
use multicooker::error::{exit_code_for, hint_for};

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let printer = multicooker::settings::printer(cli.command.global());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            printer.error(
                &anyhow::Error::new(error).context("cannot start the async runtime"),
                None,
            );
            return std::process::ExitCode::from(2);
        }
    };
    let code = match runtime.block_on(multicooker::commands::run(cli)) {
        Ok(code) => code,
        Err(error) => {
            printer.error(&error, hint_for(&error).as_deref());
            exit_code_for(&error)
        }
    };
    std::process::ExitCode::from(code.code())
}
