//! The walker's messages, paths and pruning, on a small declared schema.

use serde_json::json;

use super::*;

const ITEM: &[Field] = &[
    Field::required("id", Kind::Str, "give every item an `id:`"),
    Field::new("weight", Kind::PosInt),
];
const TOP: Kind = Kind::Map(&[
    Field::required("name", Kind::Str, "add `name: <name>`"),
    Field::new("items", Kind::List(&Kind::Map(ITEM))),
    Field::new("on", Kind::Bool),
    Field::new("mem", Kind::Size),
    Field::new(
        "cpus",
        Kind::Positive {
            example: "for example `cpus: 1.5`",
        },
    ),
    Field::new(
        "repeats",
        Kind::Range {
            min: 1,
            max: 100,
            what: "a whole number from 1 to 100",
        },
    ),
    Field::new(
        "mode",
        Kind::Choice {
            noun: "mode",
            names: &["rubric", "pairwise"],
        },
    ),
    Field::new(
        "network",
        Kind::ChoiceOrMap {
            noun: "network mode",
            names: &["none", "open"],
            fields: &[Field::new("mode", Kind::Str)],
        },
    ),
    Field::new("even", Kind::Check(even)),
]);

fn even(value: &Value) -> Result<(), Wrong> {
    match value.as_u64() {
        Some(n) if n % 2 == 0 => Ok(()),
        _ => Err((format!("{} is not even", show(value)), Some("use 2".into()))),
    }
}

fn said(checked: &Checked) -> Vec<String> {
    checked
        .problems
        .iter()
        .map(|p| {
            format!(
                "{}: {} | {}",
                p.path,
                p.problem,
                p.fix.as_deref().unwrap_or("")
            )
        })
        .collect()
}

#[test]
fn a_good_document_passes_whole_and_sizes_and_numbers_are_normalized() {
    let document = json!({
        "name": "n", "items": [{"id": "a", "weight": 3}], "on": true, "mem": "1k",
        "cpus": "0.5", "repeats": 100, "mode": "pairwise", "network": {"mode": "x"}, "even": 4
    });
    let checked = check(&document, &TOP);
    assert!(checked.problems.is_empty(), "{:?}", said(&checked));
    assert_eq!(checked.value["mem"], json!(1024));
    assert_eq!(checked.value["cpus"], json!(0.5));
    assert_eq!(checked.value["items"], document["items"]);
    let word = check(&json!({"name": "n", "network": "none"}), &TOP);
    assert!(word.problems.is_empty(), "{:?}", said(&word));
}

#[test]
fn every_problem_is_reported_at_once_with_its_path_and_fix() {
    let document = json!({
        "nmae": "x", "items": [{"weight": 0, "idd": 1}, 7], "on": "yes", "mem": "lots",
        "cpus": 0, "repeats": 101, "mode": "rubrik", "network": "closed", "even": 3
    });
    let checked = check(&document, &TOP);
    assert_eq!(
        said(&checked),
        [
            "nmae: unknown field (allowed: name, items, on, mem, cpus, repeats, mode, network, even) | did you mean `name`?",
            "name: is required | add `name: <name>`",
            "items[0].idd: unknown field (allowed: id, weight) | did you mean `id`?",
            "items[0].id: is required | give every item an `id:`",
            "items[0].weight: must be a positive integer, not `0` | ",
            "items[1]: must be a mapping, not a number | ",
            "on: must be true or false, not `\"yes\"` | ",
            "mem: must be a size such as `2g`, `512m` or a byte count, not `\"lots\"` | ",
            "cpus: must be a positive number, not `0` | for example `cpus: 1.5`",
            "repeats: must be a whole number from 1 to 100, not `101` | ",
            "mode: unknown mode `rubrik` | use one of: rubric, pairwise",
            "network: unknown network mode `closed` | use one of: none, open",
            "even: `3` is not even | use 2",
        ]
    );
    // Bad values are taken out; a bad list item becomes null so later indexes stay right.
    assert_eq!(
        checked.value,
        json!({"items": [{}, null]}),
        "only the good parts remain"
    );
}

#[test]
fn empty_values_are_missing_keys_and_the_top_level_is_named() {
    let checked = check(&json!({"name": null, "on": null}), &TOP);
    assert_eq!(said(&checked), ["name: is required | add `name: <name>`"]);
    let checked = check(&json!([1]), &TOP);
    assert_eq!(
        said(&checked),
        ["(top level): must be a mapping, not a list | "]
    );
    assert_eq!(checked.value, Value::Null);
}

#[test]
fn a_checked_document_deserializes_into_typed_structs() {
    #[derive(serde::Deserialize)]
    struct Doc {
        name: Option<String>,
        items: Option<Vec<Option<Item>>>,
        mem: Option<u64>,
    }
    #[derive(serde::Deserialize)]
    struct Item {
        id: Option<String>,
        weight: Option<u64>,
    }
    let checked = check(
        &json!({"name": 5, "items": [{"id": "a", "weight": 2}, "x"], "mem": "2m"}),
        &TOP,
    );
    let doc: Doc = checked.typed().unwrap();
    assert_eq!(doc.name, None);
    assert_eq!(doc.mem, Some(2 << 20));
    let items = doc.items.unwrap();
    let first = items[0].as_ref().unwrap();
    assert_eq!((first.id.as_deref(), first.weight), (Some("a"), Some(2)));
    assert!(items[1].is_none());
}

#[test]
fn sizes_use_powers_of_1024_and_refuse_nonsense() {
    assert_eq!(parse_bytes("512m"), Some(512 << 20));
    assert_eq!(parse_bytes("1.5g"), Some(3 << 29));
    assert_eq!(parse_bytes(" 2 KB "), Some(2048));
    for bad in ["", "0", "-1m", "1x", "m", "nan"] {
        assert_eq!(parse_bytes(bad), None, "{bad}");
    }
}

#[test]
fn a_field_can_say_what_it_must_be_and_extra_keys_are_checked_too() {
    let fields = [
        Field::new("tokens", Kind::PosInt).explained(
            "a positive whole number of tokens",
            "e.g. `tokens: 2000000`",
        ),
        Field::new("usd", Kind::Number),
        Field::needed("id", Kind::Str),
        Field::new("on_exhausted", Kind::Any),
    ];
    let checked = check_fields(
        &json!({"tokens": -5, "usd": "5", "extra": 1, "on_exhausted": "finish"}),
        &fields,
    );
    assert_eq!(
        said(&checked),
        [
            "extra: unknown field (allowed: tokens, usd, id, on_exhausted) | remove `extra`",
            "tokens: must be a positive whole number of tokens, not `-5` | e.g. `tokens: 2000000`",
            "usd: must be a positive number, not `\"5\"` | ",
            "id: is required | ",
        ]
    );
    assert_eq!(checked.value, json!({"on_exhausted": "finish"}));
}

#[test]
fn problems_found_by_code_sort_into_the_order_of_the_tables() {
    let mut paths = vec![
        "even",
        "items[1].id",
        "nmae",
        "items",
        "items[0].weight",
        "on",
        "items[0].id",
        "(top level)",
        "network.mode",
        "items[0].idd",
        "name",
    ];
    paths.sort_by_key(|p| rank(&TOP, p));
    assert_eq!(
        paths,
        [
            "(top level)",
            "nmae",
            "name",
            "items",
            "items[0].idd",
            "items[0].id",
            "items[0].weight",
            "items[1].id",
            "on",
            "network.mode",
            "even",
        ]
    );
}
