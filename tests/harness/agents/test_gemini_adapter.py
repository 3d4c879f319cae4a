"""The Gemini CLI adapter without the client: the model it takes, its environment, the
private home it writes (settings, the worker agent), argv, the prompt, collection and the
install's layout."""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path

import pytest

from harness.agents import REGISTRY, parse_agent
from harness.agents.base import ItemPaths, ItemSpec
from harness.agents.env import ITEM_TOKEN_VAR
from harness.agents.gemini import MODEL_API, GeminiAdapter
from harness.agents.gemini.collect import Bundle, copy_run, find_records, live_chats
from harness.agents.gemini.install import client_path, node_beside
from harness.agents.gemini.launch import WORKER_AGENT, GeminiPaths
from harness.agents.gemini.task import gemini_task
from harness.errors import UsageError
from harness.fixtures import load_fixture

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"
EDIT = REPO / "fixtures" / "edit-smoke"


def _prepare(tmp_path: Path, caller: dict[str, str], fixture_dir: Path = TINY):  # type: ignore[no-untyped-def]
    root = tmp_path / "w"
    paths = ItemPaths(root, root / "repo", root / "home", root / "tmp")
    for d in (paths.repo, paths.home, paths.tmp):
        d.mkdir(parents=True)
    fixture = load_fixture(fixture_dir)
    adapter = parse_agent("gemini", "/nonexistent/gemini")
    item = ItemSpec("tiny:m:1", "google/gemini-x", adapter.task_text(fixture), fixture.manifest)
    base = {**caller, "HOME": str(paths.home), "TMPDIR": str(paths.tmp), ITEM_TOKEN_VAR: "t"}
    return adapter, paths, adapter.prepare(paths, item, base, "tok-1")


def test_registered_with_its_api() -> None:
    assert "gemini" in REGISTRY and REGISTRY["gemini"].selftest
    assert REGISTRY["gemini"].install_var == "GEMINI_BIN"
    adapter = parse_agent("gemini", "x")
    assert isinstance(adapter, GeminiAdapter) and adapter.model_api == MODEL_API
    assert adapter.pinned_version == "0.61.0" and adapter.binary_env == "GEMINI_BIN"


def test_models_are_google_ones_given_bare_to_the_client() -> None:
    adapter = parse_agent("gemini", "x")
    adapter.check_model("google/gemini-2.5-flash")
    assert adapter.client_model("google/gemini-2.5-flash") == "gemini-2.5-flash"
    with pytest.raises(UsageError, match="takes no options"):
        parse_agent("gemini:fast", "x")


def test_env_is_built_from_nothing_but_its_own(tmp_path: Path) -> None:
    caller = {
        "PATH": "/usr/bin:/bin:/usr/bin",
        "GEMINI_API_KEY": "caller-key-123",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9/",
        "GEMINI_CLI_HOME": "/caller/gemini-home",
        "GOOGLE_API_KEY": "other-key",
        "GOOGLE_CLOUD_PROJECT": "caller-project",
        "GEMINI_MODEL": "gemini-pro",
    }
    _, paths, launch = _prepare(tmp_path, caller)
    assert launch.env == {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "HOME": str(paths.home),
        "TMPDIR": str(paths.tmp),
        "GEMINI_API_KEY": "caller-key-123",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9",
        ITEM_TOKEN_VAR: "tok-1",
    }
    assert launch.env_set == sorted(launch.env)
    assert launch.record["gemini_endpoint"] == "http://127.0.0.1:9"


def test_the_public_endpoint_by_default_and_no_key_means_none(tmp_path: Path) -> None:
    _, _, launch = _prepare(tmp_path, {"PATH": "/bin"})
    assert launch.env["GOOGLE_GEMINI_BASE_URL"] == "https://generativelanguage.googleapis.com"
    assert "GEMINI_API_KEY" not in launch.env


def test_argv_is_headless_trusted_pinned_and_names_the_session(tmp_path: Path) -> None:
    _, _, launch = _prepare(tmp_path, {"PATH": "/bin"})
    argv = launch.argv
    pairs = dict(zip(argv[::2], argv[1::2], strict=False))
    assert "--yolo" in argv and "--skip-trust" in argv
    assert argv[argv.index("--output-format") + 1] == "stream-json"
    assert argv[argv.index("--model") + 1] == "gemini-x"
    session = argv[argv.index("--session-id") + 1]
    assert uuid.UUID(session) and launch.record["gemini_session_id"] == session
    assert pairs["--prompt"].startswith("You coordinate a team of subagents")


def test_the_private_home_holds_the_settings_and_one_neutral_worker(tmp_path: Path) -> None:
    _, paths, _ = _prepare(tmp_path, {"PATH": "/bin"})
    gemini = paths.home / ".gemini"
    settings = json.loads((gemini / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["telemetry"]["enabled"] is False
    assert settings["general"]["enableAutoUpdate"] is False
    agents = sorted(p.name for p in (gemini / "agents").iterdir())
    assert agents == [f"{WORKER_AGENT}.md"]
    worker = (gemini / "agents" / agents[0]).read_text()
    head, body = worker.split("---\n")[1:3]
    assert f"name: {WORKER_AGENT}\n" in head and "kind: local\n" in head
    assert "tools: [read_file, list_directory, glob, grep_search]\n" in head
    assert "complete_task" in body
    manifest = load_fixture(TINY).manifest
    for shard in manifest.shards:  # no hint at any shard or answer
        assert shard.file not in worker and shard.worker not in worker
        assert not re.search(rf"\b{re.escape(str(shard.expected))}\b", body)


def test_an_edit_fixtures_worker_gets_the_edit_tools(tmp_path: Path) -> None:
    _, paths, _ = _prepare(tmp_path, {"PATH": "/bin"}, EDIT)
    worker = (paths.home / ".gemini" / "agents" / f"{WORKER_AGENT}.md").read_text()
    assert "tools: [read_file, list_directory, glob, grep_search, replace, write_file]" in worker


def test_the_prompt_names_every_shard_the_worker_agent_and_the_worker_line() -> None:
    fixture = load_fixture(TINY)
    text = gemini_task(fixture)
    assert f'agent_name "{WORKER_AGENT}"' in text
    assert f'"Worker: {fixture.manifest.shards[0].worker}"' in text
    assert "complete_task" in text and "write_file" in text
    for shard in fixture.manifest.shards:
        assert f"shards/{shard.file}" in text and f"(worker: {shard.worker})" in text
    edit = gemini_task(load_fixture(EDIT))
    assert "replace and write_file" in edit and "make exactly the change" in edit


def _record(path: Path, lines: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_collection_copies_the_records_at_their_paths_and_nothing_else(tmp_path: Path) -> None:
    live = GeminiPaths(tmp_path / "w", tmp_path / "w" / "repo")
    chats = live.projects / "repo" / "chats"
    sid = str(uuid.uuid4())
    parent = chats / f"session-2026-12-07T21-29-{sid[:8]}.jsonl"
    child = chats / sid / f"{uuid.uuid4()}.jsonl"
    _record(parent, [{"sessionId": sid, "kind": "main"}])
    _record(child, [{"sessionId": "c", "kind": "subagent"}])
    _record(chats / "notes.txt", [{}])  # not a record
    outside = tmp_path / "outside.jsonl"
    _record(outside, [{"secret": "x"}])
    (chats / "session-2026-12-07T21-30-deadbeef.jsonl").symlink_to(outside)
    (chats / "linked").symlink_to(outside.parent)
    live.repo.mkdir(parents=True)
    (live.repo / "ANSWERS.md").write_text("- a: 1\n")
    stdout = tmp_path / "out.jsonl"
    stdout.write_text('{"type":"init","key":"caller-key-123"}\n')
    out = Bundle(tmp_path / "item")
    copied = copy_run(live, out, "ANSWERS.md", stdout, None, [b"caller-key-123"])
    names = sorted(copied.files)
    rel_child = f"gemini-home/chats/{sid}/{child.name}"
    assert names == sorted(
        ["repo/ANSWERS.md", f"gemini-home/chats/{parent.name}", rel_child, "stdout.jsonl"]
    )
    assert (out.root / rel_child).read_text() == child.read_text()
    assert "caller-key-123" not in out.stdout.read_text()
    assert copied.notes == () and not copied.capped
    found = find_records([out.chats])
    assert sorted(str(rel) for _, rel in found.records) == sorted(
        [parent.name, f"{sid}/{child.name}"]
    )


def test_a_run_that_left_no_record_says_so(tmp_path: Path) -> None:
    live = GeminiPaths(tmp_path / "w", tmp_path / "w" / "repo")
    assert live_chats(live) == []
    copied = copy_run(live, Bundle(tmp_path / "item"), "ANSWERS.md", None, None, [])
    assert copied.files == () and copied.notes == ("no chat record under HOME/.gemini/tmp/*/chats",)


def test_the_install_layout_and_the_node_it_brings(tmp_path: Path) -> None:
    cli = client_path(tmp_path)
    assert cli == tmp_path / "node_modules" / ".bin" / "gemini"
    cli.parent.mkdir(parents=True)
    cli.write_text("#!/usr/bin/env node\n")
    assert node_beside(cli) is None
    node = tmp_path / "node" / "bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_text("")
    os.chmod(node, 0o755)
    assert node_beside(cli) == node.parent
