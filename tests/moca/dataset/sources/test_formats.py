"""Each source module reads files in its documented format (files made here) into candidates."""

import json

import pytest

from socialbench.core.errors import ConfigError, DataError
from socialbench.moca.dataset.sources import SourceOptions, read_source


def test_mustard_checks_that_context_and_speakers_pair_up(tmp_path):
    (tmp_path / "sarcasm_data.json").write_text(
        json.dumps(
            {
                "1_1": {
                    "utterance": "Sure.",
                    "speaker": "A",
                    "context": ["x", "y"],
                    "context_speakers": ["B"],
                    "sarcasm": True,
                }
            }
        )
    )
    with pytest.raises(
        DataError, match=r"record 1_1, field 'context_speakers': 2 context utterances but 1 context speakers"
    ):
        read_source("mustard", tmp_path)


def test_mustard_names_a_missing_field(tmp_path):
    (tmp_path / "sarcasm_data.json").write_text(
        json.dumps({"1_1": {"utterance": "Sure.", "speaker": "A", "context": [], "context_speakers": []}})
    )
    with pytest.raises(DataError, match=r"sarcasm_data.json, record 1_1, field 'sarcasm': missing"):
        read_source("mustard", tmp_path)


def test_mintrec_with_wrong_columns_names_the_missing_one(tmp_path):
    (tmp_path / "train.tsv").write_text("season\tepisode\tclip\tutterance\tlabel\nS01\tE01\t1\thi\tGreet\n")
    with pytest.raises(DataError, match=r"train.tsv, record line 1 \(header\), field 'text': missing column"):
        read_source("mintrec", tmp_path, SourceOptions(splits=("train",)))


def test_mmsd2_refuses_a_label_that_is_not_binary(tmp_path):
    (tmp_path / "valid.json").write_text(json.dumps([{"image_id": 7, "text": "ok", "label": 2}]))
    with pytest.raises(DataError, match=r"valid.json, record 7, field 'label': expected 0 or 1, got 2"):
        read_source("mmsd2", tmp_path, SourceOptions(splits=("valid",)))


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


def test_multimet_columns_can_be_mapped_and_the_rest_are_kept_as_labels(tmp_path):
    (tmp_path / "multimet.csv").write_text("pair,sentence,pic,sentiment\n12,time is money,images/12.jpg,neutral\n")
    options = SourceOptions.from_mapping("multimet", {"columns": {"id": "pair", "text": "sentence", "media": "pic"}})
    rec = read_source("multimet", tmp_path, options)[0]
    assert rec["id"] == "multimet:12" and rec["source_labels"] == {"sentiment": "neutral"}


def test_an_unknown_column_role_is_a_config_error(tmp_path):
    (tmp_path / "multimet.csv").write_text("id,text,image\n")
    with pytest.raises(ConfigError, match=r"moca.sources.multimet.columns: unknown role\(s\) caption"):
        read_source("multimet", tmp_path, SourceOptions(columns={"caption": "text"}))


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
