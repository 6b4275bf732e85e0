//! The dummy's spend: claude-style usage lines on stdout, as the real CLIs report theirs while
//! they run, so budgets are enforced on the dummy by the same live meter as on any CLI.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Messages printed so far (each gets its own id, as claude's do).
static MESSAGES: AtomicU64 = AtomicU64::new(0);
/// Tokens reported so far.
static TOKENS: AtomicU64 = AtomicU64::new(0);
/// Cost reported so far, in micro-dollars.
static MICRO_USD: AtomicU64 = AtomicU64::new(0);

/// Prints one assistant message using `tokens` tokens; with a cost, also a result line with
/// the running totals (claude reports its cost there).
pub fn report(tokens: u64, usd: f64) {
    let k = MESSAGES.fetch_add(1, Ordering::SeqCst) + 1;
    let total = TOKENS.fetch_add(tokens, Ordering::SeqCst) + tokens;
    let mut lines = format!(
        "{{\"type\":\"assistant\",\"message\":{{\"id\":\"dummy-msg-{k}\",\"model\":\"dummy\",\"usage\":{{\"input_tokens\":{tokens},\"output_tokens\":0}}}}}}\n"
    );
    if usd > 0.0 {
        // Whole micro-dollars: the script's amounts are small and finite.
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a finite, non-negative amount of dollars in micro-dollars"
        )]
        let micro = (usd * 1e6).round() as u64;
        let spent = MICRO_USD.fetch_add(micro, Ordering::SeqCst) + micro;
        #[expect(clippy::cast_precision_loss, reason = "micro-dollars of a test script")]
        let dollars = spent as f64 / 1e6;
        lines.push_str(&format!(
            "{{\"type\":\"result\",\"subtype\":\"success\",\"total_cost_usd\":{dollars},\"usage\":{{\"input_tokens\":{total},\"output_tokens\":0}}}}\n"
        ));
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(lines.as_bytes());
    let _ = out.flush();
}

/// Reports `tokens` (and `usd`) every `every` seconds, forever: only a budget or the timeout
/// ends it.
pub fn burn(tokens: u64, usd: f64, every: f64) -> ! {
    loop {
        report(tokens, usd);
        std::thread::sleep(Duration::from_secs_f64(every));
    }
}
