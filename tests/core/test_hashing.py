"""Content hashes: the model-folder fingerprint used as the revision of unpinned local models, the
canonical JSON that keys and hashes are taken over (plain JSON values only), and the hash of modules'
source (a test double's behaviour)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from socialbench.core.hashing import (
    FINGERPRINT_FULL_HASH_MAX,
    canonical_json,
    code_tokens,
    folder_fingerprint,
    module_sources_sha256,
    sha256_json,
)


def model_folder(tmp_path, weights_size=1024):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden": 8}')
    (folder / "model.safetensors").write_bytes(b"\1" * weights_size)
    return folder


def test_a_changed_config_changes_the_fingerprint(tmp_path):
    folder = model_folder(tmp_path)
    before = folder_fingerprint(folder)
    (folder / "config.json").write_text('{"hidden": 9}')
    assert folder_fingerprint(folder) != before and before.startswith("files:")


def test_model_cards_and_hidden_folders_do_not_count(tmp_path):
    folder = model_folder(tmp_path)
    before = folder_fingerprint(folder)
    (folder / "README.md").write_text("card")
    (folder / ".cache" / "huggingface").mkdir(parents=True)
    (folder / ".cache" / "huggingface" / "download.lock").write_text("x")
    assert folder_fingerprint(folder) == before


def test_large_weights_count_by_size_and_their_ends(tmp_path):
    size = FINGERPRINT_FULL_HASH_MAX + 4096
    folder = model_folder(tmp_path, size)
    before = folder_fingerprint(folder)
    with open(folder / "model.safetensors", "r+b") as fh:
        fh.seek(size - 10)
        fh.write(b"\2")
    assert folder_fingerprint(folder) != before


# ---- canonical JSON: only plain JSON values ----------------------------------------------------------
def test_canonical_json_is_sorted_and_compact():
    assert canonical_json({"b": [1, (2, 3)], "a": "é"}) == '{"a":"é","b":[1,[2,3]]}'


@pytest.mark.parametrize(
    "value,error,match",
    [
        ({"path": Path("/data/x.png")}, TypeError, "not a plain JSON value: PosixPath '/data/x.png'"),
        ({"ids": {"a", "b"}}, TypeError, "not a plain JSON value: set"),
        ({"fps": math.nan}, ValueError, "not JSON compliant"),
        ({"fps": math.inf}, ValueError, "not JSON compliant"),
        ({"raw": b"bytes"}, TypeError, "not a plain JSON value: bytes"),
    ],
    ids=["path", "set", "nan", "inf", "bytes"],
)
def test_values_that_are_not_plain_json_are_refused_not_stringified(value, error, match):
    with pytest.raises(error, match=match):
        canonical_json(value)
    with pytest.raises(error):
        sha256_json(value)


# ---- the source of modules ------------------------------------------------------------------------
def modules(tmp_path, monkeypatch, **sources: bytes) -> None:
    """Modules ``name=source bytes`` in a folder on the import path (found, never imported)."""
    folder = tmp_path / "mods"
    folder.mkdir(exist_ok=True)
    for name, source in sources.items():
        (folder / f"{name}.py").write_bytes(source)
    monkeypatch.syspath_prepend(str(folder))


def test_the_same_code_in_modules_of_other_names_and_paths_has_the_same_hash(tmp_path, monkeypatch):
    modules(tmp_path, monkeypatch, here_a=b"ANSWER = 1\n", here_b=b"ANSWER = 1\n")
    assert module_sources_sha256(["here_a"]) == module_sources_sha256(["here_b"])


def test_crlf_line_ends_hash_as_the_same_code(tmp_path, monkeypatch):
    modules(tmp_path, monkeypatch, unix_ends=b"A = 1\nB = 2\n", windows_ends=b"A = 1\r\nB = 2\r\n")
    assert module_sources_sha256(["unix_ends"]) == module_sources_sha256(["windows_ends"])


def test_an_edit_of_a_module_s_code_changes_the_hash(tmp_path, monkeypatch):
    modules(tmp_path, monkeypatch, edited=b"ANSWER = 1\n")
    before = module_sources_sha256(["edited"])
    modules(tmp_path, monkeypatch, edited=b"ANSWER = 2\n")
    assert module_sources_sha256(["edited"]) != before


def test_comments_docstrings_and_line_wrapping_do_not_change_the_hash(tmp_path, monkeypatch):
    plain = b"def answer(a, b):\n    return a + b\n"
    dressed = (
        b'"""A module docstring."""\n\n# a comment\n\ndef answer(\n    a,\n    b,\n):\n'
        b'    """What it answers."""\n    return a  +  b  # why\n'
    )
    modules(tmp_path, monkeypatch, plain=plain, dressed=dressed)
    assert module_sources_sha256(["plain"]) != module_sources_sha256(["dressed"])  # a trailing comma is code
    modules(tmp_path, monkeypatch, dressed=dressed.replace(b"    b,\n", b"    b\n"))
    assert module_sources_sha256(["plain"]) == module_sources_sha256(["dressed"])


def test_a_string_that_starts_an_expression_is_code_not_a_docstring():
    assert code_tokens('x = 1\n"; ".join(y)\n') != code_tokens('x = 1\n", ".join(y)\n')


def test_a_module_without_source_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="module sys: no source to hash"):
        module_sources_sha256(["sys"])  # built in: no .py file
