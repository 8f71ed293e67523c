"""MoCA: implicit social context analysis (instances, prompts, parsing, scoring, tables)."""
