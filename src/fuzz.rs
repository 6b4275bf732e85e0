//! Property tests (fuzzing with proptest) for the two parsers that read untrusted or
//! hand-written input: brief.yaml and a judge's scores.json. They run with every `cargo test`
//! (256 cases each by default; set `PROPTEST_CASES` to run longer).

use std::path::Path;

use proptest::prelude::*;

use crate::judge::scores;

/// Arbitrary JSON values, a few levels deep.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(serde_json::Value::from),
        "[A-Za-z0-9 _:./-]{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            prop::collection::btree_map("[A-Za-z_]{1,8}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// YAML documents built from brief-like keys and arbitrary values.
fn brief_like() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "name",
        "timeout_s",
        "participants",
        "judges",
        "rubric",
        "judging",
        "outputs",
        "resources",
        "network",
        "bogus",
    ]);
    prop::collection::vec((keys, json_value()), 0..8).prop_map(|pairs| {
        let map: serde_json::Map<String, serde_json::Value> =
            pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        // JSON is YAML: a structured document the checker has to walk.
        serde_json::Value::Object(map).to_string()
    })
}

proptest! {
    #[test]
    fn the_brief_parser_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = crate::brief::parse(Path::new("fuzz.yaml"), &bytes);
    }

    #[test]
    fn the_brief_parser_never_panics_on_brief_like_documents(text in brief_like()) {
        if let Err(crate::brief::BriefError::Invalid { problems, .. }) = crate::brief::parse(Path::new("fuzz.yaml"), text.as_bytes()) {
            prop_assert!(!problems.is_empty(), "an invalid brief names at least one problem");
        }
    }

    #[test]
    fn the_scores_parser_never_panics_and_keeps_only_given_labels(value in json_value(), strict in any::<bool>()) {
        let bytes = serde_json::to_vec(&value).unwrap();
        if let Ok(entries) = scores::parse(&bytes, strict) {
            let mapping = vec![("A".to_owned(), "alpha".to_owned()), ("B".to_owned(), "bravo".to_owned())];
            let result = scores::deanonymize(entries, &mapping);
            prop_assert!(result.scores.keys().all(|p| p == "alpha" || p == "bravo"));
        }
    }

    #[test]
    fn the_scores_parser_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = scores::parse(&bytes, false);
    }
}
