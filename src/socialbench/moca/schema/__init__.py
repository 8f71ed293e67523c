"""The benchmark's contracts that every stage reads: its schema, settings and vocabularies."""
