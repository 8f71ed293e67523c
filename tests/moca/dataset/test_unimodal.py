"""Unimodal consistency filtering (B.1.1 as defined in docs/moca-sources.md)."""

import pytest

from socialbench.core.errors import ConfigError
from socialbench.moca.dataset.preprocess import count_table
from socialbench.moca.dataset.unimodal import (
    FLAGS,
    REASONS,
    UnimodalParams,
    explicit_cue,
    letter_ratio,
    restatement,
    unimodal_filter,
    unimodal_problem,
    words,
)

P = UnimodalParams()


def rec(text, *, description=(), media_info=(), modality="image_text"):
    return {
        "id": "x:1",
        "source": "x",
        "modality": modality,
        "text": text,
        "image_description": list(description),
        "media_info": [dict(m) for m in media_info],
        "flags": {},
    }


def test_hashtags_count_as_words_and_emojis_do_not():
    assert words("so proud 😭😭 # blessed #family") == ["so", "proud", "#blessed", "#family"]


def test_a_text_under_the_minimum_words_is_too_short():
    assert unimodal_problem(rec("thank you."), P)[0] == "text_too_short"


def test_a_text_over_the_maximum_words_is_too_long():
    assert unimodal_problem(rec(" ".join(["word"] * 121)), P)[0] == "text_too_long"


def test_symbols_and_emojis_do_not_count_against_the_letter_ratio():
    assert letter_ratio("love it 😍😍😍 ♥") == 1.0


def test_mostly_digits_and_punctuation_is_not_language():
    assert unimodal_problem(rec("they did it ! ! ! ! ! ! ! ! ! ! ! !"), P)[0] == "text_not_language"


def test_an_explicit_cue_is_found_also_when_the_hashtag_was_split_by_a_tokenizer():
    assert explicit_cue("great , another monday # sarcasm", P.explicit_cues) == "#sarcasm"
    assert unimodal_problem(rec("i just love waiting in line /s"), P)[0] == "explicit_cue"


def test_a_word_containing_a_cue_is_no_cue():
    assert explicit_cue("this is notable and jokes aside", P.explicit_cues) is None


def test_a_text_restating_the_image_description_is_removed():
    r = rec("a cat sleeping on a keyboard", description=["A cat is sleeping on a laptop keyboard."])
    overlap, n = restatement(r["text"], r["image_description"])
    assert n == 3 and overlap == 1.0
    assert unimodal_problem(r, P)[0] == "text_restates_image"


def test_a_text_adding_meaning_to_the_image_passes():
    r = rec("me when my boss asks for the report", description=["A cat is sleeping on a laptop keyboard."])
    assert unimodal_problem(r, P) is None


def test_a_small_image_is_too_small():
    r = rec(
        "me when my boss asks for the report",
        media_info=[{"kind": "image", "path": "a.png", "width": 40, "height": 300}],
    )
    assert unimodal_problem(r, P)[0] == "image_too_small"


def test_a_clip_outside_the_duration_range_is_removed():
    short = rec(
        "you call that a plan?", modality="video_text", media_info=[{"kind": "video", "path": "c.mp4", "duration": 0.2}]
    )
    long = rec(
        "you call that a plan?",
        modality="video_text",
        media_info=[{"kind": "video", "path": "c.mp4", "duration": 75.0}],
    )
    assert unimodal_problem(short, P)[0] == "video_too_short" and unimodal_problem(long, P)[0] == "video_too_long"


def test_a_record_whose_media_were_not_decoded_passes_flagged_visual_unchecked():
    result = unimodal_filter([rec("me when my boss asks for the report")], P)
    assert result.kept[0]["flags"] == {"visual_unchecked": True}


def test_thresholds_come_from_params():
    assert unimodal_problem(rec("thank you."), UnimodalParams.from_mapping({"text_min_words": 2})) is None


def test_inconsistent_thresholds_are_refused():
    with pytest.raises(ConfigError, match="text_min_words must not exceed text_max_words"):
        UnimodalParams.from_mapping({"text_min_words": 10, "text_max_words": 5})


def test_the_packaged_params_schema_has_the_same_defaults_as_the_code():
    from socialbench.core.benchmarks import get_benchmark_class

    props = get_benchmark_class("moca").params_schema()["properties"]["unimodal"]["properties"]
    defaults = {k: tuple(v["default"]) if isinstance(v["default"], list) else v["default"] for k, v in props.items()}
    assert UnimodalParams.from_mapping(defaults) == UnimodalParams()


def test_removed_records_are_reported_and_counted_per_source_and_reason():
    pool = [rec("thank you."), dict(rec("me when my boss asks for the report"), id="y:2", source="y")]
    result = unimodal_filter(pool, P)
    assert [(e["id"], e["reason"]) for e in result.removed] == [("x:1", "text_too_short")]
    rows = count_table(pool, result, REASONS, FLAGS)
    assert rows[-1] == {
        "source": "total",
        "pool": 2,
        **{r: int(r == "text_too_short") for r in REASONS},
        "kept": 1,
        "flag:visual_unchecked": 1,
    }


@pytest.mark.shared
def test_on_the_shared_files_each_removal_has_a_reason_and_nothing_vanishes(shared_dir):
    from socialbench.moca.dataset.preprocess import PreprocessParams, preprocess
    from socialbench.moca.dataset.sources import SourceOptions, read_source

    data = shared_dir / "data"
    pool = []
    for name, splits in (
        ("mustard", None),
        ("mintrec", ("train", "dev")),
        ("mmsd2", ("valid",)),
        ("memecap", ("test",)),
    ):
        pool += read_source(name, data / name, SourceOptions(splits=splits))
    pre = preprocess(pool, PreprocessParams(missing_media="keep")).kept
    result = unimodal_filter(pre, P)
    rows = count_table(pre, result, REASONS, FLAGS)
    assert all(r["pool"] == r["kept"] + sum(r[x] for x in REASONS) for r in rows)
    assert rows[-1]["text_too_short"] > 0 and rows[-1]["kept"] > 0.8 * rows[-1]["pool"]
