"""File writes: the ``edit``, ``write``, ``apply_patch`` and ``bash`` tool parts of each session.

What the real client 1.18.33 records (``part.data`` with ``type`` = ``tool``; checked
against its own runs, ``tests/data/opencode-edit-runs``). An Anthropic model is offered
``edit`` and ``write`` (a model id with ``gpt-`` in it, other than ``gpt-4`` and ``oss``
ones, gets ``apply_patch`` instead), every model ``bash``; a subagent has the same tools
less ``task``. No tool asks for a ``read`` first.

* ``edit``: ``state.input`` = ``{filePath, oldString, newString}`` (``filePath``
  absolute, as the model gave it; ``replaceAll`` optional), ``state.metadata.diff`` and
  ``filediff`` the unified diff. An empty ``oldString`` writes ``newString`` as the whole
  file (a write).
* ``write``: ``state.input`` = ``{filePath, content}``; ``metadata.exists`` says whether
  the file was there before.
* ``apply_patch``: ``state.input.patchText`` (``*** Begin Patch`` ... ``*** End Patch``);
  ``state.metadata.files`` one entry per file: ``filePath`` (absolute), ``type``
  ``update`` / ``add`` / ``delete`` / ``move`` (then ``movePath`` is where it went).
* ``bash``: ``state.input`` = ``{command, description, workdir?, timeout?}``;
  ``metadata.exit`` its exit status. A command that exits non-zero is still ``completed``.

``state.status`` is ``completed`` when the tool did its work and ``error`` when it refused
or failed (``Could not find oldString in the file...``, ``apply_patch verification
failed...``): an error part changed nothing and is not a write. A ``bash`` command that
ran is read whatever its exit status: ``echo x >> f; exit 3`` wrote ``f`` (Claude Code's
and Codex's parsers read a command that ran the same way); ``pending`` / ``running`` parts
never finished.

Paths are made repo-relative against the working directory the part's own assistant
message records (``data.path.cwd``: the repo the run worked in).
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from scorers.opencode.store import MessageRow, PartRow
from scorers.records import FileWrite, WriteHow
from scorers.writes import repo_relative, shell_writes

#: The tools whose completed parts write files.
EDIT_TOOL: Final = "edit"
WRITE_TOOL: Final = "write"
#: ``patch`` is the tool's name before ``apply_patch`` replaced it; the input is the same.
PATCH_TOOLS: Final = frozenset({"apply_patch", "patch"})
SHELL_TOOL: Final = "bash"

#: The file headers of a patch text, for a part whose metadata lists no files.
_PATCH_HEADER: Final = re.compile(
    r"^\*\*\* (?P<op>Add|Update|Delete) File: (?P<path>.+?)\s*$"
    r"|^\*\*\* Move to: (?P<to>.+?)\s*$",
    re.M,
)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _map(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _iso(ms: object) -> str | None:
    if not isinstance(ms, int) or isinstance(ms, bool):
        return None
    try:
        moment = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds")


def message_cwds(messages: Iterable[MessageRow]) -> dict[str, str]:
    """Message id -> the working directory its assistant message records."""
    found: dict[str, str] = {}
    for message in messages:
        cwd = _str(_map(message.data.get("path")).get("cwd"))
        if cwd:
            found[message.id] = cwd
    return found


def _patch_files(state: Mapping[str, object]) -> Iterator[tuple[str, WriteHow]]:
    """Each file a completed patch changed (``patch``) or removed or moved away
    (``delete``), as its metadata lists them; else as its text's headers name them."""
    files = _map(state.get("metadata")).get("files")
    if isinstance(files, list) and files:
        for entry in map(_map, files):
            path, kind = _str(entry.get("filePath")), entry.get("type")
            if not path:
                continue
            if kind == "delete":
                yield path, "delete"
            elif kind == "move":
                yield path, "delete"
                moved = _str(entry.get("movePath"))
                if moved:
                    yield moved, "patch"
            else:
                yield path, "patch"
        return
    text = _str(_map(state.get("input")).get("patchText")) or ""
    moved_from: str | None = None
    for match in _PATCH_HEADER.finditer(text):
        if match["to"]:
            if moved_from is not None:
                yield moved_from, "delete"
                yield match["to"], "patch"
                moved_from = None
            continue
        if moved_from is not None:
            yield moved_from, "patch"
            moved_from = None
        if match["op"] == "Delete":
            yield match["path"], "delete"
        elif match["op"] == "Update":
            moved_from = match["path"]  # a "Move to:" may follow
        else:
            yield match["path"], "patch"
    if moved_from is not None:
        yield moved_from, "patch"


def _shell_files(state: Mapping[str, object], cwd: str | None) -> Iterator[tuple[str, WriteHow]]:
    """The files a completed ``bash`` command's text writes or removes (whatever its exit
    status: a command that ran may have written before it failed), seen from the command's
    own folder (``workdir``: absolute, or below the session's)."""
    tool_input = _map(state.get("input"))
    command = _str(tool_input.get("command")) or ""
    workdir = _str(tool_input.get("workdir")) or ""
    for path, how in shell_writes(command):
        if workdir and not path.startswith(("/", "~")):
            path = posixpath.join(workdir, path)
        if cwd and not path.startswith(("/", "~")):
            path = posixpath.join(cwd, path)
        yield path, how


def part_writes(part: PartRow, cwd: str | None, child_id: str | None) -> list[FileWrite]:
    """The writes one tool part records (none for any other part, or a failed call).
    ``cwd`` is the session's working directory; ``child_id`` the writer (None: the
    parent)."""
    data = part.data
    if data.get("type") != "tool":
        return []
    state = _map(data.get("state"))
    if state.get("status") != "completed":
        return []
    tool = data.get("tool")
    tool_input = _map(state.get("input"))
    times = _map(state.get("time"))
    at = _iso(times.get("end")) or _iso(times.get("start")) or _iso(part.created)

    def write(path: str, how: WriteHow, **change: str | None) -> FileWrite:
        exact = how in ("edit", "write")
        return FileWrite(child_id, repo_relative(path, cwd), how, exact, at=at, **change)

    if tool in (EDIT_TOOL, WRITE_TOOL):
        path = _str(tool_input.get("filePath"))
        if not path:
            return []
        if tool == WRITE_TOOL:
            return [write(path, "write", new=_str(tool_input.get("content")) or "")]
        old = _str(tool_input.get("oldString")) or ""
        new = _str(tool_input.get("newString")) or ""
        if not old:  # an empty oldString makes newString the whole file
            return [write(path, "write", new=new)]
        return [write(path, "edit", old=old, new=new)]
    if tool in PATCH_TOOLS:
        return [write(path, how) for path, how in _patch_files(state)]
    if tool == SHELL_TOOL:
        return [write(path, how) for path, how in _shell_files(state, cwd)]
    return []


def session_writes(
    parts: Iterable[PartRow], cwds: Mapping[str, str], writers: Mapping[str, str | None]
) -> tuple[FileWrite, ...]:
    """Every write the parts of the run's sessions record, in record order. ``writers``
    maps each session of the run to its writer (None: the root, the parent); parts of
    other sessions are not the run's."""
    found: list[FileWrite] = []
    for part in parts:
        if part.session_id not in writers:
            continue
        found += part_writes(part, cwds.get(part.message_id), writers[part.session_id])
    return tuple(found)


__all__ = ["message_cwds", "part_writes", "session_writes"]
