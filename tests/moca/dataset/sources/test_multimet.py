"""The multimet reader: its documented file format read into candidates (files made here), and what it refuses."""

from socialbench.moca.dataset.sources import SourceOptions, read_source


def test_multimet_columns_can_be_mapped_and_the_rest_are_kept_as_labels(tmp_path):
    (tmp_path / "multimet.csv").write_text("pair,sentence,pic,sentiment\n12,time is money,images/12.jpg,neutral\n")
    options = SourceOptions.from_mapping("multimet", {"columns": {"id": "pair", "text": "sentence", "media": "pic"}})
    rec = read_source("multimet", tmp_path, options)[0]
    assert rec["id"] == "multimet:12" and rec["source_labels"] == {"sentiment": "neutral"}
