//! `multicooker nightly <config.yaml>` and `multicooker history <config.yaml>`.
//!
//! A night runs every brief × repeat as a cook (in-process: the same pipeline steps as `cook`,
//! `verify`, `judge` and `report`, so a Harbor task cooks in its environment and gets its
//! verifier's rewards), then folds them into the history store. Safe from cron: one night of a config
//! at a time (a lock beside the store), a JSON-lines log, exit codes that mean something, and
//! resumable: running the same night again reuses the cooks that finished and re-runs only the
//! cells that did not end ok.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::{Engine, cell_session};
use crate::cell::budget::Pool;
use crate::cli::{HistoryArgs, NightlyArgs};
use crate::error::ExitCode;
use crate::nightly::config::{self, Nightly};
use crate::nightly::store::{NightRecord, Store};
use crate::nightly::{self as night_fold, NightCook};
use crate::output::Printer;
use crate::pipeline::{self, Cooked, Judging, Round};
use crate::state::{CookPaths, LockError, RunLock, now_iso};

/// The JSON-lines log beside the history store (and stdout with `--log-json`).
struct Log {
    path: PathBuf,
    night: String,
    stdout: bool,
    printer: Printer,
}

impl Log {
    fn event(&self, event: &str, fields: &Value) {
        let mut line = json!({"ts": now_iso(), "event": event, "night": self.night});
        if let (Value::Object(line), Value::Object(fields)) = (&mut line, fields) {
            line.extend(fields.clone());
        }
        let text = format!("{line}\n");
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
        {
            let _ = file.write_all(text.as_bytes());
        }
        if self.stdout {
            self.printer.data(text.trim_end());
        }
    }
}

fn seed_for(nightly: &Nightly, night: &str) -> u64 {
    use sha2::Digest as _;
    nightly.seed.unwrap_or_else(|| {
        let digest = sha2::Sha256::digest(format!("{}\n{night}", nightly.name));
        u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"))
    })
}

pub(super) async fn run(args: &NightlyArgs) -> anyhow::Result<ExitCode> {
    let (mut session, cancel) = cell_session(&args.global)?;
    let home = session
        .env
        .home()
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    let nightly = config::load(&args.config, &home)?;
    if let Some(choice) = nightly.backend.filter(|_| !session.backend_chosen) {
        session.backend = crate::settings::Backend::from_choice(choice, &session.env)?;
    }
    let night = args
        .night
        .clone()
        .unwrap_or_else(|| jiff::Zoned::now().date().to_string());
    let Some(_lock) = night_lock(session.printer, &nightly)? else {
        return Ok(ExitCode::Busy);
    };
    let log = Log {
        path: nightly.history.with_extension("log.jsonl"),
        night: night.clone(),
        stdout: args.log_json,
        printer: session.printer,
    };
    let started_at = now_iso();
    let seed = seed_for(&nightly, &night);
    log.event("night.started", &json!({"config": nightly.name, "briefs": nightly.briefs.len(), "repeats": nightly.repeats, "seed": seed}));
    session.printer.info(&format!(
        "nightly `{}`, night {night}: {} brief(s) × {} repeat(s), {} participant(s), {} judge(s)",
        nightly.name,
        nightly.briefs.len(),
        nightly.repeats,
        nightly.participants.len(),
        nightly.judges.len()
    ));
    let engine = Engine::connect(&session, None).await?;
    let tonight = Tonight {
        nightly: &nightly,
        night: &night,
        session: &session,
        engine: &engine,
        seed,
        cancel: &cancel,
        log: &log,
        pool: night_pool(&nightly, &night),
    };
    let cooks = tonight.cook_all().await;
    let record = night_fold::fold(
        &nightly,
        &night,
        &started_at,
        seed,
        &cooks,
        &BTreeMap::new(),
    );
    tonight.finish(record)
}

/// The night's lock beside its store: `None` (said on stderr) when another night of this
/// config is running.
fn night_lock(printer: Printer, nightly: &Nightly) -> anyhow::Result<Option<RunLock>> {
    let lock_path = nightly.history.with_extension("lock");
    if let Some(parent) = lock_path.parent() {
        fs_err::create_dir_all(parent)?;
    }
    match RunLock::acquire_file(&lock_path, &format!("nightly {}", nightly.name), "nightly") {
        Ok(lock) => Ok(Some(lock)),
        Err(error @ LockError::Busy { .. }) => {
            printer.failure(
                &anyhow::Error::new(error),
                Some("two nights of one config never overlap; this one was not started"),
                ExitCode::Busy.code(),
            );
            Ok(None)
        }
        Err(error) => Err(error.into()),
    }
}

/// One night in progress: what every cook of it shares.
struct Tonight<'a> {
    nightly: &'a Nightly,
    night: &'a str,
    session: &'a crate::settings::Session,
    engine: &'a Engine<'a>,
    seed: u64,
    cancel: &'a tokio_util::sync::CancellationToken,
    log: &'a Log,
    pool: Option<Arc<Pool>>,
}

impl Tonight<'_> {
    /// Every brief × repeat, in order, until Ctrl-C; a cook that fails is recorded and the
    /// night goes on.
    async fn cook_all(&self) -> Vec<NightCook> {
        let mut cooks = Vec::new();
        for (index, template) in self.nightly.briefs.iter().enumerate() {
            for repeat in 1..=self.nightly.repeats {
                if self.cancel.is_cancelled() {
                    return cooks;
                }
                let name = night_fold::cook_name(self.nightly, self.night, template, repeat);
                let dir = self.nightly.cooks_root.join(&name);
                let reached = self.pool.as_ref().filter(|p| p.is_reached());
                let error = match reached.map(|p| p.why()) {
                    Some(why) => self.not_started(&dir, &name, &why),
                    None => self.cook_one(template, &dir, &name).await,
                };
                cooks.push(NightCook {
                    dir,
                    brief: index,
                    repeat,
                    error,
                });
            }
        }
        cooks
    }

    /// Once the night's budget is reached no new cell starts: a cook not finished earlier
    /// (this night run before) is not started, and its error says why.
    fn not_started(&self, dir: &Path, name: &str, why: &str) -> Option<String> {
        if dir.join("summary.json").is_file() {
            return None;
        }
        self.log
            .event("cook.skipped", &json!({"cook": name, "reason": why}));
        Some(format!("not started: {why}"))
    }

    /// Runs one cook; its error, logged and warned about, if it failed.
    async fn cook_one(&self, template: &Path, dir: &Path, name: &str) -> Option<String> {
        let error = self.run_cook(template, dir, name).await.err()?;
        let text = format!("{error:#}");
        self.log
            .event("cook.failed", &json!({"cook": name, "error": text}));
        self.session
            .printer
            .warn(&format!("cook `{name}` failed: {text}"));
        Some(text)
    }

    /// One cook of the night: created from its template if new; a finished one is reused; one
    /// with unfinished cells has only those run again; then the pipeline's steps, as the
    /// commands run them: cook (a Harbor task in its environment, with its verifier), the
    /// hidden tests, the judges, the report.
    async fn run_cook(&self, template: &Path, dir: &Path, name: &str) -> anyhow::Result<()> {
        if dir.join("brief.yaml").is_file() {
            night_fold::write_brief_yaml(self.nightly, template, dir, name)?;
        } else {
            night_fold::write_cook(self.nightly, template, dir, name)?;
        }
        let paths = self.session.cook_paths(dir.to_path_buf());
        let brief = crate::brief::load(&paths.brief_yaml())?.brief;
        super::status::lint_gate(&paths, &brief)?;
        let _lock = RunLock::acquire(dir, "nightly")?;
        let ran_before = paths.run_result().is_file();
        let targets = crate::pipeline::resume::unfinished(&paths, &brief, ran_before);
        if targets.is_empty() && paths.summary().is_file() && paths.judge_result().is_file() {
            self.log.event("cook.reused", &json!({"cook": name}));
            return Ok(());
        }
        self.log.event(
            "cook.started",
            &json!({"cook": name, "participants": targets, "resumed": ran_before}),
        );
        let mut run = self.engine.run((&paths, &brief), self.cancel);
        run.night.clone_from(&self.pool);
        if !targets.is_empty() {
            self.cook_step(&run, &targets, ran_before).await?;
        }
        // Before the judges: they may be shown the tests' summary (`verify.jury`).
        if brief.verify.is_some() && !self.cancel.is_cancelled() {
            self.verify_step(&run).await?;
        }
        if self.cancel.is_cancelled() {
            return Ok(());
        }
        self.judge_and_report(&run).await
    }

    /// The cook step over `targets`; the hidden tests are a step of their own after it.
    async fn cook_step(
        &self,
        run: &pipeline::Run<'_>,
        targets: &[String],
        merge: bool,
    ) -> anyhow::Result<()> {
        let round = Round {
            merge,
            verify: false,
            ..Round::default()
        };
        let cells: Vec<Value> = match pipeline::cook(run, targets, round).await? {
            Cooked::Cells(cooked) => cooked
                .outcome
                .results
                .iter()
                .map(|r| json!({"participant": r.name, "status": r.status.as_str()}))
                .collect(),
            Cooked::Task(task) => task
                .runs
                .runs
                .iter()
                .map(|r| {
                    let verdict = task.verification.verdicts.iter().find(|v| v.participant == r.participant);
                    json!({"participant": r.participant, "status": r.outcome.state.as_str(), "reward": verdict.and_then(|v| v.reward), "task_hash": task.task.hash()})
                })
                .collect(),
        };
        let name = run.paths.name();
        self.log
            .event("cook.finished", &json!({"cook": name, "cells": cells}));
        Ok(())
    }

    /// Verifies every sealed output of the cook that has no scored result yet.
    async fn verify_step(&self, run: &pipeline::Run<'_>) -> anyhow::Result<()> {
        let everyone: Vec<String> = run
            .brief
            .participants
            .iter()
            .map(|p| p.name.clone())
            .collect();
        let verified = pipeline::verify(run, &everyone, crate::verify::Rerun::Pending).await?;
        let outcomes: Vec<Value> = verified
            .results
            .iter()
            .map(
                |r| json!({"participant": r.participant, "outcome": r.outcome, "totals": r.totals}),
            )
            .collect();
        self.log.event(
            "verify.finished",
            &json!({"cook": run.paths.name(), "verifications": outcomes}),
        );
        Ok(())
    }

    /// Every judge of the cook afresh with the night's seed, then the report.
    async fn judge_and_report(&self, run: &pipeline::Run<'_>) -> anyhow::Result<()> {
        let name = run.paths.name();
        let judging = Judging {
            seed: self.seed,
            resume: crate::judge::Resume::Fresh,
            again: false,
        };
        let judged = pipeline::judge(run, &run.brief.judges, judging).await?;
        let verdicts: Vec<Value> = judged
            .results
            .iter()
            .map(|r| json!({"judge": r.name, "status": r.status}))
            .collect();
        self.log
            .event("judge.finished", &json!({"cook": name, "judges": verdicts}));
        let reported = pipeline::report(run.paths, run.brief)?;
        self.log.event(
            "report.finished",
            &json!({"cook": name, "scored": !reported.written.no_scores}),
        );
        Ok(())
    }

    /// Stores the night's record (partial when its budget cut it short), prints it, calls
    /// the webhook; the exit code.
    fn finish(&self, mut record: NightRecord) -> anyhow::Result<ExitCode> {
        let (nightly, log) = (self.nightly, self.log);
        if let Some(pool) = self.pool.as_ref().filter(|p| p.is_reached()) {
            // A night cut short by its budget is partial at best.
            log.event(
                "budget.exhausted",
                &json!({"reason": pool.why(), "on_exhausted": nightly.budget.map(|b| b.on_exhausted)}),
            );
            if record.status == "ok" {
                record.status = "partial".into();
            }
            record.failures.insert(0, pool.why());
        }
        let mut store = Store::open(&nightly.history)?;
        let id = store.put(&record)?;
        log.event("stored", &json!({"store": nightly.history, "id": id, "status": record.status, "comparable": record.comparable}));
        print_night(self.session.printer, &record);
        if let Some(url) = &nightly.webhook {
            notify(url, &record, log);
        }
        let status = if self.cancel.is_cancelled() {
            "cancelled"
        } else {
            record.status.as_str()
        };
        log.event("night.finished", &json!({"status": status}));
        self.session.printer.json(&serde_json::to_value(&record)?);
        Ok(match status {
            "cancelled" => ExitCode::Cancelled,
            "ok" => ExitCode::Success,
            "partial" => ExitCode::Partial,
            _ => ExitCode::NothingUsable,
        })
    }
}

/// The night's budget as a pool, having counted what the night's cooks already spent (a night
/// run again resumes its count).
fn night_pool(nightly: &Nightly, night: &str) -> Option<Arc<Pool>> {
    let budget = nightly.budget?;
    let mut spent = crate::flavor::meter::Spend::default();
    for template in &nightly.briefs {
        for repeat in 1..=nightly.repeats {
            let dir = nightly
                .cooks_root
                .join(night_fold::cook_name(nightly, night, template, repeat));
            if dir.is_dir() {
                let paths = CookPaths::new(dir);
                spent = spent.plus(crate::cell::spend::recorded_spend(&paths));
            }
        }
    }
    Some(Pool::new(
        crate::cell::budget::NIGHT,
        budget.cap,
        budget.on_exhausted == crate::nightly::budget::OnExhausted::Cancel,
        spent,
    ))
}

fn print_night(printer: Printer, record: &crate::nightly::store::NightRecord) {
    printer.data(&format!(
        "night {} of `{}`: {}{}",
        record.night,
        record.config,
        status_word(&record.status),
        if record.comparable {
            String::new()
        } else {
            format!(" — NOT COMPARABLE: {}", record.reasons.join("; "))
        }
    ));
    // The verdict first (issue 27), from the same data `history` shows.
    let document = crate::nightly::history_json(
        &record.config,
        std::path::Path::new(""),
        std::slice::from_ref(record),
    );
    if let Some(verdict) = crate::report::verdict::of_night(&document["nights"][0]) {
        printer.data(&format!("  {verdict}"));
    }
    print_failures(printer, &record.failures);
    for estimate in &record.estimates {
        print_estimate(printer, estimate);
    }
    if record.estimates.iter().any(|e| e.lo.is_some()) {
        printer.data(&format!("  {}", crate::report::NIGHT_CONDITIONING));
    }
    if let Some(line) = crate::nightly::rewards::text_line(&document["nights"][0]["task_rewards"]) {
        printer.data(&format!("  {line}"));
    }
    let spend = crate::nightly::budget::spend_json(&record.spend);
    for line in crate::nightly::budget::spend_lines(&spend) {
        printer.data(&line);
    }
    if let Some(groups) = record.tied_groups.as_ref().filter(|g| g.len() > 1) {
        printer.data(&format!(
            "  groups (every pair across a `>` separated): {}",
            groups
                .iter()
                .map(|g| format!("{{{}}}", g.join(", ")))
                .collect::<Vec<_>>()
                .join(" > ")
        ));
    }
}

/// One participant's row: its estimate, interval, rank and how many of its cells were scored.
fn print_estimate(printer: Printer, estimate: &crate::nightly::store::EstimateRecord) {
    let interval = match (estimate.lo, estimate.hi) {
        (Some(lo), Some(hi)) => format!("[{lo:.1}, {hi:.1}]"),
        _ => "[no interval]".to_owned(),
    };
    let rank = match (estimate.rank, estimate.rank_single) {
        (None, _) => String::new(),
        (Some(_), Some(false)) => format!(
            "ranks {}–{}",
            estimate.rank_best.unwrap_or(0),
            estimate.rank_worst.unwrap_or(0)
        ),
        (Some(r), _) => format!("rank {r}"),
    };
    printer.data(&format!(
        "  {:<20} {:>6} {interval:<16} {rank:<11} {}/{} cells scored",
        estimate.participant,
        estimate
            .estimate
            .map_or_else(|| "–".to_owned(), |e| format!("{e:.1}")),
        estimate.scored_cells,
        estimate.cells
    ));
}

/// `FAILED` in capitals: a failed night must not read like a good one at a glance.
fn status_word(status: &str) -> String {
    if status == "failed" {
        "FAILED (no ranking)".to_owned()
    } else {
        status.to_owned()
    }
}

/// Why a night failed or is partial: the first few reasons, and how many more.
fn print_failures(printer: Printer, failures: &[String]) {
    const SHOWN: usize = 8;
    for failure in failures.iter().take(SHOWN) {
        printer.data(&format!("  because {failure}"));
    }
    if failures.len() > SHOWN {
        printer.data(&format!(
            "  … and {} more (`--json` lists all)",
            failures.len() - SHOWN
        ));
    }
}

/// The webhook's body: the night, its status and ranking; never tokens, paths or mappings.
pub(super) fn webhook_body(record: &crate::nightly::store::NightRecord) -> Value {
    json!({
        "nightly": record.config, "night": record.night, "status": record.status,
        "comparable": record.comparable, "not_comparable_reasons": record.reasons,
        "method": record.method,
        "ranking": record.estimates.iter().map(|e| json!({"participant": e.participant, "estimate": e.estimate, "lo": e.lo, "hi": e.hi, "scored_cells": e.scored_cells, "cells": e.cells})).collect::<Vec<_>>(),
        "tied_groups": record.tied_groups,
        "task_rewards": record.task_rewards,
    })
}

/// POSTs the summary; a failure is logged, never fatal.
fn notify(url: &str, record: &crate::nightly::store::NightRecord, log: &Log) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(10)))
        .build()
        .into();
    match agent
        .post(url)
        .header("content-type", "application/json")
        .send(webhook_body(record).to_string())
    {
        Ok(response) => log.event(
            "webhook.sent",
            &json!({"status": response.status().as_u16()}),
        ),
        Err(error) => {
            log.event("webhook.failed", &json!({"error": error.to_string()}));
            log.printer.warn(&format!("webhook failed: {error}"));
        }
    }
}

pub(super) fn history(args: &HistoryArgs) -> anyhow::Result<ExitCode> {
    let session = crate::settings::session(&args.global)?;
    let home = session
        .env
        .home()
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    let nightly = config::load(&args.config, &home)?;
    let store = Store::open(&nightly.history)?;
    let nights = store.nights(&nightly.name, args.last)?;
    let document = night_fold::history_json(&nightly.name, &nightly.history, &nights);
    if let Some(path) = &args.html {
        crate::fsx::write_atomic(
            path,
            crate::report::html::render_history_html(&document).as_bytes(),
        )?;
        session
            .printer
            .info(&format!("history page: {}", path.display()));
    }
    session.printer.json(&document);
    if nights.is_empty() {
        session.printer.info(&format!(
            "no night of `{}` in `{}` yet",
            nightly.name,
            nightly.history.display()
        ));
        return Ok(ExitCode::NothingUsable);
    }
    for line in night_fold::history_text(&document) {
        session.printer.data(&line);
    }
    // The latest night decides the exit code: a cron line `history … || alert` notices a
    // failed night (issue 17: history used to exit 0 over failed nights).
    if nights.last().is_some_and(|n| n.status == "failed") {
        return Ok(ExitCode::NothingUsable);
    }
    Ok(ExitCode::Success)
}
