//! Groups of items that the intervals cannot tell apart, best group first.

use crate::Interval;

/// Splits items into tied groups: sorted by estimate, best first (equal estimates in item order),
/// the best remaining item leads a group made of every remaining item whose interval reaches the
/// leader's (`hi >= leader.lo`); repeat until none remain.
///
/// Each group lists its items best first; together the groups hold each input pair once. An
/// item may join the leader's group while a better one does not, when its interval is wider.
/// `None` when any interval lacks `lo` or `hi`; no input gives no group.
pub fn tied_groups(intervals: &[(usize, Interval)]) -> Option<Vec<Vec<usize>>> {
    let mut remaining: Vec<Entry> = intervals
        .iter()
        .map(|&(item, interval)| {
            Some(Entry {
                item,
                estimate: interval.estimate,
                lo: interval.lo?,
                hi: interval.hi?,
            })
        })
        .collect::<Option<_>>()?;
    remaining.sort_by(|x, y| y.estimate.total_cmp(&x.estimate).then(x.item.cmp(&y.item)));
    let mut groups = Vec::new();
    while !remaining.is_empty() {
        let leader = remaining.remove(0);
        let mut group = vec![leader.item];
        // `retain` visits in order, so the group stays best first.
        remaining.retain(|entry| {
            let tied = entry.hi >= leader.lo;
            if tied {
                group.push(entry.item);
            }
            !tied
        });
        groups.push(group);
    }
    Some(groups)
}

#[derive(Clone, Copy)]
struct Entry {
    item: usize,
    estimate: f64,
    lo: f64,
    hi: f64,
}

#[cfg(test)]
mod tests {
    use super::tied_groups;
    use crate::Interval;

    fn interval(estimate: f64, lo: f64, hi: f64) -> Interval {
        Interval {
            estimate,
            lo: Some(lo),
            hi: Some(hi),
            clusters: 3,
        }
    }

    #[test]
    fn overlapping_intervals_share_a_group_and_the_rest_start_the_next() {
        let input = [
            (0, interval(60.0, 50.0, 70.0)),
            (1, interval(80.0, 72.0, 88.0)),
            (2, interval(75.0, 65.0, 85.0)),
            (3, interval(40.0, 30.0, 75.0)),
            (4, interval(20.0, 10.0, 30.0)),
        ];
        let got = tied_groups(&input).expect("every interval has ends");
        assert_eq!(got, vec![vec![1, 2, 3], vec![0], vec![4]]);
    }

    #[test]
    fn equal_estimates_keep_item_order() {
        let input = [
            (5, interval(50.0, 49.0, 51.0)),
            (2, interval(50.0, 49.0, 51.0)),
        ];
        assert_eq!(tied_groups(&input), Some(vec![vec![2, 5]]));
    }

    #[test]
    fn a_missing_end_gives_none_and_no_input_gives_no_group() {
        let open = Interval {
            estimate: 1.0,
            lo: None,
            hi: None,
            clusters: 1,
        };
        assert_eq!(
            tied_groups(&[(0, interval(1.0, 0.0, 2.0)), (1, open)]),
            None
        );
        assert_eq!(tied_groups(&[]), Some(vec![]));
    }
}
