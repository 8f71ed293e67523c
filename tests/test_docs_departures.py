"""docs/decisions.md's one table of departures from the papers: its shape, that every params key it
names as the switch is a key the params schemas define (a renamed or removed param breaks this test),
and that every default it quotes (a backticked `<params key>: <value>`) is that key's default: the
params schema's, the method's own (CoDAR's settings under method_options) or the value params.yaml
sets (a changed default breaks this test)."""

import json
import re
from pathlib import Path

import yaml

from socialbench.meetingtom.eval.prompts import SETTINGS as MEETINGTOM_METHOD_SETTINGS
from socialbench.moca.schema.methods import CODAR_DEFAULTS
from socialbench.moca.schema.methods import SETTINGS as CODAR_SETTINGS

REPO = Path(__file__).resolve().parents[1]
DECISIONS = REPO / "docs" / "decisions.md"
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
#: The defaults of method settings the schemas leave to the method, by benchmark (moca.method_options.codar).
METHOD_DEFAULTS = {"moca": {"codar": CODAR_DEFAULTS}}
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
    for key in ("models.<m>.max_tokens", "moca.tables.figure6", "moca.method_options.codar.invalid_tuple"):
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
