import pytest

from socialbench.media.transcript import (
    Utterance,
    WindowItem,
    Word,
    format_transcript,
    window_utterances,
    window_words,
    words_to_utterances,
)

WORDS = [
    Word("A", 9.0, 9.8, "before"),
    Word("A", 9.8, 10.4, "edge"),  # midpoint 10.1: inside a window starting at 10
    Word("B", 10.5, 11.0, "hello"),
    Word("A", 12.0, 12.5, "yes"),
    Word("B", 14.6, 15.2, "late"),  # midpoint 14.9: inside a window ending at 15
    Word("B", 14.9, 15.3, "after"),  # midpoint 15.1: outside
]


def test_words_inside_window_have_times_relative_to_the_window_start():
    got = window_words(WORDS, 10.0, 15.0)
    assert got == [
        WindowItem("A", 0.0, 0.4, "edge", partial=True),
        WindowItem("B", 0.5, 1.0, "hello"),
        WindowItem("A", 2.0, 2.5, "yes"),
        WindowItem("B", 4.6, 5.0, "late", partial=True),
    ]


def test_adjacent_windows_share_no_word_and_lose_none():
    first = window_words(WORDS, 0.0, 12.0)
    second = window_words(WORDS, 12.0, 30.0)
    assert sorted(w.text for w in first + second) == sorted(w.text for w in WORDS)


def test_speakers_are_mapped_to_letters():
    words = [Word("spk-7", 1.0, 1.2, "hi"), Word("spk-3", 1.5, 1.9, "ho")]
    got = window_words(words, 0.0, 5.0, speakers={"spk-7": "A", "spk-3": "B"})
    assert [w.speaker for w in got] == ["A", "B"]


def test_a_speaker_without_a_letter_is_an_error():
    with pytest.raises(ValueError, match="spk-9"):
        window_words([Word("spk-9", 1.0, 1.2, "hi")], 0.0, 5.0, speakers={"spk-1": "A"})


def test_utterances_overlapping_the_window_are_clipped_and_marked_partial():
    utts = [
        Utterance("A", 5.0, 11.0, "long one"),
        Utterance("B", 12.0, 13.0, "short"),
        Utterance("C", 20.0, 21.0, "later"),
    ]
    got = window_utterances(utts, 10.0, 15.0)
    assert got == [WindowItem("A", 0.0, 1.0, "long one", partial=True), WindowItem("B", 2.0, 3.0, "short")]


def test_inside_rule_keeps_only_utterances_wholly_in_the_window():
    utts = [Utterance("A", 5.0, 11.0, "long one"), Utterance("B", 12.0, 13.0, "short")]
    assert [u.text for u in window_utterances(utts, 10.0, 15.0, rule="inside")] == ["short"]


def test_utterance_ending_exactly_at_window_start_is_outside():
    assert window_utterances([Utterance("A", 5.0, 10.0, "x")], 10.0, 15.0) == []


def test_words_join_into_turns_per_speaker():
    items = window_words(WORDS[1:5], 10.0, 15.0)
    turns = words_to_utterances(items, max_gap=1.0)
    assert [(t.speaker, t.text) for t in turns] == [("A", "edge"), ("B", "hello"), ("A", "yes"), ("B", "late")]
    same = words_to_utterances([WindowItem("A", 0.0, 0.5, "so"), WindowItem("A", 0.7, 1.0, "what")])
    assert same == [WindowItem("A", 0.0, 1.0, "so what")]


def test_format_transcript_lists_time_speaker_and_text():
    assert format_transcript([WindowItem("B", 0.5, 1.0, "hello")]) == "[0.50-1.00] B: hello"


def test_empty_or_negative_window_is_an_error():
    with pytest.raises(ValueError, match="empty or negative"):
        window_words(WORDS, 5.0, 5.0)
