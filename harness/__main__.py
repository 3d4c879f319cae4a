"""Entry point: ``python -m harness`` and the ``swarm-harness`` console script."""

from __future__ import annotations

import sys

from harness.errors import exit_interrupted


def main() -> None:
    try:
        # Imported here: a Ctrl-C while the CLI's modules load must also exit 130.
        from harness.cli.main import main as cli_main

        cli_main()
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        exit_interrupted()


if __name__ == "__main__":
    main()
