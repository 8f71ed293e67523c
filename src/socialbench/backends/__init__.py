"""Model backends. See :mod:`socialbench.core.backend` for the plug-in contract."""
