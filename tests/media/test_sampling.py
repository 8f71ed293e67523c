from fractions import Fraction

import pytest

from socialbench.media.sampling import (
    FrameSampling,
    Segment,
    ffmpeg_seconds,
    fit_size,
    fps_indices,
    plan_segments,
    select_indices,
    uniform_indices,
    window_indices,
)


def times(n: int, fps: int = 10) -> list[Fraction]:
    return [Fraction(i, fps) for i in range(n)]


def test_uniform_takes_the_middle_frame_of_each_segment():
    assert uniform_indices(50, 8) == [3, 9, 15, 21, 28, 34, 40, 46]
    assert uniform_indices(10, 2) == [2, 7]
    assert uniform_indices(7, 1) == [3]


def test_uniform_indices_are_distinct_and_ascending_for_every_count_up_to_the_frame_count():
    for n_frames in range(1, 40):
        for count in range(1, n_frames + 1):
            idx = uniform_indices(n_frames, count)
            assert len(idx) == count and idx == sorted(set(idx)) and 0 <= idx[0] and idx[-1] < n_frames


def test_uniform_with_more_requested_than_frames_takes_every_frame_once():
    assert uniform_indices(5, 16) == [0, 1, 2, 3, 4]


def test_uniform_of_an_empty_video_is_an_error():
    with pytest.raises(ValueError, match="at least one frame"):
        uniform_indices(0, 8)


def test_fps_takes_the_frame_on_screen_every_1_over_fps_seconds():
    assert fps_indices(times(50), Fraction(5), Fraction(1, 2)) == [0, 20, 40]
    assert fps_indices(times(50), Fraction(5), Fraction(2)) == list(range(0, 50, 5))


def test_fps_stops_before_the_end_of_the_video():
    # 60 s at 25 fps sampled at 0.5 fps: targets 0, 2, ..., 58 s -> 30 frames.
    idx = fps_indices(times(1500, 25), Fraction(60), Fraction(1, 2))
    assert len(idx) == 30 and idx[-1] == 58 * 25


def test_fps_uses_real_timestamps_of_variable_frame_rate_video():
    ts = [Fraction(i, 10) + (1 if i >= 20 else 0) for i in range(30)]  # 1.1 s gap after frame 19
    # targets 0, .5, 1, 1.5, 2 (19 still on screen), 2.5 (19 again: taken once), 3.0 (20), 3.5 (25); end 4.0
    assert fps_indices(ts, ts[-1] + Fraction(1, 10), Fraction(2)) == [0, 5, 10, 15, 19, 20, 25]


def test_fps_above_the_source_rate_never_repeats_a_frame():
    idx = fps_indices(times(10), Fraction(1), Fraction(50))
    assert idx == list(range(10))


def test_fps_before_the_first_frame_takes_the_first_frame():
    ts = [Fraction(1, 4) + Fraction(i, 10) for i in range(10)]
    assert fps_indices(ts, Fraction(2), Fraction(1))[0] == 0


def test_select_indices_follows_the_sampling_mode():
    assert select_indices(FrameSampling.uniform(2), times(10), Fraction(1)) == [2, 7]
    assert select_indices(FrameSampling.at_fps("0.5"), times(50), Fraction(5)) == [0, 20, 40]


def test_window_keeps_frames_from_start_inclusive_to_end_exclusive():
    assert window_indices(times(50, 25), Fraction(1, 2), Fraction(17, 10)) == list(range(13, 43))
    assert window_indices(times(50, 25), Fraction(12, 25), Fraction(16, 25)) == [12, 13, 14, 15]


def test_fit_size_keeps_aspect_and_never_upscales():
    assert fit_size(1280, 720, 448) == (448, 252)
    assert fit_size(720, 1280, 448) == (252, 448)
    assert fit_size(160, 120, 448) == (160, 120)
    assert fit_size(160, 120, None) == (160, 120)


def test_ffmpeg_seconds_are_exact_microseconds_truncated():
    assert ffmpeg_seconds(Fraction(1, 2)) == "0.500000"
    assert ffmpeg_seconds(Fraction(1001, 3000)) == "0.333666"
    assert ffmpeg_seconds(Fraction(50)) == "50.000000"


def test_fps_given_as_float_becomes_an_exact_fraction_in_the_key():
    assert FrameSampling.at_fps(0.5).key()["fps"] == "1/2"
    assert FrameSampling.at_fps(0.5) == FrameSampling.at_fps("1/2")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "uniform", "count": 0},
        {"mode": "uniform", "count": 4, "fps": Fraction(1)},
        {"mode": "fps", "fps": Fraction(0)},
        {"mode": "fps"},
        {"mode": "uniform", "count": 4, "image_format": "gif"},
        {"mode": "uniform", "count": 4, "max_side": 1},
        {"mode": "every"},
    ],
)
def test_invalid_sampling_is_rejected(kwargs):
    with pytest.raises(ValueError):
        FrameSampling(**kwargs)


def test_segments_start_at_the_keyframe_before_each_isolated_target():
    plan = plan_segments([10, 60, 110], keyframes=[0, 50, 100, 150])
    assert plan == [Segment(0, 10, (10,)), Segment(50, 60, (60,)), Segment(100, 110, (110,))]


def test_targets_sharing_a_keyframe_stretch_share_a_segment():
    plan = plan_segments([10, 40, 60], keyframes=[0, 50])
    assert plan == [Segment(0, 40, (10, 40)), Segment(50, 60, (60,))]


def test_a_target_whose_keyframe_is_already_decoded_extends_the_segment():
    # 60's keyframe (50) comes before the segment's last target (55): decoding on is cheaper
    assert plan_segments([55, 60], keyframes=[0, 50]) == [Segment(50, 60, (55, 60))]


def test_a_gap_shorter_than_the_seek_cost_is_decoded_through():
    # 50 lies 40 frames after 10: seeking pays only when the input costs fewer than 40 frames
    assert plan_segments([10, 60], keyframes=[0, 50], seek_cost=40) == [Segment(0, 60, (10, 60))]
    assert plan_segments([10, 60], keyframes=[0, 50], seek_cost=39) == [Segment(0, 10, (10,)), Segment(50, 60, (60,))]


def test_a_negative_seek_cost_is_rejected():
    with pytest.raises(ValueError):
        plan_segments([10], keyframes=[0], seek_cost=-1)


def test_without_keyframe_information_everything_is_decoded_from_the_start():
    assert plan_segments([5, 30, 70], keyframes=[]) == [Segment(0, 70, (5, 30, 70))]


def test_too_many_segments_are_merged_across_the_smallest_gap():
    plan = plan_segments([0, 100, 110, 300], keyframes=[0, 100, 110, 300], max_segments=3)
    assert plan == [Segment(0, 0, (0,)), Segment(100, 110, (100, 110)), Segment(300, 300, (300,))]
    assert sum(len(s.targets) for s in plan_segments(list(range(0, 1000, 10)), list(range(0, 1000, 10)), 5)) == 100


@pytest.mark.parametrize(
    "make",
    [
        lambda: FrameSampling.uniform(0),
        lambda: FrameSampling.uniform(-3),
        lambda: FrameSampling.at_fps("abc"),
        lambda: FrameSampling.at_fps("1/0"),
        lambda: FrameSampling.at_fps(-1),
        lambda: FrameSampling.uniform(4, max_side=0),
    ],
)
def test_invalid_sampling_is_a_one_line_config_error_without_internals(make):
    from socialbench.core.errors import ConfigError

    with pytest.raises(ConfigError) as exc:
        make()
    assert isinstance(exc.value, ValueError)  # callers catching ValueError still do
    assert "FrameSampling(" not in str(exc.value) and "\n" not in str(exc.value)
