"""The loopback file server of the acquisition tests (tests/acquire), for the AMI download tests here."""

from tests.acquire.conftest import _no_proxy, payload, server  # noqa: F401  (fixtures, used by name)
