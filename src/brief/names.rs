//! Name rules for participants and judges, and "did you mean" suggestions.
//!
//! A name becomes a folder (`work/<name>/`), a status cell and part of engine object names, so
//! it may never climb out of its folder or hide: ASCII letters, digits, `-` and `_`, starting
//! with a letter or digit. Unicode look-alikes are refused rather than normalised.

/// Longest accepted name (engine object names must stay short).
pub(crate) const MAX_NAME_LEN: usize = 40;

/// Checks a participant or judge name; on failure returns the problem and the fix.
pub fn check_actor_name(name: &str) -> Result<(), (String, &'static str)> {
    const FIX: &str = "use letters, digits, `-` and `_`, starting with a letter or digit";
    let problem = if name.is_empty() {
        "is empty".to_owned()
    } else if name.contains('/') || name.contains('\\') {
        format!(
            "may not contain `{}`",
            if name.contains('/') { '/' } else { '\\' }
        )
    } else if name.contains("..") {
        "may not contain `..`".to_owned()
    } else if name.starts_with('.') {
        "may not start with `.`".to_owned()
    } else if let Some(c) = name.chars().find(|c| !c.is_ascii()) {
        format!(
            "may not contain the non-ASCII character `{}` (U+{:04X})",
            c.escape_debug(),
            u32::from(c)
        )
    } else if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        format!("may not contain `{}`", c.escape_debug())
    } else if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        "must start with a letter or digit".to_owned()
    } else if name.len() > MAX_NAME_LEN {
        format!("is longer than {MAX_NAME_LEN} characters")
    } else {
        return Ok(());
    };
    Err((problem, FIX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::suggest;

    #[test]
    fn hostile_names_are_refused_with_the_reason() {
        let cases = [
            ("../b", "may not contain `/`"),
            ("a..b", "may not contain `..`"),
            (".hidden", "may not start with `.`"),
            ("a\0b", "may not contain `\\0`"),
            ("аlpha", "non-ASCII character `а` (U+0430)"),
            ("-x", "must start with a letter or digit"),
            ("", "is empty"),
        ];
        for (name, expected) in cases {
            let (problem, _) = check_actor_name(name).unwrap_err();
            assert!(problem.contains(expected), "{name:?}: {problem}");
        }
        assert!(check_actor_name("claude-judge_2").is_ok());
    }

    #[test]
    fn suggestions_catch_typos_only() {
        assert_eq!(suggest("claud", ["claude", "codex"]), Some("claude"));
        assert_eq!(suggest("zzz", ["claude", "codex"]), None);
    }
}
