"""The file changes a prime-agent transcript records (session format 3), as ``FileWrite``s.

prime-agent 0.8.0 offers its model one tool, ``ipython``; a session changes files only from
a cell (``tests/data/real-runs/child-edits/README.md``). A tool call is an assistant
message's ``content`` part ``{"type": "toolCall", "id", "name", "arguments": {"code"}}``;
its result a ``message`` with ``role: "toolResult"``, ``toolCallId``, ``toolName``,
``isError`` and ``details``. What a cell shows:

- the edit skill (``await edit(path=..., old_str=..., new_str=...)``): the result's
  ``details.diffs`` lists every edit that succeeded, ``{path, oldStr, newStr, startLine}``,
  ``path`` absolute and resolved: an exact ``edit`` each;
- ``%%bash`` / ``%%sh`` (cell magics): shell text only: :func:`scorers.writes.shell_writes`;
- ``%%writefile PATH``: the cell's body is the file's whole new text (an exact ``write``;
  ``-a`` appends: ``code``);
- any other cell: Python text, :func:`scorers.writes.code_writes`; its ``!command`` lines
  are shell text.

A diff counts whatever became of its cell (it is an edit the skill made before anything
failed); what a cell's text shows counts only when its result came back and is not an
error: a call that was refused (``Tool edit not found``: a tool 0.8.0 does not have), failed
or never answered (the run was cut short) is not a write. A call by any other tool name is
refused in 0.8.0 and shows nothing. Paths are made relative to the session header's ``cwd``
(the thread's working directory, the item's repo). A diff, call or result whose fields we
read is ill-typed is skipped and counted.
"""

from __future__ import annotations

import json
import re
from typing import Final

from scorers.records import FileWrite, WriteHow
from scorers.writes import code_writes, repo_relative, shell_writes

#: The one tool a prime-agent 0.8.0 session has.
IPYTHON: Final = "ipython"
#: Cell magics whose body is shell text (IPython's ``%%bash``, ``%%sh``, ``%%script bash``).
SHELL_MAGIC: Final = re.compile(r"%%(?:bash|sh|script\s+(?:ba|z)?sh)\b")
#: ``%%writefile [-a|--append] PATH``: the body is written to PATH.
WRITEFILE_MAGIC: Final = re.compile(r"%%writefile\s+(?P<append>(?:-a|--append)\s+)?(?P<path>\S+)")


#: A write a cell's text shows: the path as the cell spells it, how, and the new text when
#: the cell holds it (``%%writefile``).
CellWrite = tuple[str, WriteHow, str | None]


def _cell_writes(code: str) -> list[CellWrite]:
    """What a cell's text writes, in order."""
    first, _, body = code.lstrip("\n").partition("\n")
    first = first.strip()
    if SHELL_MAGIC.match(first):
        return [(path, how, None) for path, how in shell_writes(body)]
    writefile = WRITEFILE_MAGIC.match(first)
    if writefile:
        if writefile["append"]:
            return [(writefile["path"], "code", None)]
        return [(writefile["path"], "write", body)]
    if first.startswith("%%"):  # another cell magic (%%time, %%capture): the body is Python
        code = body
    python: list[str] = []
    shell: list[str] = []
    for line in code.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("!"):
            shell.append(stripped[1:])
        else:
            python.append(line)
    found: list[CellWrite] = [(path, how, None) for path, how in code_writes("\n".join(python))]
    for command in shell:
        found += [(path, how, None) for path, how in shell_writes(command)]
    return found


def _code(arguments: object) -> str | None:
    """The cell text of an ``ipython`` call's arguments (an object, or its JSON text)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    code = arguments.get("code") if isinstance(arguments, dict) else None
    return code if isinstance(code, str) else None


class WriteLog:
    """Accumulates one thread's file changes from its transcript's entries, in order.

    ``child_id`` is the writer every change is credited to (``None``: the parent).
    Feed the header to :meth:`header` and every ``message`` entry to :meth:`message`.
    """

    __slots__ = ("calls", "child_id", "cwd", "skipped", "writes")

    def __init__(self, child_id: str | None) -> None:
        self.child_id = child_id
        self.cwd: str | None = None
        #: Open ``ipython`` calls: tool call id -> cell text.
        self.calls: dict[str, str] = {}
        self.writes: list[FileWrite] = []
        #: Ill-typed calls, results and diffs that were skipped.
        self.skipped = 0

    def header(self, value: dict[str, object]) -> None:
        cwd = value.get("cwd")
        if isinstance(cwd, str) and cwd:
            self.cwd = cwd

    def message(self, entry: dict[str, object], message: dict[str, object]) -> bool:
        """Take one ``message`` entry; ``False`` when a field we read was ill-typed."""
        role = message.get("role")
        if role == "assistant":
            return self._calls(message.get("content"))
        if role == "toolResult":
            return self._result(entry, message)
        return True

    def _calls(self, content: object) -> bool:
        if not isinstance(content, list):
            return True  # plain text content: no tool call
        ok = True
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "toolCall":
                continue
            call_id, name = part.get("id"), part.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                ok = False
            elif name == IPYTHON:
                code = _code(part.get("arguments"))
                if code is None:
                    ok = False
                else:
                    self.calls[call_id] = code
        if not ok:
            self.skipped += 1
        return ok

    def _result(self, entry: dict[str, object], message: dict[str, object]) -> bool:
        call_id = message.get("toolCallId")
        if not isinstance(call_id, str):
            self.skipped += 1
            return False
        code = self.calls.pop(call_id, None)
        if message.get("toolName") != IPYTHON:
            return True  # refused in 0.8.0 ("Tool edit not found"): nothing changed
        at = entry.get("timestamp")
        stamp = at if isinstance(at, str) else None
        details = message.get("details")
        diffs = details.get("diffs") if isinstance(details, dict) else None
        ok, exact = self._diffs(diffs, stamp)
        failed = message.get("isError") is not False or (
            isinstance(details, dict) and details.get("status") == "error"
        )
        if code is None or failed:
            return ok
        for path, how, new in _cell_writes(code):
            relative = repo_relative(path, self.cwd)
            if not relative or (how != "delete" and relative in exact):
                continue  # a diff of this cell already holds the change itself
            self.writes.append(
                FileWrite(self.child_id, relative, how, new is not None, None, new, stamp)
            )
        return ok

    def _diffs(self, diffs: object, at: str | None) -> tuple[bool, set[str]]:
        """Record a result's diffs: whether they were well-typed, and the paths edited."""
        paths: set[str] = set()
        if diffs is None:
            return True, paths  # absent when the cell made no successful edit
        if not isinstance(diffs, list):
            self.skipped += 1
            return False, paths
        ok = True
        for diff in diffs:
            path = diff.get("path") if isinstance(diff, dict) else None
            old = diff.get("oldStr") if isinstance(diff, dict) else None
            new = diff.get("newStr") if isinstance(diff, dict) else None
            if not (isinstance(path, str) and path and isinstance(old, str)):
                ok = False
            elif isinstance(new, str):
                relative = repo_relative(path, self.cwd)
                paths.add(relative)
                self.writes.append(FileWrite(self.child_id, relative, "edit", True, old, new, at))
            else:
                ok = False
        if not ok:
            self.skipped += 1
        return ok, paths

    def result(self) -> tuple[FileWrite, ...]:
        return tuple(self.writes)
