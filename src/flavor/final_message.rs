//! A participant's final message, read from its CLI's structured output on stdout (the same
//! redacted log usage is read from; docs/FLAVORS.md §1.6–§4.6): what the agent said when it
//! stopped, for the jury of a Harbor task (docs/HARBOR.md §8) beside what it changed. Pure;
//! lines that are not JSON objects are skipped, and a CLI that said nothing gives `None`.

use serde_json::Value;

/// The most of a final message the jury gets; the rest is cut with a note.
pub const MAX_BYTES: usize = 16 << 10;

/// The last thing `flavor`'s CLI said in `output` (its stdout), cut to [`MAX_BYTES`].
pub fn final_message(flavor: &str, output: &str) -> Option<String> {
    let events = output
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .filter(Value::is_object);
    let text = match flavor {
        "claude" => last(events, claude),
        "codex" => last(events, codex),
        "agy" => last(events, |e| text_of(e, "result", "response")),
        "grok" => {
            let parts: Vec<String> = events.filter_map(|e| text_of(&e, "text", "text")).collect();
            (!parts.is_empty()).then(|| parts.concat())
        }
        _ => None,
    }?;
    let text = text.trim();
    (!text.is_empty()).then(|| cut(text))
}

/// The last event `read` gives a text for.
fn last(
    events: impl Iterator<Item = Value>,
    read: impl Fn(&Value) -> Option<String>,
) -> Option<String> {
    events.filter_map(|e| read(&e)).last()
}

/// `event[field]` when `event.type` is `kind` and the field is a string.
fn text_of(event: &Value, kind: &str, field: &str) -> Option<String> {
    (event["type"] == kind).then(|| event[field].as_str().map(str::to_owned))?
}

/// claude's `result` event, or else an assistant message's text blocks.
fn claude(event: &Value) -> Option<String> {
    if let Some(result) = text_of(event, "result", "result") {
        return Some(result);
    }
    if event["type"] != "assistant" {
        return None;
    }
    let texts: Vec<&str> = event["message"]["content"]
        .as_array()?
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// codex's completed `agent_message` item.
fn codex(event: &Value) -> Option<String> {
    let item = &event["item"];
    (event["type"] == "item.completed" && item["type"] == "agent_message")
        .then(|| item["text"].as_str().map(str::to_owned))?
}

/// `text` cut at a character boundary at most [`MAX_BYTES`] long, saying so.
fn cut(text: &str) -> String {
    if text.len() <= MAX_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n\n[cut: the message is {} bytes; the first {end} are shown]",
        &text[..end],
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flavor::fixtures::{FAKE_CODEX, success};

    #[test]
    fn each_cli_s_recorded_run_gives_its_last_words() {
        assert_eq!(
            final_message("claude", success("claude")).as_deref(),
            Some("Done: out/RESULT.md written.")
        );
        assert_eq!(final_message("codex", FAKE_CODEX).as_deref(), Some("done"));
        assert_eq!(
            final_message("agy", success("agy")).as_deref(),
            Some("Wrote out/RESULT.md.")
        );
        assert_eq!(
            final_message("grok", success("grok")).as_deref(),
            Some("Wrote out/RESULT.md.")
        );
        assert!(final_message("codex", success("codex")).is_some());
    }

    #[test]
    fn no_structured_words_and_unknown_flavors_give_none() {
        assert_eq!(
            final_message("claude", "plain text\n{\"type\":\"system\"}\n"),
            None
        );
        assert_eq!(final_message("dummy", success("claude")), None);
        let blank = r#"{"type":"item.completed","item":{"type":"agent_message","text":"  "}}"#;
        assert_eq!(final_message("codex", blank), None);
    }

    #[test]
    fn a_huge_message_is_cut_at_a_character_boundary_and_says_so() {
        let long = "é".repeat(MAX_BYTES);
        let event = serde_json::json!({"type": "result", "result": long}).to_string();
        let message = final_message("claude", &event).unwrap();
        assert!(message.len() < MAX_BYTES + 100, "{}", message.len());
        assert!(message.ends_with(&format!(
            "[cut: the message is {} bytes; the first {} are shown]",
            2 * MAX_BYTES,
            MAX_BYTES
        )));
    }
}
