//! The ordering rule, checked on every replicate of a seeded simulation (docs/RANKING.md §6):
//! items listed by score; each item's group rank never falls as the score rises; a group cut
//! (`{A} > {B}`) only where every pair across it is separated; identical scores share group,
//! rank and range; a single rank only where the group is a clique of unseparated items. The
//! counts printed say how often each case arose (`cargo test -p multicooker-stats ordering --
//! --nocapture`).
//!
//! Model: rubric cooks, `value = m_item + u_judge + v`, `u ~ N(0, 10^2)`, `v ~ N(0, 6^2)`, 3 to
//! 10 judges, 4 to 6 items with means drawn uniformly in [40, 70], so gaps of every size arise;
//! every fifth cook duplicates one item's scores exactly (identical estimates). 3000 cooks: the
//! properties are checked on each, so one violation fails the test.

#![expect(clippy::print_stdout, reason = "the counts are this test's output")]

use mc_stats::{Cell, Ranking, Shape, additive_ranking, same_estimate, score_order};

use crate::coverage::Normal;

const COOKS: usize = 3000;

fn cook(normal: &mut Normal, index: usize) -> (Vec<Cell>, Shape) {
    let judges = 3 + index % 8;
    let items = 4 + index % 3;
    let means: Vec<f64> = (0..items).map(|_| 40.0 + 30.0 * normal.uniform()).collect();
    let mut cells = Vec::new();
    for judge in 0..judges {
        let u = normal.draw(10.0);
        for (item, m) in means.iter().enumerate() {
            cells.push(Cell {
                item,
                levels: vec![judge],
                covariate: 0.0,
                value: m + u + normal.draw(6.0),
            });
        }
    }
    if index.is_multiple_of(5) {
        // The last item scores exactly what the first did, judge by judge.
        let copies: Vec<Cell> = cells
            .iter()
            .filter(|c| c.item == 0)
            .map(|c| Cell {
                item: items - 1,
                ..c.clone()
            })
            .collect();
        cells.retain(|c| c.item != items - 1);
        cells.extend(copies);
    }
    let shape = Shape {
        items,
        levels: vec![judges],
        slope: false,
    };
    (cells, shape)
}

#[derive(Default)]
struct Seen {
    cooks: usize,
    groups_claimed: usize,
    no_single_rank: usize,
    identical: usize,
    chains: usize,
}

fn separated(r: &Ranking, x: usize, y: usize) -> bool {
    r.pairs
        .iter()
        .any(|p| p.separated && ((p.a, p.b) == (x, y) || (p.a, p.b) == (y, x)))
}

/// Every property of the rule on one ranking; panics with the cook's index on a violation.
fn check(r: &Ranking, index: usize, seen: &mut Seen) {
    let estimates: Vec<Option<f64>> = r.items.iter().map(|i| i.map(|i| i.estimate)).collect();
    let order = score_order(&estimates);
    let value = |i: usize| estimates[i].expect("ranked");
    let rank = |i: usize| r.ranks[i].expect("ranked");
    for w in order.windows(2) {
        assert!(value(w[0]) >= value(w[1]) || same_estimate(value(w[0]), value(w[1])));
        assert!(
            rank(w[0]).rank <= rank(w[1]).rank,
            "cook {index}: a higher score ranked worse"
        );
    }
    for &x in &order {
        let (range, v) = (rank(x), value(x));
        assert!(
            range.rank <= range.best && range.best <= range.worst,
            "cook {index}"
        );
        for &y in &order {
            if same_estimate(v, value(y)) {
                assert_eq!(range, rank(y), "cook {index}: identical scores differ");
            } else if rank(y).group != range.group {
                assert!(separated(r, x, y), "cook {index}: an untested group claim");
            }
        }
        if range.single {
            let members = order.iter().filter(|&&y| rank(y).group == range.group);
            assert!(members.clone().all(|&y| y == x || !separated(r, x, y)));
        }
    }
    let groups = r.groups.as_ref().map_or(0, Vec::len);
    seen.cooks += 1;
    seen.groups_claimed += usize::from(groups > 1);
    seen.no_single_rank += usize::from(order.iter().any(|&x| !rank(x).single));
    seen.identical += usize::from(
        order
            .windows(2)
            .any(|w| same_estimate(value(w[0]), value(w[1]))),
    );
    seen.chains += usize::from(order.iter().any(|&x| {
        let members: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&y| rank(y).group == rank(x).group)
            .collect();
        members.iter().any(|&y| separated(r, x, y))
    }));
}

#[test]
fn the_ordering_rule_holds_on_every_simulated_cook() {
    let mut normal = Normal::new(23);
    let mut seen = Seen::default();
    for index in 0..COOKS {
        let (cells, shape) = cook(&mut normal, index);
        let ranking = additive_ranking(&cells, &shape, 0.95).expect("complete design");
        check(&ranking, index, &mut seen);
    }
    println!(
        "ordering rule over {} cooks: a group claim ({{A}} > {{B}}) in {}, a group holding separated members (no single rank) in {}, identical scores in {}; violations: 0",
        seen.cooks, seen.groups_claimed, seen.no_single_rank, seen.identical
    );
    assert_eq!(seen.no_single_rank, seen.chains);
    // The simulation reaches every case it is meant to check.
    assert!(seen.groups_claimed > 0 && seen.no_single_rank > 0 && seen.identical >= COOKS / 5);
}
