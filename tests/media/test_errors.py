"""Media errors: each names the file and one of the problem codes the media report counts."""

import pytest

from socialbench.core.errors import DataError
from socialbench.media import errors as E
from socialbench.media.errors import MediaError


def test_a_media_error_reads_path_problem_and_details():
    err = MediaError("clips/a.mp4", E.TRUNCATED, "announces 50 video frames, decodes 20", record="m1")
    assert str(err) == "clips/a.mp4, record m1: truncated: announces 50 video frames, decodes 20"
    assert isinstance(err, DataError) and (err.problem, err.detail) == (
        E.TRUNCATED,
        "announces 50 video frames, decodes 20",
    )


def test_a_problem_code_not_in_the_list_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown media problem code 'broken'"):
        MediaError("a.mp4", "broken", "?")


def test_the_problem_codes_are_distinct():
    assert len(set(E.PROBLEMS)) == len(E.PROBLEMS)
