"""Progress: one line per finished item, printed as it finishes; on a terminal a status line
that names the running items and redraws by itself."""

from __future__ import annotations

import io
import time

from harness.model.item import ItemResult, RunFacts
from harness.model.text import format_duration
from harness.report.progress import REDRAW_INTERVAL_S, Progress
from scorers.prime_agent import PrimeAgentArtifacts, score_prime_agent
from scorers.types import Manifest

MANIFEST = Manifest.from_dict(
    {"name": "t", "artifact": "a.md", "shards": [{"file": "s.txt", "worker": "worker-s",
                                                   "question": "q?", "expected": 1}]}
)  # fmt: skip


def _result(key: str, error: str | None = None) -> ItemResult:
    score = score_prime_agent(PrimeAgentArtifacts(parent_session_paths=()), MANIFEST)
    fixture, model, trial = key.split(":")
    return ItemResult(
        key=key, fixture=fixture, model=model, trial=int(trial), item_dir=key,
        score=score, facts=RunFacts(1.5, None, False, error, None),
    )  # fmt: skip


def test_without_a_terminal_one_line_per_finished_item() -> None:
    out = io.StringIO()
    progress = Progress(out, live=False)
    progress.start(total=2)
    progress.item_started("t:m:1")
    progress.item_done(_result("t:m:1", error="model never reached: every message errored"))
    progress.finish()
    (line,) = out.getvalue().splitlines()
    assert line.startswith("[1/2] t:m:1: error in 1.5s — model never reached")
    assert "\r" not in out.getvalue()


def test_on_a_terminal_the_status_names_running_items_and_redraws() -> None:
    out = io.StringIO()
    progress = Progress(out, live=True)
    progress.start(total=3)
    progress.item_started("t:m:1")
    progress.item_started("t:m:2")
    deadline = time.monotonic() + 30 * REDRAW_INTERVAL_S  # a loaded machine may be late
    while out.getvalue().count("\r") < 2 and time.monotonic() < deadline:
        time.sleep(REDRAW_INTERVAL_S / 10)  # until the ticker alone has redrawn once
    drawn = out.getvalue()
    assert drawn.count("\r") >= 2 and "running: t:m:1" in drawn and "t:m:2" in drawn
    progress.item_done(_result("t:m:1"))
    assert "[1/3] t:m:1: resolved" in out.getvalue() or "t:m:1: unresolved" in out.getvalue()
    progress.finish()
    assert out.getvalue().endswith("\r\x1b[K")


def test_durations_read_naturally() -> None:
    assert [format_duration(s) for s in (4.4, 65, 3725)] == ["4s", "1m05s", "1h02m"]
