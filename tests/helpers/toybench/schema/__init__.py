"""toybench's schema hooks (test double)."""
