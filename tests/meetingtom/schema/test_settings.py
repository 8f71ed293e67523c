"""The ``meetingtom:`` section of params as values (src/socialbench/meetingtom/schema/settings.py): each
source's settings, where its mirror lies, and the split of a meeting."""

from pathlib import Path

import pytest

from socialbench.core.errors import ConfigError
from socialbench.meetingtom.schema.settings import (
    DEMO_ARCHIVE,
    DEMO_MIRROR,
    mirror_path,
    source_settings,
    split_of,
)

AMI = {
    "mirror": "../shared/data/ami",
    "url": "https://example.org/ami/ami_public_manual_1.6.2.zip?download=1",
    "sha256": "ab" * 32,
    "media_url": "https://example.org/mirror/",
    "meetings": ["ES2002a", "IS1001a"],
    "views": [],
    "modality": "utterances",
}
PARAMS = {
    "meetingtom": {
        "demo": {"meetings": ["ES9000a", "ES9000c"], "views": ["Corner"], "modality": "both"},
        "ami": AMI,
        "dev_meetings": ["ES9000c"],
    }
}


def test_the_demo_source_reads_its_generated_mirror_and_its_own_archive_name():
    demo = source_settings(PARAMS, "demo")
    assert (demo.mirror, demo.archive_name, demo.sha256) == (DEMO_MIRROR, DEMO_ARCHIVE, None)
    assert (demo.meetings, demo.views, demo.modality) == (("ES9000a", "ES9000c"), ("Corner",), "both")


def test_the_ami_source_takes_its_settings_and_names_its_archive_without_the_query():
    ami = source_settings(PARAMS, "ami")
    assert (ami.mirror, ami.sha256, ami.media_url) == (AMI["mirror"], AMI["sha256"], AMI["media_url"])
    assert ami.meetings == ("ES2002a", "IS1001a") and ami.archive_name == "ami_public_manual_1.6.2.zip"


def test_an_unknown_source_is_a_config_error_listing_the_known_ones():
    with pytest.raises(ConfigError, match="unknown MeetingToM source 'icsi'; known: demo, ami"):
        source_settings(PARAMS, "icsi")


def test_params_without_the_meetingtom_section_are_a_config_error_saying_so():
    with pytest.raises(ConfigError, match="params has no meetingtom: section"):
        split_of("ES9000a", {"moca": {}})


def test_a_relative_mirror_lies_under_the_root_an_absolute_one_where_it_says():
    ami = source_settings(PARAMS, "ami")
    assert mirror_path(ami, "/repo") == Path("/repo/../shared/data/ami")
    assert mirror_path(
        source_settings({"meetingtom": {**PARAMS["meetingtom"], "ami": {**AMI, "mirror": "/m"}}}, "ami")
    ) == Path("/m")


def test_a_source_without_a_mirror_has_no_mirror_path():
    params = {"meetingtom": {**PARAMS["meetingtom"], "ami": {**AMI, "mirror": None}}}
    assert mirror_path(source_settings(params, "ami")) is None


def test_a_dev_meeting_is_in_the_dev_split_every_other_in_test():
    assert (split_of("ES9000c", PARAMS), split_of("ES9000a", PARAMS)) == ("dev", "test")
