"""Bad input: outputs (docs/bad-input.md, classes "output overwrites input", "output path", "output
destroys input", "write target"): an output that is an input, holds one or lies inside one, a path
that cannot be written, a link; and outputs beside the checkout that are written there."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.bad_input.cases import (
    GOOD,
    SCORE_FILE,
    Case,
    frames,
    infer,
    link_out,
    mt_params,
    prepare,
    run_case,
    run_ok,
    run_with,
    score,
    symlink,
    tables,
    write,
)


def hard_link(link: str, target: str):
    def prep(root: Path) -> None:
        os.link(target, link)

    return prep


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


CASES = [
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
    *[
        Case(cid, kind, mt_params(argv), says)
        for cid, kind, argv, says in [
            (
                "meetingtom-release-out-is-params",
                "output overwrites input",
                ["release", "--source", "demo", "--out", "mt.yaml", "--downloads", "results/dl"],
                "mt.yaml: is a file, but --out takes a folder",
            ),
        ]
    ],
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing_outside_its_outputs(case, ws, capsys, monkeypatch):
    run_case(case, ws, capsys, monkeypatch)


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
