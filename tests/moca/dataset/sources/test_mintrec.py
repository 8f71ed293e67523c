"""The mintrec reader: its documented file format read into candidates (files made here), and what it refuses."""

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.dataset.sources import SourceOptions, read_source


def test_mintrec_with_wrong_columns_names_the_missing_one(tmp_path):
    (tmp_path / "train.tsv").write_text("season\tepisode\tclip\tutterance\tlabel\nS01\tE01\t1\thi\tGreet\n")
    with pytest.raises(DataError, match=r"train.tsv, record line 1 \(header\), field 'text': missing column"):
        read_source("mintrec", tmp_path, SourceOptions(splits=("train",)))
