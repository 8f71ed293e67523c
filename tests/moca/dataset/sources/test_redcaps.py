"""The redcaps reader: its documented file format read into candidates (files made here), and what it refuses."""

import json

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.dataset.sources import SourceOptions, read_source


def test_redcaps_reads_the_annotation_files_that_include_selects(tmp_path):
    ann = tmp_path / "release" / "annotations"
    ann.mkdir(parents=True)
    one = {
        "image_id": "guli1",
        "author": "u1",
        "url": "https://i.redd.it/guli1.jpg",
        "raw_caption": "Abandoned 😢 #sad",
        "caption": "abandoned",
        "subreddit": "abandoned",
        "score": 12,
        "created_utc": 1.5e9,
        "permalink": "/r/x",
    }
    (ann / "abandoned_2017.json").write_text(json.dumps({"info": {"url": "x"}, "annotations": [one]}))
    (ann / "memes_2020.json").write_text(
        json.dumps({"info": {}, "annotations": [dict(one, image_id="m1", subreddit="memes")]})
    )
    records = read_source("redcaps", tmp_path, SourceOptions(include=("abandoned_*.json",)))
    assert [r["id"] for r in records] == ["redcaps:guli1"]
    assert records[0]["text"] == "Abandoned 😢 #sad" and records[0]["media_urls"] == ["https://i.redd.it/guli1.jpg"]
    assert records[0]["media"] == [str(tmp_path / "images/abandoned/guli1.jpg")]


def test_redcaps_without_annotation_files_says_where_it_looked(tmp_path):
    with pytest.raises(DataError, match=r"release: no annotation file"):
        read_source("redcaps", tmp_path)
