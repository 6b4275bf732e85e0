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

use std::collections::HashMap;

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
        }
    }

    /// The spend so far.
    pub fn spend(&self) -> Spend {
        let messages: u64 = self.messages.values().map(|(tokens, _)| tokens).sum();
        Spend {
            tokens: self.reported.tokens.max(messages + self.anonymous),
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
        let Some(line) = super::usage::json_object(&String::from_utf8_lossy(bytes)) else {
            return;
        };
        let kind = line
            .get("type")
            .or_else(|| line.get("event"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        match (self.dialect, kind) {
            (Dialect::Claude, "assistant") => self.claude_message(&line),
            (Dialect::Claude, "result") => {
                if let Some(usage) = line.get("usage") {
                    self.reported = Spend {
                        tokens: sum(usage, CLAUDE_KEYS),
                        usd: cost(&line),
                    };
                }
            }
            (Dialect::Codex, "turn.completed") => {
                if let Some(usage) = line.get("usage") {
                    let total = match count(usage, "total_tokens") {
                        0 => count(usage, "input_tokens") + count(usage, "output_tokens"),
                        reported => reported,
                    };
                    self.reported.tokens += total;
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
                    self.reported.tokens += tokens;
                }
            }
            (Dialect::Grok, "end") => {
                let tokens = line.get("usage").map_or(0, |u| sum(u, GROK_KEYS));
                self.reported.tokens += tokens;
                self.reported.usd += cost(&line);
            }
            _ => {}
        }
    }

    fn claude_message(&mut self, line: &Map<String, Value>) {
        let Some(message) = line.get("message") else {
            return;
        };
        if message.get("model").and_then(Value::as_str) == Some("<synthetic>") {
            return;
        }
        let Some(usage) = message.get("usage") else {
            return;
        };
        let tokens = sum(usage, CLAUDE_KEYS);
        let output = count(usage, "output_tokens");
        match message.get("id").and_then(Value::as_str) {
            Some(id) => {
                let entry = self.messages.entry(id.to_owned()).or_insert((0, 0));
                if output >= entry.1 {
                    *entry = (tokens.max(entry.0), output);
                }
            }
            None => self.anonymous += tokens,
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
    keys.iter().map(|k| count(usage, k)).sum()
}

fn cost(line: &Map<String, Value>) -> f64 {
    line.get("total_cost_usd")
        .and_then(Value::as_f64)
        .filter(|c| c.is_finite() && *c > 0.0)
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests;
