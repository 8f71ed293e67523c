"""The AMI annotations as records (src/socialbench/meetingtom/dataset/ami/records.py): a meeting's tokens
and text over NITE spans, look-ups by id, the words as transcript words (punctuation attached to the
word before it), and the problem entries as errors. Reading them from NITE XML is tested in
test_nxt.py."""

from socialbench.media.transcript import Word
from socialbench.meetingtom.dataset.ami.records import (
    Corpus,
    DialogueAct,
    Meeting,
    Participant,
    Problem,
    Span,
    Token,
    transcript_of,
    transcript_words,
    words_text,
)


def token(speaker, index, text, kind="w", punc=False):
    return Token(f"M.{speaker}.words{index}", speaker, index, kind, text, float(index), index + 0.5, punc=punc)


#: B says "Could you, uh, check it?" (a comma and a question mark, a vocal sound); A says "Sure".
B_TOKENS = (
    token("B", 0, "Could"),
    token("B", 1, "you"),
    token("B", 2, ",", punc=True),
    token("B", 3, "cough", kind="vocalsound"),
    token("B", 4, "check"),
    token("B", 5, "it"),
    token("B", 6, "?", punc=True),
)
A_TOKENS = (token("A", 0, "Sure"),)
ACT = DialogueAct(
    "M.B.dialog-act.1",
    "B",
    0.0,
    6.5,
    (Span("B", 0, 2, "M.B.words0", "M.B.words2", 0.0, 2.5), Span("B", 4, 6, "M.B.words4", "M.B.words6", 4.0, 6.5)),
    "el.inf",
    "ami_da_1",
    ("A",),
)
PROBLEM = Problem("M", "words/M.B.words.xml", "M.B.words9", "dangling_href", "points at nothing")


def meeting(**kw):
    fields = dict(
        id="M",
        participants={"C": Participant("C", "FEE001", "M_3", "UI")},
        words={"B": B_TOKENS, "A": A_TOKENS},
        segments=(),
        dialogue_acts=(ACT,),
        adjacency_pairs=(),
        you_usages=(),
        decisions=(),
        topics=(),
        roles=(),
        end=10.0,
    )
    return Meeting(**{**fields, **kw})


def test_words_text_attaches_punctuation_and_leaves_out_sounds():
    assert words_text(B_TOKENS) == "Could you, check it?"


def test_punctuation_is_no_word():
    assert [t.is_word for t in B_TOKENS[:4]] == [True, True, False, False]


def test_the_text_of_an_act_is_the_words_of_its_spans():
    assert meeting().text(ACT.spans) == "Could you, check it?"
    assert [t.id for t in meeting().tokens(ACT.spans[0])] == ["M.B.words0", "M.B.words1", "M.B.words2"]


def test_an_act_contains_the_tokens_of_its_spans_only():
    assert [ACT.contains("B", i) for i in range(7)] == [True, True, True, False, True, True, True]
    assert not ACT.contains("A", 0)


def test_tokens_and_acts_are_found_by_id_and_an_unknown_or_missing_id_finds_none():
    m = meeting()
    assert m.token("M.B.words4").text == "check" and m.token("M.B.words99") is None
    assert m.act("M.B.dialog-act.1") is ACT and m.act("nope") is None and m.act(None) is None


def test_the_speakers_are_those_with_words_or_a_participant_entry_sorted():
    assert meeting().speakers == ("A", "B", "C")


def test_transcript_words_keep_each_words_times_with_its_punctuation_by_speaker():
    assert transcript_of(B_TOKENS[:3], "B") == [Word("B", 0.0, 0.5, "Could"), Word("B", 1.0, 1.5, "you,")]
    assert [(w.speaker, w.text) for w in transcript_words(meeting())] == [
        ("A", "Sure"),
        ("B", "Could"),
        ("B", "you,"),
        ("B", "check"),
        ("B", "it?"),
    ]


def test_a_problem_is_an_error_naming_its_file_under_the_ami_folder_and_its_element():
    assert PROBLEM.is_error and not Problem("M", "f", None, "untimed_word", "no times").is_error
    err = PROBLEM.error("/ami")
    assert (err.path, err.record) == ("/ami/words/M.B.words.xml", "M.B.words9")
    assert str(err).endswith("meeting M: points at nothing")
    assert PROBLEM.error().path == "words/M.B.words.xml"


def test_the_corpus_problems_are_the_resources_then_each_meetings():
    resource = Problem("", "corpusResources/meetings.xml", None, "unreadable", "cannot read")
    corpus = Corpus((meeting(problems=(PROBLEM,)),), (resource,))
    assert corpus.problems == [resource, PROBLEM]
    assert PROBLEM.as_dict()["kind"] == "dangling_href"
