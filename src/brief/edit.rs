//! Edits of brief.yaml that keep the file as written: its comments and layout stay (the
//! reference re-dumped the YAML and lost them). Used by `add-participant` and `chef`; the
//! caller parses the edited text before writing it.

/// Inserts `- <item>` after the last item of the top-level block list `participants:`, with
/// the list's own indentation. `None` when there is no such block list.
#[must_use]
pub fn insert_participant(text: &str, item: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let start = lines.iter().position(|l| {
        l.trim_end() == "participants:"
            || l.starts_with("participants:")
                && l["participants:".len()..].trim_start().starts_with('#')
    })?;
    let mut last_item_line = None;
    let mut indent = None;
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        let trimmed = line.trim_start();
        if trimmed.trim().is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let width = line.len() - trimmed.len();
        if width == 0 && !trimmed.starts_with('-') {
            break;
        }
        if trimmed.starts_with('-') {
            indent.get_or_insert(width);
        }
        last_item_line = Some(i);
    }
    let (last, indent) = (last_item_line?, indent?);
    let mut out: String = lines[..=last].concat();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("{}- {item}\n", " ".repeat(indent)));
    out.push_str(&lines[last + 1..].concat());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_item_goes_after_the_last_participant_and_comments_stay() {
        let text = "# my cook\nname: t\nparticipants:   # who cooks\n  - {name: a, flavor: dummy}\n  # a comment\n  - name: b\n    flavor: dummy\n\njudges: []\n";
        let edited = insert_participant(text, "{name: c, flavor: codex}").unwrap();
        assert_eq!(
            edited,
            "# my cook\nname: t\nparticipants:   # who cooks\n  - {name: a, flavor: dummy}\n  # a comment\n  - name: b\n    flavor: dummy\n  - {name: c, flavor: codex}\n\njudges: []\n"
        );
        let flush = insert_participant(
            "participants:\n- {name: a, flavor: dummy}\n",
            "{name: b, flavor: dummy}",
        )
        .unwrap();
        assert_eq!(
            flush,
            "participants:\n- {name: a, flavor: dummy}\n- {name: b, flavor: dummy}\n"
        );
        assert_eq!(
            insert_participant("participants: [{name: a, flavor: dummy}]\n", "x"),
            None
        );
    }
}
