"""The hateful_memes reader: its documented file format read into candidates (files made here), and what it refuses."""

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.dataset.sources import SourceOptions, read_source


def test_hateful_memes_jsonl_becomes_image_text_candidates_with_their_label(tmp_path):
    (tmp_path / "dev_seen.jsonl").write_text(
        '{"id": 8291, "img": "img/08291.png", "label": 1, "text": "white people is this a shooting range"}\n'
        '{"id": 46971, "img": "img/46971.png", "text": "bravery at its finest"}\n'
    )
    records = read_source("hateful_memes", tmp_path, SourceOptions(splits=("dev_seen",)))
    assert [r["id"] for r in records] == ["hateful_memes:8291", "hateful_memes:46971"]
    assert records[0]["source_labels"] == {"hateful": True} and records[1]["source_labels"] == {}
    assert records[0]["media"] == [str(tmp_path / "img/08291.png")] and records[0]["origin"]["record"] == "line 1"


def test_hateful_memes_refuses_an_image_path_leaving_the_release(tmp_path):
    (tmp_path / "train.jsonl").write_text('{"id": 1, "img": "../../etc/x.png", "text": "t"}\n')
    with pytest.raises(DataError, match=r"record 1, field 'img': image path ../../etc/x.png leads to .*, outside"):
        read_source("hateful_memes", tmp_path, SourceOptions(splits=("train",)))
