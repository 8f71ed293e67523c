"""The results book: one PDF (LaTeX) of every table and figure the pipeline made, each with a footnote
naming where it came from: the MLflow run that logged it, the git commit recorded on that run, the
hash of the instances it was computed from and the command that made it.

Assembly is pure (``render_book`` from ``Section``s); reading the results and the tracking store
(``read_section``) and running pdflatex (``build_pdf``) are the I/O edges. The same inputs give the
same bytes: the run ids come from the store by content key (the eval keys ``track`` writes and the
hash of the tables folder), not by date, and pdfTeX is told to leave out dates and ids."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.core.hashing import sha256_file

#: pdfTeX's clock for the build (FORCE_SOURCE_DATE makes it apply); with \pdfinfoomitdate nothing
#: dated reaches the PDF, so this only keeps \today and friends from reading the clock.
SOURCE_DATE_EPOCH = "0"
#: The files of a tables folder that go in the book: LaTeX tables and PNG figures (the .md/.csv/.pdf
#: files beside them are other formats of the same items).
TABLE_SUFFIX, FIGURE_SUFFIX = ".tex", ".png"
_PDFLATEX = ("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "book.tex")

_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "-": "-{}",
}  # so "--" stays two hyphens (an option), not an en dash


def latex_escape(text: str) -> str:
    """``text`` as LaTeX that prints it verbatim (the ten special characters escaped, and hyphens kept
    from joining into dashes)."""
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def href(url: str, text: str) -> str:
    """A link that also works inside another command's argument (a footnote), where hyperref needs
    ``#`` and ``%`` escaped."""
    if any(ch in url for ch in "\\{}"):
        raise ConfigError(f"book: link {url!r} has a character LaTeX cannot carry in a link (\\, {{ or }})")
    return r"\href{%s}{%s}" % (url.replace("#", r"\#").replace("%", r"\%"), text)


@dataclass(frozen=True)
class Run:
    """An MLflow run: its id, name, the git commit tagged on it, and its address in the UI."""

    run_id: str
    name: str
    git_commit: str
    url: str


@dataclass(frozen=True)
class Item:
    """One table or figure: ``shown`` is its path as printed, ``artifact`` its artifact path in
    ``pipeline_run``; a table has its LaTeX in ``latex``, a figure its file in ``graphic``."""

    kind: str  # "table" or "figure"
    shown: str
    artifact: str
    latex: str = ""
    graphic: str = ""


@dataclass(frozen=True)
class Section:
    """A benchmark's part of the book: what its items came from (one pipeline run logged them all)."""

    benchmark: str
    instances: str
    data_sha256: str
    script: str
    pipeline_run: Run
    evaluation_runs: tuple[Run, ...]
    items: tuple[Item, ...]


# ---- pure assembly -------------------------------------------------------------------------------

_PREAMBLE = r"""\pdfinfoomitdate=1
\pdftrailerid{}
\pdfsuppressptexinfo=-1
\documentclass[10pt]{article}
\usepackage[margin=2cm]{geometry}
\usepackage[T1]{fontenc}
%% Times and Courier (texlive-fonts-recommended): scalable T1 fonts, so the text (underscores too) is real text
\usepackage{mathptmx}
\usepackage{courier}
\usepackage{booktabs}
\usepackage{graphicx}
\usepackage{float}
\usepackage[hidelinks]{hyperref}
\hypersetup{pdftitle={%(title)s},pdfcreator={socialbench book}}
\newsavebox{\sbtablebox}
%% A table wider than the text is scaled down to fit; a narrower one is set as it is.
\newcommand{\sbfittable}{\ifdim\wd\sbtablebox>\linewidth\resizebox{\linewidth}{!}{\usebox{\sbtablebox}}%%
\else\usebox{\sbtablebox}\fi}
\title{%(title)s}
\date{}
\begin{document}
\maketitle
\tableofcontents
"""

_FLOAT_START = re.compile(r"\\begin\{(table|figure)\}(\[[^\]]*\])?")


def fit_table(latex: str) -> str:
    """A table file's LaTeX as the book sets it: its float pinned here (``[H]``, so it stays beside
    its footnoted heading) and each tabular scaled down when wider than the text."""
    latex = _FLOAT_START.sub(lambda m: r"\begin{%s}[H]" % m.group(1), latex)
    latex = latex.replace(r"\begin{tabular}", r"\begin{lrbox}{\sbtablebox}\begin{tabular}")
    return latex.replace(r"\end{tabular}", r"\end{tabular}\end{lrbox}\sbfittable{}")


def footnote(section: Section, item: Item) -> str:
    """Where an item came from: the MLflow run that logged it, the commit on that run, the data hash
    and the command that made it."""
    run = section.pipeline_run
    link = href(run.url, r"\texttt{%s}" % latex_escape(run.run_id))
    return (
        r"MLflow run %s (%s), artifact \texttt{%s}; git commit \texttt{%s}; data \texttt{%s} sha256 \texttt{%s};"
        r" made by %s."
        % (
            link,
            latex_escape(run.name),
            latex_escape(item.artifact),
            latex_escape(run.git_commit),
            latex_escape(section.instances),
            section.data_sha256,
            section.script,
        )
    )


def render_section(section: Section) -> str:
    out = [
        r"\clearpage",
        r"\section{%s}" % latex_escape(section.benchmark),
        r"\begin{description}\raggedright",
        r"\item[Instances] \texttt{%s}\\ sha256 \texttt{%s}" % (latex_escape(section.instances), section.data_sha256),
        r"\item[Made by] %s" % section.script,
        r"\item[Logged by] MLflow run %s (%s)\\ git commit \texttt{%s}"
        % (
            href(section.pipeline_run.url, r"\texttt{%s}" % latex_escape(section.pipeline_run.run_id)),
            latex_escape(section.pipeline_run.name),
            latex_escape(section.pipeline_run.git_commit),
        ),
        r"\item[Evaluation runs] (MLflow, one per model and method)",
        r"\end{description}",
        r"\begin{itemize}\small",
    ]
    out += [
        r"\item \texttt{%s}: %s" % (latex_escape(r.name), href(r.url, r"\texttt{%s}" % latex_escape(r.run_id)))
        for r in section.evaluation_runs
    ] or [r"\item none"]
    out.append(r"\end{itemize}")
    for item in section.items:
        out.append(r"\subsection*{%s}" % latex_escape(item.shown))
        out.append(r"\addcontentsline{toc}{subsection}{%s}" % latex_escape(item.shown))
        out.append(r"\noindent\textit{Source}\footnote{\raggedright %s}" % footnote(section, item))
        if item.kind == "table":
            out.append(fit_table(item.latex).rstrip("\n"))
        else:
            out += [
                r"\begin{figure}[H]",
                r"\centering",
                r"\includegraphics[width=\linewidth,height=0.55\textheight,keepaspectratio]{%s}" % item.graphic,
                r"\caption{\texttt{%s}}" % latex_escape(item.shown),
                r"\end{figure}",
            ]
    return "\n".join(out) + "\n"


def render_book(sections: list[Section], title: str = "socialbench results book") -> str:
    """The whole book's LaTeX: a contents page, then one section per benchmark."""
    body = "".join(render_section(s) for s in sections)
    return _PREAMBLE % {"title": latex_escape(title)} + body + "\\end{document}\n"


# ---- reading the results and the tracking store --------------------------------------------------


def table_script(benchmark: str) -> str:
    """The command (and Snakemake rule and module) that writes a benchmark's tables and figures."""
    from socialbench.core.benchmarks import get_benchmark

    module = f"socialbench.{benchmark}.tables"  # a plug-in's tables module, where it has one
    if importlib.util.find_spec(module) is None:
        module = type(get_benchmark(benchmark)).__module__
    return r"\texttt{%s} (Snakemake rule \texttt{%s}, module \texttt{%s})" % tuple(
        latex_escape(s) for s in (f"socialbench tables --benchmark {benchmark}", f"{benchmark}_tables", module)
    )


def book_files(tables_dir: Path) -> tuple[list[Path], list[Path]]:
    """The LaTeX tables and PNG figures under a tables folder, each sorted by path."""
    files = sorted(f for f in tables_dir.rglob("*") if f.is_file() and not f.name.startswith("."))
    return [f for f in files if f.suffix == TABLE_SUFFIX], [f for f in files if f.suffix == FIGURE_SUFFIX]


def read_eval_keys(tracked: Path) -> list[str]:
    """The eval keys a ``track`` summary (results/mlflow/<benchmark>.json) records."""
    try:
        data = json.loads(tracked.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(str(tracked), f"track summary cannot be read ({exc}); `socialbench track` writes it") from exc
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise DataError(str(tracked), "track summary has no list of eval keys", field="keys")
    return keys


def run_url(base_url: str, experiment_id: str, run_id: str) -> str:
    return f"{base_url.rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}"


class Store:
    """Read-only look-ups in the MLflow tracking store (never creates one)."""

    def __init__(self, tracking_uri: str, experiment: str, base_url: str) -> None:
        os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
        from mlflow.tracking import MlflowClient

        from socialbench.report.tracking import _sqlite_path

        db = _sqlite_path(tracking_uri)
        if db is not None and not db.is_file():
            raise DataError(
                str(db),
                "MLflow tracking store not found: the book links the runs `socialbench track`"
                " logged there (run the pipeline first)",
            )
        self.client = MlflowClient(tracking_uri)
        exp = self.client.get_experiment_by_name(experiment)
        if exp is None:
            raise DataError(tracking_uri, f"no MLflow experiment {experiment!r} (mlflow.experiment in params)")
        self.exp_id, self.base_url, self.uri = exp.experiment_id, base_url, tracking_uri

    def run_with_tag(self, tag: str, value: str) -> Run | None:
        """The earliest FINISHED run with the tag (the first to log that content; a stable choice)."""
        query = f"tags.`{tag}` = '{value}' and attributes.status = 'FINISHED'"
        found = self.client.search_runs(
            [self.exp_id], filter_string=query, order_by=["attributes.start_time ASC"], max_results=1
        )
        if not found:
            return None
        run = found[0]
        return Run(
            run.info.run_id,
            run.info.run_name or "",
            run.data.tags.get("git_commit") or run.data.params.get("git_commit", "unknown"),
            run_url(self.base_url, self.exp_id, run.info.run_id),
        )


def read_section(benchmark: str, tables_dir: Path, instances: Path, tracked: Path, store: Store) -> Section:
    """A benchmark's section from its tables folder, instances file and track summary, with the runs
    that logged them looked up in the store. Any item or run that cannot be found is an error."""
    from socialbench.core.benchmarks import available_benchmarks
    from socialbench.report.tracking import ARTIFACTS_KEY_TAG, EVAL_KEY_TAG, pipeline_artifact_files, pipeline_artifacts_key

    if benchmark not in available_benchmarks():
        raise ConfigError(
            f"book: --benchmark {benchmark} is not a registered benchmark (one of: {', '.join(available_benchmarks())})"
        )
    if not tables_dir.is_dir():
        raise DataError(str(tables_dir), "tables folder not found (--tables-dir; `socialbench tables` writes it)")
    if not instances.is_file():
        raise DataError(str(instances), "instances file not found (--instances)")
    tables, figures = book_files(tables_dir)
    if not tables and not figures:
        raise DataError(str(tables_dir), f"no {TABLE_SUFFIX} tables or {FIGURE_SUFFIX} figures for the book")
    artifacts = pipeline_artifact_files(tables_dir)
    key = pipeline_artifacts_key([(str(p), folder) for p, folder in artifacts])
    pipeline_run = store.run_with_tag(ARTIFACTS_KEY_TAG, key)
    if pipeline_run is None:
        raise DataError(
            str(tables_dir),
            f"no finished MLflow run in {store.uri} logged these tables (tag"
            f" {ARTIFACTS_KEY_TAG} {key}): they changed since `socialbench track` last ran; run it",
        )
    runs = []
    for k in read_eval_keys(tracked):
        run = store.run_with_tag(EVAL_KEY_TAG, k)
        if run is None:
            raise DataError(
                str(tracked),
                f"no finished MLflow run in {store.uri} has this eval key: the store is"
                " older than the summary; rerun `socialbench track`",
                record=k,
                field="keys",
            )
        runs.append(run)
    folder = dict((str(p), f) for p, f in artifacts)
    items = [Item("table", str(t), f"{folder[str(t)]}/{t.name}", latex=t.read_text(encoding="utf-8")) for t in tables]
    items += [Item("figure", str(f), f"{folder[str(f)]}/{f.name}", graphic=str(f)) for f in figures]
    return Section(
        benchmark,
        str(instances),
        sha256_file(instances),
        table_script(benchmark),
        pipeline_run,
        tuple(sorted(runs, key=lambda r: r.name)),
        tuple(items),
    )


# ---- building the PDF ----------------------------------------------------------------------------


def _first_error(log: str) -> str:
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("!"):
            return " ".join(x.strip() for x in lines[i : i + 2])
    return "no error line in its log"


def build_pdf(sections: list[Section], out: Path, tex_out: Path, pdflatex: str = "pdflatex") -> None:
    """Write the book's LaTeX to ``tex_out`` and its PDF to ``out`` (pdflatex twice, for the contents
    and footnote links, in a scratch folder holding copies of the figures)."""
    from socialbench.core.io import write_bytes_atomic, write_text_atomic

    exe = shutil.which(pdflatex)
    if exe is None:
        raise ConfigError(
            f"book: {pdflatex} not found on PATH: the results book needs TeX (bash scripts/install_tex.sh installs it)"
        )
    with tempfile.TemporaryDirectory(prefix="socialbench-book-") as tmp:
        build = Path(tmp)
        # Figures are copied in under fixed names: the LaTeX (and so the PDF) never holds a path of this machine.
        numbered, n = [], 0
        for s in sections:
            items = []
            for item in s.items:
                if item.kind == "figure":
                    n += 1
                    name = f"figure{n}{FIGURE_SUFFIX}"
                    shutil.copyfile(item.graphic, build / name)
                    item = replace(item, graphic=name)
                items.append(item)
            numbered.append(replace(s, items=tuple(items)))
        tex = render_book(numbered)
        write_text_atomic(tex_out, tex)
        (build / "book.tex").write_text(tex, encoding="utf-8")
        env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH, "FORCE_SOURCE_DATE": "1"}
        for _ in range(2):
            done = subprocess.run(
                [exe, *_PDFLATEX[1:]],
                cwd=build,
                env=env,
                capture_output=True,
                text=True,
                errors="replace",
                stdin=subprocess.DEVNULL,
            )
            if done.returncode != 0:
                log = (
                    (build / "book.log").read_text(errors="replace") if (build / "book.log").is_file() else done.stdout
                )
                log_out = out.with_name(out.stem + ".pdflatex.log")
                write_text_atomic(log_out, log)
                raise SocialbenchError(f"book: pdflatex failed on {tex_out}: {_first_error(log)} (log: {log_out})")
        write_bytes_atomic(out, (build / "book.pdf").read_bytes())
