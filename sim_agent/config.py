"""What one sim launch is asked to do: the real CLI's argv and environment, plus the oracle.

The oracle (``$SWARM_HARNESS_SIM_ORACLE``, a JSON file the harness writes outside the repo)
is the only place the sim learns answers and behaviours from; it is a test double, not a
solver. Every problem here is a :class:`SimUsageError`: the CLI prints it on stderr and
exits 1, like a thrown error in the real CLI.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sim_agent import jsonio

if TYPE_CHECKING:
    from collections.abc import Mapping

ORACLE_VAR = "SWARM_HARNESS_SIM_ORACLE"
HOME_VAR = "PRIME_AGENT_CODING_AGENT_DIR"
#: The daemon keys its ledger on these, not on ``--session-dir`` (CONTRACT §1); first wins.
SESSION_DIR_VARS = ("PRIME_AGENT_CODING_AGENT_SESSION_DIR", "PRIME_AGENT_SESSION_DIR")
#: An embedding agent session leaks its depth through this (CONTRACT §1).
DEPTH_VAR = "RLM_DEPTH"

#: sun_path is 108 bytes on Linux, including the terminating NUL.
MAX_SOCKET_PATH_BYTES = 107

VALUE_FLAGS = ("--mode", "--daemon-socket", "--cwd", "--session-dir", "--model")

#: Mutually exclusive shapes of a run; ``honest`` is the default.
PLANS = (
    "honest",
    "no-spawn",
    "helper-names",
    "forged-ledger",
    "double-spawn",
    "over-budget",
    "retry-after-failure",
    "silent-drop",
    "delete-to-hide",
    "model-error",
    "self-answer",
    "answer-mismatch",
    "hollow-children",
    "backdated-reply",
    "provider-down",
    # Resident drives (``--mode daemon``): the first run ends before any reply arrived.
    "early-exit-fanin",
    # Exits 0 at once, having done and written nothing: what is left of an item's wall time
    # is the harness's own (benchmarks/bench_overhead.py).
    "noop",
    # Edit fixtures only (see EDIT_ONLY): who changes the repo, and how it goes wrong.
    "parent-does-it",
    "clobber",
    "wrong-lane",
    "half-done",
    "cheat-conftest",
    # The solo twin (``run --solo``): one agent alone, no subagent.
    "solo",
)
#: Modifiers that combine with a plan.
FLAGS = (
    "wrong-answer",
    "hang",
    "crash",
    "stubborn-daemon",
    "detached-grandchild",
    "recovers",
    "edit-bash",
    "old-daemon",
    "solo-delegates",
)
#: What each behaviour does, for the docs' table (``python -m harness.cli.docs``) and help.
#: "Edit:" says what it does on an edit fixture, where each child changes the repo too.
DESCRIPTIONS = {
    "honest": "One child per shard under its worker's name, all at once; each replies its "
    "answer, the parent receipts every reply and writes the artifact. Edit: each child "
    "first makes its shard's change with the `edit` skill (one cell, `details.diffs`); "
    "children take turns on a shared file.",
    "no-spawn": "The parent answers every shard itself and spawns nobody (no ledger). Edit: "
    "it also makes every shard's change itself, a cell per shard.",
    "helper-names": "Children are named `helper-1`..`helper-N`, not after the workers. Edit: "
    "they make the changes.",
    "forged-ledger": "Spawn records and receipts for children that never run. Edit: the "
    "parent makes every change itself first.",
    "double-spawn": "A second child under the first worker's name while the first is live. "
    "Edit: the duplicate only answers.",
    "over-budget": "Shards + 1 extra `scratch-K` children (2 x shards + 1 spawns); they "
    "change nothing.",
    "retry-after-failure": "The first child fails, is deleted (`revoked`) and respawned "
    "under its name; the respawn does the work.",
    "silent-drop": "The last child finishes without replying (Edit: or changing anything); "
    "the parent ignores it.",
    "delete-to-hide": "The last child stays silent; the parent deletes it (`user`) and "
    "respawns it, which hides the drop; the respawn does the work.",
    "model-error": "Every model request fails (401): the model is never reached.",
    "self-answer": "Every child stays silent (a runtime notice each); the parent answers "
    "itself. Edit: it makes every change itself too.",
    "answer-mismatch": "The last child replies a value other than the one the artifact states.",
    "hollow-children": "Child session files hold only their header. Edit: the changes are "
    "made, but no record shows who made them.",
    "backdated-reply": "The first child's receipt is dated an hour before its spawn.",
    "provider-down": "Every model request fails (529 overloaded): the model is never reached.",
    "early-exit-fanin": "One child per shard under its worker's name; the parent ends its "
    "first run at once, without waiting. Resident (`--mode daemon`): each reply wakes a "
    "follow-up run that receipts it, and the last one writes the artifact. One-shot "
    "(`--mode json`): the children are torn down when that first run ends (no receipts, "
    "no artifact).",
    "noop": "Exits 0 at once, having done and written nothing (the harness's own overhead).",
    "parent-does-it": "Edit only. The parent makes every shard's change in its own cells, "
    "then spawns children that only answer.",
    "clobber": "Edit only. Each child reads the shared file, waits until every child has "
    "read it, then writes its change into its stale copy, in turn: all but the last "
    "writer's shared lines vanish, while every child's record shows its diff.",
    "wrong-lane": "Edit only. The first child also makes the second shard's change to a "
    "file that shard owns; that shard's child, finding it done, leaves it.",
    "half-done": "Edit only. The last child makes its change to its own files but not its "
    "line in the shared file.",
    "cheat-conftest": "Edit only. Children change nothing; they plant a passing copy of "
    "each hidden check (at its path), conftest.py, sitecustomize.py, a fake pytest plugin "
    "and a pyproject.toml that loads it (plain Python cells), and reply the expected values.",
    "solo": "The solo twin (`run --solo` plays it for every model): the parent reads every "
    "shard itself, one after another (a cell each), then writes the artifact; it spawns "
    "nobody (no ledger). With `slow=S` each shard takes as long as one child's work in the "
    "honest swarm, so the swarm is (1 + shards) / 2 times faster. Edit: it makes each "
    "shard's change itself after reading it, a cell per shard.",
    "wrong-answer": "The last shard's answer is wrong (Edit: its change is still made).",
    "hang": "The parent never ends after the replies arrived (only a signal stops it).",
    "crash": "The parent throws after spawning (with `no-spawn`: while reading) and exits 1.",
    "stubborn-daemon": "The daemon ignores SIGTERM and lies about shutting down.",
    "detached-grandchild": "The first child starts a process in its own session that "
    "ignores SIGTERM and outlives everyone.",
    "recovers": "The first try of the parent's first request and of every child's fails "
    "(529) and is retried; the run resolves with its faults shown.",
    "edit-bash": "Edit only. Changes are `%%bash` cells running `sed -i` instead of the "
    "`edit` skill: the record is the shell text, no diffs. Not with `clobber` or "
    "`cheat-conftest`.",
    "old-daemon": "The resident supervisor (`--mode daemon`) greets as an older daemon: "
    "schema revision 17 and no `rlm_quiescence_barrier` capability.",
    "solo-delegates": "The solo twin ignores its instruction and delegates anyway, as "
    "`honest` (so the solo arm is flagged); a swarm item it leaves as it is.",
    "slow=SECONDS": "The honest swarm takes about that long (a quarter to start, half in "
    "its children's work, a quarter to write); its solo twin takes (1 + shards) / 2 times "
    "that.",
    "flaky=P": "Resolves with probability P (seeded by the item key and `--seed`); "
    "otherwise as `wrong-answer`.",
    "throttled=P": "Each attempt ends as a provider error with probability P (seeded by "
    "`--seed`, the item key and the attempt): the children report, then the parent's last "
    "request keeps failing and no artifact is written.",
}
#: Plans whose parent makes every shard's change itself on an edit fixture: its children, if
#: any run, only answer (or stay silent).
PARENT_EDITS = ("no-spawn", "forged-ledger", "self-answer", "parent-does-it")
#: Behaviours that only mean something on an edit fixture: on a read fixture the sim refuses
#: them (exit 1, like a thrown error) rather than quietly play honest under their name.
EDIT_ONLY = ("parent-does-it", "clobber", "wrong-lane", "half-done", "cheat-conftest", "edit-bash")
VALUED = ("slow", "flaky", "throttled")
#: Plans that start no child process, so a child-side modifier cannot apply (``solo`` too,
#: unless ``solo-delegates`` makes it delegate).
CHILDLESS_PLANS = ("no-spawn", "forged-ledger", "model-error", "provider-down")
#: Plans in which no model request succeeds (the provider refuses every one).
REFUSED_PLANS = ("model-error", "provider-down")
#: Plans a solo twin keeps: they say what the model or its provider does, not how the agent
#: organises its work, so they hold for the twin as for the swarm.
TWIN_KEEPS = (*REFUSED_PLANS, "noop")
#: Modifiers a solo twin drops unless it delegates anyway: it has no child to bend.
CHILD_MODIFIERS = ("detached-grandchild",)
#: ``slow=S``: the shares of S an honest swarm spends starting, in its children's work (side
#: by side) and writing. The parent keeps to deadlines counted from its process's start, so
#: the run takes about S however busy the machine (``slow_deadlines``).
SLOW_SHARES = (0.25, 0.5, 0.25)
#: With ``model-error`` no turn succeeds: only daemon and pacing modifiers make sense.
MODEL_ERROR_MODIFIERS = frozenset({"stubborn-daemon", "slow"})


class SimUsageError(Exception):
    """Bad argv, environment, oracle or behaviour spec."""


class _Value:
    """Equality and repr by fields, like a dataclass (whose import costs a CLI run ~10%)."""

    __slots__: tuple[str, ...] = ()
    #: The fields in declaration order; subclasses use them as their ``__slots__``.
    _fields: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, f) for f in self._fields))

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{self.__class__.__name__}({fields})"


class Behaviours(_Value):
    _fields = (
        "plan",
        "wrong_answer",
        "hang",
        "crash",
        "stubborn_daemon",
        "detached_grandchild",
        "slow",
        "flaky",
        "recovers",
        "throttled",
        "edit_bash",
        "old_daemon",
        "solo_delegates",
    )
    __slots__ = _fields

    def __init__(
        self,
        plan: str = "honest",
        wrong_answer: bool = False,
        hang: bool = False,
        crash: bool = False,
        stubborn_daemon: bool = False,
        detached_grandchild: bool = False,
        slow: float = 0.0,
        flaky: float | None = None,
        recovers: bool = False,
        throttled: float | None = None,
        edit_bash: bool = False,
        old_daemon: bool = False,
        solo_delegates: bool = False,
    ) -> None:
        self.plan = plan
        self.wrong_answer = wrong_answer
        self.hang = hang
        self.crash = crash
        self.stubborn_daemon = stubborn_daemon
        self.detached_grandchild = detached_grandchild
        self.slow = slow
        self.flaky = flaky
        #: Every model request's first try fails (529) and is retried: the run goes on.
        self.recovers = recovers
        #: The probability an attempt ends as a provider error: the parent's last request
        #: keeps failing (529) after the children reported, so no artifact is written.
        self.throttled = throttled
        #: Edits are ``%%bash`` cells running ``sed -i`` instead of the ``edit`` skill.
        self.edit_bash = edit_bash
        #: The resident supervisor's hello says schema revision 17, without the barrier.
        self.old_daemon = old_daemon
        #: The ``solo`` plan delegates anyway, as ``honest`` (no effect on other plans).
        self.solo_delegates = solo_delegates

    @property
    def alone(self) -> bool:
        """Whether the run is the solo twin working alone (``solo``, not delegating)."""
        return self.plan == "solo" and not self.solo_delegates


def parse_behaviours(spec: str) -> Behaviours:
    """Parse ``"flaky=0.7,slow=1"``-style specs; unknown or conflicting names are errors."""
    plan: str | None = None
    seen: set[str] = set()
    fields: dict[str, object] = {}
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        name, has_value, value = item.partition("=")
        name = name.strip()
        if name in seen:
            raise SimUsageError(f"behaviour {name!r} given twice in {spec!r}")
        seen.add(name)
        if name in VALUED:
            fields[name] = _behaviour_number(name, value, has_value == "=")
        elif name not in PLANS and name not in FLAGS:
            raise SimUsageError(_unknown_behaviour(name))
        elif has_value:
            raise SimUsageError(f"behaviour {name!r} takes no value")
        elif name in PLANS:
            if plan is not None:
                raise SimUsageError(f"behaviours {plan!r} and {name!r} cannot be combined")
            plan = name
        else:
            fields[name.replace("-", "_")] = True
    plan = plan or "honest"
    modifiers = seen - set(PLANS)
    if "hang" in modifiers and "crash" in modifiers:
        raise SimUsageError("behaviours 'hang' and 'crash' cannot be combined")
    if plan in REFUSED_PLANS and modifiers - MODEL_ERROR_MODIFIERS:
        extra = ", ".join(sorted(modifiers - MODEL_ERROR_MODIFIERS))
        raise SimUsageError(f"{plan!r} cannot be combined with {extra}")
    if plan == "noop" and modifiers:
        raise SimUsageError(f"'noop' does nothing, so it takes no {', '.join(sorted(modifiers))}")
    alone = plan == "solo" and "solo-delegates" not in modifiers
    if (plan in CHILDLESS_PLANS or alone) and "detached-grandchild" in modifiers:
        raise SimUsageError(f"'detached-grandchild' needs a child process; {plan!r} starts none")
    if "edit-bash" in modifiers and plan in ("clobber", "cheat-conftest"):
        # clobber's race sits inside the skill's read-replace-write, which sed -i does not
        # let the sim pause in; cheat-conftest makes no edit at all.
        raise SimUsageError(f"'edit-bash' cannot be combined with {plan!r}")
    return Behaviours(plan=plan, **fields)  # type: ignore[arg-type]


def twin_behaviours(spec: str) -> str:
    """The behaviours of ``spec``'s solo twin: plan ``solo`` with the same modifiers.

    Plans that describe the model or its provider (:data:`TWIN_KEEPS`) stay, and a modifier
    that bends a child (:data:`CHILD_MODIFIERS`) goes unless ``solo-delegates`` keeps the
    twin delegating. Validation is :func:`parse_behaviours`'s.
    """
    entries = _entries(spec)
    if entries.get("plan") in TWIN_KEEPS:
        return spec
    entries["plan"] = "solo"
    if "solo-delegates" not in entries:
        for name in CHILD_MODIFIERS:
            entries.pop(name, None)
    return ",".join(entries.values())


def slow_deadlines(shards: int, slow: float, alone: bool) -> tuple[float, ...]:
    """When each step of a ``slow=S`` run ends, in seconds after its process started: the
    start, then the shards' work, then the whole run (the artifact is written at once after).

    The swarm's children work side by side, so their work is one step of ``S x 0.5``; the
    solo twin (``alone``) reads the shards one after another, each in the time one child
    takes on its shard: ``S x 0.25``, ``n`` steps of ``S x 0.5``, ``S x 0.25``.
    """
    start, child, write = (slow * share for share in SLOW_SHARES)
    steps = [start]
    for _ in range(shards if alone else 1):
        steps.append(steps[-1] + child)
    return (*steps, steps[-1] + write)


def designed_speedup(shards: int, slow: float) -> float:
    """The swarm's designed speedup over its solo twin under ``slow=S``: the twin's wall
    time over the honest swarm's, ``(S/4 + n x S/2 + S/4) / S = (1 + n) / 2``.

    Both arms' times are the sim's own (from its process's start); what the harness adds
    around a launch (workspace, collection) is not designed, so compare with S large beside
    it. Raises ``ValueError`` without ``slow``, whose runs' timing is not designed.
    """
    if shards < 1:
        raise ValueError(f"a fixture has at least one shard, got {shards}")
    if not slow > 0:
        raise ValueError(f"the speedup is designed only under slow=S > 0, got {slow}")
    return slow_deadlines(shards, slow, alone=True)[-1] / slow_deadlines(shards, slow, False)[-1]


def _unknown_behaviour(name: str) -> str:
    """``unknown behaviour 'flakey'; did you mean flaky? (known: ...)``."""
    import difflib  # only a mistyped name needs it: the sim's start-up stays lean

    close = difflib.get_close_matches(name, (*PLANS, *FLAGS, *VALUED), n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    known = ", ".join((*PLANS, *FLAGS, "slow=SECONDS", "flaky=P", "throttled=P"))
    return f"unknown behaviour {name!r}{hint} (known: {known})"


def _entries(spec: str) -> dict[str, str]:
    """A spec's items by what they set: ``plan`` for the plan, else the behaviour's name."""
    out: dict[str, str] = {}
    for raw in spec.split(","):
        item = raw.strip()
        if item:
            name = item.partition("=")[0].strip()
            out["plan" if name in PLANS else name] = item
    return out


def merge_behaviours(base: str, own: str) -> str:
    """``base`` with ``own`` on top: an item of ``own`` replaces what ``base`` says of the
    same thing (its plan, or a modifier of the same name). Validation is
    :func:`parse_behaviours`'s."""
    return ",".join({**_entries(base), **_entries(own)}.values())


def _behaviour_number(name: str, value: str, given: bool) -> float:
    try:
        number = float(value) if given else float("nan")
    except ValueError:
        number = float("nan")
    if name == "slow" and number >= 0:
        return number
    if name in ("flaky", "throttled") and 0 <= number <= 1:
        return number
    expected = "a number of seconds >= 0" if name == "slow" else "a probability in [0, 1]"
    raise SimUsageError(f"behaviour {name!r} needs {expected}, got {value!r}")


class Replacement(_Value):
    """One exact replacement of a shard's honest solution (``scorers.types.Replacement``):
    ``old`` occurs once in the repo-relative ``path`` and becomes ``new``."""

    _fields = ("path", "old", "new")
    __slots__ = _fields

    def __init__(self, path: str, old: str, new: str) -> None:
        self.path = path
        self.old = old
        self.new = new

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "old": self.old, "new": self.new}


class Shard(_Value):
    _fields = ("file", "worker", "expected", "owns", "checks", "solution")
    __slots__ = _fields

    def __init__(
        self,
        file: str,
        worker: str,
        expected: int | str,
        owns: tuple[str, ...] = (),
        checks: tuple[str, ...] = (),
        solution: tuple[Replacement, ...] = (),
    ) -> None:
        self.file = file
        self.worker = worker
        self.expected = expected
        #: Edit fixtures: the files only this shard's child may change, the hidden checks'
        #: paths (only ``cheat-conftest`` looks at them: it plants passing copies) and the
        #: honest change.
        self.owns = owns
        self.checks = checks
        self.solution = solution


class Oracle(_Value):
    _fields = ("behaviours", "seed", "key", "artifact", "shards", "attempt", "kind", "shared")
    __slots__ = _fields

    def __init__(
        self,
        behaviours: Behaviours,
        seed: int,
        key: str,
        artifact: str,
        shards: tuple[Shard, ...],
        attempt: int = 1,
        kind: str = "read",
        shared: tuple[str, ...] = (),
    ) -> None:
        self.behaviours = behaviours
        self.seed = seed
        self.key = key
        self.artifact = artifact
        self.shards = shards
        #: Which attempt of the item this is (the harness runs a provider error again).
        self.attempt = attempt
        #: ``read`` or ``edit`` (each child also changes the repo: ``Shard.solution``).
        self.kind = kind
        #: Edit fixtures: the files every shard's child also changes (its own line in them).
        self.shared = shared

    @property
    def edits(self) -> bool:
        """Whether the swarm changes the repo (an edit fixture)."""
        return self.kind == "edit"

    def throttled(self) -> bool:
        """Whether this attempt ends as a provider error (``throttled=P``): drawn per
        (seed, item key, attempt), so a retry draws again and a re-run the same."""
        if self.behaviours.throttled is None:
            return False
        import random

        draw = random.Random(f"{self.seed}:{self.key}:attempt-{self.attempt}").random()
        return draw < self.behaviours.throttled

    def resolves(self) -> bool:
        """False when the run must get an answer wrong (``wrong-answer``, or ``flaky`` lost)."""
        if self.behaviours.wrong_answer:
            return False
        if self.behaviours.flaky is None:
            return True
        import random  # only flaky runs draw

        # Deterministic per (seed, item key), so a re-run of the same item behaves the same.
        return random.Random(f"{self.seed}:{self.key}").random() < self.behaviours.flaky

    def prompt_tokens(self) -> int:
        """The input tokens of each of this item's requests: 800-1250, drawn per (seed, item
        key) like the repo-dependent prompt of a real agent, so a run's trials differ in
        cost as real ones do, and a re-run of the same item costs the same."""
        import zlib  # built in: no start-up cost worth a thought

        return 800 + zlib.crc32(f"{self.seed}:{self.key}:prompt".encode()) % 451

    def answers(self) -> list[int | str]:
        """What the swarm reports per shard; when the run does not resolve, the last is wrong."""
        values = [s.expected for s in self.shards]
        if not self.resolves():
            values[-1] = wrong_value(values[-1])
        return values


def wrong_value(value: int | str) -> int | str:
    """A value unequal to ``value`` that still looks like one: ``"3 words"`` -> ``"4 words"``."""
    if isinstance(value, int):
        return value + 1
    import re  # only runs that get an answer wrong need it

    number = re.search(r"\d+", value)
    if number is None:
        return f"wrong-{value}"
    return value[: number.start()] + str(int(number.group()) + 1) + value[number.end() :]


def load_oracle(path: str, repo: str) -> Oracle:
    if os.path.realpath(path).startswith(os.path.realpath(repo) + os.sep):
        raise SimUsageError(f"oracle {path} is inside the repo: the answer key would leak")
    try:
        with open(path, encoding="utf-8") as f:
            data = jsonio.loads(f.read())
    except (OSError, ValueError) as e:
        raise SimUsageError(f"cannot read oracle {path}: {e}") from e
    if not isinstance(data, dict):
        raise SimUsageError(f"oracle {path}: expected a JSON object")
    shards = data.get("shards")
    if not isinstance(shards, list) or not shards:
        raise SimUsageError(f"oracle {path}: 'shards' must be a non-empty list")
    parsed: list[Shard] = []
    for i, s in enumerate(shards):
        ok = (
            isinstance(s, dict)
            and isinstance(s.get("file"), str)
            and isinstance(s.get("worker"), str)
        )
        expected = s.get("expected") if isinstance(s, dict) else None
        if not ok or isinstance(expected, bool) or not isinstance(expected, int | str):
            raise SimUsageError(
                f"oracle {path}: shards[{i}] needs file, worker (str), expected (int|str)"
            )
        parsed.append(
            Shard(
                file=s["file"],
                worker=s["worker"],
                expected=expected,
                owns=_strings(s.get("owns"), f"oracle {path}: shards[{i}].owns"),
                checks=_strings(s.get("checks"), f"oracle {path}: shards[{i}].checks"),
                solution=_solution(s.get("solution"), f"oracle {path}: shards[{i}].solution"),
            )
        )
    kind = data.get("kind", "read")
    if kind not in ("read", "edit"):
        raise SimUsageError(f"oracle {path}: 'kind' must be 'read' or 'edit', got {kind!r}")
    shared = _strings(data.get("shared"), f"oracle {path}: 'shared'")
    artifact, seed, key = data.get("artifact"), data.get("seed", 0), data.get("key", "")
    attempt = data.get("attempt", 1)
    behaviours = data.get("behaviours") or "honest"
    if not isinstance(artifact, str) or not artifact:
        raise SimUsageError(f"oracle {path}: 'artifact' must be a file name")
    if isinstance(seed, bool) or not isinstance(seed, int) or not isinstance(key, str):
        raise SimUsageError(f"oracle {path}: 'seed' must be an int and 'key' a string")
    if not isinstance(behaviours, str):
        raise SimUsageError(f"oracle {path}: 'behaviours' must be a string")
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        raise SimUsageError(f"oracle {path}: 'attempt' must be an integer >= 1")
    oracle = Oracle(
        behaviours=parse_behaviours(behaviours),
        seed=seed,
        key=key,
        artifact=artifact,
        shards=tuple(parsed),
        attempt=attempt,
        kind=kind,
        shared=shared,
    )
    problem = edit_problem(oracle)
    if problem:
        raise SimUsageError(f"oracle {path}: {problem}")
    return oracle


def _strings(value: object, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SimUsageError(f"{what} must be a list of strings")
    return tuple(value)


def _solution(value: object, what: str) -> tuple[Replacement, ...]:
    if value is None:
        return ()
    rows = value if isinstance(value, list) else None
    if rows is None or not all(
        isinstance(r, dict) and all(isinstance(r.get(k), str) for k in ("path", "old", "new"))
        for r in rows
    ):
        raise SimUsageError(f"{what} must be a list of {{path, old, new}} strings")
    return tuple(Replacement(r["path"], r["old"], r["new"]) for r in rows)


def edit_problem(oracle: Oracle) -> str | None:
    """Why the oracle's behaviours cannot play its fixture, or None.

    The edit-only behaviours are refused on a read fixture, and each needs what it bends:
    ``wrong-lane`` a second shard whose owned file it can change, ``clobber`` two shards
    changing one shared file, ``half-done`` a shard that changes a shared file.
    """
    b = oracle.behaviours
    used = [n for n in EDIT_ONLY if b.plan == n or (n == "edit-bash" and b.edit_bash)]
    if not oracle.edits:
        if used:
            return f"{used[0]!r} needs an edit fixture (this one's kind is 'read')"
        return None
    shared = set(oracle.shared)
    if b.plan == "wrong-lane" and not (
        len(oracle.shards) >= 2
        and any(r.path in oracle.shards[1].owns for r in oracle.shards[1].solution)
    ):
        return "'wrong-lane' needs a second shard whose solution changes a file it owns"
    if b.plan == "clobber":
        paths = [{r.path for r in s.solution} & shared for s in oracle.shards]
        if not any(sum(p in ps for ps in paths) >= 2 for p in shared):
            return "'clobber' needs two shards whose solutions change one shared file"
    if b.plan == "half-done" and not any(r.path in shared for r in oracle.shards[-1].solution):
        return "'half-done' needs the last shard's solution to change a shared file"
    return None


class Launch(_Value):
    """One parent run: the CLI's options, the environment it relies on, the oracle."""

    _fields = (
        "socket",
        "cwd",
        "session_dir",
        "model",
        "task",
        "agent_home",
        "ledger_sessions_dir",
        "depth",
        "oracle",
    )
    __slots__ = _fields

    def __init__(
        self,
        socket: str,
        cwd: str,
        session_dir: str,
        model: tuple[str, str],
        task: str,
        agent_home: str,
        ledger_sessions_dir: str,
        depth: int,
        oracle: Oracle,
    ) -> None:
        self.socket = socket
        self.cwd = cwd
        self.session_dir = session_dir
        self.model = model
        self.task = task
        self.agent_home = agent_home
        #: S as the daemon sees it (environment first), before anything was created.
        self.ledger_sessions_dir = ledger_sessions_dir
        self.depth = depth
        self.oracle = oracle


def parse_launch(argv: list[str], env: Mapping[str, str]) -> Launch:
    opts, task = _parse_argv(argv)
    missing = [f for f in VALUE_FLAGS if f not in opts]
    if missing:
        raise SimUsageError(f"missing required option(s): {', '.join(missing)}")
    if opts["--mode"] != "json":
        raise SimUsageError(f"the sim supports only --mode json, got {opts['--mode']!r}")
    provider, model_id = opts["--model"].partition("/")[::2]
    if not provider or not model_id:
        raise SimUsageError(f"--model must be <provider>/<model-id>, got {opts['--model']!r}")
    if not task.strip():
        raise SimUsageError("no task: pass it after '--'")
    socket = os.path.abspath(opts["--daemon-socket"])
    if len(os.fsencode(socket)) > MAX_SOCKET_PATH_BYTES:
        raise SimUsageError(
            f"--daemon-socket path is longer than {MAX_SOCKET_PATH_BYTES} bytes: {socket}"
        )
    cwd = os.path.abspath(opts["--cwd"])
    if not os.path.isdir(cwd):
        raise SimUsageError(f"--cwd is not a directory: {cwd}")
    home = env.get(HOME_VAR)
    if not home:
        raise SimUsageError(f"{HOME_VAR} is not set; refusing to touch the default agent home")
    oracle_path = env.get(ORACLE_VAR)
    if not oracle_path:
        raise SimUsageError(f"{ORACLE_VAR} is not set: the simulated agent needs its oracle file")
    session_dir = os.path.abspath(opts["--session-dir"])
    env_sessions = next((env[v] for v in SESSION_DIR_VARS if env.get(v)), session_dir)
    try:
        depth = max(0, int(env.get(DEPTH_VAR) or 0))
    except ValueError:
        depth = 0
    return Launch(
        socket=socket,
        cwd=cwd,
        session_dir=session_dir,
        model=(provider, model_id),
        task=task,
        agent_home=os.path.abspath(home),
        ledger_sessions_dir=_ledger_spelling(env_sessions),
        depth=depth,
        oracle=load_oracle(oracle_path, cwd),
    )


def session_launch(session: Mapping[str, object], env: Mapping[str, str], socket: str) -> Launch:
    """The parent run of a resident session: a daemon ``create``'s ``config`` (``cwd``,
    ``sessionDir``, ``model``, ``agentDir``) in the worker's environment. The task comes
    later, with the prompt."""
    cwd, session_dir, model = (session.get(k) for k in ("cwd", "sessionDir", "model"))
    if not isinstance(cwd, str) or not os.path.isdir(cwd):
        raise SimUsageError(f"config.cwd is not a directory: {cwd!r}")
    if not isinstance(session_dir, str) or not session_dir:
        raise SimUsageError("config.sessionDir is missing")
    provider, model_id = model.partition("/")[::2] if isinstance(model, str) else ("", "")
    if not provider or not model_id:
        raise SimUsageError(f"config.model must be <provider>/<model-id>, got {model!r}")
    home = session.get("agentDir") or env.get(HOME_VAR)
    if not isinstance(home, str) or not home:
        raise SimUsageError(f"neither config.agentDir nor {HOME_VAR} is set")
    oracle_path = env.get(ORACLE_VAR)
    if not oracle_path:
        raise SimUsageError(f"{ORACLE_VAR} is not set: the simulated agent needs its oracle file")
    session_dir = os.path.abspath(session_dir)
    env_sessions = next((env[v] for v in SESSION_DIR_VARS if env.get(v)), session_dir)
    return Launch(
        socket=socket,
        cwd=os.path.abspath(cwd),
        session_dir=session_dir,
        model=(provider, model_id),
        task="",
        agent_home=os.path.abspath(home),
        ledger_sessions_dir=_ledger_spelling(env_sessions),
        depth=0,  # the supervisor removes RLM_DEPTH from a worker's environment
        oracle=load_oracle(oracle_path, cwd),
    )


def _ledger_spelling(sessions_dir: str) -> str:
    # The product hashes the realpath only if S existed when its ledger was first built.
    if os.path.isdir(sessions_dir):
        return os.path.realpath(sessions_dir)
    return os.path.abspath(sessions_dir)


def _parse_argv(argv: list[str]) -> tuple[dict[str, str], str]:
    opts: dict[str, str] = {}
    words: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            words.extend(argv[i + 1 :])
            break
        if arg.startswith("-"):
            name, has_value, value = arg.partition("=")
            if name not in VALUE_FLAGS:
                raise SimUsageError(f"Unknown option: {name}")
            if not has_value:
                if i + 1 >= len(argv):
                    raise SimUsageError(f"option {name} needs a value")
                i += 1
                value = argv[i]
            opts[name] = value
        else:
            words.append(arg)
        i += 1
    return opts, " ".join(words)
