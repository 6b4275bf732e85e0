//! The store: round trips, replacement of a night stored again, migration of an old store, refusal
//! of a newer one.

use super::*;

fn night(name: &str) -> NightRecord {
    NightRecord {
        id: 0,
        config: "n".into(),
        night: name.into(),
        started_at: "t0".into(),
        finished_at: Some("t1".into()),
        status: "ok".into(),
        seed: u64::MAX,
        method: "mean+cluster_bootstrap".into(),
        comparable: true,
        reasons: Vec::new(),
        tied_groups: Some(vec![vec!["a".into()]]),
        failures: Vec::new(),
        arms: vec![ArmRecord {
            participant: "a".into(),
            flavor: "dummy".into(),
            model: None,
            models_reported: vec!["m".into()],
            cli_version: Some("1.0".into()),
            image: None,
            limits: "{}".into(),
            egress: Some("allowlist".into()),
            web_tools: false,
            backend: Some("swarm".into()),
            nodes: vec!["n1".into(), "n2".into()],
        }],
        briefs: Vec::new(),
        cells: vec![CellRecord {
            cook: "c".into(),
            brief: "b".into(),
            repeat: 1,
            participant: "a".into(),
            run_status: Some("ok".into()),
            score: Some(60.0),
            output_bytes: Some(1234),
        }],
        estimates: vec![EstimateRecord {
            participant: "a".into(),
            estimate: Some(60.0),
            lo: Some(50.0),
            hi: None,
            clusters: 2,
            scored_cells: 4,
            cells: 4,
            rank: Some(1),
            rank_worst: Some(1),
            rank_best: Some(1),
            rank_single: Some(true),
            incomplete: false,
            plain: Some(61.0),
            length_controlled: None,
        }],
        pass_rates: vec![PassRateRecord {
            participant: "a".into(),
            estimate: 75.0,
            lo: 40.0,
            hi: 93.0,
            passed: 6,
            counted: 8,
            briefs: 1,
            method: "wilson".into(),
        }],
        spend: vec![
            crate::nightly::budget::SpendRecord {
                role: "night".into(),
                arm: String::new(),
                spent: crate::flavor::meter::Spend {
                    tokens: 12_340,
                    usd: 0.25,
                },
                budget: Some(crate::brief::Budget {
                    tokens: Some(50_000),
                    usd: None,
                }),
                exhausted: 1,
            },
            crate::nightly::budget::SpendRecord {
                role: "participant".into(),
                arm: "a".into(),
                spent: crate::flavor::meter::Spend {
                    tokens: 12_340,
                    usd: 0.25,
                },
                budget: None,
                exhausted: 1,
            },
        ],
        task_rewards: vec![TaskRewardRecord {
            participant: "a".into(),
            estimate: Some(75.0),
            lo: None,
            hi: Some(98.5),
            passed: 3,
            trials: 4,
            missing: 1,
            tasks: 2,
            method: "task_mean+t".into(),
        }],
    }
}

#[test]
fn nights_round_trip_and_a_night_stored_again_replaces_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep/h.sqlite");
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.version().unwrap(), SCHEMA_VERSION);
    store.put(&night("2026-11-21")).unwrap();
    store.put(&night("2026-11-22")).unwrap();
    let mut again = night("2026-11-22");
    again.status = "partial".into();
    store.put(&again).unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    let nights = store.nights("n", None).unwrap();
    assert_eq!(nights.len(), 2);
    assert_eq!(nights[1].status, "partial");
    assert_eq!(nights[1].seed, u64::MAX);
    assert_eq!(nights[1].arms[0].models_reported, ["m"]);
    assert_eq!(nights[1].arms[0].backend.as_deref(), Some("swarm"));
    assert_eq!(nights[1].arms[0].nodes, ["n1", "n2"]);
    assert_eq!(nights[1].estimates[0].estimate, Some(60.0));
    assert_eq!(nights[1].estimates[0].rank, Some(1));
    assert_eq!(nights[1].cells[0].output_bytes, Some(1234));
    assert_eq!(
        nights[1].spend,
        night("x").spend,
        "spend against budget round-trips"
    );
    assert_eq!(
        nights[1].spend[0].describe(),
        "spent 12 340 / 50 000 tokens"
    );
    assert_eq!(
        nights[1].pass_rates,
        night("x").pass_rates,
        "pass rates round-trip"
    );
    assert_eq!(
        nights[1].task_rewards,
        night("x").task_rewards,
        "task rewards round-trip, a missing interval end as NULL"
    );
    assert_eq!(store.nights("n", Some(1)).unwrap()[0].night, "2026-11-22");
}

#[test]
fn a_version_1_store_is_migrated_and_keeps_its_nights() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    let old = Connection::open(&path).unwrap();
    old.execute_batch(MIGRATIONS[0]).unwrap();
    old.execute_batch("PRAGMA user_version = 1; INSERT INTO nights (config, night, started_at, status, seed, method, comparable, reasons) VALUES ('n', '2026-11-01', 't', 'ok', 1, 'mean+cluster_bootstrap', 1, '[]'); INSERT INTO estimates VALUES (1, 'a', 50.0, 40.0, 60.0, 2, 2, 2); INSERT INTO arms VALUES (1, 'a', 'dummy', NULL, '[]', NULL, NULL, '{}', NULL, 0);").unwrap();
    drop(old);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.version().unwrap(), SCHEMA_VERSION);
    let nights = store.nights("n", None).unwrap();
    let estimate = &nights[0].estimates[0];
    assert_eq!(
        (estimate.estimate, estimate.rank, estimate.incomplete),
        (Some(50.0), None, false)
    );
    assert!(
        nights[0].failures.is_empty(),
        "an old night has none recorded"
    );
    let arm = &nights[0].arms[0];
    assert_eq!((arm.backend.as_deref(), arm.nodes.len()), (None, 0));
}

#[test]
fn a_failed_night_keeps_its_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("h.sqlite")).unwrap();
    let mut failed = night("2026-11-21");
    failed.status = "failed".into();
    failed.failures = vec!["cook `c1`: lint refused the cook".into()];
    store.put(&failed).unwrap();
    let nights = store.nights("n", None).unwrap();
    assert_eq!(nights[0].failures, ["cook `c1`: lint refused the cook"]);
}

#[test]
fn a_store_from_a_newer_multicooker_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99")
        .unwrap();
    let error = Store::open(&path).err().unwrap();
    assert!(
        matches!(error, StoreError::TooNew { found: 99, .. }),
        "{error}"
    );
    let version: i64 = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 99);
}
