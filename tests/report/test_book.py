"""The results book: LaTeX assembly (pure), the run look-ups in a real MLflow store that
socialbench.report.tracking logged, and real PDFs built with pdflatex and read back with pdftotext."""

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from socialbench.report.book import (
    Item,
    Run,
    Section,
    Store,
    build_pdf,
    fit_table,
    footnote,
    href,
    latex_escape,
    read_section,
    render_book,
)
from socialbench.cli import app
from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.core.hashing import sha256_file
from socialbench.report.tracking import eval_key, log_evaluations, pipeline_artifact_files

TABLE = r"""\begin{table}[t]
\centering
\caption{Toy accuracy of the book fixture}
\begin{tabular}{llr}
\toprule
Model & Method & Acc. \\
\midrule
toy\_model & direct & 42.50 \\
\bottomrule
\end{tabular}
\end{table}
"""
EXPERIMENT = "book-test"


def tex_tools():
    """pdflatex and pdftotext, or skip (fail under CI, which installs them: scripts/install_tex.sh)."""
    missing = [t for t in ("pdflatex", "pdftotext") if shutil.which(t) is None]
    if missing:
        reason = f"{', '.join(missing)} not installed (bash scripts/install_tex.sh installs TeX and poppler-utils)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI runs scripts/install_tex.sh before the tests")
        pytest.skip(reason)


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
    """A benchmark's results as the pipeline leaves them: a LaTeX table and a PNG figure, instances,
    and a real MLflow sqlite store where `track`'s code logged the evaluations and the tables
    folder, with track's summary of the eval keys. Returns the paths, plus the params file."""
    root = tmp_path_factory.mktemp("book")
    tables = root / "results" / "tables" / "toy"
    (tables / "figures").mkdir(parents=True)
    (tables / "acc.tex").write_text(TABLE)
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


def test_latex_escape_escapes_every_special_character():
    assert latex_escape(r"a_b & 50% $x #1 {y} ~ ^ \z") == (
        r"a\_b \& 50\% \$x \#1 \{y\} \textasciitilde{} \textasciicircum{} \textbackslash{}z"
    )


def test_latex_escape_keeps_double_hyphen_from_becoming_a_dash():
    assert latex_escape("--benchmark") == "-{}-{}benchmark"


def test_href_escapes_the_fragment_mark_for_use_in_a_footnote():
    assert href("http://h/#/runs/1", "x") == r"\href{http://h/\#/runs/1}{x}"


def test_href_refuses_a_url_latex_cannot_carry():
    with pytest.raises(ConfigError, match="cannot carry"):
        href("http://h/{x}", "x")


def test_fit_table_pins_the_float_and_boxes_the_tabular():
    out = fit_table(TABLE)
    assert out.startswith(r"\begin{table}[H]")
    assert r"\begin{lrbox}{\sbtablebox}\begin{tabular}" in out and r"\end{tabular}\end{lrbox}\sbfittable{}" in out


def fake_section(items=()) -> Section:
    run = Run("abc123", "toy pipeline", "deadbeef", "http://ui/#/experiments/1/runs/abc123")
    return Section(
        "toy_bench",
        "data/test.jsonl",
        "f" * 64,
        r"\texttt{socialbench tables}",
        run,
        (Run("e1", "toy/m/direct", "deadbeef", "http://ui/#/e1"),),
        tuple(items),
    )


def test_footnote_names_run_commit_data_hash_and_script():
    item = Item("table", "results/tables/toy/acc.tex", "tables/acc.tex", latex=TABLE)
    note = footnote(fake_section([item]), item)
    for part in (
        "abc123",
        r"\#/experiments/1/runs/abc123",
        "deadbeef",
        "f" * 64,
        "data/test.jsonl",
        r"\texttt{socialbench tables}",
        r"tables/acc.tex",
    ):
        assert part in note


def test_render_book_has_a_section_per_benchmark_and_a_footnote_per_item():
    items = [
        Item("table", "t.tex", "tables/t.tex", latex=TABLE),
        Item("figure", "f.png", "tables/f.png", graphic="g1.png"),
    ]
    tex = render_book([fake_section(items), fake_section(items[:1])])
    assert tex.count(r"\section{toy\_bench}") == 2
    assert tex.count(r"\footnote{") == 3
    assert r"\includegraphics[width=\linewidth,height=0.55\textheight,keepaspectratio]{g1.png}" in tex
    assert r"\pdftrailerid{}" in tex and r"\pdfinfoomitdate=1" in tex


# ---- reading the results and the store ---------------------------------------------------------------


@pytest.mark.slow
def test_read_section_links_the_run_that_logged_the_tables(results):
    sec = section(results)
    tables = results["tables"]
    assert [i.shown for i in sec.items] == [str(tables / "acc.tex"), str(tables / "figures" / "fig_acc.png")]
    assert [i.artifact for i in sec.items] == ["tables/acc.tex", "tables/figures/fig_acc.png"]
    assert sec.pipeline_run.git_commit == "c0ffee1234"
    assert sec.pipeline_run.url.endswith(f"/runs/{sec.pipeline_run.run_id}")
    assert [r.name for r in sec.evaluation_runs] == ["meetingtom/other/direct", "meetingtom/toy_model/direct"]
    assert sec.data_sha256 == sha256_file(results["instances"])


@pytest.mark.slow
def test_tables_changed_since_track_are_refused(results, tmp_path):
    tables = tmp_path / "toy"
    shutil.copytree(results["tables"], tables)
    (tables / "acc.tex").write_text(TABLE.replace("42.50", "43.00"))
    with pytest.raises(DataError, match="changed since `socialbench track` last ran"):
        read_section("meetingtom", tables, results["instances"], results["tracked"], store(results))


@pytest.mark.slow
def test_eval_key_missing_from_store_names_the_summary_and_key(results, tmp_path):
    tracked = tmp_path / "toy.json"
    tracked.write_text(json.dumps({"keys": ["0" * 64]}))
    with pytest.raises(DataError, match=f"{tracked}.*{'0' * 64}.*keys"):
        read_section("meetingtom", results["tables"], results["instances"], tracked, store(results))


def test_missing_tracking_store_is_refused_and_not_created(tmp_path):
    with pytest.raises(DataError, match="MLflow tracking store not found"):
        Store(f"sqlite:///{tmp_path}/mlflow.db", EXPERIMENT, "http://127.0.0.1:5000")
    assert not (tmp_path / "mlflow.db").exists()


def test_cli_refuses_options_not_given_once_per_benchmark(results, tmp_path):
    args = book_args(results, tmp_path / "book.pdf") + ["--benchmark", "other"]
    out = CliRunner().invoke(app, args)
    assert out.exit_code != 0 and "once per --benchmark" in str(out.exception)


def test_absent_pdflatex_is_a_config_error_naming_the_install_script(tmp_path):
    with pytest.raises(ConfigError, match="scripts/install_tex.sh"):
        build_pdf([fake_section()], tmp_path / "b.pdf", tmp_path / "b.tex", pdflatex="no-such-pdflatex-here")


# ---- real PDFs -------------------------------------------------------------------------------------


def pdf_text(pdf: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
@pytest.mark.tex
def test_book_pdf_shows_the_table_figure_and_their_provenance(results, tmp_path):
    tex_tools()
    out = CliRunner().invoke(app, book_args(results, tmp_path / "book.pdf"))
    assert out.exit_code == 0, out.output + repr(out.exception)
    text = " ".join(pdf_text(tmp_path / "book.pdf").split())
    sec = section(results)
    assert "Toy accuracy of the book fixture" in text and "toy_model direct 42.50" in text
    assert "fig_acc.png" in text and "acc.md" not in text
    for part in (
        sec.pipeline_run.run_id,
        "c0ffee1234",
        sec.data_sha256,
        "socialbench tables --benchmark meetingtom",
        "socialbench.meetingtom.report.tables",
        *(r.run_id for r in sec.evaluation_runs),
    ):
        assert part in text
    assert (tmp_path / "book.tex").is_file()


@pytest.mark.slow
@pytest.mark.tex
def test_same_inputs_give_identical_pdf_bytes(results, tmp_path):
    tex_tools()
    for name in ("a", "b"):
        out = CliRunner().invoke(app, book_args(results, tmp_path / name / "book.pdf"))
        assert out.exit_code == 0, out.output + repr(out.exception)
    assert (tmp_path / "a" / "book.pdf").read_bytes() == (tmp_path / "b" / "book.pdf").read_bytes()


@pytest.mark.slow
@pytest.mark.tex
def test_latex_error_names_the_first_error_and_keeps_the_log(tmp_path):
    tex_tools()
    bad = Item("table", "bad.tex", "tables/bad.tex", latex="\\begin{table}\\nosuchmacro\\end{table}\n")
    with pytest.raises(SocialbenchError, match=r"pdflatex failed on .*Undefined control sequence.*b\.pdflatex\.log"):
        build_pdf([fake_section([bad])], tmp_path / "b.pdf", tmp_path / "b.tex")
    assert (tmp_path / "b.pdflatex.log").is_file() and not (tmp_path / "b.pdf").exists()


@pytest.mark.slow
def test_unregistered_benchmark_is_refused(results):
    with pytest.raises(ConfigError, match="not a registered benchmark"):
        read_section("nosuchbench", results["tables"], results["instances"], results["tracked"], store(results))
