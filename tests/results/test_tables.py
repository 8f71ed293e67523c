"""socialbench.results.tables: the one table model and its Markdown, CSV and LaTeX renderings."""

import pytest

from socialbench.results.tables import (
    Block,
    Document,
    Num,
    NumStyle,
    Row,
    Table,
    Text,
    formats,
    grouped,
    md_escape,
    rendered,
    tex_escape,
    to_csv,
    to_latex,
    to_markdown,
    with_note,
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


def test_a_long_csv_writes_its_numbers_as_the_cells_do_in_the_tables_style():
    rows = [["x", Num(12.345), Num(None), 3, 0.95]]
    assert to_csv(Table("T", [], csv=(["k", "v", "w", "n", "level"], rows))) == "k,v,w,n,level\nx,12.35,,3,0.95\n"
    bare = Table("T", [], csv=(["k", "v"], [["x", Num(66.7)], ["y", Num(12.345)]]), style=NumStyle(csv_bare=True))
    assert to_csv(bare) == "k,v\nx,66.7\ny,12.35\n"


def test_markdown_only_notes_follow_the_table_as_a_paragraph_of_their_own():
    t = small(md_notes=["m1", "m2"])
    assert to_markdown(t).endswith("| b | z | 3.00 |\n\nn1\n\nm1\nm2\n")
    assert "m1" not in to_latex(t) and "m1" not in to_csv(t)


def test_a_document_writes_its_tables_in_order_a_blank_line_between_and_its_notes_after():
    a, b = small(), Table("B", [], notes=["- one"])
    doc = rendered({"all.md": Document([a, b], notes=["closing"])})["all.md"]
    assert doc == to_markdown(a) + "\n" + to_markdown(b).rstrip("\n") + "\n\nclosing\n"


def test_each_file_is_the_table_in_its_suffixs_format_and_other_content_as_it_is():
    t = small()
    files = rendered({**formats("t", t), "f.png": b".", "d.csv": "x\n"})
    assert files == {"t.md": to_markdown(t), "t.csv": to_csv(t), "t.tex": to_latex(t), "f.png": b".", "d.csv": "x\n"}
    with pytest.raises(ValueError, match="t.json"):
        rendered({"t.json": t})
    with pytest.raises(ValueError, match="a.tex"):
        rendered({"a.tex": Document([t])})


def test_a_note_goes_to_every_table_and_document_once_not_to_csv_or_other_files():
    t = small()
    files = rendered(with_note({**formats("t", t), "all.md": Document([t]), "f.png": b"."}, "Subset run."))
    assert files["t.md"].endswith("n1\nSubset run.\n") and "{\\footnotesize Subset run.}" in files["t.tex"]
    assert files["all.md"].count("Subset run.") == 1 and "Subset" not in files["t.csv"] and files["f.png"] == b"."
    assert t.notes == ["n1"]  # the table itself is left as it was


def test_a_format_override_is_written_as_given():
    t = Table("T", [Block(["h"], [Row([Text("5*", md="5\\*", tex="5$^{*}$")])])])
    assert "| 5\\* |" in to_markdown(t) and "5$^{*}$ \\\\" in to_latex(t)


def test_an_unknown_layout_is_refused():
    with pytest.raises(ValueError, match="layout"):
        Table("T", [], layout="wide")


# ---- the number cell ---------------------------------------------------------------------------------
from socialbench.results.tables import SIGNED  # noqa: E402

ARROWS = NumStyle(missing="-", tex_missing=None, change="arrow")


def test_a_number_with_its_change_and_mark_in_each_format():
    t = Num(80.0, delta=3.125, mark=True, best=True).render(SIGNED)
    assert (t.plain, t.md, t.tex, t.csv) == (
        "80.00 (+3.13*)",
        "**80.00** (+3.13\\*)",
        r"\textbf{80.00} (+3.13$^{*}$)",
        "80.00",
    )


def test_the_table_model_rounds_every_number_it_writes_half_up():
    # 2.675 and 0.125 are ties as printed (f"{2.675:.2f}" would write 2.67, its binary value)
    t = Num(2.675, delta=-0.125).with_ci(1.005, 4.675).render(SIGNED)
    assert (t.plain, t.csv) == ("2.68 (-0.13) [1.01, 4.68]", "2.68")
    assert Num(2.675, delta=0.125).render(ARROWS).md == "2.68 (↑0.13)"


def test_the_arrow_style_writes_changes_as_arrows_and_no_change_as_plus_minus():
    assert Num(60.0, delta=-5.0).render(ARROWS).md == "60.00 (↓5.00)"
    assert Num(60.0, delta=0.0).render(ARROWS).tex == r"60.00 ($\pm$0.00)"


def test_an_interval_and_the_n_a_cell_stands_on_follow_the_value():
    c = Num(50.0, low=30.0, high=70.0, has_ci=True, n=15)
    assert c.render(ARROWS).md == "50.00 [30.00, 70.00] (n=15)"
    assert c.render(ARROWS).tex == r"50.00 {\scriptsize [30.00, 70.00]} (n=15)"


def test_an_interval_counts_its_undefined_resamples_and_a_missing_bound():
    assert Num(50.0, low=None, high=70.0, has_ci=True, undefined=3).render().md == "50.00 [–, 70.00] (3 undef.)"


def test_a_missing_value_is_the_styles_mark_and_an_empty_csv_cell():
    t = Num(None, delta=None).render(SIGNED)
    assert (t.plain, t.tex, t.csv) == ("–", "--", "")
    assert Num(None, n=0).render(ARROWS).md == "- (n=0)"
    assert Num(50.0, has_delta=True).render(ARROWS).md == "50.00 (-)"  # a base row without this value


def test_a_text_cell_is_escaped_per_format():
    t = Num(text="n=0, 100% not evaluated")
    assert to_latex(Table("t", [Block(["a"], [Row([t])])])).count(r"100\% not evaluated") == 1


def test_a_table_writes_its_numbers_in_its_style():
    t = Table("t", [Block(["m", "v"], [Row(["x", Num(1.0, delta=2.0)])])], style=ARROWS)
    assert "| x | 1.00 (↑2.00) |" in to_markdown(t) and to_csv(t).splitlines()[1] == "x,1.00"


def test_a_style_takes_only_its_two_kinds_of_change():
    with pytest.raises(ValueError, match="change must be"):
        NumStyle(change="percent")


# ---- keyed cells: a long-format CSV's lines ------------------------------------------------------------
def test_keyed_cells_give_each_number_cell_with_its_block_row_and_column_keys():
    from socialbench.results.tables import Num, keyed_cells

    a, b, c = Num(1.0), Num(2.0), Num(text="not evaluated")
    block = Block(["name", "x", "y"], [Row(["r1", a, b], key=("r1", "hidden")), Row(["r2", c, a], key=("r2",))])
    block.key, block.column_keys = ("s",), [("x",), ("y",)]
    assert list(keyed_cells(Table("T", [block]))) == [
        (("s",), ("r1", "hidden"), ("x",), a),
        (("s",), ("r1", "hidden"), ("y",), b),
        (("s",), ("r2",), ("x",), c),
        (("s",), ("r2",), ("y",), a),
    ]


def test_keyed_cells_leave_out_a_value_column_cell_that_is_no_number():
    from socialbench.results.tables import Num, keyed_cells

    block = Block(["name", "x", "y"], [Row(["r", Text("-", tex="--"), Num(3.0)], key=("r",))], column_keys=[(1,), (2,)])
    assert [(col, cell.value) for _, _, col, cell in keyed_cells(Table("T", [block]))] == [((2,), 3.0)]


def test_keyed_cells_refuse_a_block_whose_column_keys_do_not_match_its_value_columns():
    from socialbench.results.tables import keyed_cells

    with pytest.raises(ValueError, match="2 value columns but 1 column keys"):
        list(keyed_cells(Table("T", [Block(["name", "x", "y"], [], column_keys=[("x",)])])))


# ---- the note on runs whose JSON constraint the server ignored (derived from params) ------------------------
def test_the_json_mode_note_names_the_models_whose_server_ignores_it():
    from socialbench.results.tables import json_mode_note

    models = {
        "smollm2-server": {"backend": "transformers_serve", "model_id": "data/models/smollm2"},
        "free": {"backend": "transformers_serve", "options": {"json_mode": "none"}},
        "qwen": {"backend": "vllm"},
        "random": {"backend": "random"},
    }
    note = json_mode_note(models, ["random", "qwen", "free", "smollm2-server"])
    assert note.startswith("JSON mode not enforced: smollm2-server (transformers serve ignores response_format).")
    assert json_mode_note(models, ["random", "qwen", "free"]) is None  # enforced, no model, or nothing sent


# ---- the note on runs that sent no temperature (derived from params) -----------------------------------
def test_the_temperature_note_names_the_models_whose_runs_send_none_and_why():
    from socialbench.results.tables import temperature_note

    models = {
        "claude": {"backend": "anthropic"},
        "gpt": {"backend": "openai_compat", "options": {"send_temperature": False}},
        "qwen": {"backend": "vllm"},
        "random": {"backend": "random"},
    }
    note = temperature_note(models, ["random", "qwen", "gpt", "claude"])
    assert note.startswith(
        "No temperature sent: claude (the anthropic API takes none); gpt (options.send_temperature: false)."
    )
    assert temperature_note(models, ["random", "qwen"]) is None


def test_the_answers_table_counts_n_invalid_and_each_finish_reason_per_run():
    from socialbench.results.tables import answers_table, to_csv, to_markdown

    runs = {
        ("m", "direct"): [
            {"error": None, "finish_reason": "stop"},
            {"error": "not JSON", "finish_reason": "length"},
            {"error": None, "finish_reason": "stop"},
            {"error": "failed", "finish_reason": "error"},
        ],
        ("b", "direct"): [{"error": None, "finish_reason": None}],
    }
    lines = to_csv(answers_table(runs, {"m": "small LLM (text-only)", "b": "baseline"})).splitlines()
    assert lines[0].startswith("model,category,run,N,invalid,invalid %,stop,length,error")
    assert "m,small LLM (text-only),direct,4,2,50.00,2,1,1,0,0,0,0,0" in lines
    assert "b,baseline,direct,1,0,0.00,0,0,0,0,0,0,0,1" in lines
    assert "(no runs)" not in to_markdown(answers_table(runs, {})) and "(no runs)" in to_markdown(answers_table({}, {}))
