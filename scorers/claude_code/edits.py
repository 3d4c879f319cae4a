"""The file changes one Claude Code transcript records (the parent's or a subagent's).

A change is a ``tool_use`` block in an assistant record (its ``input``) answered by a
``tool_result`` block, with the same ``tool_use_id``, in a later user record. What 2.1.332
writes there (captured in tests/data/claude-code-runs/edit-*):

* ``Edit {file_path, old_string, new_string, replace_all}``: an exact replacement. The
  parent's result record also carries ``toolUseResult`` ``{filePath, oldString, newString,
  originalFile, structuredPatch, replaceAll, userModified}`` (the text really replaced, read
  first); a subagent's success carries no ``toolUseResult``. ``MultiEdit {file_path,
  edits: [{old_string, new_string}]}`` (older clients) is one replacement per edit.
* ``Write {file_path, content}``: the whole new text (``toolUseResult.type`` ``create`` or
  ``update`` where present).
* ``NotebookEdit {notebook_path, ...}``: a change of the notebook, not an exact one.
* ``Bash {command}``: only the command; :func:`scorers.writes.shell_writes` reads the files
  it writes or removes.

A refused or failed call is not a write: its ``tool_result`` has ``is_error: true`` (``<tool_use_error>String
to replace not found ...``, "File has not been read yet", "File content has changed since it
was last read", "Permission to use Bash has been denied", each leaving the file as it was),
and so is a change held for review (``toolUseResult.staged``). A ``Bash`` command is the
exception: ``is_error`` also marks one that ran and exited non-zero ("Exit code 3",
``permissionDecision.decision`` ``accept``), and what it wrote before it failed stays
written (``echo x >> f; exit 3`` did), so a command that ran counts whatever its exit. A
call with no result (the thread was torn down mid-call) is not known to have run and is not
counted.

Paths are made repo-relative against the ``cwd`` the tool_use record carries (the item's
repo); ``child_id`` is left ``None`` here: the evidence names the subagent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from scorers.records import FileWrite, WriteHow
from scorers.writes import repo_relative, shell_writes

#: Tools whose input names the file they change, and how they change it.
FILE_TOOLS: Final[Mapping[str, WriteHow]] = {
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
}
#: Tools that run a shell command (its text names what it writes).
SHELL_TOOLS: Final = frozenset({"Bash"})
#: How a Bash result that ran and exited non-zero begins.
EXIT_CODE: Final = "Exit code "


@dataclass(frozen=True, slots=True)
class _Use:
    name: str
    input: Mapping[str, object]
    cwd: str | None
    at: str | None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def block_text(content: object) -> str:
    """The text of a message's or tool result's content: a string, or its text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
        )
    return ""


class WriteLog:
    """Collects the writes of one transcript, fed its records in file order."""

    def __init__(self) -> None:
        self._uses: dict[str, _Use] = {}
        self.writes: list[FileWrite] = []

    def assistant(self, record: Mapping[str, object], content: object) -> None:
        """Remember the write and shell tool calls of an assistant record."""
        cwd, at = _str(record.get("cwd")), _str(record.get("timestamp"))
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            name = _str(block.get("name")) or ""
            use_id = _str(block.get("id"))
            tool_input = block.get("input")
            if (
                use_id
                and isinstance(tool_input, dict)
                and (name in FILE_TOOLS or name in SHELL_TOOLS)
            ):
                self._uses[use_id] = _Use(name, tool_input, cwd, at)

    def user(self, record: Mapping[str, object], content: object) -> None:
        """Record the writes of the calls a user record's tool results answer."""
        blocks = [
            b
            for b in (content if isinstance(content, list) else ())
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        # One record answers one call (2.1.332); with several, whose toolUseResult is unknown.
        outcome = record.get("toolUseResult") if len(blocks) == 1 else None
        outcome = outcome if isinstance(outcome, dict) else {}
        decision = record.get("permissionDecision")
        accepted = isinstance(decision, dict) and decision.get("decision") == "accept"
        for block in blocks:
            use = self._uses.pop(str(block.get("tool_use_id")), None)
            if use is None or not _ran(use, block, outcome, accepted):
                continue
            at = _str(record.get("timestamp")) or use.at
            cwd = use.cwd or _str(record.get("cwd"))
            self.writes += _writes(use, outcome, cwd, at)


def _ran(
    use: _Use, block: Mapping[str, object], outcome: Mapping[str, object], accepted: bool
) -> bool:
    if outcome.get("staged") is True:
        return False  # held for review: the file is unchanged
    if block.get("is_error") is not True:
        return True
    return use.name in SHELL_TOOLS and (
        accepted or block_text(block.get("content")).startswith(EXIT_CODE)
    )


def _writes(
    use: _Use, outcome: Mapping[str, object], cwd: str | None, at: str | None
) -> list[FileWrite]:
    if use.name in SHELL_TOOLS:
        command = _str(use.input.get("command")) or ""
        return [
            FileWrite(None, repo_relative(path, cwd), how, at=at)
            for path, how in shell_writes(command)
            if repo_relative(path, cwd)
        ]
    how = FILE_TOOLS[use.name]
    key = "notebook_path" if use.name == "NotebookEdit" else "file_path"
    path = repo_relative(_str(use.input.get(key)) or "", cwd)
    if not path:
        return []
    if use.name == "Write":
        content = _str(use.input.get("content"))
        return [FileWrite(None, path, how, content is not None, None, content, at)]
    if use.name == "Edit":
        old = _str(outcome.get("oldString")) or _str(use.input.get("old_string"))
        new = _str(outcome.get("newString"))
        new = new if new is not None else _str(use.input.get("new_string"))
        exact = old is not None and new is not None
        return [FileWrite(None, path, how, exact, old, new, at)]
    if use.name == "MultiEdit":
        edits = use.input.get("edits")
        found = []
        for edit in edits if isinstance(edits, list) else ():
            if isinstance(edit, dict):
                old, new = _str(edit.get("old_string")), _str(edit.get("new_string"))
                exact = old is not None and new is not None
                found.append(FileWrite(None, path, how, exact, old, new, at))
        return found or [FileWrite(None, path, how, at=at)]
    return [FileWrite(None, path, how, at=at)]  # NotebookEdit: a cell, not the file's text


__all__ = ["FILE_TOOLS", "SHELL_TOOLS", "WriteLog", "block_text"]
