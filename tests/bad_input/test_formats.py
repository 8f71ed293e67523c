"""Bad input: files that are not what they claim (docs/bad-input.md, classes "strict JSON",
"unreadable file", "taxonomy"): a value JSON does not have, text that is not UTF-8, no file at all,
a taxonomy that is no clean YAML or JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bad_input.cases import (
    GOOD,
    SCORE_FILE,
    Case,
    book_on,
    frames,
    infer,
    prepare,
    run_case,
    run_with,
    score,
    tables,
    write,
)


def instances_line(line: str) -> str:
    """A file of one good instance and one bad line."""
    return GOOD + "\n" + line + "\n"


def bad_instances(line: str, command=infer):
    def setup(root: Path) -> list[str]:
        write("data/bad.jsonl", instances_line(line))
        return command()

    return setup


def bad_predictions(text: str | bytes):
    def setup(root: Path) -> list[str]:
        write("results/bad.jsonl", text)
        return score("results/bad.jsonl")

    return setup


def bad_taxonomy(text: str | bytes, name: str = "tax.yaml"):
    def setup(root: Path) -> list[str]:
        write(name, text)
        return score("results/p.jsonl", "data/i.jsonl", "--taxonomy", name)

    return setup


def bad_score_file(text: str):
    def setup(root: Path) -> list[str]:
        write(SCORE_FILE, text)
        return tables()

    return setup


DEEP = "[" * 3000 + "]" * 3000


CASES = [
    # -- strict JSON: a value JSON does not have, or one that would silently win -----------------------
    Case(
        "infer-nan",
        "strict JSON",
        bad_instances('{"id": "x", "text": NaN}'),
        "record line 2, field 'text': line 2: NaN is not a number JSON allows",
    ),
    Case(
        "infer-infinity",
        "strict JSON",
        bad_instances('{"id": "x", "transcript": -Infinity}'),
        "field 'transcript': line 2: -Infinity",
    ),
    Case("infer-overflow", "strict JSON", bad_instances('{"id": "x", "n": 1e999}'), "too large to be a finite number"),
    Case(
        "infer-duplicate-key",
        "strict JSON",
        bad_instances(GOOD[:-1] + ', "label": "praise"}'),
        "field 'label': line 2: duplicate key",
    ),
    Case("infer-deep-nesting", "strict JSON", bad_instances(DEEP), "line 2: nested deeper than 64 levels"),
    Case(
        "infer-huge-int",
        "strict JSON",
        bad_instances('{"id": ' + "7" * 5000 + "}"),
        "field 'id': line 2: a number with 5000 digits",
    ),
    Case("infer-lone-surrogate", "strict JSON", bad_instances('{"id": "x", "text": "\\udc00"}'), "lone surrogate"),
    Case("infer-not-json", "strict JSON", bad_instances("{id: x}"), "record line 2: line 2 is not valid JSON"),
    Case("infer-not-an-object", "strict JSON", bad_instances("[1, 2]"), "line 2 is not a JSON object"),
    Case(
        "score-predictions-nan",
        "strict JSON",
        bad_predictions('{"id": "i0", "label": NaN}\n'),
        "field 'label': line 1: NaN",
    ),
    Case(
        "score-predictions-duplicate",
        "strict JSON",
        bad_predictions('{"id": "i0", "id": "i1"}\n'),
        "field 'id': line 1: duplicate key",
    ),
    Case(
        "score-predictions-deep",
        "strict JSON",
        bad_predictions('{"id": "i0", "x": ' + DEEP + "}\n"),
        "nested deeper than 64 levels",
    ),
    Case(
        "prepare-nan",
        "strict JSON",
        bad_instances('{"id": "x", "text": Infinity}', prepare),
        "field 'text': line 2: Infinity",
    ),
    Case(
        "prepare-duplicate",
        "strict JSON",
        bad_instances(GOOD[:-1] + ', "scenario": "stance"}', prepare),
        "field 'scenario': line 2: duplicate key",
    ),
    Case("prepare-deep", "strict JSON", bad_instances(DEEP, prepare), "nested deeper than 64 levels"),
    Case(
        "frames-input-nan",
        "strict JSON",
        run_with(frames("data/bad.jsonl"), lambda r: write("data/bad.jsonl", '{"id": "v", "t": NaN}\n')),
        "record line 1, field 't'",
    ),
    Case(
        "tables-score-nan",
        "strict JSON",
        bad_score_file('{"intent": {"label": NaN}}'),
        "field 'intent.label': NaN is not a number JSON allows",
    ),
    Case(
        "tables-score-duplicate",
        "strict JSON",
        bad_score_file('{"intent": {}, "intent": {}}'),
        "field 'intent': duplicate key",
    ),
    Case("tables-score-truncated", "strict JSON", bad_score_file('{"intent": {"label": 5'), "not valid JSON"),
    # -- a file that is not text, or no file ---------------------------------------------------------------
    Case(
        "infer-non-utf8",
        "unreadable file",
        run_with(infer(), lambda r: write("data/bad.jsonl", GOOD.encode() + b'\n{"t": "caf\xe9"}\n')),
        "not UTF-8 text (byte 0xe9 at offset",
    ),
    Case(
        "score-non-utf8", "unreadable file", bad_predictions(b"\xff\xfe{}\n"), "not UTF-8 text (byte 0xff at offset 0)"
    ),
    Case(
        "infer-empty",
        "unreadable file",
        run_with(infer(), lambda r: write("data/bad.jsonl", "\n\n")),
        "no records: the file is empty",
    ),
    Case(
        "infer-missing", "unreadable file", run_with(infer("data/nothere.jsonl")), "data/nothere.jsonl: file not found"
    ),
    Case(
        "infer-folder-as-instances",
        "unreadable file",
        run_with(infer("data")),
        "data: is a folder, not a file (--instances takes a file)",
    ),
    Case(
        "score-folder-as-predictions",
        "unreadable file",
        run_with(score("results")),
        "results: is a folder, not a file (--predictions takes a file)",
    ),
    Case(
        "cache-stats-not-a-cache",
        "unreadable file",
        run_with(["cache", "stats", "--path", "params.yaml"]),
        "params.yaml: is not a request cache",
    ),
    Case(
        "cache-explain-folder-as-instances",
        "unreadable file",
        run_with(["cache", "explain", "--instances", "data", "--model", "random"]),
        "data: is a folder, not a file (--instances takes a file)",
    ),
    Case(
        "cache-stats-folder",
        "unreadable file",
        run_with(["cache", "stats", "--path", "data"]),
        "data: is a folder, not a request cache file",
    ),
    Case(
        "meetingtom-no-annotations",
        "unreadable file",
        run_with(["meetingtom", "you-events", "--ami", "nothere", "--out", "results/y.jsonl"]),
        "nothere: not a folder",
    ),
    # -- taxonomies -------------------------------------------------------------------------------------------
    Case(
        "taxonomy-duplicate",
        "taxonomy",
        bad_taxonomy("labels: {intent: [mock]}\nlabels: {intent: [mock]}\n"),
        "tax.yaml: line 2, column 1: duplicate key 'labels'",
    ),
    Case(
        "taxonomy-alias",
        "taxonomy",
        bad_taxonomy("labels: &l {intent: [mock]}\nmechanisms: *l\n"),
        "tax.yaml: line 2, column 13: the alias *l is not allowed",
    ),
    Case(
        "taxonomy-syntax",
        "taxonomy",
        bad_taxonomy("labels: {intent: [mock\n"),
        "tax.yaml: not valid YAML: line 2, column 1",
    ),
    Case(
        "taxonomy-non-utf8",
        "taxonomy",
        bad_taxonomy(b"labels: {intent: [caf\xe9]}\n"),
        "tax.yaml: not UTF-8 text (byte 0xe9 at offset 21)",
    ),
    Case(
        "taxonomy-json-nan",
        "taxonomy",
        bad_taxonomy('{"labels": {"intent": [NaN]}}', "tax.json"),
        "tax.json, field 'labels.intent[0]': NaN",
    ),
    Case(
        "taxonomy-huge-value-capped",
        "taxonomy",
        bad_taxonomy("labels: {intent: " + "x" * 2_000_000 + "}\n"),
        "tax.yaml",
    ),
    Case(
        "book-tracking-store-a-folder",
        "unreadable file",
        book_on("sqlite:///data"),
        "data: names a folder, not an SQLite file (mlflow.tracking_uri, or MLFLOW_TRACKING_URI): name the database"
        " file, e.g. sqlite:///data/mlflow.db",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing_outside_its_outputs(case, ws, capsys, monkeypatch):
    run_case(case, ws, capsys, monkeypatch)
