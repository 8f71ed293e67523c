"""toybench's dataset hooks (test double)."""
