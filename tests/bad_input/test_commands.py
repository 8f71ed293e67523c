"""Bad input: command lines (docs/bad-input.md, classes "option value", "names", "missing input",
"command line"): an option value out of range, a name that is not there, an input that is
missing, an option left out or one the command does not have."""

from __future__ import annotations

import pytest

from tests.bad_input.cases import (
    PARAMS,
    Case,
    bad_params,
    mt_params,
    run_case,
    run_with,
)

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


CASES = [
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
    Case(
        "plan-no-processed-instances",
        "missing input",
        run_with(["plan"]),
        "data/processed/moca/test.jsonl: no processed instances of moca",
    ),
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
    *COMMAND_LINE_CASES,
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing_outside_its_outputs(case, ws, capsys, monkeypatch):
    run_case(case, ws, capsys, monkeypatch)
