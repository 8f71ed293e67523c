"""What a run's predictions were made with: recorded by infer, checked by track."""

import json
import subprocess

import pytest

from socialbench.core.errors import DataError
from socialbench.core.hashing import sha256_file
from socialbench.core.provenance import MADE_WITH_KEYS, git_commit, infer_provenance, made_with, package_versions


class Bench:
    """A benchmark's own provenance record (prompt hashes and the like)."""

    def provenance(self, method, settings):
        return {"prompt_template_sha256": f"hash-of-{method}"}


@pytest.fixture
def instances(tmp_path):
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps({"id": "a"}) + "\n")
    return path


def test_infer_records_the_benchmarks_record_the_inputs_commit_and_versions(instances):
    made = infer_provenance(Bench(), "direct", instances, None, {"k": 1}, commit="abc123")
    assert set(MADE_WITH_KEYS) <= set(made)
    assert made["prompt_template_sha256"] == "hash-of-direct" and made["git_commit"] == "abc123"
    assert made["instances_sha256"] == sha256_file(instances) and made["dev_sha256"] is None
    assert (
        made["method_settings_sha256"]
        != infer_provenance(Bench(), "direct", instances, None, {"k": 2}, commit="abc123")["method_settings_sha256"]
    )


def test_the_versions_hold_python_and_the_installed_packages():
    versions = package_versions()
    assert "python" in versions and "socialbench" in versions and "no-such-package" not in versions


def test_outside_a_git_checkout_the_commit_is_unknown(tmp_path):
    assert git_commit(tmp_path) == "unknown"


def test_a_checkout_with_changed_tracked_files_is_marked_dirty(tmp_path):
    def git(*args):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True, capture_output=True
        )

    git("init", "-q")
    (tmp_path / "f").write_text("1")
    git("add", "f")
    git("commit", "-qm", "one")
    clean = git_commit(tmp_path)
    (tmp_path / "f").write_text("2")
    assert len(clean) == 40 and git_commit(tmp_path) == clean + "-dirty"


def test_track_takes_the_record_made_from_the_instances_it_tracks(instances, tmp_path):
    made = infer_provenance(Bench(), "direct", instances, None, commit="abc")
    assert made_with({"provenance": made}, tmp_path / "stats.json", sha256_file(instances), instances) == made


@pytest.mark.parametrize("stats", [{}, {"provenance": {"git_commit": "abc"}}])
def test_a_stats_file_without_a_complete_record_is_refused_naming_the_field(stats, tmp_path):
    with pytest.raises(DataError, match=r"stats.json, field 'provenance': no complete record"):
        made_with(stats, tmp_path / "stats.json", "0" * 64, tmp_path / "instances.jsonl")


def test_predictions_made_from_other_instances_are_refused(instances, tmp_path):
    made = infer_provenance(Bench(), "direct", instances, None, commit="abc")
    with pytest.raises(
        DataError, match=r"field 'provenance.instances_sha256': the predictions were made from other instances"
    ):
        made_with({"provenance": made}, tmp_path / "stats.json", "0" * 64, instances)
