"""The real prime-agent CLI under the harness, driven by the scripted model (``selftest``).

One selftest run (every script on the tiny fixture, concurrency 3) pins: every verdict, the
isolation of HOME and TMPDIR, that nothing of the run is left running, and that turns are
counted from the more complete of stream and transcript.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realkit import selftest_in_fresh_home, tree

from scripted_model import SCRIPTS

pytestmark = pytest.mark.real_agent

#: The whole tier must stay under 5 minutes at concurrency 3 on a busy 2-core machine.
SELFTEST_TIMEOUT_S = 280


def _assistant_count(path: Path, stream: bool) -> int:
    count = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        wanted = "message_end" if stream else "message"
        if event.get("type") == wanted and (event.get("message") or {}).get("role") == "assistant":
            count += 1
    return count


@pytest.fixture(scope="module")
def selftest_run(real_agent_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("selftest")
    return selftest_in_fresh_home(base, "prime-agent", real_agent_bin, SELFTEST_TIMEOUT_S)


def test_every_script_gets_its_expected_verdict(selftest_run: dict) -> None:
    done = selftest_run["done"]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("tiny ")]
    assert sorted(r[1] for r in rows) == sorted(SCRIPTS)
    assert all(r[-1] == "ok" for r in rows), done.stdout


def test_nothing_is_created_under_home_or_tmpdir(selftest_run: dict) -> None:
    # ~/.ipython, ~/.prime/supervisor-owners, $TMPDIR/node-compile-cache, $TMPDIR/prime-agent-0
    assert tree(selftest_run["home"]) == []
    assert tree(selftest_run["tmp"]) == []


def test_nothing_of_the_run_is_left_running(selftest_run: dict) -> None:
    assert selftest_run["leftovers"] == []


def test_turns_come_from_the_more_complete_source(selftest_run: dict) -> None:
    """early-exit: the parent keeps working after the CLI's stream ended (its torn-down
    children wake it), so its transcript holds more turns than the stream."""
    items = next(selftest_run["runs"].iterdir()) / "items"
    seen_longer_transcript = False
    for item in sorted(items.iterdir()):
        result = json.loads((item / "result.json").read_text())
        streamed = _assistant_count(item / "stdout.jsonl", stream=True)
        transcripts = list((item / "sessions").glob("*.jsonl"))
        recorded = _assistant_count(transcripts[0], stream=False) if transcripts else 0
        assert result["turns"] == max(streamed, recorded), item.name
        seen_longer_transcript |= recorded > streamed
    assert seen_longer_transcript, "no item showed turns after the stream ended"
