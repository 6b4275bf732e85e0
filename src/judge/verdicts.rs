//! Reading what a judge wrote besides scores: pairwise `verdicts.json` and the blinding probe's
//! `guesses.json`, both reverse-mapped on the host with this judge's own mapping. Entries for
//! comparisons or submissions the judge was never given are rejected, never passed through.

use serde::Serialize;
use serde_json::Value;

use super::inbox::Comparison;
use super::scores::{Rejected, Unusable};

/// One pairwise verdict, de-anonymized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// The comparison id the judge saw.
    pub comparison: String,
    /// The participant shown as A.
    pub first: String,
    /// The participant shown as B.
    pub second: String,
    /// The participant preferred; `None` for a tie.
    pub winner: Option<String>,
}

/// Parses verdicts.json (`{"01": "A"}` or `{"01": {"winner": "A", …}}`; `A`, `B` or `tie`).
pub fn parse_verdicts(
    bytes: &[u8],
    comparisons: &[Comparison],
) -> Result<(Vec<Verdict>, Vec<Rejected>), Unusable> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| Unusable::InvalidJson(format!("verdicts.json is not JSON: {e}")))?;
    let Value::Object(entries) = value else {
        return Err(Unusable::MalformedSchema(
            "verdicts.json must be an object keyed by comparison id".into(),
        ));
    };
    let mut verdicts = Vec::new();
    let mut rejected = Vec::new();
    for (id, entry) in &entries {
        let Some(comparison) = comparisons.iter().find(|c| &c.id == id) else {
            rejected.push(Rejected {
                participant: format!("(comparison {id})"),
                reason: "a comparison it was never given".into(),
            });
            continue;
        };
        let word = match entry {
            Value::String(word) => Some(word.as_str()),
            Value::Object(map) => map.get("winner").and_then(Value::as_str),
            _ => None,
        };
        let winner = match word.map(|w| w.trim().to_ascii_lowercase()).as_deref() {
            Some("a") => Some(comparison.first.clone()),
            Some("b") => Some(comparison.second.clone()),
            Some("tie") => None,
            _ => {
                rejected.push(Rejected {
                    participant: format!("(comparison {id})"),
                    reason: "the winner must be \"A\", \"B\" or \"tie\"".into(),
                });
                continue;
            }
        };
        verdicts.push(Verdict {
            comparison: id.clone(),
            first: comparison.first.clone(),
            second: comparison.second.clone(),
            winner,
        });
    }
    Ok((verdicts, rejected))
}

/// One vendor guess of the blinding probe, de-anonymized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Guess {
    /// The submission folder the judge saw (`A`, or `01/A` in pairwise mode).
    pub submission: String,
    /// Who wrote it.
    pub participant: String,
    /// The vendor guessed (`unknown` when the judge declined).
    pub guess: String,
}

/// Parses guesses.json (`{"A": "claude", …}`) against the judge's mapping; entries for unknown
/// submissions and non-string guesses are dropped.
pub fn parse_guesses(bytes: &[u8], mapping: &[(String, String)]) -> Result<Vec<Guess>, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("guesses.json is not JSON: {e}"))?;
    let Value::Object(entries) = value else {
        return Err("guesses.json must be an object keyed by submission".into());
    };
    Ok(mapping
        .iter()
        .filter_map(|(label, participant)| {
            let guess = entries.get(label)?.as_str()?.trim().to_ascii_lowercase();
            Some(Guess {
                submission: label.clone(),
                participant: participant.clone(),
                guess,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparisons() -> Vec<Comparison> {
        vec![
            Comparison {
                id: "01".into(),
                first: "p".into(),
                second: "q".into(),
            },
            Comparison {
                id: "02".into(),
                first: "q".into(),
                second: "p".into(),
            },
        ]
    }

    #[test]
    fn verdicts_are_mapped_back_through_the_comparison() {
        let (verdicts, rejected) = parse_verdicts(
            br#"{"01": {"winner": "A", "reason": "x"}, "02": "tie", "03": "A", "04": 7}"#,
            &comparisons(),
        )
        .unwrap();
        assert_eq!(verdicts[0].winner.as_deref(), Some("p"));
        assert_eq!(verdicts[1].winner, None, "a tie");
        assert_eq!(
            rejected
                .iter()
                .map(|r| r.participant.as_str())
                .collect::<Vec<_>>(),
            ["(comparison 03)", "(comparison 04)"]
        );
        let (verdicts, _) = parse_verdicts(br#"{"02": " b "}"#, &comparisons()).unwrap();
        assert_eq!(verdicts[0].winner.as_deref(), Some("p"), "B of 02 is p");
        assert!(matches!(
            parse_verdicts(b"[1]", &comparisons()),
            Err(Unusable::MalformedSchema(_))
        ));
        assert!(matches!(
            parse_verdicts(b"{", &comparisons()),
            Err(Unusable::InvalidJson(_))
        ));
    }

    #[test]
    fn guesses_only_for_given_submissions() {
        let mapping = vec![("A".to_owned(), "p".to_owned()), ("B".into(), "q".into())];
        let guesses = parse_guesses(br#"{"A": "Claude", "B": 3, "C": "codex"}"#, &mapping).unwrap();
        assert_eq!(
            guesses,
            [Guess {
                submission: "A".into(),
                participant: "p".into(),
                guess: "claude".into()
            }]
        );
    }
}
