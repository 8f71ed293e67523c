"""The strict readers: a file that cannot be read is one DataError naming it; a bad line, record or YAML
node is one line naming the file, the line (and column) and the field; atomic writes leave nothing
behind."""

import pytest

from socialbench.core.errors import ConfigError, DataError
from socialbench.core.io import (
    MAX_DEPTH,
    MESSAGE_LIMIT,
    load_yaml,
    one_line,
    parse_json,
    parse_json_object,
    read_jsonl,
    read_jsonl_lines,
)


def test_non_utf8_file_names_the_byte_its_offset_and_line(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "caf\xe9"}\n')
    with pytest.raises(DataError) as exc:
        read_jsonl(path)
    assert str(exc.value) == f"{path}: not UTF-8 text (byte 0xe9 at offset 19, line 2)"


def test_folder_in_place_of_a_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="is a folder, not a file") as exc:
        read_jsonl(tmp_path)
    assert exc.value.path == str(tmp_path)


def test_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        read_jsonl(tmp_path / "nope.jsonl")


def test_bad_json_line_is_named_by_its_line_number(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{oops\n')
    with pytest.raises(DataError) as exc:
        read_jsonl(path)
    assert exc.value.record == "line 3" and "not valid JSON" in str(exc.value)


def test_read_jsonl_lines_returns_bad_lines_with_their_problem_instead_of_raising(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{oops\n[1, 2]\n{"b": 2}\n')
    lines = read_jsonl_lines(path)
    assert [(jl.line, jl.record) for jl in lines] == [(1, {"a": 1}), (3, None), (4, None), (5, {"b": 2})]
    assert "line 3 is not valid JSON" in lines[1].problem and lines[1].raw == "{oops"
    assert lines[2].problem == "line 4 is not a JSON object"


def test_line_separator_characters_inside_strings_do_not_split_records(tmp_path):
    # Written with ensure_ascii=False these characters stay raw; str.splitlines() would split there.
    from socialbench.core.io import read_jsonl, write_jsonl

    records = [{"id": "a", "text": "one\u2028two\u2029three\x85four"}, {"id": "b", "text": "plain"}]
    write_jsonl(tmp_path / "r.jsonl", records)
    assert read_jsonl(tmp_path / "r.jsonl") == records


# ---- strict JSON: what json.loads would accept silently is refused, naming line and field ----------
def bad_line(tmp_path, text):
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": "ok"}\n' + text + "\n", "utf-8")
    with pytest.raises(DataError) as exc:
        read_jsonl(path)
    return exc.value


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_naming_line_and_field(tmp_path, literal):
    err = bad_line(tmp_path, '{"id": "a", "transcript": {"start": ' + literal + "}}")
    assert (err.record, err.field) == ("line 2", "transcript.start")
    assert f"{literal} is not a number JSON allows" in str(err)


def test_a_number_too_large_to_be_finite_is_refused(tmp_path):
    err = bad_line(tmp_path, '{"id": "a", "t": 1e400}')
    assert err.field == "t" and "too large to be a finite number" in str(err)


def test_a_duplicate_key_is_refused_naming_it(tmp_path):
    # json.loads keeps the second "label": a gold answer silently replaced.
    err = bad_line(tmp_path, '{"id": "a", "label": "mock", "label": "praise"}')
    assert (err.record, err.field) == ("line 2", "label") and "duplicate key" in str(err)


def test_a_duplicate_key_inside_a_list_is_named_by_its_path():
    assert parse_json('{"frames": [{"path": "a"}, {"path": "b", "path": "c"}]}').field == "frames[1].path"


def test_nesting_deeper_than_the_bound_is_refused_without_a_recursion_error(tmp_path):
    err = bad_line(tmp_path, "[" * 4000 + "]" * 4000)  # a 8 KB line: json.loads raises RecursionError
    assert f"nested deeper than {MAX_DEPTH} levels" in str(err)


def test_nesting_within_the_bound_is_read():
    depth = MAX_DEPTH - 1
    assert parse_json("[" * depth + "]" * depth).problem is None


def test_an_integer_with_more_digits_than_python_converts_is_refused_not_a_value_error(tmp_path):
    err = bad_line(tmp_path, '{"id": "a", "n": ' + "9" * 5000 + "}")
    assert err.field == "n" and "5000 digits" in str(err)


def test_a_lone_surrogate_is_refused_but_a_surrogate_pair_is_a_character():
    assert parse_json('{"t": "\\ud800 x"}').problem.startswith("a lone surrogate")
    assert parse_json('{"t": "\\ud83d\\ude00"}').value == {"t": "\U0001f600"}


def test_a_bad_line_is_reported_with_its_field_by_read_jsonl_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": NaN}\n')
    lines = read_jsonl_lines(path)
    assert (lines[1].line, lines[1].field, lines[1].record) == (2, "a", None)
    assert lines[1].problem.startswith("line 2: NaN")


def test_score_and_stats_files_are_read_strictly_too():
    with pytest.raises(DataError) as exc:
        parse_json_object(b'{"intent": {"label": NaN}}', "s.json", "{scenario: metrics}")
    assert (
        str(exc.value)
        == "s.json, field 'intent.label': NaN is not a number JSON allows (write null, or a finite number)"
    )


def test_writers_refuse_nan_instead_of_writing_what_no_reader_accepts(tmp_path):
    from socialbench.core.io import write_json

    with pytest.raises(ValueError):
        write_json(tmp_path / "x.json", {"a": float("nan")})
    assert list(tmp_path.iterdir()) == []  # no temporary file either


# ---- strict YAML: line and column from the parser; aliases, duplicates, tags refused ---------------
@pytest.mark.parametrize(
    "text, message",
    [
        ("seed: 1\nseed: 2\n", "params.yaml: line 2, column 1: duplicate key 'seed' (first at line 1)"),
        (
            "seed: 1\n\tmodels: {}\n",
            "params.yaml: not valid YAML: line 2, column 1: found character '\\t' that cannot start any token",
        ),
        (
            "seed: !!python/object/apply:os.system [echo]\n",
            "params.yaml: line 1, column 7: the tag tag:yaml.org,2002:python/object/apply:os.system is not allowed",
        ),
        ("seed: [1,\n", "params.yaml: not valid YAML: line 2, column 1: expected the node content"),
        ("a: &x [1]\nb: *x\n", "params.yaml: line 2, column 4: the alias *x is not allowed"),
        ("seed: .nan\n", "params.yaml: line 1, column 7: .nan is not a finite number"),
        ("seed: 2024-06-11\n", "params.yaml: line 1, column 7: a date or time, which is no JSON value"),
        ("no: 1\n", "params.yaml: line 1, column 1: the key no is read as a boolean, not a name; quote it"),
        ("seed: \x01\n", "params.yaml: not valid YAML: line 1, column 7: the character #x0001 is not allowed in YAML"),
        ("a: 1\n---\nb: 2\n", "params.yaml: not valid YAML: line 2, column 1: but found another document"),
    ],
    ids=[
        "duplicate",
        "tab",
        "python-tag",
        "syntax",
        "alias",
        "nan",
        "date",
        "boolean-key",
        "control-char",
        "two-documents",
    ],
)
def test_bad_yaml_is_one_line_with_line_and_column(text, message):
    with pytest.raises(ConfigError) as exc:
        load_yaml(text, "params.yaml")
    assert str(exc.value).startswith(message) and "\n" not in str(exc.value)


def test_a_billion_laughs_file_is_refused_at_its_first_alias_without_expanding():
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    with pytest.raises(ConfigError, match=r"line 2, column 10: the alias \*a0 is not allowed"):
        load_yaml("\n".join(lines) + "\n", "params.yaml")


def test_non_utf8_yaml_names_the_byte_offset_and_line():
    with pytest.raises(ConfigError) as exc:
        load_yaml(b"seed: 1\nname: caf\xe9\n", "params.yaml")
    assert str(exc.value) == "params.yaml: not UTF-8 text (byte 0xe9 at offset 17, line 2)"


def test_yaml_nesting_deeper_than_the_bound_is_refused():
    with pytest.raises(ConfigError, match=f"nested deeper than {MAX_DEPTH} levels"):
        load_yaml("a: " + "[" * 200 + "]" * 200 + "\n", "params.yaml")


def test_plain_yaml_reads_as_json_values():
    assert load_yaml("a: [1, 2.5, true, null, 'x']\nb: {c: d}\n", "p") == {
        "a": [1, 2.5, True, None, "x"],
        "b": {"c": "d"},
    }


def test_a_data_file_gets_a_data_error():
    with pytest.raises(DataError) as exc:
        load_yaml("a: 1\na: 2\n", "tax.yaml", error=DataError)
    assert exc.value.path == "tax.yaml" and "line 2, column 1: duplicate key 'a'" in str(exc.value)


def test_messages_are_one_line_and_capped():
    text = one_line("first\n  second\n" + "x" * 5000)
    assert "\n" not in text and len(text) <= MESSAGE_LIMIT and text.startswith("first; second; xxx")
    assert text.endswith("more characters)")


def test_a_huge_value_in_a_bad_record_is_cut_in_the_message(tmp_path):
    err = bad_line(tmp_path, '{"id": "a", "' + "k" * 100_000 + '": NaN}')
    assert len(str(err)) < 400


# ---- atomic writes ----------------------------------------------------------------------------------
def test_a_failed_write_leaves_neither_the_file_nor_a_temporary_one(tmp_path, monkeypatch):
    import os

    from socialbench.core.io import write_text_atomic

    def refuse(src, dst):  # fault injection: the rename fails like a full disk would
        raise OSError(28, "No space left on device", str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    from socialbench.core.paths import DiskFull

    with pytest.raises(DiskFull) as exc:
        write_text_atomic(tmp_path / "out.json", "{}\n")
    assert list(tmp_path.iterdir()) == [] and str(exc.value).startswith(f"{tmp_path / 'out.json'}: no space left")


def test_an_atomic_write_keeps_the_usual_permissions(tmp_path):
    import os
    import stat

    from socialbench.core.io import write_text_atomic

    write_text_atomic(tmp_path / "a.txt", "x")
    (tmp_path / "b.txt").write_text("x")
    assert stat.S_IMODE(os.stat(tmp_path / "a.txt").st_mode) == stat.S_IMODE(os.stat(tmp_path / "b.txt").st_mode)
