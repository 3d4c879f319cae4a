"""How long ``export`` takes on a run of sim items (the CLI, start-up included).

Makes one sim run of ``--items`` items (``--fixture``, trials), then times
``swarm-harness export RUN`` ``--repeats`` times and prints each and the median.

    uv run python benchmarks/bench_export.py --items 20 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def harness(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, check=True,
                   capture_output=True, text=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--fixture", default="json-events")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        harness("run", "--fixture", args.fixture, "--agent", "sim", "--trials", str(args.items),
                "--concurrency", "2", "--runs-dir", str(runs))  # fmt: skip
        (run,) = [p for p in runs.iterdir() if p.is_dir()]
        times = []
        for n in range(1, args.repeats + 1):
            start = time.perf_counter()
            harness("export", str(run))
            times.append(time.perf_counter() - start)
            print(f"  #{n} export of {args.items} items ({args.fixture}): {times[-1]:.2f} s")
        size = sum(p.stat().st_size for p in (run / "trajectories").rglob("trajectory.json"))
        print(f"median {statistics.median(times):.2f} s; {size / 1e6:.2f} MB of trajectories")


if __name__ == "__main__":
    main()
