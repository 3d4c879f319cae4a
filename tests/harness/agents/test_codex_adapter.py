"""The Codex adapter without the client: options, environment, config file, prompt,
collection, and the install's layout."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from harness.agents import REGISTRY, parse_agent
from harness.agents.base import ItemPaths, ItemSpec
from harness.agents.codex import LOG_FILTER, CodexAdapter
from harness.agents.codex.collect import Bundle, copy_run, find_rollouts, scorer_inputs
from harness.agents.codex.install import client_path
from harness.agents.codex.launch import STATE_DIRS
from harness.agents.codex.task import codex_task, task_name
from harness.agents.env import ITEM_TOKEN_VAR
from harness.errors import UsageError
from harness.fixtures import load_fixture
from harness.selftest import scripts_for
from scorers.codex import codex_evidence
from scripted_model.codex_scripts import CODEX_SCRIPTS
from scripted_model.conversation import SHARD_LINE_RE
from scripted_model.scripts import ARTIFACT_RE

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"
CAPTURE = REPO / "tests" / "data" / "codex-runs" / "v1-honest"


def _prepare(
    tmp_path: Path, caller: dict[str, str], spec: str = "codex", model: str = "openai/gpt-x"
):  # type: ignore[no-untyped-def]
    root = tmp_path / "w"
    paths = ItemPaths(root, root / "repo", root / "home", root / "tmp")
    for d in (paths.repo, paths.home, paths.tmp):
        d.mkdir(parents=True)
    fixture = load_fixture(TINY)
    adapter = parse_agent(spec, "/nonexistent/codex")
    item = ItemSpec("tiny:m:1", model, adapter.task_text(fixture), fixture.manifest)
    base = {**caller, "HOME": str(paths.home), "TMPDIR": str(paths.tmp), ITEM_TOKEN_VAR: "t"}
    return adapter, paths, adapter.prepare(paths, item, base, "tok-1")


def test_registered_with_its_scripts() -> None:
    assert "codex" in REGISTRY and REGISTRY["codex"].selftest
    adapter = parse_agent("codex", "x")
    assert scripts_for(adapter) == CODEX_SCRIPTS
    assert adapter.pinned_version == "0.171.0" and adapter.binary_env == "CODEX_BIN"


@pytest.mark.parametrize(
    ("spec", "v2", "sandbox"),
    [
        ("codex", False, "workspace-write"),
        ("codex:v2", True, "workspace-write"),
        ("codex:sandbox=danger-full-access,v2", True, "danger-full-access"),
    ],
)
def test_options(spec: str, v2: bool, sandbox: str) -> None:
    adapter = parse_agent(spec, "x")
    assert isinstance(adapter, CodexAdapter)
    assert (adapter.multi_agent_v2, adapter.sandbox) == (v2, sandbox)


@pytest.mark.parametrize("spec", ["codex:v3", "codex:sandbox=none", "codex:fast"])
def test_unknown_options_are_refused_naming_the_known_ones(spec: str) -> None:
    with pytest.raises(UsageError, match="known: v2, sandbox=workspace-write"):
        parse_agent(spec, "x")


def test_env_is_built_from_nothing_but_its_own(tmp_path: Path) -> None:
    caller = {
        "PATH": "/usr/bin:/bin",
        "OPENAI_API_KEY": "sk-caller-key-123",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1/",
        "CODEX_HOME": "/caller/.codex",
        "CODEX_API_KEY": "sk-other",
        "RUST_LOG": "trace",
        "GIT_DIR": "/caller/.git",
        "HTTPS_PROXY": "http://proxy",
    }
    _, paths, launch = _prepare(tmp_path, caller)
    env = launch.env
    assert set(env) == {"PATH", "LANG", "RUST_LOG", "OPENAI_API_KEY", ITEM_TOKEN_VAR, *STATE_DIRS}
    assert env["OPENAI_API_KEY"] == "sk-caller-key-123" and env["RUST_LOG"] == LOG_FILTER
    assert env[ITEM_TOKEN_VAR] == "tok-1" and env["PATH"] == "/usr/bin:/bin"
    for var, name in STATE_DIRS.items():
        assert env[var] == str(paths.root / name) and (paths.root / name).is_dir()
    # The key is read from the environment by name: never written to a file.
    config = paths.root / "codex-home" / "config.toml"
    assert "sk-caller-key-123" not in config.read_text()


def test_config_names_one_responses_provider_at_the_callers_endpoint(tmp_path: Path) -> None:
    _, paths, launch = _prepare(
        tmp_path, {"PATH": "/bin", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1/"}, "codex:v2"
    )
    doc = tomllib.loads((paths.root / "codex-home" / "config.toml").read_text())
    provider = doc["model_providers"][doc["model_provider"]]
    assert provider == {
        "name": provider["name"],
        "base_url": "http://127.0.0.1:9/v1",
        "env_key": "OPENAI_API_KEY",
        "wire_api": "responses",
    }
    assert doc["model"] == "gpt-x" and doc["approval_policy"] == "never"
    assert doc["check_for_update_on_startup"] is False and doc["analytics"] == {"enabled": False}
    assert doc["features"] == {
        "plugins": False,
        "unbounded_connection_retries": False,
        "multi_agent_v2": True,
    }
    assert launch.record["multi_agent"] == "v2"


def test_without_an_endpoint_the_public_api_and_no_key_is_set(tmp_path: Path) -> None:
    adapter, paths, launch = _prepare(tmp_path, {"PATH": "/bin"})
    doc = tomllib.loads((paths.root / "codex-home" / "config.toml").read_text())
    assert doc["model_providers"][doc["model_provider"]]["base_url"] == "https://api.openai.com/v1"
    assert "OPENAI_API_KEY" not in launch.env
    checks = {name: (ok, detail) for name, ok, detail in adapter.preflight({})}
    assert checks["credentials"] == (False, "no OPENAI_API_KEY")


def test_argv_is_headless_with_the_prompt_last(tmp_path: Path) -> None:
    _, _, launch = _prepare(tmp_path, {"PATH": "/bin"}, "codex:sandbox=read-only")
    assert launch.argv[:5] == ["exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only"]
    assert "spawn_agent" in launch.argv[-1] and launch.stdin is None  # stdin: /dev/null


def test_the_prompt_names_every_worker_and_what_the_scripts_read() -> None:
    fixture = load_fixture(TINY)
    text = codex_task(fixture)
    assert [m["worker"] for m in SHARD_LINE_RE.finditer(text)] == [
        s.worker for s in fixture.manifest.shards
    ]
    match = ARTIFACT_RE.search(text)
    assert match is not None and match["name"] == fixture.manifest.artifact
    assert "Worker: worker-shard-a" in text and '"worker_shard_a"' in text
    assert task_name("worker-Events-01") == "worker_events_01"


def test_collect_copies_the_rollouts_and_the_bundle_scores_as_the_live_run(tmp_path: Path) -> None:
    live = tmp_path / "live"
    for rel in find_rollouts(CAPTURE / "codex-home" / "sessions").rollouts:
        dst = live / "codex-home" / "sessions" / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes((CAPTURE / "codex-home" / "sessions" / rel).read_bytes())
    (live / "repo").mkdir()
    (live / "repo" / "combined-index.md").write_bytes(
        (CAPTURE / "repo" / "combined-index.md").read_bytes()
    )
    (live / "codex-home" / "sessions" / "2026" / "stray.txt").write_text("not a rollout")
    out = tmp_path / "item"
    copied = copy_run(
        Bundle(live), Bundle(out), "combined-index.md",
        CAPTURE / "stdout.jsonl", CAPTURE / "stderr.txt", [b"honest"],
    )  # fmt: skip
    assert len([f for f in copied.files if "rollout-" in f]) == 4 and not copied.capped
    assert not any("stray" in f for f in copied.files)
    workers = tuple(s.worker for s in load_fixture(TINY).manifest.shards)
    evidence = codex_evidence(scorer_inputs(Bundle(out), "combined-index.md", workers))
    assert len(evidence.depth1_spawns()) == 3 and len(evidence.child_sessions) == 3
    # Credential values are redacted in every copied file.
    stdout = (out / "stdout.jsonl").read_text()
    assert "honest" not in stdout and "[REDACTED]" in stdout


def test_the_install_runs_the_native_executable_of_the_platform_package() -> None:
    path = client_path(Path("/cache/codex"))
    assert path.parts[:5] == ("/", "cache", "codex", "node_modules", "@openai")
    assert path.name == "codex" and "vendor" in path.parts and path.parent.name == "bin"


def test_the_scripted_endpoint_is_the_responses_root_with_a_catalog_of_the_scripts(
    tmp_path: Path,
) -> None:
    adapter = parse_agent("codex", "x")
    env = adapter.scripted_endpoint("http://127.0.0.1:5/v1", {}, tmp_path)
    catalog = tmp_path / "codex-model-catalog.json"
    assert env == {
        "OPENAI_BASE_URL": "http://127.0.0.1:5/v1",
        "OPENAI_API_KEY": "scripted-no-key",
        "CODEX_MODEL_CATALOG": str(catalog),
    }
    models = json.loads(catalog.read_text())["models"]
    assert sorted(m["slug"] for m in models) == sorted(CODEX_SCRIPTS)
    # Codex's edit tool, and the multi-agent tools offered directly (not behind tool_search)
    assert {(m["apply_patch_tool_type"], m["supports_search_tool"]) for m in models} == {
        ("freeform", False)
    }


def test_a_named_catalog_is_copied_into_the_item_and_named_by_its_config(tmp_path: Path) -> None:
    source = tmp_path / "catalog.json"
    source.write_text('{"models": []}')
    _, paths, launch = _prepare(tmp_path, {"PATH": "/bin", "CODEX_MODEL_CATALOG": str(source)})
    doc = tomllib.loads((paths.root / "codex-home" / "config.toml").read_text())
    copy = paths.root / "codex-home" / "model-catalog.json"
    assert doc["model_catalog_json"] == str(copy) and copy.read_text() == source.read_text()
    assert "CODEX_MODEL_CATALOG" not in launch.env
    _, paths, _ = _prepare(tmp_path / "none", {"PATH": "/bin"})
    doc = tomllib.loads((paths.root / "codex-home" / "config.toml").read_text())
    assert "model_catalog_json" not in doc
