"""Bad input: runs and releases (docs/bad-input.md, classes "predictions", "meeting files",
"repository", "archive", "recorded answers", "leftovers"): predictions of another run, a meeting's
files and annotation sheets, a DVC repository that is not one, archives, recorded answers."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from tests.bad_input.cases import (
    PARAMS,
    SCORE_FILE,
    Case,
    check,
    infer,
    jsonl,
    run_case,
    run_with,
    score,
    symlink,
    write,
)


def preds_with(*changes: dict, extra: tuple[str, ...] = ()):
    def setup(root: Path) -> list[str]:
        recs = [json.loads(line) for line in Path("results/p.jsonl").read_text().splitlines()]
        for rec, change in zip(recs, changes):
            rec.update(change)
        write("results/bad.jsonl", jsonl(recs))
        return score("results/bad.jsonl", "data/i.jsonl", *extra)

    return setup


def broken_dvc_repo(root: Path) -> list[str]:
    write("r/.dvc/config", "")
    write("r/dvc.lock", "stages: [\n")
    return ["prune-lock", "--repo", "r"]


def lock_outside_the_repository(root: Path) -> list[str]:
    write("r/.dvc/config", "")
    write("elsewhere.lock", "stages: {}\n")
    symlink("r/dvc.lock", "elsewhere.lock")(root)
    return ["commit", "--repo", "r"]


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


CASES = [
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
    # -- a repository that is not one (point 7) ----------------------------------------------------------------
    Case(
        "prune-lock-not-a-dvc-repository",
        "repository",
        run_with(["prune-lock", "--repo", "data"]),
        "data: not a DVC repository (no .dvc folder",
    ),
    Case("prune-lock-no-such-folder", "repository", run_with(["prune-lock", "--repo", "nothere"]), "nothere: no such"),
    Case("prune-lock-broken-lock", "repository", broken_dvc_repo, "r/dvc.lock: not valid YAML: line 2"),
    Case("commit-not-a-dvc-repository", "repository", run_with(["commit", "--repo", "data"]), "data: not a DVC repo"),
    Case("commit-no-such-folder", "repository", run_with(["commit", "--repo", "nothere"]), "nothere: no such folder"),
    Case("commit-lock-leads-outside", "repository", lock_outside_the_repository, "r/dvc.lock: leads to"),
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
    Case(
        "meetingtom-truncated-subset",
        "meeting files",
        annotation_import("sheets/a1.csv", "sheets/a2.csv", subset='["a", '),
        "sheets/subset.json: not valid JSON",
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


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing_outside_its_outputs(case, ws, capsys, monkeypatch):
    run_case(case, ws, capsys, monkeypatch)


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
