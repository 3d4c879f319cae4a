"""The README's CLI reference is generated from --help and must not go stale."""

from __future__ import annotations

from harness.cli.docs import README, render


def test_cli_reference_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    assert render(text) == text, "README CLI reference is stale: run `python -m harness.cli.docs`"
