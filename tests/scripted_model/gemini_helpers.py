"""Shared by the Gemini tests: request bodies as Gemini CLI 0.61.0 sends them, a parent
prompt for a fixture, and a run of the real client against a scripted server.

The parent prompt here follows the shared design (the lead's harness/agents/gemini/task.py
is the real one): each shard's subagent through ``invoke_agent``, its prompt's first line
``Worker: <name>``, the artifact written with ``write_file``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.agents.gemini.install import node_beside
from harness.fixtures.task_text import PROMPT_HEAD, agent_prompt, edit_template, solo_task
from scorers.types import Manifest

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "fixtures"
#: The real client, when the environment names it (the real-client tests skip otherwise).
#: The key the client sends (any non-empty one: the scripted server checks only that).
API_KEY = "scripted-no-key"
#: A real run of a few shards takes about 3 s; this bounds a hung one.
RUN_TIMEOUT_S = 120.0

SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}
WORKER_MD = """---
name: shard-worker
description: Works on one shard of a repository and reports one answer line.
kind: local
tools: [{tools}]
max_turns: 12
---
Do what your task asks, reading the files it names. End by calling complete_task with the
result line your task asks for.
"""
READ_TOOLS = "read_file, list_directory, glob, grep_search"
EDIT_TOOLS = READ_TOOLS + ", replace, write_file"

GEMINI_TASK = (
    PROMPT_HEAD
    + """\
1. Do not read the shards or answer the questions yourself. For each shard, call your
   invoke_agent tool once with agent_name "shard-worker" and a prompt that is one line
   naming its worker (for example "Worker: {first_worker}") followed by this task, with its
   own file and question filled in:
       Read the file shards/<file> and answer this question exactly, computing it from the
       whole file: <question> Do not start subagents. End with one line of the form
       ANSWER::<file>::<{value}>, given as the result of your complete_task call.
   You may call invoke_agent for all {count} shards in one answer.

2. Never start two subagents for the same shard and never use other worker names.

3. Answer only from the subagents' results. Then write the file {artifact} in the
   repository root with write_file, with exactly one bullet line per shard, using the
   {file_phrase} and the bare {value_answer}. For example, if the result for {first_file}
   said {example}:
       - {first_file}: {example}
   ({count} bullet lines, one for each shard, no other text on those lines.)

4. Only after {artifact} is written, end your turn.
"""
)


def manifest(fixture: str | Path) -> Manifest:
    return Manifest.from_dict(json.loads((FIXTURES / fixture / "fixture.json").read_text()))


def parent_prompt(fixture: str | Path, solo: bool = False) -> str:
    """The parent's prompt for a fixture (a name under fixtures/, or a directory)."""
    m = manifest(fixture)
    task_text = (FIXTURES / fixture / "task.txt").read_text()
    if solo:
        return solo_task(m, task_text)
    template = edit_template(GEMINI_TASK) if m.kind == "edit" else GEMINI_TASK
    return agent_prompt(template, m, task_text, edit_tools="replace")


# --- request bodies ----------------------------------------------------------------------

PARENT_TOOLS = ("read_file", "replace", "write_file", "invoke_agent", "glob")
CHILD_TOOLS = ("read_file", "replace", "write_file", "complete_task")
CWD = "/work/repo"


def session_context(cwd: str = CWD) -> dict[str, Any]:
    text = (
        "<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n"
        f"  - {cwd}\n- **Directory Structure:**\n</session_context>"
    )
    return {"role": "user", "parts": [{"text": text}]}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def model_calls(*calls: tuple[str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    parts += [{"functionCall": {"name": n, "args": a}} for n, a in calls]
    return {"role": "model", "parts": parts}


def results(*outputs: tuple[str, str]) -> dict[str, Any]:
    return {
        "role": "user",
        "parts": [{"functionResponse": {"name": n, "response": {"output": o}}} for n, o in outputs],
    }


def body(
    *contents: dict[str, Any], child: bool = False, cwd: str = CWD, tools: Any = None
) -> dict[str, Any]:
    names = tools if tools is not None else (CHILD_TOOLS if child else PARENT_TOOLS)
    system = "You are a worker.\n# Environment Context\n- **Workspace Directories:**\n"
    return {
        "contents": [*(() if child else (session_context(cwd),)), *contents],
        "systemInstruction": {"role": "user", "parts": [{"text": system + f"  - {cwd}\n"}]},
        "tools": [{"functionDeclarations": [{"name": n} for n in names]}],
        "generationConfig": {"temperature": 1},
    }


# --- the real client ---------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    rc: int
    stdout: str
    stderr: str
    repo: Path
    home: Path
    seconds: float

    def messages(self) -> list[dict[str, Any]]:
        """Every ``gemini`` message of every chat file (parent and subagents)."""
        return [r for recs in self.chats().values() for r in recs if r.get("type") == "gemini"]

    def chats(self) -> dict[str, list[dict[str, Any]]]:
        """Chat file (relative path) -> its records, the last of each id kept."""
        found: dict[str, list[dict[str, Any]]] = {}
        root = next((self.home / ".gemini" / "tmp").glob("*/chats"), None)
        for path in sorted(root.rglob("*.jsonl")) if root else ():
            by_id: dict[str, dict[str, Any]] = {}
            for line in path.read_text().splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and "id" in rec:
                    by_id[str(rec["id"])] = rec
            found[str(path.relative_to(root))] = list(by_id.values())
        return found


def run_client(
    binary: Path, base: Path, fixture: str | Path, model: str, port: int, solo: bool = False
) -> Run:
    """Run the real client ``binary`` in a fresh repo of ``fixture`` against
    ``127.0.0.1:port`` (on the node its install brought, if it brought one)."""
    m = manifest(fixture)
    repo, home = base / "repo", base / "home"
    shutil.copytree(
        FIXTURES / fixture,
        repo,
        ignore=shutil.ignore_patterns("fixture.json", "task.txt", "checks"),
    )
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(cmd, cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fixture"],
        cwd=repo,
        check=True,
    )
    agents = home / ".gemini" / "agents"
    agents.mkdir(parents=True)
    (home / "tmp").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS))
    tools = EDIT_TOOLS if m.kind == "edit" else READ_TOOLS
    (agents / "shard-worker.md").write_text(WORKER_MD.format(tools=tools))
    node = node_beside(binary)
    env = {
        "PATH": os.pathsep.join([*([str(node)] if node else []), "/usr/bin", "/bin"]),
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "TERM": "dumb",
        "LANG": "C.UTF-8",
        "GEMINI_API_KEY": API_KEY,
        "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}",
    }
    argv = [str(binary), "-p", parent_prompt(fixture, solo), "-o", "stream-json"]
    argv += ["--yolo", "--skip-trust", "-m", model]
    started = time.monotonic()
    done = subprocess.run(
        argv,
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        start_new_session=True,
    )
    return Run(done.returncode, done.stdout, done.stderr, repo, home, time.monotonic() - started)
