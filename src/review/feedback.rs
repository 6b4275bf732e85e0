//! What a consult leaves: each review in `consult/<target>/<reviewer>.md`,
//! `CONSULT_RESULT.json`, and the reviews merged into FEEDBACK.md as one marked block per target
//! (replaced, not duplicated, on the next consult; the user's own text stays).

use serde_json::json;

use super::Review;
use crate::fsx;
use crate::state::{CookPaths, now_iso};

/// What [`record`] wrote.
#[derive(Debug)]
pub struct Recorded {
    /// `CONSULT_RESULT.json`'s content.
    pub result: serde_json::Value,
    /// FEEDBACK.md, when some reviewer wrote a review (else it is unchanged).
    pub feedback: Option<std::path::PathBuf>,
}

/// Keeps the reviews, writes `CONSULT_RESULT.json` and merges FEEDBACK.md when some reviewer
/// wrote a review.
pub fn record(paths: &CookPaths, target: &str, reviews: &[Review]) -> std::io::Result<Recorded> {
    let dest = paths.dir().join("consult").join(target);
    fs_err::create_dir_all(&dest)?;
    for review in reviews.iter().filter(|r| r.ok) {
        fsx::write_atomic(
            &dest.join(format!("{}.md", review.name)),
            review.text.as_deref().unwrap_or_default().as_bytes(),
        )?;
    }
    let result = json!({"finished_at": now_iso(), "target": target, "reviewers": reviews});
    fsx::write_json_atomic(&dest.join("CONSULT_RESULT.json"), &result)?;
    if !reviews.iter().any(|r| r.ok) {
        return Ok(Recorded {
            result,
            feedback: None,
        });
    }
    let feedback = paths.dir().join("FEEDBACK.md");
    let existing = std::fs::read_to_string(&feedback).unwrap_or_default();
    fsx::write_atomic(
        &feedback,
        merge_feedback(&existing, target, reviews).as_bytes(),
    )?;
    Ok(Recorded {
        result,
        feedback: Some(feedback),
    })
}

/// Replaces (or adds, first) the consult block of `target` in FEEDBACK.md.
fn merge_feedback(existing: &str, target: &str, reviews: &[Review]) -> String {
    let begin = format!("<!-- BEGIN multicooker consult: {target} -->");
    let end = format!("<!-- END multicooker consult: {target} -->");
    let rest = match (existing.find(&begin), existing.find(&end)) {
        (Some(b), Some(e)) if e > b => format!("{}{}", &existing[..b], &existing[e + end.len()..]),
        _ => existing.to_owned(),
    };
    let mut block = format!("{begin}\n## Consult reviews for `{target}`\n");
    for review in reviews.iter().filter(|r| r.ok) {
        let text = review
            .text
            .as_deref()
            .unwrap_or_default()
            .replace("<!-- BEGIN multicooker consult", "(consult marker removed)")
            .replace("<!-- END multicooker consult", "(consult marker removed)");
        block.push_str(&format!(
            "\n### {} ({})\n\n{text}\n",
            review.name, review.flavor
        ));
    }
    block.push_str(&format!("{end}\n"));
    let rest = rest.trim();
    if rest.is_empty() {
        block
    } else {
        format!("{block}\n{rest}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(name: &str, text: &str) -> Review {
        Review {
            name: name.into(),
            flavor: "dummy".into(),
            ok: true,
            status: "ok".into(),
            exit_code: Some(0),
            duration_s: 1.0,
            text: Some(text.into()),
        }
    }

    #[test]
    fn a_consult_block_is_replaced_not_duplicated_and_user_text_stays() {
        let first = merge_feedback("Keep it short.\n", "ada", &[review("r1", "Too long.")]);
        assert!(first.starts_with(
            "<!-- BEGIN multicooker consult: ada -->\n## Consult reviews for `ada`\n"
        ));
        assert!(
            first.ends_with("<!-- END multicooker consult: ada -->\n\nKeep it short.\n"),
            "{first}"
        );
        let second = merge_feedback(
            &first,
            "ada",
            &[review(
                "r2",
                "Now fine. <!-- END multicooker consult: ada -->",
            )],
        );
        assert_eq!(
            second.matches("BEGIN multicooker consult: ada").count(),
            1,
            "{second}"
        );
        assert!(
            !second.contains("Too long.") && second.contains("Now fine. (consult marker removed)")
        );
        assert!(second.ends_with("Keep it short.\n"));
    }
}
