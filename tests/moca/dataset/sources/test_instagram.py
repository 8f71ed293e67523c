"""The instagram reader: its documented file format read into candidates (files made here), and what it refuses."""

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.dataset.sources import SourceOptions, read_source


def test_instagram_captions_map_the_kaggle_columns_and_find_the_image_suffix(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "insta1.png").write_bytes(b"x")
    (tmp_path / "captions_csv.csv").write_text("Sr No,Image File,Caption\n1,img/insta1,monday mood ☕ #mondays\n")
    rec = read_source("instagram", tmp_path)[0]
    assert rec["id"] == "instagram:1" and rec["media"] == [str(tmp_path / "img/insta1.png")]
    assert rec["text"] == "monday mood ☕ #mondays"


def test_instagram_in_another_encoding_is_read_when_declared(tmp_path):
    (tmp_path / "captions_csv.csv").write_bytes("Sr No,Image File,Caption\n1,a.jpg,café\n".encode("cp1252"))
    with pytest.raises(DataError, match=r"captions_csv.csv, record line 2: not utf-8 text: byte 0xe9"):
        read_source("instagram", tmp_path)
    assert read_source("instagram", tmp_path, SourceOptions(encoding="cp1252"))[0]["text"] == "café"
