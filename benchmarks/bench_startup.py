"""How long the CLI takes to start: ``--help``, ``run --help``, a dry run with the sim and
``score`` of a finished item, each with cached bytecode and without any (as a read-only
install, or an environment with ``PYTHONDONTWRITEBYTECODE`` and nothing precompiled, starts).

The runs alternate (cached, uncached, cached, ...) so a busy machine slows both alike; the
medians and their ratio are printed side by side.

    uv run python benchmarks/bench_startup.py [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")
#: Enough runs for a median that holds on a shared 2-core machine.
DEFAULT_REPEATS = 7


def _time(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=REPO, env=env, capture_output=True, check=False, timeout=120)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    repeats = parser.parse_args().repeats
    with tempfile.TemporaryDirectory(prefix="swh-bench-startup-") as tmp:
        runs = Path(tmp) / "runs"
        harness = [sys.executable, "-m", "harness"]
        subprocess.run(
            [*harness, "run", "--fixture", TINY, "--agent", "sim", "--runs-dir", str(runs)],
            cwd=REPO, capture_output=True, check=True, timeout=300,
        )  # fmt: skip
        item = next(runs.glob("*/items/*"))
        commands = {
            "--help": ["--help"],
            "run --help": ["run", "--help"],
            "run --dry-run (sim)": ["run", "--fixture", TINY, "--agent", "sim", "--dry-run"],
            "score ITEM_DIR": ["score", str(item)],
        }
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        # Without bytecode: a private, empty cache dir every time, so nothing is reused.
        for args in commands.values():  # warm the shared cache and the disk
            _time([*harness, *args], cached)
        print(f"{'command':<22} {'cached (s)':>11} {'no bytecode (s)':>16} {'ratio':>6}")
        for name, args in commands.items():
            warm, cold = [], []
            for n in range(repeats):
                warm.append(_time([*harness, *args], cached))
                fresh = {**cached, "PYTHONPYCACHEPREFIX": str(Path(tmp) / f"pyc-{name}-{n}")}
                fresh["PYTHONDONTWRITEBYTECODE"] = "1"
                cold.append(_time([*harness, *args], fresh))
            w, c = statistics.median(warm), statistics.median(cold)
            print(f"{name:<22} {w:>11.3f} {c:>16.3f} {c / w:>6.1f}")


if __name__ == "__main__":
    main()
