"""toybench's results hooks (test double)."""
