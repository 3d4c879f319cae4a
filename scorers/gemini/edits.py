"""The files one Gemini CLI thread changed, as its own chat record shows them.

Gemini CLI (0.61.0) changes files with two tools, each recorded on the ``gemini`` message
that called it: ``replace{file_path, instruction, old_string, new_string[, allow_multiple |
expected_replacements]}`` (an exact replacement: an ``edit``) and ``write_file{file_path,
content}`` (whole new content: a ``write``). ``file_path`` may be absolute (below the
workspace) or relative to it; the call's ``resultDisplay.filePath`` is the absolute path
the client resolved. Only a call whose status is ``success`` changed the file: a refused or
failed one (old text not found, bad parameters) is no write. Paths become repo-relative
against the thread's workspace directory.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Final

from scorers.gemini.chat import Chat, ToolCall, string
from scorers.records import FileWrite, WriteHow
from scorers.writes import repo_relative

#: The tools that change a file, and how.
EDIT_TOOLS: Final[Mapping[str, WriteHow]] = {"replace": "edit", "write_file": "write"}
#: The workspace a parent's record names (its first context message lists it).
_WORKSPACE: Final = re.compile(r"\*\*Workspace Directories:\*\*\s*\n\s*-\s*(?P<dir>/[^\n]*)")


def workspace(chat: Chat) -> str | None:
    """The thread's working directory: a subagent's first ``directories`` entry, else the
    workspace its context message names."""
    if chat.directories:
        return chat.directories[0]
    for message in chat.messages[:3]:
        found = _WORKSPACE.search(message.text)
        if found:
            return found["dir"].strip()
    return None


def _path(call: ToolCall, cwd: str | None) -> str:
    given = string(call.args.get("file_path")) or ""
    display = call.display if isinstance(call.display, Mapping) else {}
    resolved = string(display.get("filePath"))
    if resolved is not None and resolved.startswith("/"):
        return repo_relative(resolved, cwd)
    if cwd is not None and given and not given.startswith("/"):
        given = posixpath.normpath(posixpath.join(cwd, given))
    return repo_relative(given, cwd)


def call_write(call: ToolCall, child_id: str | None, cwd: str | None) -> FileWrite | None:
    """The change one successful edit tool call made, or None."""
    how = EDIT_TOOLS.get(call.name)
    if how is None or call.status != "success":
        return None
    path = _path(call, cwd)
    if not path:
        return None
    if how == "edit":
        old, new = call.args.get("old_string"), call.args.get("new_string")
        exact = isinstance(old, str) and isinstance(new, str)
        return FileWrite(
            child_id,
            path,
            how,
            exact,
            old if isinstance(old, str) else None,
            new if isinstance(new, str) else None,
            call.at,
        )
    content = call.args.get("content")
    exact = isinstance(content, str)
    return FileWrite(child_id, path, how, exact, None, content if exact else None, call.at)


def chat_writes(chat: Chat, child_id: str | None) -> tuple[FileWrite, ...]:
    """Every change of a file ``chat``'s thread made, in record order, as ``child_id``'s
    (None: the parent's)."""
    cwd = workspace(chat)
    found = []
    for message in chat.messages:
        for call in message.calls:
            write = call_write(call, child_id, cwd)
            if write is not None:
                found.append(write)
    return tuple(found)


__all__ = ["EDIT_TOOLS", "call_write", "chat_writes", "workspace"]
