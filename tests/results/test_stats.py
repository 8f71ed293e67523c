"""socialbench.results.stats: bootstrap intervals, exact McNemar, paired bootstrap, Holm (checked against
scipy and statsmodels on hand-made cases). The references are imported by the tests that use them, not at
collection: every xdist worker collects every module."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from socialbench.moca.eval.scoring import FIELDS, score_scenario
from socialbench.moca.eval.scoring import STATS as DEFS
from socialbench.results import stats


def cell(n: int, p: float = 0.6, seed: int = 0, invalid: bool = False) -> np.ndarray:
    return np.random.default_rng(seed).random((n, 5 if invalid else 4)) < p


def paired_table_arrays(both: int, a_only: int, b_only: int, neither: int) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([1] * both + [1] * a_only + [0] * b_only + [0] * neither, dtype=bool)
    b = np.array([1] * both + [0] * a_only + [1] * b_only + [0] * neither, dtype=bool)
    return a, b


# ----------------------------------------------------------------------------- bootstrap_ci


def test_points_equal_scoring_of_the_same_instances():
    m = cell(24, invalid=True, seed=4)
    rows = [({k: bool(m[i, j]) for j, k in enumerate(FIELDS)}, bool(m[i, 4])) for i in range(len(m))]
    expected = score_scenario(rows)
    ci = stats.bootstrap_ci(m, n_resamples=1000, seed=1, defs=DEFS)
    assert {k: iv.point for k, iv in ci.items()} == {
        k: v for k, v in expected.items() if k not in ("n", "media_errors")
    }


def test_dict_input_gives_the_same_result_as_the_matrix():
    m = cell(30, seed=5)
    as_dict = {k: m[:, j] for j, k in enumerate(FIELDS)}
    assert stats.bootstrap_ci(as_dict, seed=2, defs=DEFS) == stats.bootstrap_ci(m, seed=2, defs=DEFS)


def test_mean_metric_interval_matches_scipy_percentile_bootstrap():
    from scipy import stats as sps

    m = cell(400, p=0.55, seed=6)
    ours = stats.bootstrap_ci(m, n_resamples=20000, seed=7, decimals=None, defs=DEFS)["label"]
    ref = sps.bootstrap(
        (m[:, 0].astype(float),),
        lambda x, axis: 100 * np.mean(x, axis=axis),
        n_resamples=20000,
        method="percentile",
        confidence_level=0.95,
        random_state=np.random.default_rng(8),
    )
    # Monte-Carlo tolerance: the bounds' SE is ~0.05 points here, but values lie on a 0.25-point grid
    # (100/n), so two independent runs may land one grid step apart: allow two.
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.5)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.5)


def test_ratio_metric_interval_matches_scipy_paired_percentile_bootstrap():
    from scipy import stats as sps

    m = cell(80, p=0.7, seed=9)  # ~56 labels correct: a zero denominator never happens in practice
    ours = stats.bootstrap_ci(m, n_resamples=20000, seed=10, decimals=None, defs=DEFS)
    label, mech = m[:, 0].astype(float), m[:, 3].astype(float)
    ref = sps.bootstrap(
        (label, label * mech),
        lambda lab, lm, axis: 100 * lm.sum(axis=axis) / lab.sum(axis=axis),
        paired=True,
        n_resamples=20000,
        method="percentile",
        random_state=np.random.default_rng(11),
    )
    assert ours.undefined["faith"] == 0
    # Monte-Carlo tolerance: the bounds' SE is ~0.2 points; allow ~5 SE.
    assert ours["faith"].low == pytest.approx(ref.confidence_interval.low, abs=1.0)
    assert ours["faith"].high == pytest.approx(ref.confidence_interval.high, abs=1.0)


def test_zero_denominator_resamples_are_counted_and_left_out_of_the_percentiles():
    # One label correct among three: (2/3)^3 of resamples have no correct label, so Faith is NaN there.
    m = np.array([[1, 1, 1, 1], [0, 1, 0, 1], [0, 0, 1, 0]], dtype=bool)
    ci = stats.bootstrap_ci(m, n_resamples=2000, seed=12, decimals=None, defs=DEFS)
    idx = np.random.default_rng(12).integers(0, 3, size=(2000, 3))  # the documented resampling
    label, lm = m[idx, 0].sum(axis=1), (m[idx, 0] & m[idx, 3]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        faith = np.where(label > 0, 100 * lm / label, np.nan)
    assert ci.undefined["faith"] == int(np.isnan(faith).sum()) > 0
    assert (ci["faith"].low, ci["faith"].high) == tuple(np.nanpercentile(faith, [2.5, 97.5]))


def test_ratio_undefined_on_the_full_data_has_no_interval():
    m = np.array([[0, 1, 1, 1], [0, 0, 1, 1]], dtype=bool)  # no label correct
    ci = stats.bootstrap_ci(m, n_resamples=1000, seed=0, defs=DEFS)
    assert ci["faith"] == stats.Interval(None, None, None)
    assert ci.undefined["faith"] == 1000


def test_all_correct_gives_degenerate_intervals_at_100():
    ci = stats.bootstrap_ci(np.ones((12, 4), dtype=bool), n_resamples=1000, seed=0, defs=DEFS)
    assert all(iv == (100.0, 100.0, 100.0) for iv in ci.values())
    assert set(ci.undefined.values()) == {0}


def test_none_correct_gives_zero_intervals_and_undefined_ratios():
    ci = stats.bootstrap_ci(np.zeros((12, 4), dtype=bool), n_resamples=1000, seed=0, defs=DEFS)
    assert {k: iv for k, iv in ci.items() if k not in DEFS.ratios} == {
        k: (0.0, 0.0, 0.0) for k in ("label", "subject", "target", "mechanism", "dyad", "holis")
    }
    assert ci["faith"] == ci["c_sem_dyad"] == (None, None, None)


def test_single_instance_interval_collapses_to_the_point():
    ci = stats.bootstrap_ci(np.array([[1, 0, 1, 1]], dtype=bool), n_resamples=1000, seed=0, defs=DEFS)
    assert ci["label"] == (100.0, 100.0, 100.0)
    assert ci["subject"] == (0.0, 0.0, 0.0)
    assert ci["c_sem_dyad"] == (None, None, None)


def test_same_seed_gives_identical_bytes():
    m = cell(24, seed=13)
    a = json.dumps(stats.bootstrap_ci(m, seed=99, defs=DEFS).as_dict(), sort_keys=True)
    b = json.dumps(stats.bootstrap_ci(m.copy(), seed=99, defs=DEFS).as_dict(), sort_keys=True)
    assert a == b


def test_different_seed_gives_different_intervals():
    m = cell(24, seed=13)
    a = stats.bootstrap_ci(m, seed=1, decimals=None, defs=DEFS)
    b = stats.bootstrap_ci(m, seed=2, decimals=None, defs=DEFS)
    assert [a[k].point for k in a] == [b[k].point for k in b]
    assert [(a[k].low, a[k].high) for k in a] != [(b[k].low, b[k].high) for k in b]


def test_cells_use_their_own_key_derived_seed_whatever_else_is_scored():
    cells = {("m1", "direct", s): cell(24, seed=i) for i, s in enumerate(("affection", "intent", "stance"))}
    key = ("m1", "direct", "intent")
    together = stats.bootstrap_cells(cells, seed=20240611, defs=DEFS)
    alone = stats.bootstrap_cells({key: cells[key]}, seed=20240611, defs=DEFS)
    assert (
        together[key] == alone[key] == stats.bootstrap_ci(cells[key], seed=stats.cell_seed(20240611, *key), defs=DEFS)
    )


def test_cell_seed_is_stable_and_key_dependent():
    assert stats.cell_seed(1, "m", "direct", "intent") == stats.cell_seed(1, "m", "direct", "intent")
    assert stats.cell_seed(1, "m", "direct", "intent") != stats.cell_seed(1, "m", "direct", "stance")
    assert stats.cell_seed(1, "m", "direct", "intent") != stats.cell_seed(2, "m", "direct", "intent")


@pytest.mark.parametrize("bad", [np.zeros((0, 4), bool), np.zeros((5, 3), bool), np.full((4, 4), 2), {"label": [True]}])
def test_malformed_correctness_is_rejected(bad):
    with pytest.raises(ValueError):
        stats.bootstrap_ci(bad, defs=DEFS)


def test_per_instance_dyad_and_holis_follow_the_paper():
    m = np.array([[1, 1, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]], dtype=bool)
    assert stats.per_instance(m, "dyad", defs=DEFS).tolist() == [True, True, False, True]
    assert stats.per_instance(m, "holis", defs=DEFS).tolist() == [True, False, False, False]
    with pytest.raises(ValueError):
        stats.per_instance(m, "faith", defs=DEFS)


# ----------------------------------------------------------------------------- McNemar


@pytest.mark.parametrize(
    "table", [(10, 5, 1, 8), (3, 0, 7, 2), (4, 6, 6, 4), (50, 30, 12, 40), (0, 1, 0, 0), (200, 180, 220, 3)]
)
def test_mcnemar_equals_statsmodels_exact(table):
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    both, a_only, b_only, neither = table
    a, b = paired_table_arrays(*table)
    ours = stats.mcnemar_exact(a, b)
    ref = sm_mcnemar([[both, a_only], [b_only, neither]], exact=True).pvalue
    assert ours.pvalue == pytest.approx(ref, rel=1e-12, abs=1e-300)
    assert (ours.a_only, ours.b_only) == (a_only, b_only)


def test_mcnemar_without_discordant_pairs_is_one():
    a, b = paired_table_arrays(7, 0, 0, 5)
    assert stats.mcnemar_exact(a, b).pvalue == 1.0


def test_mcnemar_rejects_unpaired_inputs():
    with pytest.raises(ValueError):
        stats.mcnemar_exact(np.ones(4, bool), np.ones(5, bool))


# ----------------------------------------------------------------------------- Holm


@pytest.mark.parametrize(
    "p",
    [
        [0.01, 0.04, 0.03, 0.005],
        [0.02, 0.02, 0.02],
        [0.5, 0.9, 1.0, 0.0],
        [0.012, 0.0125, 0.0167, 0.025, 0.05],  # near the step-down thresholds
        [0.03],
        [0.049, 0.001, 0.2, 0.0249, 0.7, 0.016],
    ],
)
def test_holm_equals_statsmodels(p):
    from statsmodels.stats.multitest import multipletests

    ours = stats.holm(p, alpha=0.05)
    reject, adjusted, _, _ = multipletests(p, alpha=0.05, method="holm")
    np.testing.assert_array_equal(ours.reject, reject)
    np.testing.assert_allclose(ours.adjusted, adjusted, rtol=1e-15, atol=0)


def test_holm_adjusted_are_monotone_in_p_and_capped_at_one():
    p = np.array([0.3, 0.01, 0.2, 0.6, 0.04, 0.9])
    adj = stats.holm(p).adjusted
    order = np.argsort(p)
    assert np.all(np.diff(adj[order]) >= 0)
    assert adj.max() == 1.0 and np.all(adj >= p)


def test_holm_of_no_pvalues_is_empty():
    h = stats.holm([])
    assert h.adjusted.shape == h.reject.shape == (0,)


# ----------------------------------------------------------------------------- paired bootstrap


def test_paired_bootstrap_of_identical_systems_has_p_one():
    m = cell(24, seed=14)
    t = stats.paired_bootstrap_test(m, m, "faith", n_resamples=1000, seed=0, defs=DEFS)
    assert (t.diff, t.pvalue) == (0.0, 1.0)


def test_paired_bootstrap_pvalue_is_the_documented_shift_formula():
    a, b = cell(15, p=0.6, seed=15), cell(15, p=0.5, seed=16)
    t = stats.paired_bootstrap_test(a, b, "faith", n_resamples=1000, seed=17, decimals=None, defs=DEFS)
    idx = np.random.default_rng(17).integers(0, 15, size=(1000, 15))

    def faith(m, rows):
        label = int(m[rows, 0].sum())
        return None if label == 0 else Fraction(100 * int((m[rows, 0] & m[rows, 3]).sum()), label)

    delta = faith(a, slice(None)) - faith(b, slice(None))
    star = [(faith(a, r), faith(b, r)) for r in idx]
    defined = [x - y for x, y in star if x is not None and y is not None]
    extreme = sum(abs(d - delta) >= abs(delta) for d in defined)
    assert t.undefined == 1000 - len(defined)
    assert t.diff == pytest.approx(float(delta), abs=1e-12)
    assert t.pvalue == (1 + extreme) / (1 + len(defined))


def test_paired_bootstrap_detects_a_clearly_better_system():
    rng = np.random.default_rng(18)
    a = np.ones((60, 4), dtype=bool)
    b = a.copy()
    b[:, 3] = rng.random(60) < 0.4  # mechanism mostly wrong: Faith about 40 vs 100
    t = stats.paired_bootstrap_test(a, b, "faith", n_resamples=2000, seed=0, defs=DEFS)
    assert t.pvalue < 0.01 and t.low > 0


def test_paired_bootstrap_is_antisymmetric_in_its_systems():
    a, b = cell(24, seed=19), cell(24, seed=20)
    ab = stats.paired_bootstrap_test(a, b, "faith", seed=3, decimals=None, defs=DEFS)
    ba = stats.paired_bootstrap_test(b, a, "faith", seed=3, decimals=None, defs=DEFS)
    assert (ab.diff, ab.pvalue) == (-ba.diff, ba.pvalue)


def test_paired_bootstrap_with_undefined_observed_faith_is_none():
    a = cell(10, seed=21)
    b = a.copy()
    b[:, 0] = False
    t = stats.paired_bootstrap_test(a, b, "faith", n_resamples=1000, seed=0, defs=DEFS)
    assert (t.diff, t.low, t.high, t.pvalue) == (None, None, None, None)


def test_paired_bootstrap_same_seed_same_result():
    a, b = cell(24, seed=22), cell(24, seed=23)
    assert stats.paired_bootstrap_test(a, b, "faith", seed=5, defs=DEFS) == stats.paired_bootstrap_test(
        a, b, "faith", seed=5, defs=DEFS
    )


def test_paired_bootstrap_rejects_different_instance_counts():
    with pytest.raises(ValueError):
        stats.paired_bootstrap_test(cell(10), cell(11), "faith", defs=DEFS)


# ----------------------------------------------------------------------------- metric sets


ACCURACY = stats.MetricSet(columns=("correct",), metrics={"accuracy": ("correct", None)})


def test_a_one_column_set_gives_the_mean_and_its_interval():
    m = np.array([[True], [False], [True], [True]])
    ci = stats.bootstrap_ci(m, defs=ACCURACY, n_resamples=200, seed=0)
    assert list(ci) == ["accuracy"] and ci["accuracy"].point == 75.0


def test_a_ratio_is_undefined_when_its_denominator_count_is_zero():
    defs = stats.MetricSet(columns=("a", "b"), derived={"ab": ("a", "b")}, metrics={"r": ("ab", "a")})
    assert stats.metric_counts(np.zeros((3, 2), dtype=bool), defs=defs) == {"r": (0, 0)}
    assert defs.ratios == ("r",)


def test_a_metric_naming_an_unknown_indicator_is_refused():
    with pytest.raises(ValueError, match="metric 'm'"):
        stats.MetricSet(columns=("a",), metrics={"m": ("b", None)})


def test_resample_counts_are_the_draws_of_bootstrap_ci():
    m = np.array([[True], [False], [False], [True], [True]])
    w = stats.resample_counts(5, 100, 3)
    values = 100 * (w @ m[:, 0].astype(float)) / 5
    low, high, _ = stats.percentile_interval(values)
    ci = stats.bootstrap_ci(m, defs=ACCURACY, n_resamples=100, seed=3)
    assert (low, high) == (ci["accuracy"].low, ci["accuracy"].high)
