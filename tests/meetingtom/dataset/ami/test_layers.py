"""Pure parsing of NITE XML elements (socialbench.meetingtom.dataset.ami.layers); the layers read
from a meeting's files are tested through nxt (tests/meetingtom/dataset/ami/test_nxt.py)."""

import xml.etree.ElementTree as ET

import pytest

from socialbench.meetingtom.dataset.ami.layers import parse_href, parse_ontology


def test_href_with_a_range_gives_file_and_both_ids():
    assert parse_href("ES2002a.A.words.xml#id(ES2002a.A.words0)..id(ES2002a.A.words5)") == (
        "ES2002a.A.words.xml",
        "ES2002a.A.words0",
        "ES2002a.A.words5",
    )


def test_href_with_one_id_repeats_it_as_last():
    assert parse_href("da-types.xml#id(ami_da_4)") == ("da-types.xml", "ami_da_4", "ami_da_4")


def test_href_without_an_id_part_is_refused():
    with pytest.raises(ValueError, match="not a NITE href"):
        parse_href("ES2002a.A.words.xml")


def test_ontology_keeps_names_and_parents():
    root = ET.fromstring(
        '<t xmlns:nite="http://nite.sourceforge.net/" nite:id="r" name="root">'
        '<t nite:id="a" name="DEICTIC"><t nite:id="a1" name="SINGULAR" gloss="singular"/></t></t>'
    )
    types = parse_ontology(root)
    assert (types["a1"].name, types["a1"].parent, types["a1"].gloss) == ("SINGULAR", "a", "singular")
    assert types["r"].parent is None
