//! Recorded CLI output shared by the flavor tests.

/// A successful run of each CLI, as recorded (`tests/fixtures/flavors/<cli>/success.jsonl`).
pub(crate) fn success(cli: &str) -> &'static str {
    match cli {
        "claude" => include_str!("../../tests/fixtures/flavors/claude/success.jsonl"),
        "codex" => include_str!("../../tests/fixtures/flavors/codex/success.jsonl"),
        "agy" => include_str!("../../tests/fixtures/flavors/agy/success.jsonl"),
        _ => include_str!("../../tests/fixtures/flavors/grok/success.jsonl"),
    }
}

/// What the fake codex prints for a successful run.
pub(crate) const FAKE_CODEX: &str = concat!(
    r#"{"type":"thread.started","thread_id":"fake-thread"}"#,
    "\n",
    r#"{"type":"turn.started"}"#,
    "\n",
    r#"{"type":"item.completed","item":{"type":"agent_message","text":"done"}}"#,
    "\n",
    r#"{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":100,"output_tokens":200}}"#,
);
