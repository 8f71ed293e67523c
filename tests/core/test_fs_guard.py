"""The one guard of outputs (check_io), deletion inside a root, the resolver of paths named in data,
and the special-file check (issue 20, points 1, 3 and 4)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from socialbench.core.errors import ConfigError, DataError, SocialbenchError
from socialbench.core.io import read_file_bytes, read_jsonl
from socialbench.core.paths import (
    check_io,
    move_inside,
    refuse_special,
    remove_inside,
    resolve_inside,
    special_file,
)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text("{}\n")
    (tmp_path / "out").mkdir()
    return tmp_path


# ---- check_io: no output is, holds or lies inside an input --------------------------------------------------
def test_an_output_file_inside_an_input_folder_is_refused(tree):
    with pytest.raises(ConfigError, match=r"--out lies inside --root .*/in, a folder the command reads"):
        check_io({"--root": tree / "in"}, {"--out": tree / "in" / "new.jsonl"}, folders=("--root",))


def test_an_output_folder_holding_an_input_file_is_refused(tree):
    with pytest.raises(ConfigError, match=r"--out-dir holds --instances .*/in/a.jsonl"):
        check_io({"--instances": tree / "in" / "a.jsonl"}, {"--out-dir": tree / "in"}, folders=("--out-dir",))


def test_an_output_folder_holding_an_input_folder_through_dot_dot_is_refused(tree):
    with pytest.raises(ConfigError, match="--out-dir holds --root"):
        check_io({"--root": tree / "in"}, {"--out-dir": tree / "out" / ".."}, folders=("--root", "--out-dir"))


def test_a_folder_listing_what_it_receives_may_hold_inputs_beside_them(tree):
    check_io(
        {"--source-dir": tree / "in"},
        {"--out-dir": tree},
        folders=("--source-dir", "--out-dir"),
        receives={"--out-dir": [tree / "test.jsonl", tree / "tasks"]},
    )


def test_a_listed_received_file_inside_an_input_folder_is_refused(tree):
    with pytest.raises(ConfigError, match=r"--out-dir \(its .*/in/test.jsonl\) lies inside --source-dir"):
        check_io(
            {"--source-dir": tree / "in"},
            {"--out-dir": tree},
            folders=("--source-dir", "--out-dir"),
            receives={"--out-dir": [tree / "in" / "test.jsonl"]},
        )


def test_an_output_folder_that_is_an_input_folder_says_so_even_with_receives(tree):
    with pytest.raises(ConfigError, match="--out-dir is the same file as --source-dir"):
        check_io(
            {"--source-dir": tree / "in"},
            {"--out-dir": tree / "in"},
            folders=("--source-dir", "--out-dir"),
            receives={"--out-dir": [tree / "in" / "x.jsonl"]},
        )


def test_a_symlink_in_an_output_folder_leading_to_an_input_is_refused(tree):
    (tree / "out" / "sub").mkdir()
    (tree / "out" / "sub" / "x").symlink_to(tree / "in" / "a.jsonl")
    with pytest.raises(ConfigError, match=r"out/sub/x: a link in --frames-dir leads to VIDEO"):
        check_io({"VIDEO": tree / "in" / "a.jsonl"}, {"--frames-dir": tree / "out"}, folders=("--frames-dir",))


def test_a_hard_link_in_an_output_folder_to_an_input_is_refused(tree):
    os.link(tree / "in" / "a.jsonl", tree / "out" / "h")
    with pytest.raises(ConfigError, match=r"out/h: a link in --out-dir leads to --raw"):
        check_io({"--raw": tree / "in" / "a.jsonl"}, {"--out-dir": tree / "out"}, folders=("--out-dir",))


def test_unrelated_links_in_an_output_folder_pass(tree):
    (tree / "other").write_text("x")
    (tree / "out" / "l").symlink_to(tree / "other")
    check_io({"--raw": tree / "in" / "a.jsonl"}, {"--out-dir": tree / "out"}, folders=("--out-dir",))


def test_sibling_folders_whose_names_start_alike_do_not_overlap(tree):
    check_io({"--root": tree / "in"}, {"--out": tree / "in2" / "o.jsonl"}, folders=("--root",))


def test_an_input_fifo_is_refused_naming_the_option(tree):
    os.mkfifo(tree / "f")
    with pytest.raises(ConfigError, match=r"f: is a FIFO \(named pipe\), not a file; refused before .*\(--instances\)"):
        check_io({"--instances": tree / "f"}, {})


def test_an_output_fifo_is_refused(tree):
    os.mkfifo(tree / "f")
    with pytest.raises(ConfigError, match=r"is a FIFO \(named pipe\), not a file \(--cache takes the path of a file\)"):
        check_io({}, {"--cache": tree / "f"})


# ---- deleting and moving only inside a root ---------------------------------------------------------------
def test_a_symlink_is_removed_as_a_link_and_its_target_stays(tree):
    (tree / "out" / "l").symlink_to(tree / "in")
    remove_inside(tree / "out" / "l", tree / "out")
    assert not (tree / "out" / "l").is_symlink() and (tree / "in" / "a.jsonl").is_file()


def test_a_path_whose_folder_links_out_of_the_root_is_not_deleted(tree):
    (tree / "out" / "m").symlink_to(tree / "in")
    with pytest.raises(SocialbenchError, match="not inside .*nothing was deleted"):
        remove_inside(tree / "out" / "m" / "a.jsonl", tree / "out")
    assert (tree / "in" / "a.jsonl").is_file()


def test_the_root_itself_and_paths_through_dot_dot_are_not_deleted(tree):
    for path in (tree / "out", tree / "out" / ".." / "in"):
        with pytest.raises(SocialbenchError, match="nothing was deleted"):
            remove_inside(path, tree / "out")
    assert (tree / "out").is_dir() and (tree / "in" / "a.jsonl").is_file()


def test_a_folder_inside_the_root_is_removed_with_its_content(tree):
    (tree / "out" / "d").mkdir()
    (tree / "out" / "d" / "f").write_text("x")
    remove_inside(tree / "out" / "d", tree / "out")
    assert not (tree / "out" / "d").exists()


def test_moving_a_path_onto_itself_is_an_error_not_a_success(tree):
    (tree / "out" / "f").write_text("x")
    with pytest.raises(SocialbenchError, match="onto itself; nothing was moved"):
        move_inside(tree / "out" / "f", tree / "out" / "." / "f", tree / "out", tree / "out")
    assert (tree / "out" / "f").read_text() == "x"


def test_a_link_moves_as_a_link(tree):
    (tree / "out" / "l").symlink_to(tree / "in")
    move_inside(tree / "out" / "l", tree / "arch" / "l", tree / "out", tree / "arch")
    assert (tree / "arch" / "l").is_symlink() and (tree / "in" / "a.jsonl").is_file()


# ---- paths named inside data -----------------------------------------------------------------------------
def test_a_relative_name_resolves_under_its_root_as_named(tree):
    assert resolve_inside(tree / "in", "img/x.png", "src.json") == tree / "in" / "img" / "x.png"


def test_dot_dot_that_stays_inside_is_folded(tree):
    assert resolve_inside(tree / "in", "img/../x.png", "src.json") == tree / "in" / "x.png"


def test_dot_dot_leaving_the_root_is_refused_naming_file_record_and_field(tree):
    with pytest.raises(DataError, match=r"^src.json, record 7, field 'img': image \.\./a.jsonl leads to .*, outside"):
        resolve_inside(tree / "out", "../a.jsonl", "src.json", record="7", field="img", what="image")


def test_an_absolute_path_elsewhere_is_refused_and_one_inside_passes(tree):
    with pytest.raises(DataError, match="/etc/hostname leads to"):
        resolve_inside(tree / "in", "/etc/hostname", "src.json")
    assert resolve_inside(tree / "in", str(tree / "in" / "a.jsonl"), "src.json") == tree / "in" / "a.jsonl"


def test_a_symlink_leading_out_of_the_root_is_refused_and_says_so(tree):
    (tree / "out" / "l").symlink_to(tree / "in")
    with pytest.raises(DataError, match="l/a.jsonl leads through a symlink to"):
        resolve_inside(tree / "out", "l/a.jsonl", "src.json")


def test_an_empty_name_or_one_with_a_nul_is_no_path(tree):
    for name in ("", "a\x00b"):
        with pytest.raises(DataError, match="is not a path"):
            resolve_inside(tree, name, "src.json")


# ---- special files -----------------------------------------------------------------------------------------
def test_special_files_are_named_by_kind_and_regular_ones_are_not(tree):
    os.mkfifo(tree / "f")
    assert special_file(tree / "f") == "a FIFO (named pipe)"
    assert special_file("/dev/null") == "a character device"
    assert special_file(tree / "in" / "a.jsonl") is None and special_file(tree / "in") is None
    assert special_file(tree / "missing") is None


def test_a_socket_is_refused(tree):
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tree / "s"))
        with pytest.raises(DataError, match="is a socket, not a file"):
            refuse_special(tree / "s")


def test_a_device_is_refused_by_the_readers(tree):
    with pytest.raises(DataError, match=r"^/dev/zero: is a character device, not a file"):
        read_file_bytes("/dev/zero")  # would never end if read


def test_a_fifo_read_as_json_lines_is_refused_without_hanging(tree):
    os.mkfifo(tree / "f.jsonl")
    # in a subprocess with a timeout: a broken check would wait forever for a writer
    code = "import sys; from socialbench.core.io import read_jsonl; read_jsonl(sys.argv[1])"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tree / "f.jsonl")], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0 and "is a FIFO (named pipe), not a file; refused before opening it" in proc.stderr


def test_a_fifo_put_in_place_after_the_check_opens_without_blocking(tree):
    os.mkfifo(tree / "f")
    # the first look (stat) misses it, as when the FIFO replaces a file meanwhile: O_NONBLOCK opens it
    # at once and fstat refuses it; in a subprocess with a timeout, since a blocking open would hang
    code = (
        "import sys, socialbench.core.io as io; io.refuse_special = lambda path, what='file': None;"
        " io.read_file_bytes(sys.argv[1])"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tree / "f")], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "is a FIFO (named pipe), not a file" in proc.stderr


def test_regular_files_still_read(tree):
    assert read_jsonl(tree / "in" / "a.jsonl") == [{}]


# ---- outputs never written through a link, and kept inside the folder a command owns (issue 33, point 3) ----
def test_an_output_file_that_is_a_symlink_is_refused_and_its_target_kept(tree, tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep")
    (tree / "out" / "o.jsonl").symlink_to(target)
    with pytest.raises(ConfigError, match=r"o.jsonl: is a symlink \(to .*elsewhere.txt\); --out never writes through"):
        check_io({"--in": tree / "in" / "a.jsonl"}, {"--out": tree / "out" / "o.jsonl"})
    assert target.read_text() == "keep"


def test_an_output_outside_the_folder_the_command_owns_is_refused(tree):
    with pytest.raises(ConfigError, match=r"leads to .*/x.dvc, outside .*/out; --out writes only inside"):
        check_io({}, {"--out": tree / "out" / ".." / "x.dvc"}, root=tree / "out")


def test_an_output_that_leads_out_through_a_linked_folder_is_refused(tree, tmp_path_factory):
    away = tmp_path_factory.mktemp("away")
    (tree / "out" / "linked").symlink_to(away)
    with pytest.raises(ConfigError, match="outside"):
        check_io({}, {"--out": tree / "out" / "linked" / "x.dvc"}, root=tree / "out")


def test_an_output_inside_the_owned_folder_passes(tree):
    check_io({}, {"--out": tree / "out" / "x.dvc"}, root=tree / "out")


# ---- an output lies wherever the user names it (issue 38, point 2; docs/security.md) --------------------
@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A git checkout (a ``.git`` folder) as the working folder, with a folder beside it."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "results").mkdir()
    (tmp_path / "beside").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    return tmp_path / "repo"


def test_an_absolute_output_outside_the_checkout_passes(checkout, tmp_path):
    check_io({"--predictions": "results/p.jsonl"}, {"--out": tmp_path / "beside" / "s.json"})


def test_an_output_beside_the_checkout_through_dot_dot_passes(checkout):
    check_io({}, {"--out": "../beside/x.jsonl", "--out-dir": "../out"}, folders=("--out-dir",))


def test_an_output_outside_the_checkout_that_is_an_input_is_refused(checkout, tmp_path):
    (tmp_path / "beside" / "p.jsonl").write_text("{}\n")
    with pytest.raises(ConfigError, match=r"^\.\./beside/p\.jsonl: --out is the same file as --predictions"):
        check_io({"--predictions": tmp_path / "beside" / "p.jsonl"}, {"--out": "../beside/p.jsonl"})
    assert (tmp_path / "beside" / "p.jsonl").read_text() == "{}\n"


def test_an_output_folder_outside_the_checkout_holding_an_input_is_refused(checkout, tmp_path):
    (tmp_path / "beside" / "p.jsonl").write_text("{}\n")
    with pytest.raises(ConfigError, match=r"--out-dir holds --predictions"):
        check_io({"--predictions": tmp_path / "beside" / "p.jsonl"}, {"--out-dir": "../beside"}, folders=("--out-dir",))


def test_two_outputs_outside_the_checkout_on_one_file_are_refused(checkout, tmp_path):
    with pytest.raises(ConfigError, match=r"--out and --stats name the same file"):
        check_io({}, {"--out": "../beside/o.json", "--stats": tmp_path / "beside" / "o.json"})


def test_an_output_outside_the_checkout_that_is_a_symlink_is_refused(checkout, tmp_path):
    (tmp_path / "beside" / "target.json").write_text("keep")
    (tmp_path / "beside" / "s.json").symlink_to(tmp_path / "beside" / "target.json")
    with pytest.raises(ConfigError, match=r"s\.json: is a symlink \(to .*target\.json\); --out never writes"):
        check_io({}, {"--out": tmp_path / "beside" / "s.json"})
    assert (tmp_path / "beside" / "target.json").read_text() == "keep"


def test_an_output_in_a_results_folder_linked_to_another_disk_passes(checkout, tmp_path_factory):
    disk = tmp_path_factory.mktemp("disk")
    (checkout / "results" / "big").symlink_to(disk)
    check_io({}, {"--out": "results/big/moca/s.json"})
    check_io({}, {"--out-dir": "results/big"}, folders=("--out-dir",))


def test_a_folder_the_command_names_as_its_own_still_bounds_its_outputs(checkout, tmp_path):
    (tmp_path / "other").mkdir()
    check_io({}, {"--out": tmp_path / "other" / "x.dvc"}, root=tmp_path / "other")
    with pytest.raises(ConfigError, match="writes only inside the folder the command owns"):
        check_io({}, {"--out": checkout / "x.dvc"}, root=tmp_path / "other")
