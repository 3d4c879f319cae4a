"""The files one Codex thread changed, as its own rollout records them.

Codex (0.171.0) changes files two ways, and its rollout keeps both:

* a patch (the ``apply_patch`` tool, or a shell command Codex reads as one): Codex records
  what it applied as a ``FileChange`` item, every file by absolute path with ``add`` (and
  the content written), ``delete`` or ``update`` (and ``move_path`` when the file was
  renamed). An added file is a whole write (``write``, exact: the content is the record's),
  a deleted one a ``delete``, an updated one a ``patch``, a renamed one a ``delete`` of the
  old path and a ``patch`` of the new. A patch that did not apply leaves no such item, so
  it is no write;
* a shell command (``exec_command``): only its text is recorded, so the files it writes are
  read from that text (:func:`scorers.writes.shell_writes`), relative to where it ran. A
  command that ran counts whatever its exit code: what it wrote before it failed stays
  written, so ``echo x >> f; false`` cannot hide a write. One that never ran (refused
  before it started) is no write.

Paths become repo-relative against the thread's working directory (the item's repo).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from scorers.codex.thread import CommandRun, PatchApplied, Thread
from scorers.records import FileWrite
from scorers.writes import repo_relative, shell_writes


def _patch_writes(
    change: PatchApplied, child_id: str | None, cwd: str | None
) -> Iterator[FileWrite]:
    for path, kind, content, moved_to in change.files:
        where = repo_relative(path, cwd)
        if kind == "add":
            yield FileWrite(child_id, where, "write", True, new=content, at=change.at)
        elif kind == "delete":
            yield FileWrite(child_id, where, "delete", at=change.at)
        elif moved_to is not None:
            yield FileWrite(child_id, where, "delete", at=change.at)
            yield FileWrite(child_id, repo_relative(moved_to, cwd), "patch", at=change.at)
        else:
            yield FileWrite(child_id, where, "patch", at=change.at)


def _command_writes(run: CommandRun, child_id: str | None, cwd: str | None) -> Iterator[FileWrite]:
    if not run.ran:
        return
    # A command may run elsewhere than the thread (``exec_command``'s ``workdir``).
    ran_in = run.cwd if run.cwd is None else posixpath.join(cwd or "", run.cwd)
    for path, how in shell_writes(run.command):
        if ran_in is not None and not path.startswith(("/", "~")):
            path = posixpath.normpath(posixpath.join(ran_in, path))
        yield FileWrite(child_id, repo_relative(path, cwd), how, at=run.at)


def thread_writes(thread: Thread, child_id: str | None) -> tuple[FileWrite, ...]:
    """Every change of a file ``thread`` made, in record order, as ``child_id``'s (None:
    the parent's)."""
    writes: list[FileWrite] = []
    for change in thread.changes:
        if isinstance(change, PatchApplied):
            writes += _patch_writes(change, child_id, thread.cwd)
        else:
            writes += _command_writes(change, child_id, thread.cwd)
    return tuple(writes)


__all__ = ["thread_writes"]
