"""The grids of Tables 5-7 (socialbench.moca.results.grids) in the shared table model."""

from socialbench.moca.results.grids import Grid, grid_ci_csv, grid_csv, grid_latex, grid_markdown
from socialbench.results.tables import Num


def grid() -> Grid:
    g = Grid("t", "### T: a grid", "A caption with C_sem|dyad.", ["Scenario", "C_sem|dyad", "ΔDyad"], 1)
    g.rows.append(
        ["intent", Num(50.0, low=40.0, high=60.0, has_ci=True, undefined=2), Num(-3.5, signed=True, mark=True)]
    )
    g.rows.append(["intent", Num(None), Num(0.0, signed=True)])
    g.notes.append("*: significant.")
    return g


def test_a_grid_groups_its_rows_and_writes_signed_values_with_their_marks():
    md = grid_markdown(grid())
    assert "| intent | 50.00 [40.00, 60.00] (2 undef.) | -3.50\\* |" in md and "| intent | – | ±0.00 |" in md
    assert "\\*: significant." in md


def test_the_latex_sets_c_sem_in_math_and_leaves_a_repeated_group_blank():
    tex = grid_latex(grid())
    assert r"$C_{\mathrm{sem}\mid\mathrm{dyad}}$" in tex and r" & -- & $\pm$0.00 \\" in tex


def test_the_csvs_keep_bare_values_and_the_interval_in_long_format():
    assert grid_csv(grid()).splitlines()[1:] == ["intent,50.00,-3.50", "intent,,0.00"]
    assert grid_ci_csv(grid()).splitlines()[1] == "intent,C_sem|dyad,50.00,40.00,60.00,2"
