"""Bad input across every command (docs/bad-input.md): the machinery in ``cases``, the cases in one
``test_*`` module per group of classes, their counts checked against the docs in ``test_suite``."""
