import pytest

from socialbench.errors import DataError
from socialbench.taxonomy import load_taxonomy


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
