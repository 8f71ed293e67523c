"""Bad input across every stage command (issue 12, point 10): each case runs ``socialbench ...`` (through
``socialbench.cli.main``, as the installed command does) in a small repository and asserts

* exit status 2,
* one line on stderr, ``error: ...``, capped in length, naming what is at fault,
* and that no file was written, created or changed anywhere in the repository.

The cases are counted by class in docs/bad-input.md (``test_the_suite_is_counted_by_class_in_the_docs``
keeps the two in step).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from socialbench.core.io import MESSAGE_LIMIT
from tests.conftest import make_instance

REPO = Path(__file__).resolve().parents[1]


# ---- the small repository each case runs in ----------------------------------------------------------
@pytest.fixture(scope="session")
def clip(tmp_path_factory) -> Path:
    from tests.helpers.media_synth import generate_indexed_video

    return generate_indexed_video(tmp_path_factory.mktemp("clip") / "clip.mp4", frames=20, fps=10)


def jsonl(records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


PARAMS = """seed: 1
moca: {frames: 2}
media: {frame_max_side: 64}
cache: {path: .cache/requests.sqlite}
mlflow: {tracking_uri: "sqlite:///mlflow.db"}
models:
  random: {backend: random}
"""


@pytest.fixture
def ws(tmp_path, monkeypatch, clip) -> Path:
    """The small repository (a git checkout: a ``.git`` folder) as the working folder, in a folder of
    its own, so that a case may name an output beside it (``../o.jsonl``), as a user may."""
    root = build_ws(tmp_path / "repo", clip)
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    return root


def build_ws(root: Path, clip: Path) -> Path:
    """The small repository: params, instances, predictions, a score file, an image and a clip."""
    from socialbench.core.benchmarks import get_benchmark
    from tests.helpers.moca_requests import write_png

    (root / "data" / "raw").mkdir(parents=True)
    write_png(root / "data" / "raw" / "img.png")
    shutil.copyfile(clip, root / "data" / "raw" / "clip.mp4")
    (root / "params.yaml").write_text(PARAMS)
    insts = [make_instance(f"i{k}", media=["data/raw/img.png"]) for k in range(3)]
    (root / "data" / "i.jsonl").write_text(jsonl(insts))
    (root / "data" / "v.jsonl").write_text(
        jsonl([make_instance("v0", modality="video_text", media=["data/raw/clip.mp4"], transcript="A: hi")])
    )
    preds = [
        {
            "id": i["id"],
            "model": "random",
            "method": "direct",
            "subject": "the speaker",
            "target": "the player",
            "mechanism": "expressive aggression",
            "label": "mock",
            "error": None,
        }
        for i in insts
    ]
    (root / "results").mkdir()
    (root / "results" / "p.jsonl").write_text(jsonl(preds))
    scores = get_benchmark("moca").score(insts, preds, source="p.jsonl")
    (root / "results" / "scores" / "moca" / "random").mkdir(parents=True)
    (root / "results" / "scores" / "moca" / "random" / "direct.json").write_text(json.dumps(scores))
    (root / "results" / "tables").mkdir()
    (root / "results" / "tables" / "all.md").write_text("| table |\n")
    return root


def snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` (hidden ones too), with each file's content hash; a link, a
    FIFO, a device or a socket recorded by kind, never opened."""
    out = {}
    for dirpath, _dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        out[rel + "/"] = "dir"
        for name in filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                out[os.path.join(rel, name)] = "link"
            elif not p.is_file():
                out[os.path.join(rel, name)] = f"special {p.lstat().st_mode:o}"
            else:
                out[os.path.join(rel, name)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def run_main(argv: list[str], capsys, monkeypatch) -> tuple[int, str]:
    from socialbench.cli import main

    monkeypatch.setattr(sys, "argv", ["socialbench", *argv])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main()
    return exc.value.code, capsys.readouterr().err


# ---- the cases --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    id: str
    kind: str  # the class it is counted under in docs/bad-input.md
    setup: Callable[[Path], list[str]]  # writes the bad input, returns the command line
    says: str  # what the one line must contain
    cache: bool = False  # the run got as far as opening the request cache: it may exist, holding no call
    #: The command's own outputs (relative paths: a file, or a folder and all under it) that it may have
    #: begun before refusing (a download kept for the next try); nothing else may change.
    outputs: tuple[str, ...] = ()
    #: Environment variables the command runs with (a store URL is read from the environment only).
    env: tuple[tuple[str, str], ...] = ()
    #: A test double installed for the run (in-process only), for a mistake outside the small repository:
    #: a package template with a typo.
    patch: Callable[[pytest.MonkeyPatch], None] | None = None


def write(path: str, text: str | bytes) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return p


GOOD = json.dumps(make_instance("g0", media=["data/raw/img.png"]))


def instances_line(line: str) -> str:
    """A file of one good instance and one bad line."""
    return GOOD + "\n" + line + "\n"


def infer(instances="data/bad.jsonl", *extra) -> list[str]:
    return [
        "infer",
        "--benchmark",
        "moca",
        "--instances",
        instances,
        "--model",
        "random",
        "--out",
        "results/o.jsonl",
        "--stats",
        "results/o.stats.json",
        *extra,
    ]


def score(predictions="results/p.jsonl", instances="data/i.jsonl", *extra, out="results/s.json") -> list[str]:
    return [
        "score",
        "--benchmark",
        "moca",
        "--instances",
        instances,
        "--predictions",
        predictions,
        "--out",
        out,
        *extra,
    ]


def prepare(raw="data/bad.jsonl", *extra, out="data/o.jsonl", report="results/r.jsonl") -> list[str]:
    return [
        "prepare",
        "--benchmark",
        "moca",
        "--raw",
        raw,
        "--out",
        out,
        "--report",
        report,
        "--on-invalid",
        "fail",
        *extra,
    ]


SCORE_FILE = "results/scores/moca/random/direct.json"


def tables(*scores: str) -> list[str]:
    return [
        "tables",
        "--benchmark",
        "moca",
        *(scores or (SCORE_FILE,)),
        "--out-dir",
        "results/t",
        "--headline",
        "results/h.json",
    ]


def frames(inp="data/v.jsonl", out="data/pv.jsonl", *extra) -> list[str]:
    return [
        "moca",
        "frames",
        "--input",
        inp,
        "--output",
        out,
        "--frames-dir",
        "data/frames",
        "--report",
        "results/m.jsonl",
        "--report-md",
        "results/m.md",
        *extra,
    ]


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


def bad_params(text: str | bytes, command: Callable[[], list[str]] | None = None):
    def setup(root: Path) -> list[str]:
        write("bad.yaml", text)
        return command() if command else ["check-params", "--params", "bad.yaml"]

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


def run_with(argv: list[str], prep: Callable[[Path], None] | None = None):
    def setup(root: Path) -> list[str]:
        if prep:
            prep(root)
        return argv

    return setup


def preds_with(*changes: dict, extra: tuple[str, ...] = ()):
    def setup(root: Path) -> list[str]:
        recs = [json.loads(line) for line in Path("results/p.jsonl").read_text().splitlines()]
        for rec, change in zip(recs, changes):
            rec.update(change)
        write("results/bad.jsonl", jsonl(recs))
        return score("results/bad.jsonl", "data/i.jsonl", *extra)

    return setup


def symlink(link: str, target: str):
    def prep(root: Path) -> None:
        Path(link).symlink_to(Path(target).resolve())

    return prep


def hard_link(link: str, target: str):
    def prep(root: Path) -> None:
        os.link(target, link)

    return prep


def dead_server(root: Path) -> list[str]:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write(
        "dead.yaml",
        PARAMS + f"  down:\n    backend: openai_compat\n    model_id: m\n"
        f"    options: {{base_url: 'http://127.0.0.1:{port}/v1', retry_base_delay_s: 0.01}}\n",
    )
    write("data/many.jsonl", jsonl([make_instance(f"n{k}", media=["data/raw/img.png"]) for k in range(12)]))
    return [
        "infer",
        "--benchmark",
        "moca",
        "--instances",
        "data/many.jsonl",
        "--model",
        "down",
        "--params",
        "dead.yaml",
        "--out",
        "results/o.jsonl",
        "--stats",
        "results/o.stats.json",
    ]


def escaping_media(media: str, prep=None, command=prepare):
    def setup(root: Path) -> list[str]:
        if prep:
            prep(root)
        write("data/bad.jsonl", json.dumps(make_instance("esc", media=[media])) + "\n")
        return command()

    return setup


def escaping_video(root: Path) -> list[str]:
    (root / "data" / "raw" / "out.mp4").symlink_to(root.parent / "elsewhere.mp4")
    shutil.copyfile(root / "data" / "raw" / "clip.mp4", root.parent / "elsewhere.mp4")
    write(
        "data/bad.jsonl",
        jsonl([make_instance("vesc", modality="video_text", media=["data/raw/out.mp4"], transcript="A: hi")]),
    )
    return frames("data/bad.jsonl")


def truncated_clip(root: Path) -> list[str]:
    data = (root / "data" / "raw" / "clip.mp4").read_bytes()
    write("data/raw/half.mp4", data[: len(data) // 2])
    return ["media", "cut", "data/raw/half.mp4", "--start", "0", "--end", "2", "--out-dir", "results/cut"]


DEEP = "[" * 3000 + "]" * 3000
BILLION_LAUGHS = "".join(
    f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" if i else "a0: &a0 [lol]\n" for i in range(12)
)

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
    # -- params: broken YAML, named with line and column ---------------------------------------------------
    Case("params-syntax", "params YAML", bad_params("seed: [1,\n"), "bad.yaml: not valid YAML: line 2, column 1"),
    Case(
        "params-tab",
        "params YAML",
        bad_params("seed: 1\n\tmodels: {}\n"),
        "line 2, column 1: found character '\\t' that cannot start any token",
    ),
    Case(
        "params-python-tag",
        "params YAML",
        bad_params("seed: !!python/object/apply:os.system [echo hi]\n"),
        "line 1, column 7: the tag tag:yaml.org,2002:python/object/apply:os.system is not allowed",
    ),
    Case(
        "params-top-level-list",
        "params YAML",
        bad_params("- seed\n- models\n"),
        "the top level must be a mapping of settings (key: value), got a list",
    ),
    Case(
        "params-non-utf8",
        "params YAML",
        bad_params(b"seed: 1\nmodels: {caf\xe9: {backend: random}}\n"),
        "bad.yaml: not UTF-8 text (byte 0xe9 at offset 20, line 2)",
    ),
    Case(
        "params-empty",
        "params YAML",
        bad_params(""),
        "bad.yaml: holds no settings (the file is empty or only comments)",
    ),
    Case("params-only-comments", "params YAML", bad_params("# nothing here\n"), "holds no settings"),
    Case(
        "params-billion-laughs",
        "params YAML",
        bad_params(BILLION_LAUGHS),
        "line 2, column 10: the alias *a0 is not allowed",
    ),
    Case(
        "params-duplicate-seed",
        "params YAML",
        bad_params("seed: 1\nseed: 2\n"),
        "line 2, column 1: duplicate key 'seed' (first at line 1)",
    ),
    Case(
        "params-nan",
        "params YAML",
        bad_params("seed: 1\nmoca: {demo: {video_fraction: .nan}}\n"),
        "line 2, column 31: .nan is not a finite number",
    ),
    Case("params-date", "params YAML", bad_params("seed: 2024-06-11\n"), "line 1, column 7: a date or time"),
    Case(
        "params-boolean-key",
        "params YAML",
        bad_params("models: {on: {backend: random}}\n"),
        "the key on is read as a boolean, not a name; quote it",
    ),
    Case(
        "params-missing",
        "params YAML",
        run_with(["check-params", "--params", "nothere.yaml"]),
        "nothere.yaml: file not found",
    ),
    Case(
        "params-folder", "params YAML", run_with(["check-params", "--params", "data"]), "data: is a folder, not a file"
    ),
    Case(
        "params-broken-for-infer",
        "params YAML",
        bad_params("seed: 1\nseed: 2\n", lambda: infer("data/i.jsonl", "--params", "bad.yaml")),
        "bad.yaml: line 2, column 1: duplicate key",
    ),
    Case(
        "params-broken-for-demo",
        "params YAML",
        bad_params(
            "seed: [\n", lambda: ["demo", "--benchmark", "moca", "--params", "bad.yaml", "--out-dir", "data/demo"]
        ),
        "bad.yaml: not valid YAML",
    ),
    Case(
        "params-broken-for-media",
        "params YAML",
        bad_params(
            "media: {frame_max_side: 64}\nmedia: {}\n",
            lambda: frames("data/v.jsonl", "data/pv.jsonl", "--params", "bad.yaml"),
        ),
        "duplicate key 'media'",
    ),
    # -- params: valid YAML, invalid settings --------------------------------------------------------------
    Case(
        "params-secret",
        "params values",
        bad_params("models: {m: {backend: openai_compat, options: {api_key: sk-do-not-print}}}\n"),
        "models.m.options.api_key",
    ),
    Case(
        "params-bad-allowed-roots",
        "params values",
        bad_params("media: {allowed_roots: [1]}\n"),
        "media.allowed_roots.0: 1 is not of type 'string'",
    ),
    Case(
        "params-several-problems-one-line",
        "params values",
        bad_params("seed: -1\nmodels: {r: {backend: random, concurrency: 0}}\n"),
        "bad.yaml is invalid: models.r.concurrency: 0 is less than the minimum of 1; seed: -1",
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
    # -- an output that would overwrite an input, or two outputs one file ------------------------------------
    Case(
        "prepare-out-is-raw",
        "output overwrites input",
        run_with(prepare("data/i.jsonl", out="data/i.jsonl")),
        "data/i.jsonl: --out is the same file as --raw",
    ),
    Case(
        "prepare-report-is-out",
        "output overwrites input",
        run_with(prepare("data/i.jsonl", out="data/o.jsonl", report="data/o.jsonl")),
        "--out and --report name the same file",
    ),
    Case(
        "prepare-report-is-raw-via-dotdot",
        "output overwrites input",
        run_with(prepare("data/i.jsonl", report="results/../data/i.jsonl")),
        "--report is the same file as --raw",
    ),
    Case(
        "infer-out-is-instances",
        "output overwrites input",
        run_with(
            [
                "infer",
                "--benchmark",
                "moca",
                "--instances",
                "data/i.jsonl",
                "--model",
                "random",
                "--out",
                "data/i.jsonl",
                "--stats",
                "results/s.json",
            ]
        ),
        "--out is the same file as --instances",
    ),
    Case(
        "infer-stats-is-out",
        "output overwrites input",
        run_with(
            [
                "infer",
                "--benchmark",
                "moca",
                "--instances",
                "data/i.jsonl",
                "--model",
                "random",
                "--out",
                "results/o.json",
                "--stats",
                "results/o.json",
            ]
        ),
        "--out and --stats name the same file",
    ),
    Case(
        "infer-trace-symlink-to-instances",
        "output overwrites input",
        run_with(infer("data/i.jsonl", "--trace", "results/t.jsonl"), symlink("results/t.jsonl", "data/i.jsonl")),
        "--trace is the same file as --instances",
    ),
    Case(
        "infer-cache-is-instances",
        "output overwrites input",
        run_with(infer("data/i.jsonl", "--cache", "data/i.jsonl")),
        "--cache is the same file as --instances",
    ),
    Case(
        "infer-dev-is-out",
        "output overwrites input",
        run_with(
            [
                "infer",
                "--benchmark",
                "moca",
                "--instances",
                "data/i.jsonl",
                "--dev",
                "results/o.jsonl",
                "--model",
                "random",
                "--out",
                "results/o.jsonl",
                "--stats",
                "results/s.json",
            ],
            lambda r: write("results/o.jsonl", GOOD + "\n"),
        ),
        "--out is the same file as --dev",
    ),
    Case(
        "score-out-is-predictions",
        "output overwrites input",
        run_with(score(out="results/p.jsonl")),
        "--out is the same file as --predictions",
    ),
    Case(
        "score-out-hard-link-to-instances",
        "output overwrites input",
        run_with(score(out="results/s.json"), hard_link("results/s.json", "data/i.jsonl")),
        "--out is the same file as --instances",
    ),
    Case(
        "tables-headline-is-a-score-file",
        "output overwrites input",
        run_with(["tables", "--benchmark", "moca", SCORE_FILE, "--out-dir", "results/t", "--headline", SCORE_FILE]),
        "--headline is the same file as SCORES",
    ),
    Case(
        "track-out-is-instances",
        "output overwrites input",
        run_with(
            [
                "track",
                "--benchmark",
                "moca",
                SCORE_FILE,
                "--instances",
                "data/i.jsonl",
                "--predictions-dir",
                "results",
                "--stats-dir",
                "results",
                "--tables-dir",
                "results/tables",
                "--out",
                "data/i.jsonl",
            ]
        ),
        "--out is the same file as --instances",
    ),
    Case(
        "frames-output-is-input",
        "output overwrites input",
        run_with(frames("data/v.jsonl", "data/v.jsonl")),
        "--output is the same file as --input",
    ),
    Case(
        "frames-report-is-output",
        "output overwrites input",
        run_with(
            ["moca", "frames", "--input", "data/v.jsonl", "--output", "data/pv.jsonl", "--report", "data/pv.jsonl"]
        ),
        "--output and --report name the same file",
    ),
    Case(
        "audio-output-is-source",
        "output overwrites input",
        run_with(["media", "audio", "data/raw/clip.mp4", "data/raw/./clip.mp4"]),
        "OUTPUT is the same file as SOURCE",
    ),
    # -- an output path that cannot be written ---------------------------------------------------------------
    Case(
        "prepare-out-under-a-file",
        "output path",
        run_with(prepare("data/i.jsonl", out="params.yaml/o.jsonl")),
        "params.yaml/o.jsonl: cannot be created: params.yaml is a file, not a folder (--out)",
    ),
    Case(
        "score-out-is-a-folder",
        "output path",
        run_with(score(out="results")),
        "results: is a folder; --out takes the path of a file",
    ),
    Case(
        "tables-out-dir-is-a-file",
        "output path",
        run_with(
            ["tables", "--benchmark", "moca", SCORE_FILE, "--out-dir", "data/i.jsonl", "--headline", "results/h.json"]
        ),
        "data/i.jsonl: is a file, but --out-dir takes a folder",
    ),
    Case(
        "demo-out-dir-under-a-file",
        "output path",
        run_with(["demo", "--benchmark", "moca", "--out-dir", "params.yaml/demo"]),
        "params.yaml is a file, not a folder (--out-dir)",
    ),
    # -- media outside the repository's data folders, or shorter than asked ----------------------------------
    Case(
        "prepare-media-dotdot",
        "media",
        escaping_media("data/../params.yaml"),
        "record esc, field 'media': data/../params.yaml leads to",
    ),
    Case(
        "prepare-media-symlink",
        "media",
        escaping_media("data/raw/link.png", symlink("data/raw/link.png", "params.yaml")),
        "leads through a symlink to",
    ),
    Case(
        "prepare-media-absolute",
        "media",
        escaping_media("/etc/hostname"),
        "/etc/hostname leads to /etc/hostname, outside the repository's data folder",
    ),
    Case(
        "frames-media-symlink",
        "media",
        escaping_video,
        "data/bad.jsonl, record vesc, field 'media': data/raw/out.mp4 leads through a symlink",
    ),
    Case(
        "cut-truncated-source",
        "media",
        truncated_clip,
        "data/raw/half.mp4: truncated: the container announces 20 video frames",
    ),
    # -- predictions that are not one clean run ---------------------------------------------------------------
    Case(
        "score-another-model-mixed-in",
        "predictions",
        preds_with({}, {"model": "prior"}),
        "record line 2, field 'model': a record of model prior, not line 1's random",
    ),
    Case(
        "score-another-method-mixed-in",
        "predictions",
        preds_with({}, {}, {"method": "codar"}),
        "record line 3, field 'method': a record of method codar",
    ),
    Case(
        "score-not-the-model-asked-for",
        "predictions",
        preds_with(extra=("--model", "prior")),
        "record line 1, field 'model': a record of model random, not --model prior",
    ),
    Case(
        "score-error-not-a-message",
        "predictions",
        preds_with({"error": 0}),
        "record line 1, field 'error': must be null or why the record failed",
    ),
    # -- a server that cannot be used ----------------------------------------------------------------------------
    Case(
        "infer-dead-server",
        "dead server",
        dead_server,
        "models.down: stopped after 5 failed attempts in a row",
        cache=True,
    ),
]


def test_the_suite_has_at_least_sixty_cases_across_the_commands():
    commands = {c.id.split("-", 1)[0] for c in CASES}
    assert len(CASES) >= 60 and len({c.id for c in CASES}) == len(CASES)
    assert {
        "infer",
        "score",
        "prepare",
        "tables",
        "track",
        "frames",
        "params",
        "taxonomy",
        "cache",
        "audio",
        "cut",
        "demo",
        "meetingtom",
    } <= commands


def run_case(case: Case, ws: Path, capsys, monkeypatch) -> None:
    """The one runner of every case: exit 2, one ``error:`` line (capped) that says what is at fault,
    and nothing in the repository changed outside the case's own outputs (the request cache may exist,
    holding no call)."""
    argv = case.setup(ws)
    before = snapshot(ws)
    for name, value in case.env:
        monkeypatch.setenv(name, value)
    if case.patch is not None:
        case.patch(monkeypatch)
    if case.kind == "special file":  # a broken check would hang: a subprocess with a timeout
        proc = subprocess.run(
            [sys.executable, "-m", "socialbench", *argv], cwd=ws, capture_output=True, text=True, timeout=120
        )
        code, err = proc.returncode, proc.stderr
    else:
        code, err = run_main(argv, capsys, monkeypatch)
    lines = err.splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert len(lines[0]) <= MESSAGE_LIMIT + len("error: ")
    assert case.says in lines[0], lines[0]
    after = snapshot(ws)
    skip = (".cache",) if case.cache else ()
    if case.cache:
        from socialbench.core.cache import RequestCache

        stored = RequestCache.open_readonly(ws / ".cache" / "requests.sqlite")
        assert (
            stored.stats()["entries"] == 0 and stored._conn().execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0
        )
        stored.close()
    skip += tuple(os.path.normpath(o) for o in case.outputs)

    def kept(snap: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in snap.items() if not any(k == o or k.startswith((o + "/", o + os.sep)) for o in skip)}

    assert kept(after) == kept(before)


def test_a_secret_in_params_is_named_but_never_shown(ws, capsys, monkeypatch):
    write("bad.yaml", "models: {m: {backend: openai_compat, options: {api_key: sk-do-not-print}}}\n")
    _, err = run_main(["check-params", "--params", "bad.yaml"], capsys, monkeypatch)
    assert "sk-do-not-print" not in err


def all_cases() -> list[Case]:
    """Every case of the suite: the table of the first hardening, issue 20's, the command-line ones and
    the server registry's."""
    return [
        *CASES,
        *ISSUE20_CASES,
        *COMMAND_LINE_CASES,
        *SERVER_CASES,
        *PROCESS_CASES,
        *SECRET_CASES,
        *CACHE_CORPUS_WRITE_CASES,
        *READ_CASES,
        *LEFTOVER_CASES,
        *WAIT_CASES,
        *PARAMS_KEY_CASES,
        *ISSUE38_CASES,
    ]


def test_the_suite_is_counted_by_class_in_the_docs():
    from collections import Counter

    doc = (REPO / "docs" / "bad-input.md").read_text("utf-8")
    cases = all_cases()
    assert len({c.id for c in cases}) == len(cases)
    for kind, n in Counter(c.kind for c in cases).items():
        assert f"| {kind} | {n} |" in doc, f"docs/bad-input.md: the row of {kind!r} should say {n}"
    assert f"| total | {len(cases)} |" in doc


# ---- snakemake and check-params agree on a broken params.yaml (issue 12, point 6) -------------------------
@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory) -> Path:
    """The repository's tracked and new files (no data, results or caches) in a scratch folder."""
    from tests.helpers.pipeline import repo_copy

    return repo_copy(tmp_path_factory.mktemp("workflow"), REPO, skip=("data/", "results/"))


BROKEN_PARAMS = {
    "syntax": "seed: [1,\n",
    "tab": "seed: 1\n\tmodels: {}\n",
    "python-tag": "seed: !!python/object/apply:os.system [echo hi]\n",
    "top-level-list": "- seed\n",
    "non-utf8": b"seed: 1\nname: caf\xe9\n",
    "empty": "",
    "duplicate": "seed: 1\nseed: 2\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BROKEN_PARAMS))
def test_snakemake_and_check_params_give_the_same_line_for_a_broken_params_file(
    name, workflow_copy, capsys, monkeypatch
):
    data = BROKEN_PARAMS[name]
    (workflow_copy / "params.yaml").write_bytes(data.encode() if isinstance(data, str) else data)
    env = {
        **os.environ,
        "PYTHONPATH": str(workflow_copy / "src"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    smk = subprocess.run(
        ["snakemake", "-n", "--cores", "1"], cwd=workflow_copy, env=env, capture_output=True, text=True
    )
    monkeypatch.chdir(workflow_copy)  # `socialbench check-params` there, in this process
    code, err = run_main(["check-params"], capsys, monkeypatch)
    assert smk.returncode != 0 and code == 2
    (line,) = err.splitlines()
    assert line.startswith("error: params.yaml: ") and line in smk.stderr.splitlines(), smk.stderr
    assert "Traceback" not in smk.stderr and "Config file is not valid" not in smk.stderr


# ---- issue 20: params that name nothing, repositories, option values, recorded answers, meeting files ------
# (points 5-9). The docs' table counts them with CASES (every module-level ``*_CASES`` list is counted).
def check(text: str):
    """check-params on a params file of the small repository's models plus ``text``."""
    return bad_params("seed: 1\nmodels: {random: {backend: random}}\n" + text)


def broken_dvc_repo(root: Path) -> list[str]:
    write("r/.dvc/config", "")
    write("r/dvc.lock", "stages: [\n")
    return ["prune-lock", "--repo", "r"]


def file_backend_on_a_folder(root: Path) -> list[str]:
    write("human.yaml", PARAMS + "  human: {backend: file, options: {path: data}}\n")
    return infer("data/i.jsonl", "--params", "human.yaml")[:6] + ["human", *infer()[7:], "--params", "human.yaml"]


def truncated_meeting(root: Path) -> list[str]:
    write("meet/meeting.json", '{"meeting": "ES2002a", "start": 0.')
    write("meet/fetched.json", "{}")
    write("mt.yaml", PARAMS + "meetingtom: {}\n")
    return [
        "meetingtom",
        "clips",
        "--meeting-dir",
        "meet",
        "--fetched",
        "meet/fetched.json",
        "--out-dir",
        "results/c",
        "--params",
        "mt.yaml",
    ]


def mt_params(argv: list[str]):
    """``socialbench meetingtom ARGV --params mt.yaml`` with a params file that has a meetingtom section."""

    def setup(root: Path) -> list[str]:
        write("mt.yaml", PARAMS + "meetingtom: {}\n")
        return ["meetingtom", *argv, "--params", "mt.yaml"]

    return setup


def zip_of(*members: tuple[str, bytes]) -> bytes:
    """A zip archive (deflated) of ``(name, data)`` members, in order (a name may repeat)."""
    import io
    import warnings
    import zipfile

    buf = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        warnings.simplefilter("ignore")  # a duplicated name is the point of one case
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def tar_cut_at_a_block_boundary() -> bytes:
    """A tar of one small file, cut after its data block: no end-of-archive block."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        info = tarfile.TarInfo("meetings.xml")
        info.size = 5
        tf.addfile(info, io.BytesIO(b"<x/>\n"))
    return buf.getvalue()[:1024]


def ami_release(
    archive: bytes, name: str = "ann.zip", *, pinned: bool = True, limits: str = "", lock=None, absolute=False
):
    """``meetingtom release --source ami`` from a local mirror holding ``archive`` (params pin its sha256,
    or not: then ``sources.lock`` may hold the hash recorded on its first use, under the mirror's
    relative spelling), with params ``acquire.archive`` limits; ``absolute``: params spell the mirror
    as an absolute path. The download folder and the release folder are the command's outputs."""

    def setup(root: Path) -> list[str]:
        write(f"data/ami/{name}", archive)
        sha = f"'{hashlib.sha256(archive).hexdigest()}'" if pinned else "null"
        mirror = str(root / "data" / "ami") if absolute else "data/ami"
        write(
            "mt.yaml",
            PARAMS
            + (f"acquire: {{archive: {{{limits}}}}}\n" if limits else "")
            + f"meetingtom: {{ami: {{mirror: '{mirror}', url: 'https://example.org/{name}', sha256: {sha}}}}}\n",
        )
        if lock is not None:
            write("sources.lock", json.dumps({f"file:data/ami/{name}": lock}))
        return [
            "meetingtom",
            "release",
            "--source",
            "ami",
            "--out",
            "results/rel",
            "--downloads",
            "results/dl",
            "--params",
            "mt.yaml",
        ]

    return setup


RELEASE_OUT = ("results/rel", "results/dl")


def simulate_into_a_link(root: Path) -> list[str]:
    """annotate simulate whose --out-dir holds a sheet name that links out of it."""
    write("outside/annotator_1.csv", "keep\n")
    Path("results/sheets").mkdir(parents=True)
    Path("results/sheets/annotator_1.csv").symlink_to(root / "outside" / "annotator_1.csv")
    write("mt.yaml", PARAMS + "meetingtom: {}\n")
    write("data/items.jsonl", "")
    write("data/sheet.csv", "item_id,task,answer\n")
    return [
        "meetingtom",
        "annotate",
        "simulate",
        "--items",
        "data/items.jsonl",
        "--sheet",
        "data/sheet.csv",
        "--out-dir",
        "results/sheets",
        "--params",
        "mt.yaml",
    ]


def infer_media(media: str, link: bool = False):
    """infer on an instance whose image is ``media``, with an image outside the data folder
    (``elsewhere.png``) that ``media`` names through ``..`` or (``link``) links to."""

    def setup(root: Path) -> list[str]:
        shutil.copyfile("data/raw/img.png", "elsewhere.png")
        if link:
            Path(media).symlink_to(root / "elsewhere.png")
        write("data/bad.jsonl", jsonl([make_instance("m0", media=[media])]))
        return infer()

    return setup


def annotation_import(*sheets: str, subset: str = "[]", linked: bool = False):
    def setup(root: Path) -> list[str]:
        write("sheets/a1.csv", "item_id,task,answer\n")
        write("sheets/adj.csv", "item_id,task,answer\n")
        write("sheets/subset.json", subset)
        if linked:  # a second name for the first annotator's sheet
            os.link("sheets/a1.csv", "sheets/a2.csv")
        else:
            write("sheets/a2.csv", "item_id,task,answer\n")
        args = [
            "meetingtom",
            "annotate",
            "import",
            "--items",
            "data/i.jsonl",
            "--subset",
            "sheets/subset.json",
            "--out-dir",
            "results/gold",
        ]
        for s in sheets:
            args += ["--annotator", s]
        return [*args, "--adjudicator", "sheets/adj.csv"]

    return setup


# ---- issue 20, points 1, 3 and 4: nothing destroyed, paths named in data, special files ------------------------
# A case with a FIFO runs the command in a subprocess with a timeout, so that a broken check fails the test
# instead of hanging the suite; the snapshot never opens a special file.


def fifo(path: str):
    def prep(root: Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)

    return prep


def source_file(name: str, text: str, argv_source: str, root_dir: str = "data/src", split: str | None = None):
    """A MoCA source's file under ``root_dir``, and `moca candidates` reading it."""

    def setup(root: Path) -> list[str]:
        write(f"{root_dir}/{name}", text)
        return [
            "moca",
            "candidates",
            "--source",
            argv_source,
            "--root",
            root_dir,
            "--out",
            "results/c.jsonl",
            *(["--split", split] if split else []),
        ]

    return setup


def linked_source(root: Path) -> list[str]:
    write("data/src/train.jsonl", '{"id": 1, "img": "img/a.png", "text": "t"}\n')
    Path("data/src/img").symlink_to(root / "results")  # the image folder leads out of the source's root
    return ["moca", "candidates", "--source", "hateful_memes", "--root", "data/src", "--out", "results/c.jsonl"]


def stale_linked_model(root: Path) -> list[str]:
    """A model params no longer name whose folder in the results tree is a link to data/: pruning it
    must not delete the files the link leads to."""
    write("data/kept/direct.jsonl", "{}\n")
    Path("results/predictions/moca").mkdir(parents=True)
    Path("results/predictions/moca/gone").symlink_to(root / "data" / "kept")
    return ["prune-outputs", "--benchmark", "moca", "--params", "params.yaml", "--results", "results"]


def frames_cmd(video: str = "data/raw/clip.mp4", frames_dir: str = "results/fr") -> list[str]:
    return ["media", "frames", video, "--count", "2", "--frames-dir", frames_dir]


def linked_frames_dir(root: Path) -> list[str]:
    Path("results/fr").mkdir()
    Path("results/fr/x.mp4").symlink_to(root / "data" / "raw" / "clip.mp4")
    return frames_cmd()


ISSUE20_CASES = [
    # -- params name only what exists (point 5): check-params and every command's load say the same line --
    Case(
        "params-unknown-method",
        "params names",
        check("moca: {methods: [direkt]}\n"),
        "moca.methods.0: 'direkt' names no method of moca (known: codar",
    ),
    Case(
        "params-unknown-ablation",
        "params names",
        check("meetingtom: {methods: [no_prompt__nope]}\n"),
        "meetingtom.methods.0: 'no_prompt__nope' names the ablation 'nope', which meetingtom.ablations does not",
    ),
    Case(
        "params-robustness-fewer-than-two-orders",
        "params names",
        check("moca: {robustness: {orders: 1, models: [random], methods: [direct]}}\n"),
        "moca.robustness.orders: 1 is less than the minimum of 2",
    ),
    Case(
        "params-robustness-unknown-model",
        "params names",
        check("moca: {robustness: {orders: 3, models: [gpt], methods: [direct]}}\n"),
        "moca.robustness.models.0: 'gpt' is no model under models (known: random)",
    ),
    Case(
        "params-robustness-unknown-run",
        "params names",
        check("meetingtom: {robustness: {orders: 3, models: [random], methods: [ecot]}}\n"),
        "meetingtom.robustness.methods.0: 'ecot' is no run of meetingtom.methods (no_prompt)",
    ),
    Case(
        "params-unknown-view",
        "params names",
        check("meetingtom: {method_options: {no_prompt: {view: side}}}\n"),
        "meetingtom.method_options.no_prompt: view must be one of mosaic, global, closeup, got 'side'",
    ),
    Case(
        "params-meeting-not-in-the-corpus",
        "params names",
        check("meetingtom: {demo: {meetings: [ES9000z]}}\n"),
        "meetingtom.demo.meetings: ES9000z is not a meeting of the demo release",
    ),
    Case(
        "params-unknown-mining-key",
        "params names",
        check("meetingtom: {mining: {yuo: {}}}\n"),
        "meetingtom.mining: unknown key(s) yuo (known: state, you, consensus)",
    ),
    Case(
        "params-negative-window",
        "params names",
        check("meetingtom: {mining: {state: {window_s: -5}}}\n"),
        "meetingtom.mining.state.window_s: must be a finite number >= 0, got -5",
    ),
    Case(
        "params-tracking-uri-mlflow-cannot-use",
        "params names",
        check("mlflow: {tracking_uri: 'sqlite://mlflow.db'}\n"),
        "mlflow.tracking_uri: 'sqlite://mlflow.db': a sqlite store is sqlite:///<relative path>",
    ),
    Case(
        "params-model-on-no-benchmark",
        "params names",
        bad_params("models: {random: {backend: random, benchmarks: [moka]}}\n"),
        "models.random.benchmarks.0: 'moka' is no benchmark",
    ),
    Case(
        "params-unknown-method-for-infer",
        "params names",
        bad_params(
            PARAMS.replace("moca: {frames: 2}", "moca: {frames: 2, methods: [direkt]}"),
            lambda: infer("data/i.jsonl", "--params", "bad.yaml"),
        ),
        "bad.yaml is invalid: moca.methods.0: 'direkt' names no method of moca",
    ),
    # -- a repository that is not one (point 7) ----------------------------------------------------------------
    Case(
        "prune-lock-not-a-dvc-repository",
        "repository",
        run_with(["prune-lock", "--repo", "data"]),
        "data: not a DVC repository (no .dvc folder",
    ),
    Case("prune-lock-no-such-folder", "repository", run_with(["prune-lock", "--repo", "nothere"]), "nothere: no such"),
    Case("prune-lock-broken-lock", "repository", broken_dvc_repo, "r/dvc.lock: not valid YAML: line 2"),
    # -- option values out of range, unknown options: one line, not a usage box (point 7) -----------------------
    Case(
        "cache-explain-negative-limit",
        "option value",
        run_with(["cache", "explain", "--instances", "data/i.jsonl", "--model", "random", "--limit", "-1"]),
        "socialbench cache explain: Invalid value for '--limit'",
    ),
    Case(
        "ui-port-out-of-range",
        "option value",
        run_with(["ui", "--port", "70000"]),
        "socialbench ui: Invalid value for '--port'",
    ),
    Case(
        "frames-zero-count",
        "option value",
        run_with(["media", "frames", "data/raw/clip.mp4", "--count", "0"]),
        "--count must be >= 1, got 0",
    ),
    Case(
        "cut-negative-start",
        "option value",
        run_with(["media", "cut", "data/raw/clip.mp4", "--start", "-1", "--end", "1", "--out-dir", "results/cut"]),
        "socialbench media cut: Invalid value for '--start'",
    ),
    Case(
        "score-unknown-option",
        "option value",
        run_with(["score", "--benchmark", "moca", "--nope"]),
        "socialbench score: No such option: --nope",
    ),
    Case(
        "benchmarks-extra-argument",
        "option value",
        run_with(["benchmarks", "moca"]),
        "socialbench benchmarks: Got unexpected extra argument",
    ),
    # -- the file backend's answers file (point 7) ---------------------------------------------------------------
    Case(
        "infer-file-backend-on-a-folder",
        "recorded answers",
        file_backend_on_a_folder,
        "data: is a folder, not a file (models.human.options.path takes the answers file)",
        cache=True,
    ),
    # -- a meeting's files and the annotation import (points 6, 7) -------------------------------------------------
    Case("meetingtom-truncated-meeting-json", "meeting files", truncated_meeting, "meet/meeting.json: not valid JSON"),
    Case(
        "meetingtom-one-sheet-as-two-annotators",
        "meeting files",
        annotation_import("sheets/a1.csv", "sheets/a2.csv", linked=True),
        "sheets/a2.csv: --annotator is the same file as --annotator sheets/a1.csv: one sheet given twice",
    ),
    Case(
        "meetingtom-annotator-sheet-is-the-adjudicators",
        "meeting files",
        annotation_import("sheets/a1.csv", "sheets/adj.csv"),
        "sheets/adj.csv: --adjudicator is the same file as --annotator sheets/adj.csv",
    ),
    # -- commands the suite had no case for: a name or file that is not there -----------------------------------
    Case(
        "prune-outputs-unknown-benchmark",
        "names",
        run_with(["prune-outputs", "--benchmark", "mocha"]),
        "unknown benchmark 'mocha'; available: meetingtom, moca",
    ),
    Case(
        "moca-acquire-unknown-source",
        "names",
        run_with(["moca", "acquire", "--source", "nope", "--root", "data/raw/nope"]),
        "unknown MoCA source 'nope'; available: hateful_memes",
    ),
    Case(
        "meetingtom-consolidate-gold-per-source",
        "names",
        run_with(
            [
                "meetingtom",
                "consolidate",
                "--source-dir",
                "data",
                "--source-dir",
                "results",
                "--gold-dir",
                "data",
                "--out-dir",
                "results/mt",
            ]
        ),
        "give one --gold-dir per --source-dir (2 source(s), 1 gold folder(s))",
    ),
    Case(
        "probe-missing-media",
        "missing input",
        run_with(["media", "probe", "data/raw/nothere.mp4"]),
        "nothere.mp4: missing",
    ),
    Case(
        "meetingtom-mine-no-annotations",
        "missing input",
        run_with(["meetingtom", "mine", "--ami", "nothere", "--out", "results/m.jsonl", "--report", "results/r.jsonl"]),
        "nothere: not a folder (expected the AMI manual annotations",
    ),
    Case(
        "meetingtom-export-missing-items",
        "missing input",
        run_with(["meetingtom", "annotate", "export", "--items", "data/nothere.jsonl", "--out", "results/s.csv"]),
        "data/nothere.jsonl: file not found",
    ),
    Case(
        "moca-candidates-unknown-source",
        "names",
        run_with(["moca", "candidates", "--source", "nope", "--root", "data", "--out", "results/c.jsonl"]),
        "unknown MoCA source 'nope'",
    ),
    Case(
        "moca-stats-missing-instances",
        "missing input",
        run_with(["moca", "stats", "--instances", "data/nothere.jsonl", "--out-dir", "results/st"]),
        "data/nothere.jsonl: file not found",
    ),
    Case(
        "meetingtom-extract-meeting-not-listed",
        "names",
        bad_params(
            PARAMS + "meetingtom: {}\n",
            lambda: [
                "meetingtom",
                "extract",
                "--source",
                "demo",
                "--meeting",
                "ES9999z",
                "--release",
                "data",
                "--out-dir",
                "results/m",
                "--params",
                "bad.yaml",
            ],
        ),
        "meetingtom.demo.meetings: ES9999z is not listed (listed: ES9000a, ES9000b, ES9000c)",
    ),
    Case(
        "viewer-zero-frames",
        "option value",
        run_with(
            [
                "viewer",
                "--instances",
                "data/v.jsonl",
                "--benchmark",
                "moca",
                "--predictions",
                "results/p.jsonl",
                "--out",
                "results/v.html",
                "--max-frames",
                "0",
            ]
        ),
        "socialbench viewer: Invalid value for '--max-frames'",
    ),
    Case(
        "viewer-missing-instances",
        "missing input",
        run_with(
            [
                "viewer",
                "--instances",
                "data/nothere.jsonl",
                "--benchmark",
                "moca",
                "--predictions",
                "results/p.jsonl",
                "--out",
                "results/v.html",
            ]
        ),
        "data/nothere.jsonl: file not found",
    ),
    # -- point 9: every command gets cases (a name, file or value that is not there) --------------------------
    *[
        Case(cid, kind, mt_params(argv), says)
        for cid, kind, argv, says in [
            (
                "meetingtom-release-unknown-source",
                "names",
                ["release", "--source", "nope", "--out", "results/rel", "--downloads", "results/dl"],
                "unknown MeetingToM source 'nope'; known: demo, ami",
            ),
            (
                "meetingtom-release-out-is-params",
                "output overwrites input",
                ["release", "--source", "demo", "--out", "mt.yaml", "--downloads", "results/dl"],
                "mt.yaml: is a file, but --out takes a folder",
            ),
            (
                "meetingtom-media-meeting-not-listed",
                "names",
                ["media", "--source", "demo", "--meeting", "ES9999z", "--dest-root", "results/med"],
                "meetingtom.demo.meetings: ES9999z is not listed",
            ),
            (
                "meetingtom-media-unknown-source",
                "names",
                ["media", "--source", "nope", "--meeting", "ES2002a", "--dest-root", "results/med"],
                "unknown MeetingToM source 'nope'",
            ),
            (
                "meetingtom-instances-unknown-source",
                "names",
                [
                    "instances",
                    "--source",
                    "nope",
                    "--release",
                    "data",
                    "--meetings-dir",
                    "data",
                    "--clips-dir",
                    "data",
                    "--out-dir",
                    "results/o",
                ],
                "unknown MeetingToM source",
            ),
            (
                "meetingtom-instances-no-release",
                "missing input",
                [
                    "instances",
                    "--source",
                    "demo",
                    "--release",
                    "nothere",
                    "--meetings-dir",
                    "data",
                    "--clips-dir",
                    "data",
                    "--out-dir",
                    "results/o",
                ],
                "nothere/source.json: no source record",
            ),
            (
                "meetingtom-simulate-missing-items",
                "missing input",
                [
                    "annotate",
                    "simulate",
                    "--items",
                    "data/nothere.jsonl",
                    "--sheet",
                    "data/i.jsonl",
                    "--out-dir",
                    "results/o",
                ],
                "data/nothere.jsonl: file not found",
            ),
            (
                "meetingtom-human-unknown-source",
                "names",
                ["annotate", "human", "--instances", "data/i.jsonl", "--source", "nope", "--out", "results/h.jsonl"],
                "--source: must be one of demo, ami, got 'nope'",
            ),
            (
                "meetingtom-human-missing-instances",
                "missing input",
                ["annotate", "human", "--instances", "data/nothere.jsonl", "--out", "results/h.jsonl"],
                "data/nothere.jsonl: file not found",
            ),
        ]
    ],
    *[
        Case(cid, kind, run_with(argv), says)
        for cid, kind, argv, says in [
            ("moca-sources-unknown-source", "names", ["moca", "sources", "extra"], "unknown MoCA source 'extra'"),
            (
                "moca-preprocess-missing-input",
                "missing input",
                [
                    "moca",
                    "preprocess",
                    "--input",
                    "data/nothere.jsonl",
                    "--out",
                    "results/o.jsonl",
                    "--report",
                    "results/r.jsonl",
                ],
                "data/nothere.jsonl: file not found",
            ),
            (
                "moca-preprocess-not-candidates",
                "missing input",
                [
                    "moca",
                    "preprocess",
                    "--input",
                    "results/p.jsonl",
                    "--out",
                    "results/o.jsonl",
                    "--report",
                    "results/r.jsonl",
                ],
                "field 'source': missing",
            ),
            (
                "moca-unimodal-missing-input",
                "missing input",
                [
                    "moca",
                    "unimodal",
                    "--input",
                    "data/nothere.jsonl",
                    "--out",
                    "results/o.jsonl",
                    "--report",
                    "results/r.jsonl",
                ],
                "data/nothere.jsonl: file not found",
            ),
            (
                "moca-unimodal-not-candidates",
                "missing input",
                [
                    "moca",
                    "unimodal",
                    "--input",
                    "results/p.jsonl",
                    "--out",
                    "results/o.jsonl",
                    "--report",
                    "results/r.jsonl",
                ],
                "field 'source': missing",
            ),
            (
                "moca-export-missing-pool",
                "missing input",
                [
                    "moca",
                    "annotate",
                    "export",
                    "--pool",
                    "data/nothere.jsonl",
                    "--out-dir",
                    "results/o",
                    "--annotator",
                    "a",
                    "--annotator",
                    "b",
                ],
                "data/nothere.jsonl: file not found",
            ),
            (
                "moca-export-zero-per-item",
                "option value",
                [
                    "moca",
                    "annotate",
                    "export",
                    "--pool",
                    "data/i.jsonl",
                    "--out-dir",
                    "results/o",
                    "--annotator",
                    "a",
                    "--per-item",
                    "0",
                ],
                "socialbench moca annotate export: Invalid value for '--per-item'",
            ),
            (
                "moca-review-missing-pool",
                "missing input",
                [
                    "moca",
                    "annotate",
                    "review",
                    "--pool",
                    "data/nothere.jsonl",
                    "--annotations",
                    "data/i.jsonl",
                    "--reviewer",
                    "r",
                    "--out-dir",
                    "results/o",
                ],
                "data/nothere.jsonl: file not found",
            ),
            (
                "moca-arbitration-missing-pool",
                "missing input",
                [
                    "moca",
                    "annotate",
                    "arbitration",
                    "--pool",
                    "data/nothere.jsonl",
                    "--annotations",
                    "data/i.jsonl",
                    "--out",
                    "results/a.csv",
                ],
                "data/nothere.jsonl: file not found",
            ),
            (
                "moca-build-missing-pool",
                "missing input",
                [
                    "moca",
                    "annotate",
                    "build",
                    "--pool",
                    "data/nothere.jsonl",
                    "--annotations",
                    "data/i.jsonl",
                    "--out",
                    "results/o.jsonl",
                    "--report",
                    "results/r.jsonl",
                ],
                "data/nothere.jsonl: file not found",
            ),
            (
                "benchmarks-unknown-option",
                "option value",
                ["benchmarks", "--bogus"],
                "socialbench benchmarks: No such option: --bogus",
            ),
            ("ui-port-zero", "option value", ["ui", "--port", "0"], "socialbench ui: Invalid value for '--port'"),
            ("ui-missing-params", "missing input", ["ui", "--params", "nothere.yaml"], "nothere.yaml: file not found"),
            ("demo-unknown-benchmark", "names", ["demo", "--benchmark", "mocha"], "unknown benchmark 'mocha'"),
            (
                "audio-missing-source",
                "missing input",
                ["media", "audio", "data/nothere.mp4", "results/a.wav"],
                "data/nothere.mp4: missing_file: no such file",
            ),
            (
                "probe-not-media",
                "missing input",
                ["media", "probe", "params.yaml"],
                "params.yaml: unknown_container: ffprobe recognises no media container",
            ),
            (
                "track-no-scores",
                "option value",
                [
                    "track",
                    "--benchmark",
                    "moca",
                    "--instances",
                    "data/i.jsonl",
                    "--predictions-dir",
                    "results",
                    "--stats-dir",
                    "results",
                    "--tables-dir",
                    "results",
                    "--out",
                    "results/t.json",
                ],
                "socialbench track: Missing argument 'scores'",
            ),
            (
                "book-no-tracking-store",
                "missing input",
                [
                    "book",
                    "--benchmark",
                    "moca",
                    "--tables-dir",
                    "data/raw",  # its tables and figures are read (img.png) before the store is looked for
                    "--instances",
                    "data/i.jsonl",
                    "--tracked",
                    "results/t.json",
                    "--out",
                    "results/b.pdf",
                ],
                "mlflow.db: MLflow tracking store not found",
            ),
            (
                "prune-outputs-missing-params",
                "missing input",
                ["prune-outputs", "--benchmark", "moca", "--params", "nothere.yaml"],
                "nothere.yaml: file not found",
            ),
        ]
    ],
    Case(
        "meetingtom-truncated-subset",
        "meeting files",
        annotation_import("sheets/a1.csv", "sheets/a2.csv", subset='["a", '),
        "sheets/subset.json: not valid JSON",
    ),
    # -- settings a method or a backend does not take are refused at load (point 5), like every params key --
    Case(
        "params-unknown-backend-option",
        "params values",
        bad_params("seed: 1\nmodels: {m: {backend: hf, model_id: x, options: {devise: cpu}}}\n"),
        "models.m.options: unknown option(s) devise (backend hf takes: attn_implementation, device, dtype",
    ),
    Case(
        "params-backend-option-out-of-range",
        "params values",
        bad_params("seed: 1\nmodels: {m: {backend: vllm, model_id: x, options: {gpu_memory_utilization: 2}}}\n"),
        "models.m.options.gpu_memory_utilization: 2 is greater than the maximum of 1",
    ),
    Case(
        "params-codar-rounds-beyond-the-runner",
        "params values",
        check("moca: {method_options: {codar: {revision_rounds: 40}}}\n"),
        "moca.method_options.codar.revision_rounds: 40 could take more than the runner's 64 rounds",
    ),
    Case(
        "params-direct-takes-no-settings",
        "params values",
        check("moca: {method_options: {direct: {stages: [observer]}}}\n"),
        "moca.method_options.direct: Additional properties are not allowed ('stages' was unexpected)",
    ),
    # -- media a model is sent lie under the media roots (point 3): infer refuses the record --
    Case(
        "infer-media-links-out-of-the-data-folder",
        "media",
        infer_media("data/raw/out.png", link=True),
        "data/bad.jsonl, record m0, field 'media': data/raw/out.png leads through a symlink to",
        cache=True,
    ),
    Case(
        "infer-media-through-dotdot",
        "media",
        infer_media("data/../elsewhere.png"),
        "record m0, field 'media': data/../elsewhere.png leads to",
        cache=True,
    ),
    # -- archives (point 2): a bomb by bytes, ratio or members; a tar cut short; a duplicated member; TOFU --
    Case(
        "meetingtom-release-archive-too-many-bytes",
        "archive",
        ami_release(zip_of(("meetings.xml", b"x" * 2000)), limits="max_bytes: 1000"),
        "extracts to more than 1000 bytes (acquire.archive.max_bytes)",
        outputs=RELEASE_OUT,
    ),
    Case(
        "meetingtom-release-archive-ratio-bomb",
        "archive",
        ami_release(zip_of(("meetings.xml", bytes(200_000))), limits="max_ratio: 10, ratio_floor: 0"),
        "(acquire.archive.max_ratio): a decompression bomb?",
        outputs=RELEASE_OUT,
    ),
    Case(
        "meetingtom-release-archive-too-many-members",
        "archive",
        ami_release(zip_of(*[(f"m{k}.xml", b"<x/>") for k in range(5)]), limits="max_members: 3"),
        "member 'm3.xml' is member 4, beyond acquire.archive.max_members (3)",
        outputs=RELEASE_OUT,
    ),
    Case(
        "meetingtom-release-tar-without-end-marker",
        "archive",
        ami_release(tar_cut_at_a_block_boundary(), "ann.tar"),
        "the tar ends without its end-of-archive block",
        outputs=RELEASE_OUT,
    ),
    Case(
        "meetingtom-release-zip-duplicated-member",
        "archive",
        ami_release(zip_of(("meetings.xml", b"<a/>"), ("meetings.xml", b"<b/>"))),
        "member 'meetings.xml' is in the archive twice",
        outputs=RELEASE_OUT,
    ),
    Case(
        "meetingtom-release-tofu-hash-mismatch",
        "archive",
        ami_release(zip_of(("meetings.xml", b"<x/>")), pinned=False, lock="0" * 64),
        "sha256 mismatch: expected " + "0" * 64 + " (recorded on first use in sources.lock: the file changed since)",
        outputs=RELEASE_OUT,
    ),
    Case(  # issue 38: the lock keys a mirror file by where it resolves, not by how params spell it
        "meetingtom-release-tofu-mirror-spelled-absolute",
        "archive",
        ami_release(zip_of(("meetings.xml", b"<x/>")), pinned=False, lock="0" * 64, absolute=True),
        "sha256 mismatch: expected " + "0" * 64 + " (recorded on first use in sources.lock: the file changed since)",
        outputs=RELEASE_OUT,
    ),
    Case(
        "meetingtom-annotate-simulate-sheet-links-out",
        "path leaves its root",
        simulate_into_a_link,
        "--out-dir: sheet annotator_1.csv leads through a symlink to",
    ),
    # -- an output that would destroy an input; paths named in data; special files (points 1, 3, 4) --
    # -- an output that would destroy an input: be it, hold it or lie inside it; deletion inside the results --
    Case(
        "tables-out-dir-holds-a-score-file",
        "output destroys input",
        run_with(
            ["tables", "--benchmark", "moca", SCORE_FILE, "--out-dir", "results/scores", "--headline", "results/h.json"]
        ),
        "results/scores: --out-dir holds SCORES results/scores/moca/random/direct.json",
    ),
    Case(
        "tables-headline-folder-holds-the-scores",
        "output destroys input",
        run_with(
            ["tables", "--benchmark", "moca", SCORE_FILE, "--out-dir", "results/t", "--headline", "results/scores.json"]
        ),
        "results/scores: --headline (its per-run folder) holds SCORES",
    ),
    Case(
        "frames-dir-holds-the-video",
        "output destroys input",
        run_with(frames_cmd(frames_dir="data/raw")),
        "data/raw: --frames-dir holds VIDEO data/raw/clip.mp4",
    ),
    Case(
        "track-out-inside-predictions-dir",
        "output destroys input",
        run_with(
            [
                "track",
                "--benchmark",
                "moca",
                SCORE_FILE,
                "--instances",
                "data/i.jsonl",
                "--predictions-dir",
                "results",
                "--stats-dir",
                "results",
                "--tables-dir",
                "results/tables",
                "--out",
                "results/summary.json",
            ]
        ),
        "results/summary.json: --out lies inside --predictions-dir results, a folder the command reads",
    ),
    Case(
        "candidates-out-inside-root",
        "output destroys input",
        run_with(["moca", "candidates", "--source", "mmsd2", "--root", "data", "--out", "data/c.jsonl"]),
        "data/c.jsonl: --out lies inside --root data",
    ),
    Case(
        "preprocess-out-is-input",
        "output destroys input",
        run_with(["moca", "preprocess", "--input", "data/i.jsonl", "--out", "data/i.jsonl", "--report", "r.jsonl"]),
        "data/i.jsonl: --out is the same file as --input",
    ),
    Case(
        "stats-out-dir-holds-instances",
        "output destroys input",
        run_with(["moca", "stats", "--instances", "data/i.jsonl", "--out-dir", "data"]),
        "data: --out-dir holds --instances data/i.jsonl",
    ),
    Case(
        "frames-dir-link-to-the-video",
        "output destroys input",
        linked_frames_dir,
        "results/fr/x.mp4: a link in --frames-dir leads to VIDEO data/raw/clip.mp4",
    ),
    Case(
        "prune-archive-holds-the-results",
        "output destroys input",
        run_with(["prune-outputs", "--benchmark", "moca", "--results", "results", "--archive", "results/predictions"]),
        "--archive holds --results (predictions) results/predictions/moca",
    ),
    Case(
        "prune-stale-model-linked-out-of-results",
        "output destroys input",
        stale_linked_model,
        "results/predictions/moca/gone/direct.jsonl: leads to",
    ),
    # -- a path named inside data that leaves its declared root ----------------------------------------------
    Case(
        "candidates-image-path-dotdot",
        "path leaves its root",
        source_file("train.jsonl", '{"id": 1, "img": "../../params.yaml", "text": "t"}\n', "hateful_memes"),
        "data/src/train.jsonl, record 1, field 'img': image path ../../params.yaml leads to",
    ),
    Case(
        "candidates-image-id-dotdot",
        "path leaves its root",
        source_file("valid.json", '[{"image_id": "../../../params", "text": "t", "label": 0}]', "mmsd2", split="valid"),
        "data/src/valid.json, record 1, field 'image_id': image ../../../params.jpg leads to",
    ),
    Case(
        "candidates-season-dotdot",
        "path leaves its root",
        source_file("dev.tsv", "season\tepisode\tclip\ttext\tlabel\n..\t..\tx\thi\tjoke\n", "mintrec", split="dev"),
        "data/src/dev.tsv, record line 2, field 'season, episode, clip': clip ../../x.mp4 leads to",
    ),
    Case(
        "candidates-absolute-media",
        "path leaves its root",
        source_file(
            "supplementary.csv", "id,modality,text,media,label\ns1,image_text,hi,/etc/hostname,mock\n", "supplementary"
        ),
        "record s1, field 'media': media path /etc/hostname leads to /etc/hostname, outside data/src",
    ),
    Case(
        "candidates-image-through-a-symlink",
        "path leaves its root",
        linked_source,
        "field 'img': image path img/a.png leads through a symlink to",
    ),
    Case(
        "annotate-export-annotator-name-dotdot",
        "path leaves its root",
        run_with(
            [
                "moca",
                "annotate",
                "export",
                "--pool",
                "data/i.jsonl",
                "--out-dir",
                "results/ann",
                "--annotator",
                "../../x",
            ]
        ),
        "--annotator: sheet ../../x.csv leads to",
    ),
    # -- a FIFO, device or socket where a file is expected: refused before it is opened ----------------------
    Case(
        "infer-instances-fifo",
        "special file",
        run_with(infer("data/f.jsonl"), fifo("data/f.jsonl")),
        "data/f.jsonl: is a FIFO (named pipe), not a file; refused before opening it",
    ),
    Case(
        "score-predictions-device",
        "special file",
        run_with(score("/dev/null")),
        "/dev/null: is a character device, not a file; refused before opening it",
    ),
    Case(
        "score-out-fifo",
        "special file",
        run_with(score(out="results/f.json"), fifo("results/f.json")),
        "results/f.json: is a FIFO (named pipe), not a file (--out takes the path of a file)",
    ),
    Case(
        "check-params-fifo",
        "special file",
        run_with(["check-params", "--params", "p.yaml"], fifo("p.yaml")),
        "p.yaml: is a FIFO (named pipe), not a file",
    ),
    Case(
        "cache-stats-fifo",
        "special file",
        run_with(["cache", "stats", "--path", "c.sqlite"], fifo("c.sqlite")),
        "c.sqlite: is a FIFO (named pipe), not a request cache file",
    ),
    Case(
        "probe-fifo",
        "special file",
        run_with(["media", "probe", "data/raw/f.mp4"], fifo("data/raw/f.mp4")),
        "data/raw/f.mp4: is a FIFO (named pipe), not a file",
    ),
    Case(
        "candidates-source-file-fifo",
        "special file",
        run_with(
            ["moca", "candidates", "--source", "mmsd2", "--root", "data/src", "--split", "valid", "--out", "c.jsonl"],
            fifo("data/src/valid.json"),
        ),
        "data/src/valid.json: is a FIFO (named pipe), not a file",
    ),
    # -- socialbench plan (issue 32): the keys params do not define, the instances it needs; a price's shape
    Case(
        "plan-unknown-model",
        "params names",
        run_with(["plan", "--instances", "moca=data/i.jsonl", "--model", "nope"]),
        "plan: models.nope: no such model in params (known: random)",
    ),
    Case(
        "plan-unknown-run",
        "params names",
        run_with(["plan", "--instances", "moca=data/i.jsonl", "--run", "codar_x"]),
        "plan: --run codar_x: no <benchmark>.methods in params names it",
    ),
    Case(
        "plan-unknown-benchmark",
        "params names",
        run_with(["plan", "--instances", "mocha=data/i.jsonl"]),
        "plan: --instances 'mocha=data/i.jsonl': 'mocha' is no benchmark of params",
    ),
    Case(
        "plan-no-processed-instances",
        "missing input",
        run_with(["plan"]),
        "data/processed/moca/test.jsonl: no processed instances of moca",
    ),
    Case(
        "check-params-price-shape",
        "params values",
        bad_params(PARAMS.replace("random: {backend: random}", "random: {backend: random, price: 3.0}")),
        "models.random.price: 3.0 is not of type 'object', 'null'",
    ),
]


#: Commands whose other cases were fewer than three: a required option or argument left out, and an
#: option the command does not have. One line naming the command, exit 2, nothing written (point 9).
MISSING, BOGUS = "missing", "bogus"
COMMAND_LINE = {
    "weights convert": (MISSING, BOGUS, BOGUS + "-short"),
    "cache stats": (BOGUS,),
    "cache explain": (BOGUS,),
    "media cut": (MISSING,),
    "viewer": (MISSING,),
    "media audio": (MISSING,),
    "media frames": (MISSING, BOGUS),
    "media probe": (MISSING,),
    "meetingtom annotate export": (MISSING, BOGUS),
    "meetingtom annotate simulate": (MISSING, BOGUS),
    "meetingtom annotate human": (MISSING,),
    "meetingtom clips": (MISSING, BOGUS),
    "meetingtom consolidate": (MISSING, BOGUS),
    "meetingtom extract": (MISSING, BOGUS),
    "meetingtom mine": (MISSING, BOGUS),
    "meetingtom you-events": (MISSING, BOGUS),
    "meetingtom release": (MISSING,),
    "meetingtom media": (MISSING,),
    "meetingtom instances": (MISSING,),
    "moca acquire": (MISSING, BOGUS),
    "moca candidates": (MISSING, BOGUS),
    "moca sources": (BOGUS, BOGUS + "-short"),
    "moca preprocess": (MISSING,),
    "moca unimodal": (MISSING,),
    "moca stats": (MISSING, BOGUS),
    "moca annotate export": (MISSING,),
    "moca annotate review": (MISSING, BOGUS),
    "moca annotate arbitration": (MISSING, BOGUS),
    "moca annotate build": (MISSING, BOGUS),
    "prune-outputs": (MISSING,),
    "track": (BOGUS,),
    "book": (MISSING, BOGUS),
    "benchmarks": (BOGUS + "-short",),
}
COMMAND_LINE_CASES = [
    Case(
        f"{command.replace(' ', '-')}-{how}",
        "command line",
        run_with(command.split() + {MISSING: [], BOGUS: ["--bogus"], BOGUS + "-short": ["-x"]}[how]),
        f"socialbench {command}: "
        + {MISSING: "Missing", BOGUS: "No such option: --bogus", BOGUS + "-short": "No such option: -x"}[how],
    )
    for command, hows in COMMAND_LINE.items()
    for how in hows
]


@pytest.mark.slow
def test_snakemake_and_check_params_give_the_same_line_for_params_that_name_nothing(workflow_copy, capsys, monkeypatch):
    """Point 5: a params value that names nothing (here a method) stops Snakemake's own load with
    check-params's line, and no traceback."""
    good = (REPO / "params.yaml").read_text("utf-8")
    assert "  methods: [direct," in good
    (workflow_copy / "params.yaml").write_text(good.replace("  methods: [direct,", "  methods: [direkt, direct,", 1))
    env = {
        **os.environ,
        "PYTHONPATH": str(workflow_copy / "src"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    smk = subprocess.run(
        ["snakemake", "-n", "--cores", "1"], cwd=workflow_copy, env=env, capture_output=True, text=True
    )
    monkeypatch.chdir(workflow_copy)
    code, err = run_main(["check-params"], capsys, monkeypatch)
    (line,) = err.splitlines()
    assert smk.returncode != 0 and code == 2
    assert "moca.methods.0: 'direkt' names no method of moca" in line and line in smk.stderr.splitlines()
    assert "Traceback" not in smk.stderr


# ---- serve: the node's registry of shared model servers ------------------------------------------------
def server_record(text: str):
    return lambda root: write("reg/abc.json", text) and None


SERVER_CASES = [
    Case(
        "serve-list-dir-is-a-file",
        "server registry",
        run_with(["serve", "list", "--dir", "reg"], lambda root: write("reg", "x") and None),
        "reg: is a file, not a folder of server records (--dir takes a folder)",
    ),
    Case(
        "serve-list-record-cut-short",
        "server registry",
        run_with(["serve", "list", "--dir", "reg"], server_record('{"pid": 1, "port"')),
        "reg/abc.json: is not a server record (cut short, or not a JSON object)",
    ),
    Case(
        "serve-list-fifo-dir",
        "special file",
        run_with(["serve", "list", "--dir", "reg"], fifo("reg")),
        "reg: is a FIFO (named pipe)",
    ),
    Case(
        "serve-stop-pid-not-a-number",
        "server registry",
        run_with(["serve", "stop", "--dir", "reg"], server_record('{"key": "abc", "pid": "x", "port": 5}')),
        "reg/abc.json, field 'pid': expected int, got 'x'",
    ),
    Case(
        "serve-stop-dir-is-a-file",
        "server registry",
        run_with(["serve", "stop", "--dir", "reg"], lambda root: write("reg", "x") and None),
        "reg: is a file, not a folder of server records",
    ),
    Case(  # issue 38: other programs' JSON files are left alone, a refused record beside them still stops it
        "serve-stop-refused-record-among-other-json-files",
        "server registry",
        run_with(
            ["serve", "stop", "--dir", "results/mlflow"],
            lambda root: (
                (
                    write("results/mlflow/moca.json", '{"new": [], "existing": [], "parent": null}'),
                    write("results/mlflow/abc.json", '{"key": "abc", "pid": -1, "port": 5}'),
                )
                and None
            ),
        ),
        "results/mlflow/abc.json, field 'pid': refused: pid -1",
    ),
    Case(
        "serve-stop-record-not-an-object",
        "server registry",
        run_with(["serve", "stop", "--force", "--dir", "reg"], server_record("[1, 2]")),
        "reg/abc.json: is not a server record (cut short, or not a JSON object)",
    ),
]


# ---- issue 33, points 3, 4 and 6: write targets, what the retriever reads, a damaged cache --------------------
# Classes: "write target" (3: an output that is a link, outside the repository, or an input), "read root"
# (4: a corpus entry that is no regular file inside the corpus), "no traceback" (6: a damaged or foreign
# cache, a store URL with a port that is no number, a dvc.lock of another shape, a script outside git).
def stored_cache(path: str, n: int = 2, text: str = "x") -> None:
    from socialbench.core.backend import Response
    from socialbench.core.cache import RequestCache, cache_key
    from tests.helpers.moca_requests import moca_request

    cache = RequestCache(path)
    for i in range(n):
        req = moca_request(i)
        identity = {"backend": "random", "model_id": "random"}
        cache.put(cache_key(identity, req), identity, req, Response(text=text), "random")
    cache.close()
    Path(f"{path}.lock").unlink(missing_ok=True)


def sql(path: str, statement: str) -> None:
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute(statement)
    conn.commit()
    conn.close()


def damaged_page(root: Path) -> None:
    stored_cache("c.sqlite", n=60, text="x" * 2000)
    data = bytearray(Path("c.sqlite").read_bytes())
    data[4096 * 5 : 4096 * 9] = b"\xff" * (4096 * 4)  # table pages, not the schema on page 1
    Path("c.sqlite").write_bytes(bytes(data))


def cache_edit(statement: str):
    def prep(root: Path) -> None:
        stored_cache("c.sqlite")
        sql("c.sqlite", statement)

    return prep


def foreign_calls(path: str):
    def prep(root: Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        sql(path, "CREATE TABLE calls (id INTEGER PRIMARY KEY, who TEXT)")

    return prep


CODAR_PARAMS = PARAMS.replace(
    "moca: {frames: 2}",
    "moca: {frames: 2, retrieval: {retriever: bm25, k: 2, options: {corpus: data/corpus}}}",
).replace(  # a model that writes CoDAR's free text (a chance row is not run with CoDAR)
    "random: {backend: random}", "random: {backend: codar_script}"
)


def corpus_with(prep: Callable[[Path], None]):
    """A bm25 corpus of one good file, changed by ``prep``, and `infer --method codar` reading it."""

    def setup(root: Path) -> list[str]:
        write("params.yaml", CODAR_PARAMS)
        write("data/corpus/good.md", "The referee enforces the rules of a match.\n")
        prep(root)
        return infer("data/i.jsonl", "--method", "codar")

    return setup


def outside_secret(root: Path) -> None:
    write("../secret.txt", "sk-planted-secret\n")
    Path("data/corpus/leak.txt").symlink_to(Path("../secret.txt").resolve())


def link_out(link: str):
    """``link`` made a symlink to a file outside the repository."""

    def prep(root: Path) -> None:
        write("../outside.txt", "keep\n")
        Path(link).parent.mkdir(parents=True, exist_ok=True)
        Path(link).symlink_to(Path("../outside.txt").resolve())

    return prep


CACHE_CORPUS_WRITE_CASES = [
    Case(
        "infer-out-a-link-out-of-the-repository",
        "write target",
        run_with(infer("data/i.jsonl"), link_out("results/o.jsonl")),
        "results/o.jsonl: is a symlink (to ",
    ),
    Case(
        "score-out-a-link-out-of-the-repository",
        "write target",
        run_with(score(), link_out("results/s.json")),
        "results/s.json: is a symlink (to ",
    ),
    Case(
        "infer-stats-a-dangling-link",
        "write target",
        run_with(infer("data/i.jsonl"), lambda root: Path("results/o.stats.json").symlink_to("/nonexistent/x")),
        "results/o.stats.json: is a symlink (to /nonexistent/x)",
    ),
    Case(  # issue 38: an output beside the repository is the user's to name, but never one of the inputs
        "score-out-beside-the-repository-is-its-predictions",
        "write target",
        run_with(
            score(predictions=str(Path("../p.jsonl")), out="../sub/../p.jsonl"),
            lambda root: shutil.copyfile("results/p.jsonl", "../p.jsonl") and None,
        ),
        "../sub/../p.jsonl: --out is the same file as --predictions ../p.jsonl; an output never overwrites an input",
    ),
    Case(
        "infer-out-and-stats-beside-the-repository-share-a-file",
        "write target",
        lambda root: [*infer("data/i.jsonl")[:-4], "--out", str(root.parent / "o.jsonl"), "--stats", "../o.jsonl"],
        "../o.jsonl: --out and --stats name the same file; give each output its own path",
    ),
    Case(
        "tables-headline-beside-the-repository-a-link",
        "write target",
        run_with([*tables()[:-2], "--headline", "../h.json"], symlink("../h.json", "results/tables/all.md")),
        "../h.json: is a symlink (to ",
    ),
    Case(
        "infer-corpus-link-out-of-the-corpus",
        "read root",
        corpus_with(outside_secret),
        "data/corpus/leak.txt: links to ",
    ),
    Case(
        "infer-corpus-fifo",
        "special file",
        corpus_with(fifo("data/corpus/pipe.txt")),
        "data/corpus/pipe.txt: is a FIFO (named pipe), not a corpus file",
    ),
    Case(
        "infer-corpus-is-a-file",
        "read root",
        corpus_with(lambda root: write("params.yaml", CODAR_PARAMS.replace("data/corpus", "data/corpus/good.md"))),
        "data/corpus/good.md: is a file, not a folder",
    ),
    Case(
        "infer-corpus-not-utf8",
        "read root",
        corpus_with(lambda root: write("data/corpus/latin1.txt", b"caf\xe9\n")),
        "data/corpus/latin1.txt: not UTF-8 text (byte 0xe9 at offset 3)",
    ),
    Case(
        "cache-stats-damaged-page",
        "no traceback",
        run_with(["cache", "stats", "--path", "c.sqlite"], damaged_page),
        "c.sqlite: the request cache cannot be read (database disk image is malformed)",
    ),
    Case(
        "cache-stats-blob-model",
        "no traceback",
        run_with(["cache", "stats", "--path", "c.sqlite"], cache_edit("UPDATE calls SET model = CAST(model AS BLOB)")),
        "field 'model': holds a BLOB where the request cache keeps text",
    ),
    Case(
        "cache-explain-key-parts-not-json",
        "no traceback",
        run_with(
            ["cache", "explain", "inst-0000/direct/answer", "--path", "c.sqlite"],
            cache_edit("UPDATE calls SET key_parts = '{cut'"),
        ),
        "field 'key_parts': is not JSON",
    ),
    Case(
        "cache-explain-damaged-page",
        "no traceback",
        run_with(["cache", "explain", "--path", "c.sqlite"], damaged_page),
        "c.sqlite: the request cache cannot be read (",
    ),
    Case(
        "cache-stats-foreign-calls-table",
        "no traceback",
        run_with(["cache", "stats", "--path", "app.db"], foreign_calls("app.db")),
        "app.db: is an SQLite database but not a request cache (its 'calls' table lacks",
    ),
    Case(
        "infer-cache-a-foreign-calls-table",
        "no traceback",
        run_with(infer("data/i.jsonl"), foreign_calls(".cache/requests.sqlite")),
        ".cache/requests.sqlite: is an SQLite database but not a request cache",
    ),
    Case(
        "cache-stats-store-url-port-not-a-number",
        "no traceback",
        run_with(["cache", "stats"]),
        "SOCIALBENCH_CACHE_URL: postgresql://***@db:54x2/c: its port '54x2' is not a number",
        env=(("SOCIALBENCH_CACHE_URL", "postgresql://u:hunter2@db:54x2/c"),),
    ),
]


# The DVC scripts: run as a user runs them (a subprocess, from the repository), by their own runner.
DVC_LOCK = "schema: '2.0'\nstages:\n  s:\n    cmd: x\n    outs:\n    - path: results/tables\n"


def dvc_repo(lock: str = DVC_LOCK, git: bool = True, prep: Callable[[Path], None] | None = None):
    """The small repository as a git checkout with a dvc.lock, and scripts/dvc_records.py run in it."""

    def setup(root: Path) -> list[str]:
        write("dvc.lock", lock)
        if git:
            subprocess.run(["git", "init", "-q", str(root)], check=True)
        if prep:
            prep(root)
        return [str(REPO / "scripts" / "dvc_records.py"), "--repo", "."]

    return setup


def with_args(setup: Callable[[Path], list[str]], *args: str):
    return lambda root: [*setup(root), *args]


SCRIPT_CASES = [
    Case(
        "dvc_records-out-is-the-lock",
        "write target",
        with_args(dvc_repo(), "--out", "dvc.lock"),
        "dvc.lock: --out must name a .dvc file",
    ),
    Case(
        "dvc_records-out-a-link-out-of-the-repository",
        "write target",
        dvc_repo(prep=link_out("records.dvc")),
        "records.dvc: is a symlink (to ",
    ),
    Case(
        "dvc_records-out-outside-the-repository",
        "write target",
        with_args(dvc_repo(), "--out", "../records.dvc"),
        "records.dvc, outside ",
    ),
    Case(
        "dvc_records-out-inside-a-tree-it-lists",
        "write target",
        with_args(dvc_repo(), "--out", "results/records.dvc"),
        "lies inside results/",
    ),
    Case(
        "dvc_records-outside-git",
        "no traceback",
        dvc_repo(git=False),
        ": not a git checkout; scripts/dvc_records.py lists the outputs git does not track",
    ),
    Case(
        "dvc_records-lock-stages-a-list",
        "no traceback",
        dvc_repo("stages: [1, 2]\n"),
        "dvc.lock: not a dvc.lock (expected a mapping with a 'stages' mapping)",
    ),
    Case(
        "dvc_records-lock-out-without-path",
        "no traceback",
        dvc_repo("stages:\n  s:\n    outs:\n    - {md5: abc}\n"),
        "dvc.lock, stage s, outs[0]: expected a mapping with a 'path'",
    ),
    Case(
        "dvc_records-lock-not-yaml",
        "no traceback",
        dvc_repo("stages: {s: [\n"),
        "dvc.lock: ",
    ),
    Case(
        "dvc_remote-outside-git",
        "no traceback",
        lambda root: shutil.copytree(REPO / "scripts", root / "scripts") and ["bash", "scripts/dvc_remote.sh", "push"],
        ": not a git checkout; scripts/dvc_remote.sh shares a run of the repository",
    ),
]


@pytest.mark.parametrize("case", SCRIPT_CASES, ids=[c.id for c in SCRIPT_CASES])
def test_a_dvc_script_on_bad_input_is_one_line_exit_2_and_writes_nothing(case, ws):
    argv = case.setup(ws)
    before = snapshot(ws)
    command = argv if argv[0] == "bash" else [sys.executable, *argv]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(command, cwd=ws, capture_output=True, text=True, timeout=120, env=env)
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert case.says in lines[0], lines[0]
    assert snapshot(ws) == before
    assert not (ws.parent / "records.dvc").exists()


def test_the_script_cases_are_counted_by_class_in_the_docs():
    from collections import Counter

    doc = (REPO / "docs" / "bad-input.md").read_text("utf-8")
    for kind, n in Counter(c.kind for c in SCRIPT_CASES).items():
        assert f"| scripts: {kind} | {n} |" in doc, f"docs/bad-input.md: the scripts' row of {kind!r} should say {n}"


# ---- issue 33, class 1: process control (only a proven server is signalled; docs/security.md) --------------
def record_with(**fields):
    """A registry record of key ``abc`` with ``fields`` over a well-formed stand-in."""

    def prep(root: Path) -> None:
        record = {"key": "abc", "pid": 4242, "pid_started": "1", "port": 5, "command": ["vllm", "serve", "m"]}
        write("reg/abc.json", json.dumps({**record, **{k: v() if callable(v) else v for k, v in fields.items()}}))

    return prep


PROCESS_CASES = [
    Case(
        "serve-stop-pid-zero",
        "process control",
        run_with(["serve", "stop", "--force", "--dir", "reg"], record_with(pid=0)),
        "reg/abc.json, field 'pid': refused: pid 0 is no process a record may name",
    ),
    Case(
        "serve-stop-pid-minus-one",
        "process control",
        run_with(["serve", "stop", "--dir", "reg"], record_with(pid=-1)),
        "reg/abc.json, field 'pid': refused: pid -1 is no process a record may name",
    ),
    Case(
        "serve-stop-pid-impossible",
        "process control",
        run_with(["serve", "stop", "--dir", "reg"], record_with(pid=2**40)),
        "field 'pid': refused: pid 1099511627776 is above this host's largest process id",
    ),
    Case(
        "serve-stop-pid-is-the-caller",
        "process control",
        run_with(["serve", "stop", "--force", "--dir", "reg"], record_with(pid=os.getpid)),
        "is this process; nothing was signalled",
    ),
    Case(
        "serve-stop-pid-is-the-callers-group",
        "process control",
        run_with(["serve", "stop", "--force", "--dir", "reg"], record_with(pid=os.getpgrp)),
        "is in this process's own process group",
    ),
    Case(
        "serve-stop-key-is-a-path",
        "process control",
        run_with(["serve", "stop", "--force", "--dir", "reg"], record_with(key="../escape")),
        "reg/abc.json, field 'key': '../escape' is not this record's file name 'abc' (record keys are names",
    ),
    Case(
        "serve-list-pid-zero",
        "process control",
        run_with(["serve", "list", "--dir", "reg"], record_with(pid=0)),
        "reg/abc.json, field 'pid': refused",
    ),
]


# ---- issue 33, class 2: secrets (no credential of a URL shown; a key only to its host) ----------------------
SECRET_CASES = [
    Case(
        "params-tracking-uri-query-password",
        "secrets",
        run_with(
            ["check-params", "--params", "bad.yaml"],
            lambda root: (
                write("bad.yaml", PARAMS.replace("sqlite:///mlflow.db", "postgresql://db/m?password=s3cr3t")) and None
            ),
        ),
        "mlflow.tracking_uri: holds a password",
    ),
    Case(
        "infer-brave-key-to-another-host",
        "secrets",
        run_with(
            [*infer("data/i.jsonl"), "--method", "codar", "--params", "web.yaml"],
            lambda root: (
                write(
                    "web.yaml",
                    PARAMS.replace(
                        "moca: {frames: 2}",
                        'moca: {frames: 2, retrieval: {retriever: web, options: {base_url: "https://gw.example/s"}}}',
                    ).replace(  # a model that writes CoDAR's free text (a chance row is not run with CoDAR)
                        "random: {backend: random}", "random: {backend: codar_script}"
                    ),
                )
                and None
            ),
        ),
        "gw.example is not the Brave Search API, and the key of BRAVE_SEARCH_API_KEY goes only there",
    ),
]


# ---- issue 33, class 4: what the book reads (regular files inside the tables folder, UTF-8; docs/security.md) ----
def book_cmd(tables_dir: str = "results/bt") -> list[str]:
    return [
        "book",
        "--benchmark",
        "moca",
        "--tables-dir",
        tables_dir,
        "--instances",
        "data/i.jsonl",
        "--tracked",
        "results/t.json",
        "--out",
        "results/b.pdf",
    ]


def book_tables(**files: Callable[[Path, Path], None] | bytes):
    """A tables folder results/bt with a good table and ``files`` (bytes, or a maker given the path and the
    repository's root), and the book reading it."""

    def setup(root: Path) -> list[str]:
        write("results/bt/acc.csv", "model,value\nrandom,1\n")
        for name, made in files.items():
            path = Path("results/bt") / name
            if isinstance(made, bytes):
                write(str(path), made)
            else:
                made(path, root)
        return book_cmd()

    return setup


def link_out_of_the_repository(path: Path, root: Path) -> None:
    outside = root.parent / "outside.png"
    outside.write_bytes(b"\x89PNG secret")
    path.symlink_to(outside)


READ_CASES = [
    Case(
        "book-figure-linked-from-outside",
        "read root",
        book_tables(**{"fig.png": link_out_of_the_repository}),
        "results/bt/fig.png: is a link to",
    ),
    Case(
        "book-latin1-table",
        "read root",
        book_tables(**{"t.csv": "model,value\ncaf\u00e9,1\n".encode("latin-1")}),
        "results/bt/t.csv: not UTF-8 text (byte 0xe9 at offset 15, line 2)",
    ),
    Case(
        "book-folder-link-in-tables",
        "read root",
        book_tables(**{"more": lambda path, root: path.symlink_to(root / "results" / "bt" / "..")}),
        "results/bt/more: is a link to",
    ),
    Case(
        "book-fifo-in-tables",
        "special file",  # run in a subprocess with a timeout: a broken check would hang on the FIFO
        book_tables(**{"pipe.csv": lambda path, root: os.mkfifo(path)}),
        "results/bt/pipe.csv: is a FIFO (named pipe)",
    ),
]


# ---- issue 33, class 8: versioned outputs depend on inputs only (no case of the table: the command succeeds) -----
def test_moca_acquire_writes_the_same_manifest_on_first_use_and_after(ws, caplog, monkeypatch):
    """An unpinned file (RedCaps' annotations archive) is trusted on first use: the manifest says
    "recorded" on the first run and every later one (DVC sees no change); the first use is logged."""
    import zipfile

    from socialbench.cli import main

    Path("mirror").mkdir()
    with zipfile.ZipFile("mirror/redcaps_v1.0_annotations.zip", "w") as zf:
        zf.writestr("annotations/pics_2020.json", '{"annotations": []}')
    argv = ["moca", "acquire", "--source", "redcaps", "--root", "data/rc", "--mode", "mirror", "--mirror", "mirror"]
    manifests, logs = [], []
    for _ in range(2):
        monkeypatch.setattr(sys, "argv", ["socialbench", *argv])
        caplog.clear()
        main()
        logs.append(caplog.text)
        manifests.append(Path("data/rc/.manifest.json").read_bytes())
    assert manifests[0] == manifests[1] and b'"verified": "recorded"' in manifests[0]
    assert "recorded on first use in sources.lock" in logs[0] and "recorded on first use" not in logs[1]


# ---- issue 33, class 9: left from the earlier rounds ------------------------------------------------------------
def track_with_store_under_a_file(root: Path) -> list[str]:
    write("st.yaml", PARAMS.replace("sqlite:///mlflow.db", "sqlite:///data/i.jsonl/mlflow.db"))
    return [
        "track",
        "--benchmark",
        "moca",
        SCORE_FILE,
        "--instances",
        "data/i.jsonl",
        "--predictions-dir",
        "results/predictions",
        "--stats-dir",
        "results/runs",
        "--tables-dir",
        "results/tables",
        "--out",
        "results/summary.json",
        "--params",
        "st.yaml",
    ]


def answers_of_other_instances(root: Path) -> list[str]:
    write("answers.jsonl", json.dumps({"id": "elsewhere-0", "label": "mock"}) + "\n")
    write("human.yaml", PARAMS + "  human: {backend: file, options: {path: answers.jsonl}}\n")
    return infer("data/i.jsonl")[:6] + ["human", *infer()[7:], "--params", "human.yaml"]


LEFTOVER_CASES = [
    Case(
        "track-store-under-a-file",
        "leftovers",
        track_with_store_under_a_file,
        "data/i.jsonl/mlflow.db: the MLflow tracking store cannot be created there: data/i.jsonl is a file",
    ),
    Case(
        "meetingtom-consolidate-source-twice",
        "leftovers",
        run_with(
            ["meetingtom", "consolidate", *["--source-dir", "data", "--gold-dir", "results"] * 2, "--out-dir", "out"]
        ),
        "data: given as --source-dir twice (number 1 and 2); each source's folder once",
    ),
    Case(
        "params-unknown-you-type",
        "leftovers",
        check("meetingtom: {mining: {you: {you_type: you_999}}}\n"),
        "meetingtom.mining.you.you_type: 'you_999' is not one of the known values: you_1 (deictic)",
    ),
    Case(
        "moca-acquire-manual-public-file",
        "leftovers",
        run_with(["moca", "acquire", "--source", "mmsd2", "--root", "data/mm", "--mode", "manual", "--split", "train"]),
        "train.json is not under data/mm; put it there (it is at https://",
    ),
    Case(
        "infer-recorded-answers-match-no-instance",
        "leftovers",
        answers_of_other_instances,
        "answers.jsonl, field 'id': the recorded answers of models.human match none of the 3 instances of data/i.jsonl",
        cache=True,
    ),
]


# ---- issue 33, class 5: waits (every wait bounded by params; a closed port fails in seconds) ---------------
def closed_port() -> int:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def book_on(tracking_uri: str):
    def setup(root: Path) -> list[str]:
        write("book.yaml", PARAMS.replace("sqlite:///mlflow.db", tracking_uri))
        write("results/mlflow.json", json.dumps({"keys": []}))
        write("results/tables/t.csv", "a,b\n1,2\n")  # the book reads its tables before the store
        return [
            "book",
            "--benchmark",
            "moca",
            "--tables-dir",
            "results/tables",
            "--instances",
            "data/i.jsonl",
            "--tracked",
            "results/mlflow.json",
            "--params",
            "book.yaml",
            "--out",
            "results/book.pdf",
        ]

    return setup


def web_search_answering(fault, **options):
    """infer CoDAR with a model whose entities are looked up by the web retriever at a loopback search
    server (TEST DOUBLE, tests/helpers/brave_loopback.py) that answers every search with ``fault``."""

    def setup(root: Path) -> list[str]:
        from tests.helpers.brave_loopback import BraveServer

        server = BraveServer(token="k", faults=[fault] * 100).__enter__()  # a daemon thread, for the case
        os.environ["SB_BAD_INPUT_BRAVE_KEY"] = "k"
        opts = {"api_key_env": "SB_BAD_INPUT_BRAVE_KEY", "base_url": server.url, "max_retries": 0, **options}
        write(
            "web.yaml",
            PARAMS.replace(
                "moca: {frames: 2}", f"moca: {{frames: 2, retrieval: {{retriever: web, options: {json.dumps(opts)}}}}}"
            )
            + "  w: {backend: codar_script, options: {entities: text, route: hybrid}}\n",
        )
        return [
            "infer",
            "--benchmark",
            "moca",
            "--instances",
            "data/i.jsonl",
            "--model",
            "w",
            "--method",
            "codar",
            "--params",
            "web.yaml",
            "--out",
            "results/o.jsonl",
            "--stats",
            "results/o.stats.json",
        ]

    return setup


def _fault(status: int, **headers: str):
    from tests.helpers.brave_loopback import Fault

    return Fault(status=status, headers=headers)


WAIT_CASES = [
    Case(
        "book-tracking-server-closed-port",
        "waits",
        lambda root: book_on(f"http://127.0.0.1:{closed_port()}")(root),
        "cannot connect to 127.0.0.1:",
    ),
    Case(
        "book-postgresql-store-closed-port",
        "waits",
        lambda root: book_on(f"postgresql+psycopg://127.0.0.1:{closed_port()}/m")(root),
        "MLflow tracking store postgresql+psycopg://127.0.0.1:",
    ),
    Case(
        "infer-web-search-retry-after-3600",
        "waits",
        web_search_answering(_fault(429, **{"Retry-After": "3600"})),
        "asks to wait 3600 s (Retry-After), longer than moca.retrieval.options.max_wait_s (60 s)",
        outputs=(".cache",),  # the model's calls before the search stay cached, as before a dead server
    ),
    Case(
        "infer-every-web-search-fails",
        "waits",
        web_search_answering(_fault(500), max_consecutive_failures=2),
        "retriever web: stopped after 2 failed searches in a row",
        outputs=(".cache",),
    ),
]


# ---- issue 33, class 7: check-params knows every key -----------------------------------------------------
def params_with(old: str, new: str, extra: str = ""):
    return bad_params(PARAMS.replace(old, new) + extra)


PARAMS_KEY_CASES = [
    Case(
        "check-params-retriever-option-typo",
        "params keys",
        params_with("moca: {frames: 2}", "moca: {frames: 2, retrieval: {retriever: bm25, options: {corpsu: c}}}"),
        "moca.retrieval.options: unknown option(s) corpsu (retriever bm25 takes: b, corpus, k1)",
    ),
    Case(
        "check-params-retriever-option-out-of-range",
        "params keys",
        params_with(
            "moca: {frames: 2}", "moca: {frames: 2, retrieval: {retriever: bm25, options: {corpus: c, k1: -1}}}"
        ),
        "moca.retrieval.options.k1: -1 is less than the minimum of 0",
    ),
    Case(
        "check-params-unknown-retriever",
        "params keys",
        params_with("moca: {frames: 2}", "moca: {frames: 2, retrieval: {retriever: google}}"),
        "moca.retrieval.retriever: unknown retriever 'google'",
    ),
    Case(
        "check-params-resources-of-no-model",
        "params keys",
        params_with("seed: 1", "seed: 1\nresources: {models: {ghost: {gpu: 1}}}"),
        "resources.models.ghost: names no model of params",
    ),
    Case(
        "check-params-gpu-below-tensor-parallel-size",
        "params keys",
        params_with(
            "seed: 1",
            "seed: 1\nresources: {models: {big: {gpu: 1}}}",
            "  big: {backend: vllm, model_id: org/m, options: {tensor_parallel_size: 4}}\n",
        ),
        "resources.models.big.gpu: 1 is fewer than the 4 GPUs its vLLM server shards over",
    ),
    Case(
        "check-params-two-models-one-server-variable",
        "params keys",
        params_with("seed: 1", "seed: 1", "  random_7b: {backend: random}\n  random-7b: {backend: random}\n"),
        "its server variable SOCIALBENCH_SERVER_URL_RANDOM_7B is also models.random_7b's",
    ),
    Case(
        "check-params-meetingtom-ablation-template-cannot-render",
        "params keys",
        params_with(
            "moca: {frames: 2}",
            "moca: {frames: 2}\nmeetingtom: {methods: [no_prompt, no_prompt__no_markers], ablations:"
            " {no_markers: {table: markers, label: no markers, remove_markers: true}}}",
        ),
        "meetingtom.ablations.no_markers: template templates/no_prompt/user.txt: placeholder $transcirpt has no value",
        patch=lambda mp: template_typo(
            mp, "socialbench.meetingtom.benchmark.MeetingToMBenchmark", "no_prompt__no_markers", "user.txt"
        ),
    ),
    Case(
        "check-params-codar-ablation-template-cannot-render",
        "params keys",
        params_with(
            "moca: {frames: 2}",
            "moca: {frames: 2, methods: [direct, codar__wo_step5], ablations: {wo_step5: {table: table5, label: w/o"
            " Step 5, stages: [observer, query, context, conflict, decoder]}}}",
        ),
        "moca.ablations.wo_step5: template templates/codar/decoder.user.txt: placeholder $transcirpt has no value",
        patch=lambda mp: template_typo(
            mp, "socialbench.moca.benchmark.MocaBenchmark", "codar__wo_step5", "decoder.user.txt"
        ),
    ),
    Case(  # issue 38: an ablation without templates of its own, whose stages change what a stage answers
        "check-params-codar-ablation-templates-of-other-stages",
        "params keys",
        params_with(
            "moca: {frames: 2}",
            "moca: {frames: 2, methods: [direct, codar__wo_step3], ablations: {wo_step3: {table: table5, label: w/o"
            " Step 3, stages: [observer, query, context, decoder, checker]}}}",
        ),
        "moca.ablations.wo_step3: the method's templates (templates/codar/) do not fit its stages: decoder.system.txt"
        " asks for counterfactual_cost, conflict_utility",
    ),
    Case(
        "infer-codar-ablation-templates-of-other-stages",
        "params keys",
        run_with(
            [*infer("data/i.jsonl"), "--method", "codar__wo_step3"],
            lambda root: (
                write(
                    "params.yaml",
                    CODAR_PARAMS.replace(
                        "moca: {frames: 2, retrieval: {retriever: bm25, k: 2, options: {corpus: data/corpus}}}",
                        "moca: {frames: 2, retrieval: {retriever: none}, ablations: {wo_step3: {table: table5,"
                        " label: w/o Step 3, stages: [observer, query, context, decoder, checker]}}}",
                    ),
                )
                and None
            ),
        ),
        "moca.ablations.wo_step3: the method's templates (templates/codar/) do not fit its stages",
    ),
    Case(
        "check-params-modality-its-backend-cannot-carry",
        "params values",
        params_with("seed: 1", "seed: 1", "  c: {backend: anthropic, model_id: x, modalities: [image, audio]}\n"),
        "models.c.modalities: 'audio': backend anthropic cannot carry it (it carries image)",
    ),
    Case(
        "infer-model-without-a-modality-the-run-needs",
        "params values",
        run_with(
            [*infer("data/i.jsonl")[:6], "blind", *infer("data/i.jsonl")[7:]],
            # audio only: an image-text run needs an image (an empty list would be a text-only model, which runs)
            lambda root: write("params.yaml", PARAMS + "  blind: {backend: random, modalities: [audio]}\n"),
        ),
        "models.blind: moca method direct is excluded in params (takes audio (modalities in params), not",
    ),
]


# ---- issue 38: bad input that the workspace rule hid, or that reached no check of its own ------------------
def with_model_v(argv: list[str]) -> list[str]:
    return [("v" if a == "random" else a) for a in argv]


ISSUE38_CASES = [
    Case(
        "book-tracking-uri-in-the-environment-ftp",
        "no traceback",
        book_on("sqlite:///mlflow.db"),
        "MLFLOW_TRACKING_URI: 'ftp://h/store': MLflow has no tracking store for the scheme 'ftp'",
        env=(("MLFLOW_TRACKING_URI", "ftp://h/store"),),
    ),
    Case(
        "check-params-tracking-uri-a-file-store",
        "params names",
        params_with('mlflow: {tracking_uri: "sqlite:///mlflow.db"}', 'mlflow: {tracking_uri: "file:///tmp/mlruns"}'),
        "mlflow.tracking_uri: 'file:///tmp/mlruns': names MLflow's file store (a folder, or file://), which MLflow"
        " keeps in maintenance mode",
    ),
    Case(
        "book-tracking-store-a-folder",
        "unreadable file",
        book_on("sqlite:///data"),
        "data: names a folder, not an SQLite file (mlflow.tracking_uri, or MLFLOW_TRACKING_URI): name the database"
        " file, e.g. sqlite:///data/mlflow.db",
    ),
    Case(
        "infer-server-url-in-the-environment-not-a-url",
        "dead server",
        run_with(
            [*with_model_v(infer("data/i.jsonl")), "--method", "direct"],
            lambda root: write("params.yaml", PARAMS + "  v: {backend: vllm, model_id: org/m}\n") and None,
        ),
        "$SOCIALBENCH_SERVER_URL_V: 'not-a-url' is not a server URL (expected http://HOST:PORT/v1",
        cache=True,
        env=(("SOCIALBENCH_SERVER_URL_V", "not-a-url"),),
    ),
    Case(
        "cache-explain-video-without-frames",
        "media",
        run_with(
            ["cache", "explain", "--instances", "data/v.jsonl", "--model", "random", "--benchmark", "moca"],
            lambda root: stored_cache(".cache/requests.sqlite"),
        ),
        "data/v.jsonl, record v0, field 'frames': a video_text instance needs sampled frames",
    ),
]


def template_typo(monkeypatch, benchmark: str, run: str, name: str) -> None:
    """``benchmark``'s (a class path) template ``name`` of run ``run`` read with an unknown placeholder."""
    import importlib

    module, cls_name = benchmark.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), cls_name)
    real = cls.template

    def template(self, method, file):
        text = real(self, method, file)
        return text + "\n$transcirpt\n" if (method, file) == (run, name) else text

    monkeypatch.setattr(cls, "template", template)


# ---- the one runner over every case -----------------------------------------------------------------------
ALL_CASES = all_cases()


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing_outside_its_outputs(case, ws, capsys, monkeypatch):
    run_case(case, ws, capsys, monkeypatch)


def leaf_commands() -> list[tuple[str, ...]]:
    """Every command a user can run, as its words (``("moca", "annotate", "export")``): the cli's
    COMMANDS and SUB_APPS tables and the benchmarks' own commands, groups walked down to their leaves."""
    from socialbench.cli import COMMANDS, SUB_APPS, benchmark_apps, load_command

    out: list[tuple[str, ...]] = []

    def walk(cmd, words: tuple[str, ...]) -> None:
        if getattr(cmd, "commands", None):  # a group (typer's own click, not click's classes)
            for name, sub in cmd.commands.items():
                walk(sub, (*words, name))
        else:
            out.append(words)

    for name in [*COMMANDS, *SUB_APPS, *benchmark_apps()]:
        walk(load_command(name), (name,))
    return out


def test_every_command_has_at_least_three_cases(tmp_path, clip, monkeypatch):
    """Point 9: each command (subcommands included) is held to the rules by three cases or more; a
    case's command is read from the command line its setup returns."""
    from collections import Counter

    leaves = leaf_commands()
    counts: Counter[tuple[str, ...]] = Counter()
    for k, case in enumerate(ALL_CASES):
        root = build_ws(tmp_path / str(k), clip)
        monkeypatch.chdir(root)
        argv = case.setup(root)
        matches = [c for c in leaves if tuple(argv[: len(c)]) == c]
        assert matches, f"{case.id}: {argv[:3]} is no command"
        counts[max(matches, key=len)] += 1
    short = {" ".join(c): counts[c] for c in leaves if counts[c] < 3}
    assert not short


# ---- issue 38: an output lies wherever its user names it ----------------------------------------------------
def run_ok(argv: list[str], capsys, monkeypatch) -> str:
    """``socialbench ARGV`` as the installed command runs it, expected to succeed; its stderr."""
    from socialbench.cli import main

    monkeypatch.setattr(sys, "argv", ["socialbench", *argv])
    capsys.readouterr()
    main()
    return capsys.readouterr().err


def test_a_score_written_to_another_folder_by_absolute_path_is_written_there(ws, tmp_path, capsys, monkeypatch):
    out = tmp_path / "elsewhere" / "s.json"  # beside the checkout, as /tmp/s.json would be
    run_ok(score(out=str(out)), capsys, monkeypatch)
    assert json.loads(out.read_text())


def test_predictions_written_beside_the_checkout_through_dot_dot_are_written_there(ws, capsys, monkeypatch):
    run_ok(
        [*infer("data/i.jsonl")[:-4], "--out", "../out/o.jsonl", "--stats", "../out/o.stats.json"], capsys, monkeypatch
    )
    assert len((ws.parent / "out" / "o.jsonl").read_text().splitlines()) == 3


def test_frames_sampled_into_a_folder_outside_the_checkout_are_written_there(ws, tmp_path, capsys, monkeypatch):
    run_ok(frames_cmd(frames_dir=str(tmp_path / "x" / "cache")), capsys, monkeypatch)
    assert list((tmp_path / "x" / "cache").rglob("*.png")) or list((tmp_path / "x" / "cache").rglob("*.jpg"))


def test_serve_stop_on_a_folder_of_other_json_files_names_them_and_changes_nothing(ws, capsys, monkeypatch):
    write("results/mlflow/moca.json", '{"new": [], "existing": ["r1"], "parent": null}')
    write("results/mlflow/meetingtom.json", "{}")
    before = snapshot(ws)
    err = run_ok(["serve", "stop", "--dir", "results/mlflow"], capsys, monkeypatch)
    assert err.strip() == "note: results/mlflow: not server records, left alone: meetingtom.json, moca.json"
    assert snapshot(ws) == before
