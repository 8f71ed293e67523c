"""Figures 6 and 9 (matplotlib, Agg): PNG and PDF with the same bytes for the same numbers."""

from __future__ import annotations

import io

from socialbench.moca.results import figures

METRICS = ["Lab", "Subj", "Tgt", "Mech", "Dyad", "Faith", "Holis"]
BARS = [
    {"label": "m1", "values": [10.0, 20.0, 30.0, 40.0, 5.0, None, 1.25], "lows": [5.0] * 7, "highs": [50.0] * 7},
    {"label": "m2", "values": [15.0, 25.0, 35.0, 45.0, 8.0, 30.0, 2.5]},
]
HUMAN = {"label": "people (human)", "values": [60.0, 90.0, 88.0, 70.0, 85.0, 75.0, 59.7]}
GAINS = [
    ("intent", [{"label": "m1", "values": [3.0, 18.9, 3.5], "lows": [1.0, 5.0, 0.5], "highs": [6.0, 30.0, 7.0]}]),
    ("stance", [{"label": "m1", "values": [-1.0, None, 2.0]}]),
]


def fig6(**kw):
    return figures.metric_comparison("intent", METRICS, BARS, HUMAN, n=24, **kw)


def test_a_figure_comes_as_png_and_pdf():
    out = fig6()
    assert out["png"].startswith(b"\x89PNG\r\n\x1a\n") and out["pdf"].startswith(b"%PDF-")


def test_the_same_numbers_give_the_same_bytes():
    assert fig6() == fig6()
    assert figures.gain_profiles(GAINS, ["Dyad", "Faith", "Holis"]) == figures.gain_profiles(
        GAINS, ["Dyad", "Faith", "Holis"]
    )


def test_other_numbers_give_other_bytes():
    moved = [{**BARS[0], "values": [11.0, *BARS[0]["values"][1:]]}, BARS[1]]
    assert figures.metric_comparison("intent", METRICS, moved, HUMAN, n=24)["png"] != fig6()["png"]


def test_the_files_carry_no_timestamp_or_software_version():
    from PIL import Image

    out = fig6()
    assert "Software" not in Image.open(io.BytesIO(out["png"])).info
    assert b"/CreationDate" not in out["pdf"] and b"/Producer" not in out["pdf"] and b"/Creator" not in out["pdf"]


def test_a_users_matplotlib_settings_do_not_change_the_bytes():
    import matplotlib

    before = fig6()
    with matplotlib.rc_context(
        {"lines.linewidth": 7, "font.size": 20, "axes.prop_cycle": matplotlib.cycler(color=["k"])}
    ):
        assert fig6() == before


def test_the_human_reference_is_drawn_when_there_is_one():
    without = figures.metric_comparison("intent", METRICS, BARS, None, n=24)
    assert without["png"] != fig6()["png"]


def test_a_note_is_drawn_into_the_figure():
    assert fig6(note="no human reference")["png"] != fig6()["png"]


def test_figure_data_is_long_csv_with_two_decimals_and_empty_unknowns():
    rows = [{"bar": "intent | Dyad | m1", "gain": 3.0, "low": None, "scenario": "intent"}]
    assert (
        figures.data_csv(rows, ["bar", "gain", "low", "scenario"])
        == "bar,gain,low,scenario\nintent | Dyad | m1,3.00,,intent\n"
    )


def test_another_process_draws_the_same_bytes():
    import hashlib
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import hashlib, sys; sys.path.insert(0, '.'); from tests.moca.results.test_figures import fig6;"
        " o = fig6(); print(hashlib.sha256(o['png'] + o['pdf']).hexdigest())"
    )
    repo = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo
    ).stdout.strip()

    here = fig6()
    assert out == hashlib.sha256(here["png"] + here["pdf"]).hexdigest()


def test_panels_of_groups_give_the_same_bytes_for_the_same_numbers_and_differ_from_one_panel():
    panels = [("open-weight", BARS[:1]), ("proprietary", BARS[1:])]
    drawn = figures.metric_panels("Intent (N = 24)", METRICS, panels, HUMAN)
    assert drawn == figures.metric_panels("Intent (N = 24)", METRICS, panels, HUMAN)
    assert drawn["png"] != figures.metric_panels("Intent (N = 24)", METRICS, [("all", BARS)], HUMAN)["png"]


def test_figure9_draws_the_means_it_is_given():
    metrics = ["Dyad", "Faith", "Holis"]
    given = figures.gain_profiles(GAINS, metrics, means=[[30.0, 18.9, 3.5], [-1.0, None, 2.0]])
    assert given["png"] != figures.gain_profiles(GAINS, metrics)["png"]


def test_gain_profiles_of_a_model_whose_every_gain_is_zero_or_undefined_render():
    # the real run's SmolLM2 (near chance): a zero-height view once collapsed the panels and the "n/a"
    # marks overflowed the renderer
    flat = {"label": "smollm2", "values": [0.0, None, 0.0], "lows": [0.0, None, 0.0], "highs": [0.0, None, 0.0]}
    panels = [(s, [flat]) for s in ("affection", "intent", "stance")]
    out = figures.gain_profiles(panels, ["Dyad", "Faith", "Holis"], means=[[0.0, None, 0.0]] * 3)
    assert out["png"].startswith(b"\x89PNG") and out["pdf"].startswith(b"%PDF")
