//! The command line: clap derive types only. Nothing past `settings.rs` sees these types.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::env_vars::EnvVars;

const AFTER_HELP: &str = "\
Exit codes:
  0    success (for cook and judge: at least one cell ended ok)
  1    ran, but produced nothing usable (no ok cell, no scores, a failed doctor check, lint
       findings, no change for diff, nothing running for cancel; cook, refine and resume also
       when hidden tests brief.yaml asks for could not run)
  2    usage or precondition error (missing cook, invalid brief.yaml, engine unreachable, image build failed)
  3    nightly: a ranking, but some cells unscored, a cook failed or the budget was reached
  4    nightly: another night of the same config is running
  130  stopped by Ctrl-C or `cancel`; every container and network was removed and the cook marked cancelled

Environment:
  MULTICOOKER_ROOT            the cooks folder (--root)
  MULTICOOKER_NAMESPACE       namespace of engine objects (--namespace)
  MULTICOOKER_SEED            seed of the judges' label shuffles (--seed)
  MULTICOOKER_HARDENING_USER  uid:gid cells run as (never 0)
  MULTICOOKER_PROFILE         resource profile: large, medium, small or auto
  MULTICOOKER_SEAL_MAX_BYTES  cap on one sealed output (default 1g)
  MULTICOOKER_SUBNET_POOL     pool of the per-cell /28 networks (default 10.213.0.0/16)
  MULTICOOKER_EGRESS_NETWORK  an existing network for the proxies' outside leg
  MULTICOOKER_BUILD_ARGS      build arguments of the flavor images, NAME=value,… (e.g.
                              BASE_IMAGE=…,CLAUDE_SOURCE=…; part of each image's hash tag)
  MULTICOOKER_CANARY_DIRECT   address the egress canary and sandbox probe must fail to reach
                              (default 203.0.113.1:443, a documentation address nothing routes)
  MULTICOOKER_CELL_GRACE_S    seconds a cell may outlive its timeout before its own init ends
                              it, even when multicooker is gone (default 120)
  MULTICOOKER_BACKEND         where cells run: docker (default) or swarm (--backend)
  MULTICOOKER_SWARM_MANAGER   swarm: the manager's engine address (unix://… or tcp://…)
  MULTICOOKER_SWARM_NODES     swarm: every node's engine, host=address,…
  MULTICOOKER_SWARM_REGISTRY  swarm: the registry every node pulls from (host:port)
  MULTICOOKER_KEEP=1          keep containers and networks after a run, for debugging
  MULTICOOKER_HOST_HOME       home folder whose CLI logins are read (default $HOME)
  MULTICOOKER_TOKEN_STORE     keyring or file:<folder>, for `multicooker login`
  DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH   the engine (unix://, tcp://, TLS)
  NO_COLOR                    no colour
Set inside cells, for a custom flavor's program: MULTICOOKER_ROLE, MULTICOOKER_FLAVOR,
  MULTICOOKER_PARTICIPANT, MULTICOOKER_JUDGE, MULTICOOKER_REVIEWER, MULTICOOKER_MODEL,
  MULTICOOKER_TIMEOUT_S, MULTICOOKER_WEB_TOOLS, MULTICOOKER_REQUIRED_OUTPUTS; a verifier
  also gets MULTICOOKER_OUTPUT, MULTICOOKER_VERIFY, MULTICOOKER_RESULTS and MULTICOOKER_LAUNCH
  (the command that runs the code under test with less power than the runner); a participant
  in a Harbor task's environment gets MULTICOOKER_PROMPT (its prompt file) and
  MULTICOOKER_WORKDIR (the task's workdir, `.` for the image's own)

Typical session:
  multicooker new hello --from examples/hello-task
  multicooker cook hello && multicooker judge hello && multicooker report hello

See README.md for the cook folder layout and SECURITY.md for what the sandbox guarantees.";

/// Run several LLM coding CLIs on one brief, each in its own hardened container, and judge
/// their outputs blind.
#[derive(Debug, Parser)]
#[command(name = "multicooker", version, after_help = AFTER_HELP, propagate_version = true)]
pub struct Cli {
    /// Flags every command accepts, before or after the subcommand.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses the command line. The global flags are accepted anywhere (`multicooker -q report
    /// x` and `multicooker report x -q` alike) and copied into the command's own arguments.
    pub fn try_parse_args<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut cli = Self::try_parse_from(args)?;
        *cli.command.global_mut() = cli.global.clone();
        Ok(cli)
    }
}

/// The help heading of the global flags.
const GLOBAL: &str = "Global options (before or after the command)";

/// A refused command line as one message and, when clap offers one, a tip: for the JSON form
/// of the error (`--json`).
pub fn describe_refusal(error: &clap::Error) -> (String, Option<String>) {
    let text = error.render().to_string();
    let message = text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_owned();
    let tips: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("tip: "))
        .collect();
    let hint = if tips.is_empty() {
        "see `multicooker --help`".to_owned()
    } else {
        tips.join("; ")
    };
    (message, Some(hint))
}

/// Flags every command accepts, before or after the subcommand (clap's global arguments: the
/// top-level parser owns them, and [`Cli::try_parse_args`] copies them into the command).
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalArgs {
    /// Folder that holds the cooks; a relative path is also looked up in parent folders.
    #[arg(
        long,
        env = EnvVars::ROOT,
        default_value = "cooks",
        value_name = "DIR",
        global = true,
        help_heading = GLOBAL
    )]
    pub root: PathBuf,
    /// Print machine-readable JSON on stdout (errors too: `code`, `message`, `hint`, `causes`).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,
    /// Print only errors: no tables, no progress, no notes.
    #[arg(short, long, conflicts_with = "verbose", global = true, help_heading = GLOBAL)]
    pub quiet: bool,
    /// Print more detail (plain lines, no progress bars).
    #[arg(short, long, global = true, help_heading = GLOBAL)]
    pub verbose: bool,
    /// Never draw progress bars.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub no_progress: bool,
    /// When to use colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true, help_heading = GLOBAL)]
    pub color: ColorChoice,
    /// Keep this orchestrator's engine objects apart from others' (names and labels carry it),
    /// so two can run cooks of the same name on one engine; `clean` only sees its own.
    #[arg(long, env = EnvVars::NAMESPACE, value_name = "NS", global = true, help_heading = GLOBAL)]
    pub namespace: Option<String>,
    /// Where cells run: `docker` (the local engine, `DOCKER_HOST`) or `swarm` (a Docker Swarm
    /// named by `MULTICOOKER_SWARM_MANAGER`, `MULTICOOKER_SWARM_NODES` and
    /// `MULTICOOKER_SWARM_REGISTRY`; see README, "Running on a swarm").
    #[arg(long, value_enum, env = EnvVars::BACKEND, global = true, help_heading = GLOBAL)]
    pub backend: Option<BackendChoice>,
}

/// `--backend` values.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// The local Docker engine.
    #[default]
    Docker,
    /// A Docker Swarm cluster.
    Swarm,
}

impl From<BackendChoice> for crate::runtime::BackendKind {
    fn from(choice: BackendChoice) -> Self {
        match choice {
            BackendChoice::Docker => Self::Docker,
            BackendChoice::Swarm => Self::Swarm,
        }
    }
}

/// `--color` values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a cook folder (`<root>/<yymmdd>-<name>`) from an example or the default template.
    New(NewArgs),
    /// Add a participant to a cook's brief.yaml (its comments and layout are kept).
    AddParticipant(AddParticipantArgs),
    /// Run every participant of a cook, each in its own container and network, and seal outputs.
    ///
    /// Cells run in parallel under the hardening baseline (non-root, no capabilities, read-only
    /// root, resource limits). Each ends as ok, `timed_out`, `non_zero_exit`, `oom_killed`,
    /// `start_failed`, `artifact_missing`, `rate_limited` or cancelled. Outputs are then sealed into
    /// judging/_inbox/ for `judge`. Ctrl-C stops every cell and removes every container.
    Cook(CookArgs),
    /// Run the cook's hidden tests (`verify/`) against every sealed output, one verifier cell each.
    ///
    /// Each verifier cell gets a read-only copy of one sealed output (/work/output) and of the
    /// hidden folder (/work/verify, where its runner starts), a writable /work/results and
    /// nothing else; no participant, judge, reviewer or chef cell ever gets `verify/`. Results
    /// (`JUnit` XML, TAP, else the runner's `N passed, M failed` line) land in
    /// verification/<participant>/; a failure of the image or the engine is unscored, never 0.
    /// `cook` runs it by itself when brief.yaml has `verify:`. Resumable: outputs with a scored
    /// result for their current content are kept unless --all; earlier results move to
    /// verification/_previous/<time>/.
    Verify(VerifyArgs),
    /// Let the judges score the sealed outputs blind, under shuffled labels.
    ///
    /// Each judge gets its own shuffle of labels A, B, C …; the mapping stays on the host. Under
    /// the default policy `require_distinct_flavor` a judge never sees submissions of its own
    /// flavor (the offline `dummy` is no vendor and scores dummies). Scores are validated and
    /// mapped back to participants on the host.
    Judge(JudgeArgs),
    /// Run round N+1: each participant improves its previous output with feedback.
    ///
    /// Shared feedback comes from FEEDBACK.md (or --feedback), personal feedback from
    /// `FEEDBACK_<participant>.md` (else `FEEDBACK_<flavor>.md`). The previous round is kept in
    /// rounds/<N>/ first; `diff` compares rounds.
    Refine(RefineArgs),
    /// Run one synthesis participant (the chef) over the sealed outputs, anonymized as for judges.
    ///
    /// The chef gets normalized copies under shuffled labels and a ranking by label; the
    /// mapping stays on the host. It is added to brief.yaml as a participant (unless
    /// --no-register), so `rejudge` judges it beside the others.
    Chef(ChefArgs),
    /// Ask reviewers for a second opinion on one candidate, merged into FEEDBACK.md.
    ///
    /// Reviewers (--reviewers, else brief.yaml `consult.reviewers`, else the judges) each get
    /// BRIEF.md, raw/ and a normalized copy of the candidate, in their own cell, and write a
    /// review; reviews land in consult/<target>/ and in one marked FEEDBACK.md block that the
    /// next consult replaces. --refine then runs `refine` for the target.
    Consult(ConsultArgs),
    /// Show which files each participant added, removed or changed between two rounds.
    ///
    /// Defaults to the latest round against the one before. Exit 0 if anything changed, 1 if
    /// nothing did.
    Diff(DiffArgs),
    /// Run again only the participants whose cells did not finish, keeping every ok one.
    ///
    /// Retried: cells classified `rate_limited`, `timed_out`, `start_failed`, `non_zero_exit`,
    /// cancelled, or left unfinished by a killed run, and participants never reached. `--force`
    /// also retries `oom_killed` and `artifact_missing`. Results are merged; a cell that ended ok
    /// is never run again.
    Resume(ResumeArgs),
    /// Judge again from scratch, keeping every earlier judging.
    ///
    /// Each judge's earlier outputs, `JUDGE_RESULT.json`, leaderboard.md and summary.json move to
    /// judging/_previous/<time>/; then the judges run with a fresh label mapping (e.g. after
    /// editing `JUDGE_BRIEF.md`). Same flags as `judge`.
    Rejudge(JudgeArgs),
    /// Aggregate the judges' scores into leaderboard.md and summary.json.
    Report(TaskArgs),
    /// Show a cook's state and cells, and whether a process is still running on it.
    ///
    /// A cook left mid-run by a killed process is shown as interrupted, with the cells that were
    /// running then. `--json` prints status.json plus `running` and `interrupted`.
    Status(TaskArgs),
    /// Print the cells' logs live, each line prefixed by its actor, with the cook's events.
    ///
    /// Cells that start later are followed as their logs appear; following stops by itself when
    /// no command runs on the cook any more. Standard error lines are marked `[actor:err]`.
    Tail(TailArgs),
    /// Stop the command running on a cook, from another terminal or process.
    ///
    /// Same as Ctrl-C in its terminal: cells not started never start, running cells are killed
    /// and removed, finished cells keep their state, partial outputs stay in work/, and the cook
    /// ends `cancelled`. Exits 1 (changing nothing) when nothing is running on the cook.
    Cancel(CancelArgs),
    /// Check that brief.yaml, BRIEF.md and `JUDGE_BRIEF.md` agree.
    ///
    /// Every rubric dimension id must appear in `JUDGE_BRIEF.md` as a whole word; a scale or a
    /// weight it states must match brief.yaml; no template PLACEHOLDER may remain. `cook`
    /// refuses to start a cook that fails. Exit 0 clean, 1 with findings, 2 if brief.yaml is
    /// invalid.
    Lint(TaskArgs),
    /// List every file of a cook with its visibility class into artifacts.json.
    ///
    /// Classes: public (participants' outputs, leaderboard, summary, reviews), operator (the
    /// rest, including any unknown file), secret (login snapshots), `host_only` (label mapping,
    /// sealed inboxes, judges' inboxes).
    Artifacts(TaskArgs),
    /// Copy a cook's shareable files into a folder or a .tar.gz.
    ///
    /// Public files only, plus operator files with --include-operator. Secret and `host_only`
    /// files are never copied; links and special files are skipped.
    Archive(ArchiveArgs),
    /// Remove a cook's containers, networks, volumes and images (never its results).
    ///
    /// Objects are found by their `io.multicooker.cook` label, so `clean --all` also reclaims
    /// what a killed run left behind. Login snapshots a killed run left in `<cook>/.auth/` are
    /// removed too (a finished cell's snapshot is removed when the cell ends).
    Clean(CleanArgs),
    /// Write the cook's cells as a compose file (compose/compose.yaml) and print it.
    ///
    /// Rendered from the same cell specs and engine requests `cook` and `judge` use: image,
    /// user, environment, mounts, tmpfs, dropped capabilities, security options, limits and
    /// networks, to audit a cell or replay one by hand. Nothing is started.
    Compose(TaskArgs),
    /// Remove cooks idle for more than DAYS (folders and engine objects).
    ///
    /// A cook some process is running on is never pruned; DAYS must be above 0.
    /// --keep-results keeps brief.yaml, the briefs and every result file, so the cook can still
    /// be reported and cleaned.
    Prune(PruneArgs),
    /// Run a nightly model comparison: every brief × repeat as a cook, judged, into history.
    ///
    /// The config (YAML) lists `briefs` (cook template folders, Harbor tasks or folders of them),
    /// `participants` and `judges`
    /// ({name, flavor, model, budget}), `repeats`, and optionally `history` (an `SQLite` file),
    /// `cooks_root`, `judging` (merged into every brief), `webhook: {url}`, `seed` and `budget:
    /// {tokens, usd, on_exhausted: finish|cancel}` (once reached no new cell starts and running
    /// ones finish or are stopped; the night is partial). Scores are pooled across
    /// briefs in one model of participant, brief and judge, with intervals and ranks over briefs;
    /// arms that differ where they should be equal (CLI pins, images, limits, egress) mark the
    /// night not comparable. Running the same night again re-runs only cells that did not end ok.
    ///
    /// Exit codes: 0 ok, 1 failed (no ranking), 2 bad config, 3 partial (ranking, but some
    /// cells unscored or the budget reached), 4 another night of this config is running, 130
    /// interrupted.
    Nightly(NightlyArgs),
    /// Trends per participant across nights, with intervals and what changed since the night
    /// before (CLI, model, image, brief, judge brief, score).
    ///
    /// A failed or partial night is shown with its reasons (`failures` in --json). Exits 1
    /// when the latest night failed (no ranking).
    History(HistoryArgs),
    /// Build the shared base images of these flavors (default: every packaged one) ahead of a
    /// cook; `--force` rebuilds. Exits 2 if any build failed.
    BuildBase(BuildBaseArgs),
    /// Check the engine, its API version, and that every flavor's image builds.
    Doctor(DoctorArgs),
    /// Store a flavor's long-lived, non-rotating token for cooks (claude: `claude setup-token`).
    ///
    /// The token goes to the OS keyring under multicooker's own entry (or, without a keyring,
    /// a 0600 file; see `MULTICOOKER_TOKEN_STORE`). Cooks prefer it to the host login, so cells
    /// never hold the host's rotating refresh token. Reads the token from stdin (hidden on a
    /// terminal). codex, agy and grok offer no such token: their host login is snapshotted.
    Login(LoginArgs),
    /// Print a shell completion script (bash, elvish, fish, powershell, zsh) on stdout.
    ///
    /// bash: `multicooker completions bash > ~/.local/share/bash-completion/completions/multicooker`;
    /// zsh: `multicooker completions zsh > ~/.zfunc/_multicooker` (with `fpath+=~/.zfunc`);
    /// fish: `multicooker completions fish > ~/.config/fish/completions/multicooker.fish`.
    Completions(CompletionsArgs),
    /// Print the man page (roff) on stdout, or write one page per command into a folder.
    ///
    /// `multicooker man | man -l -` reads it now; `multicooker man --out
    /// ~/.local/share/man/man1` installs multicooker.1 and multicooker-<command>.1.
    Man(ManArgs),
}

/// `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write multicooker.1 and one multicooker-<command>.1 per command into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// `login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The flavor.
    #[arg(value_parser = ["claude", "codex", "agy", "grok"])]
    pub flavor: String,
    /// Say whether a token is stored and how cooks log this flavor in; change nothing.
    #[arg(long, conflicts_with = "remove")]
    pub status: bool,
    /// Remove the stored token (cooks fall back to the host login).
    #[arg(long)]
    pub remove: bool,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// A task argument plus the global flags.
#[derive(Debug, Clone, Args)]
pub struct TaskArgs {
    /// The cook: its folder name under the root (`251122-hello`), the name without date
    /// (newest match), or an absolute path.
    pub task: String,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// `add-participant`.
#[derive(Debug, Args)]
pub struct AddParticipantArgs {
    /// The cook.
    pub task: String,
    /// `NAME` (flavor NAME) or `NAME=FLAVOR`.
    pub participant: String,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// `refine`.
#[derive(Debug, Args)]
pub struct RefineArgs {
    /// The cook and global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// Refine only these participants (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub participants: Vec<String>,
    /// Shared feedback file (default: the cook's FEEDBACK.md).
    #[arg(long, value_name = "PATH")]
    pub feedback: Option<std::path::PathBuf>,
    /// Cells running at once (default: all).
    #[arg(long, value_name = "N")]
    pub max_parallel: Option<usize>,
}

/// `chef`.
#[derive(Debug, Args)]
pub struct ChefArgs {
    /// The cook and global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// The chef: `NAME=FLAVOR` (or `NAME` for flavor NAME).
    #[arg(long, default_value = "chef=codex")]
    pub chef: String,
    /// Do not add the chef to brief.yaml.
    #[arg(long)]
    pub no_register: bool,
    /// Cook an existing chef again.
    #[arg(long)]
    pub force: bool,
    /// Seed of the label shuffle (default: random; recorded host-side).
    #[arg(long, env = EnvVars::SEED, value_parser = parse_seed)]
    pub seed: Option<u64>,
}

/// `consult`.
#[derive(Debug, Args)]
pub struct ConsultArgs {
    /// The cook and global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// The participant to review (default: the leaderboard's first, else the first participant).
    #[arg(long)]
    pub target: Option<String>,
    /// Reviewers as NAME=FLAVOR, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub reviewers: Vec<String>,
    /// Then refine the target with the merged feedback.
    #[arg(long)]
    pub refine: bool,
}

/// `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The cook and global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// The earlier round (default: the one before --to).
    #[arg(long, value_name = "N")]
    pub from: Option<u32>,
    /// The later round (default: the latest).
    #[arg(long, value_name = "M")]
    pub to: Option<u32>,
    /// Only these participants (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub participants: Vec<String>,
}

/// `build-base`.
#[derive(Debug, Args)]
pub struct BuildBaseArgs {
    /// Flavors to build (default: every packaged flavor).
    pub flavors: Vec<String>,
    /// Rebuild even when the image exists.
    #[arg(long)]
    pub force: bool,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// `nightly`.
#[derive(Debug, Args)]
pub struct NightlyArgs {
    /// The nightly config (YAML).
    pub config: std::path::PathBuf,
    /// The night's id (default: today's date); the same id again resumes that night.
    #[arg(long)]
    pub night: Option<String>,
    /// Also print the JSON-lines log on stdout (it is always appended beside the store).
    #[arg(long)]
    pub log_json: bool,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// `history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The nightly config (YAML).
    pub config: std::path::PathBuf,
    /// Only the last N nights.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// Also write the trends as one self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// `tail`.
#[derive(Debug, Args)]
pub struct TailArgs {
    /// The cook and global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// Only this participant or judge.
    pub actor: Option<String>,
    /// Print what is there and exit.
    #[arg(long)]
    pub no_follow: bool,
    /// Also the earlier runs' events and logs (by default only the current, or last, run's).
    #[arg(long)]
    pub all: bool,
}

/// `prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Prune cooks with no activity for more than this many days (fractions allowed; above 0).
    #[arg(long, value_name = "DAYS", allow_negative_numbers = true)]
    pub older_than: f64,
    /// Keep brief.yaml, the briefs and the result files; remove outputs, logs, inboxes.
    #[arg(long)]
    pub keep_results: bool,
    /// Also remove the pruned cooks' images.
    #[arg(long)]
    pub prune_images: bool,
    /// Only say what would be pruned.
    #[arg(long)]
    pub dry_run: bool,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// `archive --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArchiveFormat {
    /// A folder (default: `<cook>/archive/`).
    Dir,
    /// A gzip tarball (default: `<cook>/<cook>-archive.tar.gz`).
    Tar,
}

/// `archive`.
#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// The cook and global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// Also copy operator files (logs, results, briefs, traces).
    #[arg(long)]
    pub include_operator: bool,
    /// Also copy the hidden tests (`verify/`) and what the verifiers reported
    /// (`verification/`); left out by default, so a published archive never reveals them.
    #[arg(long)]
    pub include_hidden: bool,
    /// Folder or tarball.
    #[arg(long, value_enum, default_value_t = ArchiveFormat::Dir)]
    pub format: ArchiveFormat,
    /// Where to write it (replaced if it exists).
    #[arg(long, value_name = "PATH")]
    pub out: Option<std::path::PathBuf>,
}

/// `resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The cook and global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// Also retry cells that ended for good (`oom_killed`, `artifact_missing`).
    #[arg(long)]
    pub force: bool,
    /// Cells running at once (default: all).
    #[arg(long, value_name = "N")]
    pub max_parallel: Option<usize>,
}

/// `cancel`.
#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The cook and global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// Return once asked, without waiting for the run to stop.
    #[arg(long)]
    pub no_wait: bool,
    /// Seconds to wait for the run to stop (cleanup included).
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub wait_s: u64,
}

/// `new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// Name of the new cook; today's date (`yymmdd-`) is prefixed unless it has one.
    pub name: String,
    /// Copy this example folder (brief.yaml, BRIEF.md, `JUDGE_BRIEF.md`, raw/) instead of the
    /// default template, or make the cook from this Harbor task folder (`task.toml`,
    /// `instruction.md`, …; kept unchanged in the cook's `task/`, see docs/HARBOR.md).
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// Participants for the default template or a Harbor task, as `NAME` or `NAME=FLAVOR`,
    /// comma-separated (default: claude,codex,agy,grok; an example names its own).
    #[arg(long, value_delimiter = ',')]
    pub participants: Option<Vec<String>>,
    /// With a Harbor task: add the oracle, a participant that runs the task's
    /// `solution/solve.sh` instead of a CLI (alone unless `--participants` names others).
    #[arg(long)]
    pub oracle: bool,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// `cook`.
#[derive(Debug, Args)]
pub struct CookArgs {
    /// Global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// Run only these participants (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub participants: Vec<String>,
    /// Cells running at once (default: all).
    #[arg(long, value_name = "N")]
    pub max_parallel: Option<usize>,
    /// Do not run the sandbox probe beside the cells (see `doctor --sandbox`).
    #[arg(long)]
    pub skip_sandbox_check: bool,
}

/// `verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// Verify only these participants' outputs (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub participants: Vec<String>,
    /// Run again even outputs that already have a scored result (earlier ones are kept).
    #[arg(long)]
    pub all: bool,
    /// Verifier cells running at once (default: all).
    #[arg(long, value_name = "N")]
    pub max_parallel: Option<usize>,
}

/// `judge`.
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// Global flags.
    #[command(flatten)]
    pub task: TaskArgs,
    /// Run only these judges (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub judges: Vec<String>,
    /// Seed of the label shuffles (default: random; recorded host-side in `JUDGE_RESULT.json`).
    ///
    /// summary.json writes it as a string (`"statistics": {"seed": "…"}`), so that JSON readers
    /// keep every digit; it is accepted here with or without its quotes.
    #[arg(long, env = EnvVars::SEED, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Judges running at once (default: all).
    #[arg(long, value_name = "N")]
    pub max_parallel: Option<usize>,
}

/// `clean`.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// The cook to clean (omit with --all).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub task: Option<String>,
    /// Clean every object of every cook under the root, including those of killed runs.
    #[arg(long)]
    pub all: bool,
    /// With --all: also remove this namespace's shared base images of every flavor (rebuilt on
    /// next use); another namespace's are never touched.
    #[arg(long, requires = "all")]
    pub base_images: bool,
    /// Show what would be removed without removing it.
    #[arg(long)]
    pub dry_run: bool,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

/// `doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Also check this cook's brief.yaml and the flavors it uses (logins must be present and
    /// outlive the cook's timeouts; images must build). Given a Harbor task folder instead:
    /// whether the task's oracle (`solution/solve.sh`) reaches reward 1 through its verifier.
    pub task: Option<String>,
    /// Check these flavors as a cook would use them: login present and valid, image builds
    /// (real flavors' images need network access to their registries). With a task: only these
    /// of the cook's flavors. Without a task or this, only the dummy image is built and the
    /// other flavors' logins are reported.
    #[arg(long, value_delimiter = ',')]
    pub flavors: Vec<String>,
    /// Skip building images.
    #[arg(long)]
    pub no_build: bool,
    /// Also run a short, authenticated probe of every checked flavor whose login and image are
    /// fine: its CLI answers a one-line prompt in a real cell (uses a few tokens of the plan).
    #[arg(long)]
    pub live: bool,
    /// Run a probe cell with exactly a participant's settings and check, from inside, every
    /// property of the sandbox (non-root, no capabilities, seccomp, read-only root, limits,
    /// mounts, egress).
    #[arg(long)]
    pub sandbox: bool,
    /// Global flags (filled in from the top level).
    #[arg(skip)]
    pub global: GlobalArgs,
}

impl Command {
    /// The global flags of whichever command was given, to fill in.
    pub fn global_mut(&mut self) -> &mut GlobalArgs {
        match self {
            Self::New(a) => &mut a.global,
            Self::AddParticipant(a) => &mut a.global,
            Self::Cook(a) => &mut a.task.global,
            Self::Verify(a) => &mut a.task.global,
            Self::Judge(a) | Self::Rejudge(a) => &mut a.task.global,
            Self::Report(a)
            | Self::Status(a)
            | Self::Lint(a)
            | Self::Artifacts(a)
            | Self::Compose(a) => &mut a.global,
            Self::Archive(a) => &mut a.task.global,
            Self::Prune(a) => &mut a.global,
            Self::Nightly(a) => &mut a.global,
            Self::BuildBase(a) => &mut a.global,
            Self::History(a) => &mut a.global,
            Self::Tail(a) => &mut a.task.global,
            Self::Refine(a) => &mut a.task.global,
            Self::Diff(a) => &mut a.task.global,
            Self::Chef(a) => &mut a.task.global,
            Self::Consult(a) => &mut a.task.global,
            Self::Cancel(a) => &mut a.task.global,
            Self::Resume(a) => &mut a.task.global,
            Self::Clean(a) => &mut a.global,
            Self::Doctor(a) => &mut a.global,
            Self::Login(a) => &mut a.global,
            Self::Completions(a) => &mut a.global,
            Self::Man(a) => &mut a.global,
        }
    }
}

/// A seed as a decimal `u64`, bare or in the double quotes summary.json writes it with.
fn parse_seed(text: &str) -> Result<u64, String> {
    let digits = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    digits.parse().map_err(|_| {
        format!("`{text}` is not a seed: use the digits of `statistics.seed` in summary.json")
    })
}

#[cfg(test)]
mod seed_tests {
    use super::parse_seed;

    #[test]
    fn a_seed_is_read_back_from_summary_json_with_or_without_quotes() {
        let seed = u64::MAX - 7;
        let written = serde_json::json!({"seed": seed.to_string()})["seed"].to_string();
        assert_eq!(parse_seed(&written), Ok(seed), "{written}");
        assert_eq!(parse_seed(&seed.to_string()), Ok(seed));
        assert!(parse_seed("7.5").is_err_and(|e| e.contains("statistics.seed")));
    }
}

#[cfg(test)]
mod tests {
    use crate::env_vars::EnvVars;

    /// `--help` and the README list every multicooker and Docker variable multicooker reads
    /// (the user's own, `HOME`, `USER`, `CODEX_HOME`, `NO_COLOR`, are not its to document).
    #[test]
    fn help_and_readme_list_every_variable() {
        let readme = include_str!("../README.md");
        for name in EnvVars::ALL
            .iter()
            .filter(|n| n.starts_with("MULTICOOKER_") || n.starts_with("DOCKER_"))
        {
            assert!(super::AFTER_HELP.contains(name), "`--help` lacks {name}");
            assert!(readme.contains(name), "README.md lacks {name}");
        }
    }
}
