"""The results book: one PDF (Typst, compiled in-process by the ``typst`` wheel) of every table and figure, each
footnoted with its MLflow run, git commit, instances hash and command. Assembly is pure (``render_book``): same inputs,
same bytes."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from socialbench.core.benchmarks import available_benchmarks, get_benchmark
from socialbench.core.errors import ConfigError, DataError, MissingDependency, SocialbenchError
from socialbench.core.hashing import sha256_file
from socialbench.core.io import read_file_text, write_bytes_atomic, write_text_atomic
from socialbench.core.paths import special_file, special_problem, within
from socialbench.core.secrets import redact_url
from socialbench.results.tracking import (
    ARTIFACTS_KEY_TAG,
    EVAL_KEY_TAG,
    pipeline_artifact_files,
    pipeline_artifacts_key,
    sqlite_store_path,
    sqlite_store_problem,
)

#: The creation time given to Typst (as SOURCE_DATE_EPOCH); with ``date: none`` nothing dated reaches
#: the PDF, so this only keeps a ``datetime.today()`` from reading the clock.
TIMESTAMP = 0
#: The files of a tables folder that go in the book: CSV tables and PNG figures (the .md/.tex/.pdf
#: files beside them are other formats of the same items; the .tex tables are for papers).
TABLE_SUFFIX, FIGURE_SUFFIX = ".csv", ".png"
#: The tallest a figure is set; a taller one is scaled down (a figure cannot break across pages).
FIGURE_MAX_HEIGHT = "13cm"
#: A table's text size, and the smallest it is shrunk to when the table is wider than the text.
TABLE_TEXT_SIZE, TABLE_MIN_TEXT_SIZE = "7pt", "5pt"
#: The most of a table the book sets (docs/decisions/results-book.md; a note names what was left out):
#: Typst takes about a second per thousand rows, and nobody reads 30,000 of them.
TABLE_MAX_ROWS, TABLE_MAX_COLUMNS, TABLE_MAX_CELL = 1000, 40, 500
#: The largest table file the book reads at all (larger is refused, naming it: a data dump, not a table).
TABLE_MAX_BYTES = 32 * 2**20
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?%?|nan|inf|-inf")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def typst_string(text: str) -> str:
    """``text`` as a Typst string literal: data never enters the source as markup."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return '"' + _CONTROL.sub(lambda m: f"\\u{{{ord(m.group()):x}}}", out) + '"'


def call(function: str, *args: str) -> str:
    """A Typst function call from argument expressions."""
    return f"{function}({', '.join(args)})"


def mono(text: str) -> str:
    return call("raw", typst_string(text))


def link(url: str, body: str) -> str:
    return call("link", typst_string(url), body)


def join(*parts: str) -> str:
    """A Typst code block joining its expressions (strings and content) into one piece of content."""
    return "{" + "; ".join(parts) + "}"


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
    ``pipeline_run``; a table has its CSV header and rows, a figure its file in ``graphic``."""

    kind: str  # "table" or "figure"
    shown: str
    artifact: str
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    graphic: str = ""
    note: str = ""  # what of a table was left out (its size limits), set under it


@dataclass(frozen=True)
class Script:
    """What wrote a benchmark's tables: the command, its Snakemake rule and the Python module."""

    command: str
    rule: str
    module: str


@dataclass(frozen=True)
class Section:
    """A benchmark's part of the book: what its items came from (one pipeline run logged them all)."""

    benchmark: str
    instances: str
    data_sha256: str
    script: Script
    pipeline_run: Run
    evaluation_runs: tuple[Run, ...]
    items: tuple[Item, ...]


# ---- pure assembly -------------------------------------------------------------------------------


def parse_csv(text: str, where: str) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """A CSV file's header and rows; blank lines are skipped, a short row is padded with empty cells,
    a row longer than the header is an error (its cells would land under the wrong columns)."""
    lines = list(csv.reader(io.StringIO(text)))
    if not lines or not lines[0]:
        raise DataError(where, "CSV table has no header row")
    header, width = tuple(lines[0]), len(lines[0])
    rows = []
    for n, row in enumerate(lines[1:], start=2):
        if not row:  # a blank line holds no record
            continue
        if len(row) > width:
            raise DataError(where, f"row has {len(row)} cells but the header {width}", record=f"line {n}")
        rows.append(tuple(row) + ("",) * (width - len(row)))
    return header, tuple(rows)


def fit_table(
    header: tuple[str, ...], rows: tuple[tuple[str, ...], ...], where: str
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...], str]:
    """A table cut to the book's limits (:data:`TABLE_MAX_ROWS`, :data:`TABLE_MAX_COLUMNS`,
    :data:`TABLE_MAX_CELL`) and the note that says what was cut ("" when nothing was)."""

    def cell(text: str) -> str:
        return text if len(text) <= TABLE_MAX_CELL else text[: TABLE_MAX_CELL - 1] + "…"

    cut = []
    if len(rows) > TABLE_MAX_ROWS:
        cut.append(f"the first {TABLE_MAX_ROWS:,} of its {len(rows):,} rows")
    if len(header) > TABLE_MAX_COLUMNS:
        cut.append(f"the first {TABLE_MAX_COLUMNS} of its {len(header)} columns")
    long = sum(len(c) > TABLE_MAX_CELL for r in (header, *rows[:TABLE_MAX_ROWS]) for c in r[:TABLE_MAX_COLUMNS])
    if long:
        cut.append(f"{long:,} cell(s) cut to {TABLE_MAX_CELL} characters")
    if not cut:
        return header, rows, ""
    header = tuple(cell(h) for h in header[:TABLE_MAX_COLUMNS])
    rows = tuple(tuple(cell(c) for c in r[:TABLE_MAX_COLUMNS]) for r in rows[:TABLE_MAX_ROWS])
    return header, rows, f"Shown: {'; '.join(cut)} (the book's size limits); the whole table is {where}."


def numeric_columns(header: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> list[bool]:
    """Which columns hold only numbers (or nothing): those are right-aligned."""
    return [
        any(r[i] for r in rows) and all(not r[i] or _NUMBER.fullmatch(r[i].strip()) for r in rows)
        for i in range(len(header))
    ]


_PREAMBLE = """#set document(title: %(title)s, author: (), date: none)
#set page(paper: "a4", margin: 2cm, numbering: "1")
#set text(font: "Libertinus Serif", size: 10pt)
#set heading(numbering: "1.")
#show link: set text(fill: rgb("#1a4d8f"))
// A figure no taller than FIGURE_MAX_HEIGHT: as wide as the text unless that would make it taller.
#let fitimage(path) = layout(size => {
  let wide = image(path, width: size.width)
  if measure(wide).height > %(max_height)s { image(path, height: %(max_height)s) } else { wide }
})
// A table in the booktabs style of the papers' .tex tables (rules above, below and under the header),
// its header repeated on every page. A table wider than the text is set in smaller type, down to
// %(min_size)s (so it still breaks across pages, which a scaled box would not); below that its auto
// columns share the width and wrap at spaces.
#let csvtable(header, rows, align) = layout(size => {
  let tab(s) = {
    set text(size: s)
    table(
      columns: header.len(),
      align: align,
      stroke: none,
      inset: (x: 3pt, y: 2pt),
      table.hline(stroke: 0.8pt),
      table.header(..header.map(h => text(weight: "bold", h))),
      table.hline(stroke: 0.5pt),
      ..rows.flatten(),
      table.hline(stroke: 0.8pt),
    )
  }
  let natural = measure(tab(%(size)s)).width
  tab(calc.max(%(min_size)s, calc.min(%(size)s, %(size)s * (size.width / natural))))
})
#align(center, text(size: 17pt, %(title)s))
#outline(depth: 2)
"""


def footnote(section: Section, item: Item) -> str:
    """Where an item came from (a Typst footnote): its MLflow run, that run's commit, data hash and command."""
    run, script = section.pipeline_run, section.script
    return call(
        "footnote",
        join(
            '"MLflow run "',
            link(run.url, mono(run.run_id)),
            typst_string(f" ({run.name}), artifact "),
            mono(item.artifact),
            '"; git commit "',
            mono(run.git_commit),
            '"; data "',
            mono(section.instances),
            '" sha256 "',
            mono(section.data_sha256),
            '"; made by "',
            made_by(script),
            '"."',
        ),
    )


def made_by(script: Script) -> str:
    return join(
        mono(script.command), '" (Snakemake rule "', mono(script.rule), '", module "', mono(script.module), '")"'
    )


def render_table(item: Item) -> str:
    """A CSV table as a call of the preamble's ``csvtable``: every cell a string literal."""
    align = ", ".join("right" if num else "left" for num in numeric_columns(item.header, item.rows))
    header = ", ".join(typst_string(h) for h in item.header)
    rows = ", ".join("(" + ", ".join(typst_string(c) for c in row) + ",)" for row in item.rows)
    return f"#csvtable(({header},), ({rows},), ({align},))"


def render_section(section: Section) -> str:
    run = section.pipeline_run
    terms = [
        ('"Instances"', join(mono(section.instances), "linebreak()", '"sha256 "', mono(section.data_sha256))),
        ('"Made by"', made_by(section.script)),
        (
            '"Logged by"',
            join(
                '"MLflow run "',
                link(run.url, mono(run.run_id)),
                typst_string(f" ({run.name})"),
                "linebreak()",
                '"git commit "',
                mono(run.git_commit),
            ),
        ),
        ('"Evaluation runs"', '"(MLflow, one per model and method)"'),
    ]
    out = [
        "#pagebreak(weak: true)",
        f"#heading(level: 1, {typst_string(section.benchmark)})",
        "#terms(",
        *(f"  {call('terms.item', name, body)}," for name, body in terms),
        ")",
        "#list(",
    ]
    colon = typst_string(": ")
    out += [f"  {join(mono(r.name), colon, link(r.url, mono(r.run_id)))}," for r in section.evaluation_runs] or [
        '  "none",'
    ]
    out.append(")")
    for item in section.items:
        out.append(f"#heading(level: 2, numbering: none, {typst_string(item.shown)})")
        out.append(f"#emph[Source]#{footnote(section, item)}")
        if item.kind == "table":
            out.append(render_table(item) if item.rows else "#emph[(no rows)]")
            if item.note:
                out.append(f"#par(emph({typst_string(item.note)}))")
        else:
            out.append(f"#figure(fitimage({typst_string(item.graphic)}), caption: {mono(item.shown)}, kind: image)")
    return "\n".join(out) + "\n"


def render_book(sections: list[Section], title: str = "socialbench results book") -> str:
    """The whole book's Typst source: a contents page, then one section per benchmark."""
    preamble = _PREAMBLE % {
        "title": typst_string(title),
        "max_height": FIGURE_MAX_HEIGHT,
        "size": TABLE_TEXT_SIZE,
        "min_size": TABLE_MIN_TEXT_SIZE,
    }
    return preamble + "".join(render_section(s) for s in sections)


# ---- reading the results and the tracking store --------------------------------------------------


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def table_script(benchmark: str, rule: str | None = None) -> Script:
    """The command (and Snakemake rule and module) that writes a benchmark's tables and figures: the rule
    is the demo's ``<benchmark>_tables`` unless ``rule`` names another (the real run's, say)."""
    # a plug-in's tables module (results/tables.py in the layer layout, tables.py before it), where it has one
    candidates = [f"socialbench.{benchmark}.results.tables", f"socialbench.{benchmark}.tables"]
    module = next((m for m in candidates if _module_exists(m)), type(get_benchmark(benchmark)).__module__)
    return Script(f"socialbench tables --benchmark {benchmark}", rule or f"{benchmark}_tables", module)


def folder_files(folder: Path) -> list[Path]:
    """Every file under ``folder`` (sorted; dot-names left out), each a regular file inside it: a link out of it or to a
    folder, or a special file, is a DataError naming it. Folder links are not followed."""
    root = folder.resolve()
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            if path.is_symlink():
                target = path.resolve()
                if not within(target, root):
                    raise DataError(
                        str(path),
                        f"is a link to {target}, outside the tables folder {folder}; the book reads only"
                        " regular files inside it",
                    )
                if target.is_dir():
                    raise DataError(
                        str(path), f"is a link to a folder ({target}); the book does not follow folder links"
                    )
            if name in dirnames or name.startswith("."):
                continue
            kind = special_file(path)
            if kind is not None:
                raise DataError(str(path), f"{special_problem(kind)}; the book reads only regular files")
            if not path.is_file():  # a dangling link
                raise DataError(str(path), "is a link to nothing; the book reads only regular files")
            found.append(path)
    return sorted(found)


def read_table(path: Path, shown: str, artifact: str) -> Item:
    """A CSV table as a book item: read as UTF-8 (a byte that is not is an error naming its offset; a
    leading byte-order mark is dropped), fit to the book's size limits (:func:`fit_table`)."""
    size = path.stat().st_size
    if size > TABLE_MAX_BYTES:
        raise DataError(
            str(path),
            f"is {size / 2**20:.1f} MiB, more than the {TABLE_MAX_BYTES // 2**20} MiB a book table may have;"
            " the book shows tables, not data files",
        )
    text = read_file_text(path, "table").removeprefix("\ufeff")
    header, rows, note = fit_table(*parse_csv(text, str(path)), shown)
    return Item("table", shown, artifact, header, rows, note=note)


def read_items(tables_dir: Path) -> tuple[Item, ...]:
    """A tables folder's tables and figures as book items, read and checked before any store is opened."""
    if not tables_dir.is_dir():
        raise DataError(str(tables_dir), "tables folder not found (--tables-dir; `socialbench tables` writes it)")
    files = folder_files(tables_dir)
    tables, figures = [f for f in files if f.suffix == TABLE_SUFFIX], [f for f in files if f.suffix == FIGURE_SUFFIX]
    if not tables and not figures:
        raise DataError(str(tables_dir), f"no {TABLE_SUFFIX} tables or {FIGURE_SUFFIX} figures for the book")
    folder = {str(p): f for p, f in pipeline_artifact_files(tables_dir)}
    items = [read_table(t, str(t), f"{folder[str(t)]}/{t.name}") for t in tables]
    return tuple(items + [Item("figure", str(f), f"{folder[str(f)]}/{f.name}", graphic=str(f)) for f in figures])


def read_eval_keys(tracked: Path) -> list[str]:
    """The eval keys a ``track`` summary (results/mlflow/<benchmark>.json) records."""
    try:
        data = json.loads(read_file_text(tracked, "track summary"))
    except json.JSONDecodeError as exc:
        raise DataError(str(tracked), f"track summary cannot be read ({exc}); `socialbench track` writes it") from exc
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise DataError(str(tracked), "track summary has no list of eval keys", field="keys")
    return keys


class Store:
    """Read-only look-ups in the MLflow tracking store (never creates one)."""

    def __init__(self, tracking_uri: str, experiment: str, base_url: str) -> None:
        os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
        from mlflow.tracking import MlflowClient

        db = sqlite_store_path(tracking_uri)
        problem = sqlite_store_problem(db) if db is not None else None
        if problem:
            raise DataError(str(db), problem)
        if db is not None and not db.is_file():
            raise DataError(
                str(db),
                "MLflow tracking store not found: the book links the runs `socialbench track`"
                " logged there (run the pipeline first)",
            )
        self.client = MlflowClient(tracking_uri)
        exp = self.client.get_experiment_by_name(experiment)
        if exp is None:
            raise DataError(
                redact_url(tracking_uri), f"no MLflow experiment {experiment!r} (mlflow.experiment in params)"
            )
        # The store as messages name it: its credentials never shown.
        self.exp_id, self.base_url, self.uri = exp.experiment_id, base_url, redact_url(tracking_uri)

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
            f"{self.base_url.rstrip('/')}/#/experiments/{self.exp_id}/runs/{run.info.run_id}",
        )


def read_section(
    benchmark: str,
    tables_dir: Path,
    instances: Path,
    tracked: Path,
    store: Store,
    items: tuple[Item, ...] | None = None,
    rule: str | None = None,
) -> Section:
    """A benchmark's section from its tables folder (``items``: as :func:`read_items` read it), instances file and track
    summary, with the runs that logged them; anything not found is an error."""
    if benchmark not in available_benchmarks():
        raise ConfigError(
            f"book: --benchmark {benchmark} is not a registered benchmark (one of: {', '.join(available_benchmarks())})"
        )
    if not instances.is_file():
        raise DataError(str(instances), "instances file not found (--instances)")
    items = items if items is not None else read_items(tables_dir)
    key = pipeline_artifacts_key([(str(p), folder) for p, folder in pipeline_artifact_files(tables_dir)])
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
    return Section(
        benchmark,
        str(instances),
        sha256_file(instances),
        table_script(benchmark, rule),
        pipeline_run,
        tuple(sorted(runs, key=lambda r: r.name)),
        tuple(items),
    )


# ---- building the PDF ----------------------------------------------------------------------------


def _typst():
    try:
        import typst
    except ImportError as exc:
        raise MissingDependency(
            "book: the results book needs the typst package (pip install 'socialbench[book]')"
        ) from exc
    return typst


def build_pdf(sections: list[Section], out: Path, typ_out: Path) -> list[str]:
    """Write the book's Typst source to ``typ_out`` and its PDF to ``out`` (compiled in a scratch
    folder holding copies of the figures, with only the wheel's own fonts). Returns Typst's warnings."""
    typst = _typst()
    with tempfile.TemporaryDirectory(prefix="socialbench-book-") as tmp:
        build = Path(tmp)
        # Figures are copied in under fixed names: the source (and so the PDF) never holds a path of this machine.
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
        source = render_book(numbered)
        write_text_atomic(typ_out, source)
        (build / "book.typ").write_text(source, encoding="utf-8")
        try:
            compiler = typst.Compiler(build / "book.typ", root=build, ignore_system_fonts=True)
            pdf, warnings = compiler.compile_with_warnings(format="pdf", timestamp=TIMESTAMP)
        except typst.TypstError as exc:
            hints = "".join(f"; hint: {h}" for h in exc.hints or ())
            raise SocialbenchError(f"book: typst failed on {typ_out}: {exc.message}{hints}") from exc
    write_bytes_atomic(out, pdf)
    return [w.message for w in warnings]
