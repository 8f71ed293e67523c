import re
from dataclasses import replace
from importlib import resources

import pytest
import yaml

from socialbench.core.errors import DataError
from socialbench.moca.schema.taxonomy import apply_rules, load_taxonomy, parse_taxonomy, taxonomy_hash

RULES = resources.files("socialbench.moca.schema.taxonomy").joinpath("moca_rules.yaml")


def test_labels_are_the_papers(taxonomy):
    assert taxonomy.label_names("affection") == ["happy", "bad", "angry", "disgusted", "sad", "fearful"]
    assert taxonomy.label_names("intent") == [
        "mock",
        "mitigate",
        "alienate",
        "provoke",
        "dominate",
        "intimidate",
        "condemn",
        "denounce",
    ]
    assert len(taxonomy.label_names("stance")) == 11 and "appreciative" in taxonomy.label_names("stance")


def test_every_option_has_a_criterion_a_boundary_rule_and_a_source(taxonomy):
    for s in taxonomy.scenarios:
        for opt in (*taxonomy.labels[s], *taxonomy.mechanisms[s]):
            assert opt.criterion and opt.boundary and opt.source in ("paper", "completion")
            assert opt.rule_source == "written here"  # the paper's tables of rules were lost


def test_criteria_and_boundaries_come_from_the_rules_file_as_one_line_each(taxonomy):
    rules = yaml.safe_load(RULES.read_text("utf-8"))["scenarios"]
    (mock,) = [o for o in taxonomy.labels["intent"] if o.name == "mock"]
    assert mock.criterion == " ".join(rules["intent"]["labels"]["mock"]["criterion"].split())
    assert mock.boundary == " ".join(rules["intent"]["labels"]["mock"]["boundary"].split())
    assert all("\n" not in o.criterion + o.boundary for s in taxonomy.scenarios for o in taxonomy.labels[s])


def test_figurative_and_socio_cultural_mechanisms_are_completions_outside_affection(taxonomy):
    source = {s: {o.name: o.source for o in taxonomy.mechanisms[s]} for s in taxonomy.scenarios}
    for s in ("intent", "stance"):
        assert source[s]["figurative semantics"] == source[s]["socio-cultural dependency"] == "completion"
    # A.1 names figurative language and culture-dependent meaning for Affection only
    assert set(source["affection"].values()) == {"paper"}
    assert source["intent"]["expressive aggression"] == source["stance"]["dominant detachment"] == "paper"


def test_the_taxonomy_hash_covers_boundaries_criteria_and_questions(taxonomy):
    base = taxonomy_hash(taxonomy)
    first = taxonomy.labels["intent"][0]
    for change in (
        {"boundary": first.boundary + " x"},
        {"criterion": first.criterion + " x"},
        {"source": "completion"},
    ):
        labels = {**taxonomy.labels, "intent": (replace(first, **change), *taxonomy.labels["intent"][1:])}
        assert taxonomy_hash(replace(taxonomy, labels=labels)) != base, change
    assert taxonomy_hash(replace(taxonomy, questions={**taxonomy.questions, "intent": "?"})) != base


def _rules(**intent_labels):
    """A rules mapping for a one-scenario taxonomy (intent: labels mock, provoke; mechanism x)."""
    rule = {"criterion": "c", "boundary": "b", "source": "written here", "named_in_paper": True}
    labels = {"mock": dict(rule), "provoke": dict(rule), **intent_labels}
    return {
        "scenarios": {
            "intent": {"mechanisms": {"x": dict(rule)}, "labels": {k: v for k, v in labels.items() if v is not None}}
        }
    }


SMALL = {"labels": {"intent": ["mock", "provoke"]}, "mechanisms": {"intent": ["x"]}}


def test_rules_join_the_options_with_named_in_paper_as_the_source():
    rules = _rules(
        provoke={"criterion": "bait", "boundary": "not mock", "source": "written here", "named_in_paper": False}
    )
    tax = apply_rules(parse_taxonomy(SMALL), rules, "r.yaml")
    assert [(o.name, o.criterion, o.boundary, o.source) for o in tax.labels["intent"]] == [
        ("mock", "c", "b", "paper"),
        ("provoke", "bait", "not mock", "completion"),
    ]


@pytest.mark.parametrize(
    "rules, field, message",
    [
        (_rules(provoke=None), "scenarios.intent.labels.provoke", "every option needs a rule"),
        (
            _rules(taunt={"criterion": "c", "boundary": "b", "source": "s", "named_in_paper": True}),
            "scenarios.intent.labels",
            "rule(s) for labels the taxonomy does not have: 'taunt'",
        ),
        (
            _rules(mock={"criterion": "c", "source": "s", "named_in_paper": True}),
            "scenarios.intent.labels.mock.boundary",
            "missing",
        ),
        (
            _rules(mock={"criterion": " ", "boundary": "b", "source": "s", "named_in_paper": True}),
            "scenarios.intent.labels.mock.criterion",
            "non-empty string",
        ),
        (
            _rules(mock={"criterion": "c", "boundary": "b", "source": "s", "named_in_paper": "yes"}),
            "scenarios.intent.labels.mock.named_in_paper",
            "expected true or false",
        ),
        ({"scenarios": {"intent": {"labels": {}}}}, "scenarios.intent.mechanisms", "expected a mapping {option: rule}"),
        (
            {"scenarios": {**_rules()["scenarios"], "stance": {}}},
            "scenarios",
            "scenario(s) the taxonomy does not have: stance",
        ),
        ([], "scenarios", "expected a mapping with scenarios"),
    ],
)
def test_a_bad_rules_file_is_named_with_its_field(rules, field, message):
    with pytest.raises(DataError, match=re.escape(message)) as exc:
        apply_rules(parse_taxonomy(SMALL), rules, "r.yaml")
    assert exc.value.path == "r.yaml" and exc.value.field == field


def test_a_criterion_given_in_both_files_is_refused():
    both = {"labels": {"intent": {"mock": {"criterion": "here too"}, "provoke": {}}}, "mechanisms": {"intent": ["x"]}}
    with pytest.raises(DataError, match="one home") as exc:
        apply_rules(parse_taxonomy(both), _rules(), "r.yaml")
    assert exc.value.field == "scenarios.intent.labels.mock"


def test_an_override_file_may_give_boundaries_inline(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text(
        "scenarios:\n  intent:\n    labels: {mock: {criterion: ridicule, boundary: not provoke}}\n    mechanisms: [x]\n"
    )
    (mock,) = load_taxonomy(f).labels["intent"]
    assert (mock.criterion, mock.boundary) == ("ridicule", "not provoke")


def test_paper_mechanisms_are_present(taxonomy):
    assert {"multimodal incongruity", "affective deception"} <= set(taxonomy.mechanism_names("affection"))
    assert {"expressive aggression", "malicious manipulation"} <= set(taxonomy.mechanism_names("intent"))
    assert {"dominant detachment", "submissive alignment"} <= set(taxonomy.mechanism_names("stance"))


def test_override_file_in_the_score_format(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text("labels: {intent: [mock]}\nmechanisms: {intent: [x]}\n")
    t = load_taxonomy(f)
    assert t.label_names("intent") == ["mock"] and t.mechanism_names("intent") == ["x"]


def test_override_with_mismatched_scenarios_is_an_error(tmp_path):
    f = tmp_path / "t.json"
    f.write_text('{"labels": {"intent": ["mock"]}, "mechanisms": {"stance": ["x"]}}')
    with pytest.raises(DataError, match="scenarios differ"):
        load_taxonomy(f)


def test_a_scenario_given_as_a_list_is_named_with_its_field(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text("scenarios:\n  affection: [happy, sad]\n")
    with pytest.raises(DataError) as exc:
        load_taxonomy(f)
    assert exc.value.path == str(f) and exc.value.field == "scenarios.affection"
    assert "expected a mapping with labels and mechanisms" in str(exc.value)


@pytest.mark.parametrize(
    "text, field, message",
    [
        ("scenarios: [affection]\n", "scenarios", "expected a mapping"),
        ("scenarios: {}\n", "scenarios", "at least one scenario"),
        ("scenarios: {intent: {mechanisms: [x]}}\n", "scenarios.intent.labels", "missing"),
        ("scenarios: {intent: {labels: [], mechanisms: [x]}}\n", "scenarios.intent.labels", "at least one"),
        (
            "scenarios: {intent: {labels: {mock: nice}, mechanisms: [x]}}\n",
            "scenarios.intent.labels.mock",
            "must map to {criterion, boundary, source}",
        ),
        (
            "scenarios: {intent: {labels: {mock: {criterion: [a]}}, mechanisms: [x]}}\n",
            "scenarios.intent.labels.mock.criterion",
            "expected a string",
        ),
        (
            "scenarios: {intent: {labels: [mock], mechanisms: [x], question: [q]}}\n",
            "scenarios.intent.question",
            "expected a string",
        ),
        ("labels: {intent: [mock, mock]}\nmechanisms: {intent: [x]}\n", "labels.intent", "listed twice"),
        ("labels: {intent: [mock, null]}\nmechanisms: {intent: [x]}\n", "labels.intent[1]", "non-empty string"),
        ("labels: {intent: [mock]}\nmechanisms: {intent: 5}\n", "mechanisms.intent", "got a number"),
        ("labels: {}\nmechanisms: {}\n", "labels", "at least one scenario"),
        (
            "labels: {intent: [mock]}\nmechanisms: {intent: [x]}\ndomains: civic\n",
            "domains",
            "expected a list of names",
        ),
    ],
)
def test_taxonomy_shape_errors_name_the_file_and_field(tmp_path, text, field, message):
    f = tmp_path / "t.yaml"
    f.write_text(text)
    with pytest.raises(DataError, match=re.escape(message)) as exc:
        load_taxonomy(f)
    assert exc.value.path == str(f) and exc.value.field == field


@pytest.mark.parametrize("content", ["- just\n- a list\n", "42\n", ""])
def test_a_taxonomy_file_that_is_not_a_mapping_is_named(tmp_path, content):
    f = tmp_path / "t.yaml"
    f.write_text(content)
    with pytest.raises(DataError, match="the top level must be a mapping") as exc:
        load_taxonomy(f)
    assert exc.value.path == str(f)


def test_a_taxonomy_path_that_is_a_folder_is_named(tmp_path):
    with pytest.raises(DataError, match="is a folder"):
        load_taxonomy(tmp_path)
