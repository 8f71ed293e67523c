"""Preprocessing (B.1): text cleaning, media checks, duplicates, the filter report and its counts."""

import json
import os

import pytest
from PIL import Image, ImageDraw

from socialbench.moca.dataset.preprocess import (
    FLAGS,
    REASONS,
    PreprocessParams,
    check_media,
    clean_text,
    count_table,
    counts_csv,
    counts_markdown,
    find_duplicates,
    preprocess,
    shared_media_groups,
)
from socialbench.moca.dataset.sources.base import candidate


def cand(native, text, *, source="mmsd2", media=None, context=(), modality="image_text", urls=()):
    return candidate(
        source,
        native,
        split="all",
        modality=modality,
        text=text,
        media=media if media is not None else [f"{native}.jpg"],
        media_urls=urls,
        context=context,
        origin_file="f",
        origin_record=native,
    )


def no_media(rec):
    """TEST DOUBLE for check_media: every record's media is present but not decoded."""
    return [], [], None


KEEP_MISSING = PreprocessParams(missing_media="keep")


# ---- text cleaning --------------------------------------------------------------------------------


def test_emojis_and_hashtags_survive_cleaning():
    assert clean_text("monday again 😩 #mondaymotivation #not").text == "monday again 😩 #mondaymotivation #not"


def test_placeholders_are_removed_as_system_artifacts():
    c = clean_text("<user> thanks for the <num> likes <USER>")
    assert c.text == "thanks for the likes" and "system_artifacts" in c.edits


def test_a_text_that_was_only_a_system_artifact_is_emptied_by_that_step():
    assert clean_text("[deleted]").emptied_by == "system_artifact"


def test_html_markup_and_entities_are_removed_but_a_heart_stays():
    c = clean_text("<b>so</b> proud &amp; happy <br/> I <3 you")
    assert c.text == "so proud & happy I <3 you" and "markup" in c.edits


def test_markdown_links_keep_their_text():
    assert clean_text("read [the thread](https://reddit.com/r/x) lol").text == "read the thread lol"


def test_links_are_removed_and_a_link_only_text_is_emptied_by_links():
    assert clean_text("look https://t.co/abc123 at this").text == "look at this"
    assert clean_text("https://t.co/abc123").emptied_by == "link_only"


def test_mojibake_is_repaired():
    assert clean_text("Weā€™re not peeking?").text == "We’re not peeking?"


def test_macroman_apostrophes_are_repaired():
    assert clean_text("Oh no donÕt go.").text == "Oh no don’t go."


def test_curly_quotes_and_full_width_forms_are_left_as_written():
    assert clean_text("＼ sunny “morning” ／").text == "＼ sunny “morning” ／"


# ---- media ----------------------------------------------------------------------------------------


def pattern(path, seed, size=(96, 96), fmt=None, **save):
    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    for k in range(6):
        x = (seed * 37 + k * 23) % (size[0] - 20)
        d.rectangle([x, k * 14, x + 20, k * 14 + 10], fill=(seed * 40 % 255, 20 * k, 200 - 30 * k))
    img.save(path, fmt, **save)
    return path


def test_a_decodable_image_is_hashed_with_a_perceptual_hash(tmp_path):
    rec = cand("1", "text", media=[str(pattern(tmp_path / "a.png", 1))])
    infos, flags, problem = check_media(rec)
    assert problem is None and flags == []
    assert infos[0].kind == "image" and len(infos[0].phash) == 16 and (infos[0].width, infos[0].height) == (96, 96)


def test_a_truncated_image_is_corrupted_media(tmp_path):
    path = pattern(tmp_path / "a.png", 1)
    path.write_bytes(path.read_bytes()[:200])
    _, _, problem = check_media(cand("1", "text", media=[str(path)]))
    assert problem.reason == "corrupted_media" and "a.png" in problem.detail


def test_a_clip_that_is_not_a_video_is_corrupted_media_through_the_probe(tmp_path):
    path = tmp_path / "clip.mp4"
    path.write_bytes(b"\x00\x01 not a video" * 100)
    _, _, problem = check_media(cand("1", "text", media=[str(path)], modality="video_text"))
    assert problem.reason == "corrupted_media" and "clip.mp4" in problem.detail


def test_a_fifo_as_media_is_reported_as_what_it_is_not_as_missing(tmp_path):
    """Issue 33, class 9: the FIFO is there (not "not found") and is never opened (that would wait forever)."""
    fifo = tmp_path / "a.png"
    os.mkfifo(fifo)
    _, _, problem = check_media(cand("1", "text", media=[str(fifo)]))
    assert problem.reason == "corrupted_media"
    assert problem.detail == f"{fifo} is a FIFO (named pipe), not a media file; it was not opened"


def test_a_missing_file_with_a_url_is_missing_media_flagged_remote(tmp_path):
    infos, flags, problem = check_media(
        cand("1", "t", media=[str(tmp_path / "x.jpg")], urls=["https://i.redd.it/x.jpg"])
    )
    assert (
        problem.reason == "missing_media" and flags == ["media_remote"] and "https://i.redd.it/x.jpg" in problem.detail
    )


def test_a_malformed_media_url_is_an_invalid_link():
    _, _, problem = check_media(cand("1", "t", media=[], urls=["htp:/broken"]))
    assert problem.reason == "invalid_link"


# ---- duplicates -----------------------------------------------------------------------------------


def test_equal_texts_with_unknown_media_are_exact_duplicates_and_the_first_is_kept():
    dups = find_duplicates(["So proud of you!", "so proud of you"], [None, None], PreprocessParams())
    assert [(d.index, d.of, d.reason) for d in dups] == [(1, 0, "exact_duplicate")]


def test_near_texts_above_the_threshold_are_near_duplicates():
    a = "what a wonderful day to be stuck in traffic for three hours"
    b = "what a wonderful day to be stuck in traffic for three hours!!! #blessed"
    dups = find_duplicates([a, b], [None, None], PreprocessParams(near_duplicate_threshold=0.7))
    assert dups[0].reason == "near_duplicate" and 0.7 <= dups[0].similarity < 1


def test_near_texts_below_the_threshold_are_kept():
    a = "what a wonderful day to be stuck in traffic for three hours"
    b = "what a wonderful day to be stuck in traffic for three hours!!! #blessed"
    assert find_duplicates([a, b], [None, None], PreprocessParams(near_duplicate_threshold=0.95)) == []


def test_the_same_text_with_different_images_is_not_a_duplicate():
    media = [[{"sha256": "a" * 64, "phash": "ffff000000000000"}], [{"sha256": "b" * 64, "phash": "0000ffff00000000"}]]
    assert find_duplicates(["its their character", "its their character"], media, PreprocessParams()) == []


def test_the_same_text_with_a_near_identical_image_is_a_duplicate():
    media = [[{"sha256": "a" * 64, "phash": "ffff000000000000"}], [{"sha256": "b" * 64, "phash": "ffff000000000003"}]]
    dups = find_duplicates(
        ["its their character", "its their character"], media, PreprocessParams(phash_max_distance=4)
    )
    assert dups[0].media == "similar" and dups[0].reason == "near_duplicate"


def test_a_reencoded_image_is_near_identical_by_perceptual_hash(tmp_path):
    png = pattern(tmp_path / "a.png", 3)
    jpg = tmp_path / "a.jpg"
    Image.open(png).convert("RGB").save(jpg, quality=85)
    other = pattern(tmp_path / "b.png", 7)
    infos = [check_media(cand(str(k), "t", media=[str(p)]))[0] for k, p in enumerate((png, jpg, other))]
    groups = shared_media_groups([[i.as_dict() for i in x] for x in infos], 6)
    assert groups.get(0) == [1] and 2 not in groups


def test_the_same_reply_in_another_conversation_is_not_a_duplicate():
    a = cand("1", "Oh, really?", context=[{"speaker": "A", "text": "I won the lottery."}], modality="video_text")
    b = cand("2", "Oh, really?", context=[{"speaker": "B", "text": "The train is late again."}], modality="video_text")
    result = preprocess([a, b], KEEP_MISSING, inspect=no_media)
    assert [r["id"] for r in result.kept] == ["mmsd2:1", "mmsd2:2"]


def test_kept_records_sharing_an_image_are_flagged_not_removed():
    media = [{"sha256": "c" * 64, "phash": "00000000ffffffff", "kind": "image", "path": "x"}]

    def same_image(rec):
        return [dict(m) for m in media], [], None

    result = preprocess(
        [cand("1", "when the wifi is down"), cand("2", "me after one gym session")], KEEP_MISSING, inspect=same_image
    )
    assert len(result.kept) == 2
    assert result.kept[0]["flags"]["shares_media_with"] == ["mmsd2:2"]


# ---- the stage ------------------------------------------------------------------------------------


def test_every_removed_record_is_reported_with_its_reason_and_nothing_vanishes():
    pool = [
        cand("1", "[deleted]"),
        cand("2", "https://t.co/x"),
        cand("3", "so proud"),
        cand("4", "So proud!"),
        cand("5", "   "),
    ]
    result = preprocess(pool, KEEP_MISSING, inspect=no_media)
    reasons = {e["id"]: e["reason"] for e in result.removed}
    assert reasons == {
        "mmsd2:1": "system_artifact",
        "mmsd2:2": "link_only",
        "mmsd2:4": "exact_duplicate",
        "mmsd2:5": "empty_text",
    }
    assert [r["id"] for r in result.kept] == ["mmsd2:3"]
    assert result.removed[2]["duplicate_of"] == "mmsd2:3" and result.removed[2]["record"]["text"] == "So proud!"


def test_missing_media_is_removed_unless_kept_by_params(tmp_path):
    pool = [cand("1", "hello there friend", media=[str(tmp_path / "absent.jpg")])]
    assert preprocess(pool, PreprocessParams()).removed[0]["reason"] == "missing_media"
    kept = preprocess(pool, KEEP_MISSING).kept[0]
    assert kept["flags"] == {"media_missing": True} and kept["media_info"] == []


def test_the_count_table_has_one_row_per_source_and_a_total():
    pool = [cand("1", "a b c"), cand("2", "a b c"), cand("3", "x y z", source="memecap")]
    result = preprocess(pool, KEEP_MISSING, inspect=no_media)
    rows = count_table(pool, result, REASONS, FLAGS)
    assert [r["source"] for r in rows] == ["memecap", "mmsd2", "total"]
    assert rows[1]["pool"] == 2 and rows[1]["exact_duplicate"] == 1 and rows[1]["kept"] == 1
    assert rows[2]["pool"] == rows[2]["kept"] + sum(rows[2][r] for r in REASONS)
    assert counts_csv(rows).splitlines()[0].startswith("source,pool,empty_text,")
    assert "| total | 3 |" in counts_markdown(rows, "t")


def test_the_count_table_refuses_a_result_that_lost_a_record():
    pool = [cand("1", "a b c"), cand("2", "x y z")]
    result = preprocess(pool, KEEP_MISSING, inspect=no_media)
    result.kept.pop()
    with pytest.raises(AssertionError, match="kept \\+ removed must equal the pool"):
        count_table(pool, result, REASONS)


def test_unknown_preprocess_params_are_refused():
    from socialbench.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"moca.preprocess: unknown key\(s\) treshold"):
        PreprocessParams.from_mapping({"treshold": 0.5})


def test_the_packaged_params_schema_has_the_same_defaults_as_the_code():
    from socialbench.core.benchmarks import get_benchmark_class

    props = get_benchmark_class("moca").params_schema()["properties"]["preprocess"]["properties"]
    defaults = {k: tuple(v["default"]) if isinstance(v["default"], list) else v["default"] for k, v in props.items()}
    assert PreprocessParams.from_mapping(defaults) == PreprocessParams()


# ---- the real files ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_pool():
    from socialbench.moca.dataset.sources import SourceOptions, read_source
    from tests.conftest import SHARED

    data = SHARED / "data"
    if not data.is_dir():
        pytest.skip(f"needs ../shared (real public annotations), absent at {data}")
    pool = []
    for name, splits in (
        ("mustard", None),
        ("mintrec", ("train", "dev")),
        ("mmsd2", ("valid",)),
        ("memecap", ("test",)),
    ):
        pool += read_source(name, data / name, SourceOptions(splits=splits))
    return pool


@pytest.fixture(scope="module")
def shared_result(shared_pool):
    return preprocess(shared_pool, KEEP_MISSING)


@pytest.mark.shared
def test_on_the_shared_files_kept_plus_removed_is_the_pool_per_source(shared_pool, shared_result):
    result = shared_result
    rows = count_table(shared_pool, result, REASONS, FLAGS)  # raises if a record vanished
    for row in rows:
        assert row["pool"] == row["kept"] + sum(row[r] for r in REASONS), row
    assert rows[-1]["pool"] == 5438
    assert {e["reason"] for e in result.removed} <= set(REASONS)
    assert all(e["detail"] and e["record"]["id"] == e["id"] for e in result.removed)


@pytest.mark.shared
def test_on_the_shared_files_duplicates_name_a_kept_record(shared_result):
    result = shared_result
    kept = {r["id"] for r in result.kept}
    dups = [e for e in result.removed if e["reason"] in ("exact_duplicate", "near_duplicate")]
    assert dups and all(e["duplicate_of"] in kept for e in dups)


@pytest.mark.shared
def test_on_the_shared_files_placeholders_are_gone_and_hashtags_kept(shared_pool, shared_result):
    result = shared_result
    texts = [r["text"] for r in result.kept]
    assert not any("<user>" in t or "<num>" in t for t in texts)
    before = sum("#" in r["text"] for r in shared_pool)
    after = sum("#" in t for t in texts) + sum("#" in e["record"]["text"] for e in result.removed)
    assert after == before > 0


@pytest.mark.shared
def test_on_the_shared_files_the_outputs_are_byte_identical_on_a_rerun(shared_pool, shared_result):
    def dump(res):
        return json.dumps([res.kept, res.removed], sort_keys=True, ensure_ascii=False)

    assert dump(preprocess(shared_pool, KEEP_MISSING)) == dump(shared_result)


@pytest.mark.shared
def test_on_the_shared_files_without_media_every_record_is_removed_as_missing_media(shared_pool):
    result = preprocess(shared_pool, PreprocessParams())
    assert len(result.kept) == 0 and {e["reason"] for e in result.removed} == {"missing_media"}


@pytest.mark.slow
def test_counts_go_to_mlflow_once_per_content(tmp_path):
    from mlflow.tracking import MlflowClient

    from socialbench.moca.dataset.preprocess import log_counts_mlflow

    rows = [{"source": "total", "pool": 3, **{r: 0 for r in REASONS}, "kept": 3}]
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    first = log_counts_mlflow(
        rows, "preprocess", uri, {"near_duplicate_threshold": 0.8}, artifact_root=str(tmp_path / "art")
    )
    assert log_counts_mlflow(rows, "preprocess", uri, {"near_duplicate_threshold": 0.8}) == first
    run = MlflowClient(uri).get_run(first)
    assert run.data.metrics["total.kept"] == 3.0 and run.data.params["near_duplicate_threshold"] == "0.8"
