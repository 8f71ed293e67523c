"""docs/decisions.md's one table of departures from the papers: its shape, that every params key it
names as the switch is a key the params schemas define (a renamed or removed param breaks this test),
and that every default it quotes (a backticked `<params key>: <value>`) is that key's default: the
params schema's, the method's own (CoDAR's settings under method_options) or the value params.yaml
sets (a changed default breaks this test). The same for the prose of the decision records under
docs/decisions/ (issue 40; issue 42 moved the sections there): every params key they quote (in full,
or under its benchmark's section: `clips.tasks`) is one the schemas define, and every
default they quote (a `<key>: <value>` span right after "default") is that key's default."""

import functools
import json
import re
from pathlib import Path

import yaml

from socialbench.meetingtom.eval.prompts import SETTINGS as MEETINGTOM_METHOD_SETTINGS
from socialbench.meetingtom.eval.prompts import settings_of as meetingtom_settings_of
from socialbench.moca.schema.methods import CODAR_DEFAULTS
from socialbench.moca.schema.methods import SETTINGS as CODAR_SETTINGS

REPO = Path(__file__).resolve().parents[1]
DECISIONS = REPO / "docs" / "decisions.md"
RECORDS = REPO / "docs" / "decisions"
SECTION = "## Departures from the papers"
COLUMNS = ["benchmark", "topic", "paper says", "we do", "why", "param to switch"]
SCHEMAS = {
    "core": REPO / "src/socialbench/core/schemas/params.schema.json",
    "moca": REPO / "src/socialbench/moca/schema/params.schema.json",
    "meetingtom": REPO / "src/socialbench/meetingtom/schema/params.schema.json",
}
# method_options.<m> is a free-form object in the schemas (each method checks its own settings), so a key
# under it is checked against the settings the benchmark's methods accept.
METHOD_SETTINGS = {"moca": CODAR_SETTINGS, "meetingtom": frozenset(MEETINGTOM_METHOD_SETTINGS)}
KEY = re.compile(r"^[a-z_][a-z0-9_]*(\.([a-z_][a-z0-9_]*|<[^<>]+>))+$")
#: A quoted default: `<params key>: <value>` in one backticked span (the value as YAML writes it).
QUOTED_DEFAULT = re.compile(r"^(?P<key>[a-z_][a-z0-9_]*(?:\.(?:[a-z_][a-z0-9_]*|<[^<>]+>))+): (?P<value>.+)$")
#: The defaults of method settings the schemas leave to the method, by benchmark (moca.method_options.codar;
#: every MeetingToM method takes the same settings, with the defaults ``settings_of`` gives).
METHOD_DEFAULTS = {
    "moca": {"codar": CODAR_DEFAULTS},
    "meetingtom": dict.fromkeys(("no_prompt", "naive_cot", "task_cot", "ecot"), meetingtom_settings_of(None)),
}
PARAMS = REPO / "params.yaml"


def departures_table(text: str) -> list[list[str]]:
    """The rows (header first) of the first Markdown table after the section heading, cells stripped."""
    lines = text[text.index(SECTION) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return [rows[0], *rows[2:]]  # without the |---| line


def param_keys(cell: str) -> list[str]:
    """The backticked spans of a cell that are dotted params keys (values and names without a dot are not)."""
    return [s for s in re.findall(r"`([^`]+)`", cell) if KEY.match(s)]


def deref(node: dict, root: dict) -> dict:
    while "$ref" in node:
        node = root["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def children(node: dict, segment: str) -> list[dict]:
    """The schemas a key segment can name under ``node``; a ``<...>`` placeholder stands for any name of
    a map (additionalProperties, patternProperties), a literal name also for a declared property."""
    found = []
    if not segment.startswith("<"):
        found += [node["properties"][segment]] if segment in node.get("properties", {}) else []
    found += [
        s for p, s in node.get("patternProperties", {}).items() if segment.startswith("<") or re.search(p, segment)
    ]
    if isinstance(node.get("additionalProperties"), dict):
        found.append(node["additionalProperties"])
    elif (
        segment.startswith("<")
        and node.get("type") == "object"
        and not {"properties", "additionalProperties"} & set(node)
    ):
        found.append({})  # a free-form map checked elsewhere (a backend's options: <module>.options.json)
    return found


def schema_has(node: dict, segments: list[str], root: dict) -> bool:
    node = deref(node, root)
    if not segments:
        return True
    return any(schema_has(child, segments[1:], root) for child in children(node, segments[0]))


def is_params_key(key: str, schemas: dict[str, dict]) -> bool:
    segments = key.split(".")
    if segments[0] in METHOD_SETTINGS and len(segments) == 4 and segments[1] == "method_options":
        return segments[3] in METHOD_SETTINGS[segments[0]]
    if segments[0] in METHOD_SETTINGS:
        return schema_has(schemas[segments[0]], segments[1:], schemas[segments[0]])
    return schema_has(schemas["core"], segments, schemas["core"])


def load_schemas() -> dict[str, dict]:
    return {name: json.loads(path.read_text(encoding="utf-8")) for name, path in SCHEMAS.items()}


def test_departures_table_has_the_agreed_columns():
    header, *rows = departures_table(DECISIONS.read_text(encoding="utf-8"))
    assert header == COLUMNS
    assert rows and all(len(r) == len(COLUMNS) and all(r) for r in rows), "a row with a missing or empty cell"


def test_each_departure_belongs_to_moca_meetingtom_or_both():
    _, *rows = departures_table(DECISIONS.read_text(encoding="utf-8"))
    assert {r[0] for r in rows} <= {"MoCA", "MeetingToM", "both"}


def test_each_departure_names_a_param_or_says_none():
    _, *rows = departures_table(DECISIONS.read_text(encoding="utf-8"))
    bare = [r[1] for r in rows if not param_keys(r[5]) and not r[5].startswith("none: ")]
    assert not bare, f"rows whose switch is neither a params key nor 'none: <why>': {bare}"


def test_every_param_key_of_the_departures_table_is_in_the_params_schemas():
    _, *rows = departures_table(DECISIONS.read_text(encoding="utf-8"))
    schemas = load_schemas()
    unknown = [(r[1], k) for r in rows for k in param_keys(r[5]) if not is_params_key(k, schemas)]
    assert not unknown, f"keys the params schemas do not define: {unknown}"


def test_key_check_follows_maps_refs_and_method_settings():
    schemas = load_schemas()
    for key in (
        "models.<m>.max_tokens",
        "moca.tables.figure6",
        "moca.method_options.codar.invalid_tuple",
        "models.<m>.options.<key>",
    ):
        assert is_params_key(key, schemas), key


def test_key_check_refuses_keys_the_schemas_lack():
    schemas = load_schemas()
    for key in ("moca.answer.extra_key", "models.<m>.max_token", "meetingtom.method_options.<m>.answer_mode"):
        assert not is_params_key(key, schemas), key


def test_the_per_section_departure_tables_are_gone():
    headers = [
        line
        for line in DECISIONS.read_text(encoding="utf-8").splitlines()
        if re.match(r"^\|.*\| param to switch \|$", line)
    ]
    assert len(headers) == 1, headers


# ---- the defaults the table quotes ------------------------------------------------------------------
def quoted_defaults(row: list[str]) -> list[tuple[str, str]]:
    """(key, value) of every backticked `<params key>: <value>` span in a row's cells."""
    return [
        (m["key"], m["value"])
        for cell in row
        for span in re.findall(r"`([^`]+)`", cell)
        if (m := QUOTED_DEFAULT.match(span))
    ]


def schema_defaults(node: dict, segments: list[str], root: dict) -> list:
    node = deref(node, root)
    if not segments:
        return [node["default"]] if "default" in node else []
    return [d for child in children(node, segments[0]) for d in schema_defaults(child, segments[1:], root)]


def params_values(node, segments: list[str]) -> list:
    """The values params.yaml sets at a key; a ``<...>`` segment stands for every entry of a map."""
    if not segments:
        return [node]
    if not isinstance(node, dict):
        return []
    head, rest = segments[0], segments[1:]
    if head.startswith("<"):
        return [v for child in node.values() for v in params_values(child, rest)]
    return params_values(node[head], rest) if head in node else []


def known_defaults(key: str, schemas: dict[str, dict], params: dict) -> list:
    """What a quoted default may be: the schema's default, the method's own, or params.yaml's value."""
    segments = key.split(".")
    found = params_values(params, segments)
    if segments[0] in METHOD_SETTINGS and len(segments) == 4 and segments[1] == "method_options":
        methods = METHOD_DEFAULTS.get(segments[0], {})
        names = methods if segments[2].startswith("<") else [segments[2]]
        found += [methods[m][segments[3]] for m in names if m in methods and segments[3] in methods[m]]
    elif segments[0] in METHOD_SETTINGS:
        found += schema_defaults(schemas[segments[0]], segments[1:], schemas[segments[0]])
    else:
        found += schema_defaults(schemas["core"], segments, schemas["core"])
    return found


def wrong_defaults(rows: list[list[str]], schemas: dict[str, dict], params: dict) -> list[tuple[str, str, str, list]]:
    """(topic, key, quoted value, the defaults it may be) of every quoted default that is none of them."""
    out = []
    for r in rows:
        for key, value in quoted_defaults(r):
            allowed = known_defaults(key, schemas, params)
            if yaml.safe_load(value) not in allowed:
                out.append((r[1], key, value, allowed))
    return out


def test_every_default_the_departures_table_quotes_is_the_params_default():
    _, *rows = departures_table(DECISIONS.read_text(encoding="utf-8"))
    assert any(quoted_defaults(r) for r in rows), "the table quotes no default"
    params = yaml.safe_load(PARAMS.read_text(encoding="utf-8"))
    assert not wrong_defaults(rows, load_schemas(), params)


def test_the_default_check_refuses_a_value_that_is_no_default():
    params = yaml.safe_load(PARAMS.read_text(encoding="utf-8"))
    rows = [
        ["MoCA", "frames", "", "`moca.frames: 16`", "", ""],
        ["MoCA", "side", "", "`media.frame_max_side: 448`", "", ""],
        ["MoCA", "rounds", "", "`moca.method_options.codar.revision_rounds: 3`", "", ""],
        ["MoCA", "tokens", "", "`models.<m>.max_tokens: 4096`", "", ""],
    ]
    assert [w[0] for w in wrong_defaults(rows, load_schemas(), params)] == ["frames", "rounds"]


# ---- the prose sections: the option names and defaults they quote ------------------------------------
SRC = REPO / "src" / "socialbench"
#: A span that names a file (`mlflow.db`, `moca_rules.yaml`), not a params key.
FILE_NAME = re.compile(r"\.(py|ya?ml|md|json|jsonl|csv|txt|tex|png|pdf|smk|html|db|lock|mp4|wav|avi|zip)$")
#: A quoted default in prose: a `<key>: <value>` span right after "default" ("default: ", "defaults ").
DEFAULT_BEFORE = re.compile(r"defaults?:?\s*$", re.IGNORECASE)
BENCHMARKS = ("moca", "meetingtom")


def code_spans(text: str) -> list[tuple[str, str]]:
    """(the text before it, the span) of every Markdown code span, a span's whitespace runs as one space
    (a span may wrap); a span opened by N backticks closes at the next run of exactly N."""
    return [
        (text[: m.start()], " ".join(m.group(2).split()))
        for m in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", text, re.DOTALL)
    ]


def prose(text: str) -> str:
    """docs/decisions.md and the records without the departures table (the tests above check the table)."""
    lines = text.splitlines()
    at = lines.index(SECTION)
    start = next(i for i in range(at, len(lines)) if lines[i].startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "\n".join(lines[:start] + lines[end:])


@functools.cache
def defines(path: Path, name: str) -> bool:
    """Whether a module file defines ``name`` (a function, class or module-level name) or is a package
    holding a module of that name."""
    if path.is_dir():
        return (path / f"{name}.py").exists() or (path / name).is_dir()
    text = path.read_text(encoding="utf-8")
    return bool(re.search(rf"^\s*(?:async\s+def|def|class)\s+{name}\b|^{name}\s*[:=]", text, re.MULTILINE))


@functools.cache
def modules() -> list[tuple[tuple[str, ...], Path]]:
    """(dotted parts under socialbench, path) of every module file and package of this package."""
    files = [(p.relative_to(SRC).with_suffix("").parts, p) for p in SRC.rglob("*.py")]
    packages = [(p.parent.relative_to(SRC).parts, p.parent) for p in SRC.rglob("__init__.py")]
    return [(parts, path) for parts, path in files + packages if parts]


def names_code(span: str) -> bool:
    """Whether a dotted span names this package's code: a module (``meetingtom.schema.questions``, or the
    tail of a module's path: ``tables``) or a name defined in one (``tables.output_files``)."""
    segments = tuple(span.split("."))
    for parts, path in modules():
        for k in range(1, min(len(segments), len(parts)) + 1):
            if parts[-k:] != segments[:k]:
                continue
            rest = segments[k:]
            if not rest or (len(rest) == 1 and defines(path, rest[0])):
                return True
    return False


def prose_keys(span: str, schemas: dict[str, dict], params: dict) -> list[str] | None:
    """The full params keys a prose span may stand for (a key under a benchmark's section may be written
    without the benchmark: `clips.tasks`), or None when the span names no params key (a value, a file,
    this package's code)."""
    key = m["key"] if (m := QUOTED_DEFAULT.match(span)) else span
    if not KEY.match(key) or FILE_NAME.search(key) or names_code(key):
        return None
    top = set(params) | set(schemas["core"].get("properties", {}))
    head = key.split(".")[0]
    if head in top:
        return [key]
    homes = [b for b in BENCHMARKS if head in set(params.get(b) or {}) | set(schemas[b].get("properties", {}))]
    return [f"{b}.{key}" for b in homes] or None


def unknown_prose_keys(text: str, schemas: dict[str, dict], params: dict) -> list[str]:
    """The prose spans that read as params keys but are none the schemas define."""
    out = []
    for _, span in code_spans(prose(text)):
        keys = prose_keys(span, schemas, params)
        if keys is not None and not any(is_params_key(k, schemas) for k in keys):
            out.append(span)
    return out


def wrong_prose_defaults(text: str, schemas: dict[str, dict], params: dict) -> list[tuple[str, list]]:
    """(span, the defaults it may be) of every default the prose quotes that is none of them."""
    out = []
    for before, span in code_spans(prose(text)):
        m = QUOTED_DEFAULT.match(span)
        if not m or not DEFAULT_BEFORE.search(before[-40:]):
            continue
        keys = prose_keys(span, schemas, params) or []
        allowed = [d for k in keys if is_params_key(k, schemas) for d in known_defaults(k, schemas, params)]
        if yaml.safe_load(m["value"]) not in allowed:
            out.append((span, allowed))
    return out


def decisions_text() -> str:
    """docs/decisions.md (the departures table, the index) and every decision record, as one text."""
    records = [p.read_text(encoding="utf-8") for p in sorted(RECORDS.glob("*.md"))]
    return "\n\n".join([DECISIONS.read_text(encoding="utf-8"), *records])


def test_the_decision_records_are_read_with_the_table():
    text = decisions_text()
    assert len(list(RECORDS.glob("*.md"))) >= 10 and "## Held by" in prose(text)


def test_every_params_key_the_prose_quotes_is_in_the_params_schemas():
    params = yaml.safe_load(PARAMS.read_text(encoding="utf-8"))
    assert not unknown_prose_keys(decisions_text(), load_schemas(), params)


def test_every_default_the_prose_quotes_is_the_params_default():
    params = yaml.safe_load(PARAMS.read_text(encoding="utf-8"))
    text = decisions_text()
    assert [s for _, s in code_spans(prose(text)) if QUOTED_DEFAULT.match(s)], "the prose quotes no default"
    assert not wrong_prose_defaults(text, load_schemas(), params)


def test_the_prose_key_check_refuses_a_key_the_schemas_lack():
    params = yaml.safe_load(PARAMS.read_text(encoding="utf-8"))
    text = f"{SECTION}\n\n| a |\n|---|\n\nset `clips.taskz` or `meetingtom.clips.tasks`; see `tables.output_files`."
    assert unknown_prose_keys(text, load_schemas(), params) == ["clips.taskz"]


def test_the_prose_default_check_refuses_a_default_that_is_none():
    params = yaml.safe_load(PARAMS.read_text(encoding="utf-8"))
    text = (
        f"{SECTION}\n\n| a |\n|---|\n\n(default: `meetingtom.clips.tasks: [you, consensus]`; default"
        " `clips.utterance_gap_s: 1.0`); `task2_1.include_speaker: true` lists the speaker too."
    )
    assert [s for s, _ in wrong_prose_defaults(text, load_schemas(), params)] == [
        "meetingtom.clips.tasks: [you, consensus]"
    ]
