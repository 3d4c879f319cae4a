"""Fresh per-item workdirs: the fixture's git repo and the agent's private HOME and TMPDIR.

The generic part of a workdir (the adapter adds its own dirs beside these)::

    <workdir>/repo/   fixture files minus fixture.json and task.txt, one commit (the cwd)
    <workdir>/home/   the agent's HOME (only a minimal git identity): nothing of a run
                      lands in the user's HOME
    <workdir>/tmp/    the agent's TMPDIR
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from harness.agents.base import ItemPaths
from harness.agents.env import GIT_LEAK_VARS, ITEM_TOKEN_VAR, STRIPPED_PREFIXES, STRIPPED_VARS
from harness.errors import AgentLaunchError, FixtureError
from harness.item.leftovers import stamp_dir
from harness.item.processes import run_quick

#: Files of a fixture directory that are the answer key or the prompt: never in the repo.
KEY_FILES = frozenset({"fixture.json", "task.txt"})


def _is_agent_task(name: str) -> bool:
    """``task.<agent>.txt``: a per-agent prompt, as much a key file as task.txt."""
    return name.startswith("task.") and name.endswith(".txt")


#: Unix socket paths are limited to 108 bytes including the NUL; keep a margin.
MAX_SOCKET_PATH = 100

WORKDIR_PREFIX = "swh-"


def scrubbed_git_env(base: Mapping[str, str]) -> dict[str, str]:
    """A hermetic environment for our own git commands (no caller repo, no user config)."""
    env = {k: v for k, v in base.items() if k not in GIT_LEAK_VARS and not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C",
    )
    return env


def base_env(
    caller: Mapping[str, str], paths: ItemPaths, token: str
) -> tuple[dict[str, str], list[str]]:
    """The caller's env minus what would leak into any agent, plus the private HOME/TMPDIR
    and the item's process token. Returns the env and the names set."""
    env = {
        k: v
        for k, v in caller.items()
        if k not in STRIPPED_VARS and not k.startswith(STRIPPED_PREFIXES)
    }
    added = {ITEM_TOKEN_VAR: token, "HOME": str(paths.home), "TMPDIR": str(paths.tmp)}
    env.update(added)
    return env, sorted(added)


def make_workdir(longest_socket: str | None = None, base_dir: str | None = None) -> Path:
    """Create an empty, private workdir where ``longest_socket`` (the longest socket path
    the agent binds below it, see ``AgentAdapter.longest_socket``) fits the Unix limit.

    Under a long ``$TMPDIR`` the workdir goes to ``/tmp`` instead (removed after the item).
    """
    root = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX, dir=base_dir)).resolve()
    too_long = longest_socket and len(str(root / longest_socket)) > MAX_SOCKET_PATH
    if too_long and base_dir is None:
        shutil.rmtree(root, ignore_errors=True)
        root = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX, dir="/tmp")).resolve()
    return root


class RepoTemplates:
    """Per-run cache of each fixture's committed repo, copied into every item's workdir.

    Building a repo costs three git processes; copying a finished one (``.git`` included)
    costs a few file copies, which matters when eight items start at once on two cores.
    ``close()`` removes the cache; use it as a context manager.
    """

    def __init__(self) -> None:
        self._root: Path | None = None
        self._built: dict[Path, Path] = {}
        self._lock = threading.Lock()

    def repo_for(self, fixture_dir: Path) -> Path:
        key = fixture_dir.resolve()
        with self._lock:
            if key not in self._built:
                if self._root is None:
                    self._root = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX + "templates-"))
                    stamp_dir(self._root)  # removable by the next run if this one is killed
                repo = self._root / f"t{len(self._built)}"
                _copy_fixture_tree(key, repo)
                _git_commit(repo)
                self._built[key] = repo
            return self._built[key]

    def adopt(self, fixture_dir: Path, repo: Path) -> None:
        """Use ``repo``, a committed template built elsewhere (a Ray node gets the head's),
        for ``fixture_dir``; it is the caller's to remove, not ``close()``'s."""
        with self._lock:
            self._built[fixture_dir.resolve()] = repo

    def close(self) -> None:
        with self._lock:
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
            self._built.clear()

    def __enter__(self) -> RepoTemplates:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def build_item_paths(
    root: Path, fixture_dir: Path, templates: RepoTemplates | None = None
) -> ItemPaths:
    """Populate ``root``: the repo from the fixture (answer key excluded), HOME and TMPDIR."""
    repo = root / "repo"
    if templates is not None:
        shutil.copytree(templates.repo_for(fixture_dir), repo, symlinks=True)
    else:
        _copy_fixture_tree(fixture_dir, repo)
        _git_commit(repo)
    paths = ItemPaths(root=root, repo=repo, home=root / "home", tmp=root / "tmp")
    make_private_home(paths.home)
    paths.tmp.mkdir(mode=0o700)
    return paths


#: The identity the agent's own git commits get in its private HOME (it has no other).
AGENT_GIT_CONFIG = "[user]\n\tname = swarm-harness agent\n\temail = agent@swarm-harness.invalid\n"


def make_private_home(home: Path) -> None:
    """A fresh HOME holding only a minimal git identity, so the agent can still commit."""
    home.mkdir(mode=0o700)
    (home / ".gitconfig").write_text(AGENT_GIT_CONFIG, encoding="utf-8")


def _copy_fixture_tree(fixture_dir: Path, repo: Path) -> None:
    """Copy every regular file of the fixture except the key files; refuse symlinks."""
    repo.mkdir()
    for dirpath, dirnames, filenames in os.walk(fixture_dir):
        here = Path(dirpath)
        rel = here.relative_to(fixture_dir)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for d in list(dirnames):
            if (here / d).is_symlink():
                raise FixtureError(str(here / d), "symlinked directories are not allowed")
            (repo / rel / d).mkdir()
        for name in sorted(filenames):
            src = here / name
            if rel == Path(".") and (name in KEY_FILES or _is_agent_task(name)):
                continue
            if name.startswith("."):
                continue
            mode = src.lstat().st_mode
            if not stat.S_ISREG(mode):
                raise FixtureError(str(src), "only regular files may be copied into the repo")
            shutil.copyfile(src, repo / rel / name, follow_symlinks=False)


def _git_commit(repo: Path) -> None:
    env = scrubbed_git_env(os.environ)
    ident = ["-c", "user.name=swarm-harness", "-c", "user.email=harness@localhost"]
    quiet = ["-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"]
    try:
        # --template= : no sample hooks or other template files, so a repo is a few files.
        run_quick(["git", "init", "-q", "--template=", "-b", "main", str(repo)], env=env, cwd=repo)
        run_quick(["git", "add", "-A"], env=env, cwd=repo)
        run_quick(["git", *ident, *quiet, "commit", "-q", "-m", "fixture"], env=env, cwd=repo)
    except FileNotFoundError as exc:
        raise AgentLaunchError("git is not installed: it is needed to build the repo") from exc
    except Exception as exc:  # CalledProcessError, TimeoutExpired
        detail = getattr(exc, "stderr", b"") or b""
        raise AgentLaunchError(
            f"git failed building the repo: {detail.decode(errors='replace')}"
        ) from exc


def copy_shipped_tree(fixture_dir: Path, dest: Path) -> None:
    """The fixture's repo files as shipped, exactly the ones an item's repo starts from (no
    git), into ``dest`` (created): the hidden checks' fresh copy and the final tree's
    comparison start from this, never from a second list of what the repo holds."""
    _copy_fixture_tree(fixture_dir, dest)
