"""What a Codex thread did to files, from its rollout (helpers of
:mod:`scorers.codex.rollout`): the files a patch names, what one that failed part-way still
wrote, a shell call's script and working directory.

The rollout records them so: ``event_msg`` ``item_completed`` of a ``FileChange`` (a patch
Codex applied: ``changes`` keyed by absolute path, each ``add`` with its ``content``,
``delete``, or ``update`` with its ``unified_diff`` and ``move_path``; the item's ``id`` is
the call's; ``status`` ``failed`` when it stopped part-way: the files before the one its
output names were written) and of a ``CommandExecution`` (``command`` as argv, ``cwd`` as a
``file://`` URI, ``status`` and ``exit_code``: ``failed`` with the code when it exited
non-zero). A patch that did not apply (``apply_patch
verification failed``) leaves no ``FileChange``. The calls themselves are
``custom_tool_call`` items (``apply_patch``, freeform: the patch is its ``input``) with a
``custom_tool_call_output``, and ``function_call`` items (``exec_command {cmd, workdir}``)
with a ``function_call_output`` (``Process exited with code N``); a call no item event
answers is read from them.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from scorers.codex.thread import Call, Change, CommandRun, PatchApplied, string
from scorers.writes import repo_relative

#: A patch's file headers (``*** Add File: p``, ``*** Delete File: p``, ``*** Update File:
#: p``, then optionally ``*** Move to: q``).
_PATCH_FILE: Final = re.compile(
    r"^\*\*\* (?P<kind>Add|Delete|Update) File: (?P<path>.+?)[ \t]*$"
    r"(?:\n\*\*\* Move to: (?P<to>.+?)[ \t]*$)?",
    re.M,
)
#: How a call's output says a patch applied, or a command ran (it exited, with any code, or
#: was still running when the call returned), when no item event tells.
_PATCH_OK: Final = re.compile(r"\A(?:Exit code: 0\b|Success\. Updated the following files)")
_COMMAND_RAN: Final = re.compile(
    r"^(?:Process exited with code -?\d+|Process running with session ID \S+)$", re.M
)
#: The tools whose call is a patch (its text the ``input``), and those that run a command.
PATCH_TOOLS: Final = frozenset({"apply_patch"})
SHELL_TOOLS: Final = frozenset({"exec_command", "shell", "shell_command", "local_shell"})
#: A ``%XX`` escape of a URI.
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")


def patched_files(changes: object) -> tuple[tuple[str, str, str | None, str | None], ...]:
    """A ``FileChange`` item's files: (path, kind, added content, moved to)."""
    if not isinstance(changes, Mapping):
        return ()
    files = []
    for path, change in changes.items():
        if not isinstance(path, str) or not path or not isinstance(change, Mapping):
            continue
        kind = string(change.get("type")) or "update"
        content = change.get("content") if kind == "add" else None
        files.append(
            (
                path,
                kind,
                content if isinstance(content, str) else None,
                string(change.get("move_path")),
            )
        )
    return tuple(files)


def patch_files(patch: str) -> tuple[tuple[str, str, str | None, str | None], ...]:
    """The files a patch's text names (what a call says when no item event does)."""
    return tuple((m["path"], m["kind"].lower(), None, m["to"]) for m in _PATCH_FILE.finditer(patch))


def patch_text(call: Call | None) -> str:
    """The patch a call sent: ``apply_patch``'s input, or a shell command's text (Codex
    applies ``apply_patch <<'EOF'`` itself)."""
    if call is None:
        return ""
    text = call.arguments.get("input") or call.arguments.get("cmd")
    return text if isinstance(text, str) else ""


def written_before(
    files: tuple[tuple[str, str, str | None, str | None], ...],
    patch: str,
    output: str,
    cwd: str | None,
) -> tuple[tuple[str, str, str | None, str | None], ...]:
    """What a patch that failed part-way still wrote. Codex applies a patch file by file,
    in the patch's order, and stops at the first file it cannot change (another thread
    changed it since the patch was checked), naming that file in its output: the files
    before it were written. A failure that names none of the patch's files (it was refused
    before anything applied) wrote nothing."""
    order = [m["path"] for m in _PATCH_FILE.finditer(patch)]
    failed = next(
        (
            n
            for n, path in enumerate(order)
            if path in output or (cwd and posixpath.join(cwd, path) in output)
        ),
        None,
    )
    if failed is None:
        return ()
    written = {repo_relative(p, cwd) for p in order[:failed]}
    return tuple(f for f in files if repo_relative(f[0], cwd) in written)


def script_of(command: object) -> str:
    """A command's script: the text a shell runs (``bash -lc <script>`` as Codex records
    it), else the argv joined."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not all(isinstance(w, str) for w in command):
        return ""
    if len(command) == 3 and command[1] in ("-c", "-lc"):
        return str(command[2])
    return shlex.join(command)


def path_of_uri(cwd: str | None) -> str | None:
    """A ``file://`` URI as a path (Codex records a command's cwd so): its host part
    dropped, its ``%XX`` escapes decoded as UTF-8."""
    if cwd is None or not cwd.startswith("file://"):
        return cwd
    rest = cwd[len("file://") :]
    path = rest[rest.find("/") :] if "/" in rest else ""
    path = path.split("?", 1)[0].split("#", 1)[0]
    decoded = _ESCAPE.sub(lambda m: bytes.fromhex(m.group(1)).decode("latin-1"), path)
    return decoded.encode("latin-1").decode("utf-8", errors="replace") or None


@dataclass(frozen=True, slots=True)
class PatchItem:
    """A ``FileChange`` item as recorded, its status (``completed``, ``failed``, ...) kept
    until the call's output is read."""

    call_id: str
    files: tuple[tuple[str, str, str | None, str | None], ...]
    status: str
    at: str | None


def reconcile(
    entries: Sequence[Change | Call | PatchItem],
    outputs: Mapping[str, str],
    by_call: Mapping[str, Call],
    answered: Collection[str],
    cwd: str | None,
) -> list[Change]:
    """A thread's changes: its item events in order, with each call no item event
    answers (``answered``) read from the call and its output (a failed one dropped)."""
    found: list[Change] = []
    for entry in entries:
        if isinstance(entry, PatchItem):
            files = entry.files if entry.status == "completed" else ()
            if entry.status == "failed":
                said = outputs.get(entry.call_id, "")
                patch = patch_text(by_call.get(entry.call_id))
                files = written_before(entry.files, patch, said, cwd)
            if files:
                found.append(PatchApplied(entry.call_id, files, entry.at))
            continue
        if not isinstance(entry, Call):
            found.append(entry)
            continue
        if entry.call_id in answered:
            continue
        output = outputs.get(entry.call_id)
        if output is None:
            continue
        if entry.name in PATCH_TOOLS:
            patch = patch_text(entry)
            files = patch_files(patch)
            if not _PATCH_OK.search(output):
                files = written_before(files, patch, output, cwd)
            if files:
                found.append(PatchApplied(entry.call_id, files, entry.at))
            continue
        command = script_of(entry.arguments.get("cmd") or entry.arguments.get("command"))
        workdir = entry.arguments.get("workdir")
        found.append(
            CommandRun(
                entry.call_id,
                command,
                workdir if isinstance(workdir, str) and workdir else None,
                bool(_COMMAND_RAN.search(output)),
                entry.at,
            )
        )
    return found
