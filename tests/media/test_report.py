import json

from socialbench.media import errors as E
from socialbench.media.errors import MediaError
from socialbench.media.report import MediaReport


def filled() -> MediaReport:
    r = MediaReport(settings={"on_error": "skip"})
    r.split("test").instances = 3
    r.add("test", "b-2", MediaError("media/b.mp4", E.TRUNCATED, "the data ends early"), "skipped")
    r.add("dev", "a-1", MediaError("media/a.mp4", E.EMPTY, "the file is empty (0 bytes)"), "skipped")
    return r


def test_jsonl_lists_each_problem_sorted_by_split_and_instance(tmp_path):
    filled().write(tmp_path / "media.jsonl", tmp_path / "media.md")
    lines = [json.loads(x) for x in (tmp_path / "media.jsonl").read_text("utf-8").splitlines()]
    assert [(x["split"], x["id"], x["problem"], x["action"]) for x in lines] == [
        ("dev", "a-1", E.EMPTY, "skipped"),
        ("test", "b-2", E.TRUNCATED, "skipped"),
    ]
    assert lines[1]["path"] == "media/b.mp4" and lines[1]["message"] == "media/b.mp4: truncated: the data ends early"


def test_markdown_shows_counts_and_every_problem(tmp_path):
    md = filled().markdown()
    assert "| test | 3 | 0 | 0 | 0 | 1 |" in md
    assert "| dev | a-1 | `media/a.mp4` | zero_byte | skipped |" in md


def test_report_without_problems_says_so_and_jsonl_is_empty(tmp_path):
    r = MediaReport()
    r.split("test").instances = 2
    r.write(tmp_path / "media.jsonl", tmp_path / "media.md")
    assert (tmp_path / "media.jsonl").read_text("utf-8") == ""
    assert "every instance was kept" in (tmp_path / "media.md").read_text("utf-8")


def test_writing_twice_gives_identical_bytes(tmp_path):
    filled().write(tmp_path / "a.jsonl", tmp_path / "a.md")
    filled().write(tmp_path / "b.jsonl", tmp_path / "b.md")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert (tmp_path / "a.md").read_bytes() == (tmp_path / "b.md").read_bytes()
