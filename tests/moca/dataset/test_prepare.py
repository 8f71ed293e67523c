"""Filtering raw MoCA instances: media must exist and images must decode; bad records and bad lines
go to the drop report with their reasons; nothing is lost."""

import json

import pytest
from PIL import Image

from socialbench.core.errors import DataError, SocialbenchError
from socialbench.moca.dataset.prepare import prepare_file, prepare_instances
from tests.conftest import make_instance


def png(path):
    Image.new("RGB", (8, 6), (200, 10, 10)).save(path)
    return str(path)


def write(path, lines):
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_zero_byte_image_is_dropped_with_the_file_named(tmp_path, taxonomy):
    (tmp_path / "zero.png").write_bytes(b"")
    recs = [
        make_instance("ok", media=[png(tmp_path / "ok.png")]),
        make_instance("z", media=[str(tmp_path / "zero.png")]),
    ]
    kept, dropped = prepare_instances(recs, taxonomy, "raw.jsonl")
    assert [r["id"] for r in kept] == ["ok"]
    assert dropped[0]["id"] == "z" and dropped[0]["problems"] == [
        {"field": "media", "reason": f"{tmp_path / 'zero.png'}: cannot decode the image (the file is empty)"}
    ]


def test_random_bytes_png_is_dropped_as_undecodable(tmp_path, taxonomy):
    (tmp_path / "noise.png").write_bytes(bytes(range(256)) * 8)
    kept, dropped = prepare_instances([make_instance("n", media=[str(tmp_path / "noise.png")])], taxonomy, "raw.jsonl")
    assert kept == [] and dropped[0]["problems"][0]["field"] == "media"
    assert (
        "noise.png: cannot decode the image (not an image format Pillow can read)"
        in dropped[0]["problems"][0]["reason"]
    )


def test_truncated_png_is_dropped(tmp_path, taxonomy):
    png(tmp_path / "full.png")
    raw = (tmp_path / "full.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(raw[: len(raw) // 2])
    _, dropped = prepare_instances([make_instance("c", media=[str(tmp_path / "cut.png")])], taxonomy, "raw.jsonl")
    assert dropped and "cut.png: cannot decode the image" in dropped[0]["problems"][0]["reason"]


def test_jpeg_cut_to_80_percent_is_dropped_not_left_to_fail_at_inference(tmp_path, taxonomy):
    import random

    rng = random.Random(1)
    Image.frombytes("RGB", (128, 96), bytes(rng.randrange(256) for _ in range(128 * 96 * 3))).save(tmp_path / "f.jpg")
    raw = (tmp_path / "f.jpg").read_bytes()
    (tmp_path / "cut.jpg").write_bytes(raw[: len(raw) * 8 // 10])
    recs = [make_instance("ok", media=[str(tmp_path / "f.jpg")]), make_instance("c", media=[str(tmp_path / "cut.jpg")])]
    kept, dropped = prepare_instances(recs, taxonomy, "raw.jsonl")
    assert [r["id"] for r in kept] == ["ok"] and dropped[0]["id"] == "c"
    assert "cut.jpg: cannot decode the image (OSError: image file is truncated" in dropped[0]["problems"][0]["reason"]


def test_image_text_instance_whose_media_is_a_video_is_dropped(tmp_path, taxonomy):
    from tests.helpers.media_synth import generate_indexed_video

    clip = generate_indexed_video(tmp_path / "clip.mp4", frames=3, fps=5)
    _, dropped = prepare_instances([make_instance("v", media=[str(clip)])], taxonomy, "raw.jsonl")
    assert (
        dropped[0]["problems"][0]["field"] == "media"
        and "clip.mp4: cannot decode the image" in dropped[0]["problems"][0]["reason"]
    )


def test_video_text_media_is_only_checked_to_exist_here(tmp_path, taxonomy):
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"not decoded by prepare: the media stage reports bad clips")
    rec = make_instance("v", modality="video_text", media=[str(clip)], transcript="A: hi")
    kept, dropped = prepare_instances([rec], taxonomy, "raw.jsonl")
    assert [r["id"] for r in kept] == ["v"] and dropped == []


def test_folder_in_place_of_an_image_is_dropped(tmp_path, taxonomy):
    (tmp_path / "dir.png").mkdir()
    _, dropped = prepare_instances([make_instance("d", media=[str(tmp_path / "dir.png")])], taxonomy, "raw.jsonl")
    assert dropped[0]["problems"] == [{"field": "media", "reason": f"{tmp_path / 'dir.png'} is a folder, not a file"}]


def test_undecodable_image_with_on_invalid_fail_names_file_record_and_field(tmp_path, taxonomy):
    (tmp_path / "zero.png").write_bytes(b"")
    with pytest.raises(DataError) as exc:
        prepare_instances([make_instance("z", media=[str(tmp_path / "zero.png")])], taxonomy, "raw.jsonl", "fail")
    assert (exc.value.path, exc.value.record, exc.value.field) == ("raw.jsonl", "z", "media")


def test_unknown_on_invalid_value_is_a_clear_error_listing_the_allowed_values(taxonomy):
    with pytest.raises(SocialbenchError, match=r"--on-invalid 'maybe': must be one of drop, fail"):
        prepare_instances([], taxonomy, "raw.jsonl", "maybe")


def test_unparsable_line_is_dropped_with_its_line_number_and_raw_text_and_the_rest_kept(tmp_path, taxonomy):
    img = png(tmp_path / "ok.png")
    long_garbage = '{"id": "x", ' + "y" * 500
    path = write(
        tmp_path / "raw.jsonl",
        [make_instance("a", media=[img]), long_garbage, "", "[1, 2]", make_instance("b", media=[img])],
    )
    kept, dropped = prepare_file(path, taxonomy, "drop")
    assert [r["id"] for r in kept] == ["a", "b"]
    assert [(d["id"], d["line"], d["record"]) for d in dropped] == [("line 2", 2, None), ("line 4", 4, None)]
    reason = dropped[0]["problems"][0]["reason"]
    assert reason.startswith("line 2 is not valid JSON (") and '{"id": "x", yyy' in reason
    assert len(dropped[0]["raw"]) == 200 and dropped[0]["raw"].endswith("…")
    assert dropped[1]["problems"][0]["reason"] == "line 4 is not a JSON object: '[1, 2]'"


def test_unparsable_line_with_on_invalid_fail_still_stops(tmp_path, taxonomy):
    path = write(tmp_path / "raw.jsonl", [make_instance("a"), "{oops"])
    with pytest.raises(DataError) as exc:
        prepare_file(path, taxonomy, "fail")
    assert exc.value.record == "line 2" and "not valid JSON" in str(exc.value)


def test_empty_input_file_is_an_error(tmp_path, taxonomy):
    path = tmp_path / "raw.jsonl"
    path.write_text("\n\n")
    with pytest.raises(DataError, match="no records: the file is empty"):
        prepare_file(path, taxonomy)


def test_dropped_records_report_their_line_and_the_report_follows_file_order(tmp_path, taxonomy):
    img = png(tmp_path / "ok.png")
    path = write(
        tmp_path / "raw.jsonl",
        [make_instance("z", media=[img], label="happy"), "{bad", make_instance(None, media=[img])],
    )
    kept, dropped = prepare_file(path, taxonomy)
    assert kept == [] and [(d["id"], d["line"]) for d in dropped] == [("z", 1), ("line 2", 2), ("line 3", 3)]
    assert dropped[2]["problems"] == [{"field": "id", "reason": "expected a non-empty string, got null"}]


def test_duplicate_ids_in_a_file_drop_both_copies_naming_each_others_line(tmp_path, taxonomy):
    img = png(tmp_path / "ok.png")
    path = write(
        tmp_path / "raw.jsonl",
        [make_instance("a", media=[img]), make_instance("b", media=[img]), make_instance("a", media=[img])],
    )
    kept, dropped = prepare_file(path, taxonomy)
    assert [r["id"] for r in kept] == ["b"]
    assert [(d["line"], d["problems"]) for d in dropped] == [
        (1, [{"field": "id", "reason": "duplicate id, also on line 3"}]),
        (3, [{"field": "id", "reason": "duplicate id, also on line 1"}]),
    ]


def test_gold_differing_only_in_case_is_kept_canonical_and_nothing_is_dropped(tmp_path, taxonomy):
    rec = make_instance(
        "a", media=[png(tmp_path / "a.png")], label="Mock", mechanism="Expressive-Aggression", subject="The Speaker"
    )
    kept, dropped = prepare_instances([rec], taxonomy, "raw.jsonl")
    assert dropped == []
    assert (kept[0]["label"], kept[0]["mechanism"], kept[0]["subject"]) == (
        "mock",
        "expressive aggression",
        "the speaker",
    )
