"""Every name the docs cite in backticks exists: a repository path (`src/...`, `tests/...`, `rules/...`,
or a path under the package such as `core/benchmarks.py`), a module or a name defined in one (by dotted
name, `socialbench.core.paths.check_io` or the tail of a module's path, `paths.check_io`; a class's member,
`Benchmark.stability_tables`), a test cited as `tests/<file>.py::<test>`, and a constant or private name
(`LOCK_TTL_S`, `_BUILTIN`) that the code must contain. Read from the source files, nothing imported.

Not checked: fenced code blocks, spans with placeholders (`<m>`, `{meeting}`, `*`), paths the pipeline
writes (`results/tables/moca/all.md`, `data/interim/...`), params keys (tests/test_docs_departures.py
checks those), the "before" column of docs/architecture.md's "what moved where" table and CHANGELOG.md:
history names what was renamed or removed."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import textwrap
from pathlib import Path

import yaml

from tests.test_docs_departures import PARAMS, is_params_key, load_schemas, prose_keys

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
PACKAGE = REPO / "src" / "socialbench"
#: The docs whose names are checked (CHANGELOG.md is history: it names what no longer exists).
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "docs" / "decisions").glob("*.md"))]
#: First path segments that are folders of the repository itself (a path under them must exist).
REPO_ROOTS = {"src", "tests", "rules", "scripts", "perf", "docs", "report", "requirements", "data/corpus"}
#: First path segments that are the package's own folders (a path under them is read under src/socialbench);
#: "results" is also the output folder, so only its .py files are checked.
PACKAGE_TOPS = {"core", "backends", "retrievers", "media", "acquire", "stages", "moca", "meetingtom"}
#: What ends a file name, not a Python attribute (`mlflow.db`, `params.yaml`, `all.md`).
FILE_SUFFIX = re.compile(
    r"\.(py|ya?ml|md|json|jsonl|csv|txt|tex|png|pdf|smk|html|db|lock|mp4|wav|avi|zip|sh|toml|cfg|ini|js|jpg"
    r"|sha256|rst|xml|log|gz|tar|whl|gguf|dvc|part|pt|bin|safetensors|sqlite|conf|typ|mkv|webm|mov)$"
)
PATH = re.compile(r"^[\w.-]+(?:/[\w.-]+)+/?$")
DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
TEST_REF = re.compile(r"^(tests/[\w/.-]+\.py)::(\w+)$")
#: Bare names the code must contain: constants with an underscore (`LOCK_TTL_S`) and private names (`_BUILTIN`).
CONSTANT = re.compile(r"^_?[A-Z][A-Z0-9]*_[A-Z0-9_]+$|^_[A-Za-z]\w*$")
#: Host names (`api.openai.com`) read like dotted names; their last segment tells them apart.
TLDS = {"com", "org", "net", "io", "dev", "ai", "uk", "de", "edu", "co"}
#: Names the docs cite that other tools define: Snakemake sets the thread count of a job's libraries.
ELSEWHERE = {"OMP_NUM_THREADS"}
SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.DOTALL | re.MULTILINE)


def spans(text: str) -> list[str]:
    """The backticked spans of a Markdown text outside fenced blocks, whitespace runs as one space, with
    the first cell of each row of a `| before | now |` table blanked (old names, on purpose)."""
    text = FENCE.sub("", text)
    lines, history = [], False
    for line in text.splitlines():
        if line.startswith("|"):
            cells = line.split("|")
            if [c.strip() for c in cells[1:3]] == ["before", "now"]:
                history = True
            elif history and len(cells) > 2:
                line = "|".join(["", "", *cells[2:]])
        else:
            history = False
        lines.append(line)
    return [" ".join(m.group(2).split()) for m in SPAN.finditer("\n".join(lines))]


@functools.cache
def repo_files() -> tuple[frozenset[str], frozenset[str]]:
    """(files, folders) of the checkout: git's tracked and untracked-but-not-ignored files."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):  # no git (an unpacked archive): the source folders
        roots = [REPO / r for r in REPO_ROOTS if "/" not in r] + [REPO / "data" / "corpus"]
        out = [p.relative_to(REPO).as_posix() for r in roots for p in r.rglob("*") if p.is_file()]
        out += [p.name for p in REPO.iterdir() if p.is_file()]
    files = frozenset(f for f in out if (REPO / f).exists())
    folders = frozenset(str(p) for f in files for p in Path(f).parents if str(p) != ".")
    return files, folders


@functools.cache
def modules() -> dict[tuple[str, ...], Path]:
    """(dotted parts under socialbench) -> file, for every module and package of the package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if "__pycache__" not in parts:
            out[parts] = path
    return out


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple):
        return [n for e in node.elts for n in _targets(e)]
    return []


def _names_in(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names a module or class body defines: functions, classes, assignments, imports."""
    found: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            found |= {n: node for t in node.targets for n in _targets(t)}
        elif isinstance(node, ast.AnnAssign):
            found |= dict.fromkeys(_targets(node.target), node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0]: node for a in node.names}
        elif isinstance(node, (ast.If, ast.Try)):
            found |= _names_in(node.body + getattr(node, "orelse", []))
    return found


@functools.cache
def module_names(path: Path) -> dict[str, ast.AST]:
    return _names_in(ast.parse(path.read_text(encoding="utf-8")).body)


def defined(parts: tuple[str, ...], rest: tuple[str, ...]) -> bool:
    """Whether ``rest`` (a name, or a class and its member) is defined in the module ``parts``, or is
    a module inside that package."""
    if not rest:
        return True
    if (*parts, rest[0]) in modules():
        return defined((*parts, rest[0]), rest[1:])
    node = module_names(modules()[parts]).get(rest[0])
    if node is None:
        return False
    if len(rest) == 1:
        return True
    return isinstance(node, ast.ClassDef) and len(rest) == 2 and class_has(node, rest[1])


def class_has(node: ast.ClassDef, member: str) -> bool:
    """A member of the class or of a base class defined in the package (by name)."""
    if member in _names_in(node.body):
        return True
    bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
    return any(class_has(c, member) for base in bases for c in classes().get(base, []) if c is not node)


@functools.cache
def classes() -> dict[str, list[ast.ClassDef]]:
    out: dict[str, list[ast.ClassDef]] = {}
    for path in modules().values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, []).append(node)
    return out


def names_code(segments: tuple[str, ...]) -> bool | None:
    """True when the dotted name is a module or a name in one (the module by its full dotted name under
    socialbench or the tail of its path); False when its head names a module but nothing matches; None
    when it does not read as the package's code."""
    if segments[0] == "socialbench":
        segments = segments[1:]
        if not segments:
            return True
    heads = False
    for parts in modules():
        for k in range(1, min(len(segments), len(parts)) + 1):
            if parts[-k:] != segments[:k]:
                continue
            heads = True
            if defined(parts, segments[k:]):
                return True
    if heads:
        return False
    if segments[0] in classes() and len(segments) == 2:
        return any(class_has(c, segments[1]) for c in classes()[segments[0]])
    return None


CODE_SUFFIXES = {".py", ".smk", ".sh", ".json", ".yaml", ".txt", ".js"}


@functools.cache
def code_words() -> frozenset[str]:
    """Every word of the code: the package, the tests, the rules, the scripts, the perf scripts."""
    words: set[str] = set()
    roots = [REPO / "src", REPO / "tests", REPO / "rules", REPO / "scripts", REPO / "perf"]
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and path.suffix in CODE_SUFFIXES and path != HERE:
                words |= set(re.findall(r"\w+", path.read_text(encoding="utf-8", errors="replace")))
    words |= set(re.findall(r"\w+", (REPO / "Snakefile").read_text(encoding="utf-8")))
    return frozenset(words)


def path_problem(span: str) -> str | None:
    """Why a path-like span names nothing (None: it exists, or it is no path of the repository)."""
    files, folders = repo_files()
    path = span.rstrip("/")
    if any(path.startswith(root + "/") or path == root for root in REPO_ROOTS):
        return None if path in files or path in folders else "no such file or folder in the repository"
    head = path.split("/")[0]
    attr = re.match(r"^(?P<module>[\w/]+)\.(?P<name>[A-Za-z_]\w*)$", path)
    if attr and not FILE_SUFFIX.search(path):
        module = f"{attr['module']}.py"
        hits = [f for f in files if f.startswith("src/socialbench/") and f.endswith("/" + module)]
        if not hits:
            return "no such module"
        parts = [Path(f).relative_to("src/socialbench").with_suffix("").parts for f in hits]
        return None if any(defined(p, (attr["name"],)) for p in parts) else f"{attr['name']} is not defined there"
    if path.endswith(".py") or head in PACKAGE_TOPS:
        under = [f for f in files | folders if f == f"src/socialbench/{path}" or f.endswith("/" + path)]
        return None if under else "no such file or folder in the package"
    return None


def params_keys(span: str, schemas: dict, params: dict) -> list[str]:
    """The params keys a span may stand for; a key under an ``options`` map (a backend's or retriever's
    free-form options, checked by its own schema) stands for any key there."""
    keys = prose_keys(span, schemas, params) or []
    return [re.sub(r"(\.options)\..*$", r"\1.<key>", k) for k in keys]


def problem(span: str, schemas: dict, params: dict) -> str | None:
    """Why a backticked span names something that does not exist (None: it exists or names no code)."""
    span = re.sub(r"\(.*\)$", "", span)  # `ResultsHooks.stability_tables(...)`: the name called
    if test := TEST_REF.match(span):
        file = REPO / test[1]
        if not file.is_file():
            return "no such test file"
        return None if test[2] in module_names(file) else f"{test[1]} defines no {test[2]}"
    if re.search(r"[\s<>{}*$=\[\]\"',|~]|^\.|^-|://", span) or ":" in span:
        return None
    if PATH.match(span):
        return path_problem(span)
    if DOTTED.match(span) and not FILE_SUFFIX.search(span) and span.rsplit(".", 1)[1] not in TLDS:
        code = names_code(tuple(span.split(".")))
        if code is False and (keys := params_keys(span, schemas, params)):
            return None if any(is_params_key(k, schemas) for k in keys) else "neither code nor a params key"
        return "no such module or name in the package" if code is False else None
    if CONSTANT.match(span) and span not in code_words() | ELSEWHERE:
        return "no such name in the code"
    return None


def problems(text: str) -> list[tuple[str, str]]:
    schemas, params = load_schemas(), yaml.safe_load(PARAMS.read_text(encoding="utf-8"))
    return [(s, why) for s in spans(text) if (why := problem(s, schemas, params))]


def test_every_name_the_docs_cite_exists():
    found = {doc.relative_to(REPO).as_posix(): problems(doc.read_text(encoding="utf-8")) for doc in DOCS}
    assert not {doc: p for doc, p in found.items() if p}


def test_the_docs_checked_include_the_decision_records():
    names = {doc.relative_to(REPO).as_posix() for doc in DOCS}
    assert {"README.md", "docs/architecture.md", "docs/decisions.md"} <= names
    assert any(n.startswith("docs/decisions/") for n in names)


def test_made_up_names_are_refused():
    doc = textwrap.dedent("""\
    A fixture doc. Real: `src/socialbench/core/paths.py`, `core/benchmarks.py`, `socialbench.core.paths`,
    `paths.check_io`, `stages/dvc_yaml.code_deps`, `ResultsHooks.stability_tables(...)`, `LOG_LAYOUT`,
    `tests/test_docs_names.py::test_made_up_names_are_refused`, `moca.tables.human` (a params key),
    `results/tables/moca/all.md` (an output), `models.<m>.options`.
    Made up: `src/socialbench/core/nothing.py`, `core/nothing.py`, `socialbench.core.nothing`,
    `paths.no_such_function`, `stages/dvc_yaml.no_such_name`, `Benchmark.no_such_hook`, `_BUILTIN`,
    `NO_SUCH_CONSTANT`, `tests/test_docs_names.py::test_nothing`, `moca.tables.no_such_key`, `rules/nothing.smk`.

    ```
    `core/in_a_fence.py` is a command example, not checked
    ```

    | before | now |
    |---|---|
    | `core/old_name.py` | `core/paths.py` |
    """)
    assert [s for s, _ in problems(doc)] == [
        "src/socialbench/core/nothing.py",
        "core/nothing.py",
        "socialbench.core.nothing",
        "paths.no_such_function",
        "stages/dvc_yaml.no_such_name",
        "Benchmark.no_such_hook",
        "_BUILTIN",
        "NO_SUCH_CONSTANT",
        "tests/test_docs_names.py::test_nothing",
        "moca.tables.no_such_key",
        "rules/nothing.smk",
    ]


RECORD_SECTIONS = ["## Context", "## Decision", "## Consequence", "## Held by"]


def test_every_decision_record_has_its_sections_and_names_the_tests_that_hold_it():
    records = sorted((REPO / "docs" / "decisions").glob("*.md"))
    index = (REPO / "docs" / "decisions.md").read_text(encoding="utf-8")
    for record in records:
        text = record.read_text(encoding="utf-8")
        heads = [line for line in text.splitlines() if line in RECORD_SECTIONS]
        assert heads == RECORD_SECTIONS, f"{record.name}: sections {heads}"
        held = text.split("## Held by", 1)[1]
        assert [s for s in spans(held) if TEST_REF.match(s)], f"{record.name}: Held by names no test"
        assert f"(decisions/{record.name})" in index, f"{record.name} is not in docs/decisions.md's index"


def test_every_mention_of_a_decision_record_names_one():
    """Plain-text mentions too (`docs/decisions/<record>.md` in docstrings, CHANGELOG.md, params.yaml),
    so a renamed record leaves no dead link."""
    sources = [*DOCS, REPO / "CHANGELOG.md", REPO / "params.yaml", *sorted(PACKAGE.rglob("*.py"))]
    named = {
        (path.relative_to(REPO).as_posix(), m)
        for path in sources
        for m in re.findall(r"(?:docs/)?decisions/([\w-]+)\.md", path.read_text(encoding="utf-8"))
    }
    records = {p.stem for p in (REPO / "docs" / "decisions").glob("*.md")}
    assert not sorted((where, m) for where, m in named if m not in records)
