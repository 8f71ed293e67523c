"""The ``media:`` section of params.yaml as a value."""

from fractions import Fraction

import pytest

from socialbench.core.config import load_schema
from socialbench.media.encode import EncodeSettings
from socialbench.media.settings import MediaSettings


def test_no_media_section_gives_the_defaults():
    assert MediaSettings.from_params({}) == MediaSettings()


def test_the_section_is_read_and_keys_of_other_steps_are_ignored():
    s = MediaSettings.from_params({"media": {"on_error": "fail", "mosaic_panel": [320, 240], "other": 1}})
    assert s.on_error == "fail" and s.mosaic_panel == (320, 240)


def test_an_unknown_on_error_value_lists_the_allowed_ones():
    with pytest.raises(ValueError, match=r"media.on_error must be one of \('skip', 'fail'\), got 'ignore'"):
        MediaSettings(on_error="ignore")


def test_meeting_frames_are_sampled_at_the_meeting_fps_with_the_frame_settings():
    sampling = MediaSettings(meeting_fps=0.5, frame_max_side=224, image_format="jpg").meeting_sampling()
    assert (sampling.mode, sampling.fps, sampling.max_side, sampling.image_format) == (
        "fps",
        Fraction(1, 2),
        224,
        "jpg",
    )


def test_clips_are_cut_with_x264_ultrafast_by_default_in_params_the_schema_and_the_encoder():
    schema_default = load_schema()["properties"]["media"]["properties"]["clip_preset"]["default"]
    assert MediaSettings().clip_preset == schema_default == EncodeSettings().preset == "ultrafast"
