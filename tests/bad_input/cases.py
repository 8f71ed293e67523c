"""The machinery of the bad-input suite (issue 12, point 10): the small repository each case runs in,
the ``Case`` row, the one runner (``run_case``) and the command lines and case makers that several
modules of the suite use. The cases themselves are in the ``test_*`` modules of this package, one
module per group of the classes docs/bad-input.md counts."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from socialbench.core.io import MESSAGE_LIMIT
from tests.conftest import make_instance

REPO = Path(__file__).resolve().parents[2]


# ---- the small repository each case runs in ----------------------------------------------------------
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
    scores = get_benchmark("moca").eval.score(insts, preds, source="p.jsonl")
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


def bad_params(text: str | bytes, command: Callable[[], list[str]] | None = None):
    def setup(root: Path) -> list[str]:
        write("bad.yaml", text)
        return command() if command else ["check-params", "--params", "bad.yaml"]

    return setup


def run_with(argv: list[str], prep: Callable[[Path], None] | None = None):
    def setup(root: Path) -> list[str]:
        if prep:
            prep(root)
        return argv

    return setup


def symlink(link: str, target: str):
    def prep(root: Path) -> None:
        Path(link).symlink_to(Path(target).resolve())

    return prep


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


# ---- case makers used by several modules of the suite ------------------------------------------------------
def check(text: str):
    """check-params on a params file of the small repository's models plus ``text``."""
    return bad_params("seed: 1\nmodels: {random: {backend: random}}\n" + text)


def mt_params(argv: list[str]):
    """``socialbench meetingtom ARGV --params mt.yaml`` with a params file that has a meetingtom section."""

    def setup(root: Path) -> list[str]:
        write("mt.yaml", PARAMS + "meetingtom: {}\n")
        return ["meetingtom", *argv, "--params", "mt.yaml"]

    return setup


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


CODAR_PARAMS = PARAMS.replace(
    "moca: {frames: 2}",
    "moca: {frames: 2, retrieval: {retriever: bm25, k: 2, options: {corpus: data/corpus}}}",
).replace(  # a model that writes CoDAR's free text (a chance row is not run with CoDAR)
    "random: {backend: random}", "random: {backend: codar_script}"
)


def link_out(link: str):
    """``link`` made a symlink to a file outside the repository."""

    def prep(root: Path) -> None:
        write("../outside.txt", "keep\n")
        Path(link).parent.mkdir(parents=True, exist_ok=True)
        Path(link).symlink_to(Path("../outside.txt").resolve())

    return prep


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


# ---- a command expected to succeed (issue 38: an output lies wherever its user names it) ----------------------
def run_ok(argv: list[str], capsys, monkeypatch) -> str:
    """``socialbench ARGV`` as the installed command runs it, expected to succeed; its stderr."""
    from socialbench.cli import main

    monkeypatch.setattr(sys, "argv", ["socialbench", *argv])
    capsys.readouterr()
    main()
    return capsys.readouterr().err
