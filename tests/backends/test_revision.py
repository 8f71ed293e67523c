"""What an unpinned model is: a local folder's fingerprint, or the commit of a hub id."""

import huggingface_hub
import pytest

from socialbench.backends.revision import resolve_revision
from socialbench.core.hashing import folder_fingerprint

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_a_local_folder_is_its_fingerprint(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    assert resolve_revision(str(tmp_path), offline=True) == folder_fingerprint(tmp_path)


def test_a_hub_id_in_the_local_cache_is_the_commit_of_its_snapshot(monkeypatch):
    cached = f"/hf/hub/models--org--model/snapshots/{COMMIT}/config.json"
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda repo, name: cached)
    assert resolve_revision("org/model", offline=True) == COMMIT


def test_an_uncached_hub_id_offline_is_unknown(monkeypatch):
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda repo, name: None)
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda: pytest.fail("offline: the hub is not asked"))
    assert resolve_revision("org/model", offline=True) is None


def test_an_uncached_hub_id_online_is_the_commit_the_hub_names(monkeypatch):
    class Api:
        def model_info(self, model_id):
            return type("Info", (), {"sha": COMMIT})()

    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda repo, name: None)
    monkeypatch.setattr(huggingface_hub, "HfApi", Api)
    assert resolve_revision("org/model", offline=False) == COMMIT


def test_a_hub_that_cannot_be_reached_leaves_the_revision_unknown(monkeypatch):
    class Api:
        def model_info(self, model_id):
            raise OSError("no network")

    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda repo, name: None)
    monkeypatch.setattr(huggingface_hub, "HfApi", Api)
    assert resolve_revision("org/model", offline=False) is None


def test_a_path_that_does_not_exist_is_left_to_the_load_to_name(monkeypatch):
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda: pytest.fail("not a hub id: the hub is not asked"))
    assert resolve_revision("/no/such/model/folder", offline=False) is None
