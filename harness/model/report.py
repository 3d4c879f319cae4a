"""The run report: one typed model that every renderer reads, JSON only at the boundary.

``report.json`` is ``RunReport.to_dict()`` (checked against ``report.schema.json``);
:func:`load_report` reads it back through ``from_dict``, and reads the two earlier schema
versions through :mod:`harness.model.legacy`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

from harness import __version__
from harness.errors import BundleError
from harness.model.agents import AgentsComparison
from harness.model.comparison import DEFAULT_COST_THRESHOLD, BaselineRun, Comparison
from harness.model.item import ItemResult
from harness.model.provider import ProviderHealth
from harness.model.record import Record
from harness.model.selftest import SelftestVerdict
from harness.model.summary import FailureGroup, FixtureSummary, ModelOverall
from scorers.criteria import criterion_names

#: 1: items only. 2: summary, overall, comparison, interrupted. 3: stratified overall rate
#: and comparison, the gate, missing fixtures, disagreement, the provenance criterion.
#: 4: items nest their ``facts`` and ``score`` (``checks`` the one record of each
#: criterion's verdict, criteria keyed by one name everywhere). 5: item scores carry
#: ``usage`` (four billed fields, parent/children, per model, complete or a lower bound)
#: and ``efficiency``. 6: items carry ``cost`` (USD, from the price library or the user's
#: prices), summaries cost and tokens per resolved item, the comparison ``cost``, the run
#: its ``budget``. 7: the agent is a dimension: items, summaries, overall rates and
#: comparison cells carry ``agent``, options list the run's ``agents``, and a run of
#: several agents has ``agents``, its agents side by side. 8: provider faults: items carry
#: ``facts.provider_faults``, ``attempts`` and their ``earlier`` attempts, options the
#: retry settings (``retries``, ``retry_backoff_s``, ``max_provider_errors``) and the
#: agents' own settings (``agent_env``), the run its ``provider`` health. 9: the
#: comparison says whether it compared only the cells both runs ran (``shared_only``,
#: ``--compare-shared-only``) and how many cells the baseline scored (``baseline_cells``).
#: 10: the cost per resolved item's interval is MOVER's (``mover-log-wilson``, always
#: bounded), and the agents' standings carry it too (``cost_per_resolved_usd`` and
#: ``tokens_per_resolved`` are ``per_resolved`` objects, no longer bare numbers).
#: 11: a selftest says so (``options.selftest``) and records its rows' verdict
#: (``selftest``). 12: the ``lanes`` criterion (edit fixtures), in every summary's criteria.
REPORT_SCHEMA_VERSION = 13
#: The versions :func:`load_report` reads (older ones are converted on reading).
READABLE_VERSIONS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)
REPORT_SCHEMA_PATH = Path(__file__).resolve().parent / "report.schema.json"
REPORT_FILE = "report.json"


@dataclass(frozen=True)
class RunAgent(Record):
    """One agent of a run as recorded: its label (how items and summaries name it), its
    kind and options (``--agent KIND:OPTIONS``), binary, what the binary said to
    ``--version`` (None: a stand-in, or not recorded) and the models it ran."""

    agent: str
    kind: str
    options: str
    binary: str | None
    version: str | None
    models: tuple[str, ...]


@dataclass(frozen=True)
class RunOptions(Record):
    """The options a run was started with, as recorded (``--resume`` reads them back).

    ``agents`` are the run's agents in ``--agent`` order (the first is the reference the
    others are compared with); ``agent`` names them all (labels joined by ``, ``), and
    ``agent_kind``/``agent_options``/``agent_bin``/``agent_version`` are the first's."""

    fixtures: tuple[str, ...]
    fixture_paths: tuple[str, ...]
    agent_kind: str
    agent_options: str
    agent_bin: str | None
    agent_version: str | None
    models: tuple[str, ...]
    agent: str
    seed: int
    trials: int
    concurrency: int
    executor: str
    provider_caps: dict[str, int]
    timeout_s: float
    keep_workdir: bool
    baseline: str | None
    threshold: float
    fail_on: str
    #: ``--rerun-failed``: the items this run re-ran (empty: the whole plan) and the run
    #: they came from.
    only_keys: tuple[str, ...] = ()
    origin: str | None = None
    #: The cost verdict's threshold, the user's price file, and the budget.
    cost_threshold: float = DEFAULT_COST_THRESHOLD
    prices_file: str | None = None
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    #: ``--trials auto``: ``{min_trials, max_trials, precision}`` (None: fixed trials, and
    #: ``trials`` is their number; with auto, ``trials`` is the cap).
    sequential: SequentialOptions | None = None
    agents: tuple[RunAgent, ...] = ()
    #: ``--retries``, ``--retry-backoff`` and ``--max-provider-errors`` (a run before
    #: version 8: no retries, no breaker).
    retries: int = 0
    retry_backoff_s: float = 0.0
    max_provider_errors: int = 0
    #: ``--agent-env``: the variables each agent (by label) was given, name -> value.
    agent_env: dict[str, dict[str, str]] | None = None
    #: The run is a selftest: its models are behaviours the scripted model server plays,
    #: its items are meant to fail where a script cheats, and its prices are play prices.
    selftest: bool = False
    #: ``--solo``: every item had its solo twin (``agents`` lists the swarm's agents; each
    #: twin is labelled ``<agent>+solo``).
    solo: bool = False


@dataclass(frozen=True)
class SequentialOptions(Record):
    """``--trials auto``'s settings as a run records them."""

    min_trials: int
    max_trials: int
    precision: float


@dataclass(frozen=True)
class Budget(Record):
    """What a run with ``--max-cost``/``--max-tokens`` spent, and whether the budget ran
    out (then no new item started; the items running finished and were kept, so a run may
    end above its limit by what they cost). Counts every finished item of the run, kept
    ones of a resumed run included; ``unpriced_items`` cost an unknown amount."""

    max_cost_usd: float | None
    max_tokens: int | None
    spent_usd: float
    spent_tokens: int
    unpriced_items: int
    exhausted: bool
    reason: str | None


@dataclass(frozen=True)
class RunReport(Record):
    """A run: ``runs/<run-id>/report.json``, what ``run --json`` prints, what ``report``,
    ``compare`` and ``show`` read."""

    #: The run's directory name under the runs dir.
    run_id: str
    #: The run was stopped (Ctrl-C, SIGTERM, the circuit breaker) before every item ran.
    interrupted: bool
    #: Every item that ran, sorted by key.
    items: tuple[ItemResult, ...]
    #: One row per fixture × agent × model.
    summary: tuple[FixtureSummary, ...]
    #: One row per agent × model: the mean of its fixtures' resolved rates.
    overall: tuple[ModelOverall, ...]
    #: The options the run was started with (``--resume`` reads them back).
    options: RunOptions
    #: Unresolved and errored items grouped by how they failed, largest group first.
    triage: tuple[FailureGroup, ...] = ()
    #: The comparison with ``--compare-baseline`` (None: no baseline).
    comparison: Comparison | None = None
    #: Keys of the planned items that never started (a budget, an interrupt, the breaker).
    not_started: tuple[str, ...] = ()
    #: When the run was first created (ISO 8601, UTC).
    created_at: str = ""
    #: When this session of the run started (a resumed run: the resuming session).
    started_at: str = ""
    #: Wall time of this session of the run, in seconds.
    duration_s: float | None = None
    #: The harness version that wrote the report.
    harness_version: str = __version__
    #: What the reader of an older report should know (e.g. a comparison it did not keep).
    notes: tuple[str, ...] = ()
    #: The budget (None: the run had none).
    budget: Budget | None = None
    #: The run's agents side by side (None: a run of one agent).
    agents: AgentsComparison | None = None
    #: What the provider did to the run (None: a report before version 8).
    provider: ProviderHealth | None = None
    #: A selftest's verdict on each of its rows (None: not a selftest, or one that stopped
    #: before its rows were judged).
    selftest: SelftestVerdict | None = None
    schema_version: int = REPORT_SCHEMA_VERSION

    #: Written beside the fields for readers of the JSON (see harness.model.schema).
    JSON_EXTRA: ClassVar[dict[str, Any]] = {
        "resolved": {
            "description": "Every planned item ran and resolved (the exit code's 0).",
            "type": "boolean",
        },
        "schema_version": {
            "description": "This file's format version; older ones are read by converting.",
            "const": REPORT_SCHEMA_VERSION,
        },
    }

    @property
    def resolved(self) -> bool:
        """Every planned item ran and resolved (the swarm's: a solo twin informs, it never
        fails the run)."""
        return (
            bool(self.swarm_items)
            and not self.interrupted
            and not self.not_started
            and all(i.resolved for i in self.swarm_items)
        )

    @property
    def swarm_items(self) -> tuple[ItemResult, ...]:
        """The items of the swarm: all of them but the solo twins (``run --solo``)."""
        return tuple(i for i in self.items if i.arm == "swarm")

    @property
    def solo_items(self) -> tuple[ItemResult, ...]:
        return tuple(i for i in self.items if i.arm == "solo")

    def count(self, status: str) -> int:
        """The swarm's items with ``status`` (solo twins are counted apart)."""
        return sum(1 for i in self.swarm_items if i.status == status)

    def item(self, key: str) -> ItemResult | None:
        return next((i for i in self.items if i.key == key), None)

    def as_baseline(self) -> BaselineRun:
        """This run as a comparison names its baseline (run id, agent, models, date)."""
        return BaselineRun(self.run_id, self.options.agent, self.options.models, self.created_at)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["items"] = [i.to_dict() for i in self.items]
        return {"schema_version": data.pop("schema_version"), "resolved": self.resolved, **data}

    @classmethod
    def from_dict(cls, data: object, where: str | None = None) -> Self:
        where = where or cls.__name__
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object, got {type(data).__name__}")
        fields = {k: v for k, v in data.items() if k not in ("resolved", "items")}
        items = data.get("items")
        if not isinstance(items, list):
            raise ValueError(f"{where}.items: missing or not a list")
        fields["items"] = []
        report = super().from_dict(fields, where)
        parsed = tuple(ItemResult.from_dict(i, f"{where}.items[{n}]") for n, i in enumerate(items))
        return dataclasses.replace(report, items=parsed)


def report_schema() -> dict[str, Any]:
    """report.schema.json, with every registry criterion required in summaries (so a new
    criterion needs no schema edit)."""
    schema: dict[str, Any] = json.loads(REPORT_SCHEMA_PATH.read_text(encoding="utf-8"))
    criteria = schema["$defs"]["fixture_summary"]["properties"]["criteria"]
    criteria["required"] = list(criterion_names())
    return schema


def validate_report(data: dict[str, Any]) -> None:
    """Raise ``jsonschema_rs.ValidationError`` if ``data`` does not match the report schema.

    jsonschema-rs, not jsonschema: a 2,000-item report is checked in about 10 ms instead of
    2.3 s (``benchmarks/bench_overhead.py``); the error names the field's path the same way.
    """
    import jsonschema_rs  # only writing or checking a report needs it

    jsonschema_rs.validator_for(report_schema()).validate(data)


def report_path(path: Path) -> Path:
    """The report.json of a run directory, or ``path`` itself when it is a file."""
    return path / REPORT_FILE if path.is_dir() else path


def load_report(path: Path) -> RunReport:
    """The report at ``path`` (a report.json or its run directory), of any readable
    version; :class:`BundleError` naming the file and field when it cannot be read."""
    from harness.model.legacy import upgrade

    file = report_path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BundleError(f"{file}: no such report") from exc
    except (OSError, ValueError) as exc:
        raise BundleError(f"{file}: not a readable report.json ({exc})") from exc
    if not isinstance(data, dict):
        raise BundleError(f"{file}: not a JSON object")
    version = data.get("schema_version", 1)
    if version not in READABLE_VERSIONS:
        readable = ", ".join(map(str, READABLE_VERSIONS))
        raise BundleError(
            f"{file}: schema_version: {version!r}; this harness reads versions {readable}"
        )
    try:
        if version != REPORT_SCHEMA_VERSION:
            data = {**upgrade(data), "schema_version": REPORT_SCHEMA_VERSION}
        return RunReport.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise BundleError(f"{file}: {exc}") from exc


__all__ = [
    "READABLE_VERSIONS",
    "REPORT_FILE",
    "REPORT_SCHEMA_VERSION",
    "Budget",
    "RunOptions",
    "RunReport",
    "load_report",
    "report_schema",
    "validate_report",
]
