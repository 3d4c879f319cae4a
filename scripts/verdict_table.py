"""Print the verdict of every simulated behaviour and every captured real run, one row each.

Used to show that a change to the harness left every verdict as it was: run it before and
after, and diff the two outputs. It goes through the CLI only (``run`` for the sim, ``score``
for captures turned into item directories), so it works across any reorganisation of the
library underneath.

    uv run --locked python scripts/verdict_table.py > before.tsv
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
SHARED_RUNS = ROOT.parent / "shared" / "real-runs"
TINY = DATA / "fixtures" / "tiny"
JSON_EVENTS = ROOT / "fixtures" / "json-events"
BEHAVIOURS = (
    "honest",
    "no-spawn",
    "helper-names",
    "forged-ledger",
    "double-spawn",
    "over-budget",
    "retry-after-failure",
    "silent-drop",
    "delete-to-hide",
    "model-error",
    "self-answer",
    "answer-mismatch",
    "hollow-children",
    "backdated-reply",
)
CRITERIA = ("coverage", "delegation_evidence", "dedup", "receipts", "provenance")


def harness(*args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True, text=True
    )
    if not done.stdout.strip():
        raise SystemExit(f"harness {' '.join(args)} printed nothing: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


#: Report field of a criterion in older reports -> its one name.
OLD_NAMES = {"delegation_evidence": "delegation"}


def row(source: str, name: str, item: dict) -> str:
    """One item of any report version (flat until version 3, nested ``score`` and
    ``facts`` since version 4) as a table row; criteria by their one name."""
    score, facts = item.get("score", item), item.get("facts", item)
    checks = score.get("checks") or [{"name": c, "passed": item.get(c)} for c in CRITERIA]
    failing = [OLD_NAMES.get(c["name"], c["name"]) for c in checks if c["passed"] is False]
    cells = (
        source,
        name,
        item.get("status", "?"),
        ",".join(failing) or "-",
        str(score.get("tokens_used")),
        str(score.get("turns")),
        (facts.get("error") or "")[:60],
    )
    return "\t".join(cells)


def manifest(fixture: Path) -> dict:
    return json.loads((fixture / "fixture.json").read_text(encoding="utf-8"))


def prime_capture_item(run: Path, fixture: Path, dest: Path) -> Path:
    """A prime-agent capture laid out as an item directory of the harness."""
    item = dest / run.name
    shutil.copytree(run / "sessions", item / "sessions")
    shutil.copytree(run / "session-artifacts", item / "session-artifacts")
    ledgers = run / "agent-home" / "rlm-ledger"
    if ledgers.is_dir():
        shutil.copytree(ledgers, item / "agent-home" / "rlm-ledger")
    (item / "repo").mkdir()
    answer = run / "repo-after" / "combined-index.md"
    if answer.is_file():
        shutil.copy(answer, item / "repo" / answer.name)
    shutil.copy(run / "cli.stdout.jsonl", item / "stdout.jsonl")
    shutil.copy(run / "cli.stderr.txt", item / "stderr.txt")
    meta = {
        "schema_version": 2,
        "key": f"{run.name}:capture:1",
        "fixture": fixture.name,
        "model": "capture",
        "trial": 1,
        "agent_kind": "prime-agent",
        "agent_options": "",
        "sessions_spellings": [f"/srv/evals/{run.name}/sessions"],
        "exit_code": int(re.sub(r"\D", "", (run / "cli.exit.txt").read_text()) or 0),
        "timed_out": False,
        "cancelled": False,
        "wall_time_s": 1.0,
        "manifest": manifest(fixture),
    }
    (item / "item.json").write_text(json.dumps(meta), encoding="utf-8")
    return item


def claude_capture_item(run: Path, dest: Path) -> Path:
    item = dest / f"cc-{run.name}"
    shutil.copytree(run / "config", item / "claude-config")
    shutil.copytree(run / "repo", item / "repo")
    shutil.copy(run / "stdout.jsonl", item / "stdout.jsonl")
    meta = {
        "schema_version": 2,
        "key": f"{run.name}:capture:1",
        "fixture": "tiny",
        "model": "capture",
        "trial": 1,
        "agent_kind": "claude-code",
        "agent_options": "",
        "exit_code": 0,
        "timed_out": False,
        "cancelled": False,
        "wall_time_s": 1.0,
        "manifest": manifest(TINY),
    }
    (item / "item.json").write_text(json.dumps(meta), encoding="utf-8")
    return item


def main() -> int:
    lines = ["source\tname\tstatus\tfailing\ttokens\tturns\terror"]
    with tempfile.TemporaryDirectory(prefix="verdicts-") as tmp:
        runs = Path(tmp) / "runs"
        for behaviour in BEHAVIOURS:
            report = harness(
                "run",
                "--agent",
                f"sim:{behaviour}",
                "--fixture",
                str(TINY),
                "--runs-dir",
                str(runs),
                "--json",
            )
            for item in report["items"]:
                lines.append(row("sim", behaviour, item))
        items = Path(tmp) / "items"
        items.mkdir()
        captures = [(p, TINY) for p in sorted((DATA / "real-runs").iterdir()) if p.is_dir()]
        if SHARED_RUNS.is_dir():
            captures += [(p, JSON_EVENTS) for p in sorted(SHARED_RUNS.glob("billed-*"))]
        for run, fixture in captures:
            item = prime_capture_item(run, fixture, items)
            lines.append(row("prime-agent", run.name, harness("score", str(item))))
        for run in sorted((DATA / "claude-code-runs").iterdir()):
            item = claude_capture_item(run, items)
            lines.append(row("claude-code", run.name, harness("score", str(item))))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
