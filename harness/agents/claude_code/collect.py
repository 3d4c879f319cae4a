"""Find what one Claude Code run left on disk, bounded and without following symlinks.

Transcripts land in ``$CLAUDE_CONFIG_DIR/projects/<project>/``: ``<session>.jsonl`` for the
parent and ``<session>/subagents/agent-<agentId>.jsonl`` + ``.meta.json`` per subagent,
where ``<project>`` is the repo's absolute path with every non-alphanumeric character
replaced by ``-``. The parent session is the one stdout's ``system``/``init`` names. The
``tmp/.../tasks/*.output`` symlinks are never read (they point at the same transcripts).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.agents.claude_code.launch import ClaudeCodePaths
from harness.files import is_real_dir, is_regular, open_regular, opener
from scorers.claude_code import ClaudeCodeArtifacts, SubagentFile

#: Where a bundle keeps the client's config folder (its transcripts under ``projects/``).
CONFIG_DIR = "claude-config"


def bundle_paths(root: Path) -> ClaudeCodePaths:
    """The client's folders as a workdir or a bundle lays them out under ``root``."""
    return ClaudeCodePaths(
        workdir=root,
        repo=root / "repo",
        home=root / "home",
        config=root / CONFIG_DIR,
        tmp=root / "tmp",
        stdout=root / "stdout.jsonl",
        stderr=root / "stderr.txt",
    )


#: The client's subagent files; the id is hex in 2.1.x, kept loose but path-safe.
_SUBAGENT = re.compile(r"^agent-(?P<id>[A-Za-z0-9_-]{1,128})\.jsonl$")
_SESSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
#: One subagent per shard plus retries stays far below this; more is not an honest run,
#: and the collector must not walk an unbounded directory.
MAX_SUBAGENT_FILES = 10_000
#: How much of stdout is read to find the ``system``/``init`` event (its first lines).
MAX_HEADER_BYTES = 1024 * 1024
#: Project folders looked through when the computed name is absent (long paths are
#: shortened by the client).
MAX_PROJECT_DIRS = 1_000


@dataclass(frozen=True)
class Located:
    paths: ClaudeCodePaths
    session_id: str | None
    parent: Path | None
    subagents: tuple[tuple[str, Path | None, Path | None], ...]  # (agent id, jsonl, meta)
    artifact: Path | None
    notes: tuple[str, ...] = ()
    capped: bool = False


def project_dir_name(cwd: Path | str) -> str:
    """The client's project folder name for ``cwd``: non-alphanumerics become ``-``."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def stream_session_id(stdout: Path) -> str | None:
    """The session id of the first ``system``/``init`` event (read from the first lines)."""
    if not is_regular(stdout):
        return None
    with open_regular(stdout) as fh:
        for raw in fh.read(MAX_HEADER_BYTES).splitlines():
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("type") == "system":
                sid = event.get("session_id")
                if event.get("subtype") == "init" and isinstance(sid, str) and _SESSION.match(sid):
                    return sid
    return None


def _project_dir(paths: ClaudeCodePaths, session_id: str | None, notes: list[str]) -> Path | None:
    projects = paths.config / "projects"
    computed = projects / project_dir_name(paths.repo)
    if is_real_dir(computed):
        return computed
    if not is_real_dir(projects) or session_id is None:
        notes.append(f"no project folder {computed.name}")
        return None
    with os.scandir(projects) as entries:
        for n, entry in enumerate(entries):
            if n >= MAX_PROJECT_DIRS:
                break
            candidate = Path(entry.path)
            if is_real_dir(candidate) and is_regular(candidate / f"{session_id}.jsonl"):
                notes.append(f"project folder found by session: {candidate.name}")
                return candidate
    notes.append(f"no project folder holds {session_id}.jsonl")
    return None


def locate(paths: ClaudeCodePaths, artifact_name: str) -> Located:
    """The parent transcript, subagent files and artifact of one run, as found."""
    notes: list[str] = []
    session_id = stream_session_id(paths.stdout)
    project = _project_dir(paths, session_id, notes)
    if session_id is None and project is not None:
        sessions = [p for p in project.glob("*.jsonl") if is_regular(p)]
        if len(sessions) == 1:
            session_id = sessions[0].stem
            notes.append("session id from the only transcript (stdout named none)")
    parent = project / f"{session_id}.jsonl" if project and session_id else None
    if parent is not None and not is_regular(parent):
        notes.append(f"parent transcript {parent.name} missing")
        parent = None
    subagents: list[tuple[str, Path | None, Path | None]] = []
    capped = False
    folder = project / session_id / "subagents" if project and session_id else None
    if folder is not None and is_real_dir(folder) and is_real_dir(folder.parent):
        with os.scandir(folder) as entries:
            for entry in entries:
                match = _SUBAGENT.match(entry.name)
                if match is None:
                    continue
                if len(subagents) >= MAX_SUBAGENT_FILES:
                    capped = True
                    break
                transcript = Path(entry.path)
                meta = transcript.with_name(f"agent-{match['id']}.meta.json")
                subagents.append(
                    (
                        match["id"],
                        transcript if is_regular(transcript) else None,
                        meta if is_regular(meta) else None,
                    )
                )
    artifact = paths.repo / artifact_name
    return Located(
        paths=paths,
        session_id=session_id,
        parent=parent,
        subagents=tuple(sorted(subagents, key=lambda s: s[0])),
        artifact=artifact if is_regular(artifact) else None,
        notes=tuple(notes),
        capped=capped,
    )


def scorer_inputs(located: Located) -> ClaudeCodeArtifacts:
    """Openers over the located files, for the pure scorer."""
    sid = located.session_id
    return ClaudeCodeArtifacts(
        parent_session_id=sid,
        parent_transcript=opener(located.parent),
        stdout=opener(located.paths.stdout),
        artifact=opener(located.artifact),
        subagents=tuple(
            SubagentFile(sid or "", agent_id, opener(transcript), opener(meta))
            for agent_id, transcript, meta in located.subagents
        ),
    )
