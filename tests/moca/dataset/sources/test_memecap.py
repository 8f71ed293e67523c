"""The memecap reader: its documented file format read into candidates (files made here), and what it refuses."""

import json

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.dataset.sources import SourceOptions, read_source


def test_memecap_refuses_an_image_name_with_a_path(tmp_path):
    rec = {
        "post_id": "abc",
        "title": "t",
        "img_captions": [],
        "meme_captions": [],
        "metaphors": [],
        "url": "",
        "img_fname": "../x.png",
    }
    (tmp_path / "memes-test.json").write_text(json.dumps([rec]))
    with pytest.raises(DataError, match=r"record abc, field 'img_fname': expected a file name"):
        read_source("memecap", tmp_path, SourceOptions(splits=("test",)))
