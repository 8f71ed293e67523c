"""The error types shown to the user: a data error names the file, the record and the field."""

from socialbench.core.errors import ConfigError, DataError, MissingDependency, SocialbenchError


def test_a_data_error_names_the_file_the_record_and_the_field():
    err = DataError("data/x.jsonl", "expected a number", record="line 3", field="score")
    assert str(err) == "data/x.jsonl, record line 3, field 'score': expected a number"
    assert (err.path, err.record, err.field) == ("data/x.jsonl", "line 3", "score")


def test_a_data_error_without_record_or_field_names_the_file_alone():
    assert str(DataError("data/x.jsonl", "empty")) == "data/x.jsonl: empty"


def test_every_error_shown_without_a_traceback_is_a_socialbench_error():
    for kind in (ConfigError, DataError, MissingDependency):
        assert issubclass(kind, SocialbenchError)
