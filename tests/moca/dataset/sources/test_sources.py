"""The registry of MoCA sources: every source found by name, its files and locations declared, and
its records checked against the candidate schema."""

import pytest

from socialbench.core.errors import ConfigError, DataError
from socialbench.moca.dataset.sources import SOURCE_NAMES, get_source, read_source


@pytest.mark.parametrize("name", SOURCE_NAMES)
def test_every_source_knows_where_its_files_live(name):
    source = get_source(name)
    assert source.homepage and source.citation and source.manual and source.files
    for f in source.files:
        assert f.url is None or f.url.startswith("https://"), f
        if f.sha256 is not None:
            assert len(f.sha256) == 64 and f.provenance, f  # a pinned hash says where it comes from


def test_public_annotation_files_of_the_shared_sources_are_pinned():
    for name in ("mustard", "mintrec", "mmsd2", "memecap"):
        assert any(f.url and f.sha256 for f in get_source(name).files), name


def test_an_unknown_source_is_a_config_error_listing_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown MoCA source 'tiktok'; available: hateful_memes, .*supplementary"):
        get_source("tiktok")


def test_read_source_checks_the_candidates_against_the_schema(tmp_path):
    (tmp_path / "multimet.csv").write_text("id,text,image\n12,time is money,a.jpg\n12,twice,b.jpg\n")
    with pytest.raises(DataError, match="duplicate id"):
        read_source("multimet", tmp_path)
