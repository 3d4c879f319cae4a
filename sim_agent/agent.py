#!/usr/bin/env python3
"""Simulated ``prime-agent`` CLI: ``agent.py --mode json --daemon-socket SOCK --cwd REPO
--session-dir S --model PROVIDER/MODEL -- "TASK"``, or the resident supervisor:
``agent.py --mode daemon --daemon-socket SOCK`` (see ``resident.py``).

Answers and behaviours come from the oracle file named by ``$SWARM_HARNESS_SIM_ORACLE``
(see ``config.py``). Like the real CLI, bad usage and thrown errors exit 1 with text on
stderr, while a run that merely goes badly (even a model error) exits 0. The ``--sim-*``
first arguments select the internal modes the sim uses for its own processes.
"""

from __future__ import annotations

import os
import sys

if not __package__:
    # Run as a script: make the sim_agent package importable (its parent directory on
    # sys.path), also under -I / -P, which keep the script's own directory off it.
    _ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if _ROOT not in sys.path:
        sys.path.insert(0, _ROOT)
    # Every sim process imports the sibling modules afresh: cache their bytecode even under
    # PYTHONDONTWRITEBYTECODE, or each process pays for compiling them again (as much CPU
    # as the rest of a child's start-up). Writes go to sim_agent/__pycache__ only.
    sys.dont_write_bytecode = False

from sim_agent import launch


def main(argv: list[str] | None = None) -> int:
    # Each mode imports only its own modules: a child must start fast.
    args = sys.argv[1:] if argv is None else argv
    mode = args[0] if args else ""
    if mode == launch.MODE_DAEMON:
        from sim_agent import daemon

        return int(daemon.run_daemon(args[1:]))
    if mode == launch.MODE_CHILD:
        from sim_agent import child

        return int(child.run_child())
    if mode == launch.MODE_SLEEP:
        return launch.sleep_forever(ignore_sigterm="--ignore-sigterm" in args[1:])
    if mode == launch.MODE_WORKER:
        from sim_agent import worker

        return int(worker.run_worker())
    if "--mode=daemon" in args or ["--mode", "daemon"] in (
        args[i : i + 2] for i in range(len(args))
    ):
        from sim_agent import resident

        return int(resident.run_supervisor(args))
    from sim_agent import config, parent

    try:
        cfg = config.parse_launch(args, os.environ)
    except config.SimUsageError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    if cfg.oracle.behaviours.plan == "noop":
        return 0
    from sim_agent import records

    records.set_prompt_tokens(cfg.oracle.prompt_tokens())
    try:
        return int(parent.run_parent(cfg))
    except Exception as e:  # a thrown error: the real CLI prints it and exits 1
        import traceback

        traceback.print_exc()
        print(f"Error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
