//! `multicooker completions <shell>` and `multicooker man`: generated from the same clap
//! definition that parses the command line (`clap_complete`, `clap_mangen`), so they never drift.

use clap::CommandFactory as _;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::error::ExitCode;
use crate::settings;

/// Prints the completion script for a shell.
pub(super) fn completions(args: &CompletionsArgs) -> ExitCode {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "multicooker", &mut script);
    settings::printer(&args.global, &settings::Env::from_process())
        .document(&String::from_utf8_lossy(&script));
    ExitCode::Success
}

/// Prints the man page, or writes one page per command into `--out`.
pub(super) fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    let printer = settings::printer(&args.global, &settings::Env::from_process());
    let command = Cli::command();
    match &args.out {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command).render(&mut page)?;
            printer.document(&String::from_utf8_lossy(&page));
        }
        Some(dir) => {
            fs_err::create_dir_all(dir)?;
            clap_mangen::generate_to(command, dir)?;
            printer.info(&format!("man pages written to `{}`", dir.display()));
        }
    }
    Ok(ExitCode::Success)
}
