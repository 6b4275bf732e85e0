//! The additive model: each value is its item's effect plus one effect per nuisance factor
//! (the judge in a cook; the brief and the judge in a night), optionally plus a slope times a
//! covariate (an output's log size). Least squares, each factor's effects summing to zero, so
//! an item's effect is what the average judge (and the average brief) would give it, whoever
//! happened to score it. Solved exactly from the normal equations with the constraints as
//! Lagrange rows; a design whose items cannot all be compared gives no fit.

/// One value in an additive model.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Item index, below [`Shape::items`]; others are ignored.
    pub item: usize,
    /// The level of each nuisance factor, in the factors' order (`[judge]`, or
    /// `[brief, judge]`); the first factor is the cluster of the jackknife. A level at or
    /// above the factor's count in [`Shape::levels`] drops the cell.
    pub levels: Vec<usize>,
    /// The covariate, used only when [`Shape::slope`] is set; centre it (an item's effect is its
    /// value at covariate 0).
    pub covariate: f64,
    /// The value; must be finite.
    pub value: f64,
}

/// What a model is fitted over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Number of items.
    pub items: usize,
    /// Number of levels of each nuisance factor; its length is the number of factors.
    pub levels: Vec<usize>,
    /// Also fit one common slope on [`Cell::covariate`].
    pub slope: bool,
}

/// A fitted additive model.
#[derive(Debug, Clone, PartialEq)]
pub struct AdditiveFit {
    /// Each item's effect; `None` for an item without a value.
    pub items: Vec<Option<f64>>,
    /// Each factor's effects by level (summing to zero over the levels present); `None` for a
    /// level without a value.
    pub effects: Vec<Vec<Option<f64>>>,
    /// The slope, when asked for.
    pub slope: Option<f64>,
    /// Values used.
    pub observations: usize,
    /// Values minus free parameters: the degrees of freedom of the residual.
    pub residual_df: usize,
}

/// Least-squares fit of the additive model (see the module docs). `None` when no cell is
/// usable or the design does not identify every parameter (items or levels that share no
/// judge, brief or item with the rest, or a slope on a covariate that the other effects
/// already explain).
pub fn additive_fit(cells: &[Cell], shape: &Shape) -> Option<AdditiveFit> {
    fit_without(cells, shape, None)
}

/// [`additive_fit`] leaving out every cell whose first factor is at level `left_out`.
pub(crate) fn fit_without(
    cells: &[Cell],
    shape: &Shape,
    left_out: Option<usize>,
) -> Option<AdditiveFit> {
    let used: Vec<&Cell> = cells
        .iter()
        .filter(|c| usable(c, shape) && left_out.is_none_or(|l| c.levels.first() != Some(&l)))
        .collect();
    if used.is_empty() {
        return None;
    }
    let columns = Columns::new(&used, shape);
    let solution = columns.solve(&used)?;
    if solution.iter().any(|x| !x.is_finite()) {
        return None;
    }
    Some(columns.unpack(&solution, used.len()))
}

fn usable(cell: &Cell, shape: &Shape) -> bool {
    cell.item < shape.items
        && cell.levels.len() == shape.levels.len()
        && cell.levels.iter().zip(&shape.levels).all(|(l, n)| l < n)
        && cell.value.is_finite()
        && (!shape.slope || cell.covariate.is_finite())
}

/// The free parameters: present items, present levels of each factor, then the slope. The
/// first factor's levels (the clusters, possibly many) are eliminated before solving: each value
/// has exactly one of them, so their block of the normal equations is diagonal, and the system
/// left has one row per item, per level of the other factors, per constraint and the slope.
struct Columns {
    item_column: Vec<Option<usize>>,
    /// Columns of the kept block for factors after the first; the first factor's entry numbers
    /// its present levels instead (their own block).
    level_column: Vec<Vec<Option<usize>>>,
    slope_column: Option<usize>,
    /// Size of the kept block.
    count: usize,
    /// Present levels of the first factor.
    clusters: usize,
}

/// The normal equations with the first factor's block still separate.
struct Normal {
    /// `X_k' X_k`, kept block, row-major.
    kept: Vec<f64>,
    /// `X_k' y`.
    kept_rhs: Vec<f64>,
    /// `X_c' X_k`: one row of the kept block per cluster.
    cross: Vec<f64>,
    /// Values per cluster (the diagonal of `X_c' X_c`).
    counts: Vec<f64>,
    /// `X_c' y`.
    cluster_rhs: Vec<f64>,
}

impl Columns {
    fn new(used: &[&Cell], shape: &Shape) -> Self {
        let mut count = 0;
        let mut number = |present: Vec<bool>| -> Vec<Option<usize>> {
            present
                .into_iter()
                .map(|here| {
                    here.then(|| {
                        count += 1;
                        count - 1
                    })
                })
                .collect()
        };
        let mut item_present = vec![false; shape.items];
        let mut level_present: Vec<Vec<bool>> =
            shape.levels.iter().map(|&n| vec![false; n]).collect();
        for cell in used {
            item_present[cell.item] = true;
            for (f, &level) in cell.levels.iter().enumerate() {
                level_present[f][level] = true;
            }
        }
        let item_column = number(item_present);
        let mut level_column: Vec<Vec<Option<usize>>> = shape
            .levels
            .iter()
            .enumerate()
            .skip(1)
            .map(|(f, _)| number(level_present[f].clone()))
            .collect();
        let slope_column = shape.slope.then(|| {
            count += 1;
            count - 1
        });
        let mut clusters = 0;
        if let Some(present) = level_present.first() {
            let first: Vec<Option<usize>> = present
                .iter()
                .copied()
                .map(|here| {
                    here.then(|| {
                        clusters += 1;
                        clusters - 1
                    })
                })
                .collect();
            level_column.insert(0, first);
        }
        Self {
            item_column,
            level_column,
            slope_column,
            count,
            clusters,
        }
    }

    /// The kept block's entries of one value's row.
    fn row(&self, cell: &Cell) -> Vec<(usize, f64)> {
        let mut row = vec![(
            self.item_column[cell.item].expect("a used item has a column"),
            1.0,
        )];
        for (f, &level) in cell.levels.iter().enumerate().skip(1) {
            row.push((
                self.level_column[f][level].expect("a used level has a column"),
                1.0,
            ));
        }
        if let Some(column) = self.slope_column {
            row.push((column, cell.covariate));
        }
        row
    }

    fn cluster(&self, cell: &Cell) -> Option<usize> {
        let level = *cell.levels.first()?;
        Some(self.level_column[0][level].expect("a used level has a column"))
    }

    fn normal(&self, used: &[&Cell]) -> Normal {
        let m = self.count;
        let mut normal = Normal {
            kept: vec![0.0; m * m],
            kept_rhs: vec![0.0; m],
            cross: vec![0.0; self.clusters * m],
            counts: vec![0.0; self.clusters],
            cluster_rhs: vec![0.0; self.clusters],
        };
        for cell in used {
            let row = self.row(cell);
            for &(i, xi) in &row {
                normal.kept_rhs[i] += xi * cell.value;
                for &(j, xj) in &row {
                    normal.kept[i * m + j] += xi * xj;
                }
            }
            if let Some(c) = self.cluster(cell) {
                normal.counts[c] += 1.0;
                normal.cluster_rhs[c] += cell.value;
                for &(i, xi) in &row {
                    normal.cross[c * m + i] += xi;
                }
            }
        }
        normal
    }

    /// Solves the normal equations under one sum-to-zero row per factor. The constraints only
    /// choose among equivalent parametrizations, so their multipliers are 0 and the clusters'
    /// effects follow from the kept block: `gamma_c = (X_c'y - X_c'X_k theta) / n_c`.
    /// Returns the kept block then the clusters' effects.
    fn solve(&self, used: &[&Cell]) -> Option<Vec<f64>> {
        let m = self.count;
        let n = self.normal(used);
        let factors = self.level_column.len();
        let size = m + factors;
        let mut matrix = vec![0.0; size * size];
        let mut rhs = vec![0.0; size];
        for i in 0..m {
            rhs[i] = n.kept_rhs[i];
            for j in 0..m {
                matrix[i * size + j] = n.kept[i * m + j];
            }
        }
        // Eliminate the clusters: S = K - C' N^-1 C, b = b_k - C' N^-1 b_c.
        for c in 0..self.clusters {
            let row = &n.cross[c * m..(c + 1) * m];
            for i in 0..m {
                rhs[i] -= row[i] * n.cluster_rhs[c] / n.counts[c];
                for j in 0..m {
                    matrix[i * size + j] -= row[i] * row[j] / n.counts[c];
                }
            }
        }
        if self.clusters > 0 {
            // sum_c gamma_c = 0  <=>  sum_c (C_c theta) / n_c = sum_c b_c / n_c
            let constraint = m;
            for c in 0..self.clusters {
                for i in 0..m {
                    let weight = n.cross[c * m + i] / n.counts[c];
                    matrix[constraint * size + i] += weight;
                    matrix[i * size + constraint] += weight;
                }
                rhs[constraint] += n.cluster_rhs[c] / n.counts[c];
            }
        }
        for (f, columns) in self.level_column.iter().enumerate().skip(1) {
            let constraint = m + f;
            for &column in columns.iter().flatten() {
                matrix[constraint * size + column] = 1.0;
                matrix[column * size + constraint] = 1.0;
            }
        }
        let solution = solve_dense(matrix, rhs, size)?;
        let theta = &solution[..m];
        let mut out = theta.to_vec();
        for c in 0..self.clusters {
            let row = &n.cross[c * m..(c + 1) * m];
            let fitted: f64 = row.iter().zip(theta).map(|(x, t)| x * t).sum();
            out.push((n.cluster_rhs[c] - fitted) / n.counts[c]);
        }
        Some(out)
    }

    fn unpack(&self, solution: &[f64], observations: usize) -> AdditiveFit {
        let (kept, clusters) = solution.split_at(self.count);
        let effects: Vec<Vec<Option<f64>>> = self
            .level_column
            .iter()
            .enumerate()
            .map(|(f, columns)| {
                let source = if f == 0 { clusters } else { kept };
                columns.iter().map(|c| c.map(|c| source[c])).collect()
            })
            .collect();
        let levels: usize = self
            .level_column
            .iter()
            .map(|c| c.iter().flatten().count().saturating_sub(1))
            .sum();
        let items = self.item_column.iter().flatten().count();
        let parameters = items + levels + usize::from(self.slope_column.is_some());
        AdditiveFit {
            items: self
                .item_column
                .iter()
                .map(|c| c.map(|c| kept[c]))
                .collect(),
            effects,
            slope: self.slope_column.map(|c| kept[c]),
            observations,
            residual_df: observations.saturating_sub(parameters),
        }
    }
}

/// Gaussian elimination with partial pivoting on a row-major `size × size` matrix; `None` when
/// a pivot is negligible next to the matrix's largest entry (the system is singular).
pub(crate) fn solve_dense(mut a: Vec<f64>, mut b: Vec<f64>, size: usize) -> Option<Vec<f64>> {
    let scale = a.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if scale == 0.0 {
        return None;
    }
    for col in 0..size {
        let pivot = (col..size)
            .max_by(|&i, &j| a[i * size + col].abs().total_cmp(&a[j * size + col].abs()))
            .expect("the range is not empty");
        if a[pivot * size + col].abs() <= 1e-10 * scale {
            return None;
        }
        if pivot != col {
            for k in 0..size {
                a.swap(pivot * size + k, col * size + k);
            }
            b.swap(pivot, col);
        }
        for row in col + 1..size {
            let factor = a[row * size + col] / a[col * size + col];
            if factor != 0.0 {
                for k in col..size {
                    a[row * size + k] -= factor * a[col * size + k];
                }
                b[row] -= factor * b[col];
            }
        }
    }
    let mut x = vec![0.0; size];
    for row in (0..size).rev() {
        let tail: f64 = (row + 1..size).map(|k| a[row * size + k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row * size + row];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::{Cell, Shape, additive_fit};

    fn cell(item: usize, judge: usize, value: f64) -> Cell {
        Cell {
            item,
            levels: vec![judge],
            covariate: 0.0,
            value,
        }
    }

    const SHAPE: Shape = Shape {
        items: 3,
        levels: Vec::new(),
        slope: false,
    };

    fn judges(n: usize) -> Shape {
        Shape {
            levels: vec![n],
            ..SHAPE
        }
    }

    // Three equal items, each left out by one judge; the judges give +10, 0 and -10.
    #[test]
    fn leniency_is_absorbed_by_the_judge_effects() {
        let lenient = [10.0, 0.0, -10.0];
        let cells: Vec<Cell> = (0..3)
            .flat_map(|judge| {
                (0..3)
                    .filter(move |&item| item != judge)
                    .map(move |item| cell(item, judge, 60.0 + lenient[judge]))
            })
            .collect();
        let fit = additive_fit(&cells, &judges(3)).expect("connected design");
        for item in fit.items {
            assert!((item.expect("present") - 60.0).abs() < 1e-9);
        }
        for (effect, want) in fit.effects[0].iter().zip(lenient) {
            assert!((effect.expect("present") - want).abs() < 1e-9);
        }
        assert_eq!((fit.observations, fit.residual_df), (6, 1));
    }

    #[test]
    fn items_that_share_no_judge_give_no_fit() {
        let cells = [cell(0, 0, 50.0), cell(1, 1, 60.0)];
        assert!(additive_fit(&cells, &judges(2)).is_none());
        assert!(additive_fit(&[], &judges(2)).is_none());
    }
}
