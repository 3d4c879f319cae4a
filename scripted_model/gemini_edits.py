"""How a scripted Gemini CLI thread changes files: with the client's own ``replace``, under
an edit lock the server keeps.

Gemini CLI 0.61.0's ``replace {file_path, instruction, old_string, new_string}`` reads the
file, replaces the one occurrence of ``old_string`` and writes the file back, with awaits
between: its subagents run in one process at once, so two children replacing in one shared
file at the same moment can lose one's change. And an ``old_string`` it cannot find is not
a plain refusal: the client then asks a model of its own (``llm-edit-fixer``, a request to
another model id) to repair the edit. A selftest script must reach one verdict whatever the
timing, and the client offers a subagent no shell to take a lock with (the worker's tools
are ``read_file``, ``list_directory``, ``glob``, ``grep_search``, ``replace``,
``write_file``), so the server keeps the lock: an answer that changes files (or reads one
it is about to change) is sent only once its thread holds its item's lock
(:class:`EditLocks`), and the thread keeps it until the server answers it with anything
else. The client never sees the lock; it only sees answers that wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from scripted_model.codex_edits import comment_line
from scripted_model.oracle import Edit

#: The longest a thread waits for its item's edit lock before it takes it over: a holder
#: the client stopped (its run torn down) never asks again to give it back. A holder keeps
#: it for one or two model turns (milliseconds of tool work each), so a minute is far more
#: than every child of an item takes on a loaded machine.
LOCK_WAIT_S: Final = 60.0
#: How often a waiting thread looks again (and whether the server stops).
LOCK_POLL_S: Final = 0.05
#: What ``replace``'s result starts with when it changed the file.
REPLACED: Final = "Successfully modified file"
#: The comment ``edit-wrong-lane``'s child leaves in a file another shard owns.
TRESPASS_NOTE: Final = "changed by another shard's worker"


class EditLocks:
    """One edit lock per item (its model and working directory), held by one thread (its
    conversation key) at a time."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._holders: dict[str, str] = {}

    def holder(self, item: str) -> str | None:
        with self._cond:
            return self._holders.get(item)

    def acquire(
        self,
        item: str,
        thread: str,
        timeout: float = LOCK_WAIT_S,
        stopping: Callable[[], bool] = lambda: False,
    ) -> bool:
        """Take ``item``'s lock for ``thread`` (at once if it holds it already); after
        ``timeout`` take it over from its silent holder. Whether it came free in time."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._holders.get(item) not in (None, thread):
                left = deadline - time.monotonic()
                if left <= 0 or stopping():
                    self._holders[item] = thread
                    return False
                self._cond.wait(min(left, LOCK_POLL_S))
            self._holders[item] = thread
            return True

    def release(self, item: str, thread: str) -> None:
        """Give ``item``'s lock back, if ``thread`` holds it."""
        with self._cond:
            if self._holders.get(item) == thread:
                del self._holders[item]
                self._cond.notify_all()


def absolute(cwd: str | None, path: str) -> str:
    """``path`` (repo-relative) as the client's rules ask for it: absolute, below the
    thread's working directory (relative when it is not known)."""
    return f"{cwd.rstrip('/')}/{path}" if cwd else path


def replace_args(cwd: str | None, edit: Edit) -> dict[str, Any]:
    """``replace``'s arguments for one replacement of a shard's honest change."""
    return {
        "file_path": absolute(cwd, edit.path),
        "instruction": f"Make the ticket's change in {edit.path}: replace the quoted text.",
        "old_string": edit.old,
        "new_string": edit.new,
    }


def trespass_args(cwd: str | None, path: str, text: str) -> dict[str, Any] | None:
    """A ``replace`` that adds a comment line to ``path`` (read as ``text``) after its last
    line that occurs once in it: a harmless change to a file another shard owns (its checks
    still pass). None: the file has no comments or no such line."""
    note = comment_line(path, TRESPASS_NOTE)
    if note is None:
        return None
    for line in reversed(text.split("\n")):
        if line.strip() and text.count(line) == 1:
            return {
                "file_path": absolute(cwd, path),
                "instruction": "Add a note after the last line.",
                "old_string": line,
                "new_string": f"{line}\n{note}",
            }
    return None


def pending(edits: Sequence[Edit], tried: Sequence[Mapping[str, Any]]) -> list[Edit]:
    """The replacements of ``edits`` the thread has not asked for yet (``tried``: the
    arguments of its earlier ``replace`` calls). Each is asked for once: under the lock
    its old text is there unless the thread's own earlier call made it."""
    done = {(str(a.get("old_string")), str(a.get("new_string"))) for a in tried}
    return [e for e in edits if (e.old, e.new) not in done]


__all__ = [
    "LOCK_WAIT_S",
    "REPLACED",
    "TRESPASS_NOTE",
    "EditLocks",
    "absolute",
    "pending",
    "replace_args",
    "trespass_args",
]
