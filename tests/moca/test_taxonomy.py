import re

import pytest

from socialbench.errors import DataError
from socialbench.moca.taxonomy import load_taxonomy


def test_labels_are_the_papers(taxonomy):
    assert taxonomy.label_names("affection") == ["happy", "bad", "angry", "disgusted", "sad", "fearful"]
    assert taxonomy.label_names("intent") == ["mock", "mitigate", "alienate", "provoke", "dominate", "intimidate", "condemn", "denounce"]
    assert len(taxonomy.label_names("stance")) == 11 and "appreciative" in taxonomy.label_names("stance")


def test_every_option_has_a_criterion_and_a_source(taxonomy):
    for s in taxonomy.scenarios:
        for opt in (*taxonomy.labels[s], *taxonomy.mechanisms[s]):
            assert opt.criterion and opt.source in ("paper", "completion")


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
        ("scenarios: {intent: {labels: {mock: nice}, mechanisms: [x]}}\n", "scenarios.intent.labels.mock", "must map to {criterion, source}"),
        ("scenarios: {intent: {labels: {mock: {criterion: [a]}}, mechanisms: [x]}}\n", "scenarios.intent.labels.mock.criterion", "expected a string"),
        ("scenarios: {intent: {labels: [mock], mechanisms: [x], question: [q]}}\n", "scenarios.intent.question", "expected a string"),
        ("labels: {intent: [mock, mock]}\nmechanisms: {intent: [x]}\n", "labels.intent", "listed twice"),
        ("labels: {intent: [mock, null]}\nmechanisms: {intent: [x]}\n", "labels.intent[1]", "non-empty string"),
        ("labels: {intent: [mock]}\nmechanisms: {intent: 5}\n", "mechanisms.intent", "got a number"),
        ("labels: {}\nmechanisms: {}\n", "labels", "at least one scenario"),
        ("labels: {intent: [mock]}\nmechanisms: {intent: [x]}\ndomains: civic\n", "domains", "expected a list of names"),
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
