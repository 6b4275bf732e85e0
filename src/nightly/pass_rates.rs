//! A night's hidden-test pass rates, pooled across briefs, pure. Each brief counts once (its
//! repeats' tests summed): the estimate is the mean of the per-brief pass rates, with a t
//! interval over briefs (tests of one brief are not independent of each other, briefs are), or,
//! with a single brief, that brief's Wilson interval. Unscored verifications add nothing.

use serde_json::Value;

use super::store::PassRateRecord;
use crate::report::jury::LEVEL;

/// `(brief index, participant index, passed, counted)` of one cook's summary.json.
pub fn cook_pass_counts(
    brief: usize,
    summary: &Value,
    names: &[&str],
) -> Vec<(usize, usize, u64, u64)> {
    let Some(rows) = summary["verification"]["participants"].as_array() else {
        return Vec::new();
    };
    names
        .iter()
        .enumerate()
        .filter_map(|(index, name)| {
            let row = rows.iter().find(|r| r["participant"] == *name)?;
            Some((
                brief,
                index,
                row["passed"].as_u64()?,
                row["counted"].as_u64()?,
            ))
        })
        .filter(|(_, _, _, counted)| *counted > 0)
        .collect()
}

/// One record per participant with some scored verification, in `names` order.
#[expect(clippy::cast_precision_loss, reason = "test counts are far below 2^52")]
pub fn pool_pass_rates(
    names: &[&str],
    counts: &[(usize, usize, u64, u64)],
    briefs: usize,
) -> Vec<PassRateRecord> {
    names
        .iter()
        .enumerate()
        .filter_map(|(index, name)| {
            let per_brief: Vec<(u64, u64)> = (0..briefs)
                .filter_map(|brief| {
                    let mine = counts.iter().filter(|c| c.0 == brief && c.1 == index);
                    let (passed, counted) = mine.fold((0, 0), |(p, n), c| (p + c.2, n + c.3));
                    (counted > 0).then_some((passed, counted))
                })
                .collect();
            let passed: u64 = per_brief.iter().map(|b| b.0).sum();
            let counted: u64 = per_brief.iter().map(|b| b.1).sum();
            let (estimate, lo, hi, method) = match per_brief.as_slice() {
                [] => return None,
                [(p, n)] => {
                    let w = mc_stats::wilson_interval(*p, *n, LEVEL)?;
                    (w.estimate, w.lo, w.hi, "wilson")
                }
                many => {
                    let rates: Vec<f64> = many.iter().map(|(p, n)| *p as f64 / *n as f64).collect();
                    let t = mc_stats::mean_interval(&rates, LEVEL)?;
                    let lo = t.lo.unwrap_or(t.estimate).clamp(0.0, 1.0);
                    let hi = t.hi.unwrap_or(t.estimate).clamp(0.0, 1.0);
                    (t.estimate, lo, hi, "brief_mean+t")
                }
            };
            Some(PassRateRecord {
                participant: (*name).to_owned(),
                estimate: estimate * 100.0,
                lo: lo * 100.0,
                hi: hi * 100.0,
                passed,
                counted,
                briefs: per_brief.len(),
                method: method.to_owned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn briefs_count_once_and_one_brief_gets_its_wilson_interval() {
        // a: brief 0 twice (7/10 and 9/10 → 16/20 = 0.8), brief 1 once (2/10); b: one brief.
        let counts = [(0, 0, 7, 10), (0, 0, 9, 10), (1, 0, 2, 10), (0, 1, 3, 4)];
        let pooled = pool_pass_rates(&["a", "b", "c"], &counts, 2);
        assert_eq!(pooled.len(), 2, "c has nothing scored");
        let a = &pooled[0];
        assert!((a.estimate - 50.0).abs() < 1e-9, "mean of 80 % and 20 %");
        assert_eq!(
            (a.passed, a.counted, a.briefs, a.method.as_str()),
            (18, 30, 2, "brief_mean+t")
        );
        assert!(
            a.lo.abs() < 1e-9 && (a.hi - 100.0).abs() < 1e-9,
            "two briefs this far apart say little: {a:?}"
        );
        let b = &pooled[1];
        let wilson = mc_stats::wilson_interval(3, 4, LEVEL).unwrap();
        assert!((b.lo - wilson.lo * 100.0).abs() < 1e-9 && b.method == "wilson");
    }
}
