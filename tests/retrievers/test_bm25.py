"""The offline BM25 retriever (socialbench.retrievers.bm25) over a tiny corpus made in each test."""

from __future__ import annotations

import json
import os

import pytest

from socialbench.core.errors import ConfigError, DataError
from socialbench.core.retrieval import create_retriever

pytest.importorskip("bm25s")


def bm25(folder, **options):
    return create_retriever("bm25", {"corpus": str(folder), **options})


@pytest.fixture
def corpus(tmp_path):
    c = tmp_path / "corpus"
    c.mkdir()
    (c / "sport.md").write_text(
        "# Sport\n\nThe referee enforces the rules of a match.\n\nFans of the rival team mock each other.\n"
    )
    (c / "tags.txt").write_text("#mondaymood tags posts about the start of the working week.\n")
    (c / "more.jsonl").write_text(
        json.dumps({"id": "landlord", "text": "The landlord owns the rented flat.", "title": "Housing"}) + "\n"
    )
    return c


def test_the_passage_that_shares_the_querys_words_ranks_first(corpus):
    hits = bm25(corpus).search("Who is the referee of a match?", 3)
    assert hits[0].doc_id == "sport.md#1" and hits[0].title == "Sport"


def test_a_passage_sharing_no_word_with_the_query_is_not_returned(corpus):
    assert [p.doc_id for p in bm25(corpus).search("landlord", 5)] == ["more.jsonl#landlord"]


def test_a_hashtag_line_is_a_passage_not_a_heading(corpus):
    hits = bm25(corpus).search("#mondaymood", 1)
    assert hits[0].doc_id == "tags.txt#1" and hits[0].title is None


def test_equal_scores_are_ordered_by_passage_id(tmp_path):
    (tmp_path / "b.txt").write_text("same words here\n")
    (tmp_path / "a.txt").write_text("same words here\n")
    (tmp_path / "c.txt").write_text("other\n")
    assert [p.doc_id for p in bm25(tmp_path).search("same words", 3)] == ["a.txt#1", "b.txt#1"]


def test_two_indexes_of_one_corpus_answer_identically(corpus):
    a, b = bm25(corpus), bm25(corpus)
    query = "rules of the rival team"
    assert a.search(query, 3) == b.search(query, 3) and a.identity() == b.identity()


def test_the_corpus_hash_follows_the_content_not_the_folders_place(corpus, tmp_path):
    before = bm25(corpus).identity()
    moved = corpus.rename(tmp_path / "elsewhere")
    assert bm25(moved).identity() == before
    (moved / "tags.txt").write_text("changed\n")
    assert bm25(moved).identity()["corpus_sha256"] != before["corpus_sha256"]


def test_k_caps_the_passages(corpus):
    assert len(bm25(corpus).search("the rules fans landlord posts", 2)) == 2


def test_a_missing_corpus_folder_is_a_config_error_naming_the_option(tmp_path):
    with pytest.raises(ConfigError, match=r"retrieval.options.corpus: .*nowhere: no such folder"):
        bm25(tmp_path / "nowhere")


def test_a_corpus_without_passages_is_a_config_error(tmp_path):
    (tmp_path / "notes.csv").write_text("a,b\n")
    with pytest.raises(ConfigError, match="no passages"):
        bm25(tmp_path)


def test_a_bad_jsonl_passage_names_file_line_and_field(tmp_path):
    (tmp_path / "p.jsonl").write_text(json.dumps({"text": "ok"}) + "\n" + json.dumps({"text": ""}) + "\n")
    with pytest.raises(DataError, match=r"p.jsonl, record line 2, field 'text': must be a non-empty string"):
        bm25(tmp_path)


def test_an_unknown_option_is_a_config_error(corpus):
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['stemmer'\]"):
        bm25(corpus, stemmer="porter")


# ---- only regular files inside the corpus folder, passages of a bounded size (issue 33, point 4) ----------
def test_a_symlink_out_of_the_corpus_is_refused_by_name_and_its_text_never_read(corpus, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-planted-secret\n")
    (corpus / "leak.txt").symlink_to(secret)
    with pytest.raises(DataError) as exc:
        bm25(corpus)
    message = str(exc.value)
    assert message.startswith(f"{corpus / 'leak.txt'}: links to {secret}, outside the corpus folder; refused")
    assert "sk-planted-secret" not in message


def test_a_symlink_to_a_folder_outside_the_corpus_is_refused(corpus, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (corpus / "more").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(DataError, match="more: links to .*elsewhere, outside the corpus folder"):
        bm25(corpus)


def test_a_dangling_symlink_in_the_corpus_is_named(corpus):
    (corpus / "gone.md").symlink_to(corpus / "nowhere.md")
    with pytest.raises(DataError, match=r"gone.md: is a symlink to nothing"):
        bm25(corpus)


def test_a_symlink_to_a_file_inside_the_corpus_is_read(corpus):
    (corpus / "alias.txt").symlink_to(corpus / "tags.txt")
    assert [p.doc_id for p in bm25(corpus).search("#mondaymood", 2)] == ["alias.txt#1", "tags.txt#1"]


def test_a_fifo_in_the_corpus_is_reported_by_name_not_skipped(corpus):
    os.mkfifo(corpus / "pipe.txt")
    with pytest.raises(DataError, match=r"pipe.txt: is a FIFO \(named pipe\), not a corpus file"):
        bm25(corpus)


def test_a_corpus_that_is_a_file_says_so(corpus):
    with pytest.raises(ConfigError, match=r"options.corpus: .*tags.txt: is a file, not a folder"):
        bm25(corpus / "tags.txt")


def test_a_corpus_file_that_is_not_utf8_names_the_file_and_byte_offset(corpus):
    (corpus / "latin1.txt").write_bytes(b"caf\xe9 au lait\n")
    with pytest.raises(DataError, match=r"latin1.txt: not UTF-8 text \(byte 0xe9 at offset 3\)"):
        bm25(corpus)


def test_a_two_megabyte_single_line_passage_is_split_and_the_split_logged(tmp_path, caplog):
    from socialbench.retrievers.bm25 import MAX_PASSAGE_CHARS

    (tmp_path / "huge.txt").write_text(" ".join(["word"] * 400_000) + " needle\n")  # 2 MB, one line
    with caplog.at_level("WARNING", logger="socialbench.retrievers.bm25"):
        r = bm25(tmp_path)
    assert max(len(p.text) for p in r.passages) <= MAX_PASSAGE_CHARS and r.passages[0].doc_id == "huge.txt#1~1"
    assert "huge.txt#1: 2000006 characters, split into 501 passages" in caplog.text
    assert r.search("needle", 1)[0].text.endswith("needle") and r.identity()["max_passage_chars"] == MAX_PASSAGE_CHARS


def test_a_corpus_with_no_long_passage_keeps_its_identity_without_the_limit(corpus):
    assert set(bm25(corpus).identity()) == {"retriever", "config_sha256", "corpus_sha256"}


def test_pieces_cut_at_spaces_and_cut_a_word_longer_than_the_limit():
    from socialbench.retrievers.bm25 import _pieces

    assert _pieces("aa bb cc", 5) == ["aa bb", "cc"]
    assert _pieces("abcdefghij k", 4) == ["abcd", "efgh", "ij k"]
