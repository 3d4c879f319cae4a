"""The hidden checks of an edit fixture: only the declared files of the final tree reach
them, and nothing else an agent plants (or a caller's environment) changes an outcome."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from editkit import agent_repo, make_edit_fixture

from harness.fixtures import Fixture
from harness.item import checks
from harness.item.checks import ChecksRun, declared_state, run_checks

#: Code that, once imported anywhere in the checks' process, makes every assertion pass: the
#: payload of each cheat below (the control test shows it works where it is allowed in).
PAYLOAD = (
    "import unittest\n"
    "unittest.TestCase.assertEqual = lambda *a, **k: None\n"
    "unittest.TestCase.assertIn = lambda *a, **k: None\n"
)


def outcomes(run: ChecksRun) -> dict[str, str]:
    return {s.shard: s.outcome for s in run.shards}


@pytest.fixture
def fixture(tmp_path: Path) -> Fixture:
    return make_edit_fixture(tmp_path / "fixtures", shards=3)


@pytest.fixture
def half_done(fixture: Fixture, tmp_path: Path) -> Path:
    """A final tree where s01 and s02 made their change and s00 did not."""
    return agent_repo(fixture, tmp_path / "final", solved=("s01.md", "s02.md"))


EXPECTED = {"s00.md": "failed", "s01.md": "passed", "s02.md": "passed"}


def test_honest_tree_passes_and_shipped_tree_fails(fixture: Fixture, tmp_path: Path) -> None:
    honest = agent_repo(fixture, tmp_path / "honest")
    run = run_checks(fixture.path, fixture.manifest, honest, tmp_path / "w1")
    assert run.error is None
    assert outcomes(run) == dict.fromkeys(outcomes(run), "passed") and len(run.shards) == 3
    assert [s.tests for s in run.shards] == [2, 2, 2]
    shipped = run_checks(fixture.path, fixture.manifest, None, tmp_path / "w2")
    assert set(outcomes(shipped).values()) == {"failed"}
    first = shipped.shards[0]
    assert first.failures == 2 and "0 != 37" in first.tail and "FAILED" in first.tail
    # The last line names the first failure (what a verdict quotes), not unittest's count.
    last = first.tail.strip().splitlines()[-1]
    assert last.startswith("TestS00.test_changelog: AssertionError: '- s00: rate 37' not found")


def test_the_payload_works_where_it_is_allowed_in(
    fixture: Fixture, half_done: Path, tmp_path: Path
) -> None:
    """The control: the cheats' payload in a declared file (the code under test) does pass
    s00, so their failing to below is the isolation, not a dud payload."""
    module = half_done / "pkg" / "s00.py"
    module.write_text(PAYLOAD + module.read_text(), encoding="utf-8")
    run = run_checks(fixture.path, fixture.manifest, half_done, tmp_path / "w")
    assert outcomes(run)["s00.md"] == "passed"


def _plant(repo: Path, monkeypatch: pytest.MonkeyPatch, cheat: str, tmp_path: Path) -> None:
    if cheat == "caller-env":
        elsewhere = tmp_path / "caller-site"
        elsewhere.mkdir()
        (elsewhere / "sitecustomize.py").write_text(PAYLOAD)
        (elsewhere / "startup.py").write_text(PAYLOAD)
        monkeypatch.setenv("PYTHONPATH", str(elsewhere))
        monkeypatch.setenv("PYTHONSTARTUP", str(elsewhere / "startup.py"))
        monkeypatch.setenv("PYTHONUSERBASE", str(elsewhere))
        return
    files = {
        "conftest": {"conftest.py": PAYLOAD, "pkg/conftest.py": PAYLOAD},
        "sitecustomize": {"sitecustomize.py": PAYLOAD},
        "usercustomize": {"usercustomize.py": PAYLOAD},
        "edited-checks": {
            "checks/test_s00.py": "import unittest\nclass T(unittest.TestCase):\n"
            "    def test_ok(self):\n        pass\n"
        },
        "fake-unittest": {"unittest.py": PAYLOAD + "from unittest import *\n"},
        "fake-pytest": {"pytest.py": PAYLOAD, "_pytest/__init__.py": PAYLOAD},
        "pyproject": {
            "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p conftest"\n',
            "setup.cfg": "[tool:pytest]\naddopts = -p conftest\n",
        },
        "pth-file": {"cheat.pth": "import cheat\n", "cheat.py": PAYLOAD},
        "pkg-init-sibling": {"pkg/s00_cheat.py": PAYLOAD},
    }[cheat]
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    "cheat",
    [
        pytest.param("conftest", id="conftest"),
        pytest.param("sitecustomize", id="sitecustomize"),
        pytest.param("usercustomize", id="usercustomize"),
        pytest.param("edited-checks", id="edited-checks"),
        pytest.param("fake-unittest", id="fake-unittest"),
        pytest.param("fake-pytest", id="fake-pytest"),
        pytest.param("pyproject", id="changed-pyproject"),
        pytest.param("pth-file", id="pth-file"),
        pytest.param("pkg-init-sibling", id="undeclared-module-in-package"),
        pytest.param("caller-env", id="pythonpath-pythonstartup"),
    ],
)
def test_nothing_planted_changes_an_outcome(
    cheat: str,
    fixture: Fixture,
    half_done: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _plant(half_done, monkeypatch, cheat, tmp_path)
    run = run_checks(fixture.path, fixture.manifest, half_done, tmp_path / "w")
    assert run.error is None
    assert outcomes(run) == EXPECTED


def _edit_check(fixture: Fixture, stem: str, body: str) -> None:
    """Replace shard ``stem``'s check with a test whose method body is ``body``."""
    text = "import os, socket, time, unittest\n\nclass T(unittest.TestCase):\n"
    text += "    def test_it(self):\n" + "".join(f"        {line}\n" for line in body.splitlines())
    (fixture.path / "checks" / f"test_{stem}.py").write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("body", "tail"),
    [
        pytest.param("time.sleep(60)", "cut at the shard's limit", id="hang"),
        pytest.param(
            "while True:\n    try:\n        time.sleep(60)\n    except BaseException:\n        pass",
            "the checks process was killed",
            id="hang-swallowing-the-alarm",
        ),
    ],
)
def test_a_hanging_check_is_cut_and_the_other_shards_still_run(
    body: str, tail: str, fixture: Fixture, tmp_path: Path
) -> None:
    _edit_check(fixture, "s01", body)
    honest = agent_repo(fixture, tmp_path / "honest")
    run = run_checks(fixture.path, fixture.manifest, honest, tmp_path / "w", shard_limit_s=0.5)
    assert outcomes(run) == {"s00.md": "passed", "s01.md": "timed out", "s02.md": "passed"}
    assert tail in run.shards[1].tail
    assert run.seconds < 0.5 + checks.ALARM_GRACE_S + 5


def test_the_item_limit_reports_the_shards_it_did_not_reach(
    fixture: Fixture, tmp_path: Path
) -> None:
    _edit_check(fixture, "s00", "time.sleep(60)")
    honest = agent_repo(fixture, tmp_path / "honest")
    run = run_checks(fixture.path, fixture.manifest, honest, tmp_path / "w", limit_s=1.0)
    assert outcomes(run) == dict.fromkeys(EXPECTED, "timed out")
    assert "not run: the item's checks limit of 1 s was spent" in run.shards[2].tail


def test_a_check_that_kills_its_process_errors_its_shard_only(
    fixture: Fixture, tmp_path: Path
) -> None:
    _edit_check(fixture, "s00", "os._exit(3)")
    honest = agent_repo(fixture, tmp_path / "honest")
    run = run_checks(fixture.path, fixture.manifest, honest, tmp_path / "w")
    assert outcomes(run) == {"s00.md": "error", "s01.md": "passed", "s02.md": "passed"}
    assert "exit code 3" in run.shards[0].tail


def test_a_deleted_declared_file_fails_its_shard_with_the_reason(
    fixture: Fixture, tmp_path: Path
) -> None:
    honest = agent_repo(fixture, tmp_path / "honest")
    (honest / "pkg" / "s00.py").unlink()
    run = run_checks(fixture.path, fixture.manifest, honest, tmp_path / "w")
    assert outcomes(run) == {"s00.md": "error", "s01.md": "passed", "s02.md": "passed"}
    assert "ImportError: cannot import name 's00'" in run.shards[0].tail


@pytest.mark.parametrize("link", ["file", "folder"])
def test_a_symlinked_declared_file_is_not_followed(
    link: str, fixture: Fixture, tmp_path: Path
) -> None:
    """The right content outside the repo, linked in: the copy has no such file."""
    honest = agent_repo(fixture, tmp_path / "honest")
    outside = tmp_path / "outside"
    (outside / "pkg").mkdir(parents=True)
    for name in ("__init__.py", "s00.py", "s01.py", "s02.py"):
        (outside / "pkg" / name).write_bytes((honest / "pkg" / name).read_bytes())
    if link == "file":
        (honest / "pkg" / "s00.py").unlink()
        (honest / "pkg" / "s00.py").symlink_to(outside / "pkg" / "s00.py")
        expected = {"s00.md": "error", "s01.md": "passed", "s02.md": "passed"}
    else:
        os.rename(honest / "pkg", tmp_path / "moved-away")
        (honest / "pkg").symlink_to(outside / "pkg")
        expected = dict.fromkeys(EXPECTED, "error")  # every module is behind the link
    assert declared_state(honest, "pkg/s00.py") == "not a regular file"
    run = run_checks(fixture.path, fixture.manifest, honest, tmp_path / "w")
    assert outcomes(run) == expected


def test_the_network_is_refused_and_the_environment_scrubbed(
    fixture: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWH_CALLER_SECRET", "leak")
    body = (
        'with self.assertRaisesRegex(PermissionError, "network refused"):\n'
        '    socket.create_connection(("192.0.2.1", 80), timeout=1)\n'
        'with self.assertRaisesRegex(PermissionError, "network refused"):\n'
        '    socket.getaddrinfo("example.com", 443)\n'
        "server = socket.create_server(('127.0.0.1', 0))\n"
        "socket.create_connection(server.getsockname(), timeout=1).close()\n"
        "server.close()\n"
        'self.assertNotIn("SWH_CALLER_SECRET", os.environ)\n'
        'self.assertEqual(os.environ["LANG"], "C.UTF-8")\n'
        'self.assertTrue(os.environ["HOME"].endswith("/home"))\n'
        'self.assertTrue(os.environ["TMPDIR"].endswith("/tmp"))\n'
        'self.assertEqual(os.environ["PATH"], "/usr/local/bin:/usr/bin:/bin")'
    )
    _edit_check(fixture, "s00", body)
    run = run_checks(fixture.path, fixture.manifest, None, tmp_path / "w")
    assert outcomes(run)["s00.md"] == "passed", run.shards[0].tail


def test_a_runner_that_cannot_start_is_the_run_s_error(
    fixture: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checks, "RUNNER", tmp_path / "no-such-runner.py")
    run = run_checks(fixture.path, fixture.manifest, None, tmp_path / "w")
    assert run.shards == ()
    assert run.error is not None and "could not start" in run.error
    assert "no-such-runner.py" in run.error
