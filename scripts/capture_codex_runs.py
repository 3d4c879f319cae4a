"""Capture real Codex runs into tests/data/codex-runs/, sanitized.

    python scripts/capture_codex_runs.py --codex PATH [--out tests/data/codex-runs]
    python scripts/capture_codex_runs.py --codex PATH --edit FIXTURE [--out tests/data/codex-edit-runs]

Runs every scripted behaviour through the real client with the harness's own ``selftest``
path (the tiny fixture; the first multi-agent protocol and the second, ``codex:v2``), plus
two runs under provider faults, and keeps each item's bundle as
``<protocol>-<script>[-<faults>]/``: the rollouts (``codex-home/sessions/...``),
``stdout.jsonl``, ``stderr.txt`` (only its request and stream lines: the ones the parser
reads, failed or not), the artifact, and ``capture.json`` (the client version, the
protocol, the script's expected verdict, and what the scripted server billed and failed for
the item). With ``--edit FIXTURE`` it runs every script on that edit fixture instead (under
both protocols, no faults) into ``tests/data/codex-edit-runs/``, with the fixture's
``fixture.json`` beside the runs (their answer key: the fixture need not be at hand). Sanitizing: the item's workdir becomes ``/RUN``; Codex's system prompt
(``base_instructions``), its developer messages and its per-turn settings snapshots
(``world_state``, ``turn_context``, ``thread_settings_applied``) are elided (large, the client's own text, read by no
parser); a command's output keeps its first lines. Nothing else is changed.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.agents import parse_agent  # noqa: E402 (after the path set-up)
from harness.agents.codex.launch import CODEX_VERSION  # noqa: E402
from harness.selftest import fixture_manifests, run_selftest  # noqa: E402
from scripted_model import Oracle, ScriptedModelServer  # noqa: E402
from scripted_model.faults import parse_faults  # noqa: E402

TINY = REPO / "tests" / "data" / "fixtures" / "tiny"
NEUTRAL = "/RUN"
ELIDED = "[elided by the capture]"
#: Lines of a command's output kept (the rest is shard text no parser reads).
OUTPUT_LINES = 8
#: The log lines the parser reads (every other line is dropped).
LOG_EVENTS = re.compile(r'event\.name="codex\.(api_request|sse_event)"')
#: (name suffix, agent, fault plan, scripts): the runs under provider faults.
FAULT_RUNS = (
    ("child-529-first", "codex", "overloaded,scope=children,first=1", ("honest",)),
    ("parent-429-write", "codex", "rate_limited,scope=parent,phase=write,times=1", ("honest",)),
)


def _elide_line(record: dict[str, Any], workdir: str) -> dict[str, Any] | None:
    kind, payload = record.get("type"), record.get("payload")
    if not isinstance(payload, dict):
        return record
    if kind == "session_meta" and "base_instructions" in payload:
        payload["base_instructions"] = {"text": ELIDED}
    elif kind in ("world_state", "turn_context"):
        record["payload"] = {"elided": ELIDED}
    elif kind == "event_msg" and payload.get("type") == "thread_settings_applied":
        record["payload"] = {"type": "thread_settings_applied", "elided": ELIDED}
    elif kind == "response_item" and payload.get("role") == "developer":
        payload["content"] = [{"type": "input_text", "text": ELIDED}]
    elif kind == "response_item" and payload.get("type") == "function_call_output":
        output = payload.get("output")
        if isinstance(output, str) and output.count("\n") > OUTPUT_LINES:
            kept = output.split("\n")[:OUTPUT_LINES]
            payload["output"] = "\n".join([*kept, ELIDED])
    elif kind == "event_msg" and isinstance(payload.get("item"), dict):
        item = payload["item"]
        if isinstance(item.get("aggregated_output"), str):
            item["aggregated_output"] = ELIDED
    return record


def _sanitize_text(text: str, workdir: str) -> str:
    return text.replace(workdir, NEUTRAL)


def _workdir(item_dir: Path) -> str | None:
    """The live workdir the item ran in: its root rollout's cwd, less ``/repo``."""
    for rollout in sorted(item_dir.glob("codex-home/sessions/*/*/*/rollout-*.jsonl")):
        with rollout.open(encoding="utf-8") as fh:
            meta = json.loads(fh.readline()).get("payload", {})
        cwd = meta.get("cwd")
        if isinstance(cwd, str) and cwd.endswith("/repo"):
            return cwd.removesuffix("/repo")
    return None


def copy_item(item_dir: Path, dest: Path, capture: dict[str, Any]) -> None:
    """The item's bundle, and each earlier attempt's under ``attempts/<n>/`` (with what the
    harness made of it: its ``result.json``'s status and error)."""
    shutil.rmtree(dest, ignore_errors=True)
    copy_bundle(item_dir, dest)
    for attempt in sorted(item_dir.glob("attempts/*")):
        copy_bundle(attempt, dest / "attempts" / attempt.name)
        result = json.loads((attempt / "result.json").read_text(encoding="utf-8"))
        said = {"status": result.get("status"), "error": (result.get("facts") or {}).get("error")}
        (dest / "attempts" / attempt.name / "harness.json").write_text(json.dumps(said) + "\n")
    (dest / "capture.json").write_text(json.dumps(capture, indent=2) + "\n", encoding="utf-8")


def copy_bundle(item_dir: Path, dest: Path) -> None:
    workdir = _workdir(item_dir) or "/nonexistent"
    dest.mkdir(parents=True)
    for rollout in sorted(item_dir.glob("codex-home/sessions/*/*/*/rollout-*.jsonl")):
        out = dest / rollout.relative_to(item_dir)
        out.parent.mkdir(parents=True, exist_ok=True)
        lines = []
        for line in rollout.read_text(encoding="utf-8").splitlines():
            record = _elide_line(json.loads(line), workdir)
            lines.append(_sanitize_text(json.dumps(record, ensure_ascii=False), workdir))
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stdout = item_dir / "stdout.jsonl"
    if stdout.is_file():
        (dest / "stdout.jsonl").write_text(
            _sanitize_text(stdout.read_text(encoding="utf-8"), workdir), encoding="utf-8"
        )
    stderr = item_dir / "stderr.txt"
    if stderr.is_file():
        kept = [
            ln for ln in stderr.read_text(encoding="utf-8").splitlines() if LOG_EVENTS.search(ln)
        ]
        (dest / "stderr.txt").write_text(_sanitize_text("\n".join(kept) + "\n", workdir))
    for artifact in item_dir.glob("repo/*"):
        (dest / "repo").mkdir(exist_ok=True)
        shutil.copyfile(artifact, dest / "repo" / artifact.name)


def capture(
    codex: Path,
    out: Path,
    agent: str,
    name: str,
    faults: str,
    scripts: tuple[str, ...],
    fixture: Path = TINY,
) -> None:
    oracle = Oracle.from_manifests(fixture_manifests([str(fixture)]))
    runs = Path(tempfile.mkdtemp(prefix="codex-capture-"))
    try:
        adapter = parse_agent(agent, str(codex))
        with ScriptedModelServer(
            oracle, model_api=adapter.model_api, faults=parse_faults(faults)
        ) as server:
            outcome = run_selftest(
                server,
                (adapter,),
                fixtures=(str(fixture),),
                scripts=scripts,
                runs_dir=runs,
                retries=2,
            )
            by_caller = {
                (row.case.script, caller): server.billed(row.case.script, caller=caller).total
                for row in outcome.rows
                for caller in ("parent", "child")
            }
        protocol = "v2" if agent.endswith(":v2") else "v1"
        for row in outcome.rows:
            suffix = f"-{name}" if name else ""
            dest = out / f"{protocol}-{row.case.script}{suffix}"
            copy_item(
                Path(row.item_dir),
                dest,
                {
                    "codex_version": CODEX_VERSION,
                    "protocol": protocol,
                    "script": row.case.script,
                    "faults": faults,
                    "expected_status": row.case.expected_status,
                    "expected_failing": list(row.case.expected_failing),
                    "billed": {
                        "tokens": row.billed,
                        "parent_tokens": by_caller[(row.case.script, "parent")],
                        "child_tokens": by_caller[(row.case.script, "child")],
                        "usd": row.billed_usd,
                        "requests": row.server_requests,
                        "faults_served": row.faults_served,
                    },
                    "attempts": row.attempts,
                    "harness": {"ok": row.ok, "status": row.status, "failing": list(row.failing)},
                },
            )
            print(f"{dest.name}: {'ok' if row.ok else 'FAIL'}")
    finally:
        shutil.rmtree(runs, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--codex", type=Path, required=True, help="the codex executable")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--edit", type=Path, default=None, help="an edit fixture's folder")
    args = parser.parse_args()
    if args.edit is not None:
        out = args.out or REPO / "tests" / "data" / "codex-edit-runs"
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(args.edit / "fixture.json", out / "fixture.json")
        for agent in ("codex", "codex:v2"):
            capture(args.codex, out, agent, "", "", (), args.edit)
        return 0
    args.out = args.out or REPO / "tests" / "data" / "codex-runs"
    for agent in ("codex", "codex:v2"):
        capture(args.codex, args.out, agent, "", "", ())
    for name, agent, faults, scripts in FAULT_RUNS:
        capture(args.codex, args.out, agent, name, faults, scripts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
