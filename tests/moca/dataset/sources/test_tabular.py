"""Tables of candidates (MultiMET, Instagram, supplementary): column roles, one candidate per row, and
what a bad row is refused for."""

import pytest

from socialbench.core.errors import ConfigError, DataError
from socialbench.moca.dataset.sources import SourceOptions, read_source


def test_an_unknown_column_role_is_a_config_error(tmp_path):
    (tmp_path / "multimet.csv").write_text("id,text,image\n")
    with pytest.raises(ConfigError, match=r"moca.sources.multimet.columns: unknown role\(s\) caption"):
        read_source("multimet", tmp_path, SourceOptions(columns={"caption": "text"}))


def test_an_id_with_a_space_is_refused_naming_the_line(tmp_path):
    (tmp_path / "multimet.csv").write_text("id,text,image\nmy id,time is money,a.jpg\n")
    with pytest.raises(DataError, match=r"multimet.csv, record line 2, field 'id': expected an id without spaces"):
        read_source("multimet", tmp_path)


def test_a_row_without_its_media_is_refused_naming_the_record(tmp_path):
    (tmp_path / "multimet.csv").write_text("id,text,image\n12,time is money, \n")
    with pytest.raises(DataError, match=r"record 12, field 'image': empty: every candidate needs its image or video"):
        read_source("multimet", tmp_path)


def test_a_media_path_leading_out_of_the_root_is_refused(tmp_path):
    (tmp_path / "multimet.csv").write_text("id,text,image\n12,time is money,../../etc/passwd.jpg\n")
    with pytest.raises(DataError, match=r"record 12, field 'image'"):
        read_source("multimet", tmp_path)
