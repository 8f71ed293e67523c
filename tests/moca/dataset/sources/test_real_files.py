"""The readers on the real public annotation files in ../shared/data: every record of each file
becomes exactly one candidate (counted independently of the readers)."""

import csv
import json

import pytest

from socialbench.moca.dataset.sources import SourceOptions, read_source

pytestmark = pytest.mark.shared


def test_mustard_yields_one_candidate_per_utterance(shared_dir):
    path = shared_dir / "data" / "mustard" / "sarcasm_data.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    records = read_source("mustard", path.parent)
    assert len(records) == len(raw) == 690
    first = records[0]
    assert first["id"] == "mustard:1_60" and first["speaker"] == "SHELDON" and first["modality"] == "video_text"
    assert [c["speaker"] for c in first["context"]] == raw["1_60"]["context_speakers"]
    assert sum(r["source_labels"]["sarcasm"] for r in records) == sum(v["sarcasm"] for v in raw.values())


def test_mintrec_yields_one_candidate_per_row_of_each_split(shared_dir):
    folder = shared_dir / "data" / "mintrec"
    rows = {
        s: list(csv.reader((folder / f"{s}.tsv").open(encoding="utf-8"), delimiter="\t"))[1:] for s in ("train", "dev")
    }
    records = read_source("mintrec", folder, SourceOptions(splits=("train", "dev")))
    assert len(records) == len(rows["train"]) + len(rows["dev"]) == 1779
    assert sum(r["split"] == "dev" for r in records) == len(rows["dev"])
    assert records[0]["source_labels"] == {"intent": rows["train"][0][4]}
    assert records[0]["media"][0].endswith("raw_data/S05/E16/329.mp4")


def test_mmsd2_yields_one_candidate_per_tweet(shared_dir):
    folder = shared_dir / "data" / "mmsd2"
    raw = json.loads((folder / "valid.json").read_text(encoding="utf-8"))
    records = read_source("mmsd2", folder, SourceOptions(splits=("valid",)))
    assert len(records) == len(raw) == 2410
    assert sum(r["source_labels"]["sarcasm"] for r in records) == sum(r["label"] for r in raw)


def test_memecap_yields_one_candidate_per_meme_with_its_image_description(shared_dir):
    folder = shared_dir / "data" / "memecap"
    raw = json.loads((folder / "memes-test.json").read_text(encoding="utf-8"))
    records = read_source("memecap", folder, SourceOptions(splits=("test",)))
    assert len(records) == len(raw) == 559
    assert records[0]["text"] == raw[0]["title"] and records[0]["image_description"] == raw[0]["img_captions"]
    assert records[0]["media_urls"] == [raw[0]["url"]]


def test_reading_the_same_files_twice_gives_identical_records(shared_dir):
    folder = shared_dir / "data" / "mmsd2"
    a = read_source("mmsd2", folder, SourceOptions(splits=("valid",)))
    b = read_source("mmsd2", folder, SourceOptions(splits=("valid",)))
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_a_truncated_copy_of_a_real_file_names_the_record_it_stops_in(shared_dir, tmp_path):
    from socialbench.core.errors import DataError

    text = (shared_dir / "data" / "mustard" / "sarcasm_data.json").read_text(encoding="utf-8")
    (tmp_path / "sarcasm_data.json").write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_source("mustard", tmp_path)
    msg = str(err.value)
    assert msg.startswith(f"{tmp_path / 'sarcasm_data.json'}, record ") and "truncated?" in msg
    assert ", after record '" in msg
