"""Transcript windowing on real AMI word timings from ../shared (skipped when it is absent)."""

from socialbench.media.transcript import format_transcript, window_words, words_to_utterances
from socialbench.meetingtom.dataset.ami.nxt import words_file


def ami_meeting_words(shared_dir, meeting="ES2002a"):
    words = []
    for letter in "ABCD":
        words += words_file(shared_dir / f"data/ami/words/{meeting}.{letter}.words.xml", letter)
    return words


def test_real_ami_words_parse_with_times_and_punctuation_attached(shared_dir):
    words = words_file(shared_dir / "data/ami/words/ES2002a.A.words.xml", "A")
    assert len(words) > 100
    first = words[0]
    assert (first.text, first.start, first.speaker) == ("Hi,", 77.44, "A")  # "," joined to "Hi"
    assert all(w.end >= w.start for w in words)


def test_window_over_four_real_speakers_is_ordered_and_relative(shared_dir):
    words = ami_meeting_words(shared_dir)
    items = window_words(words, 120.0, 180.0)
    assert items, "ES2002a has speech between 120 s and 180 s"
    assert [i.start for i in items] == sorted(i.start for i in items)
    assert all(0.0 <= i.start <= i.end <= 60.0 for i in items)
    assert {i.speaker for i in items} <= set("ABCD") and len({i.speaker for i in items}) >= 2
    # Every word whose midpoint lies in the window is there, and no other.
    expected = sum(1 for w in words if 120.0 <= (w.start + w.end) / 2 < 180.0)
    assert len(items) == expected


def test_real_words_join_into_speaker_turns(shared_dir):
    turns = words_to_utterances(window_words(ami_meeting_words(shared_dir), 120.0, 180.0))
    text = format_transcript(turns)
    assert all(line[0] == "[" and "] " in line for line in text.splitlines())
    assert all(a.speaker != b.speaker or b.start - a.end > 1.0 for a, b in zip(turns, turns[1:]))
