"""Time the full scorer on a ledger at the product's cap of 100,000 records.

Everything is built in memory (``io.BytesIO`` openers): a ledger of 100,000 records
(three honest workers, then churn of spawn / rename / delete records under this parent and
under another root), a parent transcript with the workers' replies and usage attribution,
the workers' child sessions (so provenance is traced), a stdout stream and the artifact. Prints the median wall time of several full scores and the
ledger records scored per second.

    uv run python benchmarks/bench_scorer.py [--repeats N]
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import time
from collections.abc import Callable

from scorers import Manifest, Shard
from scorers.prime_agent import ChildSessionFile, PrimeAgentArtifacts, score_prime_agent

#: The product caps a ledger at 100,000 records (CONTRACT section 4).
LEDGER_RECORDS = 100_000
#: Enough repeats for a stable median without making the benchmark slow.
DEFAULT_REPEATS = 7

SESSIONS = "/srv/evals/bench/sessions"
PARENT_FILE = f"{SESSIONS}/01a228ad-3d20-72ca-a542-e9a175e93c9e.jsonl"
OTHER_ROOT = f"{SESSIONS}/99999999-0000-0000-0000-000000000000.jsonl"
ROOT_ID = "01a228ad-465d-711e-a795-d3d4d68facdd"
ARTIFACTS = f"/srv/evals/bench/session-artifacts/{ROOT_ID}"
SHARDS = (("shard-a.txt", 3), ("shard-b.txt", 5), ("shard-c.txt", 6))


def _line(record: dict[str, object]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def _spawn(child_id: str, parent: str, name: str, at: str) -> dict[str, object]:
    child = f"{ARTIFACTS}/{child_id}/{child_id}-session.jsonl"
    return {
        "v": 1,
        "op": "spawn",
        "at": at,
        "childId": child_id,
        "parent": parent,
        "child": child,
        "depth": 1,
        "name": name,
    }


def build_ledger() -> bytes:
    """Exactly ``LEDGER_RECORDS`` lines: workers first, then churn to the cap."""
    at = "2026-11-29T18:59:42.476Z"
    lines = [_line({"v": 1, "op": "meta", "at": at, "sessionsDir": SESSIONS})]
    for file, _ in SHARDS:
        worker = "worker-" + file.removesuffix(".txt")
        lines.append(_line(_spawn(f"sub-{worker}", PARENT_FILE, worker, at)))
    i = 0
    while len(lines) < LEDGER_RECORDS:
        parent = PARENT_FILE if i % 2 else OTHER_ROOT
        spawn = _spawn(f"sub-{i:08x}", parent, f"helper-{i}", at)
        rename = {"v": 1, "op": "rename", "at": at, "childId": spawn["childId"]}
        rename |= {"child": spawn["child"], "name": f"renamed-{i}"}
        delete = {"v": 1, "op": "delete", "at": at, "childId": spawn["childId"]}
        delete |= {"child": spawn["child"], "reason": "user"}
        for record in (spawn, rename, delete):
            if len(lines) < LEDGER_RECORDS:
                lines.append(_line(record))
        i += 1
    return b"".join(lines)


def build_transcript(children: int) -> bytes:
    """Replies from the workers; a notice and a usage entry per other child id."""
    at = "2026-11-29T18:59:50.165Z"
    lines = [_line({"type": "session", "version": 3, "id": ROOT_ID, "timestamp": at})]
    for file, n in SHARDS:
        worker = "worker-" + file.removesuffix(".txt")
        details = {
            "message": f"ANSWER::{file}::{n} words",
            "fromRelationship": "child",
            "from": {"sessionId": f"sub-{worker}-session"},
        }
        reply = {"type": "custom_message", "customType": "agent_message", "details": details}
        lines.append(_line(reply | {"timestamp": at}))
    for i in range(1, 2 * children, 2):
        details = {"kind": "completed_without_reply", "childId": f"sub-{i:08x}"}
        notice = {"type": "custom_message", "customType": "rlm_child_terminal_notice"}
        lines.append(_line(notice | {"details": details}))
        usage = {"type": "child_usage_attributed", "childUsage": {"totalTokens": 1049}}
        lines.append(_line(usage))
    return b"".join(lines)


def build_child_session(child_id: str) -> bytes:
    """A worker's session: header, the parent's task for it, one successful turn."""
    at = "2026-11-29T18:59:42.530Z"
    header = {"type": "session", "version": 3, "id": f"{child_id}-session", "timestamp": at}
    header |= {"parentSession": PARENT_FILE, "rlmDepth": 1}
    task = {"type": "custom_message", "customType": "agent_message", "timestamp": at}
    task["details"] = {
        "id": f"spawn:{child_id}",
        "from": {"sessionId": ROOT_ID},
        "fromRelationship": "parent",
    }
    turn = {"type": "message", "timestamp": at}
    turn["message"] = {"role": "assistant", "stopReason": "stop", "usage": {"totalTokens": 9}}
    return _line(header) + _line(task) + _line(turn)


def build_stdout(turns: int) -> bytes:
    lines = [_line({"type": "session", "version": 3, "id": ROOT_ID})]
    message = {"role": "assistant", "stopReason": "toolUse", "usage": {"totalTokens": 1077}}
    for _ in range(turns):
        lines.append(_line({"type": "message_update", "message": message}))
        lines.append(_line({"type": "message_end", "message": message}))
        lines.append(_line({"type": "turn_end", "message": message}))
    return b"".join(lines)


def _opener(data: bytes) -> Callable[[], io.BytesIO]:
    return lambda: io.BytesIO(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    args = parser.parse_args()

    ledger = build_ledger()
    children = LEDGER_RECORDS // 6  # churned children of this parent (every other one)
    workers = [("worker-" + file.removesuffix(".txt"), file, n) for file, n in SHARDS]
    manifest = Manifest(
        name="bench",
        artifact="combined-index.md",
        shards=tuple(Shard(file, worker, "words?", n) for worker, file, n in workers),
    )
    artifacts = PrimeAgentArtifacts(
        parent_session_paths=(PARENT_FILE,),
        ledger=_opener(ledger),
        parent_transcript=_opener(build_transcript(children)),
        stdout=_opener(build_stdout(1000)),
        artifact=_opener("".join(f"- {file}: {n} words\n" for _, file, n in workers).encode()),
        child_sessions=tuple(
            ChildSessionFile(
                (f"sub-{worker}",),
                f"sub-{worker}-session.jsonl",
                _opener(build_child_session(f"sub-{worker}")),
            )
            for worker, _, _ in workers
        ),
    )
    times = []
    score = None
    for _ in range(args.repeats):
        start = time.perf_counter()
        score = score_prime_agent(artifacts, manifest)
        times.append(time.perf_counter() - start)
    assert score is not None
    median = statistics.median(times)
    print(f"ledger: {LEDGER_RECORDS:,} records, {len(ledger) / 2**20:.1f} MiB")
    print(f"verdict: resolved={score.resolved}; {'; '.join(score.failures) or 'no failures'}")
    print(f"runs: {args.repeats}, median {median:.3f} s, min {min(times):.3f} s")
    print(f"throughput: {LEDGER_RECORDS / median:,.0f} ledger records/s")


if __name__ == "__main__":
    main()
