"""Past runs: list the run directories under a runs dir, and resolve ``latest``.

A run's status is read from what it left on disk: ``report.json`` is written at the end
(``interrupted`` inside it says whether the run was stopped). A run is *running* while the
process that owns it (pid and start time, recorded in ``run.json``) is alive and has not
written its report yet (``--resume`` rewrites ``run.json``, so a resumed run whose report is
older than it is running again). A run dir without a report whose owner is gone was killed
before it could write one, and is shown as interrupted.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness.errors import BundleError, UsageError
from harness.model.selftest import SCRIPTED_PRICES

if TYPE_CHECKING:
    from harness.model.story import ItemStory

RunStatus = Literal["complete", "interrupted", "running"]

#: The word accepted wherever a run directory is taken.
LATEST = "latest"
RUN_FILE = "run.json"
REPORT_FILE = "report.json"

#: Start times are compared with this slack: psutil reads them from /proc with a clock-tick
#: resolution, and JSON round-trips the float; a reused pid starts seconds apart at least.
START_TIME_SLACK_S = 1.0


def owner_record() -> dict[str, Any]:
    """The current process as the owner of a run dir (pid and start time, against pid reuse)."""
    import psutil  # here, not at import: every CLI command imports this module

    return {"pid": os.getpid(), "started": psutil.Process().create_time()}


def owner_alive(owner: object) -> bool:
    """Whether the process an ``owner_record`` names is still the same live process."""
    if not isinstance(owner, dict):
        return False
    pid, started = owner.get("pid"), owner.get("started")
    if not isinstance(pid, int) or not isinstance(started, (int, float)):
        return False
    import psutil

    try:
        proc = psutil.Process(pid)
        return (
            abs(proc.create_time() - started) <= START_TIME_SLACK_S
            and proc.status() != psutil.STATUS_ZOMBIE
        )
    except psutil.Error:
        return False


@dataclass(frozen=True)
class RunInfo:
    """One run directory, summarised for ``runs list``."""

    run_id: str
    path: Path
    created_at: str
    agent: str
    fixtures: tuple[str, ...]
    models: tuple[str, ...]
    trials: int | None
    items: int
    scored: int
    resolved: int
    status: RunStatus
    #: The run ids this run depends on: its baseline's and, for a re-run, its origin's.
    baseline_id: str | None = None
    origin: str | None = None
    #: What the items cost together in USD (errored ones too: they may have spent before
    #: failing); None when an item that used tokens has no price (``unpriced`` counts them)
    #: or no item was priced (a report from before prices).
    cost_usd: float | None = None
    #: Their tokens (the four billed fields), priced or not.
    tokens: int = 0
    unpriced: int = 0
    #: The run is a selftest: its items' verdicts are checked against its scripts, so it
    #: has no resolved rate, and its prices are play prices (``cost_usd`` stays None).
    selftest: bool = False
    #: A judged selftest's (rows that hold, rows); None: not judged (or not a selftest).
    selftest_rows: tuple[int, int] | None = None

    @property
    def resolved_rate(self) -> float | None:
        """Resolved share of the scored items (errored items excluded); None without any."""
        return self.resolved / self.scored if self.scored else None

    @property
    def selftest_passed(self) -> bool | None:
        """A judged selftest: every planned row ran and held (None: not judged)."""
        if self.selftest_rows is None:
            return None
        holding, rows = self.selftest_rows
        return rows > 0 and holding == rows and self.status == "complete"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "path": str(self.path),
            "created_at": self.created_at,
            "agent": self.agent,
            "fixtures": list(self.fixtures),
            "models": list(self.models),
            "trials": self.trials,
            "items": self.items,
            "scored": self.scored,
            "resolved": self.resolved,
            "resolved_rate": self.resolved_rate,
            "status": self.status,
            "baseline_id": self.baseline_id,
            "origin": self.origin,
            "cost_usd": self.cost_usd,
            "tokens": self.tokens,
            "unpriced_items": self.unpriced,
            "selftest": None
            if not self.selftest
            else {
                "rows": None if self.selftest_rows is None else self.selftest_rows[1],
                "hold": None if self.selftest_rows is None else self.selftest_rows[0],
                "passed": self.selftest_passed,
            },
        }


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _item_spend(item: dict[str, Any]) -> tuple[float | None, int]:
    """An item's USD (None: not priced) and tokens, from its raw result dict: ``cost`` is
    ``{"usd": ...}`` or null, missing in reports from before prices."""
    score = item.get("score")
    tokens = _number(score.get("tokens_used")) if isinstance(score, dict) else None
    cost = item.get("cost")
    usd = _number(cost.get("usd")) if isinstance(cost, dict) else None
    return usd, int(tokens or 0)


def total_cost(items: list[dict[str, Any]]) -> tuple[float | None, int, int]:
    """The items' total USD, tokens, and how many items used tokens without a price (the
    budget's rule: an item without tokens spent nothing). The USD is None when some item is
    unpriced, or none was priced at all."""
    spends = [_item_spend(i) for i in items]
    tokens = sum(t for _, t in spends)
    unpriced = sum(1 for usd, t in spends if usd is None and t > 0)
    priced = [usd for usd, _ in spends if usd is not None]
    usd = None if unpriced or not priced else math.fsum(priced)
    return usd, tokens, unpriced


def _fixture_names(options: dict[str, Any], items: list[dict[str, Any]]) -> tuple[str, ...]:
    names = sorted({str(i.get("fixture")) for i in items if i.get("fixture")})
    if names:
        return tuple(names)
    paths = options.get("fixture_paths") or options.get("fixtures") or []
    return tuple(sorted(Path(str(p)).name for p in paths))


def _report_older(run_dir: Path) -> bool:
    """No report yet, or one older than run.json (a ``--resume`` rewrote run.json since)."""
    try:
        report = (run_dir / REPORT_FILE).stat().st_mtime_ns
    except OSError:
        return True
    try:
        return (run_dir / RUN_FILE).stat().st_mtime_ns > report
    except OSError:
        return False


def run_info(run_dir: Path) -> RunInfo | None:
    """The summary of one run dir, or None when it is not a run dir (no run.json, no report)."""
    run = _read_json(run_dir / RUN_FILE)
    report = _read_json(run_dir / REPORT_FILE)
    if run is None and report is None:
        return None
    options = dict((run or {}).get("options") or (report or {}).get("options") or {})
    items = [i for i in (report or {}).get("items") or [] if isinstance(i, dict)]
    if run is None and report is not None and not report.get("items"):
        return None
    status: RunStatus
    if owner_alive((run or {}).get("owner")) and _report_older(run_dir):
        status = "running"
    elif report is None or report.get("interrupted"):
        status = "interrupted"
    else:
        status = "complete"
    if report is None:  # running or killed: count the items finished so far
        items = [
            r
            for f in sorted((run_dir / "items").glob("*/result.json"))
            if (r := _read_json(f)) is not None
        ]
    scored = [i for i in items if i.get("status") != "error"]
    trials = options.get("trials")
    usd, tokens, unpriced = total_cost(items)
    selftest = (
        bool(options.get("selftest"))
        or options.get("prices_file") == SCRIPTED_PRICES
        or (run_dir / OLD_SELFTEST_FILE).is_file()
    )
    if selftest:  # play prices: no money
        usd, unpriced = None, 0
    return RunInfo(
        run_id=str((report or run or {}).get("run_id") or run_dir.name),
        path=run_dir,
        created_at=str((run or report or {}).get("created_at") or ""),
        agent=str(options.get("agent") or ""),
        fixtures=_fixture_names(options, items),
        models=tuple(str(m) for m in options.get("models") or ()),
        trials=trials if isinstance(trials, int) else None,
        items=len(items),
        scored=len(scored),
        resolved=sum(1 for i in scored if i.get("status") == "resolved"),
        status=status,
        baseline_id=_baseline_id(options.get("baseline")),
        origin=str(options["origin"]) if options.get("origin") else None,
        cost_usd=usd,
        tokens=tokens,
        unpriced=unpriced,
        selftest=selftest,
        selftest_rows=_selftest_rows(run_dir, report) if selftest else None,
    )


#: Where a selftest kept its outcome before its report recorded it (schema 9 and earlier):
#: ``{"rows": N, "hold": N, "ok": bool}``.
OLD_SELFTEST_FILE = "selftest.json"


def _selftest_rows(run_dir: Path, report: dict[str, Any] | None) -> tuple[int, int] | None:
    """(rows that hold, rows) of a judged selftest, from its report (or what a selftest
    kept beside it before reports recorded it); None when not judged."""
    verdict = (report or {}).get("selftest")
    if isinstance(verdict, dict) and isinstance(verdict.get("rows"), list):
        rows = [r for r in verdict["rows"] if isinstance(r, dict)]
        return sum(1 for r in rows if not r.get("failed")), len(rows)
    old = _read_json(run_dir / OLD_SELFTEST_FILE) or {}
    hold, count = old.get("hold"), old.get("rows")
    if isinstance(hold, int) and isinstance(count, int):
        return hold, count
    return None


def _baseline_id(baseline: object) -> str | None:
    """The run id of a baseline option (a run dir or its report.json)."""
    if not isinstance(baseline, str) or not baseline:
        return None
    path = Path(baseline)
    return path.parent.name if path.name == REPORT_FILE else path.name


def list_runs(runs_dir: Path) -> list[RunInfo]:
    """Every run under ``runs_dir``, oldest first by start time (``created_at``, with
    microseconds: two run ids of the same second order by their random suffix)."""
    if not runs_dir.is_dir():
        return []
    infos = (run_info(d) for d in runs_dir.iterdir() if d.is_dir())
    return sorted((i for i in infos if i is not None), key=lambda i: (i.created_at, i.run_id))


def latest_run(runs_dir: Path, *, with_report: bool = True, for_comparison: bool = False) -> Path:
    """The newest run dir under ``runs_dir`` (with a report.json, unless told otherwise;
    ``for_comparison``: never a selftest, whose scripted models no evaluation shares)."""
    candidates = [
        i.path
        for i in list_runs(runs_dir)
        if (not with_report or (i.path / REPORT_FILE).is_file())
        and not (for_comparison and i.selftest)
    ]
    if not candidates:
        what = "finished run (with report.json)" if with_report else "run"
        if for_comparison:
            what = "finished run other than a selftest"
        raise UsageError(f"latest: no {what} under {runs_dir}")
    return candidates[-1]


def resolve_run(
    spec: str | Path, runs_dir: Path, *, with_report: bool = True, for_comparison: bool = False
) -> Path:
    """``latest`` resolved against ``runs_dir``; any other value is returned as a path.
    ``for_comparison``: the run is a comparison's side, and ``latest`` skips selftests.

    The word wins over a file of the same name in the current directory (write
    ``./latest`` for that).
    """
    if str(spec) == LATEST:
        return latest_run(runs_dir, with_report=with_report, for_comparison=for_comparison)
    return Path(spec)


def find_story(target: str, run: str | Path, runs_dir: Path) -> ItemStory:
    """The story of ``target``: an item directory, or an item key looked up in ``run`` (a
    run directory, or ``latest`` under ``runs_dir``)."""
    from harness.item.story import find_item, item_dir_of, load_story
    from harness.model.report import load_report, report_path

    path = Path(target)
    if path.is_dir():
        return load_story(path)
    run_dir = report_path(resolve_run(run, runs_dir)).parent
    report = load_report(run_dir)
    try:
        result = find_item(run_dir, target, report.items)
    except BundleError as exc:
        elsewhere = _runs_with_item(target, runs_dir, run_dir)
        if not elsewhere:
            raise
        more = f" (and {len(elsewhere) - 1} older runs)" if len(elsewhere) > 1 else ""
        raise BundleError(
            f"{exc}; it is an item of run {elsewhere[0].name}{more}: "
            f"show {target} --run {elsewhere[0]}"
        ) from None
    return load_story(item_dir_of(run_dir, result), result)


def _runs_with_item(key: str, runs_dir: Path, looked_in: Path) -> list[Path]:
    """The run dirs under ``runs_dir`` (but ``looked_in``) whose report has item ``key``,
    newest first."""
    found = []
    for info in reversed(list_runs(runs_dir)):
        if info.path.resolve() == looked_in.resolve():
            continue
        report = _read_json(info.path / REPORT_FILE) or {}
        items = report.get("items") or []
        if any(isinstance(i, dict) and i.get("key") == key for i in items):
            found.append(info.path)
    return found
