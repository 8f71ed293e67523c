"""The results book: Typst assembly (pure), the run look-ups in a real MLflow store that
socialbench.results.tracking logged, and real PDFs compiled by the typst wheel and read back with pypdf
(pip packages only: these tests always run)."""

import io
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from socialbench.cli import app
from socialbench.core.errors import ConfigError, DataError, MissingDependency, SocialbenchError
from socialbench.core.hashing import sha256_file
from socialbench.results import book
from socialbench.results.book import (
    Item,
    Run,
    Script,
    Section,
    Store,
    build_pdf,
    fit_table,
    footnote,
    numeric_columns,
    parse_csv,
    read_items,
    read_section,
    render_book,
    render_section,
    render_table,
    table_script,
    typst_string,
)
from socialbench.results.tracking import eval_key, log_evaluations, pipeline_artifact_files

TABLE_CSV = "model,method,metric,value\ntoy_model,direct,acc,42.5\n"
#: The same table as the tables stage also writes it for papers: it stays out of the book.
TABLE_TEX = "\\begin{table}[t]\n\\caption{Toy accuracy}\n\\end{table}\n"
#: A cell holding every character Typst markup would act on.
TRICKY = 'a_b *c* #d $e$ @f <g> [h] \\i "j" --k `l` ~m'
EXPERIMENT = "book-test"


def png_bytes() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (40, 20), (200, 30, 30)).save(buf, format="PNG")
    return buf.getvalue()


def evaluation(root: Path, model: str) -> dict:
    art = root / f"{model}.scores.json"
    art.write_text("{}")
    return {
        "benchmark": "meetingtom",
        "model": model,
        "method": "direct",
        "params": {"model": model, "seed": 1},
        "content": {"dataset_sha256": "d"},
        "provenance": {"git_commit": "c0ffee1234"},
        "scores": {"all": {"acc": 42.5}},
        "stats": {"cache_misses": 1},
        "artifacts": [art],
    }


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A benchmark's results as the pipeline leaves them: a table (CSV, with its .tex and .md
    siblings) and a PNG figure, instances, and a real MLflow sqlite store where `track`'s code logged
    the evaluations and the tables folder, with track's summary of the eval keys. Returns the paths,
    plus the params file."""
    root = tmp_path_factory.mktemp("book")
    tables = root / "results" / "tables" / "toy"
    (tables / "figures").mkdir(parents=True)
    (tables / "acc.csv").write_text(TABLE_CSV)
    (tables / "acc.tex").write_text(TABLE_TEX)
    (tables / "acc.md").write_text("| not in the book |\n")
    (tables / "figures" / "fig_acc.png").write_bytes(png_bytes())
    instances = root / "test.jsonl"
    instances.write_text('{"id": "toy-1"}\n')
    evs = [evaluation(root, "toy_model"), evaluation(root, "other")]
    uri = f"sqlite:///{root}/mlflow.db"
    log_evaluations(evs, uri, EXPERIMENT, root / "mlartifacts", artifacts=pipeline_artifact_files(tables))
    tracked = root / "toy.json"
    tracked.write_text(
        json.dumps({"evaluations": ["other/direct", "toy_model/direct"], "keys": sorted(eval_key(e) for e in evs)})
    )
    params = root / "params.yaml"
    params.write_text(
        Path("params.yaml")
        .read_text()
        .replace("sqlite:///mlflow.db", uri)
        .replace("experiment: socialbench", f"experiment: {EXPERIMENT}")
    )
    return {"root": root, "tables": tables, "instances": instances, "tracked": tracked, "uri": uri, "params": params}


def store(results) -> Store:
    return Store(results["uri"], EXPERIMENT, "http://127.0.0.1:5000")


def section(results) -> Section:
    return read_section("meetingtom", results["tables"], results["instances"], results["tracked"], store(results))


def book_args(results, out: Path) -> list[str]:
    return [
        "book",
        "--benchmark",
        "meetingtom",
        "--tables-dir",
        str(results["tables"]),
        "--instances",
        str(results["instances"]),
        "--tracked",
        str(results["tracked"]),
        "--params",
        str(results["params"]),
        "--out",
        str(out),
    ]


# ---- pure assembly ---------------------------------------------------------------------------------


def test_typst_string_escapes_quotes_backslashes_and_control_characters():
    assert typst_string('a "b" \\c\nd\x01') == '"a \\"b\\" \\\\c\\nd\\u{1}"'


def test_typst_string_leaves_markup_characters_alone():
    assert typst_string("#x $y$ *z*") == '"#x $y$ *z*"'


def test_parse_csv_pads_a_short_row():
    assert parse_csv("a,b,c\n1,2\n", "t.csv") == (("a", "b", "c"), (("1", "2", ""),))


def test_parse_csv_skips_blank_lines():
    assert parse_csv("a,b\n\n1,2\n", "t.csv") == (("a", "b"), (("1", "2"),))


def test_parse_csv_refuses_a_row_longer_than_the_header_naming_file_and_line():
    with pytest.raises(DataError, match=r"t\.csv, record line 3: row has 3 cells but the header 2"):
        parse_csv("a,b\n1,2\n1,2,3\n", "t.csv")


def test_parse_csv_refuses_a_file_without_header():
    with pytest.raises(DataError, match=r"t\.csv: CSV table has no header row"):
        parse_csv("", "t.csv")


def test_numeric_columns_are_those_holding_only_numbers_or_blanks():
    rows = (("toy", "42.5", "", "-1e-3"), ("x", "", "", "7%"))
    assert numeric_columns(("m", "v", "empty", "d"), rows) == [False, True, False, True]


def test_render_table_right_aligns_numbers_and_quotes_every_cell():
    item = Item("table", "t.csv", "tables/t.csv", ("m", "v"), (("a#b", "1.5"),))
    assert render_table(item) == '#csvtable(("m", "v",), (("a#b", "1.5",),), (left, right,))'


def fake_section(items=()) -> Section:
    run = Run("abc123", "toy pipeline", "deadbeef", "http://ui/#/experiments/1/runs/abc123")
    return Section(
        "toy_bench",
        "data/test.jsonl",
        "f" * 64,
        Script("socialbench tables --benchmark toy_bench", "toy_bench_tables", "socialbench.toy.tables"),
        run,
        (Run("e1", "toy/m/direct", "deadbeef", "http://ui/#/e1"),),
        tuple(items),
    )


def table_item(rows=(("toy_model", "42.5"),)) -> Item:
    return Item("table", "results/tables/toy/acc.csv", "tables/acc.csv", ("model", "value"), tuple(rows))


def test_footnote_names_run_commit_data_hash_and_script():
    note = footnote(fake_section([table_item()]), table_item())
    for part in (
        '"abc123"',
        '"http://ui/#/experiments/1/runs/abc123"',
        '"deadbeef"',
        f'"{"f" * 64}"',
        '"data/test.jsonl"',
        '"socialbench tables --benchmark toy_bench"',
        '"toy_bench_tables"',
        '"socialbench.toy.tables"',
        '"tables/acc.csv"',
    ):
        assert part in note


def test_render_book_has_a_section_per_benchmark_and_a_footnote_per_item():
    items = [table_item(), Item("figure", "f.png", "tables/f.png", graphic="g1.png")]
    typ = render_book([fake_section(items), fake_section(items[:1])])
    assert typ.count('#heading(level: 1, "toy_bench")') == 2
    assert typ.count("#footnote(") == 3
    assert 'fitimage("g1.png")' in typ
    assert "date: none" in typ


def test_table_script_names_the_command_rule_and_the_benchmarks_tables_module():
    assert table_script("meetingtom") == Script(
        "socialbench tables --benchmark meetingtom", "meetingtom_tables", "socialbench.meetingtom.results.tables"
    )


def test_table_script_names_another_rule_when_one_is_given():
    # the real run's tables come from its own rule (rules/real.smk), not the demo's
    assert table_script("meetingtom", "real_tables_meetingtom").rule == "real_tables_meetingtom"


def test_missing_typst_is_a_missing_dependency_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "typst", None)
    with pytest.raises(MissingDependency, match=r"socialbench\[book\]"):
        build_pdf([fake_section([table_item()])], tmp_path / "b.pdf", tmp_path / "b.typ")


# ---- reading the results and the store ---------------------------------------------------------------


@pytest.mark.slow
def test_read_section_links_the_run_that_logged_the_tables(results):
    sec = section(results)
    tables = results["tables"]
    assert [i.shown for i in sec.items] == [str(tables / "acc.csv"), str(tables / "figures" / "fig_acc.png")]
    assert [i.artifact for i in sec.items] == ["tables/acc.csv", "tables/figures/fig_acc.png"]
    assert sec.pipeline_run.git_commit == "c0ffee1234"
    assert sec.pipeline_run.url.endswith(f"/runs/{sec.pipeline_run.run_id}")
    assert [r.name for r in sec.evaluation_runs] == ["meetingtom/other/direct", "meetingtom/toy_model/direct"]
    assert sec.data_sha256 == sha256_file(results["instances"])


@pytest.mark.slow
def test_read_section_reads_the_table_from_its_csv(results):
    table = section(results).items[0]
    assert (table.header, table.rows) == (
        ("model", "method", "metric", "value"),
        (("toy_model", "direct", "acc", "42.5"),),
    )


@pytest.mark.slow
def test_tables_changed_since_track_are_refused(results, tmp_path):
    tables = tmp_path / "toy"
    shutil.copytree(results["tables"], tables)
    (tables / "acc.csv").write_text(TABLE_CSV.replace("42.5", "43.0"))
    with pytest.raises(DataError, match="changed since `socialbench track` last ran"):
        read_section("meetingtom", tables, results["instances"], results["tracked"], store(results))


@pytest.mark.slow
def test_eval_key_missing_from_store_names_the_summary_and_key(results, tmp_path):
    tracked = tmp_path / "toy.json"
    tracked.write_text(json.dumps({"keys": ["0" * 64]}))
    with pytest.raises(DataError, match=f"{tracked}.*{'0' * 64}.*keys"):
        read_section("meetingtom", results["tables"], results["instances"], tracked, store(results))


def test_a_tracking_store_that_names_a_folder_says_it_names_a_folder(tmp_path):
    """Issue 38: not "tracking store not found" about a folder that exists."""
    (tmp_path / "store").mkdir()
    with pytest.raises(DataError, match=r"store: names a folder, not an SQLite file .*sqlite:///.*/store/mlflow\.db"):
        Store(f"sqlite:///{tmp_path}/store", EXPERIMENT, "http://127.0.0.1:5000")


def test_missing_tracking_store_is_refused_and_not_created(tmp_path):
    with pytest.raises(DataError, match="MLflow tracking store not found"):
        Store(f"sqlite:///{tmp_path}/mlflow.db", EXPERIMENT, "http://127.0.0.1:5000")
    assert not (tmp_path / "mlflow.db").exists()


@pytest.mark.slow
def test_unregistered_benchmark_is_refused(results):
    with pytest.raises(ConfigError, match="not a registered benchmark"):
        read_section("nosuchbench", results["tables"], results["instances"], results["tracked"], store(results))


# ---- reading a tables folder: regular files inside it, UTF-8, size limits (issue 33, class 4) ----------


def tables_folder(tmp_path: Path, csv_text: str | bytes = TABLE_CSV) -> Path:
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "acc.csv").write_bytes(csv_text.encode() if isinstance(csv_text, str) else csv_text)
    return folder


def test_read_items_reads_tables_then_figures_with_their_artifact_paths(tmp_path):
    folder = tables_folder(tmp_path)
    (folder / "figures").mkdir()
    (folder / "figures" / "f.png").write_bytes(png_bytes())
    items = read_items(folder)
    assert [(i.kind, i.artifact) for i in items] == [("table", "tables/acc.csv"), ("figure", "tables/figures/f.png")]
    assert items[0].rows == (("toy_model", "direct", "acc", "42.5"),) and items[0].note == ""


def test_a_figure_linked_from_outside_the_folder_is_refused_naming_the_link(tmp_path):
    outside = tmp_path / "secret.png"
    outside.write_bytes(png_bytes())
    folder = tables_folder(tmp_path)
    (folder / "fig.png").symlink_to(outside)
    with pytest.raises(DataError, match=rf"{folder / 'fig.png'}: is a link to {outside}, outside the tables folder"):
        read_items(folder)


def test_a_link_to_a_file_inside_the_folder_is_read(tmp_path):
    folder = tables_folder(tmp_path)
    (folder / "same.csv").symlink_to(folder / "acc.csv")
    assert [i.artifact for i in read_items(folder)] == ["tables/acc.csv", "tables/same.csv"]


def test_a_link_to_a_folder_is_refused_naming_it(tmp_path):
    folder = tables_folder(tmp_path)
    (folder / "sub").mkdir()
    (folder / "alias").symlink_to(folder / "sub")
    with pytest.raises(DataError, match=r"alias: is a link to a folder .*; the book does not follow folder links"):
        read_items(folder)


def test_a_fifo_in_the_tables_folder_is_refused_naming_it(tmp_path):
    folder = tables_folder(tmp_path)
    os.mkfifo(folder / "pipe.csv")
    with pytest.raises(DataError, match=r"pipe\.csv: is a FIFO \(named pipe\)"):
        read_items(folder)


def test_a_latin1_table_is_refused_naming_the_file_and_byte_offset(tmp_path):
    folder = tables_folder(tmp_path, "model,value\ncaf\xe9,1\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"acc\.csv: not UTF-8 text \(byte 0xe9 at offset 15, line 2\)"):
        read_items(folder)


def test_a_byte_order_mark_is_not_part_of_the_first_header(tmp_path):
    folder = tables_folder(tmp_path, "\ufeff" + TABLE_CSV)
    assert read_items(folder)[0].header[0] == "model"


def test_a_30000_row_table_shows_its_first_rows_and_says_so(tmp_path):
    rows = "".join(f"m{i},direct,acc,{i}\n" for i in range(30_000))
    folder = tables_folder(tmp_path, "model,method,metric,value\n" + rows)
    (table,) = read_items(folder)
    assert len(table.rows) == book.TABLE_MAX_ROWS and table.rows[-1][0] == f"m{book.TABLE_MAX_ROWS - 1}"
    assert table.note == (
        f"Shown: the first 1,000 of its 30,000 rows (the book's size limits); the whole table is {folder / 'acc.csv'}."
    )


def test_fit_table_cuts_columns_and_long_cells_and_says_so():
    header = tuple(f"c{i}" for i in range(50))
    header, rows, note = fit_table(header, (("x" * 600,) * 50,), "t.csv")
    assert len(header) == len(rows[0]) == book.TABLE_MAX_COLUMNS
    assert rows[0][0] == "x" * (book.TABLE_MAX_CELL - 1) + "…"
    assert (
        note == "Shown: the first 40 of its 50 columns; 40 cell(s) cut to 500 characters (the book's size limits);"
        " the whole table is t.csv."
    )


def test_fit_table_leaves_a_table_within_the_limits_as_it_is():
    header, rows = ("m", "v"), (("a", "1"),)
    assert fit_table(header, rows, "t.csv") == (header, rows, "")


def test_a_table_file_beyond_the_byte_limit_is_refused_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(book, "TABLE_MAX_BYTES", 10)
    folder = tables_folder(tmp_path)
    with pytest.raises(DataError, match=r"acc\.csv: is 0\.0 MiB, more than the 0 MiB a book table may have"):
        read_items(folder)


def test_the_note_of_a_cut_table_is_set_under_it():
    item = Item("table", "t.csv", "tables/t.csv", ("m",), (("a",),), note="Shown: the first 1 of its 2 rows")
    assert '#par(emph("Shown: the first 1 of its 2 rows"))' in render_section(fake_section([item]))


# ---- real PDFs -------------------------------------------------------------------------------------


def pdf_text(pdf: Path) -> str:
    """The PDF's text, whitespace runs made single spaces (line breaks fall anywhere)."""
    from pypdf import PdfReader  # imported by the PDF tests, not at every xdist worker's collection

    return " ".join(" ".join(page.extract_text() for page in PdfReader(pdf).pages).split())


@pytest.mark.slow
def test_book_pdf_shows_the_table_figure_and_their_provenance(results, tmp_path):
    out = CliRunner().invoke(app, book_args(results, tmp_path / "book.pdf"))
    assert out.exit_code == 0, out.output + repr(out.exception)
    text = pdf_text(tmp_path / "book.pdf")
    sec = section(results)
    assert "model method metric value" in text and "toy_model direct acc 42.5" in text
    assert "fig_acc.png" in text and "acc.md" not in text and "acc.tex" not in text
    for part in (
        sec.pipeline_run.run_id,
        "c0ffee1234",
        sec.data_sha256,
        "socialbench tables --benchmark meetingtom",
        "socialbench.meetingtom.results.tables",
        *(r.run_id for r in sec.evaluation_runs),
    ):
        assert part in text
    assert (tmp_path / "book.typ").is_file()


@pytest.mark.slow
def test_same_inputs_give_identical_pdf_bytes(results, tmp_path):
    for name in ("a", "b"):
        out = CliRunner().invoke(app, book_args(results, tmp_path / name / "book.pdf"))
        assert out.exit_code == 0, out.output + repr(out.exception)
    assert (tmp_path / "a" / "book.pdf").read_bytes() == (tmp_path / "b" / "book.pdf").read_bytes()


def test_pdf_carries_no_creation_date(tmp_path):
    from pypdf import PdfReader

    build_pdf([fake_section([table_item()])], tmp_path / "b.pdf", tmp_path / "b.typ")
    info = PdfReader(tmp_path / "b.pdf").metadata
    assert "/CreationDate" not in info and "/ModDate" not in info
    assert b"CreateDate" not in (tmp_path / "b.pdf").read_bytes()


def test_cells_with_markup_characters_print_verbatim(tmp_path):
    build_pdf([fake_section([table_item([(TRICKY, "1")])])], tmp_path / "b.pdf", tmp_path / "b.typ")
    assert TRICKY in pdf_text(tmp_path / "b.pdf")


def test_typst_error_names_the_source_and_writes_no_pdf(tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    item = Item("figure", "broken.png", "tables/broken.png", graphic=str(broken))
    with pytest.raises(SocialbenchError, match=r"typst failed on .*b\.typ: "):
        build_pdf([fake_section([item])], tmp_path / "b.pdf", tmp_path / "b.typ")
    assert (tmp_path / "b.typ").is_file() and not (tmp_path / "b.pdf").exists()
