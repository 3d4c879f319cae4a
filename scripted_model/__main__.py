"""``python -m scripted_model --fixture DIR ...``: serve the scripts until interrupted.

Prints the ``models.json`` to put into an agent home (``$PRIME_AGENT_CODING_AGENT_DIR``),
then serves; select a script with ``--model scripted/<script>``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
from pathlib import Path

from scripted_model.faults import FaultSpecError, parse_faults
from scripted_model.oracle import Oracle
from scripted_model.server import ScriptedModelServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripted_model", description=__doc__)
    parser.add_argument(
        "--fixture",
        action="append",
        type=Path,
        default=[],
        help="a fixture directory (its fixture.json is the oracle); repeatable",
    )
    parser.add_argument("--port", type=int, default=0, help="loopback port (0: a free one)")
    parser.add_argument(
        "--request-log",
        type=Path,
        default=None,
        help="append every request and the scripted answer to this JSONL file",
    )
    parser.add_argument(
        "--faults",
        default="",
        metavar="PLAN",
        help="fail requests as a provider would (scripted_model.faults: e.g. "
        "'overloaded,scope=children,first=1;server_error,scope=parent,phase=write,times=1')",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the plan's shares")
    args = parser.parse_args(argv)
    try:
        faults = parse_faults(args.faults, args.seed)
    except FaultSpecError as exc:
        parser.error(f"--faults: {exc}")
    server = ScriptedModelServer(
        Oracle.from_fixture_dirs(args.fixture),
        port=args.port,
        request_log=args.request_log,
        faults=faults,
    )
    with server:
        print(json.dumps(server.models_json(), indent=2), flush=True)
        print(f"serving on {server.base_url}", file=sys.stderr, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
