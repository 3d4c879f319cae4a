"""The seam between the harness and an agent under test.

The runner, scheduler, workspace, reports and statistics know no agent by name: they hold
an :class:`AgentAdapter` and call it at fixed points of an item's life::

    prepare(item) -> Launch       make the agent's own dirs in the workdir; argv and env
    (the harness runs argv in the repo, with a timeout, and owns every process it starts)
    stop(launch, early)           end what the agent left running (e.g. a daemon)
    collect(launch, dir)          copy its artifacts into the item's bundle (bounded, redacted)
    evidence(dir, meta, manifest) parse the bundle into agent-neutral evidence, which the
                                  rubric judges (``assess``: the score and the provider's
                                  faults) and ``show`` tells

Adding an agent is one package under ``harness/agents/`` with a subclass, plus one line in
``harness/agents/__init__.py``'s registry. Its parsers live in ``scorers/<agent>/`` and
produce :class:`scorers.records.RunEvidence`; the rules never change.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from harness.agents.env import resolve_binary
from harness.errors import HarnessError, UsageError
from harness.files import open_regular
from harness.model.item import SOLO_SUFFIX
from scorers import Assessment, ItemScore, RunEvidence, assess_evidence
from scorers.tree import EDITS_NAME, parse_tree
from scorers.types import Manifest
from scorers.verdict import Arm

if TYPE_CHECKING:
    from harness.fixtures import Fixture
    from harness.model.trajectory import Swarm


@dataclass(frozen=True)
class ItemPaths:
    """The generic part of one item's private workdir (created by the harness).

    ``repo`` is the agent's working directory (the fixture, answer key excluded); ``home``
    and ``tmp`` are its private ``HOME`` and ``TMPDIR``, so nothing it writes lands outside
    the item.
    """

    root: Path
    repo: Path
    home: Path
    tmp: Path


@dataclass(frozen=True)
class ItemBundle:
    """What every agent's bundle (an item dir, or a live workdir laid out alike) holds
    where: the agent's stdout and stderr, and the repo's files collected from it (the
    artifact). An agent's collector extends it with the paths of its own records."""

    root: Path

    @property
    def stdout(self) -> Path:
        return self.root / "stdout.jsonl"

    @property
    def stderr(self) -> Path:
        return self.root / "stderr.txt"

    def artifact(self, name: str) -> Path:
        return self.root / "repo" / name


@dataclass(frozen=True)
class ItemSpec:
    """What an adapter needs to know about the item it launches."""

    key: str
    model: str
    task_text: str
    manifest: Manifest
    #: Where the user keeps the agent's credentials/model definitions (adapter-specific).
    credentials_source: Path | None = None
    #: Which attempt of the item this is (1, then more after a provider error).
    attempt: int = 1


@dataclass(frozen=True)
class Launch:
    """How to start the agent for one item, and what the harness must remember of it.

    ``argv`` follows the command prefix (:meth:`AgentAdapter.resolve_command`). ``env`` is the
    whole environment; ``env_set`` names the variables the adapter set (recorded in
    item.json; values never are). ``credential_files`` are JSON files whose credential-like
    values must never land in a file the harness writes.
    ``state`` is adapter-private (paths it created), handed back to ``stop``/``collect``.
    ``record`` is recorded in item.json as is. ``stdin`` is a file the agent reads as its
    standard input (None: /dev/null), for a client that takes its prompt there.
    """

    argv: list[str]
    env: dict[str, str]
    env_set: list[str]
    credential_files: tuple[Path, ...] = ()
    state: Mapping[str, Any] = field(default_factory=dict)
    record: Mapping[str, Any] = field(default_factory=dict)
    stdin: Path | None = None


@dataclass(frozen=True)
class StopOutcome:
    """What ending the agent's leftovers did; ``clean`` means nothing is expected to remain."""

    status: str
    detail: str = ""
    clean: bool = False


@dataclass(frozen=True)
class Collected:
    """What collection found and copied, recorded in item.json under ``collection``.

    ``capped`` names the bounds that were hit: the item is then an error, never a silent
    unresolved. ``record`` is anything else re-scoring needs (recorded in item.json).
    """

    notes: tuple[str, ...] = ()
    capped: tuple[str, ...] = ()
    truncated: tuple[str, ...] = ()
    record: Mapping[str, Any] = field(default_factory=dict)


#: A model selector: ``PROVIDER/MODEL``. No whitespace, and no ``:``, which separates the
#: parts of an item key (``fixture:model:trial``); neither part empty or starting with ``-``
#: (it would read as an option).
MODEL_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9_.][^\s:]*")


def pinned_install_hint(name: str, version: str, binary: str) -> str:
    """The install hint of an agent whose pinned client ``agents install NAME`` fetches."""
    return (
        f"install the pinned client ({version}) with `python -m harness agents install "
        f"{name}` and pass the path it prints as --agent-bin (or put {binary} on PATH)"
    )


def check_model_syntax(model: str) -> None:
    """Refuse a ``--model`` that is not ``PROVIDER/MODEL`` (UsageError naming it)."""
    if not MODEL_PATTERN.fullmatch(model):
        raise UsageError(
            f"--model {model!r}: expected PROVIDER/MODEL (e.g. anthropic/claude-sonnet-4-5): "
            "letters, digits, '.', '_' or '-' before the '/', no spaces and no ':' anywhere"
        )


def with_tree(evidence: RunEvidence, item_dir: Path) -> RunEvidence:
    """``evidence`` with the bundle's final tree (``edits.json``) when it has one, read
    without following a symlink."""
    path = item_dir / EDITS_NAME
    if not path.is_file() or path.is_symlink():
        return evidence
    return dataclasses.replace(evidence, tree=parse_tree(lambda: open_regular(path)))


class AgentAdapter(ABC):
    """One kind of agent: how to launch it, end it, collect and score what it left.

    ``options`` is what followed ``NAME:`` in ``--agent NAME[:OPTIONS]``; ``binary`` the
    ``--agent-bin`` override (None: the adapter's default). Constructors validate both and
    raise :class:`harness.errors.UsageError` before anything runs.
    """

    #: The ``--agent`` name, and the ``agent_kind`` recorded in item.json and run.json.
    name: ClassVar[str]
    #: The binary looked up on PATH when ``--agent-bin`` is not given.
    default_binary: ClassVar[str | None] = None
    #: The model API the agent speaks (``selftest`` serves it scripted); None: no model.
    model_api: ClassVar[str | None] = None

    #: Whether ``--agent NAME:OPTIONS`` means anything to this agent (else refused).
    takes_options: ClassVar[bool] = False
    #: The environment variable naming the agent's binary for the test tiers and ``selftest``
    #: when ``--agent-bin`` is not given (e.g. ``CLAUDE_CODE_BIN``); None: only PATH.
    binary_env: ClassVar[str | None] = None
    #: What gives the agent its credentials, as a refusal or a failed login names it.
    credentials_hint: ClassVar[str] = "the agent's credentials"
    #: The longest Unix socket path the agent binds below its workdir (relative to it): the
    #: workdir is placed where that path fits the kernel's 108-byte limit. None: no socket.
    longest_socket: ClassVar[str | None] = None
    #: One sentence on getting the agent's binary, printed when it is missing.
    install_hint: ClassVar[str] = ""
    #: The client version the harness is tested against (None: any, or not applicable).
    pinned_version: ClassVar[str | None] = None
    #: The agent's own settings a user may pass with ``--agent-env NAME=VALUE`` (its
    #: vendor's knobs for retries and timeouts), name -> what it does; the harness sets
    #: them after building the agent's environment. Nothing else of the caller's
    #: environment reaches an agent that builds its own.
    agent_env_allowed: ClassVar[Mapping[str, str]] = {}
    #: Why an agent allows nothing, when it has a reason worth saying (``--agent-env``).
    agent_env_note: ClassVar[str] = ""

    @classmethod
    def install(cls, target: Path | None, log: Callable[[str], None]) -> Path:
        """Install the agent's binary (``agents install NAME``) into ``target`` (None: the
        adapter's default place); its path. Agents the harness cannot install refuse."""
        raise UsageError(f"agents install {cls.name}: not installable here; {cls.install_hint}")

    def __init__(self, options: str = "", binary: str | None = None, seed: int = 0) -> None:
        if options and not self.takes_options:
            raise UsageError(f"--agent {self.name} takes no options, got {options!r}")
        self.options = options
        self.binary = binary or self.default_binary
        self.seed = seed
        #: The solo twin of the agent (``run --solo``): the same agent, asked to work alone.
        self.solo = False

    @property
    def drive(self) -> str:
        """How the agent is driven, where it has more than one way ("": its only one)."""
        return ""

    def label(self) -> str:
        """How the run's report names the agent (its solo twin: with ``+solo``)."""
        base = f"{self.name}:{self.options}" if self.options else self.name
        return base + SOLO_SUFFIX if self.solo else base

    @property
    def arm(self) -> Arm:
        """``solo`` for the solo twin, else ``swarm``."""
        return "solo" if self.solo else "swarm"

    def solo_twin(self) -> AgentAdapter:
        """The same agent (binary, options, seed) as its solo twin."""
        twin = copy.copy(self)
        twin.solo = True
        return twin

    def prompt(self, fixture: Fixture) -> str:
        """What the agent is asked on ``fixture``: its own task, or the solo twin's
        agent-neutral one (the same shards, questions and artifact; no subagent)."""
        if self.solo:
            from harness.fixtures.task_text import solo_task  # re-scoring never needs it

            return solo_task(fixture.manifest, fixture.task_text)
        return self.task_text(fixture)

    @property
    def simulated(self) -> bool:
        """A stand-in that needs no model: runs without ``--model``, labelled as such."""
        return False

    def default_models(self) -> tuple[str, ...]:
        """Models used when ``--model`` is not given (a real agent has none)."""
        return ()

    def check_model(self, model: str) -> None:
        """Refuse a model this agent cannot run, before anything runs (UsageError)."""
        check_model_syntax(model)

    def client_model(self, model: str) -> str:
        """The model name the agent's own command line takes for ``--model`` ``model``
        (default: as given)."""
        return model

    def task_text(self, fixture: Fixture) -> str:
        """The prompt this agent gets for ``fixture``: its ``task.<name>.txt`` if the
        fixture has one, else ``task.txt`` (written for prime-agent's tools). An adapter
        whose agent delegates differently renders its own from the manifest instead."""
        return fixture.agent_task(self.name) or fixture.task_text

    def scripted_endpoint(
        self,
        base_url: str,
        models_json: Mapping[str, Any],
        home: Path,
        models: Sequence[str] = (),
    ) -> dict[str, str]:
        """Point the agent at a model server (``selftest``'s scripted one): write what its
        configuration needs into ``home`` (its credentials source for the run) and return
        the environment variables it needs. ``models`` are the model ids the server scripts
        for the agent's model API. Agents without a model API refuse."""
        raise UsageError(f"{self.name} talks to no model server")

    def preflight(
        self, env: Mapping[str, str], agent_home: Path | None = None
    ) -> list[tuple[str, bool, str]]:
        """Checks ``run --dry-run`` shows before anything launches: (name, ok, detail).
        ``env`` is the caller's environment with what the run adds to the items' (the
        selftest's scripted endpoint); ``agent_home`` the home the items copy their
        configuration from when the run names one (None: the user's own)."""
        return []

    def endpoints(self, env: Mapping[str, str], agent_home: Path | None = None) -> tuple[str, ...]:
        """The model API roots the items will call (URLs), for the pre-run check that they
        can be reached; empty when the agent calls none (the sim) or the harness cannot
        tell where it will (the check is then skipped, and ``--dry-run`` says so). Same
        arguments as :meth:`preflight`."""
        return ()

    def resolve_command(self) -> list[str]:
        """The argv prefix that starts the agent; raises AgentLaunchError if unusable
        (default: the binary, checked by :func:`harness.agents.env.resolve_binary`)."""
        return resolve_binary(self.binary)

    def version_command(self) -> list[str]:
        """The argv prefix the pre-run check asks ``--version`` (default: the command)."""
        return self.resolve_command()

    def drive_check(self) -> tuple[bool, str] | None:
        """A pre-run check of how the agent will be driven that needs its binary (e.g. that
        its daemon speaks what the drive needs): (ok, one line). None: nothing to check."""
        return None

    @abstractmethod
    def prepare(
        self, paths: ItemPaths, item: ItemSpec, base_env: Mapping[str, str], token: str
    ) -> Launch:
        """Create the agent's own dirs under ``paths.root``; the argv and environment.

        ``base_env`` is already scrubbed of what would leak into the agent and holds the
        private HOME/TMPDIR and the item's process token; the adapter adds its own.
        """

    def stop(self, launch: Launch, early: bool, running: Callable[[], bool]) -> StopOutcome:
        """End what the agent leaves running after its CLI exits (default: nothing).

        ``early`` is true when the CLI timed out, was cancelled or failed: a daemon may not
        have come up yet. ``running()`` says whether any process of the item is still alive
        (one scan of the process table): with none, no daemon can still come up. The
        harness sweeps every process of the item afterwards anyway.
        """
        return StopOutcome("none")

    @abstractmethod
    def collect(
        self,
        launch: Launch,
        item_dir: Path,
        stdout: Path | None,
        stderr: Path | None,
        secrets: list[bytes],
    ) -> Collected:
        """Copy the artifacts into ``item_dir`` (bounded, no symlink followed, secrets
        redacted), laid out so that :meth:`score` finds them there."""

    @abstractmethod
    def evidence(self, item_dir: Path, meta: Mapping[str, Any], manifest: Manifest) -> RunEvidence:
        """Parse a bundle (a live item's or a saved one's) into agent-neutral evidence with
        the agent's parsers in ``scorers/<agent>/``: what the rubric judges and what
        ``show`` and the HTML drill-down tell a person."""

    def swarm(
        self, item_dir: Path, meta: Mapping[str, Any], evidence: RunEvidence, manifest: Manifest
    ) -> Swarm:
        """The run's threads as agent-neutral turns, for the ATIF export: the agent's own
        builder in ``harness/agents/<agent>/trajectory.py`` over the bundle ``evidence``
        was read from."""
        raise HarnessError(f"{self.label()}: no trajectory builder for this agent")

    def assess(self, item_dir: Path, meta: Mapping[str, Any], manifest: Manifest) -> Assessment:
        """Score a bundle with the pure scorer, and read its provider faults. The final tree
        the harness collected (an edit fixture's ``edits.json``) joins the agent's evidence
        here, so no agent's parser reads it."""
        evidence = with_tree(self.evidence(item_dir, meta, manifest), item_dir)
        return assess_evidence(evidence, manifest, arm=self.arm)

    def score(self, item_dir: Path, meta: Mapping[str, Any], manifest: Manifest) -> ItemScore:
        """Score a bundle with the pure scorer."""
        return self.assess(item_dir, meta, manifest).score
