"""The supplementary reader: its documented file format read into candidates (files made here), and what it refuses."""

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.dataset.sources import read_source


def test_supplementary_rows_say_their_modality_and_may_link_their_media(tmp_path):
    (tmp_path / "supplementary.csv").write_text(
        "id,modality,text,media,page\nd1,video_text,you call that a plan?,clips/d1.mp4,debate\n"
        "m1,image_text,sure,https://example.org/m1.png,forum\n"
    )
    a, b = read_source("supplementary", tmp_path)
    assert a["modality"] == "video_text" and a["media"] == [str(tmp_path / "clips/d1.mp4")]
    assert (
        b["media"] == []
        and b["media_urls"] == ["https://example.org/m1.png"]
        and b["source_labels"] == {"page": "forum"}
    )


def test_supplementary_refuses_an_unknown_modality(tmp_path):
    (tmp_path / "supplementary.csv").write_text("id,modality,text,media\nd1,audio,hi,a.wav\n")
    with pytest.raises(DataError, match=r"record d1, field 'modality': expected one of image_text, video_text"):
        read_source("supplementary", tmp_path)
