"""docs/decisions.md's one table of departures from the papers: its shape, and that every params key it
names as the switch is a key the params schemas define (a renamed or removed param breaks this test)."""

import json
import re
from pathlib import Path

from socialbench.meetingtom.eval.prompts import SETTINGS as MEETINGTOM_METHOD_SETTINGS
from socialbench.moca.methods.codar import SETTINGS as CODAR_SETTINGS

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
