"""The mmsd2 reader: its documented file format read into candidates (files made here), and what it refuses."""

import json

import pytest

from socialbench.core.errors import DataError
from socialbench.moca.dataset.sources import SourceOptions, read_source


def test_mmsd2_refuses_a_label_that_is_not_binary(tmp_path):
    (tmp_path / "valid.json").write_text(json.dumps([{"image_id": 7, "text": "ok", "label": 2}]))
    with pytest.raises(DataError, match=r"valid.json, record 7, field 'label': expected 0 or 1, got 2"):
        read_source("mmsd2", tmp_path, SourceOptions(splits=("valid",)))
