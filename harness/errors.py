"""One error hierarchy for the library; the CLI translates it to exit codes at one boundary."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Iterable
from typing import NoReturn

#: Documented exit codes (README, ``--help``).
EXIT_RESOLVED = 0  # every item resolved (or, for non-run commands, success)
EXIT_UNRESOLVED = 1  # some item unresolved (or a regression with --fail-on regression)
EXIT_USAGE = 2  # bad usage or input: nothing ran
EXIT_INFRA = 3  # infrastructure error and nothing unresolved, or the circuit breaker tripped
EXIT_BUDGET = 4  # the budget (--max-cost, --max-tokens) ran out: items left not started
EXIT_INTERRUPTED = 130  # Ctrl-C / SIGTERM: report written, marked interrupted

#: What ``--help`` says of each exit code, a line or two each (kept under 72 characters so
#: the help fits an 80-column terminal); docs/reference/exit-codes.md has the long form.
EXIT_MEANINGS: dict[int, tuple[str, ...]] = {
    EXIT_RESOLVED: ("every item resolved (or the command succeeded)",),
    EXIT_UNRESOLVED: ("an item unresolved, or a --fail-on gate failed (regression, cost)",),
    EXIT_USAGE: ("bad usage or input: nothing ran",),
    EXIT_INFRA: (
        "infrastructure error (agent missing, launch failure, endpoint unreachable)",
        "and nothing unresolved; or the circuit breaker (--max-provider-errors)",
        "stopped the run (K items in a row lost to the provider, or a refused key)",
    ),
    EXIT_BUDGET: ("the budget (--max-cost, --max-tokens) ran out: items left not started",),
    EXIT_INTERRUPTED: ("interrupted (Ctrl-C, SIGTERM): the report is written, marked so",),
}


class HarnessError(Exception):
    """Base of every expected failure; ``exit_code`` is what the CLI exits with."""

    exit_code = EXIT_USAGE


class UsageError(HarnessError):
    """Bad options or configuration (e.g. ``harness.yaml``)."""


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``; did you mean X?`` when one of ``known`` is close to a mistyped ``word``, else
    "" (said right after the word, before the list of what is known)."""
    import difflib  # only a mistyped name needs it

    close = difflib.get_close_matches(word, list(known), n=1)
    return f"; did you mean {close[0]}?" if close else ""


class FixtureError(HarnessError):
    """A fixture directory or manifest is invalid. The message names the file and field."""

    def __init__(self, path: str, message: str, field: str | None = None) -> None:
        self.path = path
        self.field = field
        where = f"{path}: {field}: " if field else f"{path}: "
        super().__init__(where + message)


class BundleError(HarnessError):
    """An item directory or report cannot be read for re-scoring or reporting."""


class AgentLaunchError(HarnessError):
    """The agent could not be started (missing, not executable, exec failed)."""

    exit_code = EXIT_INFRA


class ResumeMismatchError(HarnessError):
    """``--resume`` was asked to continue a run whose fixtures or options differ."""


class NotStarted(Exception):
    """The run was stopped before this item got a slot: it is reported as not started
    (control flow between the scheduler and an item, never shown to a user)."""


class Withdrawn(NotStarted):
    """The work source withdrew this item before its agent launched (a ``--trials auto``
    cell decided meanwhile): it is no item at all, neither a result nor not started."""


class ExecutorError(HarnessError):
    """The executor could not run an item (a cluster unreachable, a node lost mid-item)."""

    exit_code = EXIT_INFRA


#: What a full or unwritable disk raises: no retry helps until the user frees space (or
#: makes the runs dir writable again).
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})
#: What writing below a directory that was removed raises.
GONE_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR})


def exit_interrupted() -> NoReturn:
    """Leave with exit code 130 after a Ctrl-C before a run's own handlers are in place.

    ``sys.exit(130)`` from such a handler still ended the process by SIGINT (exit -2) now
    and then: in a sweep of Ctrl-C at 60 to 110 ms after start, 13 of 24 (CPython 3.11,
    signal during the CLI's imports). So the streams are flushed and the process leaves at
    once; nothing is left to clean up at this point (the command's own clean-up ran as the
    interrupt unwound it).
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(EXIT_INTERRUPTED)


def is_storage_error(exc: BaseException, within: str | os.PathLike[str] | None = None) -> bool:
    """Whether ``exc`` says the disk is full (or over quota, or not writable), or (with
    ``within``: the run's dir) that a path below ``within`` is gone: the dir was removed."""
    if not isinstance(exc, OSError):
        return False
    if exc.errno in STORAGE_ERRNOS:
        return True
    if within is None or exc.errno not in GONE_ERRNOS or not exc.filename:
        return False
    root = os.fspath(within).rstrip("/") + "/"
    return (os.fspath(exc.filename) + "/").startswith(root) and not os.path.isdir(within)


def storage_cause(exc: OSError) -> str:
    """``no space left on device writing <file>``: the cause of a storage error in words."""
    if exc.errno in GONE_ERRNOS:
        return f"the run directory was removed mid-run (writing {exc.filename})"
    what = (exc.strerror or "cannot write").lower()
    return f"{what} writing {exc.filename}" if exc.filename else what


class StorageError(HarnessError):
    """The disk is full (or read-only) where the harness must write; the message names the
    file and says what was kept and how to go on."""

    exit_code = EXIT_INFRA
