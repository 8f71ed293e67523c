"""The grids of Tables 5-7 (socialbench.moca.results.grids): tables of the shared model, written by its renderers."""

from socialbench.moca.results.grids import ci_grid, grid
from socialbench.results.tables import Num, to_csv, to_latex, to_markdown

COLUMNS = ["Scenario", "C_sem|dyad", "ΔDyad"]
ROWS = [
    ["intent", Num(50.0, low=40.0, high=60.0, has_ci=True, undefined=2), Num(-3.5, signed=True, mark=True)],
    ["intent", Num(None), Num(0.0, signed=True)],
]


def test_a_grid_groups_its_rows_and_writes_signed_values_with_their_marks():
    md = to_markdown(grid("t", "T: a grid", "A caption with C_sem|dyad.", COLUMNS, 1, ROWS, ["*: significant."]))
    assert md.startswith("### T: a grid\n")
    assert "| intent | 50.00 [40.00, 60.00] (2 undef.) | -3.50\\* |" in md and "| intent | – | ±0.00 |" in md
    assert "\\*: significant." in md


def test_the_latex_sets_c_sem_in_math_and_leaves_a_repeated_group_blank():
    tex = to_latex(grid("t", "T", "A caption with C_sem|dyad.", COLUMNS, 1, ROWS, []))
    assert r"$C_{\mathrm{sem}\mid\mathrm{dyad}}$" in tex and r" & -- & $\pm$0.00 \\" in tex
    assert r"\label{tab:moca-t}" in tex


def test_a_grid_without_rows_prints_its_notes_and_no_column_heads():
    md = to_markdown(grid("t", "T", "", COLUMNS, 1, [], ["No rows: none."]))
    assert md == "### T\n\nNo rows: none.\n"


def test_the_csvs_keep_bare_values_and_the_interval_in_long_format():
    assert to_csv(grid("t", "T", "", COLUMNS, 1, ROWS, [])).splitlines()[1:] == ["intent,50.00,-3.50", "intent,,0.00"]
    ci = to_csv(ci_grid("t.ci", "T", COLUMNS, 1, ROWS, []))
    assert ci.splitlines()[0] == "Scenario,column,value,low,high,undefined_resamples"
    assert ci.splitlines()[1] == "intent,C_sem|dyad,50.00,40.00,60.00,2"
    assert ci.splitlines()[3] == "intent,C_sem|dyad,,,,"
