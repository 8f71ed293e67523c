"""Outputs never overwrite inputs, media stay inside the data folders, a full disk is one clear line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from socialbench.core.errors import ConfigError
from socialbench.core.io import write_text_atomic
from socialbench.core.paths import DiskFull, MediaRoots, check_io


def fill(folder: Path) -> Path:
    """Fill a small disk up to its last bytes with one file (deleted to free the space again)."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as fh:
        for size in (4096, 512, 1):  # big blocks, then what is left byte by byte
            try:
                while True:
                    fh.write(b"\0" * size)
            except OSError:
                pass
    return filler


# ---- check_io ---------------------------------------------------------------------------------------
def test_an_output_equal_to_an_input_is_refused_naming_both_options(tmp_path):
    raw = tmp_path / "raw.jsonl"
    raw.write_text("{}\n")
    with pytest.raises(ConfigError) as exc:
        check_io({"--raw": raw}, {"--out": tmp_path / "raw.jsonl", "--report": tmp_path / "r.jsonl"})
    assert str(exc.value) == (
        f"{raw}: --out is the same file as --raw {raw}; an output never overwrites an input"
        " (nothing was read or written)"
    )


def test_an_output_reaching_an_input_through_dot_dot_is_refused(tmp_path):
    (tmp_path / "sub").mkdir()
    with pytest.raises(ConfigError, match="--out is the same file as --instances"):
        check_io({"--instances": tmp_path / "i.jsonl"}, {"--out": tmp_path / "sub" / ".." / "i.jsonl"})


def test_an_output_that_is_a_symlink_to_an_input_is_refused(tmp_path):
    (tmp_path / "p.jsonl").write_text("{}\n")
    (tmp_path / "link.json").symlink_to(tmp_path / "p.jsonl")
    with pytest.raises(ConfigError, match="--out is the same file as --predictions"):
        check_io({"--predictions": tmp_path / "p.jsonl"}, {"--out": tmp_path / "link.json"})


def test_an_output_that_is_a_hard_link_to_an_input_is_refused(tmp_path):
    (tmp_path / "p.jsonl").write_text("{}\n")
    os.link(tmp_path / "p.jsonl", tmp_path / "hard.json")
    with pytest.raises(ConfigError, match="--out is the same file as --predictions"):
        check_io({"--predictions": tmp_path / "p.jsonl"}, {"--out": tmp_path / "hard.json"})


def test_two_outputs_on_one_file_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"--out and --report name the same file"):
        check_io({}, {"--out": tmp_path / "o.jsonl", "--report": tmp_path / "o.jsonl"})


def test_an_output_listed_twice_under_one_option_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"--output twice name the same file"):
        check_io({}, {"--output": [tmp_path / "a.jsonl", tmp_path / "a.jsonl"]})


def test_an_output_path_under_a_file_names_that_file(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ConfigError) as exc:
        check_io({}, {"--out": tmp_path / "notes.txt" / "deeper" / "o.json"})
    assert (
        str(exc.value) == f"{tmp_path / 'notes.txt' / 'deeper' / 'o.json'}: cannot be created: "
        f"{tmp_path / 'notes.txt'} is a file, not a folder (--out)"
    )


def test_an_output_that_is_an_existing_folder_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"is a folder; --out takes the path of a file"):
        check_io({}, {"--out": tmp_path})


def test_a_folder_given_as_an_input_file_says_so(tmp_path):
    with pytest.raises(ConfigError, match=r"is a folder, not a file \(--instances takes a file\)"):
        check_io({"--instances": tmp_path}, {})


def test_folder_options_take_folders_and_refuse_a_file(tmp_path):
    check_io(
        {"--tables-dir": tmp_path / "tables"}, {"--out-dir": tmp_path / "new"}, folders=("--tables-dir", "--out-dir")
    )
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="is a file, but --out-dir takes a folder"):
        check_io({}, {"--out-dir": tmp_path / "f"}, folders=("--out-dir",))


def test_distinct_paths_pass_and_the_check_creates_nothing(tmp_path):
    check_io(
        {"--raw": tmp_path / "raw.jsonl", "--taxonomy": None}, {"--out": tmp_path / "a" / "o.jsonl", "--trace": None}
    )
    assert list(tmp_path.iterdir()) == []


# ---- media roots ------------------------------------------------------------------------------------
@pytest.fixture
def repo(tmp_path):
    (tmp_path / "data" / "raw").mkdir(parents=True)
    (tmp_path / "data" / "raw" / "a.png").write_bytes(b"png")
    (tmp_path / "secret.env").write_text("KEY=1")
    return tmp_path


def test_media_inside_the_data_folder_is_allowed(repo):
    assert MediaRoots.from_params({}, repo).problem("data/raw/a.png") is None


def test_dot_dot_out_of_the_data_folder_is_refused(repo):
    why = MediaRoots.from_params({}, repo).problem("data/raw/../../secret.env")
    assert why.startswith(
        f"data/raw/../../secret.env leads to {repo / 'secret.env'}, outside the repository's data folder"
    )


def test_a_symlink_inside_data_leading_out_is_refused_and_says_so(repo):
    (repo / "data" / "raw" / "link.png").symlink_to(repo / "secret.env")
    why = MediaRoots.from_params({}, repo).problem("data/raw/link.png")
    assert "leads through a symlink to" in why and str(repo / "secret.env") in why


def test_an_absolute_path_elsewhere_is_refused(repo, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "x.png"
    assert "outside the repository's data folder" in MediaRoots.from_params({}, repo).problem(str(elsewhere))


def test_a_sibling_folder_whose_name_starts_like_data_is_outside(repo):
    (repo / "data2").mkdir()
    assert MediaRoots.from_params({}, repo).problem("data2/x.png") is not None


def test_an_allowed_root_in_params_admits_its_files_absolute_or_relative(repo, tmp_path_factory):
    shared = tmp_path_factory.mktemp("shared")
    roots = MediaRoots.from_params({"media": {"allowed_roots": [str(shared), "media"]}}, repo)
    assert roots.problem(str(shared / "v.mp4")) is None and roots.problem("media/v.mp4") is None
    assert "media.allowed_roots" in roots.problem("secret.env")


# ---- a full disk ------------------------------------------------------------------------------------
def test_a_full_disk_is_one_line_naming_the_path_and_leaves_no_temporary_file(small_disk):
    target = small_disk / "out.jsonl"
    target.write_text("old\n")
    filler = fill(small_disk)
    with pytest.raises(DiskFull) as exc:
        write_text_atomic(target, "x" * 200_000)
    assert (
        str(exc.value) == f"{target}: no space left on the device; nothing was written (free some space and run again)"
    )
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "out.jsonl"] and target.read_text() == "old\n"
    filler.unlink()
    write_text_atomic(target, "new\n")  # after freeing space the same write succeeds
    assert target.read_text() == "new\n"


def test_a_command_writing_to_a_full_disk_exits_2_with_one_line_and_leaves_no_temporary_file(
    small_disk, tmp_path, monkeypatch, capsys
):
    import json
    import sys

    from socialbench.cli import main
    from tests.conftest import make_instance

    inst = tmp_path / "i.jsonl"
    inst.write_text(json.dumps(make_instance("a")) + "\n")
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        json.dumps(
            {
                "id": "a",
                "subject": "the speaker",
                "target": "the player",
                "mechanism": "expressive aggression",
                "label": "mock",
            }
        )
        + "\n"
    )
    filler = fill(small_disk)
    out = small_disk / "scores" / "s.json"
    filler.unlink()
    (small_disk / "scores").mkdir()
    fill(small_disk)
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "socialbench",
            "score",
            "--benchmark",
            "moca",
            "--instances",
            str(inst),
            "--predictions",
            str(preds),
            "--out",
            str(out),
        ],
    )
    with pytest.raises(SystemExit) as exc:
        main()
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err == f"error: {out}: no space left on the device; nothing was written (free some space and run again)\n"
    assert list((small_disk / "scores").iterdir()) == []
