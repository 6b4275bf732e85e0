"""Reference values for mc-stats' tests, computed without mc-stats' code.

Run: pip install numpy scipy statsmodels krippendorff && python3 crates/mc-stats/tests/reference.py
(used: Python 3, numpy 2.4.6, scipy 1.17.1, statsmodels 0.15.0, krippendorff 0.9.0). Each section prints the numbers
pasted into the Rust test named beside it (src/rng.rs, src/bootstrap.rs, tests/it/reference.rs).

Independence: the random stream is numpy's own C implementation of pcg64 (`numpy.random.PCG64`),
given the state that `rand_core::SeedableRng::seed_from_u64` derives (its small pcg32 hash is
transcribed below). Bradley-Terry is maximized by scipy's BFGS on the log-likelihood written
out directly, not by MM. Krippendorff's alpha comes from the `krippendorff` package and from
Krippendorff's 2011 paper. Binomial tails come from scipy.stats.binom. The additive model is
statsmodels' OLS with sum-to-zero (`Sum`) contrasts on the nuisance factors, refitted once per
left-out cluster for the jackknife; t quantiles and p-values come from scipy.stats.t, Holm's
correction from statsmodels' `multipletests`.
"""

import numpy as np
import krippendorff
import pandas as pd
import statsmodels.formula.api as smf
from scipy import optimize, stats
from statsmodels.stats.multitest import multipletests

MASK64 = (1 << 64) - 1
MASK128 = (1 << 128) - 1
PCG64_MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645


def seed_words(seed):
    """rand_core 0.10 `seed_from_u64`: 8 pcg32 outputs, little-endian, make the 32-byte seed."""
    state = seed
    out = b""
    for _ in range(8):
        state = (state * 0x5851F42D4C957F2D + 0xA17654E46FBE17F3) & MASK64
        xorshifted = (((state >> 18) ^ state) >> 27) & 0xFFFFFFFF
        rot = state >> 59
        x = ((xorshifted >> rot) | (xorshifted << ((32 - rot) & 31))) & 0xFFFFFFFF
        out += x.to_bytes(4, "little")
    return [int.from_bytes(out[i : i + 8], "little") for i in range(0, 32, 8)]


def pcg64(seed):
    """numpy's PCG64 set to the state rand_pcg's `Lcg128Xsl64::from_seed` starts from."""
    w = seed_words(seed)
    state = w[0] | (w[1] << 64)
    inc = (w[2] | (w[3] << 64)) | 1
    # from_state_incr: state += inc, then one LCG step; numpy steps before each output too.
    state = (((state + inc) & MASK128) * PCG64_MULTIPLIER + inc) & MASK128
    bitgen = np.random.PCG64()
    bitgen.state = {
        "bit_generator": "PCG64",
        "state": {"state": state, "inc": inc},
        "has_uint32": 0,
        "uinteger": 0,
    }
    return bitgen


class Draws:
    """Lemire's multiply-and-reject index below a bound, over numpy's raw pcg64 outputs."""

    def __init__(self, seed):
        self.bitgen = pcg64(seed)

    def below(self, bound):
        threshold = ((1 << 64) - bound) % bound
        while True:
            product = int(self.bitgen.random_raw()) * bound
            if product & MASK64 >= threshold:
                return product >> 64


def resample_weights(clusters, resamples, seed):
    draws = Draws(seed)
    for _ in range(resamples):
        weights = np.zeros(clusters)
        for _ in range(clusters):
            weights[draws.below(clusters)] += 1
        yield weights


def interval(samples, level):
    if not samples:
        return None
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(samples, [tail, 100 - tail])
    return lo, hi


def section(name):
    print(f"\n## {name}")


section("rng (src/rng.rs)")
for seed in (0, 20251122):
    bitgen = pcg64(seed)
    print(seed, [hex(int(bitgen.random_raw())) for _ in range(4)])
draws = Draws(42)
print("below(7), seed 42:", [draws.below(7) for _ in range(12)])

section("quantile (src/bootstrap.rs)")
x = [3.5, -1, 2, 10, 0.25, 7, 7, 4]
print(np.percentile(x, [0, 2.5, 50, 97.5, 100]))

section("cluster_means (tests/it/reference.rs: cluster_means_match_numpy)")
# (cluster, item, value); clusters 3, 10, 11, 20, 42; item 3 only in cluster 20; item 4 in
# clusters 3 and 11 only (so some resamples miss it); item 5 absent.
OBS = [
    (3, 0, 70.0), (3, 0, 80.0), (3, 1, 55.0), (3, 2, 90.0),
    (10, 0, 65.0), (10, 1, 60.0), (10, 1, 64.0), (10, 2, 85.0),
    (11, 0, 90.0), (11, 2, 70.0),
    (20, 0, 72.5), (20, 1, 40.0), (20, 2, 95.0), (20, 3, 10.0),
    (42, 1, 58.0), (42, 2, 88.0), (42, 2, 92.0),
    (3, 4, 20.0), (11, 4, 30.0), (11, 4, 45.0),
]
ITEMS = 6
cluster_ids = sorted({c for c, _, _ in OBS})
cell = {}
for c, i, v in OBS:
    cell.setdefault((cluster_ids.index(c), i), []).append(v)
cell = {key: np.mean(vs) for key, vs in cell.items()}


def weighted_item_mean(item, weights):
    pairs = [(weights[c], m) for (c, i), m in cell.items() if i == item and weights[c] > 0]
    if not pairs:
        return None
    w, m = np.array(pairs).T
    return float(np.sum(w * m) / np.sum(w))


samples = {i: [] for i in range(ITEMS)}
for weights in resample_weights(len(cluster_ids), 200, 7):
    for i in range(ITEMS):
        m = weighted_item_mean(i, weights)
        if m is not None:
            samples[i].append(m)
for i in range(ITEMS):
    est = weighted_item_mean(i, np.ones(len(cluster_ids)))
    n_clusters = sum(1 for (c, j) in cell if j == i)
    iv = interval(samples[i], 0.9) if n_clusters >= 2 else None
    print(i, est, iv and tuple(map(float, iv)), n_clusters, len(samples[i]))

section("bradley_terry (tests/it/reference.rs: bradley_terry_matches_scipy)")
# (cluster, a, b, score_a); item 3 appears nowhere; item 2 never loses (one tie).
CMP = [
    (0, 0, 1, 1.0), (0, 1, 0, 0.5), (0, 2, 0, 1.0), (0, 2, 1, 0.5),
    (1, 0, 1, 0.0), (1, 0, 2, 0.0), (1, 1, 2, 0.0), (1, 4, 0, 1.0),
    (2, 0, 1, 1.0), (2, 4, 1, 0.5), (2, 4, 2, 0.0), (2, 0, 4, 0.5),
    (5, 1, 0, 1.0), (5, 2, 4, 1.0),
]
BT_ITEMS = 5


def bt_scores(cmp, items):
    index, raw = bt_fit(cmp)
    theta = raw - raw.mean()  # geometric mean of the strengths becomes 1
    scores = [None] * items
    for item, k in index.items():
        p = np.exp(theta[k])
        scores[item] = 100 * p / (p + 1)
    return scores


def bt_fit(cmp):
    """The penalized maximum on the reference's scale: (item -> position, log-strengths)."""
    present = sorted({x for _, a, b, _ in cmp for x in (a, b)})
    index = {item: k for k, item in enumerate(present)}

    def negative_log_likelihood(theta):
        total = 0.0
        for _, a, b, s in cmp:
            ta, tb = theta[index[a]], theta[index[b]]
            total += s * (ta - np.logaddexp(ta, tb)) + (1 - s) * (tb - np.logaddexp(ta, tb))
        # the prior: one virtual tie per item against a reference of strength 1 (log 0).
        for t in theta:
            total += 0.5 * (t - np.logaddexp(t, 0.0)) + 0.5 * (0.0 - np.logaddexp(t, 0.0))
        return -total

    def gradient(theta):
        grad = np.zeros_like(theta)
        for _, a, b, s in cmp:
            ka, kb = index[a], index[b]
            chance_a = 1 / (1 + np.exp(theta[kb] - theta[ka]))
            grad[ka] += s - chance_a
            grad[kb] -= s - chance_a
        grad += 0.5 - 1 / (1 + np.exp(-theta))
        return -grad

    fit = optimize.minimize(
        negative_log_likelihood, np.zeros(len(present)), jac=gradient, method="BFGS",
        options={"gtol": 1e-13, "maxiter": 10000},
    )
    # the analytic gradient agrees with the likelihood; polish BFGS's optimum (which stops near
    # 1e-9 for lack of precision in its line search) by solving gradient = 0
    assert optimize.check_grad(negative_log_likelihood, gradient, fit.x + 0.1) < 1e-5
    root = optimize.root(gradient, fit.x, method="hybr", options={"xtol": 1e-15})
    assert np.max(np.abs(gradient(root.x))) < 1e-12, root  # (hybr may stop "not making progress" at 1e-16)
    assert negative_log_likelihood(root.x) <= fit.fun + 1e-12
    return index, root.x


def bt_floor_covariance(cmp):
    """Half the inverse of the penalized likelihood's Hessian at the maximum, the Hessian taken
    by central differences of the analytic gradient (not the closed form the crate uses): the
    sampling covariance of the log-strengths when every verdict merges both orders."""
    index, raw = bt_fit(cmp)
    n = len(raw)

    def gradient(theta):
        grad = np.zeros(n)
        for _, a, b, s in cmp:
            ka, kb = index[a], index[b]
            chance_a = 1 / (1 + np.exp(theta[kb] - theta[ka]))
            grad[ka] += s - chance_a
            grad[kb] -= s - chance_a
        grad += 0.5 - 1 / (1 + np.exp(-theta))
        return grad

    h = 1e-5
    hessian = np.zeros((n, n))
    for j in range(n):
        step = np.zeros(n)
        step[j] = h
        hessian[:, j] = -(gradient(raw + step) - gradient(raw - step)) / (2 * h)
    return index, 0.5 * np.linalg.inv((hessian + hessian.T) / 2)


print("full:", [None if s is None else float(s) for s in bt_scores(CMP, BT_ITEMS)])

section("bradley_terry_bootstrap (tests/it/reference.rs: bradley_terry_bootstrap_matches_scipy)")
bt_clusters = sorted({c for c, _, _, _ in CMP})
bt_samples = {i: [] for i in range(BT_ITEMS)}
for weights in resample_weights(len(bt_clusters), 100, 11):
    drawn = [row for row in CMP for _ in range(int(weights[bt_clusters.index(row[0])]))]
    for i, s in enumerate(bt_scores(drawn, BT_ITEMS)):
        if s is not None:
            bt_samples[i].append(s)
for i in range(BT_ITEMS):
    n_clusters = len({c for c, a, b, _ in CMP if i in (a, b)})
    iv = interval(bt_samples[i], 0.8) if n_clusters >= 2 else None
    print(i, iv and tuple(map(float, iv)), n_clusters, len(bt_samples[i]))

section("krippendorff (tests/it/reference.rs: krippendorff_*)")
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x
# 12 units, missing values as nan. The paper gives interval alpha 0.849.
K2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
])
print("2011 example:", krippendorff.alpha(reliability_data=K2011, level_of_measurement="interval"))
# Judges' percent scores: 3 judges (rows) x 6 participants (units), some missing.
JUDGES = np.array([
    [72.0, 55.5, np.nan, 90.0, 40.0, 63.0],
    [68.0, 60.0, 81.0, 88.0, np.nan, 70.0],
    [75.0, np.nan, 77.5, 93.0, 35.0, np.nan],
])
print("judges:", krippendorff.alpha(reliability_data=JUDGES, level_of_measurement="interval"))

section("binomial (tests/it/reference.rs: binomial_upper_tail_matches_scipy)")
for hits, n, p in [(3, 10, 0.25), (7, 10, 0.25), (1, 1, 0.5), (12, 40, 1 / 3),
                   (1200, 3000, 0.35), (1400, 3000, 0.35), (2, 4000, 0.001), (4000, 4000, 0.999),
                   (1655, 4276, 0.36891002001040685), (965, 2353, 0.74313546733235)]:
    print(hits, n, p, repr(float(stats.binom.sf(hits - 1, n, p))))

section("student_t (tests/it/reference.rs: student_t_matches_scipy)")
for p, df in [(0.975, 1), (0.975, 2), (0.975, 4), (0.9, 7), (0.8, 19), (0.999, 3)]:
    print(p, df, repr(float(stats.t.ppf(p, df))))
for t, df in [(2.0, 1), (2.0, 3), (-4.5, 9), (0.3, 2)]:
    print(t, df, repr(float(2 * stats.t.sf(abs(t), df))))


def jackknife(frame, formula, cluster, names, level=0.95):
    """statsmodels fit, then one refit per left-out cluster; se and t interval per name."""

    def estimates(data):
        fit = smf.ols(formula, data=data).fit()
        values = {}
        for name, expression in names.items():
            values[name] = expression(fit.params)
        return values, fit.df_resid

    full, df_resid = estimates(frame)
    clusters = sorted(frame[cluster].unique())
    leave = [estimates(frame[frame[cluster] != c])[0] for c in clusters]
    k = len(clusters)
    df = int(min(k - 1, round(df_resid)))
    out = {}
    for name in names:
        values = np.array([l[name] for l in leave])
        se = np.sqrt((k - 1) / k * np.sum((values - values.mean()) ** 2))
        t = stats.t.ppf(0.5 + level / 2, df)
        p = 2 * stats.t.sf(abs(full[name] / se), df)
        out[name] = (full[name], se, df, full[name] - t * se, full[name] + t * se, p)
    return out


def sum_effects(frame, formula, factor):
    """Full-fit sum-coded effects of every level (the last is minus the sum of the others). A
    level's effect has no jackknife interval: the fit without that cluster lacks it."""
    params = smf.ols(formula, data=frame).fit().params
    levels = sorted(frame[factor].unique())
    named = [float(params[f"C({factor}, Sum)[S.{level}]"]) for level in levels[:-1]]
    return named + [-sum(named)]


section("additive_ranking (tests/it/reference.rs: additive_ranking_matches_statsmodels)")
# (judge, item, value): 3 judges x 4 participants; judge 0 may not score item 0, judge 1 not
# item 1 (as under require_distinct_flavor); judge 2 is lenient.
ADD = [
    (0, 1, 61.0), (0, 2, 50.0), (0, 3, 44.0),
    (1, 0, 66.0), (1, 2, 47.5), (1, 3, 49.0),
    (2, 0, 80.0), (2, 1, 71.0), (2, 2, 63.0), (2, 3, 52.5),
]
add = pd.DataFrame(ADD, columns=["judge", "item", "value"])
formula = "value ~ 0 + C(item) + C(judge, Sum)"
names = {f"item{i}": (lambda params, i=i: params[f"C(item)[{i}]"]) for i in range(4)}
for a in range(4):
    for b in range(a + 1, 4):
        names[f"pair{a}{b}"] = lambda params, a=a, b=b: params[f"C(item)[{a}]"] - params[f"C(item)[{b}]"]
result = jackknife(add, formula, "judge", names)
print("judges", sum_effects(add, formula, "judge"))
for name, values in result.items():
    print(name, [repr(float(v)) for v in values])
pairs = [n for n in result if n.startswith("pair")]
holm = multipletests([result[n][5] for n in pairs], method="holm")[1]
print("holm", dict(zip(pairs, map(float, holm))))

section("additive_ranking, briefs and a slope (tests/it/reference.rs: additive_night_matches_statsmodels)")
# (brief, judge, item, covariate, value): 4 briefs x 2 judges x 3 participants, one cell
# missing (item 2 on brief 3), a covariate varying within items.
NIGHT = []
generator = np.random.default_rng(5)
for brief in range(4):
    for judge in range(2):
        for item in range(3):
            if item == 2 and brief == 3:
                continue
            x = float(np.round(generator.normal(0, 1), 2))
            value = float(np.round(60 - 8 * item + [5, -3, 0, -15][brief] + [4, -4][judge] + 3 * x + generator.normal(0, 3), 1))
            NIGHT.append((brief, judge, item, x, value))
print("NIGHT =", NIGHT)
night = pd.DataFrame(NIGHT, columns=["brief", "judge", "item", "x", "value"])
formula = "value ~ 0 + C(item) + C(brief, Sum) + C(judge, Sum) + x"
names = {f"item{i}": (lambda params, i=i: params[f"C(item)[{i}]"]) for i in range(3)}
names["pair02"] = lambda params: params["C(item)[0]"] - params["C(item)[2]"]
names["slope"] = lambda params: params["x"]
for name, values in jackknife(night, formula, "brief", names).items():
    print(name, [repr(float(v)) for v in values])
print("briefs", sum_effects(night, formula, "brief"))
print("judges", sum_effects(night, formula, "judge"))

section("permutation (tests/it/reference.rs: permutation_p_value_matches_numpy)")
GUESS = [0, 1, 1, 2, 0, 0, 2, 1]
TRUTH = [0, 1, 2, 2, 0, 1, 2, 0]
draws = Draws(17)
observed = sum(g == t for g, t in zip(GUESS, TRUTH))
labels = list(TRUTH)
as_many = 0
for _ in range(999):
    for i in range(len(labels) - 1, 0, -1):
        j = draws.below(i + 1)
        labels[i], labels[j] = labels[j], labels[i]
    as_many += sum(g == t for g, t in zip(GUESS, labels)) >= observed
print("p =", repr((1 + as_many) / 1000))

section("t intervals (tests/it/reference_model.rs: t_intervals_match_scipy)")
VALUES = [61.0, 55.0, 70.0, 64.0, 58.5]
m, se = np.mean(VALUES), stats.sem(VALUES)
lo, hi = stats.t.interval(0.95, len(VALUES) - 1, loc=m, scale=se)
print("mean", repr(float(m)), repr(float(se)), repr(float(lo)), repr(float(hi)))
OWN, BASE = [12.0, 9.5], [1.0, -2.0, 0.5, 2.5]
test = stats.ttest_ind(OWN, BASE, equal_var=True)
ci = test.confidence_interval(0.95)
print("difference", repr(float(np.mean(OWN) - np.mean(BASE))), repr(float(ci.low)), repr(float(ci.high)), repr(float(test.pvalue)))

section("bradley_terry_ranking (tests/it/reference_model.rs: bradley_terry_ranking_matches_scipy)")
# CMP without item 3 (never appears); jackknife over its clusters 0, 1, 2, 5 on the centred
# log-strength scale, t with k - 1 = 3 degrees of freedom; percent = 100 sigmoid.
full = bt_scores(CMP, BT_ITEMS)
logit = lambda s: None if s is None else float(np.log(s / (100 - s)))
leave = [[logit(s) for s in bt_scores([r for r in CMP if r[0] != c], BT_ITEMS)] for c in bt_clusters]
k = len(bt_clusters)
t = stats.t.ppf(0.975, k - 1)
# Fewer than 5 clusters: each standard error is floored at the verdicts' own (the model's
# covariance, halved for verdicts merged from both orders).
index, cov = bt_floor_covariance(CMP)
m = len(index)


def floor(weights):
    c = np.zeros(m)
    for item, w in weights.items():
        c[index[item]] += w
    return float(np.sqrt(c @ cov @ c))


for item in range(BT_ITEMS):
    if full[item] is None:
        continue
    values = [l[item] for l in leave]
    if any(v is None for v in values):
        print(item, "estimate", full[item], "no interval")
        continue
    values = np.array(values)
    se = np.sqrt((k - 1) / k * np.sum((values - values.mean()) ** 2))
    centred = {i: -1 / m for i in index}
    centred[item] += 1
    se = max(se, floor(centred))
    est = logit(full[item])
    print(item, [repr(float(x)) for x in (full[item], 100 / (1 + np.exp(-(est - t * se))), 100 / (1 + np.exp(-(est + t * se))))])
values = np.array([l[0] - l[2] for l in leave])
se = np.sqrt((k - 1) / k * np.sum((values - values.mean()) ** 2))
se = max(se, floor({0: 1, 2: -1}))
diff = logit(full[0]) - logit(full[2])
print("pair 0-2", repr(diff), repr(float(se)), repr(float(2 * stats.t.sf(abs(diff / se), k - 1))))

section("wilson_interval (tests/it/reference_proportions.rs: wilson_matches_statsmodels)")
from statsmodels.stats.proportion import proportion_confint
for (k, n, level) in [(7, 10, 0.95), (0, 5, 0.95), (5, 5, 0.95), (1, 1, 0.95), (37, 120, 0.90), (0, 1, 0.95)]:
    lo, hi = proportion_confint(k, n, alpha=1 - level, method="wilson")
    print(k, n, level, repr(float(lo)), repr(float(hi)))

section("rank correlation (tests/it/reference_proportions.rs: rank_correlations_match_scipy)")
JURY = [62.5, 71.0, 48.0, 80.0, 71.0, 55.5]
TESTS = [0.6, 0.9, 0.3, 0.8, 0.7, 0.7]
rho = stats.spearmanr(JURY, TESTS)
tau = stats.kendalltau(JURY, TESTS, variant="b")
print("spearman", repr(float(rho.statistic)), repr(float(rho.pvalue)))
print("kendall_b", repr(float(tau.statistic)))
