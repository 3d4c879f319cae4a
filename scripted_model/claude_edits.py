"""How a scripted Claude Code thread changes files: with the client's own ``Read`` and ``Edit``.

Claude Code 2.1.332 refuses an ``Edit`` of a file the thread has not ``Read`` ("File has not
been read yet"), and one whose file changed on disk since that read ("File has been modified
since read"): children editing one shared file at once hit the second. So each pending
replacement goes out as a ``Read`` of its file and then the ``Edit`` in the same message
(the client runs the read first: reads may run together, an edit runs alone and in order),
and a refused edit is tried again the same way on the next turn, up to
:data:`MAX_EDIT_TRIES`. An edit whose old text is gone ("String to replace not found") is
not tried again: another thread made it, or the file never held it.

Each input is what the tool's schema asks: ``Read {file_path}``, ``Edit {file_path,
old_string, new_string}`` with an absolute path (the thread's working directory, from the
system prompt, joined with the repo-relative path).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from scripted_model.messages_conversation import MessagesConversation
from scripted_model.oracle import Edit

#: Tries of one replacement before the thread gives up on it: a refusal because another
#: child changed the shared file between this thread's read and edit costs one more try;
#: with dozens of children on one file a few in a row are possible, never many (the window
#: between the read and the edit of one message is milliseconds).
MAX_EDIT_TRIES: Final = 8
#: The client's refusal when the old text is not in the file.
NOT_FOUND: Final = "String to replace not found in file"


def absolute(cwd: str | None, path: str) -> str:
    """``path`` (repo-relative) as the tools want it: absolute, below the thread's cwd."""
    return f"{cwd.rstrip('/')}/{path}" if cwd else path


def pending_edits(conv: MessagesConversation, edits: Sequence[Edit]) -> list[Edit]:
    """The replacements of ``edits`` this thread has still to make: none of its ``Edit``
    calls for it succeeded, its last one was not refused for a missing old text, and it has
    tries left."""
    results = {r.tool_use_id: r for r in conv.tool_results}
    pending = []
    for edit in edits:
        path = absolute(conv.cwd, edit.path)
        tries = [
            results.get(u.id)
            for u in conv.uses_of("Edit")
            if u.input.get("file_path") == path and u.input.get("old_string") == edit.old
        ]
        if any(r is not None and not r.is_error for r in tries):
            continue  # made
        if len(tries) >= MAX_EDIT_TRIES:
            continue
        last = tries[-1] if tries else None
        if last is not None and NOT_FOUND in last.text:
            continue
        pending.append(edit)
    return pending


#: A tool call as (tool name, input).
ToolCall = tuple[str, Mapping[str, Any]]


def edit_calls(conv: MessagesConversation, edits: Sequence[Edit]) -> tuple[ToolCall, ...]:
    """One message's calls for the pending replacements: a ``Read`` of each file they
    touch, then each ``Edit`` (empty when nothing is left to do)."""
    pending = pending_edits(conv, edits)
    paths = dict.fromkeys(absolute(conv.cwd, e.path) for e in pending)
    reads: tuple[ToolCall, ...] = tuple(("Read", {"file_path": path}) for path in paths)
    changes: tuple[ToolCall, ...] = tuple(
        (
            "Edit",
            {
                "file_path": absolute(conv.cwd, e.path),
                "old_string": e.old,
                "new_string": e.new,
            },
        )
        for e in pending
    )
    return reads + changes


__all__ = ["MAX_EDIT_TRIES", "NOT_FOUND", "ToolCall", "absolute", "edit_calls", "pending_edits"]
