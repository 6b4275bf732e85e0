//! Live spend: tokens and (where the CLI reports it) USD, read from each CLI's structured
//! stdout line by line as the cell runs, so a budget can stop a cell while it spends. The
//! after-the-fact parser (`usage.rs`) stays the record of detail; this one keeps only the two
//! figures a budget compares, counted the same way (`total_tokens` of the usage dict).
//!
//! Which lines carry spend, per flavor:
//! - claude, triad (claude leads) and the dummy (which prints claude's lines): each assistant
//!   message's usage as it arrives (a message spans several lines repeating its usage: counted
//!   once, its largest output wins); the final `result` line's totals and `total_cost_usd`;
//! - codex: each `turn.completed.usage` (input + output, as codex's own total counts);
//! - agy: the `result` line (its only usage report, at the end);
//! - grok: the `end` event (its only usage report, at the end), with `total_cost_usd`.
//!
//! Custom flavors report nothing multicooker can read: no budget can be enforced on them.
//!
//! A claim is bounded (docs/FLAVORS.md §8 item 9): a line may add at most what one model turn of
//! its flavor can cost ([`turn_ceiling`]: the largest context window plus the largest output),
//! and a line that totals many turns (claude's `result`, codex's `turn.completed`, agy's
//! `result`, grok's `end`) at most that per second the cell has run. A line that claims more is
//! not counted: the meter records it as [`Implausible`] and reads nothing more, so one cell's
//! forged line can neither empty a shared pool nor hide later spend.

use std::collections::HashMap;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

/// Longest stdout line the meter reads; a longer one is skipped (it carries tool output, not
/// usage).
const MAX_LINE_BYTES: usize = 4 << 20;

/// Tokens and USD spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Spend {
    /// Tokens, counted as the usage dict's `total_tokens`.
    pub tokens: u64,
    /// USD as the CLI reported it (0 when it reports none).
    pub usd: f64,
}

impl Spend {
    /// The sum of two spends.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            tokens: self.tokens.saturating_add(other.tokens),
            usd: self.usd + other.usd,
        }
    }

    /// What `self` adds over `earlier` (never negative).
    #[must_use]
    pub fn since(self, earlier: Self) -> Self {
        Self {
            tokens: self.tokens.saturating_sub(earlier.tokens),
            usd: (self.usd - earlier.usd).max(0.0),
        }
    }
}

/// What a flavor's output tells: tokens, and whether it reports a cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reports {
    /// Token counts.
    pub tokens: bool,
    /// A USD cost.
    pub usd: bool,
}

/// What the flavor's structured output reports (custom flavors: nothing).
pub fn reports(flavor: &str) -> Reports {
    match flavor {
        "claude" | "triad" | "grok" | "dummy" => Reports {
            tokens: true,
            usd: true,
        },
        "codex" | "agy" => Reports {
            tokens: true,
            usd: false,
        },
        _ => Reports {
            tokens: false,
            usd: false,
        },
    }
}

/// True for a flavor whose usage arrives only once its turn is over (codex's `turn.completed`,
/// and `codex exec` runs one turn; agy's `result`; grok's `end`): a cap cannot stop it while it
/// works, only record that it finished over (docs/FLAVORS.md §8).
pub fn reports_at_turn_end(flavor: &str) -> bool {
    matches!(flavor, "codex" | "agy" | "grok")
}

/// The most one model turn of a flavor can cost: its largest context window read in full plus
/// its largest output, at the highest list price of its models (docs/FLAVORS.md §8 item 9).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    /// Tokens of one turn.
    pub tokens: u64,
    /// USD of one turn (for flavors that report a cost).
    pub usd: f64,
}

/// What one model turn of `flavor` can cost at most; `None` for flavors the meter cannot read.
pub fn turn_ceiling(flavor: &str) -> Option<Ceiling> {
    let (tokens, usd) = match flavor {
        // 1 M context + 128 K output; at most $30 a turn (1 M cache writes at $18.75 / M plus
        // 128 K output at $75 / M, the dearest list prices).
        "claude" | "triad" | "dummy" => (1_128_000, 30.0),
        // 400 K context, output included.
        "codex" => (400_000, 0.0),
        // 1 M (1 048 576) input + 64 K output.
        "agy" => (1_114_112, 0.0),
        // 2 M context + 128 K output; at most $15 a turn.
        "grok" => (2_228_224, 15.0),
        _ => return None,
    };
    Some(Ceiling { tokens, usd })
}

/// A line whose claim no turn of its flavor could cost: not counted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Implausible {
    /// What the line would have added.
    pub claimed: Spend,
    /// The most it could have added.
    pub allowed: Spend,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Claude,
    Codex,
    Agy,
    Grok,
    Silent,
}

/// Reads one cell's stdout as it streams and keeps its running spend.
#[derive(Debug)]
pub struct Meter {
    dialect: Dialect,
    partial: Vec<u8>,
    skipping: bool,
    /// claude: tokens per message id (its largest-output record), and anonymous messages.
    messages: HashMap<String, (u64, u64)>,
    anonymous: u64,
    /// The last `result`/`end` totals (claude, grok, agy) or the turn sum (codex).
    reported: Spend,
    ceiling: Option<Ceiling>,
    started: Instant,
    implausible: Option<Implausible>,
}

/// How to take back a line's effect.
struct Undo {
    reported: Spend,
    anonymous: u64,
    message: Option<(String, Option<(u64, u64)>)>,
}

impl Meter {
    /// A meter for one cell of `flavor`.
    pub fn new(flavor: &str) -> Self {
        let dialect = match flavor {
            "claude" | "triad" | "dummy" => Dialect::Claude,
            "codex" => Dialect::Codex,
            "agy" => Dialect::Agy,
            "grok" => Dialect::Grok,
            _ => Dialect::Silent,
        };
        Self {
            dialect,
            partial: Vec::new(),
            skipping: false,
            messages: HashMap::new(),
            anonymous: 0,
            reported: Spend::default(),
            ceiling: turn_ceiling(flavor),
            started: Instant::now(),
            implausible: None,
        }
    }

    /// The first line that claimed more than its flavor's turns could cost, if any.
    pub fn implausible(&self) -> Option<Implausible> {
        self.implausible
    }

    /// The spend so far.
    pub fn spend(&self) -> Spend {
        let messages = self
            .messages
            .values()
            .fold(self.anonymous, |all, (tokens, _)| {
                all.saturating_add(*tokens)
            });
        Spend {
            tokens: self.reported.tokens.max(messages),
            usd: self.reported.usd,
        }
    }

    /// Feeds a chunk of stdout; returns true when the spend changed.
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        if self.dialect == Dialect::Silent {
            return false;
        }
        let before = self.spend();
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            self.extend(&rest[..end]);
            let line = std::mem::take(&mut self.partial);
            if !std::mem::take(&mut self.skipping) {
                self.line(&line);
            }
            rest = &rest[end + 1..];
        }
        self.extend(rest);
        self.spend() != before
    }

    /// Reads what is left without a final newline; returns true when the spend changed.
    pub fn finish(&mut self) -> bool {
        let before = self.spend();
        let line = std::mem::take(&mut self.partial);
        if !std::mem::take(&mut self.skipping) {
            self.line(&line);
        }
        self.spend() != before
    }

    fn extend(&mut self, bytes: &[u8]) {
        if self.skipping {
            return;
        }
        if self.partial.len() + bytes.len() > MAX_LINE_BYTES {
            self.partial.clear();
            self.skipping = true;
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }

    fn line(&mut self, bytes: &[u8]) {
        if self.implausible.is_some() {
            return;
        }
        let Some(line) = super::usage::json_object(&String::from_utf8_lossy(bytes)) else {
            return;
        };
        let kind = line
            .get("type")
            .or_else(|| line.get("event"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let before = self.spend();
        let mut undo = Undo {
            reported: self.reported,
            anonymous: self.anonymous,
            message: None,
        };
        // One model call per claude message; every other metered line totals many.
        let per_turn = (self.dialect, kind) == (Dialect::Claude, "assistant");
        self.read(&line, kind, &mut undo);
        let claimed = self.spend().since(before);
        if let Some(allowed) = self.allowed(per_turn)
            && (claimed.tokens > allowed.tokens || claimed.usd > allowed.usd)
        {
            self.take_back(undo);
            self.implausible = Some(Implausible { claimed, allowed });
        }
    }

    /// The most one line may add: one turn, or one turn per second run for a line of totals.
    fn allowed(&self, per_turn: bool) -> Option<Spend> {
        let ceiling = self.ceiling?;
        let turns = if per_turn {
            1
        } else {
            1 + self.started.elapsed().as_secs()
        };
        #[expect(clippy::cast_precision_loss, reason = "seconds a cell has run")]
        let usd = ceiling.usd * turns as f64;
        Some(Spend {
            tokens: ceiling.tokens.saturating_mul(turns),
            usd,
        })
    }

    fn take_back(&mut self, undo: Undo) {
        self.reported = undo.reported;
        self.anonymous = undo.anonymous;
        match undo.message {
            Some((id, Some(old))) => {
                self.messages.insert(id, old);
            }
            Some((id, None)) => {
                self.messages.remove(&id);
            }
            None => {}
        }
    }

    fn read(&mut self, line: &Map<String, Value>, kind: &str, undo: &mut Undo) {
        match (self.dialect, kind) {
            (Dialect::Claude, "assistant") => undo.message = self.claude_message(line),
            (Dialect::Claude, "result") => {
                if let Some(usage) = line.get("usage") {
                    self.reported = Spend {
                        tokens: sum(usage, CLAUDE_KEYS),
                        usd: cost(line),
                    };
                }
            }
            (Dialect::Codex, "turn.completed") => {
                if let Some(usage) = line.get("usage") {
                    let total = match count(usage, "total_tokens") {
                        0 => count(usage, "input_tokens")
                            .saturating_add(count(usage, "output_tokens")),
                        reported => reported,
                    };
                    self.reported.tokens = self.reported.tokens.saturating_add(total);
                }
            }
            (Dialect::Agy, "result") => {
                let body = line.get("result").filter(|r| r.is_object());
                let usage = line
                    .get("usage")
                    .or_else(|| body.and_then(|b| b.get("usage")));
                if let Some(usage) = usage {
                    let tokens = match count(usage, "total_tokens") {
                        0 => sum(usage, AGY_KEYS),
                        reported => reported,
                    };
                    self.reported.tokens = self.reported.tokens.saturating_add(tokens);
                }
            }
            (Dialect::Grok, "end") => {
                let tokens = line.get("usage").map_or(0, |u| sum(u, GROK_KEYS));
                self.reported.tokens = self.reported.tokens.saturating_add(tokens);
                self.reported.usd += cost(line);
            }
            _ => {}
        }
    }

    /// Counts an assistant message; returns the message's earlier record, to take it back.
    fn claude_message(
        &mut self,
        line: &Map<String, Value>,
    ) -> Option<(String, Option<(u64, u64)>)> {
        let message = line.get("message")?;
        if message.get("model").and_then(Value::as_str) == Some("<synthetic>") {
            return None;
        }
        let usage = message.get("usage")?;
        let tokens = sum(usage, CLAUDE_KEYS);
        let output = count(usage, "output_tokens");
        if let Some(id) = message.get("id").and_then(Value::as_str) {
            let old = self.messages.get(id).copied();
            let entry = self.messages.entry(id.to_owned()).or_insert((0, 0));
            if output >= entry.1 {
                *entry = (tokens.max(entry.0), output);
            }
            Some((id.to_owned(), old))
        } else {
            self.anonymous = self.anonymous.saturating_add(tokens);
            None
        }
    }
}

const CLAUDE_KEYS: &[&str] = &[
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
];
const AGY_KEYS: &[&str] = &[
    "input_tokens",
    "output_tokens",
    "thinking_tokens",
    "cache_read_tokens",
];
const GROK_KEYS: &[&str] = &[
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "reasoning_tokens",
];

fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn sum(usage: &Value, keys: &[&str]) -> u64 {
    keys.iter()
        .map(|k| count(usage, k))
        .fold(0, u64::saturating_add)
}

fn cost(line: &Map<String, Value>) -> f64 {
    line.get("total_cost_usd")
        .and_then(Value::as_f64)
        .filter(|c| c.is_finite() && *c > 0.0)
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests;
