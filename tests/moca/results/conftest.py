from __future__ import annotations

import pytest


@pytest.fixture
def figures_drawn_not_rasterized(request, monkeypatch):
    """For the tables' tests (their modules use it): they check the tables and the figures' data, not
    the pictures, so every figure is still drawn (its code runs) but not rasterized to PNG and PDF,
    which is nearly all of the time a tables call takes. test_figures.py checks the images; a test
    here that looks at them asks for ``rasterized_figures``."""
    if "rasterized_figures" in request.fixturenames:
        return
    from socialbench.results import tables

    monkeypatch.setattr(tables, "figure_bytes", lambda fig: {"png": b"not rasterized", "pdf": b"not rasterized"})


@pytest.fixture
def rasterized_figures():
    """Figures rendered to real PNG and PDF bytes (see ``figures_drawn_not_rasterized``)."""
