"""Test doubles and helpers shared by the tests and the benchmark scripts (see each module)."""
