"""toybench's eval hooks (test double)."""
