"""socialbench.results.tables: the one table model and its Markdown, CSV and LaTeX renderings."""

import pytest

from socialbench.results.tables import (
    Block,
    Row,
    Table,
    Text,
    grouped,
    md_escape,
    tex_escape,
    to_csv,
    to_latex,
    to_markdown,
)


def test_tex_escape_escapes_every_special_character_once():
    assert tex_escape(r"a&b%c$d#e_f{g}h~i^j\k") == (
        r"a\&b\%c\$d\#e\_f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
    )


def test_tex_escape_sets_the_tables_symbols_in_math_mode():
    assert tex_escape("±1 Δ ↑ ↓") == r"$\pm$1 $\Delta$ $\uparrow$ $\downarrow$"


def test_md_escape_keeps_a_cell_in_its_column_and_row():
    assert md_escape("R&D | lab\nnext \\") == "R&D \\| lab next \\\\"


def small(**kw) -> Table:
    block = Block(["Group", "Name", "Value"], grouped([["a", "x", "1.00"], ["a", "y", "2.00"], ["b", "z", "3.00"]]), 2)
    return Table("Title", [block], caption="A caption", label="tab:t", notes=["n1"], **kw)


def test_markdown_compact_puts_the_notes_under_the_grid():
    assert to_markdown(small()) == (
        "### Title\n\n| Group | Name | Value |\n|---|---|---:|\n"
        "| a | x | 1.00 |\n| a | y | 2.00 |\n| b | z | 3.00 |\n\nn1\n"
    )


def test_markdown_sections_make_each_note_a_paragraph():
    md = to_markdown(small(layout="sections", level=1))
    assert md.startswith("# Title\n") and md.endswith("| b | z | 3.00 |\n\nNote: n1\n")


def test_latex_blanks_a_repeated_group_and_rules_a_new_one():
    tex = to_latex(small())
    assert "a & x & 1.00 \\\\\n & y & 2.00 \\\\\n\\midrule\nb & z & 3.00 \\\\" in tex
    assert "\\caption{A caption}\n\\label{tab:t}\n\\begin{tabular}{llr}" in tex
    assert "\\par\\smallskip{\\footnotesize n1}" in tex


def test_csv_writes_each_cells_csv_value():
    t = Table("T", [Block([Text("Name", csv="name"), "v"], [Row(["x", Text("–", csv="")])])])
    assert to_csv(t) == "name,v\nx,\n"


def test_a_table_may_carry_its_own_long_csv():
    t = Table("T", [], csv=(["a", "b"], [[1, 2]]))
    assert to_csv(t) == "a,b\n1,2\n"


def test_a_format_override_is_written_as_given():
    t = Table("T", [Block(["h"], [Row([Text("5*", md="5\\*", tex="5$^{*}$")])])])
    assert "| 5\\* |" in to_markdown(t) and "5$^{*}$ \\\\" in to_latex(t)


def test_an_unknown_layout_is_refused():
    with pytest.raises(ValueError, match="layout"):
        Table("T", [], layout="wide")
