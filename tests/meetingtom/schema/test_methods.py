"""The settings of a MeetingToM method run (src/socialbench/meetingtom/schema/methods.py,
``settings_of``): defaults filled, an ablation's table and label left out, and every unknown key or
value a ConfigError naming it."""

import pytest

from socialbench.core.errors import ConfigError
from socialbench.meetingtom.schema.methods import settings_of


def test_no_settings_is_the_instances_modality_and_no_ablation():
    assert settings_of(None) == {
        "modality": None,
        "view": None,
        "ingestion": "auto",
        "remove_markers": False,
        "markers": [],
        "priors": [],
        "answer_form": "json",
        "audio": True,
    }


def test_an_ablations_table_and_label_are_not_settings():
    assert settings_of({"table": "priors", "label": "+ role", "priors": ["role"]})["priors"] == ["role"]


@pytest.mark.parametrize(
    "settings,match",
    [
        ({"zoom": 2}, "unknown setting"),
        ({"view": "drone"}, "view must be one of"),
        ({"modality": "smell"}, "modality must be one of"),
        ({"ingestion": "telepathy"}, "ingestion must be one of"),
        ({"priors": ["mood"]}, "unknown prior"),
        ({"remove_markers": True}, "needs the marker list"),
    ],
)
def test_a_bad_setting_is_a_config_error_naming_it(settings, match):
    with pytest.raises(ConfigError, match=match):
        settings_of(settings)


def test_an_unknown_answer_form_is_a_config_error_listing_the_forms():
    with pytest.raises(ConfigError, match="answer_form must be one of json, final_line, got 'prose'"):
        settings_of({"answer_form": "prose"})


def test_the_guidance_templates_are_one_per_task():
    from socialbench.meetingtom.schema.methods import guidance_templates
    from socialbench.meetingtom.schema.questions import TASKS

    assert guidance_templates() == tuple(f"{t}.txt" for t in TASKS)


def test_task_cot_reads_its_guidance_after_the_system_and_user_templates_and_the_others_only_those():
    from socialbench.meetingtom.methods.naive_cot import METHOD as NAIVE
    from socialbench.meetingtom.methods.task_cot import METHOD as TASK_COT
    from socialbench.meetingtom.schema.methods import guidance_templates, method_templates

    assert method_templates("task_cot") == ("system.txt", "user.txt", *guidance_templates()) == TASK_COT.templates
    assert method_templates("naive_cot") == ("system.txt", "user.txt") == NAIVE.templates
