//! A night's Harbor task rewards, pooled per participant across tasks, pure (docs/HARBOR.md §6).
//! Each task counts once (its repeats averaged): the estimate is the mean of the per-task mean
//! rewards, with a t interval over tasks (the trials of one task are not independent of each
//! other, tasks are). With a single task the interval is over its trials: Wilson's when every
//! reward is 0 or 1 (a pass rate), a t interval otherwise, and none at all for one trial. A trial
//! the verifier gave no reward (no reward file, a malformed one, a timeout) is counted as
//! missing, never as 0.

use serde_json::Value;

use super::store::TaskRewardRecord;
use crate::report::jury::LEVEL;

/// One trial: `(task index, participant index, reward or None when verified without one)`.
pub type Trial = (usize, usize, Option<f64>);

/// The trials of one cook's summary.json (`task_reward`), in `names` order. A cook that is no
/// Harbor task, or a participant never verified, adds nothing.
pub fn cook_trials(task: usize, summary: &Value, names: &[&str]) -> Vec<Trial> {
    let Some(rows) = summary["task_reward"]["participants"].as_array() else {
        return Vec::new();
    };
    names
        .iter()
        .enumerate()
        .filter_map(|(index, name)| {
            let row = rows.iter().find(|r| r["participant"] == *name)?;
            (row["verified"] == true).then(|| (task, index, row["reward"].as_f64()))
        })
        .collect()
}

/// One record per participant with some verified trial, in `names` order.
#[expect(
    clippy::cast_precision_loss,
    reason = "trial counts are far below 2^52"
)]
pub fn pool_rewards(names: &[&str], trials: &[Trial], tasks: usize) -> Vec<TaskRewardRecord> {
    names
        .iter()
        .enumerate()
        .filter_map(|(index, name)| {
            let mine: Vec<&Trial> = trials.iter().filter(|t| t.1 == index).collect();
            if mine.is_empty() {
                return None;
            }
            let rewards: Vec<f64> = mine.iter().filter_map(|t| t.2).collect();
            let per_task: Vec<f64> = (0..tasks)
                .filter_map(|task| {
                    let of_task: Vec<f64> = mine
                        .iter()
                        .filter(|t| t.0 == task)
                        .filter_map(|t| t.2)
                        .collect();
                    (!of_task.is_empty())
                        .then(|| of_task.iter().sum::<f64>() / of_task.len() as f64)
                })
                .collect();
            let interval = interval(&per_task, &rewards);
            Some(TaskRewardRecord {
                participant: (*name).to_owned(),
                estimate: interval.map(|i| i.0 * 100.0),
                lo: interval.and_then(|i| i.1).map(|x| x * 100.0),
                hi: interval.and_then(|i| i.2).map(|x| x * 100.0),
                passed: rewards.iter().filter(|r| **r >= 1.0).count() as u64,
                trials: rewards.len() as u64,
                missing: (mine.len() - rewards.len()) as u64,
                tasks: per_task.len(),
                method: interval.map_or("none", |i| i.3).to_owned(),
            })
        })
        .collect()
}

/// `(estimate, lo, hi, method)` in reward units, or `None` when no trial has a reward.
#[expect(
    clippy::float_cmp,
    reason = "rewards as the verifier wrote them: exactly 0 or 1 is a pass/fail task"
)]
fn interval(
    per_task: &[f64],
    rewards: &[f64],
) -> Option<(f64, Option<f64>, Option<f64>, &'static str)> {
    let (floor, ceiling) = rewards
        .iter()
        .fold((0.0_f64, 1.0_f64), |(lo, hi), r| (lo.min(*r), hi.max(*r)));
    let clamp = |x: Option<f64>| x.map(|x| x.clamp(floor, ceiling));
    match (per_task, rewards) {
        ([], _) | (_, []) => None,
        ([_], [one]) => Some((*one, None, None, "one_trial")),
        ([_], many) if many.iter().all(|r| *r == 0.0 || *r == 1.0) => {
            let passed = many.iter().filter(|r| **r == 1.0).count() as u64;
            let w = mc_stats::wilson_interval(passed, many.len() as u64, LEVEL)?;
            Some((w.estimate, Some(w.lo), Some(w.hi), "wilson"))
        }
        ([_], many) => {
            let t = mc_stats::mean_interval(many, LEVEL)?;
            Some((t.estimate, clamp(t.lo), clamp(t.hi), "trial_mean+t"))
        }
        (tasks, _) => {
            let t = mc_stats::mean_interval(tasks, LEVEL)?;
            Some((t.estimate, clamp(t.lo), clamp(t.hi), "task_mean+t"))
        }
    }
}

/// The history's and the night summary's line for `task_rewards` (their JSON form), or `None`
/// when the night ran no Harbor task: each participant's mean reward with its interval, how
/// many trials got the full reward, and how many got none at all.
pub fn text_line(rewards: &Value) -> Option<String> {
    let parts: Vec<String> = rewards
        .as_array()?
        .iter()
        .map(|r| {
            let pct = |v: &Value| v.as_f64().map(|x| format!("{x:.1}"));
            let estimate =
                pct(&r["estimate"]).map_or_else(|| "no reward".to_owned(), |e| format!("{e} %"));
            let interval = match (pct(&r["lo"]), pct(&r["hi"])) {
                (Some(lo), Some(hi)) => format!(" [{lo}, {hi}]"),
                _ if r["estimate"].is_number() => " [no interval]".to_owned(),
                _ => String::new(),
            };
            let missing = match r["missing"].as_u64() {
                Some(0) | None => String::new(),
                Some(n) => format!(", {n} without a reward"),
            };
            format!(
                "{} {estimate}{interval} ({}/{} full over {} task(s){missing})",
                r["participant"].as_str().unwrap_or("?"),
                r["passed"],
                r["trials"],
                r["tasks"]
            )
        })
        .collect();
    (!parts.is_empty()).then(|| format!("task rewards: {}", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tasks_count_once_and_a_missing_reward_is_never_0() {
        // a: task 0 twice (1 and 0 → 0.5), task 1 once (1.0), one trial without a reward.
        let trials = [
            (0, 0, Some(1.0)),
            (0, 0, Some(0.0)),
            (1, 0, Some(1.0)),
            (1, 0, None),
            (0, 1, Some(0.25)),
        ];
        let pooled = pool_rewards(&["a", "b", "c"], &trials, 2);
        assert_eq!(pooled.len(), 2, "c was never verified");
        let a = &pooled[0];
        assert!(
            (a.estimate.unwrap() - 75.0).abs() < 1e-9,
            "mean of 50 % and 100 %"
        );
        assert_eq!((a.passed, a.trials, a.missing, a.tasks), (2, 3, 1, 2));
        assert_eq!(a.method, "task_mean+t");
        assert!(a.lo.unwrap() <= 75.0 && a.hi.unwrap() >= 75.0 && a.hi.unwrap() <= 100.0);
        let b = &pooled[1];
        assert_eq!(
            (b.estimate, b.lo, b.hi, b.method.as_str()),
            (Some(25.0), None, None, "one_trial"),
            "one trial has no interval"
        );
    }

    #[test]
    fn one_task_gets_wilson_for_passes_and_t_for_partial_credit() {
        let passes = [(0, 0, Some(1.0)), (0, 0, Some(1.0)), (0, 0, Some(0.0))];
        let pooled = pool_rewards(&["a"], &passes, 1);
        let wilson = mc_stats::wilson_interval(2, 3, LEVEL).unwrap();
        assert_eq!(pooled[0].method, "wilson");
        assert!((pooled[0].lo.unwrap() - wilson.lo * 100.0).abs() < 1e-9);
        let partial = [(0, 0, Some(0.5)), (0, 0, Some(0.7))];
        let pooled = pool_rewards(&["a"], &partial, 1);
        assert_eq!(pooled[0].method, "trial_mean+t");
        assert_eq!(pooled[0].passed, 0);
        assert!(pooled[0].lo.unwrap() >= 0.0 && pooled[0].hi.unwrap() <= 100.0);
    }

    #[test]
    fn only_verified_rows_of_a_task_cook_are_trials() {
        let summary = json!({"task_reward": {"participants": [
            {"participant": "a", "reward": 1.0, "verified": true},
            {"participant": "b", "reward": null, "verified": true, "error": "no reward file"},
            {"participant": "c", "reward": null, "verified": false},
        ]}});
        assert_eq!(
            cook_trials(3, &summary, &["a", "b", "c", "d"]),
            vec![(3, 0, Some(1.0)), (3, 1, None)]
        );
        assert!(cook_trials(0, &json!({"ranking": []}), &["a"]).is_empty());
    }

    #[test]
    fn the_text_line_says_interval_full_rewards_and_missing_ones() {
        let pooled = pool_rewards(
            &["a", "b"],
            &[
                (0, 0, Some(1.0)),
                (1, 0, Some(0.0)),
                (1, 0, None),
                (0, 1, Some(0.5)),
            ],
            2,
        );
        let line = text_line(&serde_json::to_value(&pooled).unwrap()).unwrap();
        assert!(
            line.starts_with(
                "task rewards: a 50.0 % [0.0, 100.0] (1/2 full over 2 task(s), 1 without a reward)"
            ),
            "{line}"
        );
        assert!(
            line.ends_with("b 50.0 % [no interval] (0/1 full over 1 task(s))"),
            "{line}"
        );
        assert_eq!(text_line(&json!([])), None);
    }

    #[test]
    fn only_missing_rewards_give_a_record_without_an_estimate() {
        let pooled = pool_rewards(&["a"], &[(0, 0, None)], 1);
        assert_eq!(
            (
                pooled[0].estimate,
                pooled[0].missing,
                pooled[0].method.as_str()
            ),
            (None, 1, "none")
        );
    }
}
