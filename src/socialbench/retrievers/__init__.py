"""Retriever providers (``core.retrieval.Retriever`` subclasses), registered by name in ``core.retrieval``."""
