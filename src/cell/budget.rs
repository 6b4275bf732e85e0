//! Budgets enforced while cells run. Each cell's stdout goes through a [`Meter`] as it
//! streams (in the log pump); what it spends is added at once to the cell's own count and to
//! every shared pool of the run (the cook's `budget:`, the night's). A cell that reaches its own
//! cap, or a pool that stops running cells, is killed through the runtime like a timeout and
//! classified `budget_exhausted`; once a pool is reached no further cell starts.
//!
//! Enforcement trusts the CLI's own usage reports only as far as they are plausible: a line that
//! claims more than its flavor's turns could cost (`Meter::implausible`, docs/FLAVORS.md §8 item
//! 9) is never added to any count; its cell alone is stopped and ends `spend_implausible`
//! (unscored, flagged in the report), and every other cell and pool goes on. A CLI that
//! under-reports, or reports only at its end (agy, grok; every cost but claude's and grok's final
//! line), is stopped only as soon as it reports.
//!
//! A flavor whose usage arrives only once its turn is over (codex's `turn.completed` at the end of
//! `codex exec`'s single turn, agy's `result`, grok's `end`) has finished its work when a cap is
//! crossed: it is not killed then (killing would throw the finished work away), but recorded as
//! over budget ([`CellSpend::over_budget`]); `judging.over_budget` in brief.yaml decides whether
//! it is judged. Its spend counts in every pool like any other.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use crate::brief::Budget;
use crate::flavor::meter::{Meter, Spend};

/// The label of a cook's own pool.
pub const COOK: &str = "the cook's budget";
/// The label of a night's pool.
pub const NIGHT: &str = "the night's budget";

/// A cap shared by many cells (a cook's, a night's).
#[derive(Debug)]
pub struct Pool {
    /// What it caps, for messages: `the cook's budget`, `the night's budget`.
    pub label: String,
    /// The cap.
    pub cap: Budget,
    /// Whether running cells are stopped once it is reached (else they finish).
    pub stop_running: bool,
    spent: Mutex<Spend>,
    reached: CancellationToken,
}

impl Pool {
    /// A pool that has already seen `spent` (earlier phases of the cook, earlier cooks of the
    /// night).
    pub fn new(label: &str, cap: Budget, stop_running: bool, spent: Spend) -> Arc<Self> {
        let pool = Self {
            label: label.to_owned(),
            cap,
            stop_running,
            spent: Mutex::new(Spend::default()),
            reached: CancellationToken::new(),
        };
        pool.add(spent);
        Arc::new(pool)
    }

    /// Adds spend; cancels the pool's token once the cap is reached.
    pub fn add(&self, more: Spend) {
        let total = {
            let mut so_far = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
            *so_far = so_far.plus(more);
            *so_far
        };
        if self.cap.reached_by(total) {
            self.reached.cancel();
        }
    }

    /// What the pool's cells spent so far.
    pub fn spent(&self) -> Spend {
        *self.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// True once the cap is reached.
    pub fn is_reached(&self) -> bool {
        self.reached.is_cancelled()
    }

    /// `the cook's budget is used up (spent 12 / 10 tokens)`.
    pub fn why(&self) -> String {
        format!(
            "{} is used up ({})",
            self.label,
            self.cap.describe(self.spent())
        )
    }
}

/// The pools a run's cells count against.
#[derive(Debug, Clone, Default)]
pub struct Budgets {
    /// The cook's, then the night's.
    pub pools: Vec<Arc<Pool>>,
}

impl Budgets {
    /// Sets the cook's pool to what the cook recorded before this phase (its cells' spend is
    /// then added as they run).
    pub fn restart_cook(&self, recorded: Spend) {
        for pool in self.pools.iter().filter(|p| p.label == COOK) {
            *pool.spent.lock().unwrap_or_else(PoisonError::into_inner) = Spend::default();
            pool.add(recorded);
        }
    }

    /// Why no further cell may start, if a pool is reached.
    pub fn blocked(&self) -> Option<String> {
        self.pools.iter().find(|p| p.is_reached()).map(|p| p.why())
    }
}

/// One cell's live spend: its meter, its own cap and the pools it counts against.
#[derive(Debug)]
pub struct CellSpend {
    meter: Mutex<(Meter, Spend)>,
    cap: Option<Budget>,
    pools: Vec<Arc<Pool>>,
    stop: CancellationToken,
    reason: Mutex<Option<String>>,
    flavor: String,
    implausible: Mutex<Option<String>>,
    /// The flavor reports its usage only once its turn is over.
    at_end: bool,
    /// It has reported its turn's usage: its work is done.
    reported: AtomicBool,
    over: Mutex<Option<String>>,
}

impl CellSpend {
    /// A cell of `flavor` with its own cap, counting against `budgets`.
    pub fn new(flavor: &str, cap: Option<Budget>, budgets: &Budgets) -> Arc<Self> {
        Arc::new(Self {
            meter: Mutex::new((Meter::new(flavor), Spend::default())),
            cap,
            pools: budgets.pools.clone(),
            stop: CancellationToken::new(),
            reason: Mutex::new(None),
            flavor: flavor.to_owned(),
            implausible: Mutex::new(None),
            at_end: crate::flavor::meter::reports_at_turn_end(flavor),
            reported: AtomicBool::new(false),
            over: Mutex::new(None),
        })
    }

    /// Why the cell finished over a budget, for a flavor that reports its usage only at the end
    /// of its turn (`None` when it did not, or was stopped while it ran).
    pub fn over_budget(&self) -> Option<String> {
        self.over
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn note_over(&self, why: &str) {
        self.over
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert_with(|| {
                format!(
                    "finished its turn over {why}: `{}` reports its usage only at the end of its turn, so it could not be stopped while it worked",
                    self.flavor
                )
            });
    }

    /// Reads a chunk of the cell's stdout.
    pub fn push(&self, bytes: &[u8]) {
        self.account(|meter| meter.push(bytes));
    }

    /// Reads a last line without a newline.
    pub fn finish(&self) {
        self.account(Meter::finish);
    }

    fn account(&self, feed: impl FnOnce(&mut Meter) -> bool) {
        let (spend, delta, implausible) = {
            let mut guard = self.meter.lock().unwrap_or_else(PoisonError::into_inner);
            let (meter, counted) = &mut *guard;
            let first = meter.implausible().is_none();
            let changed = feed(meter);
            let implausible = meter.implausible().filter(|_| first);
            if !changed && implausible.is_none() {
                return;
            }
            let spend = meter.spend();
            let delta = spend.since(*counted);
            *counted = spend;
            (spend, delta, implausible)
        };
        if let Some(claim) = implausible {
            let why = implausible_reason(&self.flavor, claim);
            *self
                .implausible
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(why.clone());
            self.stop_because(why);
        }
        let turn_over = self.at_end && (delta.tokens > 0 || delta.usd > 0.0);
        if turn_over {
            // Set before the pools hear of it: a pool this line fills must not stop the cell.
            self.reported.store(true, Ordering::SeqCst);
        }
        for pool in &self.pools {
            let was_reached = pool.is_reached();
            pool.add(delta);
            if turn_over && pool.stop_running && !was_reached && pool.is_reached() {
                self.note_over(&format!(
                    "{} ({})",
                    pool.label,
                    pool.cap.describe(pool.spent())
                ));
            }
        }
        if let Some(cap) = self.cap.filter(|c| c.reached_by(spend)) {
            if self.at_end && self.reported.load(Ordering::SeqCst) {
                self.note_over(&format!("its budget ({})", cap.describe(spend)));
            } else {
                self.stop_because(format!("its budget is used up ({})", cap.describe(spend)));
            }
        }
    }

    fn stop_because(&self, why: String) {
        let mut reason = self.reason.lock().unwrap_or_else(PoisonError::into_inner);
        reason.get_or_insert(why);
        self.stop.cancel();
    }

    /// Why the cell's spend claims are not believed, once one line claimed more than its turns
    /// could cost (the cell is stopped for it).
    pub fn implausible(&self) -> Option<String> {
        self.implausible
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// What the cell spent so far (implausible claims left out).
    pub fn spend(&self) -> Spend {
        self.meter
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .spend()
    }

    /// Resolves with the reason once the cell must stop: its own cap, or a pool that stops
    /// running cells.
    pub async fn exhausted(&self) -> String {
        let mut waits: Vec<futures_util::future::BoxFuture<'_, Option<&Pool>>> =
            vec![Box::pin(async {
                self.stop.cancelled().await;
                None
            })];
        for pool in self.pools.iter().filter(|p| p.stop_running) {
            waits.push(Box::pin(async move {
                pool.reached.cancelled().await;
                Some(&**pool)
            }));
        }
        let (pool, _, _) = futures_util::future::select_all(waits).await;
        if let Some(pool) = pool {
            if self.reported.load(Ordering::SeqCst) && self.implausible().is_none() {
                // Its turn is over and reported: it ends by itself, with its work.
                return std::future::pending().await;
            }
            self.stop_because(pool.why());
        }
        self.reason
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_else(|| "its budget is used up".into())
    }
}

/// `implausible spend: one line claims 1 000 000 000 000 tokens, …`, with the ceiling it broke.
fn implausible_reason(flavor: &str, claim: crate::flavor::meter::Implausible) -> String {
    use crate::brief::grouped;
    let (claimed, allowed) = (claim.claimed, claim.allowed);
    let what = if claimed.tokens > allowed.tokens {
        format!(
            "{} tokens, more than the {} a `{flavor}` cell could have spent by then",
            grouped(claimed.tokens),
            grouped(allowed.tokens)
        )
    } else {
        format!(
            "${:.2}, more than the ${:.2} a `{flavor}` cell could have spent by then",
            claimed.usd, allowed.usd
        )
    };
    format!(
        "implausible spend: one line of its output claims {what} (at most one model turn per line, docs/FLAVORS.md §8 item 9); not counted, the cell was stopped and is unscored"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(tokens: u64) -> Vec<u8> {
        format!(
            "{{\"type\":\"assistant\",\"message\":{{\"usage\":{{\"input_tokens\":{tokens}}}}}}}\n"
        )
        .into_bytes()
    }

    fn cap(tokens: u64) -> Budget {
        Budget {
            tokens: Some(tokens),
            usd: None,
        }
    }

    #[tokio::test]
    async fn a_cell_stops_at_its_own_cap_and_counts_in_the_pool() {
        let pool = Pool::new(COOK, cap(1000), true, Spend::default());
        let budgets = Budgets {
            pools: vec![pool.clone()],
        };
        let cell = CellSpend::new("dummy", Some(cap(100)), &budgets);
        cell.push(&line(60));
        assert!(!cell.stop.is_cancelled());
        cell.push(&line(60));
        let why = cell.exhausted().await;
        assert_eq!(why, "its budget is used up (spent 120 / 100 tokens)");
        assert_eq!(pool.spent().tokens, 120);
        assert!(budgets.blocked().is_none());
    }

    #[tokio::test]
    async fn a_reached_pool_blocks_starts_and_stops_cells_only_when_told() {
        let finishing = Pool::new(NIGHT, cap(100), false, Spend::default());
        let stopping = Pool::new(COOK, cap(50), true, Spend::default());
        let budgets = Budgets {
            pools: vec![stopping.clone(), finishing.clone()],
        };
        let a = CellSpend::new("dummy", None, &budgets);
        let b = CellSpend::new("dummy", None, &budgets);
        a.push(&line(30));
        assert!(budgets.blocked().is_none());
        b.push(&line(30));
        assert_eq!(
            budgets.blocked().as_deref(),
            Some("the cook's budget is used up (spent 60 / 50 tokens)")
        );
        assert_eq!(
            a.exhausted().await,
            "the cook's budget is used up (spent 60 / 50 tokens)"
        );
        // A pool that lets running cells finish never stops them.
        let night = Budgets {
            pools: vec![Pool::new(
                NIGHT,
                cap(10),
                false,
                Spend {
                    tokens: 10,
                    usd: 0.0,
                },
            )],
        };
        assert!(night.blocked().is_some(), "earlier cooks' spend counts");
        let c = CellSpend::new("dummy", None, &night);
        c.push(&line(5));
        let stopped =
            tokio::time::timeout(std::time::Duration::from_millis(50), c.exhausted()).await;
        assert!(stopped.is_err(), "running cells finish");
        assert!(!finishing.is_reached());
    }

    fn turn(tokens: u64) -> Vec<u8> {
        format!(
            "{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":{tokens},\"output_tokens\":0}}}}\n"
        )
        .into_bytes()
    }

    async fn still_running(cell: &CellSpend) -> bool {
        tokio::time::timeout(std::time::Duration::from_millis(50), cell.exhausted())
            .await
            .is_err()
    }

    /// Issue 25: codex reports its usage only when its single turn is over. With a 10,000-token
    /// cap it finished 280,840 tokens of work and was then killed, the work thrown away. It is
    /// no longer stopped by the line that reports its finished turn: it is recorded over budget,
    /// and its spend counts in the pool.
    #[tokio::test]
    async fn a_turn_reported_at_its_end_over_the_cap_is_recorded_not_stopped() {
        let pool = Pool::new(COOK, cap(1_000_000), true, Spend::default());
        let budgets = Budgets {
            pools: vec![pool.clone()],
        };
        let codex = CellSpend::new("codex", Some(cap(10_000)), &budgets);
        codex.push(&turn(280_840));
        assert!(still_running(&codex).await, "its finished work is kept");
        assert_eq!(
            codex.over_budget().as_deref(),
            Some(
                "finished its turn over its budget (spent 280 840 / 10 000 tokens): `codex` reports its usage only at the end of its turn, so it could not be stopped while it worked"
            )
        );
        assert_eq!(pool.spent().tokens, 280_840, "counted in the cook's pool");
        // A flavor read live is still stopped at its cap.
        let claude = CellSpend::new("dummy", Some(cap(10_000)), &budgets);
        claude.push(&line(10_001));
        assert!(!still_running(&claude).await);
        assert_eq!(claude.over_budget(), None);
    }

    /// The cook-wide cap: codex's end-of-turn line fills the pool. The pool stops the cells
    /// still working and starts no new one, but not codex, whose turn is over; a codex cell that
    /// has reported nothing yet is still working and is stopped like any other.
    #[tokio::test]
    async fn an_end_of_turn_line_that_fills_the_pool_keeps_its_own_cell() {
        let pool = Pool::new(COOK, cap(50_000), true, Spend::default());
        let budgets = Budgets {
            pools: vec![pool.clone()],
        };
        let working = CellSpend::new("codex", None, &budgets);
        let live = CellSpend::new("dummy", None, &budgets);
        live.push(&line(1_000));
        let done = CellSpend::new("codex", None, &budgets);
        done.push(&turn(80_240));
        assert_eq!(pool.spent().tokens, 81_240);
        assert!(budgets.blocked().is_some(), "no new cell starts");
        assert!(still_running(&done).await);
        assert_eq!(
            done.over_budget().as_deref(),
            Some(
                "finished its turn over the cook's budget (spent 81 240 / 50 000 tokens): `codex` reports its usage only at the end of its turn, so it could not be stopped while it worked"
            )
        );
        assert!(!still_running(&live).await, "a live cell is stopped");
        assert!(
            !still_running(&working).await,
            "so is a codex cell mid-turn"
        );
        assert_eq!(working.over_budget(), None);
    }

    /// The attack: one forged line from one cell. The pool never sees it, the forger
    /// alone is stopped and flagged, and a sibling goes on spending against the same pool.
    #[tokio::test]
    async fn a_forged_claim_stops_its_cell_alone_and_never_reaches_the_pool() {
        let pool = Pool::new(COOK, cap(100_000), true, Spend::default());
        let budgets = Budgets {
            pools: vec![pool.clone()],
        };
        let forger = CellSpend::new("dummy", None, &budgets);
        let honest = CellSpend::new("dummy", None, &budgets);
        forger.push(&line(300));
        forger.push(b"{\"type\":\"result\",\"usage\":{\"input_tokens\":1000000000000}}\n");
        let why = forger.exhausted().await;
        assert!(
            why.starts_with("implausible spend: one line of its output claims 999 999 999 700 tokens, more than the 1 128 000 a `dummy` cell could have spent by then"),
            "{why}"
        );
        assert_eq!(forger.implausible().as_deref(), Some(why.as_str()));
        assert_eq!(
            forger.spend().tokens,
            300,
            "the forged claim is counted nowhere"
        );
        honest.push(&line(40_000));
        assert_eq!(pool.spent().tokens, 40_300);
        assert!(budgets.blocked().is_none(), "the pool is not emptied");
        assert!(honest.implausible().is_none());
        let stopped =
            tokio::time::timeout(std::time::Duration::from_millis(50), honest.exhausted()).await;
        assert!(stopped.is_err(), "the honest cell goes on");
    }
}
