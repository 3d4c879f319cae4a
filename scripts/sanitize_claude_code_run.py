"""Copy one captured Claude Code run into tests/data/claude-code-runs/<name>/, sanitized.

    python scripts/sanitize_claude_code_run.py WORKDIR DEST

WORKDIR holds stdout.jsonl, config/ (CLAUDE_CONFIG_DIR; claude-config/ in a workdir the
harness kept with --keep-workdir) and repo/; the copy names it config/. The workdir's absolute
path becomes /RUN (and its project folder -RUN); the client's copies of its own requests
(``api-request-blob``, ``api-request-shape``) and its prompt/skill listings are dropped:
they are large, hold the client's own prompt text, and no parser reads them. Each wire
request's ``api-request`` record is kept with only the fields that tell a retry (its id,
``requestDigest``, ``base``, who sent it and when). Nothing else is changed.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

NEUTRAL = "/RUN"
DROP_TYPES = {"api-request-shape", "api-request-blob"}
#: What is kept of an ``api-request`` record: a retry repeats the failed request's digest.
REQUEST_FIELDS = ("type", "sessionId", "agentId", "id", "timestamp", "version", "querySource")
REQUEST_FIELDS += ("base", "requestDigest")
DROP_ATTACHMENTS = {
    "skill_listing",
    "prompt_snapshot",
    "agent_listing_delta",
    "deferred_tools_delta",
}


def _dropped(line: str) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return False
    if not isinstance(record, dict):
        return False
    attachment = record.get("attachment") or {}
    return record.get("type") in DROP_TYPES or (
        record.get("type") == "attachment" and attachment.get("type") in DROP_ATTACHMENTS
    )


def _slim(line: str) -> str:
    """An ``api-request`` record with only :data:`REQUEST_FIELDS`; other lines as they are."""
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if not isinstance(record, dict) or record.get("type") != "api-request":
        return line
    return json.dumps({k: record[k] for k in REQUEST_FIELDS if k in record})


def main(src: Path, dst: Path) -> None:
    root = str(src).rstrip("/")
    project = "-" + "".join(c if c.isalnum() else "-" for c in root.lstrip("/"))

    def fix(text: str) -> str:
        return text.replace(root, NEUTRAL).replace(project, "-RUN")

    def copy(a: Path, b: Path) -> None:
        b.parent.mkdir(parents=True, exist_ok=True)
        if a.suffix != ".jsonl":
            b.write_text(fix(a.read_text()))
            return
        kept = [fix(_slim(line)) for line in a.read_text().splitlines() if not _dropped(line)]
        b.write_text("\n".join(kept) + "\n")

    if dst.exists():
        shutil.rmtree(dst)
    copy(src / "stdout.jsonl", dst / "stdout.jsonl")
    config = src / "config" if (src / "config").is_dir() else src / "claude-config"
    for path in sorted((config / "projects").rglob("*")):
        if path.is_file() and "memory" not in path.parts:
            copy(path, dst / "config" / fix(str(path.relative_to(config))))
    artifact = src / "repo" / "combined-index.md"
    if artifact.exists():
        copy(artifact, dst / "repo" / "combined-index.md")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
