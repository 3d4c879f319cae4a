"""Entry point: ``python -m harness``."""

from __future__ import annotations

from harness.cli.main import main

if __name__ == "__main__":
    main()
