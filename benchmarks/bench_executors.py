"""The local and the Ray executor side by side on the same work: 32 ``sim:slow=2`` items.

Starts a local Ray cluster (the head plus one worker node, each one CPU, offering ``sim``
slots), runs the same items with ``--executor local`` and ``--executor ray`` at the same
``--concurrency``, and prints each one's wall time and efficiency: the ideal wall time
(items x agent seconds / concurrency) over the measured one. The cluster is stopped at the
end, whatever happens.

    uv run --extra ray python benchmarks/bench_executors.py [--items 32] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "harness"))

from ray_cluster import local_cluster  # noqa: E402 (the test helper owns cluster start/stop)

#: Seconds each simulated agent works (the issue's sim:slow=2).
AGENT_S = 2
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")


def run(executor: str, items: int, concurrency: int, env: dict[str, str]) -> tuple[float, str]:
    with tempfile.TemporaryDirectory(prefix="bench-exec-") as runs:
        argv = [
            sys.executable, "-m", "harness", "run", "--fixture", TINY,
            "--agent", f"sim:slow={AGENT_S}", "--trials", str(items),
            "--concurrency", str(concurrency), "--executor", executor,
            "--runs-dir", runs, "--json",
        ]  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        try:
            statuses = [i["status"] for i in json.loads(done.stdout)["items"]]
            summary = f"{statuses.count('resolved')}/{len(statuses)} resolved"
        except (ValueError, KeyError):
            summary = f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
    return wall, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=3)
    args = parser.parse_args()
    ideal = args.items * AGENT_S / args.concurrency
    print(f"{args.items} items of sim:slow={AGENT_S}, concurrency {args.concurrency}: "
          f"ideal {ideal:.1f} s")  # fmt: skip
    with local_cluster() as cluster:
        for executor in ("local", "ray"):
            wall, summary = run(executor, args.items, args.concurrency, cluster.env())
            print(f"{executor:>5}: wall {wall:6.1f} s, efficiency {ideal / wall:5.1%} ({summary})")


if __name__ == "__main__":
    main()
