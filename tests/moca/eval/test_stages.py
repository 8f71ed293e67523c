"""CoDAR's stage contracts (socialbench.moca.eval.stages): how each stage's answer is read, routes
normalised, each stage's schema."""

import json

import pytest

from socialbench.moca.eval.prompts import answer_schema, slot_maps
from socialbench.moca.eval.stages import StageOutputError, normalize_route, read_stage, stage_schema
from socialbench.moca.schema.methods import CODAR, Variant
from tests.conftest import make_instance

WO_STEP2 = Variant(("observer", "conflict", "decoder", "checker"))


@pytest.mark.parametrize(
    "spelled, route",
    [
        ("web_search", "web_search"),
        ("web search", "web_search"),
        ("web-search", "web_search"),
        ("Web Search", "web_search"),
        (" Model Prior ", "model_prior"),
        ("HYBRID", "hybrid"),
        ("google", None),
        (None, None),
    ],
)
def test_route_names_are_normalized(spelled, route):
    assert normalize_route(spelled) == route


def parse_stage(*args):
    """A stage's answer, without read_stage's notes."""
    return read_stage(*args)[0]


def test_an_unknown_route_falls_back_to_model_prior_and_is_counted():
    text = json.dumps(
        {"entities": [{"name": "x", "route": "Web Search"}, {"name": "y", "route": "google"}], "questions": ["q"]}
    )
    parsed, notes = read_stage("query", text)
    assert parsed["entities"] == [{"name": "x", "route": "web_search"}, {"name": "y", "route": "model_prior"}]
    assert notes["unknown_routes"] == [{"name": "y", "route": "google"}]


@pytest.mark.parametrize(
    "stage, text, words",
    [
        ("observer", "Here you go: {}", "not JSON"),
        ("observer", "[1]", "a JSON list, not an object"),
        ("observer", '{"explicit_perception": ""}', "explicit_perception: empty"),
        ("observer", '{"caption": "x"}', "missing key(s) ['explicit_perception']; unexpected key(s) ['caption']"),
        ("query", '{"entities": "x", "questions": ["a"]}', "entities: expected a list"),
        (
            "query",
            '{"entities": [{"route": "hybrid"}], "questions": ["a"]}',
            "expected an object with a non-empty name",
        ),
        ("query", '{"entities": [], "questions": "a"}', "questions: expected a list of strings"),
        (
            "context",
            '{"fact": "a", "connection": "b", "social_norm": 3, "uncertainty": "d"}',
            "social_norm: expected a string",
        ),
        ("checker", '{"status": "MAYBE", "breakpoint": null, "refine": ""}', "neither ACCEPTED nor REJECTED"),
        ("checker", '{"status": "ACCEPTED", "breakpoint": 2, "refine": ""}', "must be null with ACCEPTED"),
        ("checker", '{"status": "REJECTED", "breakpoint": true, "refine": "x"}', "REJECTED needs one of"),
        ("checker", '{"status": "REJECTED", "breakpoint": 3, "refine": " "}', "REJECTED needs a note"),
    ],
)
def test_a_stage_output_off_its_contract_is_refused_with_the_reason(stage, text, words):
    with pytest.raises(StageOutputError) as err:
        parse_stage(stage, text)
    assert words in str(err.value)


def test_a_fenced_stage_answer_is_unparsable_unless_params_tolerate_one_fence():
    fenced = '```json\n{"explicit_perception": "A man smiles."}\n```'
    with pytest.raises(StageOutputError, match="code_fence: tolerate accepts one"):
        parse_stage("observer", fenced)
    assert parse_stage("observer", fenced, CODAR, "tolerate") == {"explicit_perception": "A man smiles."}


def test_the_checker_status_is_read_case_insensitively():
    assert parse_stage("checker", '{"status": "accepted", "breakpoint": null, "refine": ""}')["status"] == "ACCEPTED"


def test_the_decoder_is_not_read_as_a_stage_structure_but_by_the_direct_answers_parser():
    with pytest.raises(ValueError, match="read_answer"):
        read_stage("decoder", "{}")


def test_extra_keys_in_a_stage_answer_are_dropped_by_default_and_noted():
    parsed, notes = read_stage("observer", '{"explicit_perception": "A man smiles.", "why": "x"}')
    assert parsed == {"explicit_perception": "A man smiles."} and notes["ignored_keys"] == ["why"]


def test_extra_keys_in_a_stage_answer_are_a_format_failure_when_params_say_invalid():
    with pytest.raises(StageOutputError, match=r"unexpected key\(s\) \['why'\] \(params moca.answer.extra_keys"):
        parse_stage("observer", '{"explicit_perception": "A man smiles.", "why": "x"}', CODAR, "strict", "invalid")


def test_stage_schemas_list_allowed_values_only_when_constrained(taxonomy):
    direct = answer_schema("intent", taxonomy, slot_maps(make_instance(), 1))
    dec = stage_schema("decoder", CODAR, direct, constrained=True)
    assert dec["required"] == list(CODAR.decoder_keys) and dec["properties"]["label"] == direct["properties"]["label"]
    assert stage_schema("decoder", CODAR, direct, constrained=False)["properties"]["label"] == {"type": "string"}
    assert "enum" in stage_schema("checker", CODAR, direct, constrained=True)["properties"]["status"]
    assert "enum" not in stage_schema("checker", CODAR, direct, constrained=False)["properties"]["status"]
